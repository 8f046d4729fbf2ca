"""The human and oracle rows of Ilia & Aziz (2024) Table 1 under the authors' own protocol, as
named switches on ours.

Those rows depend on the Provo responses alone, so every difference between the paper's digits
and ours is a difference of definition. Each definition in which the authors' code
(github.com/evgeniael/predict_next_word, commit 027ffaa, ``TVD/Oracle/oracle_processing.ipynb``,
cited as cell:line) differs from ours (``varprobe.analysis.next_word``) is one field of
``Protocol``; all fields off is our protocol, all on (``AUTHORS``) is theirs:

* ``raw_responses``: a response is its string lowercased (cell 5:10), punctuation kept, a
  punctuation-only response kept as a word; a string pandas reads as missing (``<NA>``, ...)
  is a response that is split but left out of every distribution (cell 5:9). Ours: the word it
  reads as (``varprobe.words.read_word``); responses without a word are dropped.
* ``raw_corpus_word``: the corpus word is the passage token as printed, punctuation and case
  kept (``Text.split(' ')[Word_Number - 1]``, ``TVD/GPT2/GPT2_sampling.py`` lines 37 and 307),
  compared with lowercased responses (cell 6:6-9). Ours: the word the token reads as.
* ``authors_contexts``: every position of the norms file (position (18, 3), which mixes two
  positions' responses, included) but the last (``range(len(human_samples) - 1)``, cells 12:9 and
  17:14). Ours: every position but (18, 3) (``varprobe.data.provo.AMBIGUOUS_POSITIONS``).
* ``authors_split``: oracle 1 is ``half`` = 20 responses drawn without replacement and oracle 2
  the rest, after one response drawn at random is removed from an odd number
  (``sample_oracle_without_replacement_disjoint_groups``, cell 4), with Python's ``random``.
  Ours: a uniform permutation, floor(n/2) to oracle 1 and the rest to oracle 2
  (``varprobe.metrics.distributions.split_counts``).
* ``shared_seed``: split r is seeded by r alone, the same seed for every context
  (``random.seed(seed)``, cell 4:5, with ``seed = k`` or 1). Contexts with as many responses
  then draw the same positions of their response lists, so one split's mean over contexts
  varies across seeds far more than independent splits' would. Ours: seeded per context,
  ``SeedSequence([seed, text_id, word_number, r])``
  (``varprobe.analysis.next_word.oracle_splits``).
* ``carried_removal``: the response that split removes from an odd number stays removed: the
  list is mutated in place (cell 4:11). The authors' kernel first split every context with seed
  1 (the GPT-2 loop, ``TVD/GPT2/gpt2_processing.ipynb`` cell 10:22, run there before cell 12:
  the per-context TVDs of ``TVD_oracle.json`` are reproduced exactly only so), so the human
  distribution of both rows is that of the n - 1 responses left by the removal of split
  ``SINGLE_SPLIT``'s seed (1 under ``shared_seed``, else that context's). Ours: all n responses.
* ``single_split``: the oracle's expected TVD and its ECEs against the corpus word and the human
  majority come from one split, seed 1 (cell 17:18); its ECE against the oracle-1 majority is
  averaged over 20 splits as ours is (cell 17:32-36, cell 20). Ours: all three averaged over the
  resplits. Under our splitter the single split is resplit ``SINGLE_SPLIT``.
* ``first_max_ties``: a distribution's mode is the first of its most probable words in the order
  of its responses (``torch.argmax`` and ``list.index(max(...))``, cell 6:6-8): the norms file's
  order for all responses and oracle 2, the draw's order for oracle 1. Ours: the
  lexicographically smallest (``varprobe.metrics.distributions.mode``).
* ``authors_bins``: ECE bins are ``[i, i + 0.1)`` for ``i`` in ``np.arange(0, 1, 0.1)`` over
  float32 confidences (cell 10:11-13; the probabilities are ``torch.Tensor``, cell 5:14), so a
  confidence of exactly 1 falls in no bin and adds nothing, while it still counts in N. Ours:
  ``varprobe.metrics.calibration.ece`` (the last bin closed).

The human row's ECE against the oracle-1 majority that the paper prints (0.19) is not the
human's: cell 15:5 averages ``ece_gpt2_oracle_maj``, GPT-2's list, left in the kernel by the
GPT-2 notebook (its cell 14-16 prints the same 0.18534326110262636); the list cell 12 fills for
the human, ``ece_human_oracle_maj``, is never read. ``protocol_values`` gives the human's.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ControlSettings
from varprobe.data.provo import AMBIGUOUS_POSITIONS
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import mode, split_counts, tvd
from varprobe.words import read_word

SINGLE_SPLIT = 1
"""The seed of the authors' one split (cell 17:18), and the resplit our splitter puts there."""

