"""Ilia & Aziz's own protocol for Table 1's human and oracle rows (varprobe.analysis.authors_protocol):
each switch on a corpus small enough to work by hand, and the whole protocol on the Provo copy of
the data mirror, which must give the paper's printed digits."""

from __future__ import annotations

import random
from dataclasses import replace

import pandas as pd
import pytest

from varprobe.analysis.authors_protocol import (
    AUTHORS,
    OURS,
    PAPER,
    SINGLE_SPLIT,
    SWITCHES,
    VALUES,
    authors_ece,
    authors_split,
    oracle_halves,
    protocol_scores,
    protocol_values,
    read_contexts,
    resplit_values,
    switch_table,
)
from varprobe.analysis.next_word import ControlSettings
from varprobe import tables

SETTINGS = ControlSettings(seed=0, resplits=4, ece_bins=10, bootstrap_resamples=10)
DEFAULT_RUN = ControlSettings(seed=0, resplits=20, ece_bins=10)
"""The config schema's defaults (seed 0, 20 resplits, 10 bins): the settings of the page's table."""


def _norms(positions: dict[tuple[int, int], list[tuple[str, int]]], text: str = "A b c d e f") -> pd.DataFrame:
    """A norms table (read_norms' columns) of one passage per text id, rows in the given order."""
    rows = [
        {"Text_ID": t, "Text": text, "Word_Number": w, "Word": text.split(" ")[w - 1],
         "Response": response, "Response_Count": count}
        for (t, w), responses in positions.items() for response, count in responses
    ]
    return pd.DataFrame(rows)


def _on(name: str):
    return replace(OURS, **{name: True})


def test_switches_are_the_authors_protocol_and_ours_is_none():
    assert set(SWITCHES) == {"raw_responses", "raw_corpus_word", "authors_contexts", "authors_split",
                             "shared_seed", "carried_removal", "single_split", "first_max_ties",
                             "authors_bins"}
    assert not any(getattr(OURS, s) for s in SWITCHES)
    assert all(getattr(AUTHORS, s) for s in SWITCHES)


def test_raw_responses_keep_punctuation_and_read_missing_strings():
    norms = _norms({(1, 2): [("b", 2), ("tight-lipped", 1), ("?", 1), ("<NA>", 1), ("TRUE", 1)]})
    ours, = read_contexts(norms, OURS)
    raw, = read_contexts(norms, _on("raw_responses"))
    assert sorted(ours.responses) == ["b", "b", "na", "tightlipped", "true"]  # "?" holds no word
    assert list(raw.responses) == ["b", "b", "tight-lipped", "?", None, "true"]
    # human ECE against its own mode = 1 - confidence: ours b is 2 of the 5 words
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_human_majority"] == pytest.approx(0.6)
    raw_value = protocol_values(_norms({(1, 2): [("b", 2), ("?", 2)]}), _on("raw_responses"), SETTINGS)
    assert raw_value["human_ece_human_majority"] == pytest.approx(0.5)  # b 2/4, "?" a word
    assert protocol_values(_norms({(1, 2): [("b", 2), ("?", 2)]}), OURS, SETTINGS)[
        "human_ece_human_majority"] == pytest.approx(0.0)  # b 2/2: confidence 1


def test_raw_corpus_word_keeps_the_printed_token():
    # token "B." of "A B. c": responses b x3, c x1: mode b (3/4); read, the token is b (a hit)
    norms = _norms({(1, 2): [("b", 3), ("c", 1)]}, text="A B. c")
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_corpus"] == pytest.approx(0.25)
    assert protocol_values(norms, _on("raw_corpus_word"), SETTINGS)["human_ece_corpus"] == pytest.approx(0.75)


def test_authors_contexts_keep_the_mixed_position_and_drop_the_last():
    norms = _norms({(18, 2): [("b", 2)], (18, 3): [("c", 1), ("d", 1)], (18, 4): [("d", 3), ("e", 1)]})
    assert [c.key for c in read_contexts(norms, OURS)] == [(18, 2), (18, 4)]
    assert [c.key for c in read_contexts(norms, _on("authors_contexts"))] == [(18, 2), (18, 3)]
    # 1 - confidence, averaged: ours (0 + 1/4) / 2, the authors' (0 + 1/2) / 2
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_human_majority"] == pytest.approx(0.125)
    assert protocol_values(norms, _on("authors_contexts"), SETTINGS)[
        "human_ece_human_majority"] == pytest.approx(0.25)


