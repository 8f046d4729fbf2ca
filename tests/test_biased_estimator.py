"""The biased model estimate (App. A): word scores with the beginning-of-word correction, the
support, the renormalisation, the CLI on the tiny model and the rules."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from helpers import nan_logits, output, scheduled, snakemake, write_config, write_provo_inputs

from varprobe import tables
from varprobe.families.biased_estimator.analysis import biased_estimates, sources, support, support_estimates
from varprobe.cli import main
from varprobe.metrics.dense import renormalise
from varprobe.sampling.chains import prefix_chains
from varprobe.sampling.scoring import CHAIN_CONTEXTS, WordScorer
from varprobe.sampling.word_model import WordModel


@pytest.fixture(scope="module")
def scorer(tiny_model):
    return WordScorer(WordModel(tiny_model.model, tiny_model.tokenizer), batch_size=3)


def _softmax(model, ids):
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0, -1].double(), -1)


def test_closing_tokens_are_special_tokens_and_tokens_that_start_with_whitespace(scorer, tiny_model):
    """The word rule: only whitespace (or the end of the text) completes a word, so a token
    that starts with punctuation (``.``, ``,``) continues it (``dog.`` is still open)."""
    encode = tiny_model.tokenizer.encode
    closing = scorer.closing.cpu().numpy()
    assert closing[tiny_model.tokenizer.eos_token_id]
    assert closing[encode(" the")[0]] and closing[encode(" .")[0]] and closing[encode("\n")[0]]
    for piece in ("cat", "'s", "-", ".", ","):
        assert not closing[encode(piece)[0]], piece


def test_word_probability_is_the_product_of_softmax_probabilities_and_the_closing_mass(
    scorer, tiny_model
):
    model, tokenizer = tiny_model.model, tiny_model.tokenizer
    context = "The cat sat on the"
    ids = tokenizer(context)["input_ids"]
    word = tokenizer.encode(" windowsill")
    assert len(word) == 2  # " windows" + "ill": a two-token word
    first, second, after = _softmax(model, ids), _softmax(model, ids + word[:1]), _softmax(model, ids + word)
    closing = tokenizer.encode(" a")[0], tokenizer.encode(" .")[0], tokenizer.eos_token_id
    mask = scorer.closing.cpu().numpy()
    by_hand = first[word[0]] * second[word[1]] * after[torch.tensor(mask)].sum()
    assert all(mask[t] for t in closing)
    assert after[torch.tensor(mask)].sum() > sum(after[t] for t in closing)
    scores = scorer.word_log_probs(context, ["windowsill", "mat", "a", "on", "extraordinarily"])
    assert math.exp(scores[0]) == pytest.approx(float(by_hand), rel=1e-9)
    one = tokenizer.encode(" mat")
    assert math.exp(scores[1]) == pytest.approx(
        float(first[one[0]] * _softmax(model, ids + one)[torch.tensor(mask)].sum()), rel=1e-9)


def test_scores_do_not_depend_on_the_batch(tiny_model):
    words = ["mat", "windowsill", "dog", "a", "extraordinarily", "cat's"]
    one = WordScorer(WordModel(tiny_model.model, tiny_model.tokenizer), batch_size=1).word_log_probs("It was", words)
    many = WordScorer(WordModel(tiny_model.model, tiny_model.tokenizer), batch_size=64).word_log_probs("It was", words)
    np.testing.assert_allclose(one, many, rtol=1e-6)
    # The correction only removes mass: P(w) <= P(tokens of " w").
    first = _softmax(tiny_model.model, tiny_model.tokenizer("It was")["input_ids"])
    assert math.exp(one[0]) < float(first[tiny_model.tokenizer.encode(" mat")[0]])


def test_contexts_of_a_passage_share_an_encoding_and_score_as_each_alone(scorer, tiny_model):
    """Contexts that extend one another form a chain encoded once; each reads only its own
    prefix of it, so its word scores and next-token distribution are those of it alone."""
    contexts = ["The cat", "The cat sat", "The cat sat on", "The cat sat on the", "A dog"]
    chains = prefix_chains(contexts, lambda c: tiny_model.tokenizer(c)["input_ids"], CHAIN_CONTEXTS)
    assert [len(chain) for chain in chains] == [4, 1]
    words = ["mat", "windowsill", "dog", "a"]
    together = list(scorer.word_log_probs_many((c, words) for c in contexts))
    alone = [scorer.word_log_probs(c, words) for c in contexts]
    np.testing.assert_allclose(together, alone, rtol=1e-6)
    for context, log_probs in zip(contexts, scorer.next_token_log_probs(contexts), strict=True):
        expected = _softmax(tiny_model.model, tiny_model.tokenizer(context)["input_ids"])
        np.testing.assert_allclose(log_probs.exp().numpy(), expected.numpy(), atol=1e-7)


def test_a_chain_longer_than_a_sliding_window_scores_as_each_context_alone(tiny_model):
    """A sliding-window layer keeps only its window's last positions of the chain's encoding,
    so the chain cannot be cut per context: its contexts are encoded one by one instead."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=len(tiny_model.tokenizer), hidden_size=16, intermediate_size=32,
                              num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                              sliding_window=4, layer_types=["sliding_attention", "full_attention"])
    scorer = WordScorer(WordModel(Gemma3ForCausalLM(config).eval(), tiny_model.tokenizer))
    contexts = ["The cat sat", "The cat sat on the", "The cat sat on the big red"]
    words = ["mat", "windowsill"]
    together = list(scorer.word_log_probs_many((c, words) for c in contexts))
    np.testing.assert_allclose(together, [scorer.word_log_probs(c, words) for c in contexts], rtol=1e-6)
    for context, log_probs in zip(contexts, scorer.next_token_log_probs(contexts), strict=True):
        alone = next(scorer.next_token_log_probs([context]))
        np.testing.assert_allclose(log_probs.numpy(), alone.numpy(), atol=1e-6)


