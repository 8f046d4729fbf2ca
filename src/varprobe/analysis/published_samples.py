"""Ilia & Aziz (2024)'s published samples (``varprobe.data.published_generations``) scored two ways.

*Our protocol* (``samples_table``): every published draw is a draw whose first complete word our
rule reads (``varprobe.words.first_word``), written as a samples CSV for ``provo-ingest``
(``varprobe.sampling.external``): a continuation (Bloom) is read as the model's own draws are,
its text before the first whitespace the glue to the context's last word, so a draw that extends
that word (``'s parents``) fails; a reply (ChatGPT) or a word of the authors' sampler (GPT-2) is
read as text that starts a new word, ``Failed to generate word`` as a failed draw; a list reply
(ChatGPT's list mode) is read by ``varprobe.api.word_lists.parse_word_list``, its first
``LIST_WORDS`` items with a word the draws, as the list mode of an API model is. Each record sits
at the context of its text (``place_records``); then the rows go through the same path as any
samples file: ingest, divergences, the summary and Table 1.

*The authors' protocol* (``model_values`` under ``AUTHORS_MODEL``): Table 1's four values of a model column as the
authors' notebooks compute them from the same files (``TVD/BLOOM/bloom_processing.ipynb`` cell
12, ``TVD/ChatGPT/chatgpt_processing.ipynb`` cells 14 and 25, ``TVD/GPT2_Temp/
gpt2_processing_temp.ipynb`` cells 13-14, github.com/evgeniael/predict_next_word, commit 027ffaa):

* the records in published order, the last left out (``range(len(samples) - 1)``), repeats
  included;
* the model's words the authors' (``processed_generations``, the GPT-2 sampler's ``pred``), less
  ``Failed to generate word`` and ``nan``, lowercased (GPT-2's are lowercased before, so a failed
  draw stays in as a word);
* the responses those of the published position, read as the authors read them
  (``varprobe.analysis.authors_protocol``, ``raw_responses``; where the norms lack the position,
  those of the record's context: GPT-2's file repeats (3, 58) as (3, 59)); the corpus word the
  token that follows the record's context, as printed (``raw_corpus_word``, ``locate_records``).
  The two part in passage 36, whose copy the authors cut contexts and corpus words from holds an
  em-dash token the norms' numbering does not count: the record published as (36, 30) continues
  "... it's a smart" and is scored against the corpus word "investment" (our (36, 29)) and the
  responses of (36, 30), which continue "... a smart investment"; so read, the corpus-word ECEs
  are the notebooks' to every digit;
* modes the first most probable word (``first_max_ties``); the oracle-1 majority of split
  k = 0..19 drawn with ``random.seed(k)`` from the responses left by split 1's removal of one of
  an odd number (``shared_seed``, ``authors_split``, ``carried_removal``); ECEs in the authors'
  bins (``authors_bins``).

*Between them* (``model_switch_table``): each of those definitions is a switch of
``ModelProtocol`` (``MODEL_SWITCHES``), turned on alone in ours and off alone in theirs, so the
table says which of them moves each value, and how far.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pandas as pd

from varprobe.analysis.authors_protocol import (
    SINGLE_SPLIT,
    Protocol,
    split_seed,
    authors_ece,
    authors_remove_odd,
    counts_of,
    distribution,
    oracle_halves,
    protocol_mode,
    read_contexts,
    switch_matrix,
)
from varprobe.analysis.next_word import ControlSettings
from varprobe.api.word_lists import parse_word_list
from varprobe.data.provo import AMBIGUOUS_POSITIONS
from varprobe.data.published_generations import FAILED, Placement, PublishedSystem, Record, place_records
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import tvd
from varprobe.words import first_word, read_word

LIST_WORDS = 40
"""The words a list reply was asked for (``n_samples = 40``, ``TVD/ChatGPT/api_chatgpt.py``):
its first 40 items with a word are its draws."""

SAMPLES_COLUMNS = ("text_id", "word_number", "sample", "count")
"""The columns of a samples CSV (``varprobe.sampling.external``)."""

AUTHORS_VALUES = ("ece_corpus", "ece_human_majority", "ece_oracle_majority", "expected_tvd")
"""Table 1's four values of a model column, in the order of the paper's rows."""


def continuation_sample(text: str) -> str:
    """A continuation of the context as text that starts a new word and reads as the same first
    word: the text from its first whitespace on when what precedes it is punctuation glued to the
    context's last word, ``""`` (a failed draw) when the continuation holds no complete word or
    extends that last word (``varprobe.words.first_word``).

    Parameters
    ----------
    text : str
        The text generated after the context.

    Returns
    -------
    str

    Examples
    --------
    >>> continuation_sample(", if not counter-product")
    ' if not counter-product'
    >>> continuation_sample("'s parents put him on")
    ''
    """
    if not first_word(text, ended=True).word:
        return ""
    return text if text[:1].isspace() else text[len(text.split(None, 1)[0]):]


def draw_samples(published: PublishedSystem, record: Record) -> list[tuple[str, int]]:
    """The ``(sample, count)`` rows of one record under our protocol (module docstring).

    Parameters
    ----------
    published : PublishedSystem
        The record's system (its ``reading``).
    record : Record
        A published record.

    Returns
    -------
    list of (str, int)
    """
    if published.reading == "continuation":
        return [(continuation_sample(text), n) for text, n in record.draws]
    if published.reading == "list":
        items = [item for text, _ in record.draws for item in parse_word_list(text, truncated=False).items
                 if item.word]
        return [(item.text, 1) for item in items[:LIST_WORDS]]
    return [("" if text == FAILED else text, n) for text, n in record.draws]


def samples_table(published: PublishedSystem, placement: Placement) -> pd.DataFrame:
    """The samples CSV's rows (``SAMPLES_COLUMNS``) of the placed records, by context.

    Parameters
    ----------
    published : PublishedSystem
        The system.
    placement : Placement
        Its records at their corpus contexts (``place_records``).

    Returns
    -------
    pandas.DataFrame
        One row per draw (per distinct word of the authors' sampler, with its count), contexts
        in (text_id, word_number) order.
    """
    rows = [(key[0], key[1], sample, count) for key in sorted(placement.records)
            for sample, count in draw_samples(published, placement.records[key])]
    return pd.DataFrame(rows, columns=list(SAMPLES_COLUMNS))


@dataclass(frozen=True, kw_only=True)
class ModelProtocol(Protocol):
    """``Protocol``'s switches for a model's column of Table 1, with the one a model's draws add:
    ``authors_words``, a draw's word is the authors' (their ``processed_generations``, the GPT-2
    sampler's ``pred``), ``Failed to generate word`` and ``nan`` dropped, lowercased
    (``get_estimator_unbiased``). Ours: the first word our rule reads from the draw
    (``draw_samples``, then ``varprobe.words.first_word`` as ``provo-ingest`` reads a samples
    file), a draw without one left out."""

    authors_words: bool = False


MODEL_SWITCHES = ("authors_words", "raw_responses", "raw_corpus_word", "authors_contexts", "authors_split",
                  "shared_seed", "carried_removal", "first_max_ties", "authors_bins")
"""The switches that bear on a model's column (``single_split`` bears on the oracle's only)."""

AUTHORS_MODEL = ModelProtocol(**dict.fromkeys(MODEL_SWITCHES, True))
"""The authors' protocol for a model's column (module docstring)."""

AUTHORS_SPLITS, AUTHORS_BINS = 20, 10
"""The authors' oracle splits of the oracle-majority ECE (seeded by their numbers) and ECE bins."""


def model_values(published: PublishedSystem, located: list[tuple[tuple[int, int], Record]], *,
                 norms: pd.DataFrame, protocol: ModelProtocol, seed: int = 0) -> dict[str, float]:
    """Table 1's four values of a published system under ``protocol`` (``AUTHORS_MODEL``: the
    authors', module docstring), with the number of contexts they average.

    Per scored record i, with M_i the MLE of its words, H_i that of its context's responses and
    O1_ir oracle 1 of split r: ECE of the confidence M_i(m(M_i)) against hits m(M_i) == the corpus
    word, == m(H_i) and == m(O1_ir) (the last averaged over r = 0..R-1); expected TVD the mean of
    TVD(M_i, H_i). The records scored are, under ``authors_contexts``, all in published order but
    the last, repeats included; otherwise each context's first record (``place_records``), but
    at ``varprobe.data.provo.AMBIGUOUS_POSITIONS``. A context without a corpus word (ours) is left
    out of the corpus-word ECE; oracle 1 is split from the responses left by the removal of one of
    an odd number under ``carried_removal`` (H_i is all of them).

    Parameters
    ----------
    published : PublishedSystem
        The records' system (how our rule reads its draws).
    located : list of ((int, int), Record)
        Its records with their corpus keys, in published order (``locate_records``).
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : ModelProtocol
        Which of the authors' definitions replace ours.
    seed : int, optional
        The seed of our splits (unread under ``shared_seed``, whose split r is seeded by r). R is
        the authors' ``AUTHORS_SPLITS`` and the ECE bins ``AUTHORS_BINS`` under either protocol,
        so that two protocols differ by their switches alone.

    Returns
    -------
    dict of str to float
        ``AUTHORS_VALUES`` and ``n_contexts``.

    Raises
    ------
    ValueError
        Under ``authors_words`` and ``authors_contexts``, for a scored record whose words are all
        failed draws (the authors' code has no value for it); otherwise a record without a word
        is left out, as ours leaves out a context without one.
    """
    return _scored(published, located, contexts=_every_context(norms, protocol.raw_responses), protocol=protocol,
                   seed=seed)


def _every_context(norms: pd.DataFrame, raw_responses: bool) -> dict:
    """Every position of the norms (ours and the authors' contexts together), by key, with its
    responses read as ``raw_responses`` says (``read_contexts``)."""
    return {c.key: c for own in (False, True)
            for c in read_contexts(norms, Protocol(raw_responses=raw_responses, authors_contexts=own))}


def _scored(published: PublishedSystem, located: list[tuple[tuple[int, int], Record]], *, contexts: dict,
            protocol: ModelProtocol, seed: int) -> dict[str, float]:
    """``model_values`` on the norms' positions as ``_every_context`` reads them under
    ``protocol.raw_responses``."""
    settings = ControlSettings(seed=seed, resplits=AUTHORS_SPLITS, ece_bins=AUTHORS_BINS)
    if protocol.authors_contexts:
        scored = [(key, contexts.get(record.key, contexts[key]), record) for key, record in located[:-1]]
    else:
        scored = [(key, contexts[key], record) for key, record in sorted(place_records(located).records.items())
                  if key not in AMBIGUOUS_POSITIONS]
    first, score = protocol.first_max_ties, authors_ece if protocol.authors_bins else ece
    confidences, hits, known, tvds = [], [], [], []
    for key, context, record in scored:
        model = _model_estimate(published, record, protocol.authors_words)
        if not model and protocol.authors_words and protocol.authors_contexts:
            raise ValueError(f"published record {record.key}: every draw failed")
        if not model:
            continue
        responses = list(context.responses)
        human = distribution(counts_of(responses))
        top, confidence = protocol_mode(model, first)
        gold = contexts[key].token if protocol.raw_corpus_word else read_word(contexts[key].token)
        if protocol.carried_removal:
            removal = split_seed(key, SINGLE_SPLIT, protocol=protocol, settings=settings)
            authors_remove_odd(responses, random.Random(removal))
        majorities = [protocol_mode(oracle_halves(key, responses, r, protocol=protocol, settings=settings)[0],
                                    first)[0] for r in range(settings.resplits)]
        confidences.append(confidence)
        known.append(bool(gold))
        hits.append([top == gold, top == protocol_mode(human, first)[0], *(top == m for m in majorities)])
        tvds.append(tvd(model, human))
    hits, known, bins = np.array(hits, dtype=bool), np.array(known), settings.ece_bins
    confidences = np.array(confidences)
    return {
        "ece_corpus": score(confidences[known], hits[known, 0], bins),
        "ece_human_majority": score(confidences, hits[:, 1], bins),
        "ece_oracle_majority": float(np.mean([score(confidences, hits[:, 2 + r], bins)
                                              for r in range(settings.resplits)])),
        "expected_tvd": float(np.mean(tvds)),
        "n_contexts": len(tvds),
    }


def model_switch_table(published: PublishedSystem, located: list[tuple[tuple[int, int], Record]],
                       norms: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A published system's four values (``AUTHORS_VALUES``, with ``n_contexts``) under ours, each
    switch of ``MODEL_SWITCHES`` on alone, the authors' protocol and theirs with each switch off
    alone (``switch_matrix``): which of the authors' definitions moves each value, and how far.

    Parameters
    ----------
    published : PublishedSystem
        The system.
    located : list of ((int, int), Record)
        Its records with their corpus keys, in published order.
    norms : pandas.DataFrame
        The Provo norms as read.
    seed : int
        The seed of our splits (``model_values``).

    Returns
    -------
    pandas.DataFrame
        Columns ``protocol``, ``switch``, ``AUTHORS_VALUES`` and ``n_contexts``.
    """
    readings = {raw: _every_context(norms, raw) for raw in (False, True)}
    matrix = switch_matrix(ModelProtocol(), AUTHORS_MODEL, MODEL_SWITCHES)
    return pd.DataFrame([{"protocol": label, "switch": switch,
                          **_scored(published, located, contexts=readings[protocol.raw_responses], protocol=protocol,
                                    seed=seed)}
                         for label, switch, protocol in matrix])


def _model_estimate(published: PublishedSystem, record: Record, authors_words: bool) -> dict[str, float]:
    """The MLE of a record's words: the authors' (``_authors_estimate``), or those our rule reads
    from its draws (``draw_samples``, as ``provo-ingest`` reads them); empty for none."""
    if authors_words:
        return _authors_estimate(w for w, n in record.authors_words for _ in range(n))
    words = [word for sample, n in draw_samples(published, record)
             for word in [first_word(" " + sample.lstrip(), ended=True).word] * n if word]
    return distribution(counts_of(words)) if words else {}


def _authors_estimate(words) -> dict[str, float]:
    """The authors' ``get_estimator_unbiased``: ``FAILED`` and ``nan`` dropped, the rest
    lowercased, the MLE in the order of first appearance (empty for no word)."""
    kept = [w.lower() for w in words if w != FAILED and w != "nan"]
    return distribution(counts_of(kept)) if kept else {}
