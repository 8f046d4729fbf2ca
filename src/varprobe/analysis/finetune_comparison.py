"""A fine-tuned model against the pretrained model it came from, on the held-out Provo contexts
(Ilia & Aziz 2024, App. F, Fig. 17).

Each context's TVD to the humans, TVD(p_model, p_human) (paper eq. 2), is paired between the two
models; only contexts where both have words are compared, so the fine-tuned model's held-out
contexts decide the sample.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from varprobe.metrics.bootstrap import bootstrap_mean_ci

KEYS = ["text_id", "word_number"]


def paired_tvds(finetuned: pd.DataFrame, pretrained: pd.DataFrame, decoding: str) -> pd.DataFrame:
    """Per context both ``provo_tvd`` tables give a TVD for: ``tvd_pretrained``,
    ``tvd_finetuned``, the oracle control ``tvd_oracle2_oracle1``, and ``decoding``.

    Parameters
    ----------
    finetuned : pandas.DataFrame
        The fine-tuned model's ``provo_tvd`` table.
    pretrained : pandas.DataFrame
        The pretrained model's.
    decoding : str
        The decoding both were drawn with.

    Returns
    -------
    pandas.DataFrame
        One row per paired context.
    """
    left = finetuned.loc[finetuned["tvd"].notna(), [*KEYS, "tvd"]]
    right = pretrained.loc[pretrained["tvd"].notna(), [*KEYS, "tvd", "tvd_oracle2_oracle1"]]
    paired = right.merge(left, on=KEYS, suffixes=("_pretrained", "_finetuned"))
    paired.insert(0, "decoding", decoding)
    return paired.sort_values(KEYS, ignore_index=True)


def comparison_summary(paired: pd.DataFrame, rng: np.random.Generator, resamples: int) -> dict:
    """Mean TVDs of both models over the paired contexts, the mean paired difference
    d_c = TVD_finetuned(c) - TVD_pretrained(c) with its percentile-bootstrap 95% interval, and
    the shares of contexts with d_c < 0 (fine-tuned strictly closer to the humans) and d_c > 0
    (strictly farther; the rest are ties). No pairs: ValueError.

    Parameters
    ----------
    paired : pandas.DataFrame
        ``paired_tvds``'s table.
    rng : numpy.random.Generator
        The bootstrap's generator.
    resamples : int
        Bootstrap resamples.

    Returns
    -------
    dict
        ``n_contexts``, the three expected TVDs, ``mean_difference`` with its interval and the
        two shares.

    Raises
    ------
    ValueError
        When there are no pairs.
    """
    if paired.empty:
        raise ValueError("no context has words from both the fine-tuned and the pretrained model")
    difference = (paired["tvd_finetuned"] - paired["tvd_pretrained"]).to_numpy()
    mean, low, high = bootstrap_mean_ci(difference, rng, resamples)
    return {
        "n_contexts": len(paired),
        "expected_tvd_pretrained": float(paired["tvd_pretrained"].mean()),
        "expected_tvd_finetuned": float(paired["tvd_finetuned"].mean()),
        "expected_tvd_oracle": float(paired["tvd_oracle2_oracle1"].mean()),
        "mean_difference": mean,
        "difference_ci_low": low,
        "difference_ci_high": high,
        "share_finetuned_closer": float(np.mean(difference < 0)),
        "share_finetuned_farther": float(np.mean(difference > 0)),
    }
