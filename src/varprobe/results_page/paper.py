"""The papers' published numbers that the page reads our tables against, each as printed.

Ilia & Aziz 2024 (papers 001/003): Table 1 (ECE with three gold labels and the expected TVD per
system, the oracle ECEs averaged over 20 resplits; the rows are single sampling runs, GPT-2's
and fine-tuned GPT-2's with 1,000 draws per context, GPT-2 at T = 0.5 and the others with 40
(Sec. 4), and no interval is published), Table 2 (ECE of the biased
model estimate and of the two oracles, App. A), Table 3 (ARD coefficients of GPT-2's TVD to the
oracle, App. B), Table 4 (token-level ECE, App. D), the failure rates of App. C.3 and the share of
contexts replaced in Sec. 5. Liu et al. 2024 (paper 002), Table 1: the relative standard deviation
of cw-ECE and Full-ECE over the bin counts M in {5, 10, 20, 50, 100, 200, 500}. Giulianelli et al.
2023 (paper 004) give no table of numbers for their Figs. 3-5; their text states levels and signs
(``GIULIANELLI_LEVELS``, ``GIULIANELLI_MEAN_DIFFERENCE_SIGN``).

Numbers that are in the authors' repository but not in the paper are kept apart
(``AUTHORS_DATA``), with where they come from.
"""

from __future__ import annotations

from varprobe.published import GIULIANELLI_PROBES as PROBES
from varprobe.published import PAPER_COEFFICIENTS

TABLE_1_COLUMNS = ("ece_corpus", "ece_human_majority", "ece_oracle_majority", "avg_tvd")
"""Ilia & Aziz 2024, Table 1's rows, as the columns of ``TABLE_1``: ECE against the corpus word
("Original"), the human majority and the oracle-1 majority, and "Avg TVD"."""

TABLE_1 = {
    "Human": (0.14, 0.60, 0.19, None),
    "Oracle2": (0.11, 0.57, 0.32, 0.42),
    "GPT2": (0.02, 0.20, 0.19, 0.64),
    "GPT2 fine-tuned": (0.03, 0.22, 0.19, 0.66),
    "GPT2 T=0.5": (0.35, 0.13, 0.15, 0.61),
    "Bloom": (0.07, 0.09, 0.07, 0.61),
    "ChatGPT": (0.45, 0.37, 0.37, 0.76),
    "ChatGPT list": (0.10, 0.08, 0.08, 0.82),
}
"""Ilia & Aziz 2024, Table 1, one entry per column of the paper (a system). "Avg TVD" is the
model's TVD to all humans for a model, and the TVD between the two disjoint oracles for Oracle2;
the Human column has none."""

TABLE_2 = {
    "corpus word": {"biased": 0.068, "oracle 1": 0.116, "oracle 2": 0.185},
    "human majority": {"biased": 0.138, "oracle 1": 0.563, "oracle 2": 0.458},
}
"""Ilia & Aziz 2024, Table 2 (App. A): ECE of GPT-2's biased model estimate and of the oracles,
by gold label."""

TABLE_3 = PAPER_COEFFICIENTS
"""Ilia & Aziz 2024, Table 3 (App. B), kept with the regression that the figure draws it beside
(``varprobe.published.PAPER_COEFFICIENTS``)."""

TABLE_3_LABELS = {
    "entropy_human": "Human Entropy", "entropy_model": "Model Entropy",
    "tvd_oracle2_oracle1": "TVD between Oracles", "context_length": "Context Length",
    ".": "Punctuation", "ADJ": "Adjective", "ADP": "Adposition", "ADV": "Adverb",
    "CONJ": "Conjunction", "DET": "Determiner", "NOUN": "Noun", "NUM": "Numerical",
    "PRON": "Pronoun", "PRT": "Particle", "VERB": "Verb",
}
"""The paper's own label of each Table 3 row."""

TABLE_4 = {"human majority": {"model": 0.141, "oracle 1": 0.500, "oracle 2": 0.396}}
"""Ilia & Aziz 2024, Table 4 (App. D): token-level ECE against the human-majority first token."""

