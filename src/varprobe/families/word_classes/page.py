"""The word classes' section of the results page (``varprobe.results_page.sections``): the
syntactic and semantic TVDs beside the oracle control's."""

from __future__ import annotations

import pandas as pd

from varprobe.results_page.markup import code
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import MARKUP, with_interval

SECTION = Section("Beyond exact words: syntactic and semantic TVD",
                  paper="Ilia & Aziz 2024, Sec. 5, Fig. 4",
                  entries=("syntactic_tvd_summary", "semantic_tvd_summary"),
                  figures=("syntactic_tvd", "semantic_tvd"), position=20)

FIGURES = {"syntactic_tvd": "Ilia & Aziz 2024, Fig. 4 (left)", "semantic_tvd": "Ilia & Aziz 2024, Fig. 4 (right)"}

GLOSSARY = {
    "TVD_syn, TVD_sem": "TVD between two next-word distributions mapped onto word classes: the "
    "universal POS tag of the word in its context (syntactic), or its cluster among the context's "
    "human and model words together by k-means on word embeddings (semantic: the clusters, and so "
    "the oracles' TVD_sem, depend on the system's words); the expected TVDs of those tables are over "
    "classes (Ilia & Aziz 2024, Sec. 5, App. G).",
}
"""The section's quantities (``varprobe.results_page.tables.glossary``)."""

def word_class_tvd(summary: pd.DataFrame) -> pd.DataFrame:
    """Ilia & Aziz 2024, Sec. 5 (Fig. 4): per system, the expected syntactic or semantic TVD to H
    and to O1 over the contexts with a model word, beside the oracle control's TVD(O2, O1) on the
    same contexts and classes (schema ``word_class_system``), under the names of Table 1."""
    rows = [{"system": f"{r.model} / {r.decoding}",
             "E TVD(·, H) [95% CI]": with_interval(r.expected_tvd, r.ci_low, r.ci_high),
             "E TVD(·, O1)": r.expected_tvd_oracle1,
             "oracle control E TVD(O2, O1) [95% CI]": with_interval(
                 r.expected_tvd_oracles, r.oracle_ci_low, r.oracle_ci_high),
             "mean classes": r.mean_classes, "contexts": str(r.n_contexts),
             code("n_contexts_not_sampled"): str(r.n_contexts_not_sampled),
             code("n_contexts_all_failed"): str(r.n_contexts_all_failed)}
            for r in summary.itertuples(index=False)]
    table = pd.DataFrame(rows)
    table.attrs[MARKUP] = [code("n_contexts_not_sampled"), code("n_contexts_all_failed")]  # counts, named as code
    return table


VIEWS = {prefix: lambda frames, measured: [word_class_tvd(f) for f in frames]
         for prefix in ("syntactic_tvd_summary", "semantic_tvd_summary")}


LEVELS_NOTE = (
    "The columns are Table 1's, over word classes instead of words (POS tags, or k-means clusters of\n"
    'word embeddings) and over the contexts where the system has a word. The paper shows both levels as\n'
    'histograms only (Fig. 4, below as ours) and prints no number.\n'
)
"""What the page says under either level's table (Markdown the page writes)."""

SEMANTIC_NOTE = (
    "The semantic oracle control is the system's own, not one yardstick for all: as App. G defines it\n"
    "(and the authors' `TVD_semantic/GPT2/semantic_TVD.py` computes it), a context's clusters are\n"
    "those of the human and the system's words together, and the oracles are compared on them. More\n"
    'distinct model words give more clusters (the grid of k grows with the words), a finer partition\n'
    'and a larger TVD(O2, O1), so semantic TVDs compare systems with about as many words per context,\n'
    "not across draw counts: the table's oracle rows differ by system for this reason (a\n"
    'measurement over draw counts of one system: `docs/methods.md`, semantic TVD).\n'
)
"""What it adds under the semantic level's."""

NOTES = {"syntactic_tvd_summary": lambda config: LEVELS_NOTE + "\n",
         "semantic_tvd_summary": lambda config: LEVELS_NOTE + "\n" + SEMANTIC_NOTE + "\n"}