AUTHORS_HALF = 20
"""The size of the authors' oracle 1 (``N = 20``, cell 4:1)."""

MISSING_STRINGS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
"""The strings ``pandas.read_csv`` reads as missing by default, as the authors read the norms
(``TVD/GPT2/GPT2_sampling.py`` line 20)."""

VALUES = (
    "human_ece_corpus", "human_ece_human_majority", "human_ece_oracle_majority",
    "oracle_ece_corpus", "oracle_ece_human_majority", "oracle_ece_oracle_majority",
    "oracle_expected_tvd",
)
"""The seven human and oracle values of Table 1, in the order of ``PAPER``."""

PAPER = dict(zip(VALUES, (0.14, 0.60, 0.19, 0.11, 0.57, 0.32, 0.42), strict=True))
"""Table 1 as printed: ECE rows Original, Human Maj., Oracle1 Maj. of the columns Human and
Oracle2, and Oracle2's Avg TVD."""


@dataclass(frozen=True, kw_only=True)
class Protocol:
    """Which of the authors' definitions replace ours (module docstring); all off is ours."""

    raw_responses: bool = False
    raw_corpus_word: bool = False
    authors_contexts: bool = False
    authors_split: bool = False
    shared_seed: bool = False
    carried_removal: bool = False
    single_split: bool = False
    first_max_ties: bool = False
    authors_bins: bool = False


SWITCHES = tuple(f.name for f in fields(Protocol))
OURS = Protocol()
AUTHORS = Protocol(**dict.fromkeys(SWITCHES, True))


@dataclass(frozen=True)
class Context:
    """One position: its key, its passage token and its responses, one entry per response in
    the norms' order (None: a response read as missing)."""

    key: tuple[int, int]
    token: str
    responses: tuple[str | None, ...]


def read_contexts(norms: pd.DataFrame, protocol: Protocol) -> list[Context]:
    """The contexts of a norms table (``varprobe.data.provo.read_norms``, in its row order)
    under ``protocol``'s ``authors_contexts`` and ``raw_responses``.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : Protocol
        The protocol's switches.

    Returns
    -------
    list of Context
        One per context, in the norms' order.

    Raises
    ------
    ValueError
        When a position has no token in its passage's text.
    """
    contexts = []
    for (text_id, word_number), rows in norms.groupby(["Text_ID", "Word_Number"], sort=False):
        key = (int(text_id), int(word_number))
        tokens = rows["Text"].iloc[0].split(" ")
        if not 1 <= key[1] <= len(tokens):
            raise ValueError(f"Provo norms: position {key} has no token in its passage's Text")
        responses = [
            word
            for response, count in zip(rows["Response"], rows["Response_Count"], strict=True)
            for word in [_read_response(response, protocol.raw_responses)] * int(count)
            if word != ""
        ]
        contexts.append(Context(key, tokens[key[1] - 1], tuple(responses)))
    if protocol.authors_contexts:
        return contexts[:-1]
    return [c for c in contexts if c.key not in AMBIGUOUS_POSITIONS]


def _read_response(response: str, raw: bool) -> str | None:
    if not raw:
        return read_word(response)
    return None if response in MISSING_STRINGS else response.lower()


def authors_remove_odd(words: list, rng: random.Random) -> None:
    """Remove, in place, one of an odd number of responses drawn with ``rng`` (cell 4:9-11).

    Parameters
    ----------
    words : list
        The responses; modified in place.
    rng : random.Random
        The authors' generator.

    Returns
    -------
    None
    """
    if len(words) % 2 == 1:
        words.remove(rng.sample(words, 1)[0])


def authors_split(words: Sequence, seed: int, half: int = AUTHORS_HALF) -> tuple[list, list]:
    """Oracle 1 and oracle 2 as the authors draw them (cell 4): with ``random.seed(seed)``, one
    response removed from an odd number, ``half`` drawn for oracle 1, the rest (in their order)
    oracle 2. ``words`` is not changed.

    Parameters
    ----------
    words : sequence
        One context's responses.
    seed : int
        The seed of ``random.seed``.
    half : int, optional
        The size of oracle 1.

    Returns
    -------
    oracle1 : list
    oracle2 : list

    Raises
    ------
    ValueError
        When there are not more than ``half`` responses (after the odd one's removal).
    """
    rng = random.Random(seed)
    pool = list(words)
    authors_remove_odd(pool, rng)
    if len(pool) <= half:
        raise ValueError(f"the authors' split needs more than {half} responses (even), got {len(words)}")
    first = rng.sample(pool, half)
    for item in first:
        pool.remove(item)
    return first, pool


