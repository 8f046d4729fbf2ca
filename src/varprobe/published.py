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
