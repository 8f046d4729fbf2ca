"""Runs side by side, from their run records (``varprobe.run_record``): ``differences`` of two
runs' headline numbers (``varprobe compare``) and ``collected``, many runs' headlines in one
table (``varprobe collect``; schema ``run_headlines``), the basis of a comparison across models
with the oracle and human-control ceilings as rows of their own.

A headline is named by ``KEYS`` (study, dataset, probe, model, decoding, quantity), the names the
summary tables use. Two intervals overlap when neither lies wholly above the other; where they do
not, the runs differ by more than either run's bootstrap interval.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from varprobe.run_record import HEADLINE_COLUMNS, RECORD

KEYS = ("study", "dataset", "probe", "model", "decoding", "quantity")
"""What names one headline number across runs."""


def headline_frame(record: dict) -> pd.DataFrame:
    """A record's headlines as a table of ``HEADLINE_COLUMNS`` (missing numbers NaN).

    Parameters
    ----------
    record : dict
        A run record (``varprobe.run_record.read``).

    Returns
    -------
    pandas.DataFrame
    """
    frame = pd.DataFrame(record.get("headlines", []), columns=list(HEADLINE_COLUMNS))
    for column in ("mean", "ci_low", "ci_high"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    for column in set(HEADLINE_COLUMNS) - {"mean", "ci_low", "ci_high"}:
        frame[column] = frame[column].fillna("").astype(str)
    return frame


def overlap(low_a: float, high_a: float, low_b: float, high_b: float) -> bool | None:
    """Whether the intervals [low_a, high_a] and [low_b, high_b] share a point; None where an end
    is missing.

    Parameters
    ----------
    low_a, high_a : float
        The first interval.
    low_b, high_b : float
        The second interval.

    Returns
    -------
    bool or None
    """
    ends = (low_a, high_a, low_b, high_b)
    if any(e is None or (isinstance(e, float) and math.isnan(e)) for e in ends):
        return None
    return bool(low_a <= high_b and low_b <= high_a)


def differences(a: dict, b: dict) -> pd.DataFrame:
    """Each headline of runs ``a`` and ``b`` side by side: its mean and interval in each, the
    difference ``b - a`` of the means and whether the intervals overlap (``overlap``); a headline
    of one run only has NaN for the other (``only_in`` names the run that has it).

    Parameters
    ----------
    a, b : dict
        Run records.

    Returns
    -------
    pandas.DataFrame
        ``KEYS``, ``mean_a``, ``ci_low_a``, ``ci_high_a``, the same for ``b``, ``difference``,
        ``overlap``, ``only_in`` ("", "A" or "B"), in ``a``'s order then ``b``'s.
    """
    keys = list(KEYS)
    values = ["mean", "ci_low", "ci_high"]
    left = headline_frame(a)[keys + values + ["role"]].assign(order_a=lambda f: range(len(f)))
    right = headline_frame(b)[keys + values + ["role"]].assign(order_b=lambda f: range(len(f)))
    merged = left.merge(right, on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    merged = merged.sort_values(["order_a", "order_b"], na_position="last")
    merged["role"] = merged["role_a"].fillna(merged["role_b"]).fillna("")
    merged["difference"] = merged["mean_b"] - merged["mean_a"]
    merged["overlap"] = [overlap(*row) for row in
                         merged[["ci_low_a", "ci_high_a", "ci_low_b", "ci_high_b"]].itertuples(index=False)]
    merged["only_in"] = merged["_merge"].map({"both": "", "left_only": "A", "right_only": "B"}).astype(str)
    return merged.drop(columns=["_merge", "order_a", "order_b", "role_a", "role_b"]).reset_index(drop=True)


def provenance_differences(a: dict, b: dict) -> list[str]:
    """What differs between the runs' provenance, one line each: commit, dirtiness, config
    digest, and every package version that differs.

    Parameters
    ----------
    a, b : dict
        Run records.

    Returns
    -------
    list of str
    """
    pa, pb = a.get("provenance", {}), b.get("provenance", {})
    lines = [f"{key}: {pa.get(key)} -> {pb.get(key)}" for key in ("commit", "dirty", "config_digest")
             if pa.get(key) != pb.get(key)]
    va, vb = pa.get("versions", {}), pb.get("versions", {})
    lines += [f"{name} {va.get(name)} -> {vb.get(name)}" for name in sorted(set(va) | set(vb))
              if va.get(name) != vb.get(name)]
    return lines


def _interval(mean: float, low: float, high: float) -> str:
    """``mean [low, high]`` to three decimals, ``–`` for a missing number."""
    def number(x):
        return "–" if x is None or pd.isna(x) else f"{x:.3f}"
    return f"{number(mean)} [{number(low)}, {number(high)}]"


def _name(row) -> str:
    """A headline's name: study, dataset and probe where set, the system, the quantity."""
    where = "/".join(p for p in (row.study, row.dataset, row.probe) if p)
    system = f"{row.model} / {row.decoding}" if row.decoding else row.model
    return f"{where}  {system}  {row.quantity}"


