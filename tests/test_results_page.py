"""varprobe.results_page: the papers' tables built from run tables, and the page's rendering."""

from __future__ import annotations

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.results_page import paper
from varprobe.results_page.page import copy_figures, render
from varprobe.results_page.tables import production_w1, table_one, with_paper_coefficients


def _system(model, decoding, tvd, low=np.nan, high=np.nan, lower=np.nan, upper=np.nan):
    return {"model": model, "decoding": decoding, "n_contexts": 3, "n_contexts_without_words": 0,
            "expected_tvd": tvd, "ci_low": low, "ci_high": high, "expected_tvd_lower": lower,
            "expected_tvd_upper": upper, "expected_tvd_oracle1": 0.5, "oracle_expected_tvd": 0.42, "ece_corpus": 0.1,
            "ece_human_majority": 0.2, "ece_oracle_majority": 0.3, "failure_rate": 0.05,
            "mean_entropy_model": 1.5, "mean_entropy_human": 2.0}


SUMMARY = pd.DataFrame([
    _system("m", "ancestral", 0.61234, 0.5, 0.7),
    _system("oracle", "control", 0.42, 0.4, 0.44),
    _system("m", "exact", 0.6, 0.55, 0.65, lower=0.58, upper=0.66),
    _system("human", "mle", np.nan),
])


def test_numbers_read_without_false_zeros():
    from varprobe.results_page.tables import number

    assert [number(v) for v in (0.61234, 0.0, 4.7e-06, np.nan, None, 3)] == ["0.612", "0.000", "4.7e-06", "–", "–", "3"]


def test_table_one_puts_human_and_oracle_first_then_systems_then_the_paper():
    table = table_one(SUMMARY)
    systems = table["system"].tolist()
    assert systems[:4] == ["human / mle", "oracle / control", "m / ancestral", "m / exact"]
    assert systems[4:] == [f"paper: {name}" for name in paper.TABLE_1]
    tvd = table.set_index("system")["E[TVD] to humans [95% CI]"]
    assert tvd["m / ancestral"] == "0.612 [0.500, 0.700]"
    assert tvd["m / exact"] == "0.600 [0.550, 0.650] (exact in [0.580, 0.660])"
    assert tvd["human / mle"] == "–" and tvd["paper: Oracle2"] == "0.42"
    assert table.set_index("system").loc["paper: GPT2", "ECE human majority"] == "0.20"


def test_paper_coefficients_stand_beside_ours_by_label():
    ours = pd.DataFrame({"label": ["human entropy", "numerical", "intercept"], "mean": [0.1, 0.2, 0.7],
                         "hdi_2.5%": [0.0, 0.1, 0.6], "hdi_97.5%": [0.2, 0.3, 0.8]})
    table = with_paper_coefficients(ours)
    assert table["paper (GPT-2)"].tolist()[:2] == [0.053, 0.049] and np.isnan(table["paper (GPT-2)"][2])
    assert table["95% HDI"][0] == "[0.000, 0.200]"


def test_production_view_has_one_row_per_system_and_probe_with_the_control():
    rows = []
    for probe, available in (("lexical-1", True), ("syntactic-1", False)):
        for statistic, mean in (("mean_H", 0.3), ("w1_C_H", 0.12), ("w1_control", 0.05), ("mean_M_minus_H", 0.1)):
            rows.append({"dataset": "asset", "model": "m", "decoding": "ancestral", "probe": probe,
                         "available": available, "statistic": statistic, "n_inputs": 2000,
                         "mean": mean, "ci_low": mean - 0.01, "ci_high": mean + 0.01})
    view = production_w1(pd.DataFrame(rows))
    assert len(view) == 1 and view.loc[0, "probe"] == "lexical-1" and view.loc[0, "inputs"] == "2000"
    assert view.loc[0, "W1(C, H)"] == "0.120 [0.110, 0.130]"
    assert view.loc[0, "W1 human control"] == "0.050 [0.040, 0.060]"
    assert "mean_M_minus_H" not in view.columns