def counts_of(words: Iterable[str | None]) -> dict[str, int]:
    """The counts of the words present, in the order of their first response.

    Parameters
    ----------
    words : iterable of str or None
        Responses; None for a response holding no word.

    Returns
    -------
    dict of str to int
    """
    return dict(Counter(w for w in words if w is not None))


def distribution(counts: dict[str, int]) -> dict[str, float]:
    """The MLE n(w)/n, in the order of ``counts``.

    Parameters
    ----------
    counts : dict of str to int
        Word counts.

    Returns
    -------
    dict of str to float
        Probabilities summing to 1.

    Raises
    ------
    ValueError
        When ``counts`` is empty.
    """
    total = sum(counts.values())
    if total == 0:
        raise ValueError("a distribution of no responses")
    return {w: n / total for w, n in counts.items()}


def protocol_mode(p: dict[str, float], first_max: bool) -> tuple[str, float]:
    """The mode and its probability: the first most probable word in ``p``'s order
    (``first_max``) or the lexicographically smallest (``varprobe.metrics.distributions.mode``).

    Parameters
    ----------
    p : dict of str to float
        A word distribution.
    first_max : bool
        Whether ties go to the first word in ``p``'s order.

    Returns
    -------
    mode : str
    probability : float
    """
    if first_max:
        word = max(p, key=p.get)
        return word, p[word]
    return mode(p)


def authors_ece(confidences, correct, n_bins: int = 10) -> float:
    """ECE as the authors compute it (cell 10): bins ``[i, i + 1/n_bins)`` for ``i`` in
    ``np.arange(0, 1, 1/n_bins)``, over float32 confidences, weighted by |B|/N with N all items;
    a confidence of 1 is in no bin and adds 0.

    Parameters
    ----------
    confidences : array_like of float
        Each item's confidence, in [0, 1].
    correct : array_like of bool
        Whether each item's prediction is right.
    n_bins : int, optional
        The number of bins.

    Returns
    -------
    float

    Examples
    --------
    >>> authors_ece([1.0, 0.5], [False, True], n_bins=10)
    0.25
    """
    conf = np.asarray(confidences, dtype=np.float32).astype(float)
    hit = np.asarray(correct, dtype=float)
    total = 0.0
    for low in np.arange(0, 1, 1 / n_bins):
        inside = (conf >= low) & (conf < low + 1 / n_bins)
        if inside.any():
            total += abs(conf[inside].mean() - hit[inside].mean()) * inside.sum() / conf.size
    return float(total)


@dataclass(frozen=True, kw_only=True)
class Scores:
    """Per context (rows) and split (columns) what the ECEs and the expected TVD average.

    ``human_conf`` (contexts,), ``human_hits`` (contexts, 2 + R): the human mode against the corpus
    word, itself and O1_r; ``oracle_conf`` (contexts, R); ``oracle_hits`` (contexts, R, 3): O2_r's
    mode against the corpus word, the human majority and O1_r's mode; ``tvds`` (contexts, R)."""

    human_conf: np.ndarray
    human_hits: np.ndarray
    oracle_conf: np.ndarray
    oracle_hits: np.ndarray
    tvds: np.ndarray


