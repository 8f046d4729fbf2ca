"""Every figure-drawing function of ``varprobe.plots``, drawn from small synthetic tables at the
sizes a run makes (one panel and many): no figure wider than 3.2:1 or taller than 1:2.2, and the
figures keep their legends off the data. A new figure function fails the first test until it is
drawn here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import varprobe.plots
from varprobe.analysis import model_size
from varprobe.families.regression.analysis import LABELS, PREDICTOR_ORDER
from varprobe.published import PAPER_COEFFICIENTS
from varprobe.families import families
from varprobe.families.oracle_replacement import plots as oracle_replacement
from varprobe.families.regression import plots as regression
from varprobe.families.sample_size import plots as sample_size
from varprobe.families.token_calibration import plots as token_calibration
from varprobe.families.word_classes import plots as word_classes
from varprobe.plots import appendix, finetune, production, provo
from varprobe.plots.layout import MAX_TALL, MAX_WIDE, bounded

HELPERS = {"layout.panel_grid", "layout.legend_below", "layout.bounded", "oracle_replacement.step_histogram",
           "oracle_replacement.system_label", "oracle_replacement.size_order", "oracle_replacement.size_label"}
"""Public functions of the plots modules that draw no figure of their own."""
PROBES = ["lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3", "semantic"]
RNG = np.random.default_rng(0)


def _systems(n: int) -> list[tuple[str, str]]:
    return [(f"m{i}", "ancestral") for i in range(n)]


def _histogram_rows(groups, systems, edges=np.linspace(0, 1, 21)) -> pd.DataFrame:
    rows = []
    for model, decoding in systems:
        for group in groups:
            counts = RNG.integers(0, 20, len(edges) - 1)
            density = counts / (counts.sum() * np.diff(edges))
            rows.append(pd.DataFrame({"model": model, "decoding": decoding, "group": group, "seed_index": pd.NA,
                                      "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
                                      "density": density}))
    return pd.concat(rows, ignore_index=True)


def _replacement_summary(sizes, systems) -> pd.DataFrame:
    ks = np.arange(0, 101, 10.0)
    return pd.DataFrame([{"model": m, "decoding": d, "oracle_size": s, "k": k, "mean_tvd": 0.6 - k / 500,
                          "min_tvd": 0.58 - k / 500, "max_tvd": 0.62 - k / 500, "oracle_mean_tvd": 0.4,
                          "oracle_sd_tvd": 0.01, "overlap": 0.6 + 0.4 * k / 100, "overlap_threshold": 0.8,
                          "k_match": 50.0} for m, d in systems for s in sizes for k in ks])


def _divergences(datasets, probes) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": ds, "model": "m", "decoding": "ancestral", "probe": p, "input_id": str(i),
                          "mean_M_minus_H": RNG.normal(0, 0.2), "w1_C_H": RNG.uniform(0, 0.5),
                          "w1_control": RNG.uniform(0, 0.2)} for ds in datasets for p in probes for i in range(8)])


def _production_summary(datasets, probes) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": ds, "model": "m", "decoding": dec, "probe": p, "available": True,
                          "statistic": s, "n_inputs": 8, "mean": 0.2, "ci_low": 0.1, "ci_high": 0.3}
                         for ds in datasets for p in probes for dec in ("ancestral", "top-k-30")
                         for s in ("w1_C_H", "w1_control")])


def _coefficients(systems, predictors) -> pd.DataFrame:
    frames = []
    for model, decoding in systems:
        mean = RNG.normal(0, 0.05, len(predictors))
        frames.append(pd.DataFrame({"model": model, "decoding": decoding, "predictor": predictors,
                                    "label": [LABELS[p] for p in predictors], "mean": mean, "hdi_2.5%": mean - 0.04,
                                    "hdi_97.5%": mean + 0.04, "reference_tag": "X"}))
    return pd.concat(frames, ignore_index=True)


def _paper() -> pd.DataFrame:
    return pd.DataFrame({"predictor": list(PAPER_COEFFICIENTS), "mean": list(PAPER_COEFFICIENTS.values())})


def _losses(models: int) -> pd.DataFrame:
    return pd.DataFrame([{"model": f"m{i}", "fold": pd.NA, "split": split, "epoch": e, "loss": 3.0 - 0.1 * e,
                          "kept": e == 2, "trainable_parts": "norms"}
                         for i in range(models) for split in ("train", "validation")
                         for e in range(0 if split == "validation" else 1, 3)])


def _pairs(decodings: int) -> pd.DataFrame:
    return pd.DataFrame([{"decoding": f"d{j}", "tvd_pretrained": RNG.uniform(), "tvd_finetuned": RNG.uniform()}
                         for j in range(decodings) for _ in range(20)])


def _bars(n: int):
    contexts = pd.DataFrame({"text_id": 1, "word_number": range(1, n + 1), "context": "the cat sat on the"})
    human = {(1, w): {"mat": 0.6, "sofa": 0.4} for w in range(1, n + 1)}
    return contexts, human, {(1, w): {"mat": 1.0} for w in range(1, n + 1)}, "m / ancestral"


def _sample_size(systems) -> tuple[pd.DataFrame, pd.DataFrame]:
    summary = pd.DataFrame([{"model": m, "decoding": d, "size": n, "n_estimates": 20, "mse": 0.01}
                            for m, d in systems for n in (10, 20, 40)])
    return _histogram_rows([f"n={n}" for n in (10, 20, 40)], systems, np.linspace(0, 0.2, 21)), summary


def _token_calibration(models: int) -> pd.DataFrame:
    return pd.DataFrame([{"model": f"m{i}", "labels": labels, "metric": metric, "bins": m,
                          "value": 0.1 * m ** 0.5 * (0.5 if labels == "drawn" else 1)}
                         for i in range(models) for labels in ("corpus", "drawn")
                         for metric in token_calibration.TITLES for m in (5, 10, 20, 50)])


def _sizes(models: int) -> pd.DataFrame:
    summary = pd.DataFrame([{"model": model, "decoding": decoding, "expected_tvd": 0.6, "ci_low": 0.58,
                             "ci_high": 0.62, "ece_corpus": 0.1, "ece_human_majority": 0.07,
                             "ece_oracle_majority": 0.06}
                            for model in [f"m{i}" for i in range(models)] + ["oracle"]
                            for decoding in (["control"] if model == "oracle" else ["ancestral", "temperature-0.7"])])
    return model_size.size_table(summary, {f"m{i}": int(10 ** (8 + i / 3)) for i in range(models)})


def _class_series(n: int):
    return {s: {"model_humans": RNG.uniform(0, 1, 30), "oracle2_oracle1": RNG.uniform(0, 0.5, 20)}
            for s in _systems(n)}


def _tvd_series(n: int):
    return {**{s: RNG.uniform(0.2, 1, 30) for s in _systems(n)}, ("oracle", "control"): RNG.uniform(0, 0.6, 30)}


FIGURES = {
    "appendix.tvd_histograms": lambda n: appendix.tvd_histograms(
        {f"s{i}": RNG.uniform(0, 1, 30) for i in range(n)}, "TVD"),
    "finetune.loss_curves": lambda n: finetune.loss_curves(_losses(n)),
    "finetune.tvd_histograms": lambda n: finetune.tvd_histograms(_pairs(n), "ft", "base"),
    "oracle_replacement.replacement_curves": lambda n: oracle_replacement.replacement_curves(
        _replacement_summary(["half", "10", "20"][:n], _systems(2))),
    "oracle_replacement.replacement_histograms": lambda n: oracle_replacement.replacement_histograms(
        _histogram_rows([f"s={s} k={k}" for s in ("half", "10", "20")[:n] for k in (0, 60, 100)], _systems(2)),
        [0, 60, 100]),
    "oracle_replacement.difference_histograms": lambda n: oracle_replacement.difference_histograms(
        _histogram_rows(["difference"], _systems(n), np.linspace(-1, 1, 41))),
    "production.human_variability": lambda n: production.human_variability(
        pd.DataFrame([{"dataset": ds, "probe": p, "distance": RNG.uniform()} for ds in ("asset", "wmt14")
                      for p in PROBES[:n] for _ in range(10)]), PROBES[:n]),
    "production.mean_differences": lambda n: production.mean_differences(
        _divergences(["asset", "wmt14"], PROBES[:n]), PROBES[:n], "ancestral"),
    "production.w1_densities": lambda n: production.w1_densities(
        _divergences(["asset", "wmt14", "dailydialog"], PROBES[:n]), PROBES[:n], "ancestral"),
    "production.mean_w1": lambda n: production.mean_w1(
        _production_summary(["asset", "wmt14", "dailydialog"], PROBES[:n]), PROBES[:n], 0.1),
    "provo.model_size": lambda n: provo.model_size(_sizes(n), model_size.QUANTITIES),
    "provo.tvd_density": lambda n: provo.tvd_density(_tvd_series(n)),
    "provo.word_bars": lambda n: provo.word_bars(*_bars(n)),
    "regression.coefficient_plot": lambda n: regression.coefficient_plot(
        _coefficients(_systems(n), list(PREDICTOR_ORDER[:-1])), PREDICTOR_ORDER, LABELS, _paper()),
    "sample_size.squared_error_histograms": lambda n: sample_size.squared_error_histograms(*_sample_size(_systems(n))),
    "token_calibration.metrics_against_bins": lambda n: token_calibration.metrics_against_bins(_token_calibration(n)),
    "word_classes.class_tvd_histograms": lambda n: word_classes.class_tvd_histograms("syntactic", _class_series(n)),
}
"""Each figure function, drawn for a size n (panels, systems or series, as the function counts)."""


def figure_functions() -> set[str]:
    """``module.function`` of every public function defined in a ``varprobe.plots`` module or a
    family's ``plots`` module (named by the family: ``sample_size.squared_error_histograms``)."""
    modules = {info.name: f"varprobe.plots.{info.name}" for info in pkgutil.iter_modules(varprobe.plots.__path__)}
    modules |= {family.name: family.module("plots") for family in families().values()
                if (family.folder / "plots.py").is_file()}
    found = set()
    for name, dotted in modules.items():
        module = importlib.import_module(dotted)
        found |= {f"{name}.{fn}" for fn, f in inspect.getmembers(module, inspect.isfunction)
                  if f.__module__ == module.__name__ and not fn.startswith("_")}
    return found - HELPERS


