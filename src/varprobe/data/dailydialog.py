"""DailyDialog++ (Sai et al. 2020): 5 human relevant responses per dialogue context.

JSON Lines, one object per context: ``id``, ``context`` (the turns, oldest first),
``positive_responses`` (5 human-written relevant replies: the human sample),
``adversarial_negative_responses`` and ``random_negative_responses`` (not used: they are
deliberately inappropriate replies, not productions for this context). The source a generator
sees is the whole dialogue history, its turns joined by a separator (a line break by default;
DialoGPT was trained with its end-of-text token between turns).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from varprobe.data.instances import instances_table
from varprobe.data.raw_text import read_text
from varprobe.data.dataset import Dataset
from varprobe.data.sources import GITHUB, OPT_OUT, pinned

TURN_SEPARATOR = "\n"
SPLITS = {"dev": 1028, "test": 1142}
N_REFERENCES = 5


def read_dailydialog(path: Path, split: str = "dev", separator: str = TURN_SEPARATOR,
                     verify: bool = True) -> pd.DataFrame:
    """The canonical instances table of one DailyDialog++ file; ``input_id`` is its ``id``.

    Parameters
    ----------
    path : pathlib.Path
        The JSON-lines file of the split.
    split : str
        The split the file holds (its published count is checked with ``verify``).
    separator : str
        What joins a dialogue's turns into the input.
    verify : bool
        Check the published split's count of contexts, and 5 responses each.

    Returns
    -------
    pandas.DataFrame
        The instances table: one row per dialogue, its positive responses the references.

    Raises
    ------
    ValueError
        Naming the file and line of a line that is no JSON object or an object without ``id``,
        ``context`` or ``positive_responses``, and, with ``verify``, the file when it holds other
        than the published split's contexts (``SPLITS``) with 5 responses each (splits of other
        counts are not checked).
    """
    rows = []
    # Split on line feeds only: JSON strings may hold other line separators (U+2028).
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not a JSON object ({err}); a truncated file?") from err
        missing = [k for k in ("id", "context", "positive_responses") if k not in record]
        if missing:
            raise ValueError(f"{path}:{number}: object lacks {missing}")
        turns = [t.strip() for t in record["context"]]
        rows.append((str(record["id"]), separator.join(turns),
                     [r.strip() for r in record["positive_responses"]]))
    if verify:
        _check_complete(path, split, rows)
    return instances_table("dailydialog", split, rows)


def _check_complete(path: Path, split: str, rows: list[tuple[str, str, list[str]]]) -> None:
    short = [input_id for input_id, _, references in rows if len(references) != N_REFERENCES]
    if split in SPLITS and (len(rows) != SPLITS[split] or short):
        raise ValueError(
            f"{path}: {len(rows)} contexts, {len(short)} of them without {N_REFERENCES} responses "
            f"(e.g. {short[:3]}); the published {split} split has {SPLITS[split]} contexts "
            f"with {N_REFERENCES} each; {OPT_OUT}"
        )


_DDPP = f"{GITHUB}/iitmnlp/DailyDialog-plusplus/4b02f9ff671e7e27d8e6b8a1925158bd5729abda/dataset"

# SHA-256 and size of each file, computed from the mirror copies of the originals.
DIGESTS: dict[str, tuple[str, int]] = {
    "dev.jsonl": ("afbdee92c9ab372f599c605609676fceba517f83286d58555f0404f4364b5bfa", 1226933),
    "test.jsonl": ("e8202c3d4b11008a13061b15c4d8ce1f6d05baa9104a9c1f5caa5450134522fa", 1326667),
}

DATASET = Dataset(
    name="dailydialog",
    # Byte-identical to the repository's dataset/{split}.json (dailydialog_pp/PROVENANCE.md).
    sources=tuple(pinned(f"{_DDPP}/{split}.json", f"dailydialog_pp/{split}.jsonl", *DIGESTS[f"{split}.jsonl"])
                  for split in SPLITS),
    default_split="dev",
    output_language="en",
    raw_files=lambda split: [f"{split}.jsonl"],
    read=lambda raw_dir, split, verify, turn_separator: read_dailydialog(
        raw_dir / f"{split}.jsonl", split, turn_separator, verify),
    options={"turn_separator": TURN_SEPARATOR},
    splits=SPLITS,
)