def _authors_reference(words, seed, N=20):
    """``sample_oracle_without_replacement_disjoint_groups`` of oracle_processing.ipynb cell 4,
    verbatim (N == 20 branch), on a copy."""
    words = list(words)
    random.seed(seed)
    if len(words) % 2 == 1:
        remove_word = random.sample(words, 1)
        words.remove(remove_word[0])
    subset1 = random.sample(words, N)
    subset2 = words.copy()
    for item in subset1:
        subset2.remove(item)
    return subset1, subset2


@pytest.mark.parametrize("n", [41, 44])
def test_authors_split_is_twenty_and_the_rest_as_their_code_draws_it(n):
    words = [f"w{i % 7}" for i in range(n)]
    for seed in range(3):
        first, second = authors_split(words, seed)
        assert (first, second) == _authors_reference(words, seed)
        assert len(first) == 20 and len(second) == (n - n % 2) - 20  # 41 -> 20/20, 44 -> 20/24
    assert len(words) == n  # not mutated


def test_authors_split_needs_more_than_half():
    with pytest.raises(ValueError, match="more than 20 responses"):
        authors_split(["a"] * 21, 0)


def test_authors_split_sizes_move_the_oracle_tvd():
    # a a b b: ours halves 2/2 give TVD 0 ({a, b} twice) or 1 ({a, a} / {b, b}); the authors'
    # with half 1 give O1 one response and O2 the other three: O1 {a}, O2 a 1/3, b 2/3, TVD 2/3.
    norms = _norms({(1, 2): [("a", 2), ("b", 2)]})
    tvd = protocol_values(norms, _on("authors_split"), SETTINGS, half=1)["oracle_expected_tvd"]
    assert tvd == pytest.approx(2 / 3)
    per_split = resplit_values(protocol_scores(norms, OURS, SETTINGS), OURS, SETTINGS)
    assert set(per_split["oracle_expected_tvd"].round(12)) <= {0.0, 1.0}


def test_shared_seed_draws_the_same_positions_in_every_context():
    a = [f"a{i}" for i in range(6)]
    b = [f"b{i}" for i in range(6)]
    for protocol in (_on("shared_seed"), replace(AUTHORS, carried_removal=False)):
        for r in range(SETTINGS.resplits):
            first_a, _ = oracle_halves((1, 2), a, r, protocol=protocol, settings=SETTINGS, half=3)
            first_b, _ = oracle_halves((1, 3), b, r, protocol=protocol, settings=SETTINGS, half=3)
            assert sorted(w[1] for w in first_a) == sorted(w[1] for w in first_b)
    differs = [
        sorted(w[1] for w in oracle_halves((1, 2), a, r, protocol=OURS, settings=SETTINGS)[0])
        != sorted(w[1] for w in oracle_halves((1, 3), b, r, protocol=OURS, settings=SETTINGS)[0])
        for r in range(SETTINGS.resplits)
    ]
    assert any(differs)


def test_carried_removal_drops_one_of_an_odd_number_from_the_humans():
    # a b b b c: seed 1 removes random.Random(1).sample(list, 1)[0]
    words = ["a", "b", "b", "b", "c"]
    removed = random.Random(SINGLE_SPLIT).sample(words, 1)[0]
    confidence = {"a": 3 / 4, "b": 2 / 4, "c": 3 / 4}[removed]
    norms = _norms({(1, 2): [("a", 1), ("b", 3), ("c", 1)]})
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_human_majority"] == pytest.approx(0.4)
    assert protocol_values(norms, _on("carried_removal"), SETTINGS)[
        "human_ece_human_majority"] == pytest.approx(1 - confidence)


def test_single_split_is_split_one_alone():
    norms = _norms({(1, 2): [("a", 2), ("b", 2)], (1, 3): [("a", 3), ("c", 3)]})
    per_split = resplit_values(protocol_scores(norms, OURS, SETTINGS), OURS, SETTINGS)
    assert per_split["oracle_expected_tvd"].nunique() > 1  # the splits differ
    single = protocol_values(norms, _on("single_split"), SETTINGS)
    mean = protocol_values(norms, OURS, SETTINGS)
    for name in ("oracle_ece_corpus", "oracle_ece_human_majority", "oracle_expected_tvd"):
        assert single[name] == pytest.approx(per_split[name].iloc[SINGLE_SPLIT])
        assert mean[name] == pytest.approx(per_split[name].mean())
    assert single["oracle_ece_oracle_majority"] == pytest.approx(mean["oracle_ece_oracle_majority"])
    with pytest.raises(ValueError, match="resplits > 1"):
        protocol_values(norms, _on("single_split"), replace(SETTINGS, resplits=1))


