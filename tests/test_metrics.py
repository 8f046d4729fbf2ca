"""Hand-worked checks for varprobe.metrics."""

import doctest
import importlib
import math
import pkgutil
from collections import Counter

import numpy as np
import pytest

import varprobe.metrics
from varprobe.metrics import bootstrap
from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.calibration import ece, reliability_table
from varprobe.metrics.distributions import entropy, mle, mode, split_counts, tvd, tvd_interval
from varprobe.metrics.histogram import histogram_overlap

# ---- tvd --------------------------------------------------------------------


def test_tvd_disjoint_supports_is_one():
    assert tvd({"a": 0.5, "b": 0.5}, {"c": 1.0}) == 1.0


def test_tvd_identical_is_zero():
    p = {"a": 0.2, "b": 0.3, "c": 0.5}
    assert tvd(p, dict(p)) == 0.0


def test_tvd_worked_case_and_symmetry():
    # |.5-.25| + |.5-0| + |0-.75| = .25 + .5 + .75 = 1.5, halved -> 0.75
    p, q = {"a": 0.5, "b": 0.5}, {"a": 0.25, "c": 0.75}
    assert tvd(p, q) == pytest.approx(0.75)
    assert tvd(q, p) == tvd(p, q)


def test_tvd_missing_key_equals_explicit_zero():
    p, q = {"a": 1.0}, {"a": 0.6, "b": 0.4}
    assert tvd(p, q) == pytest.approx(0.4)
    assert tvd({"a": 1.0, "b": 0.0}, q) == tvd(p, q)


@pytest.mark.parametrize(
    ("p", "q", "match"),
    [
        ({"a": 0.5, "b": 0.6}, {"a": 1.0}, r"p sums to 1\.1"),
        ({"a": 1.0}, {"a": 2.0}, r"q sums to 2"),
        ({}, {"a": 1.0}, "p is empty"),
        ({"a": 1.0}, {}, "q is empty"),
        ({"a": 1.5, "b": -0.5}, {"a": 1.0}, r"p\['b'\]"),
        ({"a": float("nan")}, {"a": 1.0}, r"p\['a'\]"),
    ],
)
def test_tvd_rejects_invalid_distributions(p, q, match):
    with pytest.raises(ValueError, match=match):
        tvd(p, q)


# ---- entropy and mode ---------------------------------------------------------


def test_entropy_uniform_over_four_is_log_four():
    assert entropy({w: 0.25 for w in "abcd"}) == pytest.approx(math.log(4))


def test_entropy_point_mass_and_zero_probabilities_are_zero():
    assert entropy({"a": 1.0}) == 0.0
    assert entropy({"a": 1.0, "b": 0.0}) == 0.0


def test_mode_breaks_ties_by_smallest_word_regardless_of_order():
    assert mode({"b": 0.4, "a": 0.4, "c": 0.2}) == ("a", 0.4)
    assert mode({"c": 0.2, "a": 0.4, "b": 0.4}) == ("a", 0.4)
    assert mode({"z": 0.7, "a": 0.3}) == ("z", 0.7)


def test_entropy_and_mode_reject_empty():
    with pytest.raises(ValueError, match="p is empty"):
        entropy({})
    with pytest.raises(ValueError, match="p is empty"):
        mode({})


# ---- mle ----------------------------------------------------------------------


def test_mle_relative_frequencies_drop_zero_counts():
    assert mle({"a": 3, "b": 1, "c": 0}) == {"a": 0.75, "b": 0.25}


def test_mle_rejects_negative_count():
    with pytest.raises(ValueError, match=r"counts\['b'\] = -1"):
        mle({"a": 2, "b": -1})


@pytest.mark.parametrize("counts", [{}, {"a": 0, "b": 0}])
def test_mle_rejects_no_observations(counts):
    with pytest.raises(ValueError, match="counts is empty"):
        mle(counts)


# ---- split_counts ---------------------------------------------------------------

COUNTS = {"the": 5, "a": 3, "his": 1, "her": 2}  # n = 11


