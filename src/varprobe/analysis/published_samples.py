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

*The authors' protocol* (``authors_values``): Table 1's four values of a model column as the
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
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pandas as pd

from varprobe.analysis.authors_protocol import (
    SINGLE_SPLIT,
    Protocol,
    authors_ece,
    authors_remove_odd,
    authors_split,
    counts_of,
    distribution,
    protocol_mode,
    read_contexts,
)
from varprobe.api.word_lists import parse_word_list
from varprobe.data.published_generations import FAILED, Placement, PublishedSystem, Record
from varprobe.metrics.distributions import tvd
from varprobe.words import first_word

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


READING = Protocol(raw_responses=True)
"""How the authors read the norms' responses (``raw_responses``; the contexts are the records')."""


def authors_values(located: list[tuple[tuple[int, int], Record]], norms: pd.DataFrame,
                   resplits: int = 20, n_bins: int = 10) -> dict[str, float]:
    """Table 1's four values of a published system under the authors' protocol (module
    docstring), with the number of contexts they average.

    Per record i (all but the last), with M_i the MLE of its words, H_i the responses' and O1_ik
    oracle 1 of split k: ECE of the confidence M_i(m(M_i)) against hits m(M_i) == the corpus word,
    == m(H_i), == m(O1_ik) (the last averaged over k = 0..``resplits`` - 1); expected TVD the mean
    of TVD(M_i, H_i).

    Parameters
    ----------
    located : list of ((int, int), Record)
        A system's records with their corpus keys, in published order (``locate_records``).
    norms : pandas.DataFrame
        The Provo norms as read.
    resplits : int, optional
        The oracle splits of the oracle-majority ECE (the authors': 20).
    n_bins : int, optional
        ECE bins.

    Returns
    -------
    dict of str to float
        ``AUTHORS_VALUES`` and ``n_contexts``.

    Raises
    ------
    ValueError
        For a record whose words are all failed draws (the authors' code has no value for it).
    """
    # Every position: ours leave out (18, 3), the authors' contexts the norms' last.
    contexts = {c.key: c for protocol in (READING, replace(READING, authors_contexts=True))
                for c in read_contexts(norms, protocol)}
    confidences, hits, tvds = [], [], []
    for key, record in located[:-1]:
        model = _authors_estimate(w for w, n in record.authors_words for _ in range(n))
        if not model:
            raise ValueError(f"published record {record.key}: every draw failed")
        responses = list(contexts.get(record.key, contexts[key]).responses)
        human = distribution(counts_of(responses))
        top, confidence = protocol_mode(model, first_max=True)
        authors_remove_odd(responses, random.Random(SINGLE_SPLIT))
        majorities = [protocol_mode(distribution(counts_of(authors_split(responses, k)[0])), first_max=True)[0]
                      for k in range(resplits)]
        confidences.append(confidence)
        hits.append([top == contexts[key].token, top == protocol_mode(human, first_max=True)[0],
                     *(top == m for m in majorities)])
        tvds.append(tvd(model, human))
    hits = np.array(hits, dtype=bool)
    return {
        "ece_corpus": authors_ece(confidences, hits[:, 0], n_bins),
        "ece_human_majority": authors_ece(confidences, hits[:, 1], n_bins),
        "ece_oracle_majority": float(np.mean([authors_ece(confidences, hits[:, 2 + k], n_bins)
                                              for k in range(resplits)])),
        "expected_tvd": float(np.mean(tvds)),
        "n_contexts": len(tvds),
    }


def _authors_estimate(words) -> dict[str, float]:
    """The authors' ``get_estimator_unbiased``: ``FAILED`` and ``nan`` dropped, the rest
    lowercased, the MLE in the order of first appearance (empty for no word)."""
    kept = [w.lower() for w in words if w != FAILED and w != "nan"]
    return distribution(counts_of(kept)) if kept else {}
