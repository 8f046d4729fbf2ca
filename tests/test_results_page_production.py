"""The results page of a run that made the production study alone (the decoding-families config):
it says nothing of the Provo study's tables, and every number its prose cites is in its tables."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from varprobe import tables
from varprobe.cli import main
from varprobe.cli.production_readings import READINGS
from varprobe.results_page.claims import unlisted_numbers
from varprobe.results_page.page import render

SCHEMA = Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml"
DATASETS = ("wmt14", "asset", "dailydialog")
PROBES = ("lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3", "semantic")
SETTINGS = {"ancestral": "", "temperature-0.5": "temperature: 0.5", "top-k-30": "top_k: 30", "top-k-40": "top_k: 40",
            "top-p-0.9": "top_p: 0.9", "top-p-0.95": "top_p: 0.95", "typical-0.2": "typical_p: 0.2",
            "typical-0.95": "typical_p: 0.95", "temperature-0.75": "temperature: 0.75"}
"""The paper's nine decoding settings (configs/decoding-families.yaml)."""
DECODINGS = tuple(SETTINGS)
CONFIG = f"""seed: 0
models: [{{name: m, pretrained: m}}]
production:
  datasets: [{", ".join(f"{{name: {d}, prompt: '{{source}}'}}" for d in DATASETS)}]
  max_inputs: 4
  decodings: [{", ".join(f"{{name: {d}{', ' + v if v else ''}}}" for d, v in SETTINGS.items())}]
"""


def _summary() -> pd.DataFrame:
    """A production summary of nine decodings on three tasks (wmt14: lexical probes only, as for
    German outputs without a tagger or encoder). Its extremes are on probes the page's Fig. 5 table
    does not show: lexical-2 has the lowest W1(C, H) and control, syntactic-3 the highest. The
    human statistics (mean H, the control) are the same for every decoding, as a run's are."""
    rng = np.random.default_rng(0)
    rows = []
    for dataset in DATASETS:
        for probe in PROBES:
            available = dataset != "wmt14" or probe.startswith("lexical")
            human = {s: rng.uniform(0.2, 0.6) for s in ("mean_H", "w1_control")}
            for d, decoding in enumerate(DECODINGS):
                for statistic in ("mean_H", "mean_M", "mean_M_minus_H", "w1_M_H", "w1_C_H", "w1_control"):
                    value = {"lexical-2": 0.0123, "syntactic-3": 0.9876}.get(
                        probe, human.get(statistic, rng.uniform(0.2, 0.6) + 0.001 * d))
                    value -= 0.3 * (statistic == "mean_M_minus_H")
                    rows.append({"dataset": dataset, "model": "m", "decoding": decoding, "probe": probe,
                                 "available": available, "statistic": statistic,
                                 "n_inputs": 4 if available else 0, "mean": value if available else np.nan,
                                 "ci_low": value - 0.01 if available else np.nan,
                                 "ci_high": value + 0.01 if available else np.nan})
    return pd.DataFrame(rows)


def _beats_copy(losing: tuple = ()) -> pd.DataFrame:
    """Every system's criterion against copying the source: each beats it but the (dataset,
    decoding) pairs of ``losing``, whose interval's lower end is below the copy's mean."""
    return pd.DataFrame([{"dataset": d, "model": "m", "decoding": decoding, "statistic": "sari" if d == "asset" else "chrf",
                          "mean": 21.0 if (d, decoding) in losing else 40.0,
                          "ci_low": 20.0 if (d, decoding) in losing else 38.0,
                          "ci_high": 22.0 if (d, decoding) in losing else 42.0, "copy": 31.7,
                          "beats_copy": (d, decoding) not in losing} for d in DATASETS for decoding in DECODINGS])