def comparison_text(a: dict, b: dict) -> str:
    """What ``varprobe compare`` prints: the two records, their provenance's differences, then one
    line per headline: A and B with their intervals, B - A, and whether the intervals overlap.

    Parameters
    ----------
    a, b : dict
        Run records (``path`` set by ``varprobe.run_record.read``).

    Returns
    -------
    str
    """
    lines = [f"A: {a.get('path', '?')}", f"B: {b.get('path', '?')}"]
    changed = provenance_differences(a, b)
    lines += ["provenance: the same commit, config and versions" if not changed else
              "provenance differs: " + "; ".join(changed), ""]
    found = differences(a, b)
    if found.empty:
        return "\n".join(lines + ["no headline numbers in either record"]) + "\n"
    width = max(len(_name(r)) for r in found.itertuples(index=False))
    lines.append(f"{'headline':<{width}}  {'A mean [95% CI]':<24}  {'B mean [95% CI]':<24}  {'B - A':>7}  intervals")
    for r in found.itertuples(index=False):
        if r.only_in:
            state = f"only in {r.only_in}"
            delta = "–"
        else:
            state = {True: "overlap", False: "apart", None: "–"}[r.overlap]
            delta = "–" if pd.isna(r.difference) else f"{r.difference:+.3f}"
        lines.append(f"{_name(r):<{width}}  {_interval(r.mean_a, r.ci_low_a, r.ci_high_a):<24}  "
                     f"{_interval(r.mean_b, r.ci_low_b, r.ci_high_b):<24}  {delta:>7}  {state}")
    apart = int((found["overlap"] == False).sum())  # noqa: E712 (None is neither)
    lines += ["", f"{len(found)} headlines; {apart} with intervals apart"]
    return "\n".join(lines) + "\n"


def run_name(record: dict) -> str:
    """A run's name in a collected table: the folder holding its ``results/`` (or its record).

    Parameters
    ----------
    record : dict
        A run record (``path`` set).

    Returns
    -------
    str
    """
    path = Path(record.get("path", RECORD))
    folder = path.parent
    return (folder.parent if folder.name == "results" else folder).name or str(path)


def collected(records: list[dict]) -> pd.DataFrame:
    """The headlines of ``records`` in one table (schema ``run_headlines``): one row per run,
    system and quantity, with the run's name (``run_name``; its path where two share a name),
    commit, dirtiness and config digest. The ceilings (the oracle control, the human control)
    are rows of their own (``role``).

    Parameters
    ----------
    records : list of dict
        Run records.

    Returns
    -------
    pandas.DataFrame
    """
    names = [run_name(r) for r in records]
    frames = []
    for record, name in zip(records, names):
        frame = headline_frame(record)
        provenance = record.get("provenance", {})
        frame.insert(0, "run", name if names.count(name) == 1 else record.get("path", name))
        frame.insert(1, "commit", provenance.get("commit") or "")
        frame.insert(2, "dirty", provenance.get("dirty"))
        frame.insert(3, "config_digest", provenance.get("config_digest") or "")
        frames.append(frame)
    columns = ["run", "commit", "dirty", "config_digest", *HEADLINE_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames, ignore_index=True)[columns]
    table["dirty"] = table["dirty"].astype("boolean")
    return table


def collected_text(table: pd.DataFrame) -> str:
    """What ``varprobe collect`` prints: per study, dataset, probe and quantity, every run's
    systems (ceilings among them), the smallest mean first, each with its interval.

    Parameters
    ----------
    table : pandas.DataFrame
        A ``collected`` table.

    Returns
    -------
    str
    """
    if table.empty:
        return "no headline numbers in these runs\n"
    lines = []
    for (study, dataset, probe, quantity), part in table.groupby(["study", "dataset", "probe", "quantity"],
                                                                 sort=False):
        lines.append(" / ".join(p for p in (study, dataset, probe, quantity) if p))
        width = max(len(f"{r.run}: {r.model} / {r.decoding}") for r in part.itertuples(index=False))
        for r in part.sort_values("mean", na_position="last").itertuples(index=False):
            system = f"{r.run}: {r.model} / {r.decoding}" if r.decoding else f"{r.run}: {r.model}"
            role = f"  ({r.role})" if r.role != "system" else ""
            lines.append(f"  {system:<{width}}  {_interval(r.mean, r.ci_low, r.ci_high)}{role}")
        lines.append("")
    return "\n".join(lines)
