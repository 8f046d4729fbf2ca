"""Exact enumeration of the first complete word, against brute force over every token sequence.

The brute-force model is a tiny random GPT-2 (float64) over a 12-token byte-level vocabulary
whose tokens exercise every boundary rule: space-led words, bare letters that glue onto the
context, the punctuation ``.``, ``'`` and ``-`` (part of a word's run until whitespace), the two
bytes of ``é`` as separate tokens (U+FFFD while half spelled) and end-of-text; a variant adds a
control token that is not end-of-text.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
import torch
from helpers import nan_logits

from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
from varprobe.words import COMPLETE, Extraction
from varprobe.sampling.word_model import Vocabulary, WordModel

VOCAB = ["<|endoftext|>", "a", "b", "Ġ", "Ġa", "Ġb", ".", "'", "-", "Ã", "©", "ab"]
CONTEXT = "a b"
ANCESTRAL = Decoding("ancestral")


def small_gpt2(special: list[str]):
    """(model, tokenizer) of a GPT-2 over VOCAB plus the added special tokens ``special``,
    weights from ``torch.manual_seed(1)``."""
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    tokenizer = GPT2Tokenizer(vocab={t: i for i, t in enumerate(VOCAB)}, merges=[])
    if special:
        tokenizer.add_special_tokens({"additional_special_tokens": special})
    torch.manual_seed(1)
    config = GPT2Config(vocab_size=len(tokenizer), n_layer=1, n_head=2, n_embd=16, n_positions=32,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).double().eval()
    with torch.no_grad():
        model.transformer.wte.weight.mul_(20.0)  # sharper next-token distributions
    return model, tokenizer


@pytest.fixture(scope="module")
def small():
    """The 12-token GPT-2."""
    return small_gpt2([])


CONTROL = "<|im_start|>"


@pytest.fixture(scope="module")
def with_control():
    """The GPT-2 over VOCAB plus the control token CONTROL (special, not end-of-text)."""
    return small_gpt2([CONTROL])


def enumerate_small(small, decoding=ANCESTRAL, **settings):
    model, tokenizer = small
    settings = {"target_mass": 1.0, "max_tokens": 4, "min_mass": 0.0, "batch_size": 8, "chunk": 3, **settings}
    return Enumerator(WordModel(model, tokenizer), decoding, EnumerationSettings(**settings)).enumerate(CONTEXT)


@torch.inference_mode()
def brute_force(small, decoding=ANCESTRAL, max_tokens=4) -> dict[str, float]:
    """Outcome probabilities from every token sequence of length ``max_tokens``, each scored by
    one full forward pass (no cache) and read as the sampler reads its draws."""
    model, tokenizer = small
    vocabulary = Vocabulary(tokenizer)
    context = tokenizer(CONTEXT)["input_ids"]
    size = len(tokenizer)
    sequences = list(itertools.product(range(size), repeat=max_tokens))
    ids = torch.tensor([context + list(s) for s in sequences])
    logits = model(input_ids=ids).logits[:, len(context) - 1 : -1]
    probs = decoding.probabilities(logits.reshape(-1, size)).reshape(len(sequences), max_tokens, -1)
    path = probs.gather(-1, ids[:, len(context) :, None])[..., 0].prod(-1).numpy()
    reads: dict[tuple[int, ...], str] = {}
    outcomes: dict[str, float] = defaultdict(float)
    for sequence, mass in zip(sequences, path, strict=True):
        outcomes[_outcome(vocabulary, sequence, reads)] += mass
    return dict(outcomes)


def _outcome(vocabulary: Vocabulary, sequence: tuple[int, ...], reads: dict) -> str:
    """The sampler's outcome of a draw that generated ``sequence`` (``reads`` caches prefixes)."""
    for n in range(1, len(sequence) + 1):
        if sequence[:n] not in reads:
            status = vocabulary.read(sequence[:n])
            reads[sequence[:n]] = (status.word or status.status) if status.done else ""
        if reads[sequence[:n]]:
            return reads[sequence[:n]]
    return "token_budget"


@pytest.fixture(scope="module")
def exhaustive(small):
    """The ancestral enumeration run to exhaustion (batch size 8, chunk 3)."""
    return enumerate_small(small)


def outcomes(result) -> dict[str, float]:
    return {**result.words, **{k: v for k, v in result.failures.items() if v > 0}}


