"""``zero_outside_nucleus`` against the nucleus computed by sorting the whole vocabulary."""

import pytest
import torch

from varprobe.sampling.nucleus import zero_outside_nucleus


def by_sorting(weights: torch.Tensor, mass: float) -> torch.Tensor:
    """The nucleus by definition: every token in descending order of weight (ties: lower id
    first), kept while the float64 weight before it is below ``mass`` times the row's total."""
    kept = torch.zeros_like(weights, dtype=torch.bool)
    for row, keep in zip(weights.double(), kept, strict=True):
        order = sorted(range(len(row)), key=lambda j: (-row[j].item(), j))
        before, total = 0.0, row.sum().item()
        for j in order:
            if before >= mass * total:
                break
            keep[j], before = True, before + row[j].item()
    return kept


def rows_of(dtype: torch.dtype, size: int) -> torch.Tensor:
    """Rows of every shape a nucleus meets: peaked and flat distributions, tokens of weight zero
    (top-k), ties at the boundary, one token, all tokens equal."""
    generator = torch.Generator().manual_seed(size)
    scales = torch.tensor([0.5, 2.0, 4.0, 8.0, 16.0] * 2)[:, None]
    weights = (torch.randn(10, size, generator=generator, dtype=torch.float64) * scales)
    weights = weights.sub(weights.amax(-1, keepdim=True)).exp()
    weights[1, ::2] = 0
    weights[2, :20] = weights[2].amax()                # twenty tied most probable tokens
    weights[3] = 0
    weights[3, size // 2] = 1
    weights[4] = 1
    return weights.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mass", [1e-9, 0.1, 0.5, 0.9, 0.99, 1 - 1e-12])
def test_the_nucleus_is_the_one_sorting_finds(dtype, mass):
    weights = rows_of(dtype, 3000)
    expected = by_sorting(weights, mass)
    kept = zero_outside_nucleus(weights.clone(), mass)
    assert torch.equal(kept > 0, expected & (weights > 0))
    assert torch.equal(kept[kept > 0], weights[kept > 0])             # kept weights untouched
    assert (expected.sum(-1) >= 1).all()
    assert mass < 0.5 or expected.sum(-1).unique().numel() > 3        # nuclei of many sizes


def test_a_rows_nucleus_does_not_depend_on_the_other_rows_or_the_layout():
    weights = rows_of(torch.float32, 5000)
    whole = zero_outside_nucleus(weights.clone(), 0.9)
    for rows in (slice(0, 1), slice(3, 7), slice(9, 10)):
        assert torch.equal(zero_outside_nucleus(weights[rows].clone(), 0.9), whole[rows])
    strided = torch.zeros(10, 3, 5000)
    strided[:, 2] = weights                                           # rows 15,000 floats apart
    assert torch.equal(zero_outside_nucleus(strided[:, 2], 0.9), whole)
    assert (strided[:, :2] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_row_holding_nan_of_either_sign_loses_every_weight_and_no_other_row_changes(dtype):
    """x86's NaN from an invalid operation (inf - inf) has its sign bit set: its exponent is
    read without the sign, within the exponents summed, and its row gets no nucleus."""
    weights = rows_of(dtype, 3000)
    whole = zero_outside_nucleus(weights.clone(), 0.9)
    poisoned = weights.clone()
    poisoned[2, 5], poisoned[6, 7] = float("nan"), -float("nan")
    assert torch.signbit(poisoned[6, 7]) and not torch.signbit(poisoned[2, 5])
    kept = zero_outside_nucleus(poisoned, 0.9)
    assert (kept[[2, 6]] == 0).all()
    assert torch.equal(kept[[0, 1, 3, 4, 5, 7, 8, 9]], whole[[0, 1, 3, 4, 5, 7, 8, 9]])


@pytest.mark.parametrize("weights", [torch.ones(2, 8, dtype=torch.bfloat16), torch.ones(2, 8)[:, ::2]])
def test_other_weights_are_named(weights):
    with pytest.raises(ValueError, match="nucleus: expected CPU float32/float64"):
        zero_outside_nucleus(weights, 0.9)
