"""Assemble and render the results page: header facts, stage times, the papers' tables, every
registered summary table and every figure, through ``template.md.j2``."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from varprobe import tables
from varprobe.results_page.tables import MAX_ROWS, markdown, production_w1, table_one, with_paper_coefficients
from varprobe.stage_times import stage_times, table

TEMPLATE = "template.md.j2"


def machine() -> dict[str, str]:
    """Where the page was written (for a local run, where the jobs ran): processor, cores,
    memory, GPUs, and the versions of the numerical stack."""
    import torch
    import transformers

    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        total_kb = int(meminfo.read_text().split("MemTotal:")[1].split()[0])
        memory = f"{total_kb / 2**20:.0f} GiB"
    gpus = ([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            if torch.cuda.is_available() else [])
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": memory,
            "gpus": ", ".join(gpus) or "none", "python": platform.python_version(),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "system": f"{platform.system()} {platform.release()}"}


def commit(checkout: str) -> str:
    """The git commit of ``checkout`` (``-dirty`` with uncommitted changes) when the page is
    written, or ``unknown`` outside a git checkout."""
    try:
        return subprocess.run(["git", "-C", checkout, "describe", "--always", "--dirty", "--abbrev=40"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


TABLE_ONE = "provo_system"
"""The schema of the table the page shows as Ilia & Aziz's Table 1, in a section of its own."""

VIEWS = {
    "regression_coefficients": with_paper_coefficients,
    "production_summary": production_w1,
}
"""How the page shows a registered table of a schema (``report_table(..., schema=)``) other than
as it is."""


def section(entry: dict) -> dict:
    """One registered summary table (``{name, table, title, category, schema}``) as a page
    section: through its schema's view (``VIEWS``), else as it is, or its path and size when it
    is too long to print; the schema names the template's reading notes for it."""
    frame = tables.read_frame(entry["table"])
    view = VIEWS.get(entry.get("schema"))
    if view is not None:
        frame = view(frame)
    body = (markdown(frame) if len(frame) <= MAX_ROWS else
            f"{len(frame)} rows: `{entry['table']}` (and the run's explorer).")
    return {"title": entry["title"], "category": entry["category"], "body": body,
            "schema": entry.get("schema")}


def copy_figures(figures: list[str], results: str, out_dir: Path) -> list[dict]:
    """Copy each figure into ``out_dir`` under its path below ``results`` (slashes become
    ``__``) and list ``{study, name, link}`` for the page, which links them relatively."""
    out_dir.mkdir(parents=True, exist_ok=True)
    listed = []
    for figure in figures:
        relative = Path(figure).relative_to(results)
        name = "__".join(relative.parts)
        shutil.copyfile(figure, out_dir / name)
        study = relative.parts[1] if relative.parts[0] == "analyses" else relative.parts[0]
        listed.append({"study": study, "name": str(relative.with_suffix("")),
                       "link": f"{out_dir.name}/{name}"})
    return listed


def render(*, configfiles: list[str], commit: str, entries: list[dict], figures: list[dict],
           benchmarks: str, not_run: dict[str, str] | None = None) -> str:
    """The page's Markdown; ``configfiles`` are shown as they are, in the order given (each
    over the ones before it); the first entry of schema ``TABLE_ONE`` is Table 1; ``not_run``:
    the configured analyses that could not run on the corpus, with the reason."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True)
    stages = stage_times(Path(benchmarks)) if Path(benchmarks).is_dir() else {}
    first = [e for e in entries if e.get("schema") == TABLE_ONE][:1]
    return environment.get_template(TEMPLATE).render(
        date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=commit,
        machine=machine(),
        configs=[{"path": path, "text": Path(path).read_text(encoding="utf-8").rstrip()}
                 for path in configfiles],
        stages=table(stages) if stages else "no benchmark files",
        dominant=list(stages)[:3],
        table_one=markdown(table_one(tables.read(first[0]["table"], TABLE_ONE))) if first else None,
        sections=[section(e) for e in entries if e not in first],
        figures=figures,
        not_run=not_run or {},
    )
