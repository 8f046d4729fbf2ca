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
(``verify_copy``), so a truncated, re-encoded or stale copy stops the run, naming the file and
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
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from varprobe.tables import atomic

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
        """The digest of the file at ``path``."""
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
    member: str | None = None
    digest: Digest | None = None
    mirror_digest: Digest | None = None

    @property
    def file(self) -> str:
        """The file's name, under which a run stores it."""
        return Path(self.mirror_path).name

    def origin(self, mirror: Path | None) -> str:
        """Where a run fetches the file from: its path in ``mirror``, or its URL (no mirror)."""
        return self.url if mirror is None else str(mirror / self.mirror_path)

    def expected(self, from_mirror: bool) -> Digest | None:
        """The pinned digest of the file as fetched from the mirror or from the URL."""
        return (self.mirror_digest or self.digest) if from_mirror else self.digest


def _pinned(url: str, mirror_path: str) -> Source:
    """The source of a file whose mirror copy is the original byte for byte (``DIGESTS``)."""
    return Source(url=url, mirror_path=mirror_path, digest=Digest(*DIGESTS[mirror_path]))


# GitHub files are pinned to the commits the mirror was copied from (see its PROVENANCE.md).
_GITHUB = "https://raw.githubusercontent.com"
_ASSET = f"{_GITHUB}/facebookresearch/asset/9d659040d0d8942dbc4cd65cf357563b43fd9ab4/dataset"
_DDPP = f"{_GITHUB}/iitmnlp/DailyDialog-plusplus/4b02f9ff671e7e27d8e6b8a1925158bd5729abda/dataset"
_WRITING_PROMPTS = "https://dl.fbaipublicfiles.com/fairseq/data/writingPrompts.tar.gz"

# SHA-256 and size of each pinned file, computed from the mirror copies of the originals.
DIGESTS: dict[str, tuple[str, int]] = {
    "provo_cloze/Provo_Corpus-Predictability_Norms.csv":
        ("d1f10dcad7395cbdc81651d65333819538b00920f3579d4d3275d5c049ef0368", 13166182),
    "wmt14_ende_multiref/wmt14-en-de.extra_refs.gz":
        ("edf552f7dc52381ccf07d0a2e3db32ae6753900a242bc9b5be9197bda220bf25", 184354),
    "asset/asset.valid.orig": ("83dca90b5c53365a9c4a70222aed129c6df3c3f6b5da82ee94312e179b93fff1", 234319),
    "asset/asset.valid.simp.0": ("27b0c4a40c91b875c82a8ed76ff7cf0476b03a3a6998a2e3ef6e18000efda624", 193975),
    "asset/asset.valid.simp.1": ("5043e9db5934c3d538b91f56d23466177813896da10f153d2b16c0c415ac5e84", 180040),
    "asset/asset.valid.simp.2": ("578dd487cf03f6f66bb4acd2c44b464c3ac9fb42dc64b8e6afd391778ebc7ea7", 187445),
    "asset/asset.valid.simp.3": ("4ab95ba6f7a60adde2f57201c0b749384ce64c97f8378fb0ab185367709a8386", 207902),
    "asset/asset.valid.simp.4": ("f6f1d4bf9f87b532b37d7f5700ec384f817dba10247c91df629e1f6eee6c3aa9", 211459),
    "asset/asset.valid.simp.5": ("182114cfbb2960358b0e2d71737ead9a2abb0c27d3f65281335f079ae4447e3b", 194418),
    "asset/asset.valid.simp.6": ("aba27b505dad048982e902a04c4ffc5ab9e926b38d2383920aea798fd42de376", 188962),
    "asset/asset.valid.simp.7": ("73d7983107eca6b98a9aec62ea75ea8d5adf313755b7e105608f212dead124cd", 196950),
    "asset/asset.valid.simp.8": ("58f8e1109d87a4e3c5403705b8782750bb849cb8389a698156e00ca6512dd5c4", 213056),
    "asset/asset.valid.simp.9": ("35a861e174ce5458fdcd1866e49aa84297fcb6b51fd98d6633b71932a646832e", 220962),
    "asset/asset.test.orig": ("673ceb2672a37168a52040d75e16f9ffd1e3777b9f68e19207f2adf6542723f1", 43745),
    "asset/asset.test.simp.0": ("66f36029d0c732eb92886021faefe531c6cfd0a32bdbe7ae4aa97fd45bd1b046", 35457),
    "asset/asset.test.simp.1": ("d323ceb364abbe84c79b14b028aa1ff563cd94955fbab19049612548dbb0f83f", 34096),
    "asset/asset.test.simp.2": ("786b55f8425ce4a993e98be5e2bea9ef87bf536b96dc13f7a57c4733fdb63e06", 34348),
    "asset/asset.test.simp.3": ("e211c9e2ede1dfe315097132dbe4feda76b309bdc636a5394cb5d2664ba5bf52", 37292),
    "asset/asset.test.simp.4": ("37be9cf0592c0f68d87848dc9c442fe62f344518c1993896c00788bf943b755d", 35887),
    "asset/asset.test.simp.5": ("8485210573a3bd76116de8e978b227677c6c207111a4938729397c4e603dfa46", 35351),
    "asset/asset.test.simp.6": ("f0cb3ab823d23203ea044f81bd7e67cc823db0632095e43b78a54a9891a0b0a8", 35846),
    "asset/asset.test.simp.7": ("35cbb8b9964252a1470607634f19ad946c6bc2951b3e500eedd826baf12bd3c8", 34560),
    "asset/asset.test.simp.8": ("047b6419590b88f93b435d3177bba1883dc9c0dc178676e48470b408236446f4", 35830),
    "asset/asset.test.simp.9": ("3f5745e4f2743563b88ea4284ec35fa4ddb68d62de80b63ffb87751b998fe6b8", 35313),
    "dailydialog_pp/dev.jsonl": ("afbdee92c9ab372f599c605609676fceba517f83286d58555f0404f4364b5bfa", 1226933),
    "dailydialog_pp/test.jsonl": ("e8202c3d4b11008a13061b15c4d8ce1f6d05baa9104a9c1f5caa5450134522fa", 1326667),
}

