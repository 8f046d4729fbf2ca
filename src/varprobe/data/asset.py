"""ASSET sentence simplification (Alva-Manchego et al. 2020): 10 simplifications per sentence.

Line-aligned UTF-8 files ``asset.{split}.orig`` and ``asset.{split}.simp.{0..9}``: line i of
``simp.k`` is annotator k's simplification of line i of ``orig``. The last line has no trailing
newline, so lines are split on ``\\n`` (not counted with ``wc -l``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from varprobe.data.instances import instances_table
from varprobe.data.raw_text import read_text
from varprobe.data.sources import OPT_OUT

SPLITS = {"valid": 2000, "test": 359}
N_REFERENCES = 10


def _lines(path: Path) -> list[str]:
    text = read_text(path)
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def read_asset(folder: Path, split: str = "valid", verify: bool = True) -> pd.DataFrame:
    """The canonical instances table of ASSET ``split``; ``input_id`` is the 0-based line number.

    Raises ValueError naming the file whose line count differs from its ``orig`` file's or,
    with ``verify``, from the published split's (``SPLITS``).
    """
    if split not in SPLITS:
        raise ValueError(f"asset split must be one of {sorted(SPLITS)}, got {split!r}")
    folder = Path(folder)
    sources = _lines(folder / f"asset.{split}.orig")
    if verify and len(sources) != SPLITS[split]:
        raise ValueError(f"{folder / f'asset.{split}.orig'} has {len(sources)} lines, the published "
                         f"split has {SPLITS[split]}; {OPT_OUT}")
    simplifications = [_lines(folder / f"asset.{split}.simp.{k}") for k in range(N_REFERENCES)]
    for k, lines in enumerate(simplifications):
        if len(lines) != len(sources):
            raise ValueError(
                f"{folder / f'asset.{split}.simp.{k}'} has {len(lines)} lines, "
                f"asset.{split}.orig has {len(sources)}"
            )
    rows = [
        (str(i), source, [lines[i] for lines in simplifications])
        for i, source in enumerate(sources)
    ]
    return instances_table("asset", split, rows)
