"""Exact enumeration vs 1,000-sample sampling of the complete next word, per Provo context.

Over the chosen contexts (spread evenly over the passages' contexts), in one process:

* enumeration: ``Enumerator.enumerate_many`` until ``--target-mass`` is certified or
  ``--max-forward-tokens`` are spent per context; its word distribution is the resolved word
  mass renormalised (failures rejected, as the sampler rejects them);
* sampling: ``CompleteWordSampler.sample_many`` with ``--n-samples`` (1,000) draws, the MLE of
  its words;
* reference: the same sampler with ``--reference-samples`` (20,000) draws and another seed.

Forward tokens are token positions through the network. Per context, the enumeration's are
the sequential search's (its context encoding plus the prefixes it expanded: the search stops
as soon as the target is certified, so these are the tokens the target needs), and the
sampler's are those of independent draws, the paper's procedure (the context once, plus every
token of every draw; ``generate`` with ``num_return_sequences`` would also encode the context
once per draw, the second count). Over the whole run, a forward hook also counts what each
method actually ran: the enumeration's speculative expansions and the sampler's shared
prefixes included, each passage's contexts sharing one encoding.

Printed: per context, both methods' forward tokens, the certified mass, the TVD of each
distribution to the reference, and the fewest forward tokens any method could certify the
target mass with (``certification_floor``); then the ratios and the target check (certified >=
target mass, <= 1/5 of the forward tokens of 1,000 draws, smaller TVD to the reference), also
over the contexts where the floor allows it, and the wall times.
The TVD of the enumeration to the reference also shows the Monte-Carlo estimate converging.

    .venv/bin/python benchmarks/exact_vs_sampling.py [--texts 1 2 3] [--contexts 24]
"""

from __future__ import annotations

import argparse
import resource
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sampler_speed import NORMS, OUT, ForwardCounter, add_model_arguments, load_model
from record import record

from varprobe.data.provo import contexts_table, read_norms
from varprobe.metrics.distributions import mle, tvd
from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
from varprobe.sampling.word_model import WordModel


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--texts", type=int, nargs="+", default=[1], help="Provo Text_IDs (default: 1)")
    p.add_argument("--contexts", type=int, default=5, help="contexts, spread evenly over the texts")
    p.add_argument("--n-samples", type=int, default=1000, help="draws of the sampled estimate")
    p.add_argument("--reference-samples", type=int, default=20_000, help="draws of the reference")
    p.add_argument("--target-mass", type=float, default=0.95)
    p.add_argument("--max-forward-tokens", type=int, default=2000, help="enumeration budget per context")
    p.add_argument("--min-mass", type=float, default=EnumerationSettings.min_mass)
    p.add_argument("--max-tokens", type=int, default=SamplerSettings.max_tokens)
    p.add_argument("--batch-size", type=int, default=SamplerSettings.batch_size, help="sampler")
    p.add_argument("--enumeration-batch-size", type=int, default=EnumerationSettings.batch_size)
    p.add_argument("--seed", type=int, default=0)
    add_model_arguments(p)
    p.add_argument("--norms", type=Path, default=NORMS)
    p.add_argument("--out", type=Path, default=OUT / "exact_vs_sampling")
    return p.parse_args()


def timed(counter: ForwardCounter, run):
    """``run()``'s result, its wall seconds and the forward tokens it ran."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    counter.reset()
    start = time.perf_counter()
    result = run()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start, counter.tokens


def sampled_distribution(draws) -> dict[str, float]:
    """The MLE of the draws' words (failures rejected); empty when every draw failed."""
    words = Counter(d.word for d in draws if d.word)
    return mle(words) if words else {}


def distance(p: dict[str, float], q: dict[str, float]) -> float:
    return tvd(p, q) if p and q else float("nan")


@torch.inference_mode()
def certification_floor(enumerator: Enumerator, context: str, target: float) -> int:
    """The fewest forward tokens any method needs to certify ``target`` of a context's mass.

    A path of two or more tokens is certified only after its first token was run through the
    network, so certifying needs the context's encoding plus one forward token per first token
    t whose path is still open, and the certified mass is at most the first tokens that close
    at once plus sum p(t) over those run: the floor takes the most probable first.
    """
    ids = enumerator.lm.encode(context)
    logits = enumerator.model(input_ids=torch.tensor([ids], device=enumerator.device)).logits[:, -1]
    probs = enumerator.decoding.probabilities(logits)[0].cpu().numpy()
    read = enumerator.vocabulary.read
    tokens = np.flatnonzero(probs > 0)
    done = np.array([read((int(t),)).done for t in tokens])
    closed = probs[tokens[done]].sum()
    still_open = np.sort(probs[tokens[~done]])[::-1]
    needed = int(np.searchsorted(np.cumsum(still_open), target - closed)) + 1 if closed < target else 0
    return len(ids) + needed if needed <= len(still_open) else -1


