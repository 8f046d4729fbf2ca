"""The Wasserstein-1 distance between distance distributions and the human control
(``varprobe.metrics.wasserstein``; Giulianelli et al. 2023, Sec. 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varprobe.metrics.wasserstein import control_split, control_w1, w1


def test_w1_matches_hand_values():
    assert w1([0.0, 1.0], [0.5]) == pytest.approx(0.5)
    assert w1([0.2, 0.4], [0.2, 0.4]) == 0.0
    assert np.isnan(w1([], [0.1]))


def test_control_halves_are_disjoint_and_compare_within_half_pairs():
    rng = np.random.default_rng(3)
    for n in (4, 5, 10):
        first, second = control_split(n, rng)
        assert set(first).isdisjoint(second) and set(first) | set(second) == set(range(n))
        assert (len(first), len(second)) == (n // 2, n - n // 2)
    # Four references with distances d(i, j) = i + j: the halves' single pairs differ by the
    # W1 of two point masses.
    human = pd.DataFrame([(a, b, float(a + b)) for a in range(4) for b in range(a + 1, 4)],
                         columns=["a", "b", "distance"])
    first, second = control_split(4, np.random.default_rng(7))
    expected = abs(sum(first) - sum(second))
    value = control_w1(human["a"].to_numpy(), human["b"].to_numpy(), human["distance"].to_numpy(),
                       n_refs=4, rng=np.random.default_rng(7))
    assert value == pytest.approx(expected)