def assert_same(found: dict[str, float], expected: dict[str, float], tol=1e-9) -> None:
    keys = {k for k, v in {**found, **expected}.items() if v > tol}
    assert {k: found.get(k, 0.0) for k in keys} == pytest.approx({k: expected.get(k, 0.0) for k in keys}, abs=tol)


def test_the_small_model_exercises_words_and_failures(small):
    exact = brute_force(small)
    assert len([k for k in exact if k not in ("token_budget", "extends_context_word")]) >= 3
    assert exact["extends_context_word"] > 0.01 and exact["token_budget"] > 1e-4
    assert any("e" in k for k in exact)  # "é" spelled from its two byte tokens


def test_exhaustive_enumeration_equals_brute_force(small, exhaustive):
    result = exhaustive
    assert result.unresolved_mass == 0
    assert result.covered_mass == pytest.approx(1.0, abs=1e-12)
    assert_same(outcomes(result), brute_force(small))


@pytest.mark.parametrize("decoding", [
    Decoding("cold", temperature=0.5),
    Decoding("top2", top_k=2),
    Decoding("nucleus", top_p=0.6),
    Decoding("typical", typical_p=0.5),
])
def test_enumeration_is_exact_under_a_decoding(small, exhaustive, decoding):
    expected = brute_force(small, decoding)
    assert_same(outcomes(enumerate_small(small, decoding)), expected)
    with pytest.raises(AssertionError):  # the decoding matters: ancestral differs
        assert_same(outcomes(exhaustive), expected)


def test_token_budget_follows_max_tokens(small):
    assert_same(outcomes(enumerate_small(small, max_tokens=2)), brute_force(small, max_tokens=2))


@pytest.mark.parametrize("target", [1.0, 0.9, 0.6])
@pytest.mark.parametrize("batch_size, chunk", [(1, 1), (3, 100), (64, 2)])
def test_result_does_not_depend_on_batch_or_chunk_size(small, target, batch_size, chunk):
    """Partial enumerations included: the search is sequential, batching only runs ahead of it."""
    reference = enumerate_small(small, target_mass=target)
    assert enumerate_small(small, target_mass=target, batch_size=batch_size, chunk=chunk) == reference


def test_children_below_min_mass_stay_unresolved(small, exhaustive):
    exact = outcomes(exhaustive)
    pruned = enumerate_small(small, min_mass=1e-4)
    assert 0 < pruned.unresolved_mass < 0.05
    assert pruned.forward_tokens < exhaustive.forward_tokens
    assert pruned.covered_mass + pruned.unresolved_mass == pytest.approx(1.0, abs=1e-12)
    for outcome, mass in outcomes(pruned).items():
        assert mass <= exact[outcome] + 1e-12


CHAIN = ["a", "a b", "a b.", "a b. b", "b"]  # the first four extend one another, then a new chain


@pytest.mark.parametrize("target", [1.0, 0.8])
def test_contexts_enumerated_together_equal_each_alone(small, target):
    model, tokenizer = small
    settings = EnumerationSettings(target_mass=target, max_tokens=4, min_mass=0.0, batch_size=5, chunk=3)
    enumerator = Enumerator(WordModel(model, tokenizer), ANCESTRAL, settings)
    together = list(enumerator.enumerate_many(CHAIN))
    assert len(together) == len(CHAIN)
    for context, found in zip(CHAIN, together, strict=True):
        alone = enumerator.enumerate(context)
        assert found.forward_tokens == alone.forward_tokens
        assert_same(outcomes(found), outcomes(alone), tol=1e-12)
    wider = Enumerator(WordModel(model, tokenizer), ANCESTRAL, EnumerationSettings(**{**vars(settings), "batch_size": 64}))
    assert list(wider.enumerate_many(CHAIN)) == together


def test_stopping_at_the_target_certifies_it_with_fewer_tokens(small, exhaustive):
    full = exhaustive
    partial = enumerate_small(small, target_mass=0.9, batch_size=1)
    assert 0.9 <= partial.covered_mass < 1.0
    assert partial.forward_tokens < full.forward_tokens
    assert partial.covered_mass + partial.unresolved_mass == pytest.approx(1.0, abs=1e-12)