def test_a_model_that_computes_nan_is_an_error_naming_the_context(scorer, tiny_model):
    """NaN logits at a context's end stop the scoring with an error naming the context, not with
    NaN word probabilities."""
    with nan_logits(tiny_model.model), pytest.raises(
            ValueError, match="the context 'It was a' or a prefix of it: .*NaN or infinity"):
        list(scorer.word_log_probs_many([("It was", ["a"]), ("It was a", ["dog"])]))


def test_prefix_chains_break_where_ids_stop_extending_and_at_the_limit():
    ids = {"a": [1], "ab": [1, 2], "abc": [1, 2, 3], "b": [2], "ba": [2, 1]}
    chains = list(prefix_chains(["a", "ab", "abc", "b", "ba", "a"], ids.__getitem__, 2))
    assert [[item for item, _ in chain] for chain in chains] == [["a", "ab"], ["abc"], ["b", "ba"], ["a"]]
    assert chains[0] == [("a", [1]), ("ab", [1, 2])]
    with pytest.raises(ValueError, match="at least one"):
        list(prefix_chains(["a"], ids.__getitem__, 0))


def test_renormalise_is_eq_1():
    np.testing.assert_allclose(renormalise(np.log([0.1, 0.3])), [0.25, 0.75])
    np.testing.assert_allclose(renormalise([-1000.0, -1000.0 + math.log(3)]), [0.25, 0.75])
    np.testing.assert_allclose(renormalise([0.0, -np.inf]), [1.0, 0.0])
    for bad in ([], [-np.inf, -np.inf], [np.nan, 0.0]):
        with pytest.raises(ValueError):
            renormalise(bad)


def test_support_is_the_union_of_the_sources_with_where_each_word_came_from():
    order = sources([0.9])
    assert order == ("samples", "greedy", "nucleus-0.9", "human", "corpus")
    found = support({"corpus": ["mat"], "samples": ["rug", "mat"], "greedy": [""],
                     "nucleus-0.9": ["mat", "", "..."], "human": ["floor", "rug"]}, order)
    assert found == {"rug": ["samples", "human"], "mat": ["samples", "nucleus-0.9", "corpus"],
                     "floor": ["human"]}


def test_estimates_renormalise_the_scores_over_the_support():
    contexts = pd.DataFrame({"text_id": [1], "word_number": [2], "context": ["The"],
                             "context_length": [1], "word": ["cat"], "corpus_word": ["cat"]})
    responses = pd.DataFrame({"text_id": [1, 1], "word_number": [2, 2], "response": ["dog", "cat"],
                              "count": [3, 1]})
    samples = pd.DataFrame({"text_id": [1, 1, 1], "word_number": [2, 2, 2], "word": ["sun", "", "dog"],
                            "failed": [False, True, False], "count": [2, 1, 1]})
    draws = {(1, 2): {"greedy": ["sun"], "nucleus-0.9": ["moon", ""]}}
    given = {"sun": math.log(0.2), "dog": math.log(0.1), "moon": math.log(0.05), "cat": math.log(0.05)}
    seen = []

    def score_many(pairs):
        for context, words in pairs:
            seen.append((context, list(words)))
            yield np.array([given[w] for w in words])

    table = biased_estimates(contexts, samples, responses, draws, score_many=score_many, order=sources([0.9]))
    estimates, failure_rate = support_estimates(table)
    assert seen == [("The", ["dog", "sun", "moon", "cat"])]
    assert estimates[(1, 2)].distribution == pytest.approx({"sun": 0.5, "dog": 0.25, "moon": 0.125, "cat": 0.125})
    assert (estimates[(1, 2)].n_draws, estimates[(1, 2)].n_words) == (7, 5)
    assert failure_rate == pytest.approx(2 / 7)
    assert dict(zip(table["word"], table["sources"])) == {
        "dog": "samples,human", "sun": "samples,greedy", "moon": "nucleus-0.9", "cat": "human,corpus"}
    assert table["probability"].sum() == pytest.approx(1.0)


