"""The published samples of Ilia & Aziz (2024)'s systems: the per-context generations their
repository holds for each column of Table 1 (github.com/evgeniael/predict_next_word, commit
027ffaa), read into records placed on the Provo contexts.

Two layouts, both JSON:

* *contexts* (``TVD/BLOOM/Generations/bloom_generations.json``,
  ``TVD/ChatGPT/Generations/chatgpt_generations.json``): ``{"0": {"context": ...,
  "original_positioning": {"text_id": "33", "word_num": "36"}, ...}, ...}`` with the draws under
  ``original_generations`` and the authors' word of each under ``processed_generations``, at the
  record's top level (Bloom) or under the mode's key (ChatGPT: ``unbiased_temp_1``, 40 replies of
  one word; ``diverse``, one reply listing 40 words);
* *passages* (``TVD/GPT2*/Generations/Paragraphs*.json``): ``{text_id: {word_num: {"context":
  {"text": ...}, "ancestral_samples": [{"pred": WORD, "count": N, ...}, ...], ...}}}``, the
  sampler's words already extracted (``Failed to generate word`` for a failed draw).

``word_num`` is Provo's ``Word_Number``: the context is the passage's first ``word_num - 1``
tokens, as ours (``varprobe.data.provo.contexts_table``). The contexts of the Bloom and ChatGPT
files were cut from a copy of the passages that differs from the norms' in two ways: MacRoman
characters read as Latin-1 (``womenÕs``; ``Ñ`` for an em dash) and, in passage 36, an em-dash
token the norms' numbering does not count. A record is therefore placed by its context's text
(``locate_records``), not by its key alone: in both files the record published as (36, 30)
continues the norms' context (36, 29), whose word the authors' own scores take as its corpus
word (``varprobe.analysis.published_samples``).

Only the files present in full in the snapshot that was examined are pinned (``SOURCES``):
GPT-2's and fine-tuned GPT-2's other passages (GPT-2: 5-44; fine-tuned: 4-28) are in files whose
content it lacks, so those systems cover passages 1-4 and 45-55 (GPT-2) and 1-3 and 29-40
(fine-tuned) alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import pandas as pd

from varprobe.data.raw_text import read_text
from varprobe.data.sources import GITHUB, pinned
from varprobe.words import has_word_char

DATASET = "ilia_aziz_generations"
"""The dataset's name in ``varprobe.data.SOURCES`` (``varprobe fetch --dataset``)."""

COMMIT = "027ffaa8eb9cd526e476417b654e10f271145210"
"""The commit of github.com/evgeniael/predict_next_word the files are pinned to."""

FAILED = "Failed to generate word"
"""The authors' word for a draw that produced none."""

READINGS = ("continuation", "answer", "list", "word")
"""How our word rule reads a system's draws: a continuation of the context (Bloom's text after
the prompt), a reply that answers with a word (ChatGPT), a reply listing words (ChatGPT's list
mode), a word the authors' sampler already extracted (GPT-2)."""


@dataclass(frozen=True)
class PublishedSystem:
    """One column of Ilia & Aziz's Table 1 as its published samples: its name in configs, the
    column, the repository folder and files of its samples, how a draw is read (``READINGS``),
    and the key of a contexts-layout record that holds its draws (None: the record itself)."""

    name: str
    _: KW_ONLY
    column: str
    folder: str
    files: tuple[str, ...]
    reading: str
    mode: str | None = None


_GPT2 = ("Paragraphs-1-1.json", "Paragraphs-2-2.json", "Paragraphs-3-3.json", "Paragraphs-4-4.json",
         "Paragraphs-45-47.json", "Paragraphs-48-50.json", "Paragraphs-51-53.json", "Paragraphs-54-55.json")
_GPT2_TEMP = ("Paragraphs_temp-1-1.json", "Paragraphs_temp-2-4.json", "Paragraphs_temp-5-7.json",
              "Paragraphs_temp-8-17.json", "Paragraphs_temp-18-29.json", "Paragraphs_temp-30-42.json",
              "Paragraphs_temp-43-55.json")
_GPT2_FT = ("Paragraphs-1-1_fine_tuned.json", "Paragraphs-2-3_fine_tuned.json",
            "Paragraphs-29-30_fine_tuned.json", "Paragraphs-31-33_fine_tuned.json",
            "Paragraphs-34-36_fine_tuned.json", "Paragraphs-37-38_fine_tuned.json",
            "Paragraphs-39-40_fine_tuned.json")

