"""Exact enumeration vs 1,000-sample sampling of the complete next word, per Provo context.

For each context (spread evenly over the chosen passages' contexts):

* enumeration: ``Enumerator.enumerate`` until ``--target-mass`` is certified or
  ``--max-forward-tokens`` are spent; its word distribution is the resolved word mass
  renormalised (failures rejected, as the sampler rejects them);
* sampling: ``CompleteWordSampler.sample`` with ``--n-samples`` (1,000) draws, the MLE of its words.
  Its forward tokens are counted twice: as run here (draws that share a token prefix share its
  forward pass) and as independent draws would need them, the paper's procedure (the context
  once, plus every token of every draw);
* reference: the same sampler with ``--reference-samples`` (20,000) draws and another seed.

Printed per context: forward tokens (token positions through the network, context encoding
included) and wall time of both methods, the certified (covered) mass, the TVD of each
distribution to the reference, and the ratios; then the totals and whether the target holds
(certified >= target mass, <= 1/5 of the sampler's forward tokens, smaller TVD to the reference).
The TVD of the enumeration to the reference also shows the Monte-Carlo estimate converging to it.

    .venv/bin/python benchmarks/exact_vs_sampling.py [--contexts 5] [--device cuda --dtype bfloat16]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sampler_speed import NORMS, OUT, ForwardCounter, add_model_arguments, model_spec

from varprobe.data.provo import contexts_table, read_norms
from varprobe.metrics.distributions import mle, tvd
from varprobe.models.loading import load_causal_lm
from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--texts", type=int, nargs="+", default=[1], help="Provo Text_IDs (default: 1)")
    p.add_argument("--contexts", type=int, default=5, help="contexts, spread evenly over the texts")
    p.add_argument("--n-samples", type=int, default=1000, help="draws of the sampled estimate")
    p.add_argument("--reference-samples", type=int, default=20_000, help="draws of the reference")
    p.add_argument("--target-mass", type=float, default=0.95)
    p.add_argument("--max-forward-tokens", type=int, default=2000,
                   help="enumeration budget per context (each expanded prefix keeps ~1 MB)")
    p.add_argument("--max-tokens", type=int, default=SamplerSettings.max_tokens)
    p.add_argument("--batch-size", type=int, default=SamplerSettings.batch_size, help="sampler")
    p.add_argument("--enumeration-batch-size", type=int, default=EnumerationSettings.batch_size)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=0)
    add_model_arguments(p)
    p.add_argument("--norms", type=Path, default=NORMS)
    p.add_argument("--out", type=Path, default=OUT / "exact_vs_sampling")
    return p.parse_args()


def timed(counter: ForwardCounter, run):
    """``run()``'s result, its wall seconds and the forward tokens it used."""
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


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    lm = load_causal_lm(model_spec(args))
    model, tokenizer = lm.model, lm.tokenizer
    counter = ForwardCounter(model)
    table = contexts_table(read_norms(args.norms), args.texts)
    picked = table.iloc[np.unique(np.linspace(0, len(table) - 1, args.contexts).round().astype(int))]

    decoding = Decoding("ancestral")
    enumerator = Enumerator(model, tokenizer, decoding, EnumerationSettings(
        target_mass=args.target_mass, max_forward_tokens=args.max_forward_tokens,
        max_tokens=args.max_tokens, batch_size=args.enumeration_batch_size))

    def sampler(n: int, seed: int) -> CompleteWordSampler:
        return CompleteWordSampler(model, tokenizer, decoding,
                                   SamplerSettings(n, args.max_tokens, args.batch_size, seed))

    sampled, reference = sampler(args.n_samples, args.seed), sampler(args.reference_samples, args.seed + 1)
    enumerator.enumerate(picked.iloc[0].context)  # warm-up, not timed
    rows = []
    for ctx in picked.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        found, enum_s, enum_tokens = timed(counter, lambda: enumerator.enumerate(ctx.context))
        draws, sample_s, sample_tokens = timed(counter, lambda: sampled.sample(key, ctx.context))
        truth = sampled_distribution(reference.sample(key, ctx.context))
        row = {
            "text_id": key[0], "word_number": key[1], "context_length": int(ctx.context_length),
            "enum_forward_tokens": enum_tokens, "enum_s": enum_s,
            "certified_mass": found.covered_mass, "failure_mass": found.failure_mass,
            "sample_forward_tokens": sample_tokens,
            "independent_forward_tokens": (len(enumerator.encode(ctx.context))
                                           + sum(d.n_tokens for d in draws)),
            "sample_s": sample_s,
            "tvd_enum_reference": distance(found.distribution(), truth),
            "tvd_sample_reference": distance(sampled_distribution(draws), truth),
        }
        row["token_ratio"] = enum_tokens / sample_tokens
        row["token_ratio_independent"] = enum_tokens / row["independent_forward_tokens"]
        row["time_ratio"] = enum_s / sample_s
        rows.append(row)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
              flush=True)
    report(pd.DataFrame(rows), args)


def report(frame: pd.DataFrame, args: argparse.Namespace) -> None:
    """Print the per-context table and the totals; write them to ``args.out`` (.csv)."""
    pd.set_option("display.width", 200)
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    tokens = frame["enum_forward_tokens"].sum() / frame["sample_forward_tokens"].sum()
    independent = frame["enum_forward_tokens"].sum() / frame["independent_forward_tokens"].sum()
    seconds = frame["enum_s"].sum() / frame["sample_s"].sum()
    certified = (frame["certified_mass"] >= args.target_mass).mean()
    better = (frame["tvd_enum_reference"] < frame["tvd_sample_reference"]).mean()
    print(f"forward tokens, enumeration / {args.n_samples} independent draws: {independent:.3f} "
          "(target <= 0.2)")
    print(f"forward tokens, enumeration / {args.n_samples} prefix-sharing draws: {tokens:.3f}")
    print(f"wall time, enumeration / {args.n_samples} samples: {seconds:.3f}")
    print(f"contexts certified to >= {args.target_mass}: {certified:.0%}")
    print(f"mean TVD to the {args.reference_samples}-sample reference: enumeration "
          f"{frame['tvd_enum_reference'].mean():.4f}, {args.n_samples} samples "
          f"{frame['tvd_sample_reference'].mean():.4f}; enumeration closer in {better:.0%} of contexts")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)


if __name__ == "__main__":
    main()
