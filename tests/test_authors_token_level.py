"""Ilia & Aziz's own protocol for Table 4's oracle rows (varprobe.families.token_level.authors):
each switch on a corpus small enough to work by hand (first tokens: a word's first letter), the
authors' split against their code, ours against the token-level study, and the whole protocol
on the data mirror's Provo norms with GPT-2's tokenizer, which must give the authors' json and
the page's ``TABLE4_ORACLES``."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from varprobe.families.token_level import authors as atl
from varprobe.families.token_level.authors import (
    AUTHORS,
    AUTHORS_SEED,
    JSON,
    OURS,
    SWITCHES,
    oracle_scores,
    response_counts,
    split_eces,
    switch_table,
    token_eces,
)
from varprobe.analysis.authors_protocol import authors_ece
from varprobe.analysis.next_word import ControlSettings, human_counts
from varprobe.data.provo import contexts_table, responses_table
from varprobe.results_page import authors_measures, paper
from varprobe.results_page.authors_measures import TABLE4_ORACLES as MEASURED
from varprobe.results_page.authors_measures import TOKEN_SWITCH_CODE

SETTINGS = ControlSettings(seed=0, resplits=4, ece_bins=10, bootstrap_resamples=10)
MEASURED_SETTINGS = ControlSettings(**MEASURED.settings)
ORDER = Path(__file__).parent / "data" / "authors_response_order.json"


def letter(word: str) -> int:
    """A toy first token: the code of the word's first character."""
    return ord(word[0])


def _norms(positions: dict[tuple[int, int], list[tuple[str, int]]]) -> pd.DataFrame:
    """A norms table (read_norms' columns), rows in the given order."""
    return pd.DataFrame([
        {"Text_ID": t, "Text": "A b c d e f", "Word_Number": w, "Word": "x", "Response": response,
         "Response_Count": count}
        for (t, w), responses in positions.items() for response, count in responses
    ])


def _on(*names: str):
    return replace(OURS, **dict.fromkeys(names, True))


def test_switches_are_the_authors_protocol_and_ours_is_none():
    assert set(SWITCHES) == {"raw_responses", "authors_contexts", "word_majority", "first_max_ties",
                             "authors_split", "shared_seed", "single_split", "authors_bins"}
    assert set(TOKEN_SWITCH_CODE) == set(SWITCHES) and authors_measures.ORACLES == atl.ORACLES
    assert [(p, s) for p, s, *_ in MEASURED.switches] == [
        ("ours", ""), *(("ours + switch", s) for s in SWITCHES), ("authors", ""),
        *(("authors - switch", s) for s in SWITCHES)]
    assert not any(getattr(OURS, s) for s in SWITCHES) and all(getattr(AUTHORS, s) for s in SWITCHES)


def test_raw_responses_are_strings_as_typed_in_their_first_rows_order():
    norms = _norms({(1, 2): [("b", 2), ("Tight-lipped", 1), ("?", 1), ("<NA>", 1), ("NA", 1), ("TRUE", 1),
                             ("b", 1)]})
    assert list(response_counts(norms, _on("raw_responses"))[(1, 2)].items()) == [
        ("b", 3), ("Tight-lipped", 1), ("?", 1), ("TRUE", 1)]  # pandas' NA strings match no row
    assert list(response_counts(norms, OURS)[(1, 2)].items()) == [
        ("b", 3), ("na", 2), ("tightlipped", 1), ("true", 1)]  # read words, "?" none, alphabetical


def test_authors_contexts_keep_the_mixed_position():
    norms = _norms({(18, 2): [("b", 2)], (18, 3): [("c", 1), ("d", 1)]})
    assert list(response_counts(norms, OURS)) == [(18, 2)]
    assert list(response_counts(norms, _on("authors_contexts"))) == [(18, 2), (18, 3)]


def test_word_majority_targets_the_modal_responses_first_token():
    # dog 6, cat 4, cow 4: the modal response is dog, the modal first token c (8); every oracle
    # mode is c or d, so each hit under one target is a miss under the other
    norms = _norms({(1, 2): [("dog", 6), ("cat", 4), ("cow", 4)]})
    ours = oracle_scores(norms, OURS, SETTINGS, first_token=letter)
    word = oracle_scores(norms, _on("word_majority"), SETTINGS, first_token=letter)
    np.testing.assert_array_equal(word.confidences, ours.confidences)
    np.testing.assert_array_equal(word.hits, ~ours.hits)