def test_split_halves_are_disjoint_and_sum_back():
    first, second = split_counts(COUNTS, np.random.default_rng(0))
    assert Counter(first) + Counter(second) == Counter(COUNTS)
    # Odd n: oracle 1 gets floor(11/2) = 5, oracle 2 the extra one.
    assert sum(first.values()) == 5
    assert sum(second.values()) == 6
    assert all(c > 0 for c in [*first.values(), *second.values()])


def test_split_is_reproducible_and_ignores_dict_order():
    reordered = dict(reversed(list(COUNTS.items())))
    a = split_counts(COUNTS, np.random.default_rng(7))
    b = split_counts(COUNTS, np.random.default_rng(7))
    c = split_counts(reordered, np.random.default_rng(7))
    assert a == b == c


def test_split_of_two_responses_gives_one_each():
    first, second = split_counts({"x": 2}, np.random.default_rng(1))
    assert first == {"x": 1} and second == {"x": 1}


@pytest.mark.parametrize(
    ("counts", "match"),
    [({"a": 1}, "n = 1"), ({}, "n = 0"), ({"a": 2.5}, "integer"), ({"a": -1, "b": 3}, "-1")],
)
def test_split_rejects_bad_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        split_counts(counts, np.random.default_rng(0))


def test_split_rejects_global_state_rng():
    with pytest.raises(ValueError, match="rng"):
        split_counts(COUNTS, 0)


# ---- ece ----------------------------------------------------------------------


def test_ece_hand_worked():
    # 10 bins: 0.95, 0.95 -> bin 9; 1.0 -> min(10, 9) = bin 9; 0.15 -> bin 1.
    # bin 9: conf (0.95 + 0.95 + 1.0)/3 = 0.9667, acc 2/3 -> (3/4) * 0.3 = 0.225
    # bin 1: conf 0.15, acc 0 -> (1/4) * 0.15 = 0.0375
    # ECE = 0.225 + 0.0375 = 0.2625
    assert ece([0.95, 0.95, 0.15, 1.0], [1, 0, 0, 1], n_bins=10) == pytest.approx(0.2625)


