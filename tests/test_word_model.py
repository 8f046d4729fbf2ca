"""varprobe.sampling.word_model: the one reading of a causal LM that the sampler, the enumerator and
the scorer share."""

from __future__ import annotations

import numpy as np

from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
from varprobe.sampling.scoring import WordScorer
from varprobe.sampling.word_model import WordModel


def test_the_samplers_condition_on_the_one_encoding_of_a_context(tiny_model):
    lm = WordModel(tiny_model.model, tiny_model.tokenizer)
    context = "The cat sat on the"
    assert lm.encode(context) == list(tiny_model.tokenizer(context)["input_ids"])
    assert lm.size == tiny_model.model.get_output_embeddings().weight.shape[0]
    sampler = CompleteWordSampler(lm, Decoding("ancestral"), SamplerSettings(n_samples=3, max_tokens=4))
    enumerator = Enumerator(lm, Decoding("ancestral"), EnumerationSettings(max_tokens=4, target_mass=0.5))
    scorer = WordScorer(lm)
    assert sampler.lm is enumerator.lm is scorer.lm is lm


def test_the_scorer_adds_the_special_tokens_to_its_own_copy_of_b(tiny_model):
    """B (the tokens that close an open word run) is computed once per model; the scorer also
    closes a word on every special token, in a set of its own, so the enumerator sharing the
    model still reads B alone."""
    lm = WordModel(tiny_model.model, tiny_model.tokenizer)
    before = lm.closes_open_word.copy()
    scorer = WordScorer(lm)
    special = sorted(t for t in lm.vocabulary.special if t < lm.size)
    assert special and not before[special].any()
    np.testing.assert_array_equal(lm.closes_open_word, before)
    closing = scorer.closing.cpu().numpy()
    assert closing[special].all() and (closing & ~before).sum() == len(special)
    enumerator = Enumerator(lm, Decoding("ancestral"), EnumerationSettings(max_tokens=4, target_mass=0.5))
    np.testing.assert_array_equal(enumerator._closing.cpu().numpy(), before)
