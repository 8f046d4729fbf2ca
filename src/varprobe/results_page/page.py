"""Assemble and render the results page through ``template.md.j2``: what was run and the findings
first, then one section per study (``sections.sections()``: its tables with the papers' values beside ours,
then its figures, captioned with the paper's table or figure), the disagreements with the papers
and their measured causes (tables the workflow measured: ``varprobe.analysis.page_measures``),
the papers' tables and figures and where each is, and last the configuration and the stage
times. The page reads tables and the validated config only."""

from __future__ import annotations

import math
import os
import platform
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import jinja2
import pandas as pd

from varprobe import tables
from varprobe.results_page import (
    departures, disagreements, findings, markup, paper, production_readings, published_systems, sections, verdicts)
from varprobe.results_page import tables as views
from varprobe.stage_times import stage_times, table

TEMPLATE = "template.md.j2"

APPENDIX = "<!-- appendix -->"
"""The template's line where the results page ends and its appendix begins (``split``)."""
APPENDIX_FILE = "results-appendix.md"
"""The appendix's file, beside the page: the tables too long for the page (``APPENDIX_BLOCKS``,
``appendix_tables``, ``appendix_pairs``, ``PRODUCTION_ALL``), the run's config files and its time and memory per stage."""


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


PAGE_RULES = frozenset({"results_page", "run_record", "all"})
"""Rules an invocation may run without computing anything (rewriting the page)."""


def _ran_jobs(log: Path) -> bool:
    """Whether a Snakemake log shows a job of a rule other than ``PAGE_RULES``."""
    rules = {line.split()[-1].rstrip(":") for line in log.read_text(errors="replace").splitlines()
             if line.startswith(("rule ", "localrule "))}
    return bool(rules - PAGE_RULES)


def busy_seconds(spans: list[tuple[float, float]]) -> float:
    """The length of the union of the (start, end) intervals: the time some job was running."""
    total, reach = 0.0, -math.inf
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def run_span(benchmarks: Path, logs: Path) -> dict:
    """The run's elapsed wall time, from the first job's start (its benchmark file's time minus
    its wall seconds) to the last job's end (the page's own job left out); of it, the time some
    job was running (``busy_seconds``: a run resumed days later does not count the days between);
    and the Snakemake invocations in that span that ran a job other than the page's
    (``.snakemake/log`` files written since the first job started): more than one means it
    resumed. Empty without benchmark files."""
    spans = []
    for path in benchmarks.rglob("*.tsv") if benchmarks.is_dir() else []:
        if path.relative_to(benchmarks).parts[0] in PAGE_RULES:
            continue
        lines = path.read_text().splitlines()
        if len(lines) >= 2:
            seconds = float(lines[-1].split("\t")[0])
            spans.append((path.stat().st_mtime - seconds, path.stat().st_mtime))
    if not spans:
        return {}
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    runs = sum(1 for log in logs.glob("*.snakemake.log") if log.stat().st_mtime >= start and _ran_jobs(log)) \
        if logs.is_dir() else 0
    return {"elapsed": f"{(end - start) / 3600:.2f} h", "busy": f"{busy_seconds(spans) / 3600:.2f} h",
            "invocations": runs}


def reproduce(configfiles: list[str]) -> str:
    """The command that reruns the page's run: ``scripts/run.sh`` with each config file after
    the checkout's ``config.yaml`` (a file under a ``configs`` folder by its path there)."""
    extra = []
    for path in configfiles[1:]:
        p = Path(path)
        extra.append(f"--configfile {'configs/' + p.name if p.parent.name == 'configs' else path}")
    return " ".join(["VARPROBE_DATA_MIRROR=/path/to/data scripts/run.sh", *extra])


