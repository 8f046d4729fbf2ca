"""Summary tables rendered as HTML pages for the report."""

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.cli import main
from varprobe.reporting import table_page


def test_page_shows_every_row_rounded_and_escaped():
    frame = pd.DataFrame({"model": ["<b>", "oracle"], "tvd": [0.123456789, np.nan],
                          "words": [["a", "b"], []]})
    page = table_page(frame, "Expected TVD", {"seed": 0, "note": "<script>"})
    assert page.count("</tr>") == 3  # header and two rows
    assert "0.1235" in page and "NaN" in page and "a, b" in page
    assert "<b>" not in page and "&lt;b&gt;" in page
    assert "<script>" not in page and "&quot;seed&quot;: 0" in page


def test_report_table_command_writes_the_page(tmp_path):
    table = tmp_path / "summary.parquet"
    frame = pd.DataFrame({"model": ["m"], "decoding": ["d"], "n_inputs": [3]})
    frame.to_parquet(table)
    out = tmp_path / "pages" / "summary.html"
    main(["report-table", "--table", str(table), "--title", "A title", "--out", str(out)])
    assert "A title" in out.read_text() and "<td>3</td>" in out.read_text()
    assert tables.read_metadata(table) == {}