def test_certificate_grows_and_resolved_masses_are_lower_bounds(small, exhaustive):
    exact = outcomes(exhaustive)
    covered = []
    for target in (0.3, 0.6, 0.8, 0.95, 0.99):
        result = enumerate_small(small, target_mass=target, batch_size=1, chunk=1)
        covered.append(result.covered_mass)
        for outcome, mass in outcomes(result).items():
            assert mass <= exact[outcome] + 1e-12
    assert covered == sorted(covered) and covered[0] >= 0.3


def test_forward_budget_stops_the_search(small):
    context_tokens = len(small[1](CONTEXT)["input_ids"])
    result = enumerate_small(small, max_forward_tokens=context_tokens + 5, batch_size=2)
    assert result.forward_tokens == context_tokens + 5
    assert result.unresolved_mass > 0


def test_sampler_draws_agree_with_the_enumeration(small, exhaustive):
    model, tokenizer = small
    sampler = CompleteWordSampler(WordModel(model, tokenizer), ANCESTRAL, SamplerSettings(n_samples=4000, max_tokens=4))
    counts: dict[str, int] = defaultdict(int)
    for draw in sampler.sample((0,), CONTEXT):
        counts[draw.word or draw.failure] += 1
    exact = outcomes(exhaustive)
    distance = 0.5 * sum(abs(counts.get(k, 0) / 4000 - exact.get(k, 0.0)) for k in {*counts, *exact})
    assert distance < 0.03


def test_a_control_token_ends_the_text(with_control):
    """A special token other than end-of-text ends the text like it, for the sampler's reading,
    the enumeration and the draws alike: it is never read as a word (``<|im_start|>`` ->
    ``imstart``) and never shows in a draw's text."""
    model, tokenizer = with_control
    vocabulary = Vocabulary(tokenizer)
    control, space, a = tokenizer.convert_tokens_to_ids([CONTROL, "Ġ", "Ġa"])
    assert vocabulary.read((space, control)) == Extraction("ended_before_word")
    assert vocabulary.read((a, control)) == Extraction(COMPLETE, "a")
    assert vocabulary.text((a, control)) == " a"
    result = enumerate_small(with_control, max_tokens=3)
    assert_same(outcomes(result), brute_force(with_control, max_tokens=3))
    assert result.words and all(set(word) <= set("abé") for word in result.words)
    sampler = CompleteWordSampler(WordModel(model, tokenizer), ANCESTRAL, SamplerSettings(n_samples=2000, max_tokens=4))
    draws = sampler.sample((0,), CONTEXT)
    assert not any("im" in d.word or "<|" in d.text for d in draws)
    ended = [d for d in draws if d.failure == "ended_before_word"]
    assert len(ended) > 50


def test_shortcut_classifies_as_the_sampler_reads(tiny_model):
    """On the real GPT-2 vocabulary, every token the shortcut resolves closes the open word."""
    enumerator = Enumerator(WordModel(tiny_model.model, tiny_model.tokenizer), ANCESTRAL, EnumerationSettings())
    closing = np.flatnonzero(enumerator.lm.closes_open_word)
    assert 20_000 < len(closing) < 50_257
    rng = np.random.default_rng(0)
    for text in (" cat", " don't", " well-kn", ' "Hello'):
        prefix = tuple(tiny_model.tokenizer.encode(text))
        word = enumerator._open_word(prefix)
        assert word
        for token in rng.choice(closing, 300, replace=False):
            assert enumerator.vocabulary.read((*prefix, int(token))).status == COMPLETE
            assert enumerator.vocabulary.read((*prefix, int(token))).word == word


def test_enumeration_on_gpt2_vocabulary_reaches_its_target(tiny_model):
    settings = EnumerationSettings(target_mass=0.5, max_forward_tokens=400, max_tokens=6, batch_size=16)
    enumerator = Enumerator(WordModel(tiny_model.model, tiny_model.tokenizer), ANCESTRAL, settings)
    contexts = ["The cat", "The cat sat on", "The cat sat on the"]
    together = list(enumerator.enumerate_many(contexts))
    for context, result in zip(contexts, together, strict=True):
        assert result.covered_mass >= 0.5 or result.forward_tokens == 400
        assert math.isclose(result.covered_mass + result.unresolved_mass, 1.0, abs_tol=1e-9)
        assert sum(result.distribution().values()) == pytest.approx(1.0)
        alone = enumerator.enumerate(context)
        assert result.forward_tokens == alone.forward_tokens
        assert result.distribution() == pytest.approx(alone.distribution(), abs=1e-5)
    one_by_one = EnumerationSettings(**{**vars(settings), "batch_size": 1, "chunk": 7})
    single = Enumerator(WordModel(tiny_model.model, tiny_model.tokenizer), ANCESTRAL, one_by_one)
    assert list(single.enumerate_many(contexts)) == together  # float32 too: the same to the bit


