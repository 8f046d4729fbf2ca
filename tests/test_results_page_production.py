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
from varprobe.results_page.claims import unlisted_numbers
from varprobe.results_page.page import render

SCHEMA = Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml"
DATASETS = ("wmt14", "asset", "dailydialog")
PROBES = ("lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3", "semantic")
DECODINGS = ("ancestral", "temperature-0.5", "top-k-30", "top-k-40", "top-p-0.9", "top-p-0.95",
             "typical-0.2", "typical-0.95", "temperature-0.75")
CONFIG = f"""seed: 0
models: [{{name: m, pretrained: m}}]
production:
  datasets: [{", ".join(f"{{name: {d}, prompt: '{{source}}'}}" for d in DATASETS)}]
  max_inputs: 4
  decodings: [{", ".join(f"{{name: {d}}}" for d in DECODINGS)}]
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
    entries = [{"name": "production_summary", "table": str(summary), "title": "Production variability",
                "category": "Production", "schema": "production_summary"}]
    config = tmp / "config.yaml"
    config.write_text(CONFIG)
    return render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured={}, results=str(results),
                  figure_probes=["lexical-1", "syntactic-2", "semantic"])


def test_the_claims_checker_finds_a_number_no_table_prints():
    page = "Prose cites 0.583 and 0.10 (Sec. 6.2), not v3.11.7.\n\n| a | b |\n|---|---|\n| 0.583 [0.5, 0.6] | x |\n"
    assert unlisted_numbers(page) == ["0.10: Prose cites 0.583 and 0.10 (Sec. 6.2), not v3.11.7."]
    assert unlisted_numbers(page + "0.10 after the index\n", until="0.10 after") == unlisted_numbers(page)


def test_a_production_run_page_cites_only_numbers_its_tables_show(page):
    """The finding's span of W1(C, H) and of the control is over the probes the Fig. 5 table
    shows, and the paper's level quoted under it is a row of it."""
    assert unlisted_numbers(page) == []
    finding = next(line for line in page.splitlines() if line.startswith("- Production: the mean W1(C, H)"))
    assert "0.012" not in finding and "0.988" not in finding
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