def test_first_max_ties_take_the_first_response():
    # b 2, a 2 in that order: ours targets a (the smaller id), the authors' b
    norms = _norms({(1, 2): [("b", 2), ("a", 2)]})
    raw = oracle_scores(norms, _on("raw_responses"), SETTINGS, first_token=letter, half=2)
    first = oracle_scores(norms, _on("raw_responses", "first_max_ties"), SETTINGS, first_token=letter, half=2)
    # each oracle's mode is a or b (ties to a, the smaller id, as torch.argmax): b only when b leads
    np.testing.assert_array_equal(first.hits, ~raw.hits)


def _authors_reference(human: list[tuple[int, int]], seed: int = 0, N: int = 20):
    """``GPT2_processing_BPE.py`` lines 100-124 (N == 20) and 154-160 on one context's
    ``[(bpe_ind, count)]``, verbatim but for torch: each oracle's (confidence, hit)."""
    list_words_reps = [[str(x[0])] * int(x[1]) for x in human]
    words_list = [item for sublist in list_words_reps for item in sublist]
    random.seed(seed)
    if len(words_list) % 2 == 1:
        remove_word = random.sample(words_list, 1)
        words_list.remove(remove_word[0])
    subset1 = random.sample(words_list, N)
    subset2 = words_list.copy()
    for item in subset1:
        subset2.remove(item)
    human_major_bpe = max(human, key=lambda x: x[1])[0]
    out = []
    for subset in ([int(x) for x in subset1], [int(x) for x in subset2]):
        counts = Counter(subset)
        top = min(counts, key=lambda t: (-counts[t], t))  # torch.argmax over the vocabulary
        out.append((float(np.float32(counts[top]) / np.float32(len(subset))), top == human_major_bpe))
    return out


def test_the_authors_split_is_their_code_on_first_tokens():
    # apple and avocado share a first token and are apart in the list: the odd one's removal
    # takes the token's first copy, which a split of the words would not
    positions = {(1, 2): [("apple", 10), ("bat", 12), ("avocado", 11), ("cat", 8)],
                 (1, 3): [("cat", 9), ("apple", 9), ("bat", 9), ("dog", 9), ("eel", 7)],
                 (1, 4): [("bat", 14), ("cow", 14), ("cat", 2), ("bee", 12)]}
    norms = _norms(positions)
    protocol = replace(AUTHORS, authors_contexts=False)
    scores = oracle_scores(norms, protocol, SETTINGS, first_token=letter)
    assert scores.confidences.shape == (3, 1, 2)
    for row, responses in enumerate(positions.values()):
        reference = _authors_reference([(letter(w), n) for w, n in responses])
        assert [(float(np.float32(c)), bool(h)) for c, h in
                zip(scores.confidences[row, 0], scores.hits[row, 0], strict=True)] == reference


def test_shared_seed_draws_the_same_positions_in_every_context():
    lists = {(1, 2): [("a", 5), ("b", 4), ("c", 3)], (1, 3): [("x", 5), ("y", 4), ("z", 3)]}
    norms = _norms(lists)
    for protocol in (_on("shared_seed"), _on("shared_seed", "authors_split")):
        shared = oracle_scores(norms, protocol, SETTINGS, first_token=letter, half=6)
        np.testing.assert_array_equal(shared.confidences[0], shared.confidences[1])
    ours = oracle_scores(norms, OURS, replace(SETTINGS, resplits=8), first_token=letter)
    assert not np.array_equal(ours.confidences[0], ours.confidences[1])


def test_single_split_is_split_zero_and_authors_bins_the_authors_ece():
    norms = _norms({(1, 2): [("a", 3), ("b", 2), ("c", 1)], (1, 3): [("a", 2), ("b", 2), ("d", 2)],
                    (1, 4): [("e", 4), ("a", 2)]})
    per_split = split_eces(oracle_scores(norms, OURS, SETTINGS, first_token=letter), OURS, SETTINGS)
    assert per_split["oracle 1"].nunique() > 1
    single = token_eces(norms, _on("single_split"), SETTINGS, first_token=letter)
    assert single == pytest.approx(dict(per_split.iloc[AUTHORS_SEED]))
    scores = oracle_scores(norms, OURS, SETTINGS, first_token=letter)
    binned = token_eces(norms, _on("authors_bins"), SETTINGS, first_token=letter)
    assert binned["oracle 2"] == pytest.approx(np.mean(
        [authors_ece(scores.confidences[:, r, 1], scores.hits[:, r, 1]) for r in range(SETTINGS.resplits)]))


