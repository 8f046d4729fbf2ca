"""The nucleus of top-p sampling (Holtzman et al. 2020), found without ranking the vocabulary.

A row's nucleus of mass p: in descending order of weight (ties: the lower token id first),
token j is kept when the weight of the tokens before it is below p times the row's total weight
(so at least one token is kept; ``Decoding``'s definition of ``top_p``).

Most of a next-token distribution's tokens lie far below its nucleus. The row's weights are
therefore first summed by their floating-point exponent (one pass; tokens of one exponent lie
within a factor of two of each other); the candidates are the tokens of the exponents, from the
highest down, whose cumulative weight first reaches ``p`` times the total. Every other token
has, before it, at least the candidates' weight, so it lies outside the nucleus. Only the
candidates are sorted. A row's nucleus depends on its own weights alone.
"""

from __future__ import annotations

import numba
import numpy as np
import torch

SAFETY = 1e-9
"""Relative margin by which the candidates' weight, summed by exponent, exceeds the target: a
float64 sum of float32 or float64 terms in another order (the candidates' sorted order) is
within ``V * 1.1e-16`` of it relatively (3e-11 for a 262k vocabulary)."""

_LAYOUT = {torch.float32: (np.uint32, 23, 256), torch.float64: (np.uint64, 52, 2048)}
"""Per weight dtype: the unsigned integer of its bits, the mantissa bits below its exponent and
the number of exponent values."""


def zero_outside_nucleus(weights: torch.Tensor, mass: float) -> torch.Tensor:
    """Set to zero, in place, the weight of every token outside its row's nucleus of ``mass``
    (the module's definition) and return ``weights``. A row holding a NaN (of either sign) has
    no nucleus: all its weights are set to zero.

    Parameters
    ----------
    weights : torch.Tensor
        Non-negative, unnormalised weights, shape ``(rows, V)``: float32 or float64, on the CPU,
        each row contiguous.
    mass : float
        The nucleus mass p of top-p sampling.

    Returns
    -------
    torch.Tensor
        ``weights``, modified in place.

    Raises
    ------
    ValueError
        When ``weights`` is not CPU float32/float64 rows with unit stride.
    """
    if weights.dtype not in _LAYOUT or weights.device.type != "cpu" or weights.stride(-1) != 1:
        raise ValueError(f"nucleus: expected CPU float32/float64 rows with unit stride, got "
                         f"{weights.dtype} on {weights.device} with strides {weights.stride()}")
    unsigned, shift, exponents = _LAYOUT[weights.dtype]
    values = weights.detach().numpy()
    _zero_outside(values, values.view(unsigned), shift, exponents, mass)
    return weights


@numba.njit(cache=True, nogil=True)
def _zero_outside(values, bits, shift, exponents, mass):
    """The module's nucleus, row by row, over ``values`` and the same memory read as integers
    (``bits``: a float's exponent is ``bits >> shift`` without the sign bit, so a NaN's lies
    within the ``exponents`` whatever its sign); the candidates' weight reaches the target
    ``mass`` times the total by the margin ``SAFETY``."""
    rows, size = values.shape
    index = np.empty(size, np.int64)
    top = exponents - 1
    for r in range(rows):
        row, row_bits = values[r], bits[r]
        by_exponent = np.zeros(exponents)
        for j in range(size):
            by_exponent[(row_bits[j] >> shift) & top] += row[j]
        total = 0.0
        for e in range(exponents):
            total += by_exponent[e]
        target = mass * total
        lowest, reached = 0, 0.0
        for e in range(exponents - 1, -1, -1):
            reached += by_exponent[e]
            if reached >= target * (1 + SAFETY):
                lowest = e
                break
        count = 0
        for j in range(size):
            if (row_bits[j] >> shift) & top >= lowest:
                index[count] = j
                count += 1
            else:
                row[j] = 0
        candidates = index[:count]
        before = 0.0
        for i in np.argsort(-row[candidates], kind="mergesort"):
            j = candidates[i]
            if before < target:
                before += row[j]
            else:
                row[j] = 0
