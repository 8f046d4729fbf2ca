"""The oracle rows of Ilia & Aziz (2024) Table 4 (App. D: token-level ECE against the human-majority
first token) under the authors' own protocol, as named switches on ours.

Those rows depend on the Provo responses and GPT-2's tokenizer alone, so every difference between
the paper's digits and ours is a difference of definition. The authors' code
(github.com/evgeniael/predict_next_word, commit 027ffaa, ``Additional_Experiments/Appendix_D/``:
``GPT2_sampling_BPE.py`` builds each context's responses, ``GPT2_processing_BPE.py`` writes
``uncertainty_results/cal_metrics_bpe.json``, whose ``ECE_human_maj_truth`` ``oracle_dis_1_human``
and ``oracle_dis_2_human`` ``analysis_bpe.ipynb`` cell 3 prints as Table 4; cited as file:line)
differs from ours (``varprobe.families.token_level.analysis``) in the definitions below, one field of
``TokenProtocol`` each; all off is ours, all on (``AUTHORS``) is theirs:

* ``raw_responses``: a response is its string as typed, not lowercased, punctuation kept, a
  punctuation-only response a response; responses alike are summed in the order of their first
  row (``Response.unique()``, sampling 29-33); a string pandas reads as missing (``<NA>``, ``NA``,
  ...: ``read_csv`` with its default NA strings, sampling 20) matches no row and has count 0, so
  it is in no distribution. Ours: the word it reads as (``varprobe.words.read_word``), responses
  without a word dropped, the words in alphabetical order (``varprobe.data.provo.responses_table``).
* ``authors_contexts``: every position of the norms, position (18, 3) (two positions' responses)
  included (processing 263). Ours: every one but (18, 3) (``AMBIGUOUS_POSITIONS``).
* ``word_majority``: the target is the first token of the most frequent *response*
  (``max(human, key=count)['bpe_ind']``, processing 154), not the mode of the first-token
  distribution (the responses sharing a first token summed), as ours is.
* ``first_max_ties``: the target's ties go to the first in the responses' order (Python's
  ``max``, processing 154). Ours: the lexicographically smallest word or smallest token id
  (``varprobe.metrics.distributions.mode``).
* ``authors_split``: oracle 1 is ``N = 20`` responses drawn without replacement and oracle 2 the
  rest, after one response drawn at random is removed from an odd number
  (``sample_oracle_without_replacement_disjoint_groups(20)``, processing 96-124 and 273), with
  Python's ``random`` (``varprobe.analysis.authors_protocol.authors_split``), from the list of
  the responses' first tokens in the responses' order (processing 100-101: the draws depend on
  it, as ``list.remove`` takes a token's first copy). Ours: floor(n/2) of the responses and the
  rest (``varprobe.metrics.distributions.split_counts``), each half then mapped to first tokens.
* ``shared_seed``: the split's random state is ``random.seed(0)`` for every context
  (``oracle(data_per_context, seed=0)``, processing 272 and 103), so contexts with as many
  responses draw the same positions of their response lists, each list in the norms' order, most
  frequent response first: a split's luck is that of every such context at once. Ours: seeded per
  context,
  ``SeedSequence([seed, text_id, word_number, r])`` (``varprobe.analysis.next_word.oracle_splits``).
* ``single_split``: one split (seed 0, processing 272), not the mean over the R resplits of each
  resplit's ECE; under our splitter the single split is resplit ``AUTHORS_SEED``.
* ``authors_bins``: the authors' ECE (``metrics.calculate_ECE``, processing 214-235, over the
  float32 confidences ``torch.max(probs).item()`` of processing 160): a confidence of exactly 1
  is in no bin (``varprobe.analysis.authors_protocol.authors_ece``). Ours:
  ``varprobe.metrics.calibration.ece``.

Shared by both: the first token of a response r is that of ``" " + r`` (sampling 89-90; GPT-2's
tokenizer for the paper's values, each model's own in the run's token-level study), the
oracle's prediction is the mode of its first-token distribution, ties to the smallest id
(``torch.argmax`` over the vocabulary, processing 158; ``mode`` in ours), its confidence that
mode's probability, and a hit is the prediction equal to the target.

The response order matters to ``first_max_ties`` and, under ``authors_split``, to which
responses a seed draws: the authors' is that of the OSF file (by count, then alphabetical, a
response that occurs in two rows summed at its first); the data mirror's rebuild of the norms
(``provo_cloze/PROVENANCE.md``) sorts by the summed count, another order at 434 positions, so
the authors' protocol gives their json's values to every digit on the norms in their order alone
(``tests/data/authors_response_order.json``, from their per-context lists).

Under the authors' protocol the value is one split's, and the shared seed makes its error common
to all contexts with as many responses: one split's ECE then varies over seeds far more than
with a seed per context, and each definition that changes which responses
seed 0 draws (``raw_responses`` reorders the list) moves it. What this module gives on the
Provo norms, which the results page cites, is ``varprobe.results_page.authors_measures.TABLE4_ORACLES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from varprobe.analysis import authors_protocol
from varprobe.analysis.authors_protocol import MISSING_STRINGS, authors_ece, oracle_halves, protocol_mode
from varprobe.analysis.next_word import ControlSettings
from varprobe.families.token_level.analysis import first_tokens
from varprobe.data.provo import AMBIGUOUS_POSITIONS
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import mle
from varprobe.words import read_word

AUTHORS_SEED = 0
"""The seed of the authors' one split (processing 272), and the resplit our splitter puts there."""