@pytest.fixture(scope="module")
def gpt2_first(gpt2_tokenizer):
    """The first GPT-2 token id of ``" " + word`` (as ``WordScorer.first_token``)."""
    return lru_cache(maxsize=None)(lambda word: gpt2_tokenizer.encode(" " + word, add_special_tokens=False)[0])


def test_ours_is_the_token_level_study(provo_norms, gpt2_tokenizer, gpt2_first):
    from varprobe.families.token_level.analysis import token_summary, token_table

    assert {k: list(v.items()) for k, v in response_counts(provo_norms, OURS).items()} == {
        k: list(v.items()) for k, v in human_counts(responses_table(provo_norms)).items()}
    norms = provo_norms[provo_norms["Text_ID"] == 1]
    contexts, responses = contexts_table(norms, [1], verify=False), responses_table(norms, [1])
    uniform = (np.full(len(gpt2_tokenizer), 1 / len(gpt2_tokenizer)) for _ in range(len(contexts)))
    table, confidences, hits = token_table(contexts, responses, uniform, first_token=gpt2_first, token_text=str,
                                           settings=SETTINGS)
    summary = token_summary(table, confidences, hits, SETTINGS).set_index("system")["ece_human_majority"]
    ours = token_eces(norms, OURS, SETTINGS, first_token=gpt2_first)
    assert [ours[o] for o in atl.ORACLES] == summary[list(atl.ORACLES)].tolist()


def _in_authors_order(norms: pd.DataFrame) -> pd.DataFrame:
    """The norms with each position's rows in the authors' response order where the fixture
    gives it (``tests/data/authors_response_order.json``), the rows pandas reads as missing last."""
    orders = json.loads(ORDER.read_text(encoding="utf-8"))["orders"]
    parts = []
    for (t, w), rows in norms.groupby(["Text_ID", "Word_Number"], sort=False):
        order = orders.get(f"{t},{w}")
        if order is not None:
            assert set(order) <= set(rows["Response"]), (t, w)
            rank = {r: i for i, r in enumerate(order)}
            rows = rows.sort_values("Response", key=lambda s: s.map(lambda r: rank.get(r, len(order))),
                                    kind="stable")
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def authors_norms(provo_norms):
    return _in_authors_order(provo_norms)


def test_the_authors_protocol_gives_their_json(authors_norms, provo_norms, gpt2_first):
    found = token_eces(authors_norms, AUTHORS, MEASURED_SETTINGS, first_token=gpt2_first)
    assert found == pytest.approx(JSON, abs=1e-12)
    assert {o: round(v, 3) for o, v in found.items()} == {o: paper.TABLE_4["human majority"][o] for o in found}
    mirror = token_eces(provo_norms, AUTHORS, MEASURED_SETTINGS, first_token=gpt2_first)
    assert tuple(round(mirror[o], 3) for o in atl.ORACLES) == MEASURED.mirror


def test_measured_is_what_the_module_gives(authors_norms, gpt2_first):
    table = switch_table(authors_norms, MEASURED_SETTINGS, first_token=gpt2_first)
    assert [(p, s, round(a, 3), round(b, 3)) for p, s, a, b in table.itertuples(index=False)] == list(
        MEASURED.switches)
    for name, protocol in (("authors", replace(AUTHORS, single_split=False)), ("ours", OURS)):
        per_split = split_eces(oracle_scores(authors_norms, protocol, MEASURED_SETTINGS, first_token=gpt2_first),
                               protocol, MEASURED_SETTINGS)
        assert tuple((round(c.min(), 3), round(c.mean(), 3), round(c.max(), 3))
                     for c in (per_split[o] for o in atl.ORACLES)) == MEASURED.splits[name], name
    one = oracle_scores(authors_norms, AUTHORS, MEASURED_SETTINGS, first_token=gpt2_first)
    accuracy, confidence = one.hits[:, 0].mean(axis=0), one.confidences[:, 0].mean(axis=0)
    assert tuple(np.round(accuracy, 3)) == MEASURED.accuracy
    assert tuple(np.round(confidence, 3)) == MEASURED.confidence
    assert [JSON[o] for o in atl.ORACLES] == pytest.approx(accuracy - confidence, abs=1e-6)