def test_first_max_ties_take_the_first_response():
    # c a b, one each, corpus word c: ours predicts a (alphabetical), a miss; the authors c, a hit
    norms = _norms({(1, 2): [("c", 1), ("a", 1), ("b", 1)]}, text="A c")
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_corpus"] == pytest.approx(1 / 3)
    assert protocol_values(norms, _on("first_max_ties"), SETTINGS)["human_ece_corpus"] == pytest.approx(2 / 3)


def test_authors_bins_drop_confidence_one_and_shift_edges():
    assert authors_ece([1.0], [False]) == 0.0
    # float32(0.7) < 0.7000000000000001: with 0.65 in [0.6, 0.7): |0.675 - 0.5| = 0.175;
    # ours bins 0.7 apart: (|1 - 0.7| + |0 - 0.65|) / 2 = 0.475
    assert authors_ece([0.7, 0.65], [True, False]) == pytest.approx(0.175, abs=1e-6)
    norms = _norms({(1, 2): [("b", 4)]}, text="A c")  # everyone says b, the text has c
    assert protocol_values(norms, OURS, SETTINGS)["human_ece_corpus"] == pytest.approx(1.0)
    assert protocol_values(norms, _on("authors_bins"), SETTINGS)["human_ece_corpus"] == 0.0


def test_switch_table_rows_and_schema():
    norms = _norms({(1, 2): [("a", 2), ("b", 2)], (1, 3): [("a", 3), ("c", 3)], (1, 4): [("c", 4)]})
    table = switch_table(norms, SETTINGS, half=2)
    assert table["protocol"].tolist() == (["ours"] + ["ours + switch"] * len(SWITCHES) + ["authors"]
                                          + ["authors - switch"] * len(SWITCHES) + ["paper"])
    assert table.loc[table["protocol"] == "ours + switch", "switch"].tolist() == list(SWITCHES)
    assert table.iloc[-1][list(VALUES)].tolist() == list(PAPER.values())
    tables.conform(table, "provo_authors")
    raw = table.set_index(["protocol", "switch"])
    assert raw.loc[("ours + switch", "authors_contexts"), "oracle_expected_tvd"] != pytest.approx(
        raw.loc[("ours", ""), "oracle_expected_tvd"])


def test_authors_protocol_on_provo_gives_the_papers_digits(provo_norms):
    authors = protocol_values(provo_norms, AUTHORS, DEFAULT_RUN)
    for name in VALUES:
        if name != "human_ece_oracle_majority":
            assert round(authors[name], 2) == PAPER[name], name
    # The paper's 0.19 is GPT-2's list (oracle_processing.ipynb cell 15:5); the human's is 0.41.
    assert round(authors["human_ece_oracle_majority"], 2) == 0.41
    ours = protocol_values(provo_norms, OURS, DEFAULT_RUN)
    assert [round(ours[name], 3) for name in VALUES] == [0.097, 0.595, 0.414, 0.117, 0.409, 0.253, 0.433]


def test_cli_writes_the_switch_table_of_the_selected_passages(data_mirror, tmp_path, capsys):
    from varprobe.cli import main

    out = tmp_path / "authors.parquet"
    norms = data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    main(["provo-authors", "--norms", str(norms), "--texts", "1", "--seed", "0", "--resplits", "3",
          "--ece-bins", "10", "--mirror", str(data_mirror), "--out", str(out)])
    table = tables.read(out, "provo_authors")
    assert len(table) == 2 * len(SWITCHES) + 3
    assert "provo-authors: authors:" in capsys.readouterr().err
    # its first row is our protocol on passage 1 alone, with the run's seed and resplits
    per_split = resplit_values(protocol_scores(pd.read_csv(norms, encoding="latin-1", keep_default_na=False)
                                               .query("Text_ID == 1"), OURS, replace(SETTINGS, resplits=3)),
                               OURS, replace(SETTINGS, resplits=3))
    assert table.iloc[0]["oracle_expected_tvd"] == pytest.approx(per_split["oracle_expected_tvd"].mean())
