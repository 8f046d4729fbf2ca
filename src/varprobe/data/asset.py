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
from varprobe.data.dataset import Dataset
from varprobe.data.sources import GITHUB, OPT_OUT, pinned

SPLITS = {"valid": 2000, "test": 359}
N_REFERENCES = 10


def _lines(path: Path) -> list[str]:
    text = read_text(path)
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def read_asset(folder: Path, split: str = "valid", verify: bool = True) -> pd.DataFrame:
    """The canonical instances table of ASSET ``split``; ``input_id`` is the 0-based line number.

    Parameters
    ----------
    folder : pathlib.Path
        The folder of the raw files ``asset.<split>.orig`` and ``asset.<split>.simp.<k>``.
    split : str
        ``valid`` or ``test``.
    verify : bool
        Check the line count against the published split's (``SPLITS``).

    Returns
    -------
    pandas.DataFrame
        The instances table (``varprobe.data.instances``): one row per source sentence, its
        simplifications the references.

    Raises
    ------
    ValueError
        For an unknown split, and naming the file whose line count differs from its ``orig``
        file's or, with ``verify``, from the published split's.
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


_ASSET = f"{GITHUB}/facebookresearch/asset/9d659040d0d8942dbc4cd65cf357563b43fd9ab4/dataset"

# SHA-256 and size of each file, computed from the mirror copies of the originals.
DIGESTS: dict[str, tuple[str, int]] = {
    "asset.valid.orig": ("83dca90b5c53365a9c4a70222aed129c6df3c3f6b5da82ee94312e179b93fff1", 234319),
    "asset.valid.simp.0": ("27b0c4a40c91b875c82a8ed76ff7cf0476b03a3a6998a2e3ef6e18000efda624", 193975),
    "asset.valid.simp.1": ("5043e9db5934c3d538b91f56d23466177813896da10f153d2b16c0c415ac5e84", 180040),
    "asset.valid.simp.2": ("578dd487cf03f6f66bb4acd2c44b464c3ac9fb42dc64b8e6afd391778ebc7ea7", 187445),
    "asset.valid.simp.3": ("4ab95ba6f7a60adde2f57201c0b749384ce64c97f8378fb0ab185367709a8386", 207902),
    "asset.valid.simp.4": ("f6f1d4bf9f87b532b37d7f5700ec384f817dba10247c91df629e1f6eee6c3aa9", 211459),
    "asset.valid.simp.5": ("182114cfbb2960358b0e2d71737ead9a2abb0c27d3f65281335f079ae4447e3b", 194418),
    "asset.valid.simp.6": ("aba27b505dad048982e902a04c4ffc5ab9e926b38d2383920aea798fd42de376", 188962),
    "asset.valid.simp.7": ("73d7983107eca6b98a9aec62ea75ea8d5adf313755b7e105608f212dead124cd", 196950),
    "asset.valid.simp.8": ("58f8e1109d87a4e3c5403705b8782750bb849cb8389a698156e00ca6512dd5c4", 213056),
    "asset.valid.simp.9": ("35a861e174ce5458fdcd1866e49aa84297fcb6b51fd98d6633b71932a646832e", 220962),
    "asset.test.orig": ("673ceb2672a37168a52040d75e16f9ffd1e3777b9f68e19207f2adf6542723f1", 43745),
    "asset.test.simp.0": ("66f36029d0c732eb92886021faefe531c6cfd0a32bdbe7ae4aa97fd45bd1b046", 35457),
    "asset.test.simp.1": ("d323ceb364abbe84c79b14b028aa1ff563cd94955fbab19049612548dbb0f83f", 34096),
    "asset.test.simp.2": ("786b55f8425ce4a993e98be5e2bea9ef87bf536b96dc13f7a57c4733fdb63e06", 34348),
    "asset.test.simp.3": ("e211c9e2ede1dfe315097132dbe4feda76b309bdc636a5394cb5d2664ba5bf52", 37292),
    "asset.test.simp.4": ("37be9cf0592c0f68d87848dc9c442fe62f344518c1993896c00788bf943b755d", 35887),
    "asset.test.simp.5": ("8485210573a3bd76116de8e978b227677c6c207111a4938729397c4e603dfa46", 35351),
    "asset.test.simp.6": ("f0cb3ab823d23203ea044f81bd7e67cc823db0632095e43b78a54a9891a0b0a8", 35846),
    "asset.test.simp.7": ("35cbb8b9964252a1470607634f19ad946c6bc2951b3e500eedd826baf12bd3c8", 34560),
    "asset.test.simp.8": ("047b6419590b88f93b435d3177bba1883dc9c0dc178676e48470b408236446f4", 35830),
    "asset.test.simp.9": ("3f5745e4f2743563b88ea4284ec35fa4ddb68d62de80b63ffb87751b998fe6b8", 35313),
}


def raw_files(split: str) -> list[str]:
    """The files of ``split``: the originals and the 10 simplifications.

    Parameters
    ----------
    split : str
        The split, ``"validation"`` or ``"test"``.

    Returns
    -------
    list of str
        The raw file names, as fetched.
    """
    return [f"asset.{split}.orig", *(f"asset.{split}.simp.{k}" for k in range(N_REFERENCES))]


DATASET = Dataset(
    name="asset",
    sources=tuple(pinned(f"{_ASSET}/{file}", f"asset/{file}", *DIGESTS[file])
                  for split in SPLITS for file in raw_files(split)),
    default_split="valid",
    output_language="en",
    raw_files=raw_files,
    read=lambda raw_dir, split, verify: read_asset(raw_dir, split, verify),
    splits=SPLITS,
    simplification=True,
)
