"""Token-level calibration (Liu et al. 2024): hand-worked ECE, cw-ECE, Full-ECE and the weighted
Full-ECE, exact binning at every M from one pass, validation, and the CLI and rules on the tiny
model."""

from __future__ import annotations

import bisect
import functools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import output, scheduled, snakemake

from varprobe import tables
from varprobe.families.token_calibration.analysis import bins_table, drawn_labels, metric_by_bins
from varprobe.families.token_calibration.page import metric_by_bins as page_metric_by_bins
from varprobe.metrics.token_calibration import (
    METRICS,
    PAPER_BINS,
    CalibrationAccumulator,
    bin_index,
    relative_std,
)

# Two positions, K = 3: a 0.5 / 0.25 / 0.25 split labelled 0, and a point mass on class 2 labelled
# 1 (probabilities exactly 0 and 1, a label of probability 0).
PROBS = np.array([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]])
LABELS = np.array([0, 1])


def hand_accumulator(bins=(2, 4)) -> CalibrationAccumulator:
    acc = CalibrationAccumulator(3, bins=bins)
    acc.update(PROBS, LABELS)
    return acc


def test_hand_worked_two_bins():
    # Bins [0, .5) and [.5, 1]. ECE: both confidences (.5 correct, 1 wrong) in bin 1:
    # |1 - 1.5| / 2. Full-ECE pairs: bin 0 = {.25, .25, 0, 0 (label)}, bin 1 = {.5 (label), 1}:
    # (|1 - .5| + |1 - 1.5|) / 2. Weighted: bin 0 |0 - (.0625 + .0625)|, bin 1 |.5 - (.25 + 1)|.
    # cw-ECE: class 0 |0 - .5| (bin 1); class 1 |1 - .25| (bin 0); class 2 |0 - .25| + |0 - 1|;
    # over N K = 6.
    acc = hand_accumulator()
    assert acc.ece(2) == pytest.approx(0.25)
    assert acc.full_ece(2) == pytest.approx(0.5)
    assert acc.full_ece_weighted(2) == pytest.approx(0.875 / 2)
    assert acc.classwise_ece(2) == pytest.approx(2.5 / 6)


def test_hand_worked_four_bins_with_empty_bins():
    # Bins of width .25; ECE bins 0 and 1 are empty and add nothing: (|1 - .5| + |0 - 1|) / 2.
    # Full-ECE: bin 0 {0, 0 (label)} -> 1, bin 1 {.25, .25} -> .5, bin 2 {.5 (label)} -> .5,
    # bin 3 {1} -> 1. Weighted: 0 + .125 + |.5 - .25| + 1. cw-ECE: 0 + .5 + .25 + 1 + .25 + 1.
    acc = hand_accumulator()
    assert acc.ece(4) == pytest.approx(0.75)
    assert acc.full_ece(4) == pytest.approx(1.5)
    assert acc.full_ece_weighted(4) == pytest.approx(1.375 / 2)
    assert acc.classwise_ece(4) == pytest.approx(3.0 / 6)


def test_printed_full_ece_bin_weights_sum_to_the_vocabulary_size():
    acc = hand_accumulator()
    for m in (2, 4):
        assert acc.bin_weight_sum("full_ece", m) == pytest.approx(3.0)
        for name in ("ece", "classwise_ece", "full_ece_weighted"):
            assert acc.bin_weight_sum(name, m) == pytest.approx(1.0)


def test_a_calibrated_point_mass_scores_zero():
    # Probability exactly 1 on the label: every metric is 0 at every M (p = 1 is in the last bin,
    # p = 0 in the first).
    acc = CalibrationAccumulator(4, bins=PAPER_BINS)
    acc.update(np.eye(4)[[1, 3, 0]], np.array([1, 3, 0]))
    for name in METRICS:
        for m in PAPER_BINS:
            assert acc.metric(name, m) == 0.0


def exact_bin(p: float, m: int) -> int:
    """The binning rule (``metrics/binning.py``) in exact arithmetic: the largest b with p at or
    above the double nearest to b / m (``float`` of a ``Fraction`` rounds correctly)."""
    return min(bisect.bisect_right(_edges(m), Fraction(p)) - 1, m - 1)


@functools.cache
def _edges(m: int) -> list[Fraction]:
    return [Fraction(float(Fraction(b, m))) for b in range(m + 1)]


