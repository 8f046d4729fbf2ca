"""The token-level study (App. D): exact TVD over the vocabulary, first-token mapping, the table
and its summary on hand-built distributions, and the CLI on the tiny model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings, oracle_splits
from varprobe.families.token_level.analysis import first_tokens, token_summary, token_table
from varprobe.cli import main
from varprobe.metrics.dense import dense_entropy, dense_tvd
from varprobe.metrics.distributions import tvd
from varprobe.sampling.word_model import WordModel


def test_dense_tvd_sums_over_the_whole_vocabulary():
    p = np.array([0.5, 0.3, 0.2, 0.0])
    assert dense_tvd(p, {1: 1.0}) == pytest.approx(0.5 * (0.5 + 0.7 + 0.2))
    assert dense_tvd(p, {0: 0.5, 1: 0.3, 2: 0.2}) == pytest.approx(0.0)
    assert dense_tvd(p, {3: 1.0}) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="token ids outside"):
        dense_tvd(p, {4: 1.0})
    with pytest.raises(ValueError, match="sums to"):
        dense_tvd(np.array([0.5, 0.4]), {0: 1.0})
    assert dense_entropy(p) == pytest.approx(-(0.5 * np.log(0.5) + 0.3 * np.log(0.3) + 0.2 * np.log(0.2)))


def test_dense_tvd_agrees_with_the_sparse_tvd_on_random_distributions():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.dirichlet(np.full(30, 0.3))
        support = rng.choice(30, size=rng.integers(1, 6), replace=False)
        q = dict(zip(support.tolist(), rng.dirichlet(np.ones(support.size)).tolist()))
        assert dense_tvd(p, q) == pytest.approx(tvd(dict(enumerate(p.tolist())), q), abs=1e-12)


def test_first_tokens_of_responses_with_the_gpt2_tokenizer(tiny_model):
    from varprobe.sampling.scoring import WordScorer

    first = WordScorer(WordModel(tiny_model.model, tiny_model.tokenizer)).first_token
    encode = tiny_model.tokenizer.encode
    assert encode(" windowsill")[0] == encode(" windows")[0] != encode("windows")[0]
    mapped = first_tokens({"windows": 2, "windowsill": 1, "cat": 1}, first)
    assert mapped == {encode(" windows")[0]: 3, encode(" cat")[0]: 1}


def test_token_table_on_a_hand_built_distribution():
    contexts = pd.DataFrame({"text_id": [1], "word_number": [2], "context": ["The"],
                             "context_length": [1], "word": ["cat"], "corpus_word": ["cat"]})
    responses = pd.DataFrame({"text_id": [1] * 3, "word_number": [2] * 3,
                              "response": ["cat", "cats", "dog"], "count": [2, 1, 1]})
    ids = {"cat": 0, "cats": 0, "dog": 1}  # "cats" starts with the token of "cat"
    p = np.array([0.6, 0.1, 0.3])
    settings = ControlSettings(seed=0, resplits=4, ece_bins=10, bootstrap_resamples=50)
    table, confidences, hits = token_table(contexts, responses, [p], first_token=ids.__getitem__,
                                           token_text=lambda t: f"<{t}>", settings=settings)
    row = table.iloc[0]
    assert row["tvd"] == pytest.approx(0.5 * (0.15 + 0.15 + 0.3))  # humans: {0: .75, 1: .25}
    assert (row["model_mode"], row["confidence"], row["human_majority"]) == ("<0>", 0.6, "<0>")
    assert row["n_first_tokens"] == 2 and row["model_probability_majority"] == pytest.approx(0.6)
    splits = [(first_tokens(o1, ids.__getitem__), first_tokens(o2, ids.__getitem__))
              for o1, o2 in oracle_splits((1, 2), {"cat": 2, "cats": 1, "dog": 1}, settings)]
    assert row["tvd_model_oracle1"] == pytest.approx(np.mean([dense_tvd(p, o1) for o1, _ in splits]))
    assert row["tvd_oracle2_oracle1"] == pytest.approx(np.mean([tvd(o2, o1) for o1, o2 in splits]))
    assert confidences.shape == hits.shape == (1, 4, 2)
    summary = token_summary(table, confidences, hits, settings).set_index("system")
    assert list(summary.index) == ["model", "oracle 1", "oracle 2"]
    # One context, model mode right with confidence 0.6: ECE = |1 - 0.6|.
    assert summary.loc["model", "ece_human_majority"] == pytest.approx(0.4)
    assert summary.loc["model", "expected_tvd"] == pytest.approx(0.3)
    assert np.isnan(summary.loc["oracle 1", "expected_tvd_oracle1"])


def test_cli_on_the_tiny_model(tmp_path, tiny_model_dir, passage_one):
    main(["token-level", "--model", json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)}),
          "--contexts", str(passage_one["contexts"]), "--responses", str(passage_one["responses"]),
          "--seed", "0", "--resplits", "3", "--ece-bins", "10", "--bootstrap", "50",
          "--tvd-out", str(tmp_path / "tvd.parquet"), "--summary-out", str(tmp_path / "summary.parquet")])
    per_context = tables.read(tmp_path / "tvd.parquet", "token_level_tvd")
    summary = tables.read(tmp_path / "summary.parquet", "token_level_summary")
    assert len(per_context) == 4
    assert per_context["tvd"].between(0, 1).all()
    # A near-uniform tiny model over 50k tokens is far from the humans.
    assert (per_context["tvd"] > 0.9).all()
    assert summary["system"].tolist() == ["model", "oracle 1", "oracle 2"]
    assert set(summary["model"]) == {"tiny"}
    main(["tvd-histogram", "--series", "model", "token_level_tvd", "tvd", str(tmp_path / "tvd.parquet"),
          "--series", "oracle 2", "token_level_tvd", "tvd_oracle2_human", str(tmp_path / "tvd.parquet"),
          "--xlabel", "TVD", "--figure", str(tmp_path / "fig.png"), "--table", str(tmp_path / "fig.parquet")])
    bars = tables.read(tmp_path / "fig.parquet", "tvd_histogram")
    assert bars.groupby("series")["count"].sum().to_dict() == {"model": 4, "oracle 2": 4}
    assert (tmp_path / "fig.png").stat().st_size > 5_000
