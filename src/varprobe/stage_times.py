"""Per-stage time and memory of a run: the jobs' benchmark files summed per rule family.

Each job writes ``results/benchmarks/<stage>/.../<job>.tsv`` (Snakemake's ``benchmark:``, one
row per run; the last row counts). ``s`` is the job's wall time, ``cpu_time`` its CPU seconds
(all threads) and ``max_rss`` its peak resident memory in MB. ``varprobe stage-times`` prints
the table; the results page (``varprobe.results_page``) shows it.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One rule family's jobs: how many, their wall and CPU seconds summed, the longest job's
    wall seconds and the largest peak memory (MB) of any job."""

    jobs: int
    wall_s: float
    cpu_s: float
    longest_s: float
    peak_rss_mb: float


def job_rows(root: Path) -> dict[Path, dict[str, str]]:
    """Each job's benchmark row (its file's last) by the file's path under ``root``
    (``<stage>/.../<job>.tsv``), in path order; a file without a row is left out."""
    jobs = {}
    for path in sorted(Path(root).rglob("*.tsv")):
        with open(path, newline="") as stream:
            rows = list(csv.DictReader(stream, delimiter="\t"))
        if rows:
            jobs[path.relative_to(root)] = rows[-1]
    return jobs


def cpu_seconds(row: dict[str, str]) -> float:
    """A job's CPU seconds (all threads) from its benchmark row; 0 where Snakemake measured none."""
    return _number(row.get("cpu_time"))


def stage_times(root: Path) -> dict[str, Stage]:
    """``{stage: Stage}`` over the benchmark files under ``root``, the largest wall time first."""
    jobs: dict[str, list[dict]] = defaultdict(list)
    for path, row in job_rows(root).items():
        jobs[path.parts[0]].append(row)
    stages = {
        name: Stage(jobs=len(rows), wall_s=sum(float(r["s"]) for r in rows),
                    cpu_s=sum(cpu_seconds(r) for r in rows), longest_s=max(float(r["s"]) for r in rows),
                    peak_rss_mb=max(_number(r.get("max_rss")) for r in rows))
        for name, rows in jobs.items()
    }
    return dict(sorted(stages.items(), key=lambda kv: -kv[1].wall_s))


def _number(text: str | None) -> float:
    """A benchmark cell as a number; Snakemake writes ``-`` or nothing where it measured none."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def table(stages: dict[str, Stage]) -> str:
    """``stages`` as a Markdown table with a total row (its peak: the largest of any job)."""
    lines = ["| stage | jobs | wall s (sum) | CPU s (sum) | longest job s | peak memory MB |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {k} | {v.jobs} | {v.wall_s:.0f} | {v.cpu_s:.0f} | {v.longest_s:.0f} | {v.peak_rss_mb:.0f} |"
              for k, v in stages.items()]
    values = list(stages.values())
    lines.append(f"| total | {sum(v.jobs for v in values)} | {sum(v.wall_s for v in values):.0f} | "
                 f"{sum(v.cpu_s for v in values):.0f} | {max((v.longest_s for v in values), default=0):.0f} | "
                 f"{max((v.peak_rss_mb for v in values), default=0):.0f} |")
    return "\n".join(lines)
