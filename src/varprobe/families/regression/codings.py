"""The regression under each coding (Ilia & Aziz 2024, Table 3's disagreement): ours, the paper's
tags, each in z-scores and in original units, ours without human entropy, and the authors' protocol
(one split for target and predictor, ``varprobe.families.regression.authors``), each fitted by
scikit-learn's ARDRegression(); the results page reads the table (``regression_codings``) to
measure what each choice changes in the coefficient of TVD between oracles."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import numpy as np
import pandas as pd

from varprobe.families.regression.analysis import CONTINUOUS, LABELS, TAG_ORDER, TARGET
from varprobe.families.regression.authors import ard_coefficients, split_tvds


@dataclass(frozen=True)
class Coding:
    """One coding of the regression (``REGRESSION_CODINGS``): the reference tag (``frequent``:
    the most frequent tag dropped; ``none``: a column for every tag, as the paper's Table 3 and
    the authors' design, cell 9, have), whether the continuous predictors are z-scored (their
    coefficients per standard deviation) or in their own units (per TVD unit, nat and word),
    the predictors left out, the split the target TVD(M, O1) and the predictor TVD(O2, O1) come
    from, and its role on the page (``ROLES``; empty for none). ``split``: ``None``, the means
    over the run's R resplits (``provo_tvd``); ``(0, k)``, the authors' one split
    (``varprobe.families.regression.authors.one_split``) seeded s for the target and s + k for
    the predictor, s = ``AUTHORS_SEED`` (the value) and s in ``SPREAD_SEEDS`` (its spread): k = 0
    is the authors' protocol, both from one split."""

    reference: str
    _: KW_ONLY
    z_scores: bool
    drop: tuple[str, ...] = ()
    split: tuple[int, int] | None = None
    role: str = ""


ROLES = {
    "authors": "the authors' protocol",
    "authors on resplits": "the authors' coding on our resplit means: it differs from theirs in the split alone, "
                           "so the two coefficients' difference is what one shared split changes",
    "own split": "the authors' protocol with the predictor from a split of its own: one split's noise in target "
                 "and predictor, none shared",
    "without human entropy": "ours without human entropy: what the two correlated predictors share",
}
"""The codings the page's text names, by the ``role`` column it finds them with."""

REGRESSION_CODINGS = {
    "ours: reference = most frequent tag, z-scores": Coding("frequent", z_scores=True),
    "paper's Table 3: a column for every tag, z-scores": Coding("none", z_scores=True),
    "ours, original units": Coding("frequent", z_scores=False),
    "every tag, original units": Coding("none", z_scores=False, role="authors on resplits"),
    "ours, without human entropy": Coding("frequent", z_scores=True, drop=("entropy_human",),
                                          role="without human entropy"),
    "the authors' protocol: one seed-0 split for target and predictor, original units, every tag":
        Coding("none", z_scores=False, split=(0, 0), role="authors"),
    "the authors' protocol, the predictor from another split (seed 1)":
        Coding("none", z_scores=False, split=(0, 1), role="own split"),
}
"""The codings of the regression compared in ``regression_codings``: ours, the paper's tags, each
in z-scores and in original units, ours without human entropy, the authors' protocol and the
same with the predictor from a split of its own (``ROLES``)."""

SPREAD_SEEDS = range(20)
"""The seeds s of a split coding's spread (``Coding``): the authors' own seeds, ``seed = k``
for k < 20, of their oracle-majority ECE (``TVD/Oracle/oracle_processing.ipynb``, cell 17)."""

def split_words(split: tuple[int, int] | None) -> str:
    """The ``split`` column of a coding: which split its target and predictor come from.

    Parameters
    ----------
    split : (int, int) or None
        ``Coding.split``.

    Returns
    -------
    str
    """
    if split is None:
        return "mean of the resplits"
    target, offset = split
    if offset == 0:
        return f"one split (seed {target}) for both"
    return f"target seed {target}, predictor seed {target + offset}"