def test_every_figure_function_is_drawn_here():
    assert figure_functions() == set(FIGURES)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 12])
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_figure_is_wider_than_3_2_to_1_or_taller_than_1_to_2_2(name, n):
    drawn = FIGURES[name](n)
    fig = drawn[0] if isinstance(drawn, tuple) else drawn
    width, height = fig.get_size_inches()
    plt.close(fig)
    assert width / height <= MAX_WIDE + 1e-9, f"{name}, n = {n}: {width:.2f} x {height:.2f} in"
    assert height / width <= MAX_TALL + 1e-9, f"{name}, n = {n}: {width:.2f} x {height:.2f} in"


def test_bounded_keeps_a_size_within_the_bounds_and_changes_nothing_else():
    assert bounded(6.4, 4.0) == (6.4, 4.0)
    assert bounded(10.8, 2.8) == pytest.approx((10.8, 10.8 / 3.2))
    assert bounded(3.6, 22.0) == pytest.approx((10.0, 22.0))


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_legend_is_drawn_over_a_panel(name):
    drawn = FIGURES[name](3)
    fig = drawn[0] if isinstance(drawn, tuple) else drawn
    fig.canvas.draw()
    assert all(ax.get_legend() is None for ax in fig.axes), name
    for legend in fig.legends:
        box = legend.get_window_extent()
        assert all(box.y1 <= ax.get_window_extent().y0 + 1 for ax in fig.axes), name
    plt.close(fig)


