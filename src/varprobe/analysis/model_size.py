"""Table 1's headline quantities against model size (issue 71): each sampled model's expected
TVD to the humans and its ECE against each target, beside the oracle control's, with the
parameter count the model's card states (``parameters`` in its config entry)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

QUANTITIES = {
    "expected_tvd": "E TVD(M, H); oracle: E TVD(O2, O1)",
    "ece_corpus": "ECE, target: the corpus word",
    "ece_human_majority": "ECE, target: the human majority",
    "ece_oracle_majority": "ECE, target: the oracle-1 majority",
}
"""The summary's columns drawn against size, each with what it is (Ilia & Aziz 2024, Table 1:
Expected TVD, eq. 2, and ECE with the row's target)."""

COLUMNS = ["model", "decoding", "parameters", "quantity", "value", "ci_low", "ci_high"]


def size_table(summary: pd.DataFrame, parameters: Mapping[str, int]) -> pd.DataFrame:
    """One row per system of a model with a stated size, and per quantity of ``QUANTITIES``; and
    the oracle control's rows (model ``oracle``, no size), the reference band of each quantity.

    The interval (``ci_low``, ``ci_high``) is the summary's 95% bootstrap interval of E TVD;
    the ECE rows have none (NaN).

    Parameters
    ----------
    summary : pandas.DataFrame
        The Provo summary (schema ``provo_system``).
    parameters : Mapping of str to int
        Each model's parameter count as its card states it; models not in it are left out.

    Returns
    -------
    pandas.DataFrame
        Columns ``COLUMNS`` (schema ``provo_model_size``), sized systems by size, then the oracle.
    """
    sized = summary[summary["model"].isin(list(parameters))]
    oracle = summary[summary["model"] == "oracle"]
    rows = []
    for _, system in pd.concat([sized, oracle]).iterrows():
        size = parameters.get(system["model"], pd.NA)
        for quantity in QUANTITIES:
            interval = (system["ci_low"], system["ci_high"]) if quantity == "expected_tvd" else (np.nan, np.nan)
            rows.append({"model": system["model"], "decoding": system["decoding"], "parameters": size,
                         "quantity": quantity, "value": float(system[quantity]),
                         "ci_low": float(interval[0]), "ci_high": float(interval[1])})
    table = pd.DataFrame(rows, columns=COLUMNS).astype({"parameters": "Int64"})
    return table.sort_values(["parameters", "decoding", "quantity"], na_position="last",
                             kind="stable", ignore_index=True)