def _divergences(results: Path) -> list[str]:
    """Every system's per-input divergences (4 inputs; wmt14 without its syntactic and semantic
    probes, as its metadata says), written where the run writes them."""
    rng = np.random.default_rng(1)
    paths = []
    for dataset in DATASETS:
        probes = [p for p in PROBES if dataset != "wmt14" or p.startswith("lexical")]
        unavailable = {p: "no German resource" for p in PROBES if p not in probes}
        for decoding in DECODINGS:
            frame = pd.DataFrame([{"input_id": f"i{i}", "probe": p, "n_H": 3, "n_M": 3, "n_C": 9, "mean_H": 0.3,
                                   "mean_M": 0.4, "mean_C": 0.4, "mean_M_minus_H": 0.1, "mean_C_minus_H": 0.1,
                                   "w1_M_H": rng.uniform(0, 0.6), "w1_C_H": rng.uniform(0, 0.6), "w1_control": 0.1}
                                  for i in range(4) for p in probes])
            path = results / f"production/{dataset}/m/{decoding}/divergences.parquet"
            path.parent.mkdir(parents=True)
            tables.write(frame, path, "production_divergences", {"unavailable": unavailable})
            paths.append(str(path))
    return paths


def _readings(results: Path, summary: Path) -> dict:
    """The reading tables of the run, each written by its subcommand as rule ``production_reading``
    runs it, by schema name."""
    divergences = _divergences(results)
    out = {}
    for reading, schema in READINGS.items():
        out[schema] = str(results / f"production/page/{reading}.parquet")
        main([f"production-{reading}", "--summary", str(summary), "--divergences", *divergences,
              "--decoding", "ancestral", "--out", out[schema]])
    return out


def _validated(path: Path) -> dict:
    config = yaml.safe_load(path.read_text())
    validate(config, str(SCHEMA))
    return config


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("families")
    results = tmp / "results"
    summary = results / "production/summary.parquet"
    summary.parent.mkdir(parents=True)
    tables.write(_summary(), summary, "production_summary")
    beats = results / "production/beats_copy.parquet"
    tables.write(_beats_copy(), beats, "production_beats_copy")
    entries = [{"name": "production_summary", "table": str(summary), "title": "Production variability",
                "category": "Production", "schema": "production_summary"},
               {"name": "production_beats_copy", "table": str(beats), "title": "Beating copying the source",
                "category": "Production", "schema": "production_beats_copy"}]
    config = tmp / "config.yaml"
    config.write_text(CONFIG)
    return render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_readings(results, summary), results=str(results))


def test_the_claims_checker_finds_a_number_no_table_prints():
    page = "Prose cites 0.583 and 0.10 (Sec. 6.2), not v3.11.7.\n\n| a | b |\n|---|---|\n| 0.583 [0.5, 0.6] | x |\n"
    assert unlisted_numbers(page) == ["0.10: Prose cites 0.583 and 0.10 (Sec. 6.2), not v3.11.7."]
    assert unlisted_numbers(page + "0.10 after the index\n", skipped=(("0.10 after", None),)) == unlisted_numbers(page)
    assert unlisted_numbers(page + "A 0.7 here\nB\n| 0.10 |\n", skipped=(("A 0.7", "B"),)) == []


def test_a_production_run_page_cites_only_numbers_its_tables_show(page):
    """The finding's span of W1(C, H) and of the control is over the probes the Fig. 5 table
    shows, and the paper's level quoted under it is a row of it."""
    assert unlisted_numbers(page) == []
    finding = next(line for line in page.splitlines() if line.startswith("- Production: the mean W1(C, H)"))
    assert "0.012" not in finding and "0.988" not in finding
    table = _rows(_block(page, "Production variability\n"))
    cells = sum(r[p] != "–" for r in table if r["system"] == "m / ancestral" for p in ("lexical-1", "syntactic-2",
                                                                                         "semantic"))
    bold = sum(r[p].startswith("**") for r in table if r["system"] == "m / ancestral" for p in ("lexical-1",
                                                                                              "syntactic-2", "semantic"))
    assert cells == 7 and f"decodings in {bold} of the {cells} task x probe cells of the production table" in page
    assert re.search(r"\| asset\s+\| paper: most decodings\s+\|\s+\| < 0\.1\s+\| < 0\.1\s+\| < 0\.1\s+\|", page)