def regression_codings(tvd: pd.DataFrame, tags: list[str], responses: pd.DataFrame,
                       estimates: dict) -> pd.DataFrame:
    """The coefficient of TVD between oracles and of human entropy under each coding of
    ``REGRESSION_CODINGS``, by scikit-learn's ``ARDRegression()`` with its defaults (type-II
    maximum likelihood: the authors' fit, ``varprobe.families.regression.authors.
    ard_coefficients``; for ours a quick stand-in for the NUTS posterior of the workflow's fit),
    over the contexts with every predictor and a model distribution (schema
    ``regression_codings`` without the system's columns). Per coding: its ``role``, ``units``
    (``per SD`` for z-scores, else ``per unit``: per TVD unit, nat, word and tag), ``split``
    (``split_words``), for a split coding the coefficient's range and mean over ``SPREAD_SEEDS``
    (NaN otherwise), ``sd_tvd_oracle2_oracle1`` (the predictor's standard deviation, ddof 0: a
    per-unit coefficient times it is per SD), the predictor with the largest coefficient in
    absolute value (``largest``, its label, empty where ARD prunes every one to 0, with its
    value), the contexts and the correlation of
    TVD between oracles with human entropy.

    Parameters
    ----------
    tvd : pandas.DataFrame
        A ``provo_tvd`` table.
    tags : list of str
        The part-of-speech tag of each of its contexts, in order.
    responses : pandas.DataFrame
        Its ``provo_responses`` table, which the split codings split.
    estimates : dict of (int, int) to ModelEstimate
        The system's distribution per context (``varprobe.commands.read_estimates``).

    Returns
    -------
    pandas.DataFrame
        One row per coding.
    """
    frame = tvd.assign(_tag=tags)
    modelled = np.array([estimates.get((t, w)) is not None and estimates[(t, w)].distribution is not None
                         for t, w in zip(frame["text_id"], frame["word_number"], strict=True)], dtype=bool)
    frame = frame[frame[[TARGET, *CONTINUOUS]].notna().all(axis=1) & modelled].reset_index(drop=True)
    counts = frame["_tag"].value_counts()
    frequent = max(counts.index, key=lambda t: (counts[t], -TAG_ORDER.index(t)))
    offsets = {c.split[1] for c in REGRESSION_CODINGS.values() if c.split is not None}
    seeds = sorted({s + k for s in SPREAD_SEEDS for k in offsets})
    splits = split_tvds(responses, estimates, seeds).set_index(["seed", "text_id", "word_number"])
    keys = list(zip(frame["text_id"], frame["word_number"], strict=True))

    def fitted(coding: Coding, seed: int) -> tuple[dict, pd.DataFrame]:
        data = frame[[TARGET, *CONTINUOUS]].astype(float)
        if coding.split is not None:
            target, predictor = seed, seed + coding.split[1]
            data[TARGET] = splits.loc[[(target, *k) for k in keys], TARGET].to_numpy()
            data["tvd_oracle2_oracle1"] = splits.loc[[(predictor, *k) for k in keys],
                                                     "tvd_oracle2_oracle1"].to_numpy()
        x = data[[c for c in CONTINUOUS if c not in coding.drop]]
        if coding.z_scores:
            x = (x - x.mean()) / x.std(ddof=0)
        dummies = pd.get_dummies(frame["_tag"], dtype=float)
        if coding.reference == "frequent":
            dummies = dummies.drop(columns=frequent)
        return ard_coefficients(pd.concat([x, dummies], axis=1), data[TARGET].to_numpy()), data

    rows = []
    for name, coding in REGRESSION_CODINGS.items():
        coef, data = fitted(coding, coding.split[0] if coding.split else 0)
        spread = ([fitted(coding, s)[0]["tvd_oracle2_oracle1"] for s in SPREAD_SEEDS]
                  if coding.split is not None else [np.nan])
        largest = max(coef, key=lambda c: abs(coef[c]))
        rows.append({"coding": name, "role": coding.role,
                     "reference": frequent if coding.reference == "frequent" else "none",
                     "units": "per SD" if coding.z_scores else "per unit", "split": split_words(coding.split),
                     "tvd_oracle2_oracle1": coef["tvd_oracle2_oracle1"],
                     "seed_min": float(np.min(spread)), "seed_mean": float(np.mean(spread)),
                     "seed_max": float(np.max(spread)),
                     "entropy_human": coef.get("entropy_human", np.nan),
                     "largest": LABELS[largest] if coef[largest] else "",
                     "largest_coefficient": coef[largest],
                     "sd_tvd_oracle2_oracle1": float(data["tvd_oracle2_oracle1"].std(ddof=0)),
                     "n_contexts": len(frame),
                     "correlation": float(np.corrcoef(data["tvd_oracle2_oracle1"], data["entropy_human"])[0, 1])})
    return pd.DataFrame(rows)