def test_the_page_holds_the_header_stage_times_tables_and_figures(tmp_path):
    results = tmp_path / "results"
    tables.write(SUMMARY, results / "provo/summary.parquet", "provo_system")
    (results / "provo/figures").mkdir(parents=True)
    (results / "provo/figures/tvd_density.png").write_bytes(b"png")
    bench = results / "benchmarks/provo_sample/m/ancestral/1.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "12.0\t0:00:12\t812.5\t1\t1\t1\t0\t0\t90\t11.0\n")
    figures = copy_figures([str(results / "provo/figures/tvd_density.png")], str(results),
                           results / "docs/figures")
    assert (results / "docs/figures/provo__figures__tvd_density.png").read_bytes() == b"png"
    entry = {"name": "provo_summary", "table": str(results / "provo/summary.parquet"),
             "title": "Expected TVD", "category": "Provo", "schema": "provo_system"}
    coefficients = pd.DataFrame({"label": ["surprisal"], "mean": [0.1], "hdi_2.5%": [0.0],
                                 "hdi_97.5%": [0.2]})
    coefficients.to_parquet(results / "coefficients.parquet")
    # A registered table is shown through its schema's view (here the paper's Table 3 beside
    # ours), whatever its registry name.
    ard = {"name": "any_name", "table": str(results / "coefficients.parquet"), "title": "ARD",
           "category": "Regression", "schema": "regression_coefficients"}
    config = tmp_path / "config.yaml"
    config.write_text("seed: 0\nprovo: {prompt: '{source}'}\n")
    page = render(configfiles=[str(config)], commit="abc123",
                  entries=[entry, ard], figures=figures,
                  benchmarks=str(results / "benchmarks"))
    assert "| commit | `abc123` |" in page and "provo: {prompt: '{source}'}" in page
    assert "| provo_sample | 1 | 12 | 11 | 12 | 812 |" in page
    assert "| human / mle " in page and "### Table 1" in page
    assert "## Provo: Expected TVD" not in page  # Table 1 shows the Provo summary
    assert "## Regression: ARD" in page and "| paper (GPT-2)   |" in page
    assert "![provo/figures/tvd_density](figures/provo__figures__tvd_density.png)" in page


def test_the_production_summary_is_read_against_the_papers_stated_levels(tmp_path):
    rows = [{"dataset": "dailydialog", "model": "m", "decoding": "ancestral", "probe": "lexical-1",
             "available": True, "statistic": statistic, "n_inputs": 5, "mean": 0.1, "ci_low": 0.05,
             "ci_high": 0.15} for statistic in ("w1_C_H", "w1_control")]
    pd.DataFrame(rows).to_parquet(tmp_path / "production.parquet")
    production = {"name": "production_summary", "table": str(tmp_path / "production.parquet"),
                  "title": "W1", "category": "Production", "schema": "production_summary"}
    ard = {"name": "ard", "table": str(tmp_path / "ard.parquet"), "title": "ARD",
           "category": "Regression", "schema": "regression_coefficients"}
    pd.DataFrame({"label": ["noun"], "mean": [0.1], "hdi_2.5%": [0.0], "hdi_97.5%": [0.2]}).to_parquet(ard["table"])
    config = tmp_path / "config.yaml"
    config.write_text("seed: 0\n")
    page = render(configfiles=[str(config)], commit="abc", entries=[production, ard], figures=[],
                  benchmarks=str(tmp_path / "none"))
    table, notes, regression = page.index("| dailydialog"), page.index("Giulianelli et al. 2023, Sec. 6.2"), \
        page.index("## Regression: ARD")
    assert table < notes < regression and '"always lower than 0.1"' in page and "2 + 3" in page
    alone = render(configfiles=[str(config)], commit="abc", entries=[ard], figures=[],
                   benchmarks=str(tmp_path / "none"))
    assert "Giulianelli et al. 2023, Sec. 6.2" not in alone