SYSTEMS: dict[str, PublishedSystem] = {s.name: s for s in (
    PublishedSystem("gpt2", column="GPT2", folder="TVD/GPT2/Generations", files=_GPT2, reading="word"),
    PublishedSystem("gpt2-fine-tuned", column="GPT2 fine-tuned", folder="TVD/GPT2_FT/Generations",
                    files=_GPT2_FT, reading="word"),
    PublishedSystem("gpt2-temperature-0.5", column="GPT2 T=0.5", folder="TVD/GPT2_Temp/Generations",
                    files=_GPT2_TEMP, reading="word"),
    PublishedSystem("bloom", column="Bloom", folder="TVD/BLOOM/Generations", files=("bloom_generations.json",),
                    reading="continuation"),
    PublishedSystem("chatgpt", column="ChatGPT", folder="TVD/ChatGPT/Generations",
                    files=("chatgpt_generations.json",), reading="answer", mode="unbiased_temp_1"),
    PublishedSystem("chatgpt-list", column="ChatGPT list", folder="TVD/ChatGPT/Generations",
                    files=("chatgpt_generations.json",), reading="list", mode="diverse"),
)}
"""Every published system by name: Table 1's model columns."""

# SHA-256 and size of each file, computed from the blobs of the pinned commit.
DIGESTS: dict[str, tuple[str, int]] = {
    "bloom_generations.json": ("e71621671adfb72e456d9901940b8501c1b598e26c0be1ec9d911d07e314194a", 1183166),
    "chatgpt_generations.json": ("dba29d17d5c398e15cab3c4343f2cbb60420b57ed55770577dc09f13d9cc2498", 1203262),
    "Paragraphs-1-1.json": ("27bd55e16138b6b3dc986c484f9766c6a446156956df9474a560a7b875ec0e2b", 1376336),
    "Paragraphs-2-2.json": ("e41bac6a8417637e2208d1f07d922137b94b59f1aebc8850e821079a568626b5", 1642712),
    "Paragraphs-3-3.json": ("ff8742c9866c6218286e60ac27b003fc58a70efb145c6d3c02fdfbe98a7e64a6", 1392632),
    "Paragraphs-4-4.json": ("7e6143c15c1d87e857b5f8d7fefde8b16106cb340f6bbe1f85058c258a196143", 1861478),
    "Paragraphs-45-47.json": ("ff03cc15ce73c332f19aa540d245d8aee2c66f5df348ec9868dfcd6c5373ea55", 3686192),
    "Paragraphs-48-50.json": ("8a9a1b1c362566c5e67d5591b11c917745bc7a5febd3ff4f2bc71b5ed871d37b", 3909332),
    "Paragraphs-51-53.json": ("12e5f0b8141898162d425654a11f3fe5230256a10eb55d60d9fbaa7b7e3426c8", 3664098),
    "Paragraphs-54-55.json": ("fc9655af507631a45be360bd9d666955ed484e7cbf2112fd3c2cb7d72384dadf", 3160910),
    "Paragraphs-1-1_fine_tuned.json": ("a63503b540ce54f1c02a36184932cac379714331149e392094f0a275cb27753b", 1495649),
    "Paragraphs-2-3_fine_tuned.json": ("3931632f532da9c1e6379f5e57a20cff1cb3f15cb7eea909adaa2da0aeee2e50", 3289766),
    "Paragraphs-29-30_fine_tuned.json": ("039f6642b5a28e017067959ce36dad27a3eac24fb654782cd8ff24fc71c03219", 2507635),
    "Paragraphs-31-33_fine_tuned.json": ("cd28c3ad4ae771f73ec06dcf511f52c513b876ae67ca5663eb9f8527f8e6521c", 4046572),
    "Paragraphs-34-36_fine_tuned.json": ("fef26bba490064e3c52a483ddc92e4ff65d2e6e2bf3eda6c163268e28a40d7c2", 3910861),
    "Paragraphs-37-38_fine_tuned.json": ("29f440bf1ccb9d2ad7df7d93b6749ed67f55b33a4357f450d45ccec7bfcc72f3", 2449861),
    "Paragraphs-39-40_fine_tuned.json": ("7235dbf85d1abf5b86310a5e298e802fd068cfcaf2abe1f740649d2295d9bf65", 2389189),
    "Paragraphs_temp-1-1.json": ("d4827f72e52fee87f39cbbb6a4dbd8440ca258fc8e40f20c6a185d30202bbeed", 103013),
    "Paragraphs_temp-2-4.json": ("89768dc179aa36cbb3b4467c0b8e5e04fc6b1a19e178197024983c6c06abbd5b", 352303),
    "Paragraphs_temp-5-7.json": ("38b5620d277b6752644299737cb379590d6a39a8e85cf4e0829c47f2ad74080f", 324985),
    "Paragraphs_temp-8-17.json": ("f9c04db7520027f218a78f413c1581045ab258c3aab036f0cb4191daadff4323", 1041989),
    "Paragraphs_temp-18-29.json": ("cc2a94871e5803659d30f0a5309487b864b29a21cf9812625d5de652a2a8235e", 1120946),
    "Paragraphs_temp-30-42.json": ("e49ba14a21eaa1b36a7c3fc573e0750f35dcc3ad52dccca384a269a376ad4cf7", 1048365),
    "Paragraphs_temp-43-55.json": ("87b10d0c982694004d725ebf85a0e5ba9ccc931f93e273ed8957adb66d61b018", 1200679),
}


