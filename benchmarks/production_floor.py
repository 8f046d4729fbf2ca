"""The least time a paper-scale production task can take on this machine: its returned tokens at
the full-width rate of as many one-thread generation jobs as run side by side.

A task is one dataset's generation jobs (``production.shards`` x decodings of ``--paper-config``).
Its returned tokens come from a run's finished shards (``--run``: the run's ``results`` folder),
their texts encoded again with the model's tokenizer, averaged per shard and scaled to the task's
jobs. The rate: ``--processes`` processes side by side, one torch thread each (as the workflow runs
its jobs on a machine of that many cores), each timing ``--repeats`` runs of full-width decoding
passes (``generation_speed.full_lane_passes``: ``--batch-size`` rows of one input's samples, no
end of sequence, on ASSET's first prompt as ``generation_speed``'s ceiling); their rows/s summed.
The floor, task tokens over that rate, counts neither prefill nor a pass narrower than full
width, so no run of the task can be faster: a task that must take at most T minutes needs a
floor under T.

    .venv/bin/python benchmarks/production_floor.py --run ../paper/results [--processes 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path

import generation_speed as gs
import pandas as pd
import yaml
from record import record

from varprobe.sampling.generate import end_and_pad

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", type=Path, required=True, help="a paper-scale run's results folder")
    p.add_argument("--paper-config", type=Path, default=ROOT / "configs" / "paper-scale.yaml")
    p.add_argument("--processes", type=int, default=2, help="generation jobs side by side")
    p.add_argument("--repeats", type=int, default=3, help="full-width runs timed per process")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--max-new-tokens", type=int, default=100)
    p.add_argument("--pretrained", default=None, help="hub id or local path instead of the packaged GGUF model")
    p.add_argument("--mirror", type=Path, default=None)
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="wrap the prompt in the chat template (default: the config's chat_template)")
    return p.parse_args(argv)


def speed_args(args: argparse.Namespace) -> list[str]:
    """``generation_speed``'s command line for one process's full-width passes."""
    argv = ["--datasets", "asset", "--inputs", "1", "--threads", "1", "--batch-size", str(args.batch_size),
            "--max-new-tokens", str(args.max_new_tokens), "--paper-config", str(args.paper_config)]
    argv += ["--pretrained", args.pretrained] if args.pretrained else []
    argv += [] if args.chat is None else ["--chat" if args.chat else "--no-chat"]
    return argv + (["--mirror", str(args.mirror)] if args.mirror else [])


def full_width_rate(argv: list[str], repeats: int) -> float:
    """Rows/s of ``repeats`` full-width runs in this process (``generation_speed``'s options)."""
    options = gs.parse_args(argv)
    lm = gs.load_model(options)
    _, pad = end_and_pad(lm.model, lm.tokenizer)
    work, _ = gs.work_of(options, lm.tokenizer)
    counter = gs.PromptCounter(lm.model)
    runs = [gs.full_lane_passes(lm.model, work, pad, counter, options) for _ in range(repeats)]
    return sum(p for _, p in runs) / sum(s for s, _ in runs)


def task_tokens(run: Path, tokenizer, jobs: int) -> dict[str, tuple[int, float]]:
    """Per dataset: finished shards and the tokens of its ``jobs`` jobs (mean per shard x jobs)."""
    tokens = {}
    datasets = sorted(p for p in (run / "production").glob("*") if p.is_dir())
    for dataset_dir in datasets:
        shards = sorted(dataset_dir.glob("*/*/shards/*.parquet"))
        if not shards:
            continue
        encoded = (tokenizer(list(pd.read_parquet(f)["text"]), add_special_tokens=False) for f in shards)
        counts = [sum(map(len, e["input_ids"])) for e in encoded]
        tokens[dataset_dir.name] = (len(shards), jobs * sum(counts) / len(counts))
    if not tokens:
        raise SystemExit(f"--run {run}: no finished production shards (production/<dataset>/<model>/"
                         "<decoding>/shards/*.parquet) in it")
    return tokens


def main() -> None:
    args = parse_args()
    if not (args.run / "production").is_dir():
        raise SystemExit(f"--run {args.run}: no production folder in it (give a run's results folder)")
    paper = yaml.safe_load(args.paper_config.read_text())["production"]
    jobs = int(paper["shards"]) * len(paper["decodings"])
    argv = speed_args(args)
    tasks = task_tokens(args.run, gs.load_model(gs.parse_args(argv)).tokenizer, jobs)
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        rates = pool.starmap(full_width_rate, [(argv, args.repeats)] * args.processes)
    rate = sum(rates)
    print(f"{args.processes} one-thread processes side by side, {args.batch_size}-row passes: "
          + ", ".join(f"{r:.1f}" for r in rates) + f" rows/s; {rate:.1f} rows/s in all")
    figures = {"rows_per_s": round(rate, 1)}
    for dataset, (shards, tokens) in tasks.items():
        minutes = tokens / rate / 60
        print(f"{dataset}: {shards} shards finished, {tokens:,.0f} tokens per task ({jobs} jobs), "
              f"floor {minutes:.1f} min")
        figures |= {f"{dataset}_task_tokens": round(tokens), f"{dataset}_floor_min": round(minutes, 1)}
    record("production_floor", args, **figures)


if __name__ == "__main__":
    main()
