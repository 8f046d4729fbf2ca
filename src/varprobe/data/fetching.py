"""The registered datasets' raw files, by dataset name: looked up in the registry
(``varprobe.data.SOURCES``), fetched from their home or the data mirror, and checked again before
a run reads a copy it fetched earlier. The sources themselves, their digests and the checks are
``varprobe.data.sources``; this module is the one that reads the registry, so the dataset modules
the registry imports never import it back."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from varprobe.data import SOURCES
from varprobe.data.sources import MIRROR_ENV, Source, unpack_member, check_digest
from varprobe.tables import atomic


def source_of(name: str, file: str | None = None) -> Source:
    """The source of file ``file`` of dataset ``name`` (``None``: its only file), from
    ``varprobe.data.SOURCES``.

    Parameters
    ----------
    name : str
        The dataset's name in ``SOURCES``.
    file : str, optional
        The file's name; None for a dataset of one file.

    Returns
    -------
    Source

    Raises
    ------
    ValueError
        For an unknown dataset or file, listing the known ones.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(SOURCES))}")
    files = {s.file: s for s in SOURCES[name]}
    if file is None and len(files) == 1:
        return next(iter(files.values()))
    if file not in files:
        raise ValueError(f"dataset {name!r} has no file {file!r}; its files: {', '.join(files)}")
    return files[file]


def fetch(name: str, dest: Path, mirror: Path | None, *, file: str | None = None,
          verify: bool = True) -> Path:
    """Place raw file ``file`` of dataset ``name`` at ``dest`` (atomically: no partial file is
    left); ``file`` may be omitted for a dataset of one file.

    With a mirror the file is copied from ``mirror / mirror_path``; otherwise it is downloaded
    (and, for an archive member, unpacked from the downloaded archive). The file is then checked
    against its pinned digest (``check_digest``; ``verify=False`` only warns that it was not).

    Parameters
    ----------
    name : str
        The dataset's name in ``SOURCES``.
    dest : Path
        Where the file is placed.
    mirror : Path or None
        The data mirror, or None to download.
    file : str, optional
        The file's name within the dataset.
    verify : bool, optional
        Whether a digest mismatch is an error (else a warning).

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    FileNotFoundError
        When the mirror lacks the file.
    OSError
        When the download or the unpacking fails.
    ValueError
        When the file is not the pinned one (``check_digest``) and ``verify`` is set.
    """
    source = source_of(name, file)
    origin = source.origin(mirror)
    with atomic(dest) as partial:
        if mirror is not None:
            if not Path(origin).is_file():
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
                    unpack_member(partial, source.member)
            except OSError as err:
                raise OSError(
                    f"dataset {name!r}: download from {source.url} failed ({err}); "
                    f"without internet set data_mirror / ${MIRROR_ENV} to a local copy"
                ) from err
        check_digest(partial, source.expected(mirror is not None), name=origin, verify=verify,
                     fix=f"fix or replace {origin} with the published file and rerun")
    return dest


def verify_copy(name: str, path: Path, mirror: Path | None, verify: bool = True) -> None:
    """Check a raw file a run fetched earlier (``path``, named as fetched) before it is read:
    a stale or damaged copy stops the run instead of giving results from another file.

    Parameters
    ----------
    name : str
        The dataset's name in ``SOURCES``.
    path : Path
        The fetched file; its name is the file's name within the dataset.
    mirror : Path or None
        The mirror it was fetched from, or None (downloaded).
    verify : bool, optional
        Whether a mismatch is an error (else a warning).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        When the copy is not the pinned file and ``verify`` is set (``check_digest``).
    """
    path = Path(path)
    source = source_of(name, path.name)
    check_digest(path, source.expected(mirror is not None),
                 name=f"{path} (fetched from {source.origin(mirror)})", verify=verify,
                 fix=f"delete {path} and rerun to fetch it again")
