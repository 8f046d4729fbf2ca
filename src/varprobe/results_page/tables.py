"""The tables of the results page, built from the run's Parquet tables.

Numbers are rounded to three decimals for reading (the Parquet files keep full precision).
``table_one`` is Ilia & Aziz's Table 1 with our human, oracle and model rows and the paper's
rows beneath; ``with_paper_coefficients`` puts the paper's Table 3 beside an ARD coefficient
table; ``production_w1`` is Giulianelli et al.'s per-task summary: the mean distances and the
Wasserstein-1 distance between the model's and the humans' cross-variability beside the human
control, per dataset, probe and decoding.
"""

from __future__ import annotations

import math

import pandas as pd

from varprobe.results_page import paper

MAX_ROWS = 60
"""Tables longer than this are named, not printed (the explorer and the Parquet files hold them)."""


def number(value) -> str:
    """A cell for reading: three decimals for a float (two significant digits below 0.001, so
    that a small value does not read as zero), ``–`` for a missing number."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.1e}" if 0 < abs(value) < 0.0005 else f"{value:.3f}"
    return str(value)


def with_interval(mean: float, low: float, high: float) -> str:
    """``mean [low, high]``, or the mean alone without an interval."""
    if any(v is None or math.isnan(v) for v in (low, high)):
        return number(mean)
    return f"{number(mean)} [{number(low)}, {number(high)}]"


def markdown(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown (pipe) table of rounded cells."""
    shown = frame.map(number) if not frame.empty else frame
    return shown.to_markdown(index=False, disable_numparse=True)


TABLE_ONE_COLUMNS = {
    "expected_tvd": "E[TVD] to humans [95% CI]",
    "expected_tvd_oracle1": "E[TVD] to oracle 1",
    "ece_corpus": "ECE corpus word",
    "ece_human_majority": "ECE human majority",
    "ece_oracle_majority": "ECE oracle-1 majority",
    "mean_entropy_model": "mean entropy (system)",
    "mean_entropy_human": "mean entropy (humans)",
    "failure_rate": "failure rate",
    "n_contexts": "contexts",
}


def table_one(summary: pd.DataFrame) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 1, transposed (one row per system): the human MLE, the oracle
    control and every model x decoding of the run's Provo summary (schema ``provo_system``),
    then the paper's rows (``paper.TABLE_1``) under ``paper:``. An exact (enumerated) system
    shows the interval its unresolved mass leaves open beside its expected TVD."""
    first = {"human": 0, "oracle": 1}
    ordered = summary.assign(_order=summary["model"].map(first).fillna(2)).sort_values(
        ["_order", "model", "decoding"], kind="stable")
    rows = []
    for r in ordered.itertuples(index=False):
        row = {"system": f"{r.model} / {r.decoding}"}
        tvd = with_interval(r.expected_tvd, r.ci_low, r.ci_high)
        if not math.isnan(r.expected_tvd_lower):
            tvd += f" (exact in [{number(r.expected_tvd_lower)}, {number(r.expected_tvd_upper)}])"
        row["expected_tvd"] = tvd
        row.update({k: getattr(r, k) for k in TABLE_ONE_COLUMNS if k != "expected_tvd"})
        rows.append(row)
    for system, values in paper.TABLE_1.items():  # as printed: two decimals
        shown = ["–" if v is None else f"{v:.2f}" for v in values]
        rows.append({"system": f"paper: {system}",
                     **dict(zip(("ece_corpus", "ece_human_majority", "ece_oracle_majority", "expected_tvd"),
                                shown, strict=True))})
    table = pd.DataFrame(rows, columns=["system", *TABLE_ONE_COLUMNS])
    table["n_contexts"] = table["n_contexts"].map(lambda n: "" if pd.isna(n) else str(int(n)))
    return table.rename(columns=TABLE_ONE_COLUMNS)


def with_paper_coefficients(coefficients: pd.DataFrame) -> pd.DataFrame:
    """An ARD coefficient table (schema ``regression_coefficients``): label, posterior mean,
    its 95% HDI, and the paper's GPT-2 coefficient (Table 3) where it has one."""
    return pd.DataFrame({
        "predictor": coefficients["label"],
        "mean": coefficients["mean"],
        "95% HDI": [f"[{number(lo)}, {number(hi)}]" for lo, hi in
                    zip(coefficients["hdi_2.5%"], coefficients["hdi_97.5%"], strict=True)],
        "paper (GPT-2)": coefficients["label"].map(paper.TABLE_3),
    })


PRODUCTION_STATISTICS = {
    "mean_H": "mean H", "mean_M": "mean M", "mean_C": "mean C",
    "w1_M_H": "W1(M, H)", "w1_C_H": "W1(C, H)", "w1_control": "W1 human control",
}


def production_w1(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, model, decoding and available probe: the bootstrap means over inputs of the
    distances among human outputs (H), model outputs (M) and between them (C), and the W1 of M
    and C against H beside the human control's (schema ``production_summary``)."""
    available = summary[summary["available"] & summary["statistic"].isin(PRODUCTION_STATISTICS)]
    keys = ["dataset", "model", "decoding", "probe"]
    rows = []
    for key, group in available.groupby(keys, sort=False):
        row = dict(zip(keys, key, strict=True))
        row["inputs"] = str(int(group["n_inputs"].max()))
        for stat in group.itertuples(index=False):
            row[PRODUCTION_STATISTICS[stat.statistic]] = with_interval(stat.mean, stat.ci_low, stat.ci_high)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, "inputs", *PRODUCTION_STATISTICS.values()])