FAILURE_RATES = {"GPT-2": ("0.05%", "1,489 of 2.7 million"), "Bloom": ("0.2%", ""), "ChatGPT": ("0.04%", "")}
"""Ilia & Aziz 2024, App. C.3: the share of failed draws per model and the failed draws of all,
as the paper prints them (for Bloom and ChatGPT it prints the share alone). Their sampler drew 5
tokens per draw (``GPT2_sampling.py``: ``max_new_tokens=5``)."""

REPLACEMENT_SHARE = 0.60
"""Ilia & Aziz 2024, Sec. 5: "we need to replace about 60% of GPT2's cpds to achieve TVDs that
distribute similarly to human performance"."""

REPLACEMENT_READING = (0.8, 20)
"""The overlap threshold and histogram bins at which the k%-oracle criterion reads the paper's
histograms as the paper does: normal densities with the moments of the authors' notebook (GPT-2's
TVDs 0.633 +- 0.221 at k = 0, the oracles' 0.399 +- 0.181) match at its 60%
(``varprobe.families.oracle_replacement.analysis``); the schema's defaults."""

AUTHORS_LEFT_OUT_POSITION = (55, 62)
"""The Provo position (text_id, word_number) the authors' code leaves out of the norms' 2,687:
the corpus's last, "writing." (``range(len(human_samples) - 1)``, ``TVD/Oracle/
oracle_processing.ipynb`` cells 12 and 17 of github.com/evgeniael/predict_next_word), so its
2,686 contexts keep (18, 3), which ours leave out."""

SAMPLE_SIZES = (10, 20, 40, 100)
"""Ilia & Aziz 2024, App. C.1: the subsample sizes of GPT-2's 1,000 draws per context (Fig. 11)."""

LIU_TABLE_1 = {"classwise_ece": {"2B": 0.4093, "7B": 0.4490}, "full_ece": {"2B": 0.0756, "7B": 0.0836}}
"""Liu et al. 2024, Table 1: RSD over M in {5, 10, 20, 50, 100, 200, 500} of cw-ECE and Full-ECE
for a 2B and a 7B GPT model (the paper gives no RSD of ECE)."""

LIU_BINS = (5, 10, 20, 50, 100, 200, 500)
"""The bin counts M of Liu et al.'s Table 1."""

GIULIANELLI_LEVELS = {"w1_decoding": 0.1}
"""Giulianelli et al. 2023, Sec. 6.2: the mean W1(C, H) of most decoding settings, unbiased
sampling among them, is "always lower than 0.1" (Fig. 5). Sec. 7's per-task thresholds of a
miscalibrated input are ``varprobe.published.GIULIANELLI_SELECTIONS``."""

GIULIANELLI_MEAN_DIFFERENCE_SIGN = {
    "wmt14": ("-", "OpusMT", "far below 0: substantially underestimates variability"),
    "asset": ("-", "Flan-T5", "somewhat below 0: underestimates variability"),
    "dailydialog": ("+", "DialoGPT", "moderately overestimates the open-endedness"),
    "writingprompts": ("+", "GPT-2", "moderately overestimates the open-endedness"),
}
"""Giulianelli et al. 2023, Sec. 6.1 (Fig. 3): the sign of mu_M(x) - mu_H(x) per task and the
paper's model for it."""

GIULIANELLI_PROBES = PROBES
"""Giulianelli et al. 2023's three main probes (``varprobe.published.GIULIANELLI_PROBES``)."""

GIULIANELLI_NO_CONTROL = ("dailydialog",)
"""Giulianelli et al. 2023, fn. 11: the tasks with no human control ("the five references
contained in DailyDialog++ are too few to create a control group")."""

GIULIANELLI_ANCESTRAL_BEST = ("wmt14", "asset", "writingprompts")
"""Giulianelli et al. 2023, Sec. 6.2 (Fig. 5): "for all tasks except open-domain dialogue,
unbiased samples best match human variability", and most decoding settings are close to unbiased
sampling: the tasks where ancestral sampling has the lowest mean W1(C, H)."""

AUTHORS_DATA = {
    "human_entropy": (2.004, "mean entropy of the human next-word distributions, nats"),
}
"""Numbers of the authors' repository (github.com/evgeniael/predict_next_word), not printed in
the paper."""