_PROVO_NORMS = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"

SOURCES: dict[str, tuple[Source, ...]] = {
    # The OSF original could not be fetched here: the mirror's file is a rebuild in its layout
    # (provo_cloze/PROVENANCE.md), pinned as such; a download is checked by the loader alone.
    "provo": (
        Source(
            url="https://osf.io/download/e4a2m/",
            mirror_path=_PROVO_NORMS,
            mirror_digest=Digest(*DIGESTS[_PROVO_NORMS]),
        ),
    ),
    "wmt14": (
        _pinned(
            f"{_GITHUB}/facebookresearch/analyzing-uncertainty-nmt/"
            "5b0760e6edc1de7c2c3b4050c3196e423ba3caf9/wmt14-en-de.extra_refs.gz",
            "wmt14_ende_multiref/wmt14-en-de.extra_refs.gz",
        ),
    ),
    "asset": tuple(
        _pinned(f"{_ASSET}/asset.{split}.{part}", f"asset/asset.{split}.{part}")
        for split in ("valid", "test")
        for part in ("orig", *(f"simp.{k}" for k in range(10)))
    ),
    # Byte-identical to the repository's dataset/{split}.json (dailydialog_pp/PROVENANCE.md).
    "dailydialog": tuple(
        _pinned(f"{_DDPP}/{split}.json", f"dailydialog_pp/{split}.jsonl")
        for split in ("dev", "test")
    ),
    # No copy of the corpus could be examined here: unverified by digest, checked by its loader.
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


def fetch(name: str, dest: Path, mirror: Path | None, file: str | None = None,
          verify: bool = True) -> Path:
    """Place raw file ``file`` of dataset ``name`` at ``dest`` (atomically: no partial file is
    left); ``file`` may be omitted for a dataset of one file.

    With a mirror the file is copied from ``mirror / mirror_path``; otherwise it is downloaded
    (and, for an archive member, unpacked from the downloaded archive). The file is then checked
    against its pinned digest (``check_digest``; ``verify=False`` only warns that it was not).
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
                    _unpack_member(partial, source.member)
            except OSError as err:
                raise OSError(
                    f"dataset {name!r}: download from {source.url} failed ({err}); "
                    f"without internet set data_mirror / ${MIRROR_ENV} to a local copy"
                ) from err
        check_digest(partial, source.expected(mirror is not None), origin, verify,
                     f"fix or replace {origin} with the published file and rerun")
    return dest


def verify_copy(name: str, path: Path, mirror: Path | None, verify: bool = True) -> None:
    """Check a raw file a run fetched earlier (``path``, named as fetched) before it is read:
    a stale or damaged copy stops the run instead of giving results from another file."""
    path = Path(path)
    source = source_of(name, path.name)
    check_digest(path, source.expected(mirror is not None), f"{path} (fetched from {source.origin(mirror)})",
                 verify, f"delete {path} and rerun to fetch it again")


def check_digest(path: Path, expected: Digest | None, name: str, verify: bool, fix: str) -> None:
    """Raise ValueError, naming the file as ``name``, the expected and the actual digest and
    ``fix``, when the file at ``path`` is not the pinned one. A file that cannot be checked
    (``verify`` False, or no digest pinned) is named in a warning on stderr instead."""
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
    """Print ``varprobe: warning: message`` on stderr (into the job's log in a workflow)."""
    print(f"varprobe: warning: {message}", file=sys.stderr)


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
