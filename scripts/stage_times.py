"""Per-stage time of a run: the jobs' benchmark files summed per rule family, as a Markdown table.

Usage: python scripts/stage_times.py [results/benchmarks]

Each job writes ``results/benchmarks/<stage>/.../<job>.tsv`` (Snakemake's ``benchmark:``, one
row per run; the last row counts). ``s`` is the job's wall time, ``cpu_time`` its CPU seconds
(all threads). Standard library only, so any Python runs it.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path


def stage_times(root: Path) -> dict[str, tuple[int, float, float]]:
    """``{stage: (jobs, wall seconds, CPU seconds)}`` over the benchmark files under ``root``,
    the largest wall time first."""
    totals: dict[str, list] = defaultdict(lambda: [0, 0.0, 0.0])
    for path in sorted(root.rglob("*.tsv")):
        with open(path, newline="") as stream:
            rows = list(csv.DictReader(stream, delimiter="\t"))
        if not rows:
            continue
        stage = path.relative_to(root).parts[0]
        totals[stage][0] += 1
        totals[stage][1] += float(rows[-1]["s"])
        totals[stage][2] += float(rows[-1].get("cpu_time") or 0.0)
    return dict(sorted(((k, tuple(v)) for k, v in totals.items()), key=lambda kv: -kv[1][1]))


def table(times: dict[str, tuple[int, float, float]]) -> str:
    """``times`` as a Markdown table with a total row."""
    lines = ["| stage | jobs | wall s (sum) | CPU s (sum) |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {n} | {s:.0f} | {c:.0f} |" for k, (n, s, c) in times.items()]
    n, s, c = (sum(v[i] for v in times.values()) for i in range(3))
    lines.append(f"| total | {n} | {s:.0f} | {c:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(stage_times(Path(sys.argv[1] if len(sys.argv) > 1 else "results/benchmarks"))))
