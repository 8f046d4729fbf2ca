"""A paper-scale production task's time on this machine, from the generation jobs a run finished,
and with ``--before`` against the same jobs of a run made before it on the same machine.

A task is one dataset's generation jobs (``production.shards`` x decodings of ``--paper-config``).
A job's seconds are its Snakemake benchmark row (``benchmarks/production_sample/<dataset>/<model>/
<decoding>/<shard>.tsv`` in a run's results folder): CPU seconds (``cpu_time``, all threads) and
wall seconds (``s``). The workflow runs its generation jobs one thread each, as many side by side
as the machine has cores, so a task takes its jobs' CPU seconds over ``--cores``; from the jobs a
run finished, estimated as their mean x the task's jobs / ``--cores``. A job that resumed the
inputs a cut-off run had finished (its log says so: ``varprobe.resume``) measured the rest of its
work only, and is left out of the estimate and the comparison. With ``--before`` (another
run's results folder: an earlier version of the package, the same config), the jobs both runs
finished are compared: the ratio of their CPU seconds (before / this run) and whether their
productions are the same texts.

    .venv/bin/python benchmarks/production_tasks.py --run results --before ../old/results
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml
from record import record

from varprobe.resume import RESUMING
from varprobe.stage_times import cpu_seconds, job_rows

ROOT = Path(__file__).resolve().parents[1]
STAGE = "production_sample"


@dataclass(frozen=True)
class Job:
    """One finished generation job: its seconds and its productions' file."""

    cpu_s: float
    wall_s: float
    shard: Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", type=Path, required=True, help="a paper-scale run's results folder")
    p.add_argument("--before", type=Path, default=None,
                   help="the results folder of the same jobs run before, on this machine")
    p.add_argument("--paper-config", type=Path, default=ROOT / "configs" / "paper-scale.yaml")
    p.add_argument("--cores", type=int, default=2, help="one-thread jobs side by side")
    return p.parse_args(argv)


def generation_jobs(run: Path) -> dict[tuple[str, ...], Job]:
    """A run's finished generation jobs by (dataset, model, decoding, shard), but those that
    resumed (``resumed``)."""
    jobs = {}
    for path, row in job_rows(run / "benchmarks" / STAGE).items():
        if len(path.parts) != 4:
            raise SystemExit(f"{run / 'benchmarks' / STAGE / path}: not a generation job's benchmark file "
                             "(<dataset>/<model>/<decoding>/<shard>.tsv)")
        dataset, model, decoding, shard = path.with_suffix("").parts
        texts = run / "production" / dataset / model / decoding / "shards" / f"{shard}.parquet"
        if texts.exists() and not resumed(run / "logs" / STAGE / path.with_suffix(".log")):
            jobs[(dataset, model, decoding, shard)] = Job(cpu_seconds(row), float(row["s"]), texts)
    if not jobs:
        raise SystemExit(f"{run}: no generation job that ran whole (benchmarks/{STAGE}/<dataset>/<model>/"
                         "<decoding>/<shard>.tsv beside production/.../shards/<shard>.parquet, and no "
                         f"'{RESUMING}' in its log)")
    return jobs


def resumed(log: Path) -> bool:
    """Whether the job of this log resumed from a cut-off run's partial table."""
    return log.exists() and any(line.startswith(RESUMING) for line in log.read_text().splitlines())


def same_texts(a: Path, b: Path) -> bool:
    """Whether two shards hold the same productions (input, sample and text)."""
    key = ["input_id", "sample_index"]
    read = [pd.read_parquet(p, columns=[*key, "text"]).sort_values(key, ignore_index=True) for p in (a, b)]
    return read[0].equals(read[1])


def task_minutes(jobs: list[Job], task_jobs: int, cores: int) -> float:
    """A task's minutes on ``cores`` cores: its finished jobs' mean CPU seconds x its jobs / cores."""
    return sum(j.cpu_s for j in jobs) / len(jobs) * task_jobs / cores / 60


def main() -> None:
    args = parse_args()
    paper = yaml.safe_load(args.paper_config.read_text())["production"]
    task_jobs = int(paper["shards"]) * len(paper["decodings"])
    after = generation_jobs(args.run)
    before = generation_jobs(args.before) if args.before else {}
    figures = {}
    for dataset in sorted({key[0] for key in after}):
        mine = {key: job for key, job in after.items() if key[0] == dataset}
        jobs = list(mine.values())
        minutes = task_minutes(jobs, task_jobs, args.cores)
        print(f"{dataset}: {len(jobs)} of {task_jobs} jobs, CPU {sum(j.cpu_s for j in jobs):.0f} s, "
              f"wall {sum(j.wall_s for j in jobs):.0f} s; task {minutes:.1f} min on {args.cores} cores")
        figures |= {f"{dataset}_jobs": len(jobs), f"{dataset}_task_min": round(minutes, 1)}
        common = [key for key in mine if key in before]
        if not common:
            continue
        then = [before[key] for key in common]
        now = [mine[key] for key in common]
        ratio = sum(j.cpu_s for j in then) / sum(j.cpu_s for j in now)
        same = all(same_texts(before[key].shard, mine[key].shard) for key in common)
        earlier = task_minutes(then, task_jobs, args.cores)
        print(f"  before: {len(then)} of these jobs, CPU {sum(j.cpu_s for j in then):.0f} s; task "
              f"{earlier:.1f} min; this run {ratio:.2f}x as fast; same productions: {'yes' if same else 'no'}")
        figures |= {f"{dataset}_before_task_min": round(earlier, 1), f"{dataset}_speedup": round(ratio, 2),
                    f"{dataset}_same_productions": "yes" if same else "no"}
    record("production_tasks", args, **figures)


if __name__ == "__main__":
    main()