def _repository_paths() -> dict[str, str]:
    """Each pinned file's path in the repository, by file name."""
    return {file: f"{s.folder}/{file}" for s in SYSTEMS.values() for file in s.files}


SOURCES = tuple(
    pinned(f"{GITHUB}/evgeniael/predict_next_word/{COMMIT}/{path}", f"{DATASET}/{path}", *DIGESTS[file])
    for file, path in _repository_paths().items()
)
"""The pinned files (``data/sources.py``): the URL at the commit, the mirror path under
``ilia_aziz_generations/`` the repository's path."""


@dataclass(frozen=True)
class Record:
    """One published context of a system: its key and context as published, its draws as
    ``(text, count)`` in published order (a list reply is one draw of its whole text), and the
    authors' words for them as ``(word, count)``, in the order the authors' code reads them."""

    key: tuple[int, int]
    context: str
    draws: tuple[tuple[str, int], ...]
    authors_words: tuple[tuple[str, int], ...]


def system(name: str) -> PublishedSystem:
    """The published system ``name``; ValueError listing the known ones otherwise.

    Parameters
    ----------
    name : str
        A name of ``SYSTEMS``.

    Returns
    -------
    PublishedSystem

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name not in SYSTEMS:
        raise ValueError(f"unknown published system {name!r}; known: {', '.join(SYSTEMS)}")
    return SYSTEMS[name]


def read_records(published: PublishedSystem, paths: Iterable[str | Path]) -> list[Record]:
    """The records of ``published``'s files at ``paths`` (in the order of its ``files``), in
    their published order.

    Parameters
    ----------
    published : PublishedSystem
        The system.
    paths : iterable of str or Path
        Its files, as fetched; each named as in ``published.files``.

    Returns
    -------
    list of Record

    Raises
    ------
    ValueError
        Naming the file, for a file the system does not have, a missing one, no JSON, or a record
        without the fields of its layout.
    """
    by_name = {Path(p).name: Path(p) for p in paths}
    unknown = sorted(set(by_name) - set(published.files))
    missing = [f for f in published.files if f not in by_name]
    if unknown or missing:
        raise ValueError(f"published system {published.name!r} reads {', '.join(published.files)}; "
                         f"got unknown {unknown}, missing {missing}")
    records = []
    for file in published.files:
        path = by_name[file]
        try:
            data = json.loads(read_text(path))
            records += (_passage_records(data) if published.reading == "word"
                        else _context_records(data, published.mode))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise ValueError(f"published samples {path}: not the authors' {published.name} layout "
                             f"({type(err).__name__}: {err})") from err
    return records


def _context_records(data: dict, mode: str | None) -> list[Record]:
    """The records of a contexts-layout file (Bloom, ChatGPT), in the order of its keys."""
    records = []
    for index in sorted(data, key=int):
        entry = data[index]
        block = entry if mode is None else entry[mode]
        generations, words = block["original_generations"], block["processed_generations"]
        draws = ((generations, 1),) if isinstance(generations, str) else tuple((g, 1) for g in generations)
        place = entry["original_positioning"]
        records.append(Record((int(place["text_id"]), int(place["word_num"])), entry["context"],
                              draws, tuple((w, 1) for w in words)))
    return records


def _passage_records(data: dict) -> list[Record]:
    """The records of a passages-layout file (GPT-2), passage by passage in the file's order;
    the authors lowercase a sampled word before they look for ``FAILED`` (``gpt2_processing*``
    notebooks), which a failed draw then never equals."""
    records = []
    for text_id, positions in data.items():
        for word_num, entry in positions.items():
            draws = tuple((s["pred"], int(s["count"])) for s in entry["ancestral_samples"])
            records.append(Record((int(text_id), int(word_num)), entry["context"]["text"], draws,
                                  tuple((w.lower(), n) for w, n in draws)))
    return records


MACROMAN = {"Õ": "'", "Ñ": "—"}
"""The MacRoman characters of the published contexts as Latin-1 reads them, and what they are."""


def context_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a context that hold a word, MacRoman characters repaired (``MACROMAN``):
    two contexts are the same text when these are equal, so an em dash, counted as a token in one
    copy of a passage and absent from another, does not part them.

    Parameters
    ----------
    text : str
        A context, its tokens separated by single spaces.

    Returns
    -------
    tuple of str
    """
    for wrong, right in MACROMAN.items():
        text = text.replace(wrong, right)
    return tuple(t for t in text.split(" ") if has_word_char(t))