VIEWS = {
    "provo_summary": None,  # Table 1 is built by ``table_one`` with the run's intervals
    "finetune_losses": lambda frames: [views.finetune_losses(pd.concat(frames, ignore_index=True))],
    "finetune_comparison": lambda frames: [views.finetune_comparison(f) for f in frames],
    "production_adequacy": lambda frames: [views.production_adequacy(f) for f in frames],
    "production_beats_copy": lambda frames: [views.production_beats_copy(f) for f in frames],
}
"""How the page shows the studies' registered tables of a name prefix (all of the prefix's frames
at once), other than as they are; the production summary's view needs the run's tables
(``render``), and an analysis family's views are its page module's (``sections.family_views``)."""

FIGURE_PAPER = {
    "tvd_density": "Ilia & Aziz 2024, Fig. 2", "bars": "Ilia & Aziz 2024, Fig. 1",
    "finetune/": "Ilia & Aziz 2024, Figs. 17-18", "human_variability": "Giulianelli et al. 2023, Fig. 2",
    "mean_differences": "Giulianelli et al. 2023, Fig. 3", "w1_densities": "Giulianelli et al. 2023, Fig. 4",
    "mean_w1": "Giulianelli et al. 2023, Fig. 5",
}
"""The paper figure each of the studies' figures answers, by a part of its path (an analysis
family's are its page module's, ``sections.family_figures``)."""


def figure_papers() -> dict[str, str]:
    """The paper figure each figure of the page answers, by a part of its path: the studies'
    (``FIGURE_PAPER``) and the families'."""
    return {**FIGURE_PAPER, **sections.family_figures()}


def split(page: str) -> tuple[str, str]:
    """The rendered page (``render``) as the results page and its appendix: what precedes the
    ``APPENDIX`` line, and what follows it under a title of its own.

    Parameters
    ----------
    page : str
        ``render``'s Markdown.

    Returns
    -------
    (str, str)
        The page and the appendix (``APPENDIX_FILE``).

    Raises
    ------
    ValueError
        When the page has no ``APPENDIX`` line, or more than one.
    """
    parts = page.split(f"\n{APPENDIX}\n")
    if len(parts) != 2:
        raise ValueError(f"the results page must hold the line {APPENDIX!r} once, found {len(parts) - 1}")
    main, appendix = parts
    return main.rstrip("\n") + "\n", "# varprobe results: appendix\n\n" + appendix.lstrip("\n")


APPENDIX_BLOCKS = ("provo_authors_switches",)
"""The section blocks (by prefix) the appendix holds, a line pointing to each where it was:
Table 1's human and oracle values with each of the authors' definitions switched."""

def appendix_tables() -> dict[str, str]:
    """The Disagreements entries (by title) whose measured table the appendix holds, and what it
    holds: each group's ``appendix_table`` (``disagreements.Group``) and the failure rates'."""
    found = {g.title: g.appendix_table for g in disagreements.groups().values() if g.appendix_table}
    return {**found, findings.FAILURE_HEADING: "the failed draws of each system by reason, beside the paper's rates"}


def appendix_pairs() -> tuple[str, ...]:
    """The Disagreements entries (by title) whose list of differing values the appendix holds (one
    per task, system and probe), a line summing it up on the page (``disagreements.summary``):
    each group with ``appendix_pairs``."""
    return tuple(g.title for g in disagreements.groups().values() if g.appendix_pairs)


def _link(title: str) -> markup.Markup:
    """A link to the appendix's heading ``title`` (text), named "appendix"."""
    return markup.Markup(f"[appendix]({APPENDIX_FILE}#{markup.anchor(markup.text(title))})")


def _pointer(what: str, title: str) -> markup.Markup:
    """A sentence saying that the appendix holds ``what`` (text), linking to its heading ``title``."""
    return markup.Markup(f"{markup.text(what[:1].upper() + what[1:])}: in the {_link(title)}.")


def _block_to_appendix(blocks: list[dict], details: list[dict]) -> list[dict]:
    """A section's ``blocks``, each of ``APPENDIX_BLOCKS`` a pointer to its place in the appendix
    instead (``details``, where it goes)."""
    shown = []
    for block in blocks:
        if block["prefix"] in APPENDIX_BLOCKS:
            details.append(block)
            block = {"prefix": block["prefix"], "pointer": _pointer(block["title"], block["title"])}
        shown.append(block)
    return shown