def _biased(tmp_path, model, inputs, shard, shards) -> Path:
    out = tmp_path / f"support-{shard}-of-{shards}.parquet"
    main(["biased-estimator", "--model", model, "--contexts", str(inputs["contexts"]),
          "--responses", str(inputs["responses"]), "--seed", "0", "--samples", str(tmp_path / "samples.parquet"),
          "--nucleus", "0.8", "0.9", "--nucleus-samples", "3", "--max-tokens", "6", "--batch-size", "32",
          "--shard", str(shard), "--shards", str(shards), "--out", str(out)])
    return out


def _merge(tmp_path, inputs, shards, name) -> None:
    main(["biased-estimator-merge", "--shards", *map(str, shards), "--contexts", str(inputs["contexts"]),
          "--responses", str(inputs["responses"]), "--seed", "0", "--resplits", "3", "--ece-bins", "10",
          "--bootstrap", "50", "--support-out", str(tmp_path / f"{name}support.parquet"),
          "--tvd-out", str(tmp_path / f"{name}tvd.parquet"), "--system-out", str(tmp_path / f"{name}system.parquet")])


def test_cli_on_the_tiny_model_in_shards(tmp_path, tiny_model_dir, provo_norms):
    """Two passages in one shard and in two: the merged shards give the same support, TVDs and
    system row; every human response is in its context's support, which sums to 1."""
    model = json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)})
    inputs = write_provo_inputs(tmp_path, provo_norms, [1, 2], 3)
    main(["provo-sample", "--model", model, "--decoding", '{"name": "ancestral"}', "--contexts",
          str(inputs["contexts"]), "--n-samples", "4", "--max-tokens", "6", "--batch-size", "32",
          "--seed", "0", "--out", str(tmp_path / "samples.parquet")])
    _merge(tmp_path, inputs, [_biased(tmp_path, model, inputs, 1, 1)], "")
    parts = [_biased(tmp_path, model, inputs, i, 2) for i in (1, 2)]
    assert [tables.read(p, "biased_support")["text_id"].unique().tolist() for p in parts] == [[1], [2]]
    _merge(tmp_path, inputs, parts, "sharded-")
    for name, schema in (("support", "biased_support"), ("tvd", "provo_tvd"), ("system", "provo_system")):
        assert tables.read(tmp_path / f"sharded-{name}.parquet", schema).equals(
            tables.read(tmp_path / f"{name}.parquet", schema)), name
    found = tables.read(tmp_path / "support.parquet", "biased_support")
    per_context = tables.read(tmp_path / "tvd.parquet", "provo_tvd")
    system = tables.read(tmp_path / "system.parquet", "provo_system")
    responses = tables.read(inputs["responses"], "provo_responses")
    assert len(per_context) == 6 and per_context["tvd"].notna().all()
    for key, rows in found.groupby(["text_id", "word_number"]):
        assert rows["probability"].sum() == pytest.approx(1.0)
        assert rows["word"].is_unique
        humans = responses[(responses["text_id"] == key[0]) & (responses["word_number"] == key[1])]
        assert set(humans["response"]) <= set(rows["word"])
    assert found["sources"].str.contains("greedy").any() and found["sources"].str.contains("nucleus-0.8").any()
    assert system["decoding"].tolist() == ["biased"]
    assert 0 <= system["ece_corpus"].iloc[0] <= 1
    metadata = tables.read_metadata(tmp_path / "support.parquet")
    assert metadata["biased"]["nucleus"] == [0.8, 0.9]


def _analyses_config(path, data_mirror, tiny_model_dir, **biased):
    write_config(path, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}])
    config = yaml.safe_load((path / "config.yaml").read_text())
    config["analyses"] = {"biased_estimator": biased, "token_level": {}}
    (path / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.mark.slow
def test_rules_are_scheduled_per_network_model(tmp_path, data_mirror, tiny_model_dir):
    _analyses_config(tmp_path, data_mirror, tiny_model_dir, nucleus=[0.9], nucleus_samples=5)
    jobs = scheduled(tmp_path)
    for rule in ("biased_estimator", "biased_estimator_summary", "biased_estimator_figure",
                 "token_level", "token_level_figure"):
        assert jobs[rule] == 1, jobs
    assert jobs["provo_sample"] == 1


@pytest.mark.slow
def test_samples_decoding_must_be_a_sampled_decoding(tmp_path, data_mirror, tiny_model_dir):
    _analyses_config(tmp_path, data_mirror, tiny_model_dir, samples_decoding="greedy-ish")
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "samples_decoding" in output(run) and "greedy-ish" in output(run)