@dataclass(frozen=True)
class Placement:
    """Records placed on the corpus's contexts: the kept records by corpus key (the first
    record of each key), the records moved to another key than the published one
    (``(published key, corpus key)``), and the keys of records left out as repeats of a context
    an earlier record placed."""

    records: dict[tuple[int, int], Record]
    moved: tuple[tuple[tuple[int, int], tuple[int, int]], ...]
    repeats: tuple[tuple[int, int], ...]

    def describe(self, name: str) -> str:
        """One log line: the records kept, moved and repeated.

        Parameters
        ----------
        name : str
            The system, named in the line.

        Returns
        -------
        str
        """
        moved = ", ".join(f"{a} -> {b}" for a, b in self.moved) or "none"
        return (f"published {name}: {len(self.records)} contexts; moved to the context of their text: {moved}; "
                f"{len(self.repeats)} repeats of a context left out: {list(self.repeats)}")


def corpus_contexts(norms: pd.DataFrame) -> dict[tuple[int, int], str]:
    """The context of every position of the Provo norms (``varprobe.data.provo.read_norms``),
    positions the loader drops included: its passage's first ``Word_Number - 1`` tokens.

    Parameters
    ----------
    norms : pandas.DataFrame
        The norms as read.

    Returns
    -------
    dict of (int, int) to str
    """
    positions = norms.drop_duplicates(["Text_ID", "Word_Number"])
    return {(int(t), int(k)): " ".join(text.split(" ")[: int(k) - 1])
            for t, k, text in zip(positions["Text_ID"], positions["Word_Number"], positions["Text"], strict=True)}


def locate_records(records: Iterable[Record],
                   corpus: dict[tuple[int, int], str]) -> list[tuple[tuple[int, int], Record]]:
    """Each record with the corpus context whose text its context is (``context_tokens``): its
    published key where that context is its text, else the context of its passage that is.

    Parameters
    ----------
    records : iterable of Record
        A system's records, in published order.
    corpus : dict of (int, int) to str
        Every corpus position's context (``corpus_contexts``).

    Returns
    -------
    list of ((int, int), Record)
        The corpus key and the record, in published order.

    Raises
    ------
    ValueError
        Naming the first record whose context is no context of its passage.
    """
    by_text = {}
    for key, text in corpus.items():
        by_text.setdefault((key[0], context_tokens(text)), key)
    located = []
    for record in records:
        tokens = context_tokens(record.context)
        own = corpus.get(record.key)
        key = record.key if own is not None and context_tokens(own) == tokens else by_text.get((record.key[0], tokens))
        if key is None:
            raise ValueError(f"published record {record.key}: its context ({record.context[-60:]!r}) is no "
                             f"context of passage {record.key[0]}")
        located.append((key, record))
    return located


def place_records(located: Iterable[tuple[tuple[int, int], Record]]) -> Placement:
    """The placement of located records (``locate_records``): a context located twice keeps its
    first record (Bloom's file repeats 13 contexts, with the same seeded draws).

    Parameters
    ----------
    located : iterable of ((int, int), Record)
        The records with their corpus keys, in published order.

    Returns
    -------
    Placement
    """
    placed, moved, repeats = {}, [], []
    for key, record in located:
        if key in placed:
            repeats.append(record.key)
            continue
        if key != record.key:
            moved.append((record.key, key))
        placed[key] = record
    return Placement(placed, tuple(moved), tuple(repeats))