def test_a_probe_that_was_not_computed_has_no_panel_and_is_named_above_the_panels():
    human = pd.DataFrame([{"dataset": ds, "probe": p, "distance": np.nan if p == "semantic" else 0.3}
                          for ds in ("asset", "wmt14") for p in ("lexical-1", "semantic")])
    fig = production.human_variability(human, ["lexical-1", "semantic"])
    assert [ax.get_title() for ax in fig.axes] == ["lexical-1"]
    assert "semantic" in fig._suptitle.get_text() and "not computed" in fig._suptitle.get_text()
    summary = _production_summary(["asset"], ["lexical-1", "semantic"])
    summary.loc[summary["probe"] == "semantic", "available"] = False
    fig = production.mean_w1(summary, ["lexical-1", "semantic"], 0.1)
    assert [ax.get_title() for ax in fig.axes] == ["asset: lexical-1"]
    assert "asset: semantic" in fig._suptitle.get_text()


def test_histograms_of_systems_with_different_context_counts_are_densities():
    series = {("m", "ancestral"): {"model_humans": np.full(10, 0.3), "oracle2_oracle1": np.full(40, 0.3)}}
    fig, table = word_classes.class_tvd_histograms("syntactic", series)
    heights = [artist.get_data()[0].max() for artist in fig.axes[0].patches]
    assert heights == pytest.approx([20.0, 20.0])   # 1 / bin width 0.05, whatever the count
    assert table.groupby("series").apply(lambda t: (t["density"] * 0.05).sum()).tolist() == pytest.approx([1, 1])
    paired = pd.DataFrame({"decoding": "d", "tvd_pretrained": [0.3] * 10, "tvd_finetuned": [0.3] * 5 + [np.nan] * 5})
    fig = finetune.tvd_histograms(paired, "ft", "base")
    assert [max(p.get_path().vertices[:, 1]) for p in fig.axes[0].patches] == pytest.approx([20.0, 20.0])


