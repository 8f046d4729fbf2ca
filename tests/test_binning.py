"""The one binning rule of every ECE (``varprobe.metrics.binning``): edges go to the bin above them,
a quotient j / n goes to the bin of the rational j / n, the rule nests across numbers of bins, and
every ECE variant (``ece``, ``reliability_table``, the accumulator's top-label ECE, cw-ECE,
Full-ECE and weighted Full-ECE) puts a confidence exactly at an edge into the same bin."""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import numpy as np
import pytest

from varprobe.metrics import CalibrationAccumulator, bin_edges, bin_index, ece, reliability_table
from varprobe.metrics.token_calibration import METRICS


def nearest_double_bin(p: float, m: int) -> int:
    """The rule as stated, computed apart from the implementation: the largest b with p >= the
    double nearest to b / m (``float(Fraction)`` rounds correctly)."""
    edges = [float(Fraction(b, m)) for b in range(m + 1)]
    return min(bisect.bisect_right(edges, p) - 1, m - 1)


def rational_bin(value: Fraction, m: int) -> int:
    return min(math.floor(value * m), m - 1)


def test_edges_go_to_the_bin_above_and_the_ends_to_the_first_and_last_bin():
    assert bin_index([0.0, 0.25, 0.5, 0.75, 1.0], 4).tolist() == [0, 1, 2, 3, 3]
    assert bin_index([0.3, 0.6, 0.7, 1.0], 10).tolist() == [3, 6, 7, 9]
    assert bin_index([np.nextafter(0.3, 0.0)], 10).tolist() == [2]
    assert bin_edges(10)[3] == 0.3 and bin_edges(10)[-1] == 1.0


def test_a_quotient_goes_to_the_bin_of_the_rational_number():
    # fl(p * M) is wrong at 15 / 22 of 22 (it rounds below 15); the exact floor of the double is
    # wrong at 0.3 of 10 (the double is below 3 / 10). The rule is right at both.
    for n in (1, 2, 3, 7, 10, 22, 40, 97, 100, 1000):
        for m in (1, 2, 3, 5, 10, 20, 22, 50, 100, 200, 500, 1000):
            values = [Fraction(j, n) for j in range(n + 1)]
            got = bin_index(np.array([j / n for j in range(n + 1)]), m).tolist()
            assert got == [rational_bin(v, m) for v in values], (n, m)


def test_bin_index_is_the_stated_rule_on_any_double():
    rng = np.random.default_rng(0)
    values = [0.0, 1.0, 1 - 2**-53, 2**-1074, 0.29, 0.58, 0.145, 0.57]
    values += [float(np.nextafter(j / 100, side)) for j in range(101) for side in (0.0, 1.0)]
    values += rng.uniform(size=200).tolist()
    p = np.array(values)
    for m in (1, 3, 5, 10, 20, 22, 50, 100, 200, 500, 1000):
        assert bin_index(p, m).tolist() == [nearest_double_bin(v, m) for v in values], m


def test_the_rule_nests_so_fine_bins_sum_into_coarse_ones():
    rng = np.random.default_rng(1)
    p = np.concatenate([rng.uniform(size=500), np.arange(1001) / 1000, np.arange(23) / 22,
                        np.nextafter(np.arange(1001) / 1000, 0.0).clip(0, 1)])
    for fine, coarse in ((1000, 10), (1000, 200), (1000, 8), (660, 22), (4620, 22)):
        if fine % coarse == 0:
            assert (bin_index(p, fine) // (fine // coarse) == bin_index(p, coarse)).all(), (fine, coarse)


@pytest.mark.parametrize("n_bins", [0, -1, 2.0, True, 2**26 + 1])
def test_bad_numbers_of_bins_are_named(n_bins):
    with pytest.raises(ValueError, match=r"n_bins must be an integer in \[1, 67108864\], got "):
        bin_index([0.5], n_bins)


def direct(rows: list[list[Fraction]], labels: list[int], m: int, bin_of) -> dict[str, float]:
    """Every ECE variant at m bins from its definition, each probability binned by ``bin_of``."""
    n, k = len(rows), len(rows[0])
    probs = [[float(v) for v in row] for row in rows]
    top = [max(range(k), key=lambda c, row=row: row[c]) for row in probs]
    sums = {name: {} for name in METRICS}

    def add(name, key, outcome, probability):
        old = sums[name].get(key, (0.0, 0.0))
        sums[name][key] = (old[0] + outcome, old[1] + probability)

    for i, (row, exact) in enumerate(zip(probs, rows)):
        add("ece", bin_of(exact[top[i]], m), float(top[i] == labels[i]), row[top[i]])
        for c in range(k):
            hit = float(c == labels[i])
            b = bin_of(exact[c], m)
            add("classwise_ece", (c, b), hit, row[c])
            add("full_ece", b, hit, row[c])
            add("full_ece_weighted", b, row[c] * hit, row[c] ** 2)
    scale = {"ece": n, "classwise_ece": n * k, "full_ece": n, "full_ece_weighted": n}
    return {name: sum(abs(a - b) for a, b in sums[name].values()) / scale[name] for name in METRICS}


def below(value: Fraction, m: int) -> int:
    """The other assignment of an edge: to the bin below it."""
    b = rational_bin(value, m)
    return b - 1 if (value * m).denominator == 1 and 0 < value * m < m else b


# (M, j, n): the confidence j / n lies exactly on an edge of M bins (dyadic or not; above 1/2, so
# that it is its row's top label).
EDGES = [(10, 6, 10), (10, 7, 10), (10, 28, 40), (10, 9, 10), (4, 3, 4), (5, 3, 5), (22, 15, 22),
         (100, 71, 100), (100, 58, 100), (20, 13, 20)]


def row(top: Fraction) -> list[Fraction]:
    rest = (1 - top) / 7
    return [top, rest, 1 - top - rest]


@pytest.mark.parametrize(("m", "j", "n"), EDGES)
def test_a_confidence_at_an_edge_lands_in_the_same_bin_for_every_ece_variant(m, j, n):
    edge = Fraction(j, n)
    assert (edge * m).denominator == 1
    b = rational_bin(edge, m)
    # The edge row and, around it, one row inside each of the two bins the edge separates.
    inside_below, inside_above = Fraction(2 * b - 1, 2 * m), Fraction(2 * b + 1, 2 * m)
    rows = [row(edge), row(inside_below), row(inside_above)]
    labels = [1, 0, 0]
    expected = direct(rows, labels, m, rational_bin)
    other = direct(rows, labels, m, below)
    for name in METRICS:
        assert expected[name] != pytest.approx(other[name]), name  # the test can tell the bins apart
    probs = np.array([[float(v) for v in row] for row in rows])
    for bins in ((m,), (m, 3, 8)):
        acc = CalibrationAccumulator(3, bins=bins)
        acc.update(probs, np.array(labels))
        for name in METRICS:
            assert acc.metric(name, m) == pytest.approx(expected[name], abs=1e-12), (name, bins)
    confidence, correct = probs.max(axis=1), probs.argmax(axis=1) == np.array(labels)
    assert ece(confidence, correct, n_bins=m) == pytest.approx(expected["ece"], abs=1e-12)
    counts = reliability_table(confidence, correct, n_bins=m)["count"].to_numpy()
    assert counts[b] == 2 and counts[b - 1] == 1
    assert (bin_index(confidence, m) == [rational_bin(max(row), m) for row in rows]).all()
