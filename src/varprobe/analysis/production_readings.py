"""Giulianelli et al. 2023 read per task as the paper reads it, from a run's production tables:
the sign of mean M - H on the paper's main probes (Sec. 6.1, Fig. 3), W1(M, H) where the paper
uses it (translation and simplification, Sec. 7, footnotes 12-13), and the miscalibrated inputs
of every task under the paper's own statistic and selection rule (Sec. 7, footnotes 12-15).

The paper's main probes are unigram distance, POS-bigram distance and cosine distance between
sentence embeddings: ours ``lexical-1``, ``syntactic-2`` and ``semantic`` (``GIULIANELLI_PROBES``).
An input is selected under a task's rule (``PAPER_SELECTION``) when its per-input statistic
exceeds the rule's threshold on *every* probe of the rule; a probe the run could not compute for
the task's output language is left out of the rule and named in ``missing_probes``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from varprobe.published import GIULIANELLI_PROBES, GIULIANELLI_SELECTIONS


@dataclass(frozen=True)
class Selection:
    """A task's selection rule of Sec. 7: the per-input ``statistic`` (a column of a
    ``production_divergences`` table) above ``thresholds[probe]`` on every probe, and the
    paper's ``footnote`` that states it."""

    statistic: str
    thresholds: dict[str, float]
    footnote: str

    def text(self) -> str:
        """The rule in words, e.g. ``W1(M, H) > 0.2 on syntactic-2``.

        Returns
        -------
        str
        """
        name = STATISTIC_NAMES[self.statistic]
        return " and ".join(f"{name} > {t} on {p}" for p, t in self.thresholds.items())


STATISTIC_NAMES = {"w1_M_H": "W1(M, H)", "w1_C_H": "W1(C, H)"}
"""The per-input statistics of the paper's rules, as the page names them."""

PAPER_SELECTION = {task: Selection(*rule) for task, rule in GIULIANELLI_SELECTIONS.items()}
"""Each task's selection rule of Sec. 7 (``varprobe.published.GIULIANELLI_SELECTIONS``)."""

SIGN_COLUMNS = ["dataset", "model", "decoding", "probe", "n_inputs", "mean", "ci_low", "ci_high", "sign"]
W1_COLUMNS = ["dataset", "model", "decoding", "probe", "n_inputs", "mean", "ci_low", "ci_high",
              "threshold", "n_above", "footnote"]
MISCALIBRATED_COLUMNS = ["dataset", "model", "decoding", "statistic", "rule", "footnote", "missing_probes",
                         "n_inputs", "n_selected", "top_input", "top_excess"]


def sign(value: float) -> str:
    """``+``, ``-`` or ``0`` for a mean difference; ``–`` for none (NaN).

    Parameters
    ----------
    value : float
        A mean difference.

    Returns
    -------
    str
    """
    return "–" if pd.isna(value) else "+" if value > 0 else "-" if value < 0 else "0"


def mean_difference_signs(summary: pd.DataFrame, decoding: str) -> pd.DataFrame:
    """Per task, model and main probe the run computed (``GIULIANELLI_PROBES``, available): the mean over
    inputs of mu_M(x) - mu_H(x) of ``decoding``'s outputs with its interval (a
    ``production_summary`` table's ``mean_M_minus_H``) and its sign (columns ``SIGN_COLUMNS``).

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``production_summary`` table.
    decoding : str
        The decoding read.

    Returns
    -------
    pandas.DataFrame
    """
    part = summary[summary["available"] & (summary["statistic"] == "mean_M_minus_H")
                   & (summary["decoding"] == decoding)].set_index(["dataset", "model", "probe"])
    keys = [(d, m, p) for d, m in dict.fromkeys(zip(part.index.get_level_values(0), part.index.get_level_values(1),
                                                    strict=True))
            for p in GIULIANELLI_PROBES if (d, m, p) in part.index]
    rows = [{"dataset": d, "model": m, "decoding": decoding, "probe": p, **part.loc[(d, m, p)].to_dict()}
            for d, m, p in keys]
    frame = pd.DataFrame(rows, columns=[c for c in SIGN_COLUMNS if c != "sign"])
    return frame.assign(sign=frame["mean"].map(sign))[SIGN_COLUMNS]


