"""Where each dataset lives: its original home for users, its path inside a local mirror.

A dataset is one or more raw files. A run fetches each either from its original URL or, when a
mirror directory is configured (config key ``data_mirror`` or the environment variable
``VARPROBE_DATA_MIRROR``), by copying it from that directory. Machines without internet point
the mirror at a local copy. A file that lives inside an archive at its original home (the
WritingPrompts tarball) names its ``member``: the download is unpacked to that one file, while a
mirror holds the file itself.

Every file is pinned by its SHA-256 digest and size (``Digest``), taken from the published
originals the mirror copies (each mirror folder's PROVENANCE.md names the repository and commit).
A file is checked when it is fetched and again whenever a run reads a copy it fetched earlier
(``varprobe.data.fetching.verify_copy``), so a truncated, re-encoded or stale copy stops the run, naming the file and
both digests. Where no original could be examined (the Provo norms as OSF serves them, whose
mirror copy is a rebuild in the same layout, and WritingPrompts) the file is unverified by
digest: a warning says so and the dataset's loader checks its counts alone. Users who bring a
different version on purpose turn the checks off (config ``data_verify: false``, CLI
``--allow-unverified``); every file not verified is then named in a warning.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
from dataclasses import KW_ONLY, dataclass
from pathlib import Path


MIRROR_ENV = "VARPROBE_DATA_MIRROR"
OPT_OUT = "set data_verify: false in the config (CLI: --allow-unverified) to use another version on purpose"
"""How a user who brings a different version of a dataset on purpose turns the checks off."""


@dataclass(frozen=True)
class Digest:
    """A file's identity: the SHA-256 of its bytes (hex) and its size in bytes."""

    sha256: str
    size: int

    @classmethod
    def of(cls, path: Path) -> Digest:
        """The digest of the file at ``path``.

        Parameters
        ----------
        path : Path
            The file.

        Returns
        -------
        Digest
            Its SHA-256 (hex) and size in bytes.
        """
        sha = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                sha.update(block)
        return cls(sha.hexdigest(), Path(path).stat().st_size)

    def __str__(self) -> str:
        return f"sha256 {self.sha256} ({self.size:,} bytes)"


@dataclass(frozen=True)
class Source:
    """One raw file: its download URL, its relative path inside a mirror, when the URL is a tar
    archive the archive member that is the file, and its pinned digests.

    ``digest`` is the file the URL serves (the member, once unpacked), which a mirror holds byte
    for byte; ``mirror_digest`` is the mirror's file where it is another one (a rebuild in the
    original's layout). ``None``: no copy could be examined when the digests were pinned.
    """

    url: str
    mirror_path: str
    _: KW_ONLY
    member: str | None = None
    digest: Digest | None = None
    mirror_digest: Digest | None = None

    @property
    def file(self) -> str:
        """The file's name, under which a run stores it."""
        return Path(self.mirror_path).name

    def origin(self, mirror: Path | None) -> str:
        """Where a run fetches the file from: its path in ``mirror``, or its URL (no mirror).

        Parameters
        ----------
        mirror : Path or None
            The data mirror, or None.

        Returns
        -------
        str
            The mirror path or the URL.
        """
        return self.url if mirror is None else str(mirror / self.mirror_path)

    def expected(self, from_mirror: bool) -> Digest | None:
        """The pinned digest of the file as fetched from the mirror or from the URL.

        Parameters
        ----------
        from_mirror : bool
            Whether the file comes from the mirror.

        Returns
        -------
        Digest or None
            None where no digest is pinned.
        """
        return (self.mirror_digest or self.digest) if from_mirror else self.digest


def pinned(url: str, mirror_path: str, sha256: str, size: int) -> Source:
    """The source of a file whose mirror copy is the original byte for byte: both pinned by the
    SHA-256 and size computed from the mirror copy of the original.

    Parameters
    ----------
    url : str
        The original's URL.
    mirror_path : str
        Its path in the mirror.
    sha256 : str
        Its SHA-256, hex.
    size : int
        Its size in bytes.

    Returns
    -------
    Source
    """
    return Source(url=url, mirror_path=mirror_path, digest=Digest(sha256, size))


# GitHub files are pinned to the commits the mirror was copied from (see its PROVENANCE.md).
GITHUB = "https://raw.githubusercontent.com"


def resolve_mirror(configured: str | None) -> Path | None:
    """The mirror directory in force: the config value if set, else ``$VARPROBE_DATA_MIRROR``.

    Parameters
    ----------
    configured : str or None
        The config's ``data_mirror``.

    Returns
    -------
    Path or None
        None: no mirror, files are downloaded.
    """
    value = configured or os.environ.get(MIRROR_ENV) or None
    return Path(value).expanduser().resolve() if value else None


def is_pinned_copy(path: Path, source: Source) -> bool:
    """Whether ``path`` exists and is the file ``source`` pins as fetched from a mirror.

    Parameters
    ----------
    path : Path
        A local file.
    source : Source
        The file's source.

    Returns
    -------
    bool
    """
    expected = source.expected(from_mirror=True)
    return (expected is not None and path.is_file() and path.stat().st_size == expected.size
            and Digest.of(path) == expected)


def check_digest(path: Path, expected: Digest | None, *, name: str, verify: bool, fix: str) -> None:
    """Raise ValueError, naming the file as ``name``, the expected and the actual digest and
    ``fix``, when the file at ``path`` is not the pinned one. A file that cannot be checked
    (``verify`` False, or no digest pinned) is named in a warning on stderr instead.

    Parameters
    ----------
    path : Path
        The file.
    expected : Digest or None
        The pinned digest.
    name : str
        The file's name in messages.
    verify : bool
        Whether to check it at all.
    fix : str
        What to do about a mismatch, appended to the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        See above.
    """
    if not verify:
        warn(f"{name}: not checked against its pinned digest nor its loader's counts "
             f"(data_verify: false / --allow-unverified)")
        return
    if expected is None:
        warn(f"{name}: no pinned digest (no copy of it could be examined when the digests were "
             f"pinned); only its loader's checks apply")
        return
    actual = Digest.of(path)
    if actual != expected:
        raise ValueError(
            f"{name} is not the pinned file: expected {expected}, got {actual} (a truncated, "
            f"re-encoded or different version); {fix}, or {OPT_OUT}"
        )


def warn(message: str) -> None:
    """Print ``varprobe: warning: message`` on stderr (into the job's log in a workflow).

    Parameters
    ----------
    message : str
        The warning.

    Returns
    -------
    None
    """
    print(f"varprobe: warning: {message}", file=sys.stderr)


def unpack_member(archive: Path, member: str) -> None:
    """Replace the tar ``archive`` by its member ``member``.

    Parameters
    ----------
    archive : Path
        A tar archive; replaced in place.
    member : str
        The member's path in the archive.

    Returns
    -------
    None

    Raises
    ------
    OSError
        When the archive has no such member.
    """
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