def test_bin_index_puts_edges_in_the_bin_above_and_quotients_in_their_rational_bin():
    # The double 0.29 lies just below 0.29 but is the double nearest to 29 / 100: bin 29 of 100
    # and 290 of 1000; j / d goes to the bin of the rational number j / d.
    values = [0.0, 1.0, 0.29, 0.58, 0.145, 0.57, 0.1, 0.3, 0.7, 1 - 2**-53, 2**-1074]
    values += [j / d for d in (3, 7, 10, 100, 200) for j in range(d + 1)]
    p = np.array(values)
    for m in (*PAPER_BINS, 3):
        assert bin_index(p, m).tolist() == [exact_bin(v, m) for v in values], m
    assert bin_index(np.array([0.29]), 100).tolist() == [29]
    assert bin_index(np.array([0.29]), 1000).tolist() == [290]
    for d in (3, 7, 10, 100, 200):
        assert bin_index(np.arange(d + 1) / d, 1000).tolist() == [
            min(math.floor(Fraction(j, d) * 1000), 999) for j in range(d + 1)]


def direct_metrics(probs: np.ndarray, labels: np.ndarray, m: int) -> dict[str, float]:
    """Every metric at M = m straight from the definitions (exact binning, loops over classes)."""
    n, k = probs.shape
    bins = np.array([[exact_bin(v, m) for v in row] for row in probs])
    onehot = np.eye(k)[labels]
    top = probs.argmax(1)
    conf = probs.max(1)
    top_bins = np.array([exact_bin(v, m) for v in conf])
    ece = sum(abs((top == labels)[top_bins == b].sum() - conf[top_bins == b].sum()) for b in range(m))
    cw = sum(abs(onehot[bins[:, c] == b, c].sum() - probs[bins[:, c] == b, c].sum())
             for c in range(k) for b in range(m))
    full = sum(abs(onehot[bins == b].sum() - probs[bins == b].sum()) for b in range(m))
    weighted = sum(abs((probs * onehot)[bins == b].sum() - (probs**2)[bins == b].sum()) for b in range(m))
    return {"ece": ece / n, "classwise_ece": cw / (n * k), "full_ece": full / n,
            "full_ece_weighted": weighted / n}


