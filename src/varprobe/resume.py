"""What a long job has finished so far, kept beside its output, so that a job cut off (a time
limit, a killed process, a machine that goes away) resumes with only what it had not finished.

The partial table of the output ``DIR/NAME`` is ``DIR/.NAME.resume``: a hidden file that no
rule declares and no reader takes for a result. It holds the rows finished so far, with the
job's settings as metadata. A job resumes from it only when those settings are its own (model,
decoding, seed, prompt, shard, device: whatever the job stores beside its output), and removes
it once the output is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from varprobe import tables

RESUMING = "resuming:"
"""The start of the line a job that resumes from a partial table writes to its log (stderr):
its resources measure the rest of its work only."""


def partial_path(out: str | Path) -> Path:
    """Where the partial table of the output ``out`` is kept."""
    out = Path(out)
    return out.with_name(f".{out.name}.resume")


def finished(out: str | Path, schema: str, settings: dict) -> pd.DataFrame | None:
    """The rows that a cut-off run of this job left beside ``out``, or None: when there is no
    partial table, when it cannot be read, or when it was written with other ``settings`` (the
    last two are named on stderr; the job then starts afresh and overwrites it)."""
    path = partial_path(out)
    if not path.exists():
        return None
    try:
        stored, frame = tables.read_metadata(path), tables.read(path, schema)
    except ValueError as err:
        print(f"resume: ignoring {path}: {err}", file=sys.stderr)
        return None
    if stored != json.loads(json.dumps(settings)):
        print(f"resume: ignoring {path}: written with other settings", file=sys.stderr)
        return None
    return frame


def keep(frame: pd.DataFrame, out: str | Path, schema: str, settings: dict) -> None:
    """Write ``frame``, the rows finished so far, as ``out``'s partial table (atomically)."""
    tables.write(frame, partial_path(out), schema, settings)


def clear(out: str | Path) -> None:
    """Remove ``out``'s partial table, once ``out`` is written."""
    partial_path(out).unlink(missing_ok=True)