def test_the_token_calibration_figure_draws_each_models_floor_beside_its_metric():
    fig = token_calibration.metrics_against_bins(_token_calibration(1))
    lines = fig.axes[0].get_lines()
    assert [line.get_linestyle() for line in lines] == ["-", "--"]
    assert lines[0].get_color() == lines[1].get_color()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["m0: the corpus's next tokens", "m0: labels drawn from the model (floor)"]


def test_the_regression_figure_draws_the_papers_coefficients_in_every_panel():
    fig, table = regression.coefficient_plot(_coefficients(_systems(2), ["entropy_human", "NUM", "VERB"]),
                                             PREDICTOR_ORDER, LABELS, _paper())
    assert len(fig.axes) == 2 and set(table["model"]) == {"m0", "m1"}
    for ax in fig.axes:
        (paper,) = [line for line in ax.get_lines() if line.get_marker() == "D"]
        assert list(paper.get_xdata()) == [PAPER_COEFFICIENTS[p] for p in ("entropy_human", "NUM", "VERB")]
        assert list(paper.get_ydata()) == [0, 1, 2]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_panel_labels_its_x_ticks(name):
    """A panel of a top row reads without the panel below it: its x ticks are labelled, a shared
    axis too (the replacement curves' top row excepted: it stacks on its overlap panel, one k axis)."""
    drawn = FIGURES[name](7)
    fig = drawn[0] if isinstance(drawn, tuple) else drawn
    fig.canvas.draw()
    panels = fig.axes[:len(fig.axes) // 2] if name == "oracle_replacement.replacement_curves" else []
    unlabelled = [ax.get_title() or str(i) for i, ax in enumerate(fig.axes) if ax not in panels
                  and not any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())]
    plt.close(fig)
    assert not unlabelled, f"{name}: panels without x tick labels: {unlabelled}"


def test_the_replacement_histograms_draw_the_oracles_once_where_every_system_shares_them():
    edges = np.linspace(0, 1, 21)
    oracle = {"bin_left": edges[:-1], "bin_right": edges[1:], "density": np.linspace(0, 2, 20), "count": 1}
    rows = [pd.DataFrame({"model": f"m{i}", "decoding": "ancestral", "group": group, "seed_index": pd.NA,
                          **(oracle if group.endswith("k=100") else {**oracle, "density": RNG.uniform(0, 2, 20)})})
            for i in range(7) for group in ("s=half k=0", "s=half k=100")]
    fig = oracle_replacement.replacement_histograms(pd.concat(rows, ignore_index=True), [0, 100])
    first, last = fig.axes
    assert [p.get_linestyle() for p in first.patches].count("--") == 1 and len(first.patches) == 8
    assert len(last.patches) == 1   # k = 100: the oracles alone
    rows[1] = rows[1].assign(density=RNG.uniform(0, 2, 20))   # m0's oracles differ: each system's own
    fig = oracle_replacement.replacement_histograms(pd.concat(rows, ignore_index=True), [0])
    assert [p.get_linestyle() for p in fig.axes[0].patches].count("--") == 7
    plt.close("all")


def test_each_word_bar_panel_states_the_mass_its_bars_show():
    contexts, human, model, label = _bars(1)
    human[(1, 1)] = {f"w{i}": 1 / 20 for i in range(20)}   # 15 of 20 equal words shown: 75%
    fig, table = provo.word_bars(contexts, human, model, label)
    titles = [ax.get_title() for ax in fig.axes]
    assert "15 most probable words: 75% of the mass" in titles[0]
    assert "1 most probable word: 100% of the mass" in titles[1]
    assert table.groupby("source")["probability"].sum().round(2).to_dict() == {"human": 0.75, label: 1.0}
    assert all(ax.get_xlabel() == "probability" for ax in fig.axes)
    plt.close(fig)


def test_the_tvd_density_states_each_series_number_of_contexts():
    fig, table = provo.tvd_density({("m", "ancestral"): RNG.uniform(0, 1, 40), ("m", "exact"): RNG.uniform(0, 1, 7),
                                    ("oracle", "control"): RNG.uniform(0, 1, 40)})
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["m / ancestral: TVD(M, H), n = 40 contexts", "m / exact: TVD(M, H), n = 7 contexts",
                      "oracle: TVD(O2, O1), n = 40 contexts"]
    assert table.groupby("decoding")["n_contexts"].first().to_dict() == {"ancestral": 40, "control": 40, "exact": 7}
    plt.close(fig)