def edgy_distributions(rng, n: int, k: int) -> np.ndarray:
    """Dirichlet rows rounded to multiples of 1/200 (many values on bin edges), some one-hot."""
    probs = np.round(rng.dirichlet(np.full(k, 0.3), size=n) * 200)
    probs[:, 0] += 200 - probs.sum(1)
    probs = np.abs(probs)
    probs /= probs.sum(1, keepdims=True)
    probs[: n // 5] = np.eye(k)[rng.integers(0, k, n // 5)]
    return probs


def test_one_pass_equals_a_direct_computation_at_every_m():
    rng = np.random.default_rng(np.random.SeedSequence([0, 5]))
    probs, labels = edgy_distributions(rng, 40, 6), rng.integers(0, 6, 40)
    acc = CalibrationAccumulator(6, bins=PAPER_BINS, merge_every=50)  # forces several merges
    for start in range(0, 40, 7):
        acc.update(probs[start : start + 7], labels[start : start + 7])
    for m in PAPER_BINS:
        direct = direct_metrics(probs, labels, m)
        for name in METRICS:
            assert acc.metric(name, m) == pytest.approx(direct[name], rel=1e-12, abs=1e-15), (name, m)


def test_batching_does_not_change_the_results_and_memory_does_not_grow_with_repeats():
    rng = np.random.default_rng(np.random.SeedSequence([0, 6]))
    probs, labels = rng.dirichlet(np.full(50, 0.05), size=30), rng.integers(0, 50, 30)
    whole = CalibrationAccumulator(50)
    whole.update(probs, labels)
    pairs = whole.n_sparse_pairs
    split = CalibrationAccumulator(50)
    for row in range(30):
        split.update(probs[row : row + 1], labels[row : row + 1])
    for repeat in range(5):
        whole.update(probs, labels)
    assert whole.n_sparse_pairs == pairs  # the same (class, bin) pairs: no new memory
    for m in PAPER_BINS:
        for name in METRICS:
            assert split.metric(name, m) == pytest.approx(whole.metric(name, m), rel=1e-9, abs=1e-15)


def test_invalid_input_names_the_argument():
    acc = CalibrationAccumulator(3, bins=(2,))
    with pytest.raises(ValueError, match="rows must sum to 1"):
        acc.update([[0.5, 0.2, 0.2]], [0])
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        acc.update(PROBS, [0, 3])
    with pytest.raises(ValueError, match=r"probs must lie in \[0, 1\]"):
        acc.update([[1.5, -0.5, 0.0]], [0])
    with pytest.raises(ValueError, match=r"probs must have shape \(T, 3\)"):
        acc.update([[0.5, 0.5]], [0])
    with pytest.raises(ValueError, match="labels must have shape"):
        acc.update(PROBS, [0])
    with pytest.raises(ValueError, match="no positions"):
        acc.ece(2)
    acc.update(PROBS, LABELS)
    with pytest.raises(ValueError, match="n_bins 3 is not one of"):
        acc.full_ece(3)
    with pytest.raises(ValueError, match="bins must be"):
        CalibrationAccumulator(3, bins=(0, 5))
    with pytest.raises(ValueError, match="n_classes"):
        CalibrationAccumulator(0)


def test_drawn_labels_follow_each_rows_distribution():
    """Inverse CDF on each row: uniforms on a fine grid give every class its probability's share,
    a class of probability 0 is never drawn, and a uniform just below 1 draws the last class of
    positive probability."""
    probs = np.array([[0.5, 0.0, 0.25, 0.25, 0.0]])
    grid = (np.arange(10_000) + 0.5) / 10_000
    labels = drawn_labels(np.repeat(probs, len(grid), axis=0), grid)
    assert np.bincount(labels, minlength=5) / len(grid) == pytest.approx(probs[0], abs=1e-4)
    assert drawn_labels(probs, np.array([np.nextafter(1.0, 0.0)])).tolist() == [3]
    assert drawn_labels(probs, np.array([0.0])).tolist() == [0]


def test_the_floor_of_a_calibrated_model_grows_with_m_and_falls_with_positions():
    """Labels drawn from the predictions make a perfectly calibrated model; its Full-ECE is the
    binned estimator's finite-sample bias: larger at more bins, smaller on more positions."""
    rng = np.random.default_rng(0)

    def floor(n: int) -> CalibrationAccumulator:
        probs = rng.dirichlet(np.full(50, 0.1), size=n)
        acc = CalibrationAccumulator(50, bins=PAPER_BINS)
        acc.update(probs, drawn_labels(probs, rng.random(n)))
        return acc

    small, large = floor(300), floor(30_000)
    assert small.full_ece(500) > small.full_ece(5) and large.full_ece(500) > large.full_ece(5)
    assert large.full_ece(500) < small.full_ece(500) / 3 and large.full_ece(50) < small.full_ece(50) / 3


def test_relative_std():
    assert relative_std([1.0, 2.0, 3.0]) == pytest.approx(0.5)  # sample std 1 over mean 2
    assert relative_std([1.0, 2.0, 3.0], ddof=0) == pytest.approx(math.sqrt(2 / 3) / 2)
    assert math.isnan(relative_std([0.0, 0.0]))


def test_provo_passages_are_rebuilt_from_the_last_context():
    from varprobe.families.token_calibration.analysis import provo_passages, windows

    contexts = pd.DataFrame({"text_id": [1, 1, 2], "word_number": [2, 3, 2],
                             "context": ["A", "A cat", "Dogs"], "word": ["cat", "sat.", "bark."]})
    assert provo_passages(contexts) == ["A cat sat.", "Dogs bark."]
    assert provo_passages(contexts, max_texts=1) == ["A cat sat."]
    # Every token after the first is a target once, windows of at most 3 inputs.
    assert list(windows([1, 2, 3, 4, 5, 6, 7], 3)) == [([1, 2, 3], [2, 3, 4]), ([4, 5, 6], [5, 6, 7])]
    assert list(windows([1, 2, 3, 4], 3)) == [([1, 2, 3], [2, 3, 4])]


def test_cli_on_the_tiny_model(tmp_path, tiny_model_dir, provo_norms):
    import json

    from varprobe.cli import main
    from varprobe.data.provo import contexts_table

    contexts = tmp_path / "contexts.parquet"
    tables.write(contexts_table(provo_norms, [1]), contexts, "provo_contexts")
    instances = tmp_path / "instances.parquet"
    tables.write(pd.DataFrame({"dataset": "asset", "split": "valid", "input_id": ["a", "b"],
                               "source": ["x", "y"], "references": [["One ref.", "Two refs here."], ["Three."]]}),
                 instances, "production_instances")
    model = json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)})
    outputs = {}
    for kind, table, rows in (("contexts", contexts, "64"), ("instances", instances, "3")):
        out, rsd = tmp_path / f"{kind}-metrics.parquet", tmp_path / f"{kind}-rsd.parquet"
        main(["token-calibration", "--model", model, f"--{kind}", str(table), "--corpus", kind,
              "--bins", "5", "10", "20", "--max-texts", "2", "--rows-per-update", rows,
              "--out", str(out), "--rsd-out", str(rsd), "--floor-out", str(tmp_path / f"{kind}-floor.parquet")])
        outputs[kind] = (out, rsd)
    # The floor's labels are drawn position by position, whatever the positions per update.
    again = tmp_path / "again-floor.parquet"
    main(["token-calibration", "--model", model, "--contexts", str(contexts), "--corpus", "contexts",
          "--bins", "5", "10", "20", "--max-texts", "2", "--rows-per-update", "7", "--out", str(tmp_path / "a.parquet"),
          "--rsd-out", str(tmp_path / "b.parquet"), "--floor-out", str(again)])
    floor = tables.read(tmp_path / "contexts-floor.parquet", "token_calibration")
    assert floor["value"].to_numpy() == pytest.approx(tables.read(again, "token_calibration")["value"].to_numpy(),
                                                      rel=1e-9, abs=1e-12)
    assert tables.read_metadata(again)["labels"] == "drawn from the model's own distributions"
    assert list(floor["n_positions"]) == list(tables.read(outputs["contexts"][0], "token_calibration")["n_positions"])
    metrics = tables.read(outputs["contexts"][0], "token_calibration")
    assert len(metrics) == 4 * 3 and set(metrics["metric"]) == set(METRICS)
    assert (metrics["vocabulary_size"] == 50257).all()
    full = metrics[metrics["metric"] == "full_ece"]
    assert full["bin_weight_sum"].to_numpy() == pytest.approx(50257)
    # The instances corpus: the first two references, BOS prepended, so every token is predicted.
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    expected = sum(len(tokenizer(t)["input_ids"]) for t in ("One ref.", "Two refs here."))
    assert tables.read(outputs["instances"][0], "token_calibration")["n_positions"].iloc[0] == expected
    rsd = tables.read(outputs["contexts"][1], "token_calibration_rsd")
    assert set(rsd["metric"]) == set(METRICS) and (rsd["bins"] == "5,10,20").all()

    summary, figure, curve = tmp_path / "summary.parquet", tmp_path / "fig.png", tmp_path / "curve.parquet"
    main(["token-calibration-summary", "--metrics", str(outputs["contexts"][0]), "--rsd",
          str(outputs["contexts"][1]), "--floors", str(tmp_path / "contexts-floor.parquet"), "--bins", "10",
          "--out", str(summary), "--figure", str(figure), "--table", str(curve)])
    table = tables.read(summary, "token_calibration_summary")
    assert len(table) == 4 and (table["bins"] == 10).all() and (table["accumulator_peak_bytes"] > 0).all()
    drawn = tables.read(curve, "token_calibration_figure")
    assert figure.stat().st_size > 0 and drawn["labels"].value_counts().to_dict() == {"corpus": 12, "drawn": 12}


