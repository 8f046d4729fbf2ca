"""External samples: words drawn elsewhere (an API model, published samples) as a samples table.

The file is a CSV with columns ``text_id, word_number, sample[, count]``: one row per sampled
continuation, ``count`` (default 1) times. A sample is read as text that starts a new word after
the context, i.e. with an implied leading space, and goes through the same first-word extraction
and normalisation as the model's own draws (``varprobe.words.first_word`` with ``ended=True``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from varprobe.words import first_word

REQUIRED = ("text_id", "word_number", "sample")


def read_external_samples(path: str | Path, contexts: pd.DataFrame) -> pd.DataFrame:
    """Validate the CSV at ``path`` against the known ``contexts`` and build a samples table.

    Errors name the file, the column or row, and the bad value: a missing column, a non-integer
    id or count, a count below 1, or a context that the contexts table does not hold.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"samples file {path} not found")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise ValueError(f"samples file {path}: missing column(s) {missing}; need {list(REQUIRED)}[, count]")
    if "count" not in raw.columns:
        raw["count"] = "1"
    for column in ("text_id", "word_number", "count"):
        numbers = pd.to_numeric(raw[column].str.strip(), errors="coerce")
        bad = raw.index[numbers.isna() | (numbers % 1 != 0)]
        if len(bad):
            row = bad[0]
            raise ValueError(
                f"samples file {path}, row {row + 2}: column {column} must be an integer, "
                f"got {raw.at[row, column]!r}"
            )
        raw[column] = numbers.astype("int64")
    if (raw["count"] < 1).any():
        row = raw.index[raw["count"] < 1][0]
        raise ValueError(f"samples file {path}, row {row + 2}: count must be >= 1")
    known = set(zip(contexts["text_id"], contexts["word_number"], strict=True))
    keys = list(zip(raw["text_id"], raw["word_number"], strict=True))
    unknown = [i for i, k in enumerate(keys) if k not in known]
    if unknown:
        row = unknown[0]
        raise ValueError(
            f"samples file {path}, row {row + 2}: unknown context "
            f"text_id={keys[row][0]}, word_number={keys[row][1]} (not among the configured Provo contexts)"
        )
    extractions = [first_word(" " + s.lstrip(), ended=True) for s in raw["sample"]]
    words = [e.word for e in extractions]
    samples = pd.DataFrame(
        {
            "text_id": raw["text_id"],
            "word_number": raw["word_number"],
            "text": raw["sample"],
            "word": words,
            "failed": [not w for w in words],
            "failure": [("" if e.word else e.status) for e in extractions],
            "n_tokens": pd.array([pd.NA] * len(raw), dtype="Int32"),
            "count": raw["count"],
        }
    )
    samples["sample_index"] = samples.groupby(["text_id", "word_number"]).cumcount()
    return samples.sort_values(["text_id", "word_number", "sample_index"], ignore_index=True)
