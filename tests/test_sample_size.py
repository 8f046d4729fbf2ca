"""The subsampling experiment (App. C.1): subsamples, squared errors, sizes >= N, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import responses_table

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings
from varprobe.families.sample_size.analysis import (
    NOTE_NO_MODEL_WORD,
    NOTE_NO_WORD,
    NOTE_TOO_LARGE,
    SHOWN_QUANTILE,
    context_draws,
    mse_interval_table,
    sample_size_summary,
    sample_size_table,
    subsample,
    word_distribution,
)
from varprobe.cli import main

SETTINGS = ControlSettings(seed=0, resplits=3)


def samples_table(draws: dict[tuple[int, int], list[str]]) -> pd.DataFrame:
    """A samples table with one row per draw ("" = a failed draw)."""
    rows = [
        {"text_id": t, "word_number": w, "sample_index": i, "text": d, "word": d, "failed": not d,
         "failure": "" if d else "max_tokens", "n_tokens": 1, "count": 1}
        for (t, w), ds in draws.items() for i, d in enumerate(ds)
    ]
    return tables.conform(pd.DataFrame(rows), "provo_samples")


HUMANS = {(1, 1): {"the": 5, "a": 3, "one": 2}, (1, 2): {"cat": 4, "dog": 4}}
VARIED = ["the", "a", "", "the", "one", "two", "the", "", "a", "the"]


def test_draws_expand_counts_and_failures_are_rejected():
    samples = samples_table({(1, 1): ["the", "", "a"]})
    samples.loc[0, "count"] = 3
    assert context_draws(samples) == {(1, 1): ["the", "the", "the", "", "a"]}
    assert word_distribution(["the", "", "the", "a"]) == pytest.approx({"the": 2 / 3, "a": 1 / 3})
    assert word_distribution(["", ""]) is None


def test_subsample_draws_without_replacement():
    draws = [f"w{i}" for i in range(10)]
    part = subsample(draws, 6, np.random.default_rng(0))
    assert len(part) == 6 and len(set(part)) == 6 and set(part) <= set(draws)
    with pytest.raises(ValueError, match="n = 10"):
        subsample(draws, 10, np.random.default_rng(0))


def test_identical_draws_give_zero_error_and_large_sizes_are_noted():
    samples = samples_table({(1, 1): ["the"] * 10, (1, 2): ["cat"] * 10})
    table = sample_size_table(samples, responses_table(HUMANS), sizes=[3, 9, 10, 40], repeats=2,
                              settings=SETTINGS)
    computed = table[table["size"] < 10]
    assert (computed["squared_error"] == 0).all() and (computed["note"] == "").all()
    large = table[table["size"] >= 10]
    assert large["squared_error"].isna().all() and (large["note"] == NOTE_TOO_LARGE).all()
    summary = sample_size_summary(table, [3, 9, 10, 40]).set_index("size")
    assert summary.loc[3, "mse"] == 0 and summary.loc[3, "n_estimates"] == 4
    assert np.isnan(summary.loc[40, "mse"]) and summary.loc[40, "note"] == NOTE_TOO_LARGE
    assert summary.loc[40, "n_too_large"] == 4


def test_full_sample_tvd_is_the_study_oracle_tvd_and_errors_are_consistent():
    samples = samples_table({(1, 1): VARIED})
    table = sample_size_table(samples, responses_table(HUMANS), sizes=[4, 8], repeats=3, settings=SETTINGS)
    # the study's tvd_model_oracle1 of the same draws against the same oracle splits
    from varprobe.analysis.next_word import context_table, sampled_estimates

    contexts = pd.DataFrame({"text_id": [1], "word_number": [1], "context_length": [3], "corpus_word": ["the"]})
    study, _ = context_table(contexts, responses_table(HUMANS), sampled_estimates(samples), SETTINGS)
    assert table["tvd_full"].unique() == pytest.approx([study.loc[0, "tvd_model_oracle1"]])
    assert table["squared_error"].to_numpy() == pytest.approx(
        (table["tvd_subsample"] - table["tvd_full"]).to_numpy() ** 2)
    assert (table["n_words"] <= table["size"]).all()


def test_a_subsample_of_failures_is_noted_not_counted():
    samples = samples_table({(1, 1): ["the"] + [""] * 9})
    table = sample_size_table(samples, responses_table(HUMANS), sizes=[1], repeats=20, settings=SETTINGS)
    failed = table[table["n_words"] == 0]
    assert len(failed) > 0 and (failed["note"] == NOTE_NO_WORD).all()
    summary = sample_size_summary(table, [1])
    assert summary.loc[0, "n_without_words"] == len(failed)
    assert summary.loc[0, "n_estimates"] == 20 - len(failed)


def test_contexts_are_counted_once_by_why_they_have_no_subsample_tvd():
    # (1, 1): one word among 10 draws, (1, 2): every draw failed, (2, 1): words only
    samples = samples_table({(1, 1): ["the"] + [""] * 9, (1, 2): [""] * 10, (2, 1): ["cat"] * 10})
    humans = {**HUMANS, (2, 1): {"cat": 2, "dog": 2}}
    table = sample_size_table(samples, responses_table(humans), sizes=[2, 10], repeats=3, settings=SETTINGS)
    summary = sample_size_summary(table, [2, 10]).set_index("size")
    small = table[(table["size"] == 2) & (table["text_id"] == 1) & (table["word_number"] == 1)]
    lost = int((small["note"] == NOTE_NO_WORD).all())
    assert (table.loc[table["word_number"] == 2, "note"].isin([NOTE_NO_MODEL_WORD, NOTE_TOO_LARGE])).all()
    assert summary.loc[2, ["n_contexts", "n_contexts_all_failed", "n_contexts_too_large"]].tolist() == [3, 1, 0]
    assert summary.loc[2, "n_contexts_subsample_failed"] == lost
    assert summary.loc[2, "n_contexts_estimated"] == 2 - lost
    assert summary.loc[10, ["n_contexts_too_large", "n_contexts_estimated", "n_contexts_all_failed"]].tolist() == [
        3, 0, 0]


def test_a_context_whose_every_subsample_failed_is_counted_apart_from_table_ones():
    samples = samples_table({(1, 1): [""] * 9 + ["the"], (1, 2): ["cat"] * 10})
    table = sample_size_table(samples, responses_table(HUMANS), sizes=[1], repeats=1, settings=SETTINGS)
    failed = table.loc[table["note"] == NOTE_NO_WORD, ["text_id", "word_number"]]
    assert failed.values.tolist() == [[1, 1]]  # seed 0 draws the first draw, a failure
    summary = sample_size_summary(table, [1])
    assert summary.loc[0, ["n_contexts", "n_contexts_estimated", "n_contexts_subsample_failed",
                           "n_contexts_all_failed"]].tolist() == [2, 1, 1, 0]


def test_seeded_and_order_free():
    draws = {(1, 1): VARIED, (1, 2): ["cat", "dog", "cat", "", "bird", "cat", "dog", "cat"]}
    first = sample_size_table(samples_table(draws), responses_table(HUMANS), sizes=[3, 5], repeats=2,
                              settings=SETTINGS)
    reversed_draws = dict(reversed(list(draws.items())))
    again = sample_size_table(samples_table(reversed_draws), responses_table(HUMANS), sizes=[5, 3], repeats=2,
                              settings=SETTINGS)
    keys = ["text_id", "word_number", "size", "repeat"]
    pd.testing.assert_frame_equal(first.sort_values(keys, ignore_index=True),
                                  again.sort_values(keys, ignore_index=True))
    other = sample_size_table(samples_table(draws), responses_table(HUMANS), sizes=[3, 5], repeats=2,
                              settings=ControlSettings(seed=1, resplits=3))
    assert not np.allclose(other["tvd_subsample"], first["tvd_subsample"])


def test_cli_writes_tables_and_figure(tmp_path):
    samples, responses = tmp_path / "samples.parquet", tmp_path / "responses.parquet"
    tables.write(samples_table({(1, 1): VARIED, (1, 2): ["cat"] * 10}), samples, "provo_samples")
    tables.write(responses_table(HUMANS), responses, "provo_responses")
    out, summary = tmp_path / "contexts.parquet", tmp_path / "summary.parquet"
    main(["sample-size", "--samples", str(samples), "--responses", str(responses), "--seed", "0",
          "--resplits", "3", "--sizes", "5", "20", "--repeats", "2", "--model", "m", "--decoding", "d",
          "--out", str(out), "--summary-out", str(summary)])
    written = tables.read(summary, "sample_size_summary")
    assert written["size"].tolist() == [5, 20] and written["note"].tolist() == ["", NOTE_TOO_LARGE]
    figure = tmp_path / "figure.png"
    main(["sample-size-figure", "--contexts", str(out), "--summaries", str(summary), "--bins", "5",
          "--summary-out", str(tmp_path / "all.parquet"), "--table", str(tmp_path / "hist.parquet"),
          "--figure", str(figure)])
    histogram = tables.read(tmp_path / "hist.parquet", "histogram")
    errors = tables.read(out, "sample_size_contexts")["squared_error"]
    assert histogram["bin_right"].max() == pytest.approx(errors.quantile(SHOWN_QUANTILE))
    assert histogram.loc[histogram["group"] == "n=5", "count"].sum() == (errors <= errors.quantile(SHOWN_QUANTILE)).sum()
    assert histogram.loc[histogram["group"] == "n=20", "count"].sum() == 0
    assert figure.stat().st_size > 5_000


def test_mse_intervals_cover_each_system_and_size_with_finite_errors():
    contexts = pd.DataFrame({"model": "m", "decoding": "ancestral", "size": [10] * 4 + [40] * 2,
                             "squared_error": [0.01, 0.02, 0.03, 0.04, np.nan, np.nan]})
    found = mse_interval_table(contexts, resamples=100, seed=0)
    tables.conform(found, "sample_size_intervals")
    assert list(found["size"]) == [10]
    assert 0.01 <= found["ci_low"].iloc[0] <= found["ci_high"].iloc[0] <= 0.04