def _dispute_to_appendix(dispute: dict, details: list[dict], held: tuple[dict[str, str], tuple[str, ...]]) -> dict:
    """A Disagreements entry, its table (``appendix_tables``) or list of differing values
    (``appendix_pairs``) a pointer to its place in the appendix instead (``details``, where it
    goes); another entry as it is. ``held``: ``appendix_tables()`` and ``appendix_pairs()``."""
    title = dispute["title"]
    tables_held, pairs_held = held
    if title in tables_held and dispute.get("table"):
        what = tables_held[title]
        details.append({"title": f"{title}: {what}", "body": dispute["table"]})
        return {**dispute, "table": _pointer(f"the table of {what}", f"{title}: {what}")}
    if title in pairs_held and "pairs" in dispute:
        heading = f"{title}: ours, where it differs from the paper's"
        details.append({"title": heading, "body": dispute["pairs"]})
        rest = {k: v for k, v in dispute.items() if k != "pairs"}
        return {**rest, "ours": markup.Markup(f"{markup.text(dispute['summary'])}; each with its interval, task, "
                                              f"system and probe in the {_link(heading)}")}
    return dispute


def copy_figures(figures: list[str], results: str, out_dir: Path) -> list[dict]:
    """Copy each figure into ``out_dir`` under its path below ``results`` (slashes become
    ``__``) and list ``{study, name, link, paper}`` for the page, which links them relatively."""
    out_dir.mkdir(parents=True, exist_ok=True)
    listed = []
    for figure in figures:
        relative = Path(figure).relative_to(results)
        name = "__".join(relative.parts)
        shutil.copyfile(figure, out_dir / name)
        study = relative.parts[1] if relative.parts[0] == "analyses" else relative.parts[0]
        stem = str(relative.with_suffix(""))
        listed.append({"study": study, "name": stem, "link": f"{out_dir.name}/{name}",
                       "paper": next((v for k, v in figure_papers().items() if k in stem), "")})
    return listed


PRODUCTION_ALL = "Production variability: every probe"
"""The appendix's heading of the production summary on every probe (``_production_view``)."""


def _production_view(tested: set | None, details: list[dict]):
    """The production summary on the paper's main probes (``views.production_shown_probes``):
    whole (``production_w1``, the paper's bound beside the systems ``tested``: those that beat
    copying the source) where it fits the page, else as the paper's Fig. 5
    (``production_by_decoding``) with a note that says which systems are not read against the
    paper; each with a line pointing to the table of every probe, which it adds to ``details``
    (the appendix, under ``PRODUCTION_ALL``)."""

    def view(frame: pd.DataFrame) -> pd.DataFrame:
        probes = views.production_shown_probes(frame)
        every = views.production_w1(frame, tested)
        details.append({"title": PRODUCTION_ALL, "body": views.markdown(every)})
        pointer = _pointer(f"the table of every probe ({len(every)} rows)", PRODUCTION_ALL)
        main = views.production_w1(frame[frame["probe"].isin(probes)], tested)
        if len(main) <= views.MAX_ROWS:
            main.attrs["note"] = markup.Markup(f"The paper's main probes ({markup.text(', '.join(probes))}). {pointer}")
            return main
        short = views.production_by_decoding(frame, probes)
        untested = sorted({f"{m} / {d} on {t}" for t, m, d in zip(frame["dataset"], frame["model"], frame["decoding"],
                                                                   strict=True)
                           if tested is not None and (t, m, d) not in tested})
        short.attrs["note"] = markup.Markup(
            f"The table of the paper's main probes ({len(main)} rows: H, M, C, W1(M, H) and W1(C, H)) is too long "
            "for the page: here are its mean W1(C, H) over inputs and the human control's mean W1, as the mean-W1 "
            "figure (Fig. 5) draws them, each column's lowest system in bold."
            + (f" Not read against the paper's bound (they do not beat copying the source): "
               f"{markup.text(', '.join(untested))}." if untested else "") + f" {pointer}")
        return short

    return lambda frames: [view(f) for f in frames]


