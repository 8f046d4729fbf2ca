"""WMT'14 En-De newstest2014 with 10 additional references (Ott et al. 2018).

The file ``wmt14-en-de.extra_refs.gz`` holds 500 sentences, each as TAB-separated lines
``S-n`` (English source), ``T-n`` (the original WMT German reference) and ``R1-n`` ... ``R10-n``
(10 further professional translations). Which translations form the human sample is a choice:
``extra`` (R1-R10, the paper's and the default), ``original`` (T only) or ``all`` (T and R1-R10).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd

from varprobe.data.instances import instances_table

REFERENCE_SETS = {
    "extra": tuple(f"R{k}" for k in range(1, 11)),
    "original": ("T",),
    "all": ("T", *(f"R{k}" for k in range(1, 11))),
}


def read_wmt14(path: Path, references: str = "extra") -> pd.DataFrame:
    """The canonical instances table (split ``newstest2014``) of the extra-references file.

    ``input_id`` is the sentence number n of the tags. Raises ValueError naming the file and
    line for a malformed line, or the sentence that lacks a tag of the chosen reference set.
    """
    if references not in REFERENCE_SETS:
        raise ValueError(f"wmt14 references must be one of {sorted(REFERENCE_SETS)}, got {references!r}")
    tags = REFERENCE_SETS[references]
    sentences: dict[str, dict[str, str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            label, sep, text = line.rstrip("\n").partition("\t")
            tag, dash, sentence = label.rpartition("-")
            if not (sep and dash and sentence.isdigit()):
                raise ValueError(f"{path}:{number}: expected '<TAG>-<n>\\t<sentence>', got {line[:60]!r}")
            sentences.setdefault(sentence, {})[tag] = text.strip()
    rows = []
    for sentence, texts in sentences.items():
        missing = [t for t in ("S", *tags) if t not in texts]
        if missing:
            raise ValueError(f"{path}: sentence {sentence} lacks {missing}")
        rows.append((sentence, texts["S"], [texts[t] for t in tags]))
    return instances_table("wmt14", "newstest2014", rows)