ORACLES = ("oracle 1", "oracle 2")
"""The two rows of Table 4 this module measures, as ``token_level_summary`` names them."""

JSON = {"oracle 1": 0.500409376362819, "oracle 2": 0.3957682820830729}
"""``ECE_human_maj_truth`` ``oracle_dis_1_human`` and ``oracle_dis_2_human`` of the authors'
``cal_metrics_bpe.json``, which the paper prints as 0.500 and 0.396."""


@dataclass(frozen=True, kw_only=True)
class TokenProtocol:
    """Which of the authors' definitions replace ours (module docstring); all off is ours."""

    raw_responses: bool = False
    authors_contexts: bool = False
    word_majority: bool = False
    first_max_ties: bool = False
    authors_split: bool = False
    shared_seed: bool = False
    single_split: bool = False
    authors_bins: bool = False


SWITCHES = tuple(f.name for f in fields(TokenProtocol))
OURS = TokenProtocol()
AUTHORS = TokenProtocol(**dict.fromkeys(SWITCHES, True))


def response_counts(norms: pd.DataFrame, protocol: TokenProtocol) -> dict[tuple[int, int], dict[str, int]]:
    """Each context's response counts under ``protocol``'s ``raw_responses`` and
    ``authors_contexts``, the contexts in the norms' order.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read (``varprobe.data.provo.read_norms``), in their row order.
    protocol : TokenProtocol
        The protocol's switches.

    Returns
    -------
    dict of (int, int) to dict of str to int
        ``{(text_id, word_number): {response: count}}``: raw strings in the order of their first
        row (``raw_responses``), else read words in alphabetical order; counts > 0.
    """
    contexts = {}
    for (text_id, word_number), rows in norms.groupby(["Text_ID", "Word_Number"], sort=False):
        key = (int(text_id), int(word_number))
        if key in AMBIGUOUS_POSITIONS and not protocol.authors_contexts:
            continue
        counts: dict[str, int] = {}
        for response, count in zip(rows["Response"], rows["Response_Count"], strict=True):
            word = _read(response, protocol.raw_responses)
            if word and int(count) > 0:
                counts[word] = counts.get(word, 0) + int(count)
        contexts[key] = counts if protocol.raw_responses else dict(sorted(counts.items()))
    return contexts