def _blocks(entries: list[dict], views_by_prefix: dict = VIEWS) -> list[dict]:
    """A section's tables: each registered table through its prefix's view (``VIEWS``), else
    as it is, else (too long to print) named with its size."""
    blocks = []
    for prefix in dict.fromkeys(next((p for p in views_by_prefix if e["name"].startswith(p)), e["name"])
                                for e in entries):
        group = [e for e in entries if e["name"].startswith(prefix) or e["name"] == prefix]
        frames = [tables.read_frame(e["table"]) for e in group]
        view = views_by_prefix.get(prefix)
        shown = view(frames) if view else frames
        titles = [group[0]["title"]] if len(shown) < len(group) else [e["title"] for e in group]
        for title, frame in zip(titles, shown, strict=True):
            body = (views.markdown(frame) if len(frame) <= views.MAX_ROWS else
                    markup.Markup(f"{len(frame)} rows: {markup.code(group[0]['table'])} (and the run's explorer)."))
            blocks.append({"title": frame.attrs.get("title", title), "prefix": prefix, "body": body,
                           "note": frame.attrs.get("note")})
    return blocks


def _table_one(entries: list[dict], measured: dict) -> str | None:
    """Table 1 with the run's bootstrap intervals (its ``provo_intervals`` table)."""
    first = next((e for e in entries if e.get("schema") == "provo_system"), None)
    if first is None:
        return None
    summary = tables.read(first["table"], "provo_system")
    intervals = views.intervals(tables.read(measured["provo_intervals"], "provo_intervals"))
    return views.markdown(views.table_one(summary, intervals))


def _authors_blocks(entries: list[dict], measured: dict) -> list[dict]:
    """Table 1's human and oracle values under ours, the authors' protocol and the paper's
    digits, with Table 1's mean human entropy beside the authors' repository's, then each of the
    authors' definitions switched alone (the run's ``provo_authors`` table; none where the run
    has none: a cloze corpus other than the Provo norms)."""
    path = measured.get("provo_authors")
    if not path:
        return []
    found = tables.read(path, "provo_authors")
    summary = tables.read(next(e for e in entries if e.get("schema") == "provo_system")["table"], "provo_system")
    human = summary.loc[summary["model"] == "human", "mean_entropy_human"]
    entropy = float(human.iloc[0]) if len(human) else float("nan")
    return [{"title": frame.attrs["title"], "prefix": prefix, "body": views.markdown(frame),
             "note": frame.attrs["note"]}
            for prefix, frame in (("provo_authors", views.authors_comparison(found, entropy)),
                                  ("provo_authors_switches", views.authors_switches(found)))]


def _published_blocks(entries: list[dict], measured: dict) -> list[dict]:
    """The paper's own systems' Table 1 values under ours, the authors' protocol and the paper's
    digits (each published model's ``provo_published`` table; none where the run has none)."""
    found = published_systems.authors_tables(measured)
    if not found:
        return []
    summary = tables.read(next(e for e in entries if e.get("schema") == "provo_system")["table"], "provo_system")
    frame = views.published_comparison(summary, found)
    return [{"title": frame.attrs["title"], "prefix": "provo_published", "body": views.markdown(frame),
             "note": frame.attrs["note"]}]


