"""WMT'14 En-De newstest2014 with 10 additional references (Ott et al. 2018).

The file ``wmt14-en-de.extra_refs.gz`` holds 500 sentences, each as TAB-separated lines
``S-n`` (English source), ``T-n`` (the original WMT German reference) and ``R1-n`` ... ``R10-n``
(10 further professional translations). Which translations form the human sample is a choice:
``extra`` (R1-R10, the paper's and the default), ``original`` (T only) or ``all`` (T and R1-R10).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pandas as pd

from varprobe.data.instances import instances_table
from varprobe.data.raw_text import decode
from varprobe.data.dataset import Dataset
from varprobe.data.sources import GITHUB, OPT_OUT, pinned

REFERENCE_SETS = {
    "extra": tuple(f"R{k}" for k in range(1, 11)),
    "original": ("T",),
    "all": ("T", *(f"R{k}" for k in range(1, 11))),
}
N_SENTENCES = 500


def read_wmt14(path: Path, references: str = "extra", verify: bool = True) -> pd.DataFrame:
    """The canonical instances table (split ``newstest2014``) of the extra-references file.

    ``input_id`` is the sentence number n of the tags.

    Parameters
    ----------
    path : pathlib.Path
        The extra-references file.
    references : str
        The reference set (a key of ``REFERENCE_SETS``).
    verify : bool
        Check the published 500 sentences with all of S, T and R1-R10.

    Returns
    -------
    pandas.DataFrame
        The instances table: one row per source sentence, the chosen set's translations its
        references.

    Raises
    ------
    ValueError
        Naming the file (and line) for a damaged archive, a malformed or repeated line, a sentence
        that lacks a tag of the chosen reference set or, with ``verify``, other than the published
        500 sentences with all of S, T and R1-R10.
    """
    if references not in REFERENCE_SETS:
        raise ValueError(f"wmt14 references must be one of {sorted(REFERENCE_SETS)}, got {references!r}")
    sentences: dict[str, dict[str, str]] = {}
    for number, line in enumerate(_read_lines(Path(path)), start=1):
        label, sep, text = line.partition("\t")
        tag, dash, sentence = label.rpartition("-")
        if not (sep and dash and sentence.isdigit()):
            raise ValueError(f"{path}:{number}: expected '<TAG>-<n>\\t<sentence>', got {line[:60]!r}")
        if tag in sentences.setdefault(sentence, {}):
            raise ValueError(f"{path}:{number}: {label} repeats")
        sentences[sentence][tag] = text.strip()
    if verify:
        _check_complete(path, sentences)
    tags = REFERENCE_SETS[references]
    rows = []
    for sentence, texts in sentences.items():
        missing = [t for t in ("S", *tags) if t not in texts]
        if missing:
            raise ValueError(f"{path}: sentence {sentence} lacks {missing}")
        rows.append((sentence, texts["S"], [texts[t] for t in tags]))
    return instances_table("wmt14", "newstest2014", rows)


def _read_lines(path: Path) -> list[str]:
    """The lines of the gzipped UTF-8 file, ValueError naming it when it is not one."""
    try:
        with gzip.open(path, "rb") as stream:
            data = stream.read()
    except (OSError, EOFError, zlib.error) as err:
        raise ValueError(f"{path} is not a complete gzip file ({err}); fetch it again") from err
    if not data.strip():
        raise ValueError(f"{path} is empty")
    # Split on line feeds only: a sentence may hold other line separators (U+2028, U+0085).
    return decode(data, "utf-8", str(path)).removesuffix("\n").split("\n")


def _check_complete(path: Path, sentences: dict[str, dict[str, str]]) -> None:
    tags = {"S", *REFERENCE_SETS["all"]}
    incomplete = [n for n, texts in sentences.items() if set(texts) != tags]
    if len(sentences) != N_SENTENCES or incomplete:
        raise ValueError(
            f"{path}: {len(sentences)} sentences, {len(incomplete)} of them without exactly the "
            f"tags S, T, R1-R10 (e.g. {incomplete[:3]}); the published file has {N_SENTENCES} "
            f"sentences with all 12; {OPT_OUT}"
        )


FILE = "wmt14-en-de.extra_refs.gz"
"""The extra-references file: every split (newstest2014) is read from it."""

DATASET = Dataset(
    name="wmt14",
    sources=(pinned(f"{GITHUB}/facebookresearch/analyzing-uncertainty-nmt/"
                    f"5b0760e6edc1de7c2c3b4050c3196e423ba3caf9/{FILE}", f"wmt14_ende_multiref/{FILE}",
                    "edf552f7dc52381ccf07d0a2e3db32ae6753900a242bc9b5be9197bda220bf25", 184354),),
    default_split="newstest2014",
    output_language="de",
    raw_files=lambda split: [FILE],
    read=lambda raw_dir, split, verify, references: read_wmt14(raw_dir / FILE, references, verify),
    options={"references": "extra"},
    splits={"newstest2014": N_SENTENCES},
)
