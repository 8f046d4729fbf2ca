"""Full productions from tiny causal and seq2seq models through the one loading path."""

from __future__ import annotations

import pytest

from varprobe.models.loading import load_generator
from varprobe.models.spec import ModelSpec
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.generate import GenerationSettings, generate, generation_parameters, render_prompt


def _draw(loaded, work, decoding=Decoding("ancestral"), **settings):
    settings = GenerationSettings(**{"n_samples": 4, "max_new_tokens": 6, "seed": 0, **settings})
    return list(generate(loaded, work, decoding, settings))


@pytest.mark.parametrize("kind", ["t5", "marian"])
def test_seq2seq_models_load_as_such_and_draw_n_samples(tiny_seq2seq_dirs, kind):
    loaded = load_generator(ModelSpec(name=kind, pretrained=str(tiny_seq2seq_dirs[kind])))
    assert loaded.is_seq2seq
    work = [("1", "the cat sat on the mat"), ("2", "a dog ran")]
    first = _draw(loaded, work)
    assert [len(s) for s in first] == [4, 4]
    assert all(len(s.split()) <= 6 for samples in first for s in samples)
    assert _draw(loaded, work) == first                     # seeded per input
    assert _draw(loaded, work[1:]) == first[1:]             # independent of the other inputs
    assert _draw(loaded, work, seed=1) != first


def test_causal_lm_returns_the_continuation_only(tiny_model_dir):
    loaded = load_generator(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))
    assert not loaded.is_seq2seq
    (samples,) = _draw(loaded, [("x", "Once upon a time")], max_new_tokens=5)
    assert len(samples) == 4 and len(set(samples)) > 1
    assert not any(s.startswith("Once upon a time") for s in samples)
    with pytest.raises(ValueError, match="no chat template"):
        _draw(loaded, [("x", "Hi")], chat=True)


def test_parameters_are_explicit_and_prompts_name_bad_placeholders():
    parameters = generation_parameters(Decoding("top-k-30", top_k=30),
                                       GenerationSettings(10, 100, 0))
    assert parameters == {
        "do_sample": True, "temperature": 1.0, "top_k": 30, "top_p": 1.0, "typical_p": 1.0,
        "num_beams": 1, "repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
        "max_new_tokens": 100, "num_return_sequences": 10,
    }
    assert render_prompt("Simplify: {source}", "A b.") == "Simplify: A b."
    with pytest.raises(KeyError, match="placeholder 'text'"):
        render_prompt("{text}", "x")