def render(*, config: dict, configfiles: list[str], commit: str, entries: list[dict], figures: list[dict],
           benchmarks: str, measured: dict, results: str | None = None,
           not_run: dict[str, str] | None = None) -> str:
    """The page's Markdown. ``config``: the run's validated config, the schema's defaults applied
    (``varprobe.config_loading.validate_config``); ``configfiles`` are shown last, as they are, in
    the order given (each over the ones before it, a file given twice once); ``measured``: the
    run's measured tables by name (``PAGE_TABLES`` of ``workflow/rules/page_inputs.smk``), each
    a path, or for the production tables and the published systems' (``provo_published``: by model) a list or
    mapping of paths; ``results``: the run's results folder (its Snakemake logs
    beside it); ``not_run``: the configured analyses that could not run on the corpus, with the
    reason. Every value reaches the
    page as text but the Markdown the page writes itself (``varprobe.results_page.markup``)."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, finalize=markup.finalize)
    environment.filters.update(code=markup.code, fenced=markup.fenced, html_text=markup.html_text, url=markup.url)
    configfiles = list(dict.fromkeys(str(Path(p).resolve()) for p in configfiles))
    root = Path(results) if results else Path(benchmarks).parent
    stages = stage_times(Path(benchmarks)) if Path(benchmarks).is_dir() else {}
    decided = verdicts.decide(entries, measured, config)
    tested = verdicts.adequate_systems(verdicts.Run(entries, measured, config))  # the rest is not read
    shown_sections, details = [], []  # details: what the appendix holds for the page
    notes = sections.family_notes(config)
    for key, section in sections.sections().items():
        mine = [e for e in entries if e["name"].startswith(section.entries)]
        shown = [f for f in figures if f["study"] in section.figures]
        one = _table_one(mine, measured) if key == "provo" else None
        authors = _authors_blocks(mine, measured) + _published_blocks(mine, measured) if one is not None else []
        if one is not None:
            mine = [e for e in mine if e.get("schema") != "provo_system"]
        blocks = authors + _blocks(mine, {**VIEWS, **sections.family_views(measured),
                                          "production_summary": _production_view(tested, details)})
        if key == "production":
            blocks += production_readings.blocks(measured, tested)
            blocks += [b for b in [findings.miscalibrated_block(measured)] if b]
        blocks = [{**b, "family_note": notes.get(b["prefix"])} for b in blocks]
        if mine or shown or one:
            shown_sections.append({"key": key, "heading": section.heading, "paper": section.paper,
                             "table_one": one, "blocks": _block_to_appendix(blocks, details), "figures": shown})
    held = (appendix_tables(), appendix_pairs())
    disputes = [_dispute_to_appendix(d, details, held) for d in disagreements.disagreements(entries, measured, config)]
    present = {s["key"] for s in shown_sections}
    made = {source for source in findings.PAPERS if any(
        source == s and section in present for s, _, section, why in findings.PAPER_ITEMS if not why)}
    return environment.get_template(TEMPLATE).render(
        date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=commit,
        machine=machine(),
        span=run_span(Path(benchmarks), root.parent / ".snakemake" / "log"),
        run=findings.what_was_run(config, entries),
        papers=findings.papers_read({s["key"] for s in shown_sections}),
        findings=findings.findings(entries, [d["title"] for d in disputes], decided, config),
        verdicts=views.markdown(verdicts.verdict_table(decided, made)),
        glossary=views.glossary({s["key"] for s in shown_sections},
                                config["provo"]["ece_bins"] if "provo" in config else None),
        sections=shown_sections,
        absent=findings.absent_sections(config, {s["key"] for s in shown_sections}),
        disagreements=disputes,
        details=details,
        departures=views.markdown(departures.departure_table(present)) if present else None,
        index=findings.paper_index({s["key"]: s["heading"] for s in shown_sections}),
        reproduce=reproduce(configfiles),
        bins=config["provo"]["ece_bins"] if "provo" in config else None,
        n_samples=findings.draws_per_context(config["provo"]) if "provo" in config else None,
        configs=[{"path": path, "text": Path(path).read_text(encoding="utf-8").rstrip()}
                 for path in configfiles],
        stages=markup.Markup(table({markup.text(name): stage for name, stage in stages.items()}))
        if stages else "no benchmark files",  # a stage is a folder under the benchmarks: its name is text
        dominant=list(stages)[:3],
        paper=paper,
        relative=f"1/{1 / views.RELATIVE:g}",  # a rule of the page, no value of a table: not a decimal
        not_run=not_run or {},
        published=markup.Markup(", ".join(markup.code(m) for m in published_systems.columns(config))),
    )
