"""The paper's own systems in a run: the models whose draws are the samples Ilia & Aziz published
for a column of their Table 1 (a model entry ``published: {system: NAME}``,
``varprobe.data.published_generations``), the column each answers, and each one's Table 1 values
under the authors' protocol beside the paper's (its ``provo_published`` table, which rule
``provo_published`` writes with its samples file: ``varprobe.analysis.published_samples``)."""

from __future__ import annotations

import pandas as pd

from varprobe import tables
from varprobe.data.published_generations import system

DECODING = "given"
"""The decoding of a samples model's rows: the draws are given, not drawn by the run."""

VALUES = ("ece_corpus", "ece_human_majority", "ece_oracle_majority", "expected_tvd")
"""Table 1's four values of a model column, as the ``provo_system`` and ``provo_published``
schemas name them, in the order of the paper's rows."""

DIGITS = 2
"""The decimals Table 1 prints."""


def columns(config: dict) -> dict[str, str]:
    """The Table 1 column of each published model of the validated ``config``, by model name, in
    the config's order (``varprobe.data.published_generations.SYSTEMS``: GPT-2's column
    ``GPT2``, ChatGPT's list mode the paper's ChatGPT_D, ``ChatGPT list``)."""
    return {m["name"]: system(m["published"]["system"]).column for m in config.get("models", [])
            if "published" in m}


def rows(summary: pd.DataFrame, config: dict) -> pd.DataFrame:
    """The rows of a Provo summary (schema ``provo_system``) that are the paper's own systems: a
    published model (``columns``) with its given draws (``DECODING``)."""
    return summary[summary["model"].isin(list(columns(config))) & (summary["decoding"] == DECODING)]


def authors_tables(measured: dict) -> dict[str, pd.DataFrame]:
    """Each published model's ``provo_published`` table, by model name (the run's measured
    ``provo_published``: ``{model: path}``; none without it)."""
    found = measured.get("provo_published") or {}
    return {model: tables.read(path, "provo_published") for model, path in found.items()}


def protocol_row(table: pd.DataFrame, protocol: str) -> pd.Series:
    """The row of a ``provo_published`` table of ``protocol`` (``authors`` or ``paper``)."""
    found = table[table["protocol"] == protocol]
    if found.empty:
        raise KeyError(f"provo_published: no row protocol={protocol!r}")
    return found.iloc[0]


def paper_digits(table: pd.DataFrame) -> list[str]:
    """The ``VALUES`` whose value under the authors' protocol, rounded to Table 1's ``DIGITS``,
    is the paper's printed value."""
    authors, printed = protocol_row(table, "authors"), protocol_row(table, "paper")
    return [v for v in VALUES if round(float(authors[v]), DIGITS) == round(float(printed[v]), DIGITS)]
