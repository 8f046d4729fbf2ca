"""Summary tables as HTML pages for the Snakemake report (which shows HTML inline but not Parquet).

A page holds the table's title, every row and column of the Parquet table (numbers rounded for
reading only: the Parquet file keeps full precision) and the provenance metadata stored with it.
"""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd

STYLE = (
    "body{font-family:sans-serif;font-size:13px;margin:1em}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
    "th{background:#f3f3f3}pre{font-size:11px;white-space:pre-wrap}"
)


def _cell(value) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(map(str, value))
    if isinstance(value, float):
        return "NaN" if np.isnan(value) else f"{value:.4g}"
    return str(value)


def table_page(frame: pd.DataFrame, title: str, metadata: dict) -> str:
    """A self-contained HTML page showing ``frame`` under ``title`` with its ``metadata``."""
    shown = frame.map(_cell) if not frame.empty else frame
    body = shown.to_html(index=False, escape=True, na_rep="NaN", border=0)
    provenance = (
        f"<details><summary>provenance</summary><pre>{html.escape(json.dumps(metadata, indent=1, sort_keys=True))}"
        "</pre></details>" if metadata else ""
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h3>{html.escape(title)}</h3>"
        f"<p>{len(frame)} rows; full precision in the Parquet table.</p>{body}{provenance}"
        "</body></html>"
    )