@pytest.mark.slow
def test_rules_are_scheduled_from_config(tmp_path, data_mirror, tiny_model_dir):
    config = {
        "seed": 0, "data_mirror": str(data_mirror),
        "models": [{"name": "tiny", "pretrained": str(tiny_model_dir)},
                   {"name": "tiny2", "pretrained": str(tiny_model_dir)}],
        "provo": {"texts": [1], "decodings": [{"name": "ancestral"}], "figure_contexts": ["1:5"]},
        "analyses": {"token_calibration": {"bins": 10, "max_texts": 1}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    counts = scheduled(tmp_path)
    assert counts["token_calibration"] == 2 and counts["token_calibration_summary"] == 1
    # A model's floor is a target of its own: a run that lacks it (made before the floor
    # existed) redoes that model's job, and only that one.
    summary = "results/analyses/token_calibration/summary.parquet"
    run = snakemake(tmp_path, summary)
    assert run.returncode == 0, output(run)
    (tmp_path / "results/analyses/token_calibration/tiny2/floor.parquet").unlink()
    counts = scheduled(tmp_path)
    assert counts["token_calibration"] == 1


def test_bins_long_read_back_wide_as_measured():
    metrics = pd.DataFrame({"model": "m", "metric": "full_ece", "bins": [5, 50, 500], "value": [0.1, 0.15, 0.25],
                            "n_positions": 100})
    both = pd.concat([metrics.assign(labels="corpus"), metrics.assign(labels="drawn", value=[0.01, 0.05, 0.2])])
    long = bins_table(both)
    tables.conform(long, "token_calibration_bins")
    assert len(long) == 6
    pd.testing.assert_frame_equal(page_metric_by_bins(long), metric_by_bins(both), check_dtype=False)