def protocol_scores(
    norms: pd.DataFrame, protocol: Protocol, settings: ControlSettings, half: int = AUTHORS_HALF
) -> Scores:
    """The per-context, per-split confidences, hits and TVDs of ``protocol_values``.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : Protocol
        The protocol's switches.
    settings : ControlSettings
        Seed, resplits and ECE bins.
    half : int, optional
        The size of oracle 1.

    Returns
    -------
    Scores
    """
    first = protocol.first_max_ties
    human_conf, human_hits, oracle_conf, oracle_hits, tvds = [], [], [], [], []
    for ctx in read_contexts(norms, protocol):
        words = list(ctx.responses)
        if protocol.carried_removal:
            seed = split_seed(ctx.key, SINGLE_SPLIT, protocol=protocol, settings=settings)
            authors_remove_odd(words, random.Random(seed))
        human = distribution(counts_of(words))
        majority, confidence = protocol_mode(human, first)
        gold = ctx.token if protocol.raw_corpus_word else read_word(ctx.token)
        halves = [oracle_halves(ctx.key, words, r, protocol=protocol, settings=settings, half=half)
                  for r in range(settings.resplits)]
        o1_modes = [protocol_mode(o1, first)[0] for o1, _ in halves]
        o2_modes = [protocol_mode(o2, first) for _, o2 in halves]
        human_conf.append(confidence)
        human_hits.append([majority == gold, True, *(majority == m for m in o1_modes)])
        oracle_conf.append([p for _, p in o2_modes])
        oracle_hits.append([[w == gold, w == majority, w == m]
                            for (w, _), m in zip(o2_modes, o1_modes, strict=True)])
        tvds.append([tvd(o2, o1) for o1, o2 in halves])
    return Scores(human_conf=np.array(human_conf), human_hits=np.array(human_hits, dtype=bool),
                  oracle_conf=np.array(oracle_conf), oracle_hits=np.array(oracle_hits, dtype=bool),
                  tvds=np.array(tvds))


def resplit_values(scores: Scores, protocol: Protocol, settings: ControlSettings) -> pd.DataFrame:
    """Per split r (rows): the seven values from split r alone, so the spread of a one-split
    value shows (the authors' seed 1 is row ``SINGLE_SPLIT``). The human's ECEs against the
    corpus word and its own mode have no split and repeat.

    Parameters
    ----------
    scores : Scores
        ``protocol_scores``'s result.
    protocol : Protocol
        The protocol's switches.
    settings : ControlSettings
        Seed, resplits and ECE bins.

    Returns
    -------
    pandas.DataFrame
        One row per split, one column per value of ``VALUES``.
    """
    score = authors_ece if protocol.authors_bins else ece
    bins = settings.ece_bins
    human_corpus = score(scores.human_conf, scores.human_hits[:, 0], bins)
    human_majority = score(scores.human_conf, scores.human_hits[:, 1], bins)
    return pd.DataFrame([
        {
            "human_ece_corpus": human_corpus,
            "human_ece_human_majority": human_majority,
            "human_ece_oracle_majority": score(scores.human_conf, scores.human_hits[:, 2 + r], bins),
            "oracle_ece_corpus": score(scores.oracle_conf[:, r], scores.oracle_hits[:, r, 0], bins),
            "oracle_ece_human_majority": score(scores.oracle_conf[:, r], scores.oracle_hits[:, r, 1], bins),
            "oracle_ece_oracle_majority": score(scores.oracle_conf[:, r], scores.oracle_hits[:, r, 2], bins),
            "oracle_expected_tvd": float(scores.tvds[:, r].mean()),
        }
        for r in range(settings.resplits)
    ], columns=list(VALUES))


def protocol_values(
    norms: pd.DataFrame,
    protocol: Protocol,
    settings: ControlSettings,
    half: int = AUTHORS_HALF,
) -> dict[str, float]:
    """The seven human and oracle values of Table 1 (``VALUES``) from a norms table.

    Per context, with H the responses' MLE (after the carried removal, if on), O1_r and O2_r
    the halves of split r = 0..R-1 (R = ``settings.resplits``) and m(.) the mode:

    * human: confidence H(m(H)), hit m(H) == gold, gold the corpus word, m(H) or m(O1_r);
    * oracle: confidence O2_r(m(O2_r)), hit m(O2_r) == the same golds; expected TVD = mean over
      contexts of TVD(O2_r, O1_r).

    An ECE against O1_r is the mean over r of the ECE of split r; the oracle's other ECEs and
    its expected TVD are that mean too, or those of split ``SINGLE_SPLIT`` alone
    (``single_split``). ``half`` is the authors' oracle-1 size (20; smaller for a small corpus).

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : Protocol
        The protocol's switches.
    settings : ControlSettings
        Seed, resplits and ECE bins.
    half : int, optional
        The size of oracle 1.

    Returns
    -------
    dict of str to float
        Each value of ``VALUES``.

    Raises
    ------
    ValueError
        When ``single_split`` is on and there are not more than ``SINGLE_SPLIT`` resplits.
    """
    if protocol.single_split and settings.resplits <= SINGLE_SPLIT:
        raise ValueError(f"single_split needs resplits > {SINGLE_SPLIT}, got {settings.resplits}")
    per_split = resplit_values(protocol_scores(norms, protocol, settings, half), protocol, settings)
    single = ("oracle_ece_corpus", "oracle_ece_human_majority", "oracle_expected_tvd")
    return {
        name: float(per_split[name].iloc[SINGLE_SPLIT] if protocol.single_split and name in single
                    else per_split[name].mean())
        for name in VALUES
    }


