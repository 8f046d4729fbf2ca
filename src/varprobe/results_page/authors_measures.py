"""What ``varprobe.analysis`` measures of the authors' protocols on fixed inputs, which no run's
table holds and the page cites: each number is what a function gives on the Provo norms of the
data mirror with GPT-2's tokenizer, to 3 decimals, and a test recomputes every one of them
(``tests/test_authors_token_level.py``). A leaf module: the page reads it without loading the
computation."""

from __future__ import annotations

from dataclasses import dataclass

ORACLES = ("oracle 1", "oracle 2")
"""The value columns of ``TokenOracles.switches``, as ``token_level_summary`` names the rows."""


@dataclass(frozen=True, kw_only=True)
class TokenOracles:
    """Table 4's oracle ECEs (``varprobe.families.token_level.authors``) with ``settings``.

    ``switches``: the rows (protocol, switch, oracle 1, oracle 2) of ``switch_table`` on the norms
    in the authors' response order; ``mirror``: the authors' protocol on the norms in the mirror's
    order; ``splits``: one split's ECE over the resplits, (lowest, mean, highest) per oracle, of
    ``"authors"`` (the authors' protocol without ``single_split``: seeds 0 to R - 1, each shared by
    every context) and of ``"ours"``; ``accuracy`` and ``confidence``: per oracle the mean hit and
    the mean confidence over the contexts of the authors' one split, whose ECE is their difference
    (every bin's accuracy is above its confidence)."""

    settings: dict[str, int]
    switches: tuple[tuple[str, str, float, float], ...]
    mirror: tuple[float, float]
    splits: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]]
    accuracy: tuple[float, float]
    confidence: tuple[float, float]


TABLE4_ORACLES = TokenOracles(
    settings={"seed": 0, "resplits": 20, "ece_bins": 10},
    switches=(
        ("ours", "", 0.407, 0.412),
        ("ours + switch", "raw_responses", 0.407, 0.413),
        ("ours + switch", "authors_contexts", 0.407, 0.412),
        ("ours + switch", "word_majority", 0.401, 0.406),
        ("ours + switch", "first_max_ties", 0.401, 0.407),
        ("ours + switch", "authors_split", 0.412, 0.407),
        ("ours + switch", "shared_seed", 0.394, 0.400),
        ("ours + switch", "single_split", 0.414, 0.408),
        ("ours + switch", "authors_bins", 0.407, 0.412),
        ("authors", "", 0.500, 0.396),
        ("authors - switch", "raw_responses", 0.424, 0.440),
        ("authors - switch", "authors_contexts", 0.501, 0.396),
        ("authors - switch", "word_majority", 0.500, 0.396),
        ("authors - switch", "first_max_ties", 0.500, 0.398),
        ("authors - switch", "authors_split", 0.386, 0.401),
        ("authors - switch", "shared_seed", 0.399, 0.398),
        ("authors - switch", "single_split", 0.388, 0.436),
        ("authors - switch", "authors_bins", 0.500, 0.396),
    ),
    mirror=(0.506, 0.393),
    splits={"authors": ((0.174, 0.388, 0.527), (0.184, 0.436, 0.601)),
            "ours": ((0.398, 0.407, 0.422), (0.402, 0.412, 0.424))},
    accuracy=(0.896, 0.825),
    confidence=(0.396, 0.429),
)
"""The config schema's defaults (seed 0, 20 resplits, 10 bins) on the Provo norms: the oracle rows
of Ilia & Aziz's Table 4 under ours, theirs and each of their definitions alone."""

TOKEN_SWITCH_CODE = {
    "raw_responses": "`GPT2_sampling_BPE.py` lines 20, 29-33, 89",
    "authors_contexts": "`GPT2_processing_BPE.py` line 263",
    "word_majority": "`GPT2_processing_BPE.py` line 154",
    "first_max_ties": "`GPT2_processing_BPE.py` line 154",
    "authors_split": "`GPT2_processing_BPE.py` lines 96-124, 273",
    "shared_seed": "`GPT2_processing_BPE.py` lines 103, 272",
    "single_split": "`GPT2_processing_BPE.py` lines 272-273",
    "authors_bins": "`GPT2_processing_BPE.py` lines 160, 214-235",
}
"""The lines of the authors' code (``TOKEN_CODE_FOLDER``) each switch of
``varprobe.families.token_level.authors`` follows."""

TOKEN_CODE_FOLDER = "Additional_Experiments/Appendix_D"
"""Where the files of ``TOKEN_SWITCH_CODE`` are in github.com/evgeniael/predict_next_word."""
