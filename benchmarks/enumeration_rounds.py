"""Seconds of the exact enumeration at two sizes of its rounds, over a passage's contexts.

The enumerator (``varprobe.sampling.enumeration``) runs open prefixes through the network in
rounds of at most ``batch_size`` rows, shared among the contexts still waiting, in passes of a
fixed row count (``PASS_ROWS``: 32 on a CPU). Rows beyond what a search waits for are computed
ahead of it; they pay off only if the search reaches them. The round size never changes a
number, so the two runs must give the same enumerations; the benchmark checks that they do.

Both round sizes run on the same model and Provo contexts in one process, each warmed up on one
context first, then timed in ABBA order (``--wide``, ``--narrow``, ``--narrow``, ``--wide``).
Printed per size: seconds, token positions run through the network, the search's forward tokens
(the same for both), and last ``speedup (narrow vs wide rounds): X.XXx``.

    .venv/bin/python benchmarks/enumeration_rounds.py [--texts 1] [--wide 256] [--narrow 32]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd
from sampler_speed import NORMS, OUT, ForwardCounter, add_model_arguments, load_model
from record import record

from varprobe.data.provo import contexts_table, read_norms
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
from varprobe.sampling.word_model import WordModel


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--texts", type=int, nargs="+", default=[1], help="Provo Text_IDs (default: 1)")
    p.add_argument("--max-contexts", type=int, default=None, help="the first N contexts only")
    p.add_argument("--wide", type=int, default=256, help="rows per round before (provo.batch_size)")
    p.add_argument("--narrow", type=int, default=32, help="rows per round after (one CPU pass)")
    p.add_argument("--target-mass", type=float, default=0.8)
    p.add_argument("--max-forward-tokens", type=int, default=300)
    p.add_argument("--max-tokens", type=int, default=20)
    add_model_arguments(p, threads=1)  # one thread, as a workflow job
    p.add_argument("--norms", type=Path, default=NORMS)
    p.add_argument("--out", type=Path, default=OUT / "enumeration_rounds")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    load = os.getloadavg()
    lm = load_model(args)
    table = contexts_table(read_norms(args.norms), args.texts).head(args.max_contexts)
    contexts = list(table["context"])
    counter = ForwardCounter(lm.model)
    enumerators = {
        size: Enumerator(WordModel(lm.model, lm.tokenizer), Decoding("ancestral"),
                         EnumerationSettings(target_mass=args.target_mass, max_forward_tokens=args.max_forward_tokens,
                                             max_tokens=args.max_tokens, batch_size=size))
        for size in (args.wide, args.narrow)}
    print(f"{len(contexts)} contexts of texts {args.texts}, rows per round {args.wide} and {args.narrow}")
    for enumerator in enumerators.values():
        list(enumerator.enumerate_many(contexts[:1]))
    runs: dict[int, list] = {args.wide: [], args.narrow: []}
    for size in (args.wide, args.narrow, args.narrow, args.wide):
        counter.reset()
        start = time.perf_counter()
        found = list(enumerators[size].enumerate_many(contexts))
        runs[size].append((time.perf_counter() - start, counter.counts()["forward_tokens"], found))
    same = all(found == runs[args.wide][0][2] for done in runs.values() for _, _, found in done)
    frame = pd.DataFrame([{"rows_per_round": size, "runs": len(done), "seconds": sum(t for t, _, _ in done),
                           "positions_run": sum(n for _, n, _ in done) // len(done),
                           "search_tokens": sum(r.forward_tokens for r in done[0][2]),
                           "same_enumerations": same} for size, done in runs.items()])
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    print(f"load average (1 min) before loading {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}")
    seconds = frame.set_index("rows_per_round")["seconds"]
    print(f"speedup (narrow vs wide rounds): {seconds[args.wide] / seconds[args.narrow]:.2f}x")
    record("enumeration_rounds", args, speedup=round(seconds[args.wide] / seconds[args.narrow], 2), same=bool(same))


if __name__ == "__main__":
    main()
