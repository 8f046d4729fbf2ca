"""The model-size figure's table (varprobe.analysis.model_size) and its command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.analysis.model_size import QUANTITIES, size_table
from varprobe.cli import main


def _summary() -> pd.DataFrame:
    columns = tables.SCHEMAS["provo_system"]
    rows = []
    for i, (model, decoding) in enumerate([("big", "ancestral"), ("small", "ancestral"), ("small", "temperature-0.5"),
                                           ("unsized", "ancestral"), ("oracle", "control"), ("human", "mle")]):
        row = {c: 0 for c, t in columns.items() if t.startswith("int")}
        row.update({c: 0.1 * (i + 1) for c, t in columns.items() if t == "float64"})
        row.update(model=model, decoding=decoding, ci_low=0.1 * (i + 1) - 0.01, ci_high=0.1 * (i + 1) + 0.02)
        rows.append(row)
    return pd.DataFrame(rows).astype(columns)


def test_the_table_holds_each_sized_system_and_the_oracle_by_size():
    table = size_table(_summary(), {"small": 135_000_000, "big": 494_000_000})
    assert list(table.columns) == list(tables.SCHEMAS["provo_model_size"])
    assert set(table["model"]) == {"small", "big", "oracle"}
    assert table.groupby("model").size().to_dict() == {"small": 8, "big": 4, "oracle": 4}
    assert list(dict.fromkeys(table["model"])) == ["small", "big", "oracle"]
    tvd = table[table["quantity"] == "expected_tvd"].set_index(["model", "decoding"])
    assert tvd.loc[("big", "ancestral"), ["value", "ci_low", "ci_high"]].tolist() == pytest.approx([0.1, 0.09, 0.12])
    assert tvd.loc[("oracle", "control"), "value"] == pytest.approx(0.5)
    assert table.loc[table["quantity"] != "expected_tvd", "ci_low"].isna().all()
    assert table.loc[table["model"] == "oracle", "parameters"].isna().all()


def test_the_command_writes_the_table_and_a_figure_of_every_quantity(tmp_path):
    summary = tmp_path / "summary.parquet"
    tables.write(_summary(), summary, "provo_system")
    sizes = {"small": 135_000_000, "big": 494_000_000}
    main(["provo-figure-size", "--summary", str(summary), "--parameters", json.dumps(sizes),
          "--figure", str(tmp_path / "size.png"), "--table", str(tmp_path / "size.parquet")])
    table = tables.read(tmp_path / "size.parquet", "provo_model_size")
    assert set(table["quantity"]) == set(QUANTITIES)
    assert np.isfinite(table["value"]).all()
    assert (tmp_path / "size.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