def _read(response: str, raw: bool) -> str | None:
    if raw:
        return None if response in MISSING_STRINGS else response
    return read_word(response)


@dataclass(frozen=True)
class OracleScores:
    """Per context (rows) and split (columns) each oracle's confidence and hit, shape
    (contexts, splits, 2): oracle 1, then oracle 2."""

    confidences: np.ndarray
    hits: np.ndarray


SPLIT_FIELDS = ("raw_responses", "authors_split", "shared_seed", "single_split")
"""The switches that change the oracles' predictions in a context (``authors_contexts`` adds a
context; the others change the target or the ECE)."""


def oracle_scores(
    norms: pd.DataFrame, protocol: TokenProtocol, settings: ControlSettings, *,
    first_token: Callable[[str], int], half: int = authors_protocol.AUTHORS_HALF,
) -> OracleScores:
    """The oracles' confidences and human-majority hits of ``token_eces``: one split
    (``AUTHORS_SEED``) under ``single_split``, else ``settings.resplits``.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : TokenProtocol
        The protocol's switches.
    settings : ControlSettings
        Seed and resplits.
    first_token : callable
        The first token id of ``" " + response`` (GPT-2's for the paper's values).
    half : int, optional
        The size of the authors' oracle 1.

    Returns
    -------
    OracleScores
    """
    counts = response_counts(norms, protocol)
    ids, confidences = _predictions(counts, protocol, settings, first_token, half)
    return _scored(counts, ids, confidences, protocol, first_token)


def _predictions(counts: dict, protocol: TokenProtocol, settings: ControlSettings, first_token, half: int):
    """Each oracle's mode (smallest id among ties) and its probability per context and split,
    two arrays of shape (contexts, splits, 2)."""
    splits = [AUTHORS_SEED] if protocol.single_split else range(settings.resplits)
    split_protocol = authors_protocol.Protocol(authors_split=protocol.authors_split,
                                               shared_seed=protocol.shared_seed)
    modes = []
    for key, context in counts.items():
        words = [w for w, n in context.items() for _ in range(n)]
        tokens = [int(first_token(w)) for w in words]
        row = []
        for r in splits:
            if protocol.authors_split:
                halves = oracle_halves(key, tokens, r, protocol=split_protocol, settings=settings, half=half)
            else:
                halves = [first_tokens(o, first_token) for o in
                          oracle_halves(key, words, r, protocol=split_protocol, settings=settings, half=half)]
            row.append([protocol_mode(o, False) for o in halves])
        modes.append(row)
    return (np.array([[[int(t) for t, _ in split] for split in row] for row in modes], dtype=np.int64),
            np.array([[[p for _, p in split] for split in row] for row in modes], dtype=float))


def _scored(counts: dict, ids: np.ndarray, confidences: np.ndarray, protocol: TokenProtocol,
            first_token) -> OracleScores:
    targets = np.array([_target(context, protocol, first_token) for context in counts.values()], dtype=np.int64)
    return OracleScores(confidences, ids == targets[:, None, None])


def _target(counts: dict[str, int], protocol: TokenProtocol, first_token: Callable[[str], int]) -> int:
    """The human-majority first token: of the modal response (``word_majority``) or the mode of
    the first-token distribution, ties by ``first_max_ties``."""
    if protocol.word_majority:
        return int(first_token(protocol_mode(mle(counts), protocol.first_max_ties)[0]))
    return int(protocol_mode(mle(first_tokens(counts, first_token)), protocol.first_max_ties)[0])