def test_a_production_run_page_says_nothing_of_the_provo_studys_tables(page):
    """No Table 1 of Ilia & Aziz, no regression, no Liu et al.: one index row per paper the run
    made nothing of; the Table 1 the page names is Giulianelli et al.'s generation settings."""
    before = page[:page.index("## Configuration")]
    assert [line for line in before.splitlines() if "Table 1" in line] == [
        "| Giulianelli et al. 2023 | Table 1 (generation settings, App. C) | not shown: the run's configuration "
        "(last section) holds ours |"]
    assert not re.search(r"regression|ARD|TVD|ECE|Provo", before)
    for source in ("Ilia & Aziz 2024", "Liu et al. 2024"):
        assert [line for line in before.splitlines() if source in line] == [
            f"| {source} | every table and figure | not in this run (its studies were not configured) |"]
    assert "against the papers of the studies it ran: Giulianelli et al. 2023 (production variability)." in page
    assert "## Decoding families" not in page  # the nine settings cover the five families


def _block(page: str, title: str) -> str:
    """The page's block under the heading that starts with ``title``, to the next heading."""
    start = page.index(f"### {title}")
    return page[start:page.index("\n#", start + 4)]


def _rows(block: str) -> list[dict]:
    """The Markdown table of ``block`` as dicts of its cells."""
    lines = [line for line in block.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True)) for line in lines[2:]]


def test_the_signs_of_mean_m_minus_h_name_their_decoding_and_the_papers_sign_per_task(page):
    block = _block(page, "The sign of mean M - H per task on the paper's main probes (ancestral outputs)")
    rows = _rows(block)
    assert [(r["dataset"], r["probe"]) for r in rows] == [("wmt14", "lexical-1")] + [
        (d, p) for d in ("asset", "dailydialog") for p in ("lexical-1", "syntactic-2", "semantic")]
    assert {r["decoding"] for r in rows} == {"ancestral"}
    assert {(r["dataset"], r["paper sign"], r["paper model"]) for r in rows} == {
        ("wmt14", "-", "OpusMT"), ("asset", "-", "Flan-T5"), ("dailydialog", "+", "DialoGPT")}
    for r in rows:
        mean = float(r["mean M - H [95% CI]"].split()[0])
        assert r["sign"] == ("+" if mean > 0 else "-") and r["agrees"] == ("yes" if r["sign"] == r["paper sign"] else "no")


def test_model_human_w1_stands_where_the_paper_reads_it_with_its_footnotes_thresholds(page):
    rows = _rows(_block(page, "W1(M, H) where the paper reads it"))
    assert {(r["dataset"], r["probe"], r["paper's threshold"], r["paper footnote"]) for r in rows} == {
        ("wmt14", "lexical-1", "> 0.3", "12"), ("asset", "syntactic-2", "> 0.2", "13")}
    assert len(rows) == 2 * len(DECODINGS) and all(int(r["inputs above it"]) <= int(r["inputs"]) == 4 for r in rows)


def test_every_tasks_miscalibrated_inputs_follow_the_rule_its_caption_states(page):
    """The caption states each task's rule; it is the rule of that task's rows, and a claim of
    the caption that its table does not hold fails the test."""
    block = _block(page, "The miscalibrated inputs of every task under the paper's rule for it")
    rows = _rows(block)
    assert {r["dataset"] for r in rows} == set(DATASETS) and len(rows) == len(DATASETS) * len(DECODINGS)
    rules = block[block.index("per task: ") + len("per task: "):block.index(". A probe")].split("; ")
    stated = dict(re.fullmatch(r"(\w+): (.+) \(fn\. 1[2-5]\)", rule).groups() for rule in rules)
    assert stated == {r["dataset"]: r["the paper's rule"] for r in rows}
    assert stated["wmt14"].startswith("W1(M, H) > 0.3 on lexical-1") and stated["asset"] == "W1(M, H) > 0.2 on syntactic-2"
    assert stated["dailydialog"].startswith("W1(C, H) > 0.2 on lexical-1")
    assert {r["probes not computed"] for r in rows if r["dataset"] == "wmt14"} == {"syntactic-2, semantic"}
    assert all(int(r["selected"]) <= int(r["inputs"]) == 4 for r in rows)
