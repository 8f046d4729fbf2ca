"""Per-context divergences and system summaries on hand-worked tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varprobe.metrics.distributions import mode
from varprobe.analysis.next_word import (
    ControlSettings,
    context_table,
    coverage_notes,
    enumerated_estimates,
    human_summary,
    model_summary,
    sampled_estimates,
    oracle_splits,
    oracle_summary,
    oracle_table,
)

SETTINGS = ControlSettings(seed=0, resplits=5, ece_bins=10, bootstrap_resamples=200)


def _contexts():
    return pd.DataFrame({
        "text_id": [1, 1], "word_number": [2, 3], "context": ["A", "A b"],
        "context_length": [1, 2], "word": ["b", "c."], "corpus_word": ["b", "c"],
    })


def _responses():
    # context (1,2): humans say b x3, d x1; context (1,3): c x2, e x2
    return pd.DataFrame({
        "text_id": [1, 1, 1, 1], "word_number": [2, 2, 3, 3],
        "response": ["b", "d", "c", "e"], "count": [3, 1, 2, 2],
    })


def _samples(rows):
    frame = pd.DataFrame(rows, columns=["text_id", "word_number", "word", "count"])
    frame["failed"] = frame["word"] == ""
    return frame


def test_tvd_to_humans_is_worked_by_hand():
    # (1,2): model b 1/2, z 1/2 vs humans b 3/4, d 1/4 -> 1/2 (|.5-.75| + .25 + .5) = 0.5
    # (1,3): model c 1 vs humans c 1/2, e 1/2 -> 0.5; one failed draw is not counted
    samples = _samples([(1, 2, "b", 1), (1, 2, "z", 1), (1, 3, "c", 3), (1, 3, "", 1)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    assert table["tvd"].tolist() == pytest.approx([0.5, 0.5])
    assert table["n_draws"].tolist() == [2, 4]
    assert table["n_words"].tolist() == [2, 3]
    assert table["human_majority"].tolist() == ["b", "c"]  # tie c/e broken alphabetically
    assert table["entropy_model"].tolist() == pytest.approx([np.log(2), 0.0])
    assert hits.shape == (2, SETTINGS.resplits)


def test_oracle_columns_match_the_splits():
    samples = _samples([(1, 2, "b", 2), (1, 3, "e", 2)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    splits = oracle_splits((1, 3), {"c": 2, "e": 2}, SETTINGS)
    expected = np.mean([0.5 * sum(abs(o2.get(w, 0) - o1.get(w, 0)) for w in {*o1, *o2})
                        for o1, o2 in splits])
    assert table.loc[1, "tvd_oracle2_oracle1"] == pytest.approx(expected)
    assert hits[1].tolist() == [mode(o1)[0] == "e" for o1, _ in splits]


def test_splits_are_the_same_for_every_model():
    a = oracle_splits((4, 7), {"x": 5, "y": 3, "z": 2}, SETTINGS)
    b = oracle_splits((4, 7), {"z": 2, "y": 3, "x": 5}, SETTINGS)
    assert a == b
    assert oracle_splits((4, 8), {"x": 5, "y": 3, "z": 2}, SETTINGS) != a


def test_a_context_without_words_is_excluded_and_counted():
    samples = _samples([(1, 2, "b", 1), (1, 3, "", 2)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    assert np.isnan(table.loc[1, "tvd"])
    summary = model_summary(table, hits, failure_rate=2 / 3, settings=SETTINGS)
    assert summary["n_contexts"] == 1 and summary["n_contexts_all_failed"] == 1
    assert summary["n_contexts_not_sampled"] == 0
    assert summary["expected_tvd"] == pytest.approx(0.25)
    assert summary["failure_rate"] == pytest.approx(2 / 3)


def test_a_context_never_sampled_is_counted_apart_from_one_whose_draws_all_failed():
    """A fine-tuned model's training passage (no draws there) is not a context where every draw
    failed: the summary counts the two apart."""
    samples = _samples([(1, 2, "b", 1)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    summary = model_summary(table, hits, failure_rate=0.0, settings=SETTINGS)
    assert summary["n_contexts_not_sampled"] == 1 and summary["n_contexts_all_failed"] == 0


def test_a_partial_system_is_compared_with_the_oracle_over_its_own_contexts():
    """Issue 38, item 2: a samples file covering some contexts gives the oracle's expected TVD
    over the same contexts beside its own (paired), and a console note with the count."""
    samples = _samples([(1, 2, "b", 1)])  # no row for (1, 3)
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    summary = model_summary(table, hits, failure_rate=0.0, settings=SETTINGS)
    oracle = oracle_summary(*oracle_table(_contexts(), _responses(), SETTINGS), SETTINGS)
    assert summary["oracle_expected_tvd"] == pytest.approx(table.loc[0, "tvd_oracle2_oracle1"])
    assert oracle["oracle_expected_tvd"] == oracle["expected_tvd"] == pytest.approx(
        table["tvd_oracle2_oracle1"].mean())
    rows = pd.DataFrame([{"model": "given-model", "decoding": "given", **summary},
                         {"model": "oracle", "decoding": "control", **oracle},
                         {"model": "human", "decoding": "mle", **human_summary(_contexts(), _responses(), SETTINGS)}])
    assert coverage_notes(rows) == [
        f"provo: given-model (given) has words in 1 of the 2 configured contexts (1 not sampled, 0 with every "
        f"draw failed); its "
        f"expected TVD {summary['expected_tvd']:.3f} is over those 1, where the oracle's is "
        f"{summary['oracle_expected_tvd']:.3f} (over all 2: {oracle['expected_tvd']:.3f})"]
    full = model_summary(*context_table(_contexts(), _responses(), sampled_estimates(
        _samples([(1, 2, "b", 1), (1, 3, "c", 1)])), SETTINGS), failure_rate=0.0, settings=SETTINGS)
    assert full["oracle_expected_tvd"] == pytest.approx(oracle["expected_tvd"])
    assert coverage_notes(rows.assign(n_contexts=2)) == []


def test_model_ece_against_the_corpus_word():
    # (1,2) mode b with confidence 1.0 (correct); (1,3) mode e with confidence 1.0 (wrong):
    # one bin, accuracy 1/2, confidence 1 -> ECE 0.5
    samples = _samples([(1, 2, "b", 4), (1, 3, "e", 4)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    summary = model_summary(table, hits, failure_rate=0.0, settings=SETTINGS)
    assert summary["ece_corpus"] == pytest.approx(0.5)
    assert summary["ece_human_majority"] == pytest.approx(0.5)


def test_every_draw_failing_is_an_error_not_a_summary():
    samples = _samples([(1, 2, "", 1), (1, 3, "", 1)])
    table, hits = context_table(_contexts(), _responses(), sampled_estimates(samples), SETTINGS)
    with pytest.raises(ValueError, match="every draw failed"):
        model_summary(table, hits, failure_rate=1.0, settings=SETTINGS)


def test_oracle_system_uses_tvd_between_halves():
    table, confidences, hits = oracle_table(_contexts(), _responses(), SETTINGS)
    summary = oracle_summary(table, confidences, hits, SETTINGS)
    assert summary["expected_tvd"] == pytest.approx(table["tvd_oracle2_oracle1"].mean())
    assert confidences.shape == (2, SETTINGS.resplits) and hits.shape == (2, SETTINGS.resplits, 3)
    assert 0 <= summary["ece_oracle_majority"] <= 1


def test_human_row_is_the_full_human_mle_as_predictor():
    """Table 1's "Human" column, by hand: modes b (0.75) and c-or-e (0.5, a tie); 10 bins.
    Against the corpus word: 0.5 |1 - 0.75| + 0.5 |hit - 0.5| = 0.375 whichever tied word is
    the mode; against its own majority every mode hits: the mean of 1 - confidence, 0.375."""
    summary = human_summary(_contexts(), _responses(), SETTINGS)
    assert summary["ece_corpus"] == pytest.approx(0.375)
    assert summary["ece_human_majority"] == pytest.approx(0.375)
    assert 0 <= summary["ece_oracle_majority"] <= 1
    entropy = (-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)) + np.log(2)) / 2
    assert summary["mean_entropy_model"] == summary["mean_entropy_human"] == pytest.approx(entropy)
    assert np.isnan(summary["expected_tvd"]) and summary["n_contexts"] == 2


def test_enumerated_distribution_gives_tvd_and_its_interval():
    # (1,2): words b .4, z .2, failures .2, unresolved .2 -> q = {b: 2/3, z: 1/3};
    # humans b 3/4, d 1/4: TVD = 1/2 (1/12 + 1/3 + 1/4) = 1/3; interval with a = {b: .5, z: .25}:
    # lower = 0 + .25 = .25, upper = .25 + .25 = .5. (1,3): nothing resolved to a word.
    frame = pd.DataFrame({
        "text_id": [1] * 5, "word_number": [2, 2, 2, 3, 3],
        "word": ["b", "z", "", "", ""], "failure": ["", "", "token_budget", "token_budget", "undecodable"],
        "probability": [0.4, 0.2, 0.2, 0.5, 0.0], "unresolved_mass": [0.2, 0.2, 0.2, 0.5, 0.5],
        "failure_mass": [0.2, 0.2, 0.2, 0.5, 0.5], "forward_tokens": [9] * 5,
    })
    table, _ = context_table(_contexts(), _responses(), enumerated_estimates(frame), SETTINGS)
    assert table.loc[0, "tvd"] == pytest.approx(1 / 3)
    assert (table.loc[0, "tvd_lower"], table.loc[0, "tvd_upper"]) == (pytest.approx(0.25), pytest.approx(0.5))
    assert table.loc[0, "model_mode"] == "b" and table.loc[0, "confidence"] == pytest.approx(2 / 3)
    assert np.isnan(table.loc[1, "tvd"]) and pd.isna(table.loc[0, "n_draws"])
    summary = model_summary(table, np.zeros((2, 5), dtype=bool), 0.35, SETTINGS)
    assert summary["n_contexts_all_failed"] == 1 and summary["n_contexts_not_sampled"] == 0
    assert summary["expected_tvd_lower"] <= summary["expected_tvd"] <= summary["expected_tvd_upper"]


def test_control_settings_restate_no_default_of_the_config_schema():
    """Seed, resplits, ECE bins and bootstrap resamples come from the validated config (the schema
    holds their defaults): the settings give none of their own."""
    from dataclasses import MISSING, fields

    assert {f.name: f.default for f in fields(ControlSettings)} == {
        "seed": MISSING, "resplits": MISSING, "ece_bins": None, "bootstrap_resamples": None}


def test_a_context_without_a_corpus_word_is_left_out_of_that_ece_and_counted():
    """An empty cell of a corpus's optional `word` column: (1,3) has no corpus word. The model's
    modes b (1.0, a hit) and e (1.0) give ECE 0 over (1,2) alone, not 0.5 with (1,3) a miss;
    the human row's, over (1,2) alone, is |1 - 0.75| = 0.25 (0.375 with the two)."""
    contexts = _contexts().assign(word=["b", ""], corpus_word=["b", ""])
    samples = _samples([(1, 2, "b", 4), (1, 3, "e", 4)])
    table, hits = context_table(contexts, _responses(), sampled_estimates(samples), SETTINGS)
    summary = model_summary(table, hits, failure_rate=0.0, settings=SETTINGS)
    assert summary["ece_corpus"] == pytest.approx(0.0)
    assert summary["ece_human_majority"] == pytest.approx(0.5)
    assert summary["n_contexts_without_corpus_word"] == 1
    human = human_summary(contexts, _responses(), SETTINGS)
    assert human["ece_corpus"] == pytest.approx(0.25) and human["n_contexts_without_corpus_word"] == 1
    oracle_rows, confidences, oracle_hits = oracle_table(contexts, _responses(), SETTINGS)
    oracle = oracle_summary(oracle_rows, confidences, oracle_hits, SETTINGS)
    expected = np.mean([abs(float(oracle_hits[0, r, 0]) - confidences[0, r]) for r in range(SETTINGS.resplits)])
    assert oracle["ece_corpus"] == pytest.approx(expected) and oracle["n_contexts_without_corpus_word"] == 1
    none = contexts.assign(word="", corpus_word="")
    table, hits = context_table(none, _responses(), sampled_estimates(samples), SETTINGS)
    assert np.isnan(model_summary(table, hits, failure_rate=0.0, settings=SETTINGS)["ece_corpus"])
    assert np.isnan(human_summary(none, _responses(), SETTINGS)["ece_corpus"])