def split_eces(scores: OracleScores, protocol: TokenProtocol, settings: ControlSettings) -> pd.DataFrame:
    """Per split (rows), each oracle's ECE from that split alone, with ``settings.ece_bins`` bins
    (``authors_bins``: ``authors_ece``).

    Parameters
    ----------
    scores : OracleScores
        ``oracle_scores``'s result.
    protocol : TokenProtocol
        The protocol's switches.
    settings : ControlSettings
        The ECE bins.

    Returns
    -------
    pandas.DataFrame
        One column per oracle of ``ORACLES``.
    """
    score = authors_ece if protocol.authors_bins else ece
    return pd.DataFrame([[score(scores.confidences[:, r, k], scores.hits[:, r, k], settings.ece_bins)
                          for k in range(len(ORACLES))] for r in range(scores.confidences.shape[1])],
                        columns=list(ORACLES))


def token_eces(
    norms: pd.DataFrame, protocol: TokenProtocol, settings: ControlSettings, *,
    first_token: Callable[[str], int], half: int = authors_protocol.AUTHORS_HALF,
) -> dict[str, float]:
    """Oracle 1's and oracle 2's token-level ECE against the human-majority first token (Table 4).

    Per context c with responses R_c, target t_c (the mode of the first tokens of R_c) and split
    r into O1_r and O2_r, oracle k predicts m_k = argmax_t O_k,r(t) over first tokens with
    confidence O_k,r(m_k) and hit m_k == t_c; its value is

        ECE_k = (1/R) sum_r ECE({(O_k,r(m_k), m_k == t_c)}_c),

    or split ``AUTHORS_SEED``'s ECE alone (``single_split``); the ECE as ``split_eces``. On GPT-2's
    tokenizer all switches off is what ``varprobe.families.token_level.analysis.token_summary`` gives the
    oracles.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    protocol : TokenProtocol
        The protocol's switches.
    settings : ControlSettings
        Seed, resplits and ECE bins.
    first_token : callable
        The first token id of ``" " + response``.
    half : int, optional
        The size of the authors' oracle 1.

    Returns
    -------
    dict of str to float
        ``{"oracle 1": ECE_1, "oracle 2": ECE_2}``.
    """
    scores = oracle_scores(norms, protocol, settings, first_token=first_token, half=half)
    return {name: float(value) for name, value in split_eces(scores, protocol, settings).mean().items()}


SWITCH_TABLE_COLUMNS = ("protocol", "switch", *ORACLES)


def switch_table(
    norms: pd.DataFrame, settings: ControlSettings, *, first_token: Callable[[str], int],
    half: int = authors_protocol.AUTHORS_HALF,
) -> pd.DataFrame:
    """The two oracle ECEs (``token_eces``) under ours, each switch on alone, the authors'
    protocol and it with each switch off alone (``protocol``: ``ours``, ``ours + switch``,
    ``authors``, ``authors - switch``; ``switch``: the one turned on or off, empty for the others).
    Protocols alike in ``SPLIT_FIELDS`` share their splits, drawn in every context.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    settings : ControlSettings
        Seed, resplits and ECE bins.
    first_token : callable
        The first token id of ``" " + response``.
    half : int, optional
        The size of the authors' oracle 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``SWITCH_TABLE_COLUMNS``.
    """
    predicted: dict[tuple, tuple] = {}
    out = []
    for label, switch, protocol in authors_protocol.switch_matrix(OURS, AUTHORS, SWITCHES):
        every = replace(protocol, authors_contexts=True)
        counts = response_counts(norms, every)
        shared = tuple(getattr(protocol, name) for name in SPLIT_FIELDS)
        if shared not in predicted:
            predicted[shared] = _predictions(counts, every, settings, first_token, half)
        keep = np.array([protocol.authors_contexts or key not in AMBIGUOUS_POSITIONS for key in counts])
        kept = {key: c for (key, c), on in zip(counts.items(), keep, strict=True) if on}
        scores = _scored(kept, *(a[keep] for a in predicted[shared]), protocol, first_token)
        out.append({"protocol": label, "switch": switch, **split_eces(scores, protocol, settings).mean()})
    return pd.DataFrame(out, columns=list(SWITCH_TABLE_COLUMNS))

