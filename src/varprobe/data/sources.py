"""Where each dataset lives: its original home for users, its path inside a local mirror.

A dataset is one or more raw files. A run fetches each either from its original URL or, when a
mirror directory is configured (config key ``data_mirror`` or the environment variable
``VARPROBE_DATA_MIRROR``), by copying it from that directory. Machines without internet point
the mirror at a local copy. A file that lives inside an archive at its original home (the
WritingPrompts tarball) names its ``member``: the download is unpacked to that one file, while a
mirror holds the file itself.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from varprobe.tables import atomic

MIRROR_ENV = "VARPROBE_DATA_MIRROR"


@dataclass(frozen=True)
class Source:
    """One raw file: its download URL, its relative path inside a mirror, and, when the URL is a
    tar archive, the archive member that is the file."""

    url: str
    mirror_path: str
    member: str | None = None

    @property
    def file(self) -> str:
        """The file's name, under which a run stores it."""
        return Path(self.mirror_path).name


# GitHub files are pinned to the commits the mirror was copied from (see its PROVENANCE.md).
_GITHUB = "https://raw.githubusercontent.com"
_ASSET = f"{_GITHUB}/facebookresearch/asset/9d659040d0d8942dbc4cd65cf357563b43fd9ab4/dataset"
_DDPP = f"{_GITHUB}/iitmnlp/DailyDialog-plusplus/4b02f9ff671e7e27d8e6b8a1925158bd5729abda/dataset"
_WRITING_PROMPTS = "https://dl.fbaipublicfiles.com/fairseq/data/writingPrompts.tar.gz"

SOURCES: dict[str, tuple[Source, ...]] = {
    "provo": (
        Source(
            url="https://osf.io/download/e4a2m/",
            mirror_path="provo_cloze/Provo_Corpus-Predictability_Norms.csv",
        ),
    ),
    "wmt14": (
        Source(
            url=f"{_GITHUB}/facebookresearch/analyzing-uncertainty-nmt/"
            "5b0760e6edc1de7c2c3b4050c3196e423ba3caf9/wmt14-en-de.extra_refs.gz",
            mirror_path="wmt14_ende_multiref/wmt14-en-de.extra_refs.gz",
        ),
    ),
    "asset": tuple(
        Source(url=f"{_ASSET}/asset.{split}.{part}", mirror_path=f"asset/asset.{split}.{part}")
        for split in ("valid", "test")
        for part in ("orig", *(f"simp.{k}" for k in range(10)))
    ),
    "dailydialog": tuple(
        Source(url=f"{_DDPP}/{split}.json", mirror_path=f"dailydialog_pp/{split}.jsonl")
        for split in ("dev", "test")
    ),
    "writingprompts": tuple(
        Source(
            url=_WRITING_PROMPTS,
            mirror_path=f"writingprompts/{split}.wp_{side}",
            member=f"writingPrompts/{split}.wp_{side}",
        )
        for split in ("valid", "test")
        for side in ("source", "target")
    ),
}


def source_of(name: str, file: str | None = None) -> Source:
    """The source of file ``file`` of dataset ``name`` (``None``: its only file)."""
    if name not in SOURCES:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(SOURCES))}")
    files = {s.file: s for s in SOURCES[name]}
    if file is None and len(files) == 1:
        return next(iter(files.values()))
    if file not in files:
        raise ValueError(f"dataset {name!r} has no file {file!r}; its files: {', '.join(files)}")
    return files[file]


def resolve_mirror(configured: str | None) -> Path | None:
    """The mirror directory in force: the config value if set, else ``$VARPROBE_DATA_MIRROR``."""
    value = configured or os.environ.get(MIRROR_ENV) or None
    return Path(value).expanduser().resolve() if value else None


def fetch(name: str, dest: Path, mirror: Path | None, file: str | None = None) -> Path:
    """Place raw file ``file`` of dataset ``name`` at ``dest`` (atomically: no partial file is
    left); ``file`` may be omitted for a dataset of one file.

    With a mirror the file is copied from ``mirror / mirror_path``; otherwise it is downloaded
    (and, for an archive member, unpacked from the downloaded archive).
    """
    source = source_of(name, file)
    with atomic(dest) as partial:
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
                if source.member is not None:
                    _unpack_member(partial, source.member)
            except OSError as err:
                raise OSError(
                    f"dataset {name!r}: download from {source.url} failed ({err}); "
                    f"without internet set data_mirror / ${MIRROR_ENV} to a local copy"
                ) from err
    return dest


def _unpack_member(archive: Path, member: str) -> None:
    """Replace the tar ``archive`` by its member ``member``."""
    with tarfile.open(archive) as tar:
        try:
            extracted = tar.extractfile(member)
        except KeyError as err:
            raise OSError(f"archive has no member {member!r}") from err
        if extracted is None:
            raise OSError(f"archive member {member!r} is not a file")
        unpacked = archive.with_name(archive.name + ".member")
        with extracted, open(unpacked, "wb") as out:
            shutil.copyfileobj(extracted, out)
    unpacked.replace(archive)
