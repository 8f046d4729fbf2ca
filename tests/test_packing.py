"""Linear layers packed for oneDNN: the same products as ``torch.nn.Linear`` up to rounding, a
row's bits independent of its pass, the ordinary product under autograd, and loaded models
packed only where that holds (float32 on the CPU)."""

from __future__ import annotations

import pytest
import torch

from varprobe.models.loading import load_causal_lm, load_generator
from varprobe.models.packing import PackedLinear, can_pack, pack_linears, unpacked
from varprobe.models.spec import ModelSpec


def _layer(bias: bool = True, seed: int = 0) -> torch.nn.Linear:
    torch.manual_seed(seed)
    return torch.nn.Linear(200, 96, bias=bias)


@pytest.mark.parametrize("bias", [True, False])
def test_a_packed_layer_computes_the_linear_product(bias):
    dense = _layer(bias)
    x = torch.randn(3, 5, 200)
    with torch.inference_mode():
        expected = dense(x)
        packed = PackedLinear(dense)(x)
    assert packed.shape == (3, 5, 96)
    torch.testing.assert_close(packed, expected, rtol=1e-5, atol=1e-5)


def test_a_rows_bits_do_not_depend_on_the_other_rows_of_its_pass():
    packed = PackedLinear(_layer())
    x = torch.randn(80, 200)
    with torch.inference_mode():
        whole = packed(x)
        for rows in (2, 3, 7, 16, 17, 48, 64, 79):
            assert torch.equal(packed(x[:rows]), whole[:rows]), f"{rows} rows"
        order = torch.randperm(64, generator=torch.Generator().manual_seed(1))
        assert torch.equal(packed(x[:64][order]), whole[:64][order])


def test_with_gradients_it_is_the_ordinary_product_and_trains():
    dense = _layer()
    packed = PackedLinear(dense)
    x = torch.randn(4, 200)
    y = packed(x)
    assert y.requires_grad and torch.equal(y, dense(x))
    y.sum().backward()
    assert dense.weight.grad is not None and packed.weight is dense.weight


def test_a_weight_changed_in_place_is_packed_again():
    packed = PackedLinear(_layer(bias=False))
    x = torch.randn(4, 200)
    with torch.no_grad():
        before = packed(x)
        packed.weight.mul_(2)
        after = packed(x)
    torch.testing.assert_close(after, 2 * before, rtol=1e-5, atol=1e-5)


def _packed_layers(model: torch.nn.Module) -> int:
    return sum(isinstance(m, PackedLinear) for m in model.modules())


def test_a_float32_model_on_cpu_is_loaded_packed_with_the_same_logits(tiny_model_dir, tiny_seq2seq_dirs):
    loaded = load_causal_lm(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))
    model = loaded.model
    assert isinstance(model.lm_head, PackedLinear)
    assert model.lm_head.weight is model.get_input_embeddings().weight      # still tied
    ids = loaded.tokenizer("the cat sat on the mat", return_tensors="pt").input_ids
    with torch.inference_mode():
        packed_logits = model(ids).logits
        with unpacked():
            torch.testing.assert_close(packed_logits, model(ids).logits, rtol=1e-4, atol=1e-4)
    t5 = load_generator(ModelSpec(name="t5", pretrained=str(tiny_seq2seq_dirs["t5"]))).model
    assert _packed_layers(t5) > 0
    assert not any(type(m) is torch.nn.Linear for m in t5.modules())


def test_other_dtypes_stay_unpacked(tiny_seq2seq_dirs):
    marian = load_generator(ModelSpec(name="m", pretrained=str(tiny_seq2seq_dirs["marian"]),
                                      dtype="bfloat16")).model
    assert not can_pack(marian)
    assert pack_linears(marian) == 0 and _packed_layers(marian) == 0


def test_a_converted_layer_gets_the_ordinary_product():
    dense = _layer()
    packed = PackedLinear(dense).to(torch.bfloat16)
    x = torch.randn(4, 200, dtype=torch.bfloat16)
    with torch.inference_mode():
        assert torch.equal(packed(x), dense.to(torch.bfloat16)(x))


def test_with_onednn_switched_off_it_is_the_ordinary_product():
    dense = _layer()
    packed = PackedLinear(dense)
    x = torch.randn(16, 200)
    with torch.inference_mode(), unpacked():
        assert torch.equal(packed(x), dense(x))
    assert packed._packed is None                     # nothing was packed
    with torch.inference_mode():
        packed(x)
    assert packed._packed is not None
