"""Published numbers that more than one layer reads: the science draws them beside its own
(a figure's overlay) and the results page sets them beside ours. A leaf module: it imports
nothing, so the page can read it without loading any computation."""

PAPER_COEFFICIENTS = {
    "entropy_human": 0.053, "entropy_model": 0.095, "tvd_oracle2_oracle1": 0.117,
    "context_length": 0.0, ".": -0.010, "ADJ": 0.016, "ADP": -0.026, "ADV": 0.0, "CONJ": 0.0,
    "DET": 0.0, "NOUN": 0.0, "NUM": 0.049, "PRON": 0.0, "PRT": 0.0, "VERB": 0.0,
}
"""Ilia & Aziz 2024, Table 3 (App. B): the ARD coefficients of GPT-2's TVD to the oracle, keyed
by the regression's predictor ids (a continuous column or a universal tag), not by label, so a
relabelled row cannot lose its paper value. The paper gives a coefficient to every tag it names
(Noun and Verb 0) and states no reference level. The figure draws them beside each system's."""


GIULIANELLI_SELECTIONS = {
    "wmt14": ("w1_M_H", {"lexical-1": 0.3, "syntactic-2": 0.2, "semantic": 0.2}, "12"),
    "asset": ("w1_M_H", {"syntactic-2": 0.2}, "13"),
    "dailydialog": ("w1_C_H", {"lexical-1": 0.2, "syntactic-2": 0.2, "semantic": 0.2}, "14"),
    "writingprompts": ("w1_C_H", {"semantic": 0.3}, "15"),
}
"""Giulianelli et al. 2023, Sec. 7, per task (by the dataset names of ``varprobe.data``): the
per-input statistic, its threshold on each probe (by our probe names: lexical-1 the unigram,
syntactic-2 the POS-bigram, semantic the cosine distance) above which an input is selected on
every probe, and the footnote that states it. Translation: W1(M, H) above 0.3 for unigram, 0.2 for
POS bigram and semantic (fn. 12); simplification: W1(M, H) above 0.2 on POS bigrams (fn. 13);
dialogue: W1(C, H) above 0.2 on all three (fn. 14); stories: W1(C, H) above 0.3 on the semantic
probe (fn. 15). ``varprobe.analysis.production_readings`` applies them; the page prints them."""

GIULIANELLI_PROBES = ("lexical-1", "syntactic-2", "semantic")
"""Giulianelli et al. 2023's three main probes, by our names (unigram, POS-bigram and semantic
distance, Sec. 6.1, Figs. 3 and 5): the probes whose levels and signs the paper states."""