def split_seed(key: tuple[int, int], r: int, *, protocol: Protocol, settings: ControlSettings) -> int:
    """The seed of the authors' ``random`` for split r of a context: r itself (``shared_seed``),
    else one drawn from ``SeedSequence([seed, text_id, word_number, r])``.

    Parameters
    ----------
    key : (int, int)
        The context's ``(text_id, word_number)``.
    r : int
        The split, 0-based.
    protocol : Protocol
        The protocol's switches.
    settings : ControlSettings
        The seed.

    Returns
    -------
    int
    """
    if protocol.shared_seed:
        return r
    return int(np.random.SeedSequence([settings.seed, *key, r]).generate_state(1)[0])


def oracle_halves(
    key: tuple[int, int], words: Sequence, r: int, *, protocol: Protocol, settings: ControlSettings,
    half: int = AUTHORS_HALF,
) -> tuple[dict[str, float], dict[str, float]]:
    """Split r of the responses ``words`` of context ``key``, as the MLEs (O1, O2), under
    ``protocol``'s ``authors_split`` and ``shared_seed``.

    Parameters
    ----------
    key : (int, int)
        The context's ``(text_id, word_number)``.
    words : sequence
        Its responses.
    r : int
        The split, 0-based.
    protocol : Protocol
        The protocol's switches.
    settings : ControlSettings
        The seed.
    half : int, optional
        The size of oracle 1.

    Returns
    -------
    oracle1 : dict of str to float
    oracle2 : dict of str to float
    """
    if protocol.authors_split:
        first, second = authors_split(words, split_seed(key, r, protocol=protocol, settings=settings), half)
        return distribution(counts_of(first)), distribution(counts_of(second))
    entropy_seed = [settings.seed, r] if protocol.shared_seed else [settings.seed, *key, r]
    first, second = split_counts(counts_of(words), np.random.default_rng(np.random.SeedSequence(entropy_seed)))
    return distribution(first), distribution(second)


SWITCH_TABLE_COLUMNS = ("protocol", "switch", *VALUES)


def switch_matrix(ours, authors, switches: tuple[str, ...]) -> list[tuple[str, str, object]]:
    """The protocols a switch table compares, in its rows' order: ours, ours with each switch on
    alone, the authors', and theirs with each switch off alone.

    Parameters
    ----------
    ours, authors : dataclass
        The protocol with every switch off and with every switch on.
    switches : tuple of str
        The switches' field names.

    Returns
    -------
    list of (str, str, dataclass)
        ``(protocol, switch, its switches)``: ``protocol`` is ``ours``, ``ours + switch``,
        ``authors`` or ``authors - switch``; ``switch`` the one turned on or off, "" for the others.
    """
    return [("ours", "", ours), *(("ours + switch", s, replace(ours, **{s: True})) for s in switches),
            ("authors", "", authors), *(("authors - switch", s, replace(authors, **{s: False})) for s in switches)]


def switch_table(
    norms: pd.DataFrame, settings: ControlSettings, half: int = AUTHORS_HALF
) -> pd.DataFrame:
    """The seven values (``VALUES``) under ours, each switch on alone, the authors' protocol,
    the authors' with each switch off alone, and the paper's printed digits (schema
    ``provo_authors``).

    ``protocol`` is ``ours``, ``ours + switch``, ``authors``, ``authors - switch`` or ``paper``;
    ``switch`` names the switch turned on (or off) alone, empty for the others.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    settings : ControlSettings
        Seed, resplits and ECE bins.
    half : int, optional
        The size of oracle 1.

    Returns
    -------
    pandas.DataFrame
        A ``provo_authors`` table.
    """
    rows = [_row(label, name, norms, protocol, settings, half)
            for label, name, protocol in switch_matrix(OURS, AUTHORS, SWITCHES)]
    rows.append({"protocol": "paper", "switch": "", **PAPER})
    return pd.DataFrame(rows, columns=list(SWITCH_TABLE_COLUMNS))


def _row(label: str, switch: str, norms, protocol, settings, half) -> dict:
    return {"protocol": label, "switch": switch, **protocol_values(norms, protocol, settings, half)}
