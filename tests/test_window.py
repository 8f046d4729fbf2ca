"""A context or prompt longer than a model's positions is refused before any draw, naming it and
the lengths (``varprobe.models.window``): a rotary model (SmolLM2's architecture) otherwise reads
it past its trained positions and the job ends with exit 0."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from varprobe.models.window import check_window, position_limit
from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
from varprobe.sampling.generate import GenerationSettings, generate
from varprobe.sampling.word_model import WordModel


@pytest.fixture(scope="module")
def llama(tiny_llama_dir):
    """The tiny Llama (rotary positions, 256 of them) loaded as a hub model is."""
    from varprobe.models.loading import load_causal_lm
    from varprobe.models.spec import ModelSpec

    return load_causal_lm(ModelSpec(name="tiny-llama", pretrained=str(tiny_llama_dir)))


def _words(llama, tokens: int) -> str:
    """A text of ``tokens`` tokens under the tiny model's tokenizer (with its special ones)."""
    text = " ".join(["the"] * tokens)
    while len(llama.tokenizer(text)["input_ids"]) > tokens:
        text = text.rsplit(" ", 1)[0]
    assert len(llama.tokenizer(text)["input_ids"]) == tokens
    return text


def test_the_position_limit_is_read_from_the_config():
    assert position_limit(SimpleNamespace(max_position_embeddings=8192)) == 8192
    assert position_limit(SimpleNamespace(n_positions=1024)) == 1024
    assert position_limit(SimpleNamespace(n_ctx=2048, n_positions=None)) == 2048
    assert position_limit(SimpleNamespace(relative_attention_num_buckets=32)) is None


def test_a_text_fits_exactly_up_to_the_limit_and_is_refused_one_past_it():
    config = SimpleNamespace(max_position_embeddings=8192)
    check_window([("context (1, 2)", 8187)], 5, config=config, model_name="m", fix="fix it")
    check_window([("context (1, 2)", 10**6)], 5, config=SimpleNamespace(), model_name="m",
                 fix="fix it")  # no limit
    with pytest.raises(ValueError) as raised:
        check_window([("context (1, 2)", 10), ("context (1, 5001) (5,000 words)", 9765), ("c", 8188)], 5,
                     config=config, model_name="HuggingFaceTB/SmolLM2-135M", fix="fix it")
    assert str(raised.value) == ("context (1, 5001) (5,000 words) encodes to 9,765 tokens; with up to 5 new "
                                 "tokens it needs 9,770 positions, and model 'HuggingFaceTB/SmolLM2-135M' "
                                 "has 8,192 (2 text(s) too long in all); fix it")


def test_the_sampler_refuses_a_context_past_the_models_positions(llama):
    sampler = CompleteWordSampler(WordModel(llama.model, llama.tokenizer), Decoding("ancestral"),
                                  SamplerSettings(n_samples=2, max_tokens=5))
    fits = _words(llama, 251)
    assert len(list(sampler.sample_many([((1, 2), "The cat"), ((1, 252), fits)]))) == 2
    with pytest.raises(ValueError) as raised:
        next(sampler.sample_many([((1, 2), "The cat"), ((1, 253), _words(llama, 252))]))
    message = str(raised.value)
    assert message.startswith("context (1, 253) (") and "encodes to 252 tokens" in message
    assert "needs 257 positions" in message and "has 256" in message and "provo.texts" in message


def test_the_enumerator_refuses_a_context_past_the_models_positions(llama):
    enumerator = Enumerator(WordModel(llama.model, llama.tokenizer), Decoding("ancestral"),
                            EnumerationSettings(max_tokens=5, target_mass=0.5))
    with pytest.raises(ValueError, match=r"context \(3, 4\) \(.* words\) encodes to 252 tokens"):
        next(enumerator.enumerate_many(["The cat", _words(llama, 252)], ["context (1, 2)", "context (3, 4)"]))


def test_generation_refuses_a_prompt_past_the_models_positions(llama):
    settings = GenerationSettings(n_samples=2, max_new_tokens=10, seed=0)
    work = [("a", "The cat"), ("b", _words(llama, 250))]
    with pytest.raises(ValueError) as raised:
        list(generate(llama, work, Decoding("ancestral"), settings))
    assert str(raised.value).startswith("the prompt of input 'b' encodes to 250 tokens; with up to 10 new "
                                        "tokens it needs 260 positions")


def test_word_scoring_refuses_a_context_past_the_models_positions(llama):
    from varprobe.sampling.scoring import WordScorer

    scorer = WordScorer(WordModel(llama.model, llama.tokenizer))
    assert len(list(scorer.next_token_log_probs(["The cat", _words(llama, 256)]))) == 2
    with pytest.raises(ValueError, match=r"context 'the the .*' \(.* words\) encodes to 256 tokens; with up to 1 "):
        next(scorer.word_log_probs_many([("The cat", ["sat"]), (_words(llama, 256), ["the"])]))