def test_reliability_table_edges_and_empty_bins():
    table = reliability_table([0.0, 1.0, 1.0, 0.55], [False, True, True, True], n_bins=10)
    assert list(table.columns) == ["bin", "lower", "upper", "count", "mean_confidence", "accuracy"]
    assert table["count"].tolist() == [1, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert table.loc[9, "mean_confidence"] == 1.0 and table.loc[9, "accuracy"] == 1.0
    assert table.loc[1:4, ["mean_confidence", "accuracy"]].isna().all().all()
    assert table["lower"].iloc[0] == 0.0 and table["upper"].iloc[-1] == 1.0


def test_ece_matches_reliability_table():
    rng = np.random.default_rng(3)
    conf = rng.uniform(size=200)
    correct = rng.uniform(size=200) < conf
    table = reliability_table(conf, correct, n_bins=15).dropna()
    expected = (table["count"] / 200 * (table["accuracy"] - table["mean_confidence"]).abs()).sum()
    assert ece(conf, correct, n_bins=15) == pytest.approx(expected)


def test_ece_perfectly_calibrated_bins_and_empty_bins_give_zero():
    # bin 2: conf 0.25 x4, one correct; bin 7: conf 0.75 x4, three correct; 8 bins empty.
    conf = [0.25] * 4 + [0.75] * 4
    correct = [1, 0, 0, 0, 1, 1, 1, 0]
    assert ece(conf, correct, n_bins=10) == pytest.approx(0.0)


def test_ece_single_bin_is_gap_of_averages():
    assert ece([0.2, 0.9], [1, 1], n_bins=1) == pytest.approx(1.0 - 0.55)


@pytest.mark.parametrize(
    ("conf", "correct", "n_bins", "match"),
    [
        ([0.5, 0.5], [1], 10, "lengths must match"),
        ([], [], 10, "confidences must be a non-empty"),
        ([1.2], [1], 10, r"confidences must lie in \[0, 1\], got 1\.2"),
        ([float("nan")], [1], 10, "confidences must lie"),
        ([0.5], [2], 10, "correct must be boolean or 0/1, got 2"),
        ([0.5], [1], 0, r"n_bins must be an integer in \[1, 67108864\], got 0"),
    ],
)
def test_ece_rejects_bad_inputs(conf, correct, n_bins, match):
    with pytest.raises(ValueError, match=match):
        ece(conf, correct, n_bins=n_bins)


# ---- bootstrap ------------------------------------------------------------------


def test_bootstrap_constant_values():
    mean, low, high = bootstrap_mean_ci([0.3] * 50, np.random.default_rng(0))
    assert mean == low == high == pytest.approx(0.3)


def test_bootstrap_single_item_is_exact():
    assert bootstrap_mean_ci([0.42], np.random.default_rng(0)) == (0.42, 0.42, 0.42)


def test_bootstrap_interval_contains_mean_and_is_reproducible():
    values = np.random.default_rng(5).uniform(size=3000)
    result = bootstrap_mean_ci(values, np.random.default_rng(11))
    mean, low, high = result
    assert mean == pytest.approx(values.mean())
    assert low < mean < high
    # Standard error of a uniform mean over 3000 items is ~0.0053; 95% half-width ~0.0103.
    assert high - low == pytest.approx(2 * 1.96 * values.std() / math.sqrt(3000), rel=0.2)
    assert bootstrap_mean_ci(values, np.random.default_rng(11)) == result


def _schema_minimum(*path: str) -> int:
    """The schema's minimum of the config key at ``path``."""
    from pathlib import Path

    import yaml

    node = yaml.safe_load((Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml").read_text())
    for key in path:
        node = node["properties"][key]
    return node["minimum"]


@pytest.mark.parametrize("study", ["provo", "production"])
def test_the_fewest_resamples_the_config_allows_give_intervals_that_hold_their_estimate(study):
    """Issue 70, round four: ``production.bootstrap_resamples: 1`` passed the schema and printed
    "95%" intervals of one point that missed their own mean (chrF ``4.957 [3.419, 3.419]``). At
    the schema's fewest, every 2.5% tail holds a resample, and the interval of a mean over a few
    skewed items holds the mean and has two ends."""
    fewest = _schema_minimum(study, "bootstrap_resamples")
    assert fewest * 0.025 >= 1
    rng = np.random.default_rng(3)
    for n in range(2, 40):
        values = rng.exponential(size=n) ** 3
        mean, low, high = bootstrap_mean_ci(values, rng, n_resamples=fewest)
        assert low < high and low <= mean <= high, (n, mean, low, high)


def test_bootstrap_lower_level_gives_narrower_interval():
    values = np.random.default_rng(2).normal(size=100)
    _, low50, high50 = bootstrap_mean_ci(values, np.random.default_rng(0), level=0.5)
    _, low95, high95 = bootstrap_mean_ci(values, np.random.default_rng(0), level=0.95)
    assert high50 - low50 < high95 - low95


def test_bootstrap_chunked_draws_cover_all_resamples(monkeypatch):
    # A tiny cap forces 7 resamples over 3 chunks (3 + 3 + 1 rows).
    monkeypatch.setattr(bootstrap, "_MAX_CHUNK_ENTRIES", 30)
    values = np.arange(10.0)
    mean, low, high = bootstrap_mean_ci(values, np.random.default_rng(0), n_resamples=7)
    assert mean == 4.5 and 0.0 <= low <= high <= 9.0


@pytest.mark.parametrize(
    ("values", "kwargs", "match"),
    [
        ([], {}, "values must be a non-empty"),
        ([1.0, float("inf")], {}, "values must be finite, got inf"),
        ([1.0], {"n_resamples": 0}, "n_resamples must be an integer >= 1, got 0"),
        ([1.0], {"level": 1.0}, r"level must be in \(0, 1\), got 1\.0"),
        ([1.0], {"level": 0.0}, "level must be in"),
    ],
)
def test_bootstrap_rejects_bad_inputs(values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_mean_ci(values, np.random.default_rng(0), **kwargs)


def test_bootstrap_rejects_non_generator_rng():
    with pytest.raises(ValueError, match="rng"):
        bootstrap_mean_ci([1.0, 2.0], np.random.RandomState(0))


# ---- tvd_interval -----------------------------------------------------------------------------


def test_tvd_interval_by_hand():
    # p = {a: .4, b: .2}, F = .2, u = .2: a = {a: .5, b: .25}, v = .25; h = {a: .25, c: .75}
    # lower = (.5 - .25) + (.25 - 0) = .5, upper = .75
    lower, upper = tvd_interval({"a": 0.4, "b": 0.2}, 0.2, 0.2, {"a": 0.25, "c": 0.75})
    assert (lower, upper) == (pytest.approx(0.5), pytest.approx(0.75))


def test_tvd_interval_ends_are_attained_and_hold_the_point_estimate():
    words, failed, unresolved = {"a": 0.4, "b": 0.2}, 0.2, 0.2
    human = {"a": 0.25, "c": 0.75}
    lower, upper = tvd_interval(words, failed, unresolved, human)
    # completions of the unresolved mass .2: all to "c" (lower), all to a new word (upper)
    assert tvd(human, {"a": 0.5, "b": 0.25, "c": 0.25}) == pytest.approx(lower)
    assert tvd(human, {"a": 0.5, "b": 0.25, "new": 0.25}) == pytest.approx(upper)
    point = tvd(human, {"a": 2 / 3, "b": 1 / 3})  # all unresolved mass fails
    assert lower <= point <= upper
    # half of it fails, half goes to "c": q = {a: .4, b: .2, c: .1} / .7
    assert lower <= tvd(human, {"a": 4 / 7, "b": 2 / 7, "c": 1 / 7}) <= upper


def test_tvd_interval_without_unresolved_mass_is_the_tvd():
    lower, upper = tvd_interval({"a": 0.3, "b": 0.3}, 0.4, 0.0, {"a": 1.0})
    assert lower == upper == pytest.approx(tvd({"a": 1.0}, {"a": 0.5, "b": 0.5}))


def test_tvd_interval_all_unresolved_is_uninformative():
    assert tvd_interval({}, 0.0, 1.0, {"a": 1.0}) == (0.0, 1.0)


@pytest.mark.parametrize("args, message", [
    (({"a": 0.5}, 0.2, 0.2, {"a": 1.0}), "sum to"),
    (({"a": 0.5}, -0.1, 0.6, {"a": 1.0}), "failed"),
    (({}, 1.0, 0.0, {"a": 1.0}), "every outcome failed"),
    (({"a": 1.0}, 0.0, 0.0, {"a": 0.5}), "human"),
])
def test_tvd_interval_rejects_bad_masses(args, message):
    with pytest.raises(ValueError, match=message):
        tvd_interval(*args)


METRIC_MODULES = sorted(m.name for m in pkgutil.iter_modules(varprobe.metrics.__path__))


@pytest.mark.parametrize("name", METRIC_MODULES)
def test_doctests_of_the_metrics_pass(name):
    module = importlib.import_module(f"varprobe.metrics.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) of varprobe.metrics.{name} failed"


@pytest.mark.parametrize("name", varprobe.metrics.__all__)
def test_every_public_metric_is_documented_with_an_example(name):
    if name in ("METRICS", "PAPER_BINS"):
        return
    doc = getattr(varprobe.metrics, name).__doc__
    for section in ("Parameters\n", "Examples\n", ">>> "):
        assert section in doc, f"varprobe.metrics.{name} has no {section.strip()!r} in its docstring"


# ---- histogram_overlap -------------------------------------------------------


def test_histogram_overlap_is_one_minus_the_tvd_of_the_bin_shares_whatever_the_counts():
    # shares (.5, .5, 0) and (.25, .25, .5): mins .25 + .25 + 0 = .5 = 1 - TVD
    assert histogram_overlap(np.array([2, 2, 0]), np.array([1, 1, 2])) == pytest.approx(0.5)
    assert histogram_overlap(np.array([20, 20, 0]), np.array([1, 1, 2])) == pytest.approx(0.5)
    assert histogram_overlap(np.array([3, 1]), np.array([30, 10])) == pytest.approx(1.0)


@pytest.mark.parametrize(("a", "b", "match"), [
    ([1, 2], [1, 2, 3], "the bins must be the same"),
    ([0, 0], [1, 1], "counts: an empty histogram"),
    ([1, -1], [1, 1], "counts must be finite and non-negative"),
    ([1, 1], [np.nan, 1], "other .* counts must be finite"),
])
def test_histogram_overlap_refuses_what_has_no_shape(a, b, match):
    with pytest.raises(ValueError, match=match):
        histogram_overlap(np.array(a, dtype=float), np.array(b, dtype=float))


# ---- adequacy ------------------------------------------------------------------


def test_chrf_and_bleu_are_100_for_an_output_equal_to_a_reference_and_0_for_empty():
    from varprobe.metrics.adequacy import mean_bleu, mean_chrf

    refs = ["Der Hund schläft im Garten.", "Im Garten schläft der Hund."]
    assert mean_chrf(["Im Garten schläft der Hund."], refs) == pytest.approx(100.0)
    assert mean_bleu(["Im Garten schläft der Hund."], refs) == pytest.approx(100.0)
    assert mean_chrf([""], refs) == 0.0
    assert mean_bleu([""], refs) == 0.0


def test_chrf_takes_the_best_reference_and_averages_over_outputs():
    from varprobe.metrics.adequacy import mean_chrf

    # One exact output (100) and one disjoint output (0: no character n-gram in common).
    assert mean_chrf(["abc def", "xyz"], ["uuu", "abc def"]) == pytest.approx(50.0)


def test_bleu_rewards_a_partial_match_less_than_a_whole_one():
    from varprobe.metrics.adequacy import mean_bleu

    ref = ["the cat sat on the mat today"]
    partial = mean_bleu(["the cat sat on a rug"], ref)
    assert 0.0 < partial < mean_bleu(["the cat sat on the mat today"], ref)


@pytest.mark.parametrize(("outputs", "source", "empty", "copy"), [
    (["", "  \n", "Hallo."], "Hello.", 2 / 3, 0.0),
    (["hello.", "HELLO.", "Hallo."], "Hello.", 0.0, 2 / 3),
    # a repeated turn of a dialogue context copies it; a longer answer that contains it does not
    (["How are you?", "Fine, how are you?"], "Hi!\nHow are you?", 0.0, 0.5),
    (["ｈｅｌｌｏ", "hello world"], "Hello", 0.0, 0.5),   # NFKC: full-width letters
])
def test_empty_and_copy_shares_count_by_their_definitions(outputs, source, empty, copy):
    from varprobe.metrics.adequacy import copy_share, empty_share

    assert empty_share(outputs) == pytest.approx(empty)
    assert copy_share(outputs, source) == pytest.approx(copy)


def test_language_share_counts_unidentified_outputs_as_not_in_the_target():
    from varprobe.metrics.adequacy import language_share

    assert language_share(["de", "de", "en", None], "de") == 0.5
    assert language_share([None], "en") == 0.0


@pytest.mark.parametrize(("call", "match"), [
    (lambda m: m.mean_chrf([], ["a"]), "outputs is empty"),
    (lambda m: m.mean_bleu(["a"], []), "references is empty"),
    (lambda m: m.mean_chrf("abc", ["a"]), "one string"),
    (lambda m: m.empty_share([]), "outputs is empty"),
    (lambda m: m.copy_share([], "a"), "outputs is empty"),
    (lambda m: m.language_share([], "de"), "non-empty"),
    (lambda m: m.language_share(["de"], ""), "target"),
])
def test_adequacy_metrics_reject_empty_inputs(call, match):
    from varprobe.metrics import adequacy

    with pytest.raises(ValueError, match=match):
        call(adequacy)
