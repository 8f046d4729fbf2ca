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

TURN_SEPARATOR = "\n"


def read_dailydialog(path: Path, split: str = "dev", separator: str = TURN_SEPARATOR) -> pd.DataFrame:
    """The canonical instances table of one DailyDialog++ file; ``input_id`` is its ``id``.

    Raises ValueError naming the file and line of an object without ``id``, ``context`` or
    ``positive_responses``.
    """
    rows = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            missing = [k for k in ("id", "context", "positive_responses") if k not in record]
            if missing:
                raise ValueError(f"{path}:{number}: object lacks {missing}")
            turns = [t.strip() for t in record["context"]]
            rows.append((str(record["id"]), separator.join(turns),
                         [r.strip() for r in record["positive_responses"]]))
    return instances_table("dailydialog", split, rows)