def main() -> None:
    args = parse_args()
    lm = load_model(args)
    model, tokenizer = lm.model, lm.tokenizer
    counter = ForwardCounter(model)
    table = contexts_table(read_norms(args.norms), args.texts)
    picked = table.iloc[np.unique(np.linspace(0, len(table) - 1, args.contexts).round().astype(int))]
    keys = [(int(t), int(w)) for t, w in zip(picked.text_id, picked.word_number, strict=True)]
    contexts = list(picked.context)

    decoding = Decoding("ancestral")
    enumerator = Enumerator(WordModel(model, tokenizer), decoding, EnumerationSettings(
        target_mass=args.target_mass, max_forward_tokens=args.max_forward_tokens,
        max_tokens=args.max_tokens, min_mass=args.min_mass, batch_size=args.enumeration_batch_size))

    def sampler(n: int, seed: int) -> CompleteWordSampler:
        return CompleteWordSampler(WordModel(model, tokenizer), decoding,
                                   SamplerSettings(n, args.max_tokens, args.batch_size, seed))

    sampled, reference = sampler(args.n_samples, args.seed), sampler(args.reference_samples, args.seed + 1)
    enumerator.enumerate(contexts[0])  # warm-up, not timed
    found, enum_s, enum_run = timed(counter, lambda: list(enumerator.enumerate_many(contexts)))
    draws, sample_s, sample_run = timed(counter, lambda: list(sampled.sample_many(zip(keys, contexts))))
    truths = [sampled_distribution(d) for d in reference.sample_many(zip(keys, contexts))]
    rows = []
    for key, context, enum, own, truth in zip(keys, contexts, found, draws, truths, strict=True):
        encoded = len(enumerator.lm.encode(context))
        generated = sum(d.n_tokens for d in own)
        rows.append({
            "text_id": key[0], "word_number": key[1], "context_tokens": encoded,
            "enum_forward_tokens": enum.forward_tokens,
            "independent_forward_tokens": encoded + generated,
            "generate_forward_tokens": len(own) * encoded + generated,
            "certified_mass": enum.covered_mass, "failure_mass": enum.failure_mass,
            "tvd_enum_reference": distance(enum.distribution(), truth),
            "tvd_sample_reference": distance(sampled_distribution(own), truth),
            "floor_forward_tokens": certification_floor(enumerator, context, args.target_mass),
        })
    frame = pd.DataFrame(rows)
    frame["token_ratio"] = frame["enum_forward_tokens"] / frame["independent_forward_tokens"]
    frame["floor_ratio"] = frame["floor_forward_tokens"] / frame["independent_forward_tokens"]
    frame["meets_target"] = ((frame["certified_mass"] >= args.target_mass) & (frame["token_ratio"] <= 0.2)
                             & (frame["tvd_enum_reference"] < frame["tvd_sample_reference"]))
    report(frame, {"enumeration": (enum_s, enum_run), "sampling": (sample_s, sample_run)}, args)


def report(frame: pd.DataFrame, runs: dict[str, tuple[float, int]], args: argparse.Namespace) -> None:
    """Print the per-context table, the ratios and the target check; write the table to
    ``args.out`` (.csv)."""
    pd.set_option("display.width", 250)
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    n = args.n_samples
    total = frame.sum(numeric_only=True)
    certified = frame["certified_mass"] >= args.target_mass
    print(f"contexts: {len(frame)}; certified to >= {args.target_mass}: {certified.sum()} "
          f"({certified.mean():.0%}); median certified mass {frame['certified_mass'].median():.4f}")
    print(f"forward tokens, enumeration / {n} independent draws: "
          f"{total['enum_forward_tokens'] / total['independent_forward_tokens']:.3f} (target <= 0.2); "
          f"median per context {frame['token_ratio'].median():.3f}; "
          f"/ {n} draws each encoding the context: "
          f"{total['enum_forward_tokens'] / total['generate_forward_tokens']:.3f}")
    closer = frame["tvd_enum_reference"] < frame["tvd_sample_reference"]
    print(f"mean TVD to the {args.reference_samples}-sample reference: enumeration "
          f"{frame['tvd_enum_reference'].mean():.4f}, {n} samples {frame['tvd_sample_reference'].mean():.4f}; "
          f"enumeration closer in {closer.sum()} of {len(frame)} contexts")
    print(f"contexts meeting the whole target (certified, <= 0.2 of the tokens, closer): "
          f"{frame['meets_target'].sum()} of {len(frame)}")
    feasible = frame["floor_ratio"].between(0, 0.2)
    print(f"contexts where certifying {args.target_mass} within 0.2 of the tokens is possible at all "
          f"(floor_forward_tokens: the context plus the fewest first tokens that can carry the mass): "
          f"{feasible.sum()}; of these meeting the whole target: {frame['meets_target'][feasible].sum()}; "
          f"enumeration / floor tokens over them: "
          f"{frame['enum_forward_tokens'][feasible].sum() / frame['floor_forward_tokens'][feasible].sum():.2f}")
    (enum_s, enum_run), (sample_s, sample_run) = runs["enumeration"], runs["sampling"]
    print(f"as run (forward hook): enumeration {enum_run} tokens in {enum_s:.1f} s, sampling {sample_run} "
          f"tokens in {sample_s:.1f} s; ratios: tokens {enum_run / sample_run:.3f}, wall time "
          f"{enum_s / sample_s:.3f}; enumeration ran {enum_run / total['enum_forward_tokens']:.3f} x "
          "the sequential search's tokens (speculation, shared encodings)")
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    record("exact_vs_sampling", args, tokens_ratio=round(total["enum_forward_tokens"] / total["independent_forward_tokens"], 3),
           tvd_enumeration=round(frame["tvd_enum_reference"].mean(), 4), tvd_sampling=round(frame["tvd_sample_reference"].mean(), 4))


if __name__ == "__main__":
    main()