def model_human_w1(summary: pd.DataFrame, systems: list[tuple[str, str, str, pd.DataFrame]]) -> pd.DataFrame:
    """Per task whose paper rule reads W1(M, H) (translation, simplification), model, decoding and
    probe of the rule the run computed: the mean W1(M, H) over inputs with its interval (the
    summary's ``w1_M_H``), the rule's threshold and the inputs above it (``systems``: (dataset,
    model, decoding, divergences) each; columns ``W1_COLUMNS``).

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``production_summary`` table.
    systems : list of (str, str, str, pandas.DataFrame)
        (dataset, model, decoding, ``production_divergences`` table) per system.

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for dataset, model, decoding, divergences in systems:
        rule = PAPER_SELECTION.get(dataset)
        if rule is None or rule.statistic != "w1_M_H":
            continue
        mine = summary[(summary["dataset"] == dataset) & (summary["model"] == model)
                       & (summary["decoding"] == decoding) & (summary["statistic"] == "w1_M_H")
                       & summary["available"]].set_index("probe")
        for probe, threshold in rule.thresholds.items():
            if probe not in mine.index:
                continue
            values = divergences.loc[divergences["probe"] == probe, "w1_M_H"].dropna()
            r = mine.loc[probe]
            rows.append({"dataset": dataset, "model": model, "decoding": decoding, "probe": probe,
                         "n_inputs": len(values), "mean": r["mean"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                         "threshold": threshold, "n_above": int((values > threshold).sum()),
                         "footnote": rule.footnote})
    return pd.DataFrame(rows, columns=W1_COLUMNS)


def selected(divergences: pd.DataFrame, rule: Selection, probes: list[str]) -> pd.DataFrame:
    """The inputs of one system (its ``production_divergences``) that ``rule`` selects on
    ``probes`` (the rule's probes the run computed): those defined on every one of them and above
    its threshold on all, with ``excess``, the mean amount over the thresholds, largest first;
    ``defined`` counts the inputs the rule could read (attribute ``n_defined``).

    Parameters
    ----------
    divergences : pandas.DataFrame
        A ``production_divergences`` table.
    rule : Selection
        The paper's rule.
    probes : list of str
        The rule's probes the run computed.

    Returns
    -------
    pandas.DataFrame
        With attribute ``n_defined``.
    """
    wide = divergences.pivot(index="input_id", columns="probe", values=rule.statistic)
    wide = wide.reindex(columns=probes).dropna()
    limits = pd.Series({p: rule.thresholds[p] for p in probes}, dtype=float)
    flagged = wide[(wide > limits).all(axis=1)]
    flagged = flagged.assign(excess=(flagged - limits).mean(axis=1)).sort_values("excess", ascending=False)
    flagged.attrs["n_defined"] = len(wide)
    return flagged


def paper_miscalibrated(systems: list[tuple[str, str, str, pd.DataFrame]],
                        unavailable: dict[str, list[str]]) -> pd.DataFrame:
    """Per system of a task the paper has a rule for (``PAPER_SELECTION``): the rule's statistic
    and text, the inputs it could read and the inputs it selects, and the most miscalibrated one
    with its excess (columns ``MISCALIBRATED_COLUMNS``). ``unavailable``: the probes each task's
    run could not compute (left out of the rule, named in ``missing_probes``).

    Parameters
    ----------
    systems : list of (str, str, str, pandas.DataFrame)
        (dataset, model, decoding, ``production_divergences`` table) per system.
    unavailable : dict of str to list of str
        The probes each task's run could not compute.

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for dataset, model, decoding, divergences in systems:
        rule = PAPER_SELECTION.get(dataset)
        if rule is None:
            continue
        missing = [p for p in rule.thresholds if p in unavailable.get(dataset, [])]
        probes = [p for p in rule.thresholds if p not in missing]
        found = selected(divergences, rule, probes) if probes else pd.DataFrame(columns=["excess"])
        top = found.iloc[0] if len(found) else None
        rows.append({"dataset": dataset, "model": model, "decoding": decoding,
                     "statistic": STATISTIC_NAMES[rule.statistic], "rule": rule.text(), "footnote": rule.footnote,
                     "missing_probes": ", ".join(missing), "n_inputs": found.attrs.get("n_defined", 0),
                     "n_selected": len(found), "top_input": "" if top is None else str(top.name),
                     "top_excess": float("nan") if top is None else float(top["excess"])})
    return pd.DataFrame(rows, columns=MISCALIBRATED_COLUMNS)