@pytest.mark.parametrize("poisoned", ["context", "expansions"])
def test_a_model_that_computes_nan_is_an_error_naming_the_context(tiny_model, poisoned):
    """NaN logits, in the contexts' own forward or in a later expansion, stop the enumeration
    with an error that names the chain's context, not with a distribution of NaN masses."""
    calls = []

    def when() -> bool:
        calls.append(None)
        return (len(calls) == 1) == (poisoned == "context")

    settings = EnumerationSettings(target_mass=0.9, max_forward_tokens=200, max_tokens=4, batch_size=16)
    enumerator = Enumerator(WordModel(tiny_model.model, tiny_model.tokenizer), ANCESTRAL, settings)
    with nan_logits(tiny_model.model, when), pytest.raises(
            ValueError, match="the context 'The cat sat on' or a prefix of it: .*NaN or infinity"):
        list(enumerator.enumerate_many(["The cat", "The cat sat on"]))
    assert len(calls) > 1 or poisoned == "context"


def test_a_decodings_texts_enumerates_those_passages_only(tmp_path, provo_norms, tiny_model_dir):
    """``texts`` on an enumerated decoding: the job enumerates only those passages' contexts,
    each exactly as the job over every passage does; a passage outside the contexts is named."""
    import json

    from varprobe import cli, tables
    from varprobe.data.provo import contexts_table

    contexts = contexts_table(provo_norms, [1, 2])
    contexts = contexts[contexts["word_number"] <= 4]
    path = tmp_path / "contexts.parquet"
    tables.write(contexts, path, "provo_contexts")
    exact = {"name": "exact", "method": "enumerate", "target_mass": 0.5, "max_forward_tokens": 8}

    def enumerate_(decoding, name):
        out = tmp_path / name
        cli.main(["provo-enumerate", "--model",
                  json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)}),
                  "--decoding", json.dumps(decoding), "--contexts", str(path),
                  "--max-tokens", "8", "--batch-size", "16", "--out", str(out)])
        return out

    every = tables.read(enumerate_(exact, "all.parquet"), "provo_distribution")
    only = enumerate_({**exact, "texts": [2]}, "two.parquet")
    two = tables.read(only, "provo_distribution")
    assert set(every["text_id"]) == {1, 2} and set(two["text_id"]) == {2}
    expected = every[every["text_id"] == 2].reset_index(drop=True)
    assert two.reset_index(drop=True).equals(expected)
    assert tables.read_metadata(only)["texts"] == [2]
    with pytest.raises(SystemExit):
        enumerate_({**exact, "texts": [3]}, "three.parquet")


def test_a_sliding_window_is_honoured_or_the_context_refused(tiny_model):
    """A tiny Gemma 3 whose layers alternate sliding (window W) and full attention: within the
    window the enumeration is the one of the same weights with a window no context reaches;
    a context whose tokens plus max_tokens exceed W is refused, naming the window."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    settings = EnumerationSettings(target_mass=0.5, max_forward_tokens=60, max_tokens=3, batch_size=16)
    contexts = ["The cat", "The cat sat on", "The cat sat on the"]
    longest = len(tiny_model.tokenizer(contexts[-1])["input_ids"]) + settings.max_tokens

    def enumerator(window: int) -> Enumerator:
        torch.manual_seed(0)
        config = Gemma3TextConfig(vocab_size=len(tiny_model.tokenizer), hidden_size=16, intermediate_size=32,
                                  num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                                  sliding_window=window, layer_types=["sliding_attention", "full_attention"])
        return Enumerator(WordModel(Gemma3ForCausalLM(config).eval(), tiny_model.tokenizer), ANCESTRAL, settings)

    windowed = list(enumerator(longest).enumerate_many(contexts))
    assert windowed == list(enumerator(10**6).enumerate_many(contexts))
    assert all(result.forward_tokens > 1 for result in windowed)
    with pytest.raises(NotImplementedError, match=f"needs {longest} positions, beyond Gemma3ForCausalLM's "
                                                  f"sliding attention window of {longest - 1}"):
        list(enumerator(longest - 1).enumerate_many(contexts))
