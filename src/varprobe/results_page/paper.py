"""The papers' published numbers that our tables can be read against.

Ilia & Aziz 2024, Table 1 (ECE: rows the target, columns the system; expected TVD), for GPT-2
small (1,000 samples per context), GPT-2 fine-tuned on Provo (F) and at temperature 0.5 (T), and
the two human columns; and Table 3 (the ARD coefficients of GPT-2's TVD to the oracle). The
paper's oracle row is one random split per context averaged over 20 resplits; its GPT-2 rows are
single sampling runs (no interval is published). Giulianelli et al. 2023 publish their human
control only as curves (Figs. 2-5), so no number is given for it here.
"""

from __future__ import annotations

TABLE_1 = {
    # system: (ECE corpus word, ECE human majority, ECE oracle-1 majority, expected TVD)
    "Human": (0.14, 0.60, 0.19, None),
    "Oracle2": (0.11, 0.57, 0.32, 0.42),
    "GPT2": (0.02, 0.20, 0.19, 0.64),
    "GPT2 fine-tuned": (0.03, 0.22, 0.19, 0.66),
    "GPT2 T=0.5": (0.35, 0.13, 0.15, 0.61),
}
"""Ilia & Aziz 2024, Table 1, the columns comparable with ours."""

TABLE_3 = {
    "human entropy": 0.053, "model entropy": 0.095, "TVD between oracles": 0.117,
    "context length": 0.0, "punctuation": -0.010, "adjective": 0.016, "adposition": -0.026,
    "adverb": 0.0, "conjunction": 0.0, "determiner": 0.0, "noun": 0.0, "numerical": 0.049,
    "pronoun": 0.0, "particle": 0.0, "verb": 0.0,
}
"""Ilia & Aziz 2024, Table 3: posterior coefficients of GPT-2's TVD(model, oracle), by label."""
