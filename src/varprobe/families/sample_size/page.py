"""The sample size's section of the results page (``varprobe.results_page.sections``): the MSE
of subsample TVDs per size, with the run's intervals."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from varprobe import tables
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import with_interval

SECTION = Section("Sample size",
                  paper="Ilia & Aziz 2024, App. C.1, Fig. 11",
                  entries=("sample_size_summary",),
                  figures=("sample_size",), position=50)

FIGURES = {"sample_size": "Ilia & Aziz 2024, Fig. 11"}

def sample_size(summary: pd.DataFrame, intervals: dict | None = None) -> pd.DataFrame:
    """App. C.1 (Fig. 11): per system and subsample size, the MSE of the subsample TVDs against
    the full sample's with its bootstrap interval over contexts where the page computed one
    (``intervals``: (model, decoding, size) -> (low, high)), the contexts with a subsample TVD
    beside those the system has a word in (Table 1's count), and why the others have none
    (``sample_size_left_out``)."""
    intervals = intervals or {}
    rows = [{
        "model": r.model, "decoding": r.decoding, "size": str(r.size),
        "contexts": str(r.n_contexts_estimated),
        "with a word (Table 1)": str(r.n_contexts - r.n_contexts_all_failed),
        "MSE [95% CI]": with_interval(r.mse, *intervals.get((r.model, r.decoding, r.size), (math.nan, math.nan))),
        "note": sample_size_left_out(r),
    } for r in summary.itertuples(index=False)]
    return pd.DataFrame(rows, columns=["model", "decoding", "size", "contexts", "with a word (Table 1)",
                                       "MSE [95% CI]", "note"])


def sample_size_left_out(row) -> str:
    """Why the contexts of a ``sample_size_summary`` row without a subsample TVD have none, each
    reason with its count; ValueError, naming the system and size, when the counts of
    ``varprobe.families.sample_size.analysis.context_counts`` do not add up to its contexts."""
    parts = {"cannot subsample (size >= N draws)": row.n_contexts_too_large,
             "every draw of the subsample failed (Table 1 keeps it: the full sample has a word)":
                 row.n_contexts_subsample_failed,
             "every draw failed (Table 1 leaves it out too)": row.n_contexts_all_failed}
    if row.n_contexts_estimated + sum(parts.values()) != row.n_contexts:
        raise ValueError(
            f"sample size of {row.model} / {row.decoding}, size {row.size}: {row.n_contexts} contexts, but "
            f"{row.n_contexts_estimated} with a subsample TVD and {', '.join(f'{n} {k}' for k, n in parts.items())} "
            "do not add up to them")
    if row.n_contexts_too_large == row.n_contexts:
        return row.note
    return "; ".join(f"{n} context{'s' if n > 1 else ''}: {k}" for k, n in parts.items() if n)


def sample_size_view(frames: list[pd.DataFrame], measured: Mapping) -> list[pd.DataFrame]:
    """Each ``sample_size_summary`` frame as ``sample_size``, with the MSE intervals of the run's
    ``sample_size_intervals`` table (none without it)."""
    path = measured.get("sample_size_intervals")
    found = tables.read(path, "sample_size_intervals") if path else None
    intervals = {} if found is None else {
        (r.model, r.decoding, r.size): (r.ci_low, r.ci_high) for r in found.itertuples(index=False)}
    return [sample_size(f, intervals) for f in frames]


VIEWS = {"sample_size_summary": sample_size_view}


NOTE = (
    "Each row is the mean squared difference between a subsample's TVD and the full sample's, over\n"
    "contexts: the spread of small samples around the run's draws, not the bias of the run's draws\n"
    "against the model's exact distribution. Sizes at or above the run's draw count cannot be\n"
    'subsampled (the note says so); the paper subsampled 1,000 GPT-2 draws. "contexts" counts those\n'
    'with a subsample TVD at that size, "with a word (Table 1)" those where the system\'s full sample has\n'
    "a word, Table 1's count. They differ where every draw of a context's subsample failed: a\n"
    'context whose draws are mostly failures can give a subsample without a word at a small size and a\n'
    'word at a larger one, so the count can change from one size to the next; the note counts them.\n'
)
"""What the page says under the table (Markdown the page writes)."""

NOTES = {'sample_size_summary': lambda config: NOTE}
