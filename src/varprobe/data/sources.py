"""Where each dataset lives: its original home for users, its path inside a local mirror.

A run fetches every raw file either from its original URL or, when a mirror directory is
configured (config key ``data_mirror`` or the environment variable ``VARPROBE_DATA_MIRROR``),
by copying it from that directory. Machines without internet point the mirror at a local copy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MIRROR_ENV = "VARPROBE_DATA_MIRROR"


@dataclass(frozen=True)
class Source:
    """One raw file: its download URL and its relative path inside a mirror."""

    url: str
    mirror_path: str


SOURCES: dict[str, Source] = {
    "provo": Source(
        url="https://osf.io/download/e4a2m/",
        mirror_path="provo_cloze/Provo_Corpus-Predictability_Norms.csv",
    ),
}


def resolve_mirror(configured: str | None) -> Path | None:
    """The mirror directory in force: the config value if set, else ``$VARPROBE_DATA_MIRROR``."""
    value = configured or os.environ.get(MIRROR_ENV) or None
    return Path(value).expanduser().resolve() if value else None


def fetch(name: str, dest: Path, mirror: Path | None) -> Path:
    """Place the raw file of dataset ``name`` at ``dest`` (atomically: no partial file is left).

    With a mirror the file is copied from ``mirror / mirror_path``; otherwise it is downloaded.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(SOURCES))}")
    source = SOURCES[name]
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        partial = Path(tmp.name)
    try:
        if mirror is not None:
            origin = mirror / source.mirror_path
            if not origin.is_file():
                raise FileNotFoundError(
                    f"dataset {name!r}: {origin} not found in the data mirror {mirror} "
                    f"(set data_mirror / ${MIRROR_ENV} to the folder that holds "
                    f"{source.mirror_path}, or unset it to download from {source.url})"
                )
            shutil.copyfile(origin, partial)
        else:
            try:
                urllib.request.urlretrieve(source.url, partial)
            except OSError as err:
                raise OSError(
                    f"dataset {name!r}: download from {source.url} failed ({err}); "
                    f"without internet set data_mirror / ${MIRROR_ENV} to a local copy"
                ) from err
        partial.replace(dest)
    finally:
        partial.unlink(missing_ok=True)
    return dest
