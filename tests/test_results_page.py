"""varprobe.results_page: the papers' tables built from run tables, the measured causes of the
disagreements, and the page's order, names and paper values."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from varprobe import tables
from varprobe.cli import main
from varprobe.results_page import paper
from varprobe.results_page.claims import unlisted_numbers
from varprobe.results_page.page import copy_figures, render
from varprobe.families.regression.page import coefficient_table
from varprobe.results_page.tables import glossary, number, printed, production_signs, production_w1, table_one

GLOSSARY = glossary({"provo", "word_classes", "token_calibration", "production"}, 10)
"""Every glossary entry of a page with every section that has one."""


def _system(model, decoding, tvd, low=np.nan, high=np.nan, lower=np.nan, upper=np.nan):
    return {"model": model, "decoding": decoding, "n_contexts": 6, "n_contexts_not_sampled": 0,
            "n_contexts_all_failed": 0, "expected_tvd": tvd, "ci_low": low, "ci_high": high,
            "expected_tvd_lower": lower,
            "expected_tvd_upper": upper, "expected_tvd_oracle1": 0.5, "oracle_expected_tvd": 0.42, "ece_corpus": 0.1,
            "ece_human_majority": 0.2, "ece_oracle_majority": 0.3, "failure_rate": 0.05,
            "mean_entropy_model": 1.5, "mean_entropy_human": 2.0, "n_contexts_without_corpus_word": 0}


SUMMARY = pd.DataFrame([
    _system("m", "ancestral", 0.61234, 0.5, 0.7),
    _system("oracle", "control", 0.433, 0.426, 0.44),
    _system("m", "exact", 0.6, 0.55, 0.65, lower=0.58, upper=0.66),
    _system("human", "mle", np.nan),
])

PUBLISHED = pd.DataFrame([{**_system("bloom-published", "given", 0.655, 0.64, 0.67), "ece_corpus": 0.12,
                            "ece_human_majority": 0.15, "ece_oracle_majority": 0.11, "n_contexts": 5}])
"""The paper's Bloom from its published samples (a model entry ``published: {system: bloom}``), its
row of Table 1 under our protocol: above the oracle control, two of its three ECEs below the oracle's."""

BLOOM_AUTHORS = {
    ("ours", ""): (0.0310, 0.0797, 0.0632, 0.6034, 657),
    ("ours + switch", "authors_words"): (0.0366, 0.0891, 0.0740, 0.6104, 657),
    ("ours + switch", "raw_corpus_word"): (0.0728, 0.0797, 0.0632, 0.6034, 657),
    ("authors", ""): (0.0710, 0.0862, 0.0734, 0.6125, 656),
    ("authors - switch", "authors_words"): (0.0741, 0.0769, 0.0673, 0.6057, 656),
    ("authors - switch", "raw_corpus_word"): (0.0454, 0.0862, 0.0734, 0.6125, 656),
    ("paper", ""): (0.07, 0.09, 0.07, 0.61, None),
}
"""Its ``provo_published`` table as rule provo_published writes it (a part of its switch rows): on
the whole corpus's Bloom samples, ours, each switch alone, the authors' protocol (issue 73: the
paper's digits to every place it prints) and the paper's row."""

CONTEXTS = ["The old man", "The old man walked", "He saw two", "He saw two big", "They ran to the",
            "It was very"]
RESPONSES = [("was", 6), ("had", 3), ("is", 3)], [("to", 5), ("home", 4), ("away", 3)], \
    [("dogs", 4), ("cats", 4), ("men", 4)], [("dogs", 7), ("trees", 5)], \
    [("store", 6), ("park", 3), ("house", 3)], [("cold", 4), ("good", 4), ("hot", 4)]


def _provo(results, published=True):
    """A run's Provo tables on six contexts: contexts, responses, one sampled system's samples and
    per-context table, and the oracle control's per-context table; ``published``: with the row of
    the paper's Bloom in the summary (``PUBLISHED``)."""
    contexts = pd.DataFrame({"text_id": 1, "word_number": range(2, 8), "context": CONTEXTS,
                             "context_length": [len(c.split()) for c in CONTEXTS],
                             "word": ["was", "to", "dogs", "dogs", "store", "cold"],
                             "corpus_word": ["was", "home", "dogs", "trees", "park", "cold"]})
    tables.write(contexts, results / "provo/contexts.parquet", "provo_contexts")
    responses = pd.DataFrame([{"text_id": 1, "word_number": w, "response": r, "count": n}
                              for w, rows in zip(range(2, 8), RESPONSES, strict=True) for r, n in rows])
    tables.write(responses, results / "provo/responses.parquet", "provo_responses")
    rng = np.random.default_rng(0)
    tvd = pd.DataFrame({
        "text_id": 1, "word_number": range(2, 8), "context_length": contexts["context_length"],
        "n_draws": 40, "n_words": 39, "n_humans": 12, "tvd": rng.uniform(0.4, 0.8, 6),
        "tvd_lower": np.nan, "tvd_upper": np.nan, "tvd_model_oracle1": rng.uniform(0.4, 0.8, 6),
        "tvd_oracle2_oracle1": rng.uniform(0.2, 0.6, 6), "entropy_human": rng.uniform(0.5, 1.5, 6),
        "entropy_model": rng.uniform(0.5, 2.5, 6), "entropy_oracle1": 1.0,
        "model_mode": ["was", "home", "dogs", "dogs", "store", "hot"],
        "confidence": rng.uniform(0.2, 0.9, 6), "corpus_word": contexts["corpus_word"],
        "human_majority": ["was", "to", "cats", "dogs", "store", "cold"]})
    for system in ("m/ancestral", "oracle/control"):
        tables.write(tvd, results / f"provo/{system}/tvd.parquet", "provo_tvd")
    samples = pd.DataFrame({
        "text_id": 1, "word_number": [2, 2, 2, 3, 3], "sample_index": range(5),
        "text": [" was here", " had", " ---", " to the", "s are"], "word": ["was", "had", "", "to", ""],
        "failed": [False, False, True, False, True],
        "failure": ["", "", "token_budget", "", "extends_context_word"],
        "n_tokens": [2, 1, 20, 2, 2], "count": [20, 17, 3, 38, 2]})
    tables.write(samples, results / "provo/m/ancestral/samples.parquet", "provo_samples")
    tables.write(pd.concat([SUMMARY, PUBLISHED] if published else [SUMMARY], ignore_index=True),
                 results / "provo/summary.parquet", "provo_system")


def _beats_copy(systems) -> pd.DataFrame:
    """A ``production_beats_copy`` table of model ``m``: per (dataset, decoding, beats) a chrF (SARI
    on asset) interval above the copy baseline's mean, or one whose lower end is below it."""
    return pd.DataFrame([{"dataset": d, "model": "m", "decoding": decoding,
                          "statistic": "sari" if d == "asset" else "chrf", "mean": 40.0 if beats else 21.0,
                          "ci_low": 38.0 if beats else 20.0, "ci_high": 42.0 if beats else 22.0,
                          "copy": 31.7, "beats_copy": beats} for d, decoding, beats in systems])


def _run(tmp_path, published=True):
    """Every registered table the page has a view of, as a run writes them, and its entries;
    ``published``: with the paper's Bloom from its published samples among the models."""
    results = tmp_path / "results"
    _provo(results, published)
    entries = [{"name": "provo_summary", "table": str(results / "provo/summary.parquet"),
                "title": "Expected TVD", "category": "Provo", "schema": "provo_system"}]

    def add(name, frame, title):
        path = results / f"{name}.parquet"
        frame.to_parquet(path)
        entries.append({"name": name, "table": str(path), "title": title, "category": "x", "schema": None})

    predictors = ["entropy_human", "entropy_model", "tvd_oracle2_oracle1", "context_length", ".", "ADJ",
                  "ADP", "ADV", "CONJ", "DET", "NUM", "PRON", "PRT", "VERB"]
    labels = ["human entropy", "model entropy", "TVD between oracles", "context length", "punctuation",
              "adjective", "adposition", "adverb", "conjunction", "determiner", "numeral", "pronoun",
              "particle", "verb"]
    add("regression_coefficients_m_ancestral", pd.DataFrame({
        "predictor": [*predictors, "intercept", "sigma"], "label": [*labels, "intercept", "sigma"],
        "kind": ["continuous"] * 4 + ["tag"] * 10 + ["intercept", "noise"],
        "mean": np.linspace(-0.05, 0.1, 16), "hdi_2.5%": np.linspace(-0.05, 0.1, 16) - 0.005,
        "hdi_97.5%": np.linspace(-0.05, 0.1, 16) + 0.005,
        "model": "m", "decoding": "ancestral", "reference_tag": "NOUN"}), "ARD of m")
    biased = pd.DataFrame([_system("m", "biased", 0.55), _system("oracle", "control", 0.433)])
    add("biased_estimator_summary_m", biased, "Biased m")
    add("token_level_summary_m", pd.DataFrame({
        "model": "m", "system": ["model", "oracle 1", "oracle 2"], "n_contexts": 6,
        "expected_tvd": [0.6, 0.22, 0.21], "ci_low": [0.5, 0.2, 0.2], "ci_high": [0.7, 0.24, 0.23],
        "expected_tvd_oracle1": [0.65, np.nan, 0.43], "ece_human_majority": [0.04, 0.4, 0.41],
        "mean_entropy": 1.0}), "Token level m")
    add("token_calibration_summary", pd.DataFrame({
        "model": "m", "corpus": "provo", "metric": ["ece", "classwise_ece", "full_ece", "full_ece_weighted"],
        "bins": 10, "value": [0.06, 2e-5, 0.13, 0.03], "rsd": [0.3, 0.18, 0.29, 0.32],
        "n_positions": 100, "vocabulary_size": 1000, "accumulator_peak_bytes": 1}), "Token calibration")
    production = [{"dataset": d, "model": "m", "decoding": "ancestral", "probe": "lexical-1", "available": True,
                   "statistic": s, "n_inputs": 2, "mean": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
                  for d, sign in (("wmt14", 1), ("asset", -1), ("dailydialog", -1))
                  for s, v in (("mean_H", 0.3), ("w1_C_H", 0.5), ("w1_control", 0.09),
                               ("mean_M_minus_H", 0.2 * sign))]
    add("production_summary", pd.DataFrame(production), "Production")
    add("production_beats_copy", _beats_copy([("wmt14", "ancestral", True), ("asset", "ancestral", True),
                                              ("dailydialog", "ancestral", False)]), "Beats copying")
    wmt = results / "production/wmt14"
    wmt.mkdir(parents=True)
    pd.DataFrame({"dataset": "wmt14", "split": "test", "input_id": ["w1", "w2"], "source": ["A cat.", "A dog."],
                  "references": [["Eine Katze.", "Katze."], ["Ein Hund."]]}).to_parquet(wmt / "instances.parquet")
    (wmt / "m/ancestral").mkdir(parents=True)
    pd.DataFrame({"input_id": ["w1", "w1", "w2"], "sample_index": [0, 1, 0],
                  "text": ["Die Katze | sitzt.", "I cannot translate.", "Hund."]}).to_parquet(
        wmt / "m/ancestral/samples.parquet")
    tables.write(pd.DataFrame({
        "dataset": "wmt14", "model": "m", "decoding": "ancestral", "statistic": "w1_C_H", "input_id": ["w1"],
        "excess": [0.4], "values": ['{"lexical-1": 0.7}'], "source": ["A cat."], "references": [["Eine Katze."]],
        "samples": [["I cannot translate."]]}), wmt / "m/ancestral/miscalibrated.parquet", "production_miscalibrated",
        {"thresholds": {"lexical-1": 0.3, "semantic": 0.2}})
    add("oracle_replacement_summary", pd.DataFrame({
        "model": "m", "decoding": "ancestral", "oracle_size": "10", "k": [0.0, 60.0, 100.0], "n_seeds": 3,
        "n_contexts": 6, "mean_tvd": [0.6, 0.48, 0.4], "sd_tvd": 0.01, "min_tvd": 0.3, "max_tvd": 0.7,
        "oracle_mean_tvd": 0.4, "oracle_sd_tvd": 0.01, "model_mean_tvd": 0.6, "overlap": [0.5, 0.7, 1.0],
        "overlap_threshold": 0.8, "matches_oracle": [False, False, True], "k_match": 100.0}),
        "k%-oracle replacement")
    add("finetune_losses_ft", pd.DataFrame({
        "model": "ft", "fold": pd.array([1] * 4, dtype="Int32"), "epoch": [0, 1, 2, 1],
        "split": ["validation", "validation", "validation", "train"], "loss": [4.0, 3.5, 3.4, 3.0],
        "tokens": 10, "examples": 2}), "Training and validation loss of ft")
    add("syntactic_tvd_summary", pd.DataFrame([{
        "level": "syntactic", "model": "m", "decoding": "ancestral", "n_contexts": 6, "n_contexts_not_sampled": 0,
        "n_contexts_all_failed": 0, "expected_tvd": 0.22, "ci_low": 0.19, "ci_high": 0.26, "expected_tvd_oracle1": 0.24,
        "expected_tvd_oracles": 0.14, "oracle_ci_low": 0.12, "oracle_ci_high": 0.15, "mean_classes": 4.9}]),
        "Syntactic TVD per system and the oracle control")
    add("semantic_tvd_summary", pd.DataFrame([{
        "level": "semantic", "model": "m", "decoding": "ancestral", "n_contexts": 6, "n_contexts_not_sampled": 0,
        "n_contexts_all_failed": 0, "expected_tvd": 0.37, "ci_low": 0.33, "ci_high": 0.41, "expected_tvd_oracle1": 0.39,
        "expected_tvd_oracles": 0.26, "oracle_ci_low": 0.22, "oracle_ci_high": 0.3, "mean_classes": 11.3}]),
        "Semantic TVD per system and the oracle control")
    add("finetune_comparison_ft", pd.DataFrame([{
        "model": "ft", "base": "m", "decoding": "ancestral", "n_contexts": 6, "expected_tvd_pretrained": 0.63,
        "expected_tvd_finetuned": 0.66, "expected_tvd_oracle": 0.43, "mean_difference": 0.03,
        "difference_ci_low": 0.01, "difference_ci_high": 0.05, "share_finetuned_closer": 0.4,
        "share_finetuned_farther": 0.5}]), "Fine-tuned against pretrained model: ft")
    add("sample_size_summary", pd.DataFrame({
        "model": "m", "decoding": "ancestral", "size": [10, 40], "n_estimates": [6, 0], "n_too_large": [0, 6],
        "n_without_words": 0, "n_contexts": 6, "n_contexts_estimated": [6, 0], "n_contexts_too_large": [0, 6],
        "n_contexts_all_failed": 0, "n_contexts_subsample_failed": 0, "mse": [0.007, np.nan],
        "note": ["", "size >= N draws: cannot subsample"]}),
        "Sample size")
    squared = pd.DataFrame({"model": "m", "decoding": "ancestral", "text_id": 1, "word_number": range(2, 8),
                            "n_draws": 40, "size": 10, "repeat": 0, "n_words": 10, "tvd_full": 0.5,
                            "tvd_subsample": 0.6, "squared_error": [0.001, 0.004, 0.009, 0.01, 0.008, 0.01],
                            "note": ""})
    tables.write(squared, results / "analyses/sample_size/m/ancestral/contexts.parquet", "sample_size_contexts")
    for name, values in (("metrics", [0.10, 0.15, 0.25]), ("floor", [0.01, 0.05, 0.20])):
        tables.write(pd.DataFrame({
            "model": "m", "corpus": "provo", "metric": "full_ece", "bins": [5, 50, 500], "value": values,
            "bin_weight_sum": 1000.0, "n_positions": 100, "vocabulary_size": 1000}),
            results / f"analyses/token_calibration/m/{name}.parquet", "token_calibration")
    config = tmp_path / "config.yaml"
    bloom = ", {name: bloom-published, published: {system: bloom}}" if published else ""
    config.write_text(f"seed: 0\nmodels: [{{name: m, pretrained: m}}{bloom}]\nprovo: {{texts: [1], n_samples: 40, "
                      "resplits: 3, ece_bins: 10, bootstrap_resamples: 50}\nanalyses: {oracle_replacement: {}}\n")
    return results, entries, config


AUTHORS = {  # docs/methods.md: the authors' protocol on the data mirror's Provo copy
    ("ours", ""): (0.097, 0.595, 0.414, 0.117, 0.409, 0.253, 0.433),
    ("ours + switch", "raw_corpus_word"): (0.144, 0.595, 0.414, 0.161, 0.409, 0.253, 0.433),
    ("ours + switch", "shared_seed"): (0.097, 0.595, 0.406, 0.118, 0.396, 0.231, 0.443),
    ("authors", ""): (0.139, 0.600, 0.411, 0.113, 0.574, 0.320, 0.415),
    ("authors - switch", "raw_corpus_word"): (0.094, 0.600, 0.411, 0.068, 0.574, 0.320, 0.415),
    ("authors - switch", "shared_seed"): (0.142, 0.595, 0.413, 0.158, 0.452, 0.287, 0.437),
    ("authors - switch", "single_split"): (0.139, 0.600, 0.411, 0.132, 0.498, 0.320, 0.441),
    ("paper", ""): (0.14, 0.60, 0.19, 0.11, 0.57, 0.32, 0.42),
}


def _authors() -> pd.DataFrame:
    """A ``provo_authors`` table (two switches of the nine)."""
    from varprobe.analysis.authors_protocol import VALUES

    return pd.DataFrame([{"protocol": p, "switch": s, **dict(zip(VALUES, v, strict=True))}
                         for (p, s), v in AUTHORS.items()])


def _bloom_authors(**authors) -> pd.DataFrame:
    """The paper's Bloom's ``provo_published`` table (``BLOOM_AUTHORS``), its authors' protocol row
    with ``authors``' values."""
    values = ("ece_corpus", "ece_human_majority", "ece_oracle_majority", "expected_tvd", "n_contexts")
    frame = pd.DataFrame([{"system": "bloom", "column": "Bloom", "protocol": protocol, "switch": switch,
                           **dict(zip(values, row, strict=True))}
                          for (protocol, switch), row in BLOOM_AUTHORS.items()])
    for key, value in authors.items():
        frame.loc[frame["protocol"] == "authors", key] = value
    return frame.astype({"n_contexts": "Int64"})


SCHEMA = Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml"


def _validated(path) -> dict:
    """The config at ``path`` as the workflow validates it: the schema's defaults applied."""
    config = yaml.safe_load(Path(path).read_text())
    validate(config, str(SCHEMA))
    return config


def _measured(results, published=True) -> dict:
    """The page's measured tables of ``_run``'s tables, each written by its subcommand as its
    rule runs it (``workflow/rules/page_measures.smk``), by name; ``published``: with the paper's
    Bloom's ``provo_published`` table."""
    out = {name: str(results / f"page/{name}.parquet") for name in (
        "provo_intervals", "provo_failures", "provo_oracle_splits", "provo_human_ties", "regression_codings",
        "sample_size_intervals", "token_calibration_bins")}

    def systems(pairs, name):
        return json.dumps([{"model": m, "decoding": d, "table": str(results / f"provo/{m}/{d}/{name}")}
                           for m, d in pairs])

    provo, bootstrap = results / "provo", ["--resamples", "50", "--seed", "0"]
    oracles = ["--contexts", str(provo / "contexts.parquet"), "--responses", str(provo / "responses.parquet"),
               "--resplits", "3", "--bins", "10", *bootstrap]
    token = results / "analyses/token_calibration/m"
    for command in (
        ["provo-intervals", "--systems", systems([("m", "ancestral"), ("oracle", "control")], "tvd.parquet"),
         "--bins", "10", *bootstrap],
        ["provo-failures", "--systems", systems([("m", "ancestral")], "samples.parquet")],
        ["provo-oracle-splits", *oracles],
        ["provo-human-ties", *oracles],
        ["regression-codings", "--tvd", str(provo / "m/ancestral/tvd.parquet"), "--contexts",
         str(provo / "contexts.parquet"), "--responses", str(provo / "responses.parquet"), "--samples",
         str(provo / "m/ancestral/samples.parquet"), "--model", "m", "--decoding", "ancestral"],
        ["sample-size-intervals", "--contexts", str(results / "analyses/sample_size/m/ancestral/contexts.parquet"),
         *bootstrap],
        ["token-calibration-bins", "--tables", json.dumps(
            [{"table": str(token / "metrics.parquet"), "labels": "corpus"},
             {"table": str(token / "floor.parquet"), "labels": "drawn from the model"}])],
    ):
        main([*command, "--out", out[command[0].replace("-", "_")]])
    out["provo_authors"] = str(provo / "authors_protocol.parquet")
    tables.write(_authors(), out["provo_authors"], "provo_authors")
    if published:
        out["provo_published"] = {"bloom-published": str(provo / "bloom-published/given/authors.parquet")}
        tables.write(_bloom_authors(), out["provo_published"]["bloom-published"], "provo_published")
    wmt = results / "production/wmt14"
    out["production_miscalibrated"] = [str(wmt / "m/ancestral/miscalibrated.parquet")]
    out["production_examples"] = {"wmt14": {"instances": str(wmt / "instances.parquet"),
                                            "samples": str(wmt / "m/ancestral/samples.parquet")}}
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("run")
    results, entries, config = _run(tmp_path)
    (results / "provo/figures").mkdir(parents=True)
    (results / "provo/figures/tvd_density.png").write_bytes(b"png")
    figures = copy_figures([str(results / "provo/figures/tvd_density.png")], str(results), results / "docs/figures")
    bench = results / "benchmarks/provo_sample/m/ancestral/1.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "12.0\t0:00:12\t812.5\t1\t1\t1\t0\t0\t90\t11.0\n")
    return render(config=_validated(config), configfiles=[str(config)], commit="abc123", entries=entries,
                  figures=figures, benchmarks=str(results / "benchmarks"), measured=_measured(results),
                  results=str(results))


def _row(page: str, first_cell: str) -> str:
    """The page's table row whose first cell is ``first_cell``."""
    rows = [line for line in page.splitlines() if re.match(rf"\|\s*{re.escape(first_cell)}\s*\|", line)]
    assert rows, f"no row {first_cell!r}"
    return rows[0]


def test_numbers_read_without_false_zeros():
    assert [number(v) for v in (0.61234, 0.0, 4.7e-06, np.nan, None, 3)] == ["0.612", "0.000", "4.7e-06", "–", "–", "3"]


def test_table_one_puts_the_oracle_tvd_under_its_definition():
    """The oracle control's expected TVD is TVD(O2, O1): it stands in the oracle-1 column with its
    interval, as the paper's Oracle2 0.42 does, and its TVD to all humans is the half-against-all
    value the page computed; a model's is TVD(M, H)."""
    table = table_one(SUMMARY, {("oracle", "control"): {"tvd_humans": (0.21, 0.2, 0.22)}}).set_index("system")
    to_h, to_o1 = "E TVD(·, H) [95% CI]", "E TVD(·, O1) [95% CI]"
    assert table.loc["oracle / control", to_o1] == "0.433 [0.426, 0.440]"
    assert table.loc["oracle / control", to_h] == "0.210 [0.200, 0.220]"
    assert table.loc["m / ancestral", to_h] == "0.612 [0.500, 0.700]"
    assert table.loc["m / exact", to_h] == "0.600 [0.550, 0.650] (exact in [0.580, 0.660])"
    assert table.loc["paper: Oracle2", to_o1] == "0.42" and number(table.loc["paper: Oracle2", to_h]) == "–"
    assert table.loc["paper: GPT2", to_h] == "0.64" and table.loc["human / mle", to_h] == "–"
    assert list(table.index[:4]) == ["human / mle", "oracle / control", "m / ancestral", "m / exact"]


def test_table_one_counts_the_contexts_without_a_corpus_word_where_there_are_any():
    """A cloze corpus's empty `word` cells: those contexts are not in the ECE against the corpus
    word, and Table 1 says how many; on Provo (every context has one) the column is absent."""
    column = "contexts without corpus word (not in ECE corpus word)"
    assert column not in table_one(SUMMARY).columns
    table = table_one(SUMMARY.assign(n_contexts_without_corpus_word=2)).set_index("system")
    assert table.loc["m / ancestral", column] == "2" and table.loc["paper: GPT2", column] == ""


def test_the_glossary_names_every_quantity_once(page):
    for name in ("oracle 1, oracle 2", "TVD(O2, O1)", "H, M, C", "W1(M, H), W1(C, H)", "human control",
                 "`full_ece_weighted`", "`n_contexts_not_sampled`", "`n_contexts_all_failed`", "failure rate", "floor (labels drawn"):
        assert sum(name in key for key in GLOSSARY) == 1
        assert f"**{[k for k in GLOSSARY if name in k][0]}**" in page
    assert "one half of the responses predicting, TVD to all of them" not in page


def test_paper_coefficients_are_matched_on_the_predictor_not_the_label():
    """One table for every system, a column each; a predictor one system's design lacks (no
    numeral among the exact system's contexts) is "–" there, not a row of its own."""
    def system(decoding, predictors, labels):
        n = len(predictors)
        return pd.DataFrame({"predictor": predictors, "label": labels, "mean": np.linspace(0.1, 0.7, n),
                             "hdi_2.5%": 0.0, "hdi_97.5%": 0.8, "model": "m", "decoding": decoding,
                             "reference_tag": "NOUN"})

    ours = pd.concat([system("ancestral", ["entropy_human", "NUM", "intercept"], ["human entropy", "numeral", "intercept"]),
                      system("exact", ["entropy_human", "intercept"], ["human entropy", "intercept"])])
    table = coefficient_table(ours).set_index("predictor")
    assert list(table.columns) == ["m / ancestral", "m / exact", "paper (GPT-2)"]
    assert table.loc["numeral", "paper (GPT-2)"] == "0.049" and table.loc["intercept", "paper (GPT-2)"] == "–"
    assert table.loc["numeral", "m / ancestral"] == "0.400 [0.000, 0.800]" and table.loc["numeral", "m / exact"] == "–"
    assert table.loc["noun (every system's reference level)", "paper (GPT-2)"] == "0"
    assert table.loc["noun (every system's reference level)", "m / exact"] == "reference"
    verb = coefficient_table(pd.concat([ours, system("exact", ["NOUN"], ["noun"]).assign(
        decoding="verb-ref", reference_tag="VERB")])).set_index("predictor")
    assert verb.loc["noun", "m / ancestral"] == "reference" and verb.loc["noun", "m / verb-ref"] != "reference"
    assert verb.loc["verb (some systems' reference level)", "m / verb-ref"] == "reference"
    assert verb.loc["verb (some systems' reference level)", "m / ancestral"] == "–"
    assert table.loc["human entropy", "m / exact"] == "0.100 [0.000, 0.800]"
    assert "numerical (not in our design)" not in table.index


def test_every_paper_value_lands_on_a_row_of_the_page(page):
    """Each number of ``paper`` is printed on the page's row of the quantity it belongs to, and
    no cell reads <NA> (the paper's numeral coefficient once did, through a label mismatch)."""
    from varprobe.families.regression.analysis import LABELS

    assert "<NA>" not in page and "| nan " not in page
    for system, values in paper.TABLE_1.items():
        row = _row(page, f"paper: {system}")
        assert all(printed(v, 2) in row for v in values if v is not None), system
    for key, value in paper.TABLE_3.items():
        label = LABELS[key] if key != "NOUN" else "noun (every system's reference level)"
        assert _row(page, label).rstrip(" |").endswith(f"| {printed(value)}"), label
    for label, values in paper.TABLE_2.items():
        assert all(printed(v) in _row(page, label) for v in values.values()), label
    for system, value in paper.TABLE_4["human majority"].items():
        shown = "GPT-2" if system == "model" else system
        assert re.search(rf"\| paper\s+\| {shown}\s+\|.*\| {printed(value)}\s+\|", page), system
    for metric, values in paper.LIU_TABLE_1.items():
        row = next(line for line in page.splitlines() if re.match(rf"\| m\s+\| {metric}\s", line))
        assert all(f"{100 * v:.2f}%" in row for v in values.values()), metric
    assert '"always lower than 0.1"' in page and "| < 0.1 " in page
    for dataset, (sign, model, _) in paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.items():
        # writingprompts is not in the run, and m does not beat copying on dailydialog, so its sign is
        # not read: their signs are in the Disagreements' paper line
        if dataset not in ("writingprompts", "dailydialog"):
            assert re.search(rf"\| {dataset}\s+\| m .*\| {re.escape(sign)}\s+\| {model}\s", page), dataset
    assert "writingprompts: + (GPT-2" in page and "dailydialog: + (DialoGPT" in page
    assert f"| about {paper.REPLACEMENT_SHARE:.0%} " in page and re.search(r"\| paper: GPT-2\s+\| all\s+\| 1,489 of 2\.7 million \| 0\.05%\s+\|", page)


def test_every_table_names_its_quantities_as_the_glossary_does(page):
    """No table header on the page is a Parquet column name; the syntactic and fine-tuning tables
    use Table 1's names, and the fine-tuning table has the paper's GPT-2 values of Table 1."""
    lines = page.splitlines()
    headers = [line for line, below in zip(lines, lines[1:]) if below.startswith("|:") or below.startswith("|---")]
    for raw in ("expected_tvd", "ci_low", "mean_difference", "share_finetuned", "mean_classes"):
        assert not any(raw in header for header in headers), raw
    syntactic = page[page.index("### Syntactic TVD per system"):page.index("## What do TVD differences mean")]
    assert re.search(r"\| m / ancestral\s+\| 0\.220 \[0\.190, 0\.260\]\s+\| 0\.240\s+\| "
                     r"0\.140 \[0\.120, 0\.150\]\s+\|", syntactic)
    assert "oracle control E TVD(O2, O1) [95% CI]" in syntactic and "prints no number" in syntactic
    finetune = page[page.index("### Fine-tuned against pretrained model: ft"):]
    assert re.search(r"\| ft / ancestral\s+\| m\s+\| 6\s+\| 0\.630\s+\| 0\.660\s+\| 0\.030 \[0\.010, 0\.050\]", finetune)
    assert re.search(r"\| paper: GPT2 fine-tuned\s+\| GPT2\s+\| –\s+\| 0\.64\s+\| 0\.66\s+\| 0\.02\s+\|.*\| 0\.42\s+\|",
                     finetune)


def test_the_page_claims_only_what_its_tables_show(page):
    assert "as ours do" not in page and "measures how much" not in page
    assert "2.00 nats is the value quoted" not in page
    assert "github.com/evgeniael/predict_next_word" in page and "2.004" in page
    assert "not that bias" in page and "fixed-seed split" not in page and "fixed split" not in page
    assert "random state that every context shares" in page


def test_every_number_the_prose_cites_is_in_a_table_of_the_page(page, tmp_path):
    """The full Provo page and the page of many decodings: every decimal, percentage and quantity
    of their prose (a paper's value quoted, a measured cause) is printed in one of their tables."""
    assert unlisted_numbers(page) == []
    assert unlisted_numbers(_many_decodings(tmp_path)) == []


def test_table_ones_human_and_oracle_values_stand_beside_the_authors_protocol_and_the_paper(page):
    """Ours, the authors' protocol and the paper's digits per value, the switch table, and a caption
    that says which value to quote, with the authors' protocol averaged over its splits; the switch
    table in the appendix."""
    from varprobe.results_page.page import split

    part = page[page.index("### Table 1's human and oracle values: ours"):page.index("## Why can't models")]
    assert re.search(r"\| Oracle2, E TVD\(O2, O1\)\s+\| 0\.433\s+\| 0\.415\s+\| 0\.42\s+\|", part)
    assert re.search(r"\| Human, ECE oracle-1 majority\s+\| 0\.414\s+\| 0\.411\s+\| 0\.19\s+\|", part)
    appendix = split(page)[1]
    assert re.search(r"\| authors - switch \| `single_split`\s+\| 0\.139", appendix)
    assert "| authors - switch |" not in split(page)[0]
    assert "Quote ours" in part and "gives E TVD 0.441 and ECE against the human majority 0.498, not 0.415" in part
    assert "the human's own under the authors' protocol is 0.411" in part
    assert part.index("### Table 1's human and oracle values: ours") < part.index("each of the authors'")


def test_a_run_without_the_authors_protocol_table_renders_without_it(tmp_path):
    """A cloze corpus other than the Provo norms has no ``provo_authors`` table (its rule runs on the
    norms alone): the page renders, with no authors' protocol tables and no pointer to them."""
    results, entries, config = _run(tmp_path)
    measured = _measured(results)
    del measured["provo_authors"]
    page = render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=measured, results=str(results))
    assert "### Table 1:" in page and "the authors' protocol and the paper" not in page
    assert "the next two tables" not in page


def test_the_first_screen_says_what_was_run_then_the_findings_then_the_studies(page):
    order = [page.index(h) for h in ("## What was run", "## Findings", "VARPROBE_DATA_MIRROR=", "## Glossary",
                                     "### Table 1", "## Disagreements with the papers",
                                     "## The papers' tables and figures", "## Configuration",
                                     "## Time and memory per stage")]
    assert order == sorted(order)
    first_screen = page[:page.index("## Glossary")]
    assert "`m`" in first_screen and "passages 1 (6 contexts)" in first_screen and "`abc123`" in first_screen
    assert re.search(r"\| elapsed \| \d+\.\d\d h with a job running, \d+\.\d\d h from the first job's start",
                     first_screen)
    assert re.search(r"\| commit \| `abc123`", first_screen)
    assert "(Table 1;" in first_screen and "no model reproduces" in first_screen.lower()
    assert "| provo_sample | 1 | 12 | 11 | 12 | 812 |" in page


def test_the_elapsed_time_counts_the_invocations_that_ran_jobs(tmp_path):
    """Two invocations ran jobs (the run resumed once); a third only rewrote the page."""
    from varprobe.results_page.page import run_span

    bench = tmp_path / "benchmarks/provo_sample/1.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\tcpu_time\n3600.0\t10\n")
    logs = tmp_path / "log"
    logs.mkdir()
    for name, rules in (("a", ["provo_sample", "all"]), ("b", ["provo_summary"]), ("c", ["results_page", "all"])):
        (logs / f"{name}.snakemake.log").write_text("".join(f"localrule {r}:\n    jobid: 1\n" for r in rules))
    span = run_span(tmp_path / "benchmarks", logs)
    assert span == {"elapsed": "1.00 h", "busy": "1.00 h", "invocations": 2}


def test_the_busy_time_leaves_out_the_gaps_between_jobs():
    """A run resumed a day later: the jobs ran 0-2 h (two side by side) and 24-25 h."""
    from varprobe.results_page.page import busy_seconds

    hour = 3600.0
    assert busy_seconds([(0, 2 * hour), (hour, 1.5 * hour), (24 * hour, 25 * hour)]) == 3 * hour
    assert busy_seconds([(0, hour), (hour, 2 * hour)]) == 2 * hour and busy_seconds([]) == 0


def test_each_table_comes_before_its_figure_with_the_papers_figure_named(page):
    table, figure = page.index("### Table 1"), page.index("![provo/figures/tvd_density]")
    assert table < figure < page.index("## Why can't models")
    assert "(Ilia & Aziz 2024, Fig. 2)" in page[table:figure + 200]


def test_the_replacement_curves_are_explained():
    from varprobe.results_page.page import figure_papers

    note = figure_papers()["oracle_replacement/curves"]
    assert "against k" in note and "dashed" in note and "Figs. 14-16" in note


def test_headline_numbers_carry_intervals_or_say_why_not(page):
    row = _row(page, "m / ancestral")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert all(re.fullmatch(r"\S+ \[\S+, \S+\]", c) for c in cells[1:5]), cells
    assert "keep no resplit's oracle mode" in page
    assert re.search(r'"\(exact in \[lower, upper\]\)": the bounds that its\s+enumeration\'s unresolved', page)
    assert re.search(r"\| m\s+\| ancestral\s+\| 10\s+\| 6\s+\| 6\s+\| 0\.007 \[0\.\d+, 0\.\d+\]", page)
    assert "no interval" in page[page.index("### Token calibration"):]


def test_no_section_is_only_a_file_name(page):
    """The loss curves and the k%-oracle replacement print their numbers, not a file name."""
    assert "rows: `" not in page
    assert re.search(r"\| ft\s+\| 1\s+\| validation \| 4\.000\s+\| 3\.500\s+\| 3\.400", page)
    assert re.search(r"\| m\s+\| ancestral\s+\| 10\s+\| 0\.600\s+\| 0\.400\s+\| 3\s+\| 100%", page)


def test_disagreements_carry_their_measured_causes(page):
    from varprobe.results_page.page import split

    part = page[page.index("## Disagreements with the papers"):page.index("## The papers' tables")]
    appendix = split(page)[1]
    for title in ("### Table 1: Oracle2, E TVD(O2, O1)", "### Failure rate", "### Table 3: the coefficient",
                  "### Production: the sign of mean M - H", "### Table 1: Human, ECE oracle-1 majority"):
        assert title in part
    assert part.count("- cause: ") == part.count("\n### ")
    # The failure breakdown (in the appendix): 5 failed of 80 draws, the 3 without a letter fail under the
    # paper's reading too.
    assert re.search(r"\| m / ancestral\s+\| token_budget\s+\| 3\s+\| 3\.75%\s+\| 3 ", appendix)
    assert re.search(r"\| m / ancestral\s+\| extends_context_word\s+\| 2\s+\| 2\.50%\s+\| 0 ", appendix)
    assert re.search(r"\| m / ancestral\s+\| all\s+\| 5\s+\| 5\.00%\s+\| 3 ", appendix)
    assert "`m / ancestral` 5.00% of draws fail (Table 1's failure rate, each system's row `all` of its table)" in part
    assert part.count("under the paper's reading only the draws without any letter would") == 1
    assert "paper's Table 3: a column for every tag, z-scores" in part
    assert "cell 15:5 averages `ece_gpt2_oracle_maj`, GPT-2's list; the human's own under the authors' protocol " \
        "is 0.411" in part
    ties = re.search(r"broken lexicographically \(ours\) the ECE is (\d\.\d{3}), at random (\d\.\d{3})", part)
    assert "0.278-0.500 over our 3 resplits (its table)" in part and re.search(r"\| 1\s+\| 0\.278\s+\|", appendix)
    assert re.search(rf"\| \d+%\s+\| {ties[1]}\s+\| {ties[2]}\s+\|", part)
    assert ("The authors' 0.415 is one split, seed 1 (cell 17:18), drawn from a random state every context shares "
            "(cell 4:5); averaged over its 20 splits the same protocol gives 0.441") in part


def test_the_replacement_share_disagreement_reads_the_overlap_the_criterion_reads(page):
    """k needed 100% against the paper's about 60%: the cause states the criterion (the histograms'
    overlap at the threshold 0.8), the overlap at the paper's share (0.7) and at each grid k up to the
    system's k needed, and how far the two shares are apart; no sentence about the mean."""
    part = page[page.index("### k%-oracle replacement: the share"):page.index("## The papers' tables")]
    assert "- paper: Ilia & Aziz 2024, Sec. 5: about 60% for GPT-2" in part
    assert re.search(r"\| m / ancestral, oracle size 10, k needed \(%\) \| 100\s+\| 60\s+\|", part)
    assert "k%-oracle replacement table; see Disagreements)" in page[:page.index("## Glossary")]
    assert "overlaps the oracles' (1 - TVD of their bin shares) by at least 0.8 (below)" in part
    assert "the overlap at k = 60% is 0.700, and each row's k needed is 40 points from the paper's" in part
    assert re.search(r"\| m\s+\| ancestral\s+\| 10\s+\| 100\s+\| 0.700\s+\| 1.000\s+\| 0.8\s+\|", part)
    assert "mean TVD" not in part.split("- cause:")[1].split("###")[0]


def test_the_replacement_share_is_said_to_be_read_as_the_papers_only_at_the_threshold_and_bins_that_do(tmp_path):
    """The cause said "ours puts normal densities with the paper's GPT-2 moments at its 60%" of
    any threshold and bins; that holds of 0.8 over 20 bins alone (``paper.REPLACEMENT_READING``)."""
    from varprobe.results_page.disagreements import cause

    results, entries, config = _run(tmp_path)
    measured, settings = _measured(results), _validated(config)
    said = cause("replacement_share", entries, measured, settings)["cause"]
    assert "ours puts normal densities with the paper's GPT-2 moments at its 60%" in said
    settings["analyses"]["oracle_replacement"]["bins"] = 10
    said = cause("replacement_share", entries, measured, settings)["cause"]
    assert ("the run's threshold over 10 bins is its own, not the one that puts normal densities with the "
            "paper's GPT-2 moments at its 60% (`overlap_threshold: 0.8` over `bins: 20`") in said
    assert "ours puts" not in said


def test_the_replacement_finding_spans_every_oracle_size():
    """k needed 50 at oracle size 10 and 70 at 20 (the table's rows): the finding reads 50-70%, not
    the first size's 50% alone."""
    from varprobe.families.oracle_replacement.page import FINDINGS
    summary = pd.DataFrame({"model": "m", "decoding": "ancestral", "oracle_size": ["10", "20"],
                            "k_match": [50.0, 70.0]})
    (finding,) = FINDINGS["oracle_replacement_summary"][0](summary)
    assert "once 50-70% of its contexts are replaced by the oracle's TVD, over every oracle size" in finding


def test_the_full_ece_disagreement_measures_the_estimators_floor(page):
    """Beside each model's Full-ECE at every M stands a perfectly calibrated model's (labels drawn
    from the model itself) on as many positions, and the cause cites the table's ratio of largest to smallest M."""
    part = page[page.index("### RSD of cw-ECE and Full-ECE"):page.index("### Production: the level")]
    assert re.search(r"\| m\s+\| corpus\s+\| full_ece\s+\| 0\.100\s+\| 0\.150\s+\| 0\.250", part)
    assert re.search(r"\| m\s+\| drawn from the model\s+\| full_ece\s+\| 0\.010\s+\| 0\.050\s+\| 0\.200", part)
    assert ("m: ours 0.100 at M=5 and 0.250 at M=500, a perfectly calibrated model's 0.010 and 0.200 "
            "(its largest / smallest M 20.000, ours 2.500; its RSD over M 116%)") in part
    assert re.search(r"\| m\s+\| drawn from the model\s+\| full_ece\s+\|.*\| 20\.000\s+\| 116%", part)
    assert "unexplained" in part


def test_production_shows_one_input_per_task_and_the_most_miscalibrated(page):
    part = page[page.index("### Production: the sign of mean M - H"):page.index("## The papers' tables")]
    assert 'wmt14, input `w1`: source "A cat."' in part
    assert "| Eine Katze. | Die Katze \\| sitzt. |" in part and "| Katze. | I cannot translate. |" in part
    assert re.search(r"\| wmt14\s+\| ancestral\s+\| W1\(C, H\)\s+\| w1\s+\| 0\.400 .*\| I cannot translate\.", page)
    assert "### The most miscalibrated inputs (above the paper's thresholds)" in page
    assert re.search(r"\| wmt14\s+\| lexical-1\s+\| > 0\.3\s+\| > 0\.3\s+\| the paper's\s+\|", page)
    assert re.search(r"\| wmt14\s+\| semantic\s+\| > 0\.2\s+\| > 0\.2\s+\| the paper's\s+\|", page)


def test_production_signs_are_read_against_the_papers():
    rows = [{"dataset": d, "model": "m", "decoding": "ancestral", "probe": "lexical-1", "available": True,
             "statistic": "mean_M_minus_H", "n_inputs": 5, "mean": v, "ci_low": v - 0.1, "ci_high": v + 0.1}
            for d, v in (("wmt14", 0.5), ("dailydialog", 0.3))]
    signs = production_signs(pd.DataFrame(rows)).set_index("dataset")
    assert signs.loc["wmt14", "agrees"] == "no" and signs.loc["dailydialog", "agrees"] == "yes"
    assert signs.loc["wmt14", "paper model"] == "OpusMT"


def test_production_view_has_one_row_per_system_and_probe_with_the_control():
    rows = []
    for probe, available in (("lexical-1", True), ("syntactic-1", False)):
        for statistic, mean in (("mean_H", 0.3), ("w1_C_H", 0.12), ("w1_control", 0.05), ("mean_M_minus_H", 0.1)):
            rows.append({"dataset": "asset", "model": "m", "decoding": "ancestral", "probe": probe,
                         "available": available, "statistic": statistic, "n_inputs": 2000,
                         "mean": mean, "ci_low": mean - 0.01, "ci_high": mean + 0.01})
    view = production_w1(pd.DataFrame(rows))
    assert len(view) == 1 and view.loc[0, "probe"] == "lexical-1" and view.loc[0, "inputs"] == "2000"
    assert view.loc[0, "W1(C, H)"] == "0.120 [0.110, 0.130]"
    assert view.loc[0, "W1 human control"] == "0.050 [0.040, 0.060]"
    assert "mean_M_minus_H" not in view.columns


def test_every_table_and_figure_of_the_papers_is_listed_with_where_it_is(page):
    part = page[page.index("## The papers' tables and figures"):page.index("## Configuration")]
    for item in ("Table 1 (ECE and expected TVD)", "Table 2", "Table 3", "Table 4", "Figs. 14-16",
                 "Liu et al. 2024 | Table 1", "Fig. 5 (mean W1 across decoding settings)", "WritingPrompts"):
        assert item in part
    assert "section \"Next-word calibration: expected TVD and ECE\"" in part
    assert "models not shipped offline (GPT-2, Bloom)" in part


def test_sections_the_run_did_not_make_say_so_with_their_command(page):
    assert "## The paper's draw count (1,000 draws per context)" in page
    assert "configs/paper-draws.yaml" in page


def test_a_decoding_at_the_papers_draw_count_makes_the_section_and_says_its_draws():
    from varprobe.results_page.findings import absent_sections, draws_per_context

    provo = {"n_samples": 40, "decodings": [{"name": "ancestral"}, {"name": "ancestral-1000", "n_samples": 1000}]}
    assert draws_per_context(provo) == "40 (ancestral-1000: 1,000)"
    assert [a["heading"] for a in absent_sections({"provo": provo}, set())] == []
    provo["decodings"][1]["n_samples"] = 100
    assert [a["heading"] for a in absent_sections({"provo": provo}, set())] == [
        "The paper's draw count (1,000 draws per context)"]
    families = [{"name": "ancestral"}, {"name": "t", "temperature": 0.5}, {"name": "k", "top_k": 30},
                {"name": "p", "top_p": 0.9}, {"name": "y", "typical_p": 0.2}]
    assert absent_sections({"production": {"decodings": families}}, set()) == []


def _columns(fig) -> int:
    """The number of panel columns of ``fig`` (distinct left edges of its axes)."""
    return len({round(ax.get_position().x0, 3) for ax in fig.axes})


def test_panel_figures_have_at_most_three_columns_and_no_empty_panel():
    from varprobe.families.word_classes.plots import class_tvd_histograms

    series = {(f"m{i}", "ancestral"): {"model_humans": np.linspace(0, 1, 9), "oracle2_oracle1": np.full(9, 0.3)}
              for i in range(6)}
    fig, _ = class_tvd_histograms("syntactic", series)
    fig.canvas.draw()
    assert len(fig.axes) == 6 and _columns(fig) == 3
    assert fig.get_size_inches()[0] <= 3 * 3.6 + 0.01
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1


def test_the_sample_size_figure_draws_no_empty_panel_and_says_which_sizes_it_could_not_draw():
    from varprobe.families.sample_size.plots import squared_error_histograms

    summary = pd.DataFrame({"model": "m", "decoding": "ancestral", "size": [10, 20, 40, 100],
                            "n_estimates": [5, 5, 0, 0], "mse": [0.007, 0.003, np.nan, np.nan]})
    histograms = pd.DataFrame([{"model": "m", "decoding": "ancestral", "group": f"n={n}", "seed_index": pd.NA,
                                "bin_left": 0.0, "bin_right": 0.1, "count": 5, "density": 10.0} for n in (10, 20)])
    fig = squared_error_histograms(histograms, summary)
    assert [ax.get_title() for ax in fig.axes] == ["subsample size n = 10", "subsample size n = 20"]
    assert "n = 40, 100" in fig._suptitle.get_text()


def _sample_size_row(size, estimated, subsample_failed=0, all_failed=0, too_large=0, contexts=2686):
    return {"model": "m", "decoding": "ancestral-1000", "size": size, "n_estimates": estimated,
            "n_too_large": too_large, "n_without_words": subsample_failed + all_failed, "n_contexts": contexts,
            "n_contexts_estimated": estimated, "n_contexts_too_large": too_large,
            "n_contexts_all_failed": all_failed, "n_contexts_subsample_failed": subsample_failed,
            "mse": 0.01 if estimated else np.nan, "note": ""}


def test_the_sample_size_table_says_why_a_size_has_fewer_contexts_than_table_one():
    from varprobe.families.sample_size.page import sample_size

    summary = pd.DataFrame([_sample_size_row(10, 2685, subsample_failed=1),
                            _sample_size_row(20, 2685, all_failed=1),
                            _sample_size_row(40, 2684, subsample_failed=1, all_failed=1)])
    shown = sample_size(summary).set_index("size")
    assert shown["contexts"].tolist() == ["2685", "2685", "2684"]
    assert shown["with a word (Table 1)"].tolist() == ["2686", "2685", "2685"]
    assert shown.loc["10", "note"] == ("1 context: every draw of the subsample failed (Table 1 keeps it: "
                                       "the full sample has a word)")
    assert shown.loc["20", "note"] == "1 context: every draw failed (Table 1 leaves it out too)"
    assert "; " in shown.loc["40", "note"]


def test_the_semantic_table_says_its_oracle_control_depends_on_the_systems_words(page):
    text = re.sub(r"\s+", " ", page)
    assert "The semantic oracle control is the system's own" in text
    assert "the table's oracle rows differ by system for this reason" in text


def test_the_sample_size_table_refuses_counts_that_differ_unexplained():
    from varprobe.families.sample_size.page import sample_size

    unexplained = pd.DataFrame([_sample_size_row(10, 2685)])  # one context of 2,686 missing, no reason
    with pytest.raises(ValueError, match="ancestral-1000, size 10: 2686 contexts"):
        sample_size(unexplained)


def test_the_regression_legend_stays_off_the_estimates():
    from varprobe.families.regression.plots import coefficient_plot

    coefficients = [pd.DataFrame({"model": "m", "decoding": d, "predictor": ["entropy_human", "VERB"],
                                  "label": ["human entropy", "verb"], "mean": [0.1, -0.02],
                                  "hdi_2.5%": [0.0, -0.05], "hdi_97.5%": [0.2, 0.01], "reference_tag": "NOUN"})
                    for d in ("ancestral", "temperature-0.5")]
    paper = pd.DataFrame({"predictor": ["entropy_human", "VERB"], "mean": [0.053, 0.0]})
    fig, _ = coefficient_plot(pd.concat(coefficients, ignore_index=True), ["entropy_human", "VERB"],
                              {"entropy_human": "human entropy", "VERB": "verb", "NOUN": "noun"}, paper)
    fig.canvas.draw()
    (legend,) = fig.legends
    for ax in fig.axes:
        assert ax.get_legend() is None
        assert legend.get_window_extent().y1 <= ax.get_window_extent().y0  # below, not over the estimates


def test_a_dataset_without_a_probe_is_named_on_its_panel():
    from varprobe.plots.production import human_variability

    probes = PROBES = ["lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3", "semantic"]
    human = pd.DataFrame([{"dataset": d, "probe": p, "distance": v} for d in ("asset", "wmt") for p in probes
                          for v in (0.2, 0.5) if d == "wmt" or p.startswith("lexical")])
    fig = human_variability(human, probes)
    assert len(fig.axes) == 7 and _columns(fig) == 3
    titles = [ax.get_title() for ax in fig.axes]   # the note is in the title, off the data
    assert titles[PROBES.index("semantic")] == "semantic\n(not computed for asset)" and titles[0] == "lexical-1"
    assert not any(ax.texts for ax in fig.axes)
    # one legend below all panels: a dataset keeps its colour where another one is missing
    colours = {(patch.get_label(), patch.get_edgecolor()) for ax in fig.axes for patch in ax.patches}
    assert len(colours) == 2 and [t.get_text() for t in fig.legends[0].get_texts()] == ["asset", "wmt"]


def test_the_production_histograms_name_the_decoding_they_draw():
    """Figs. 3 and 4 draw one decoding of a run that may have nine: each legend entry names it."""
    from varprobe.plots.production import mean_differences, w1_densities

    divergences = pd.DataFrame([{"dataset": "asset", "model": "m", "decoding": d, "probe": "lexical-1",
                                 "input_id": str(i), "mean_M_minus_H": 0.1 * i, "w1_C_H": 0.1 * i,
                                 "w1_control": 0.05} for d in ("ancestral", "top-p-0.9") for i in range(4)])
    for figure in (mean_differences, w1_densities):
        fig = figure(divergences, ["lexical-1"], "top-p-0.9")
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert any(label.endswith("top-p-0.9") for label in labels), labels
        assert not any("ancestral" in label for label in labels), labels


def test_the_tvd_density_names_the_definition_of_each_curve():
    """The oracle's curve is TVD(O2, O1), the paper's Fig. 2 oracle, and a model's TVD(M, H),
    as Table 1 prints them; the axis says so."""
    from varprobe.plots.provo import tvd_density

    fig, _ = tvd_density({("oracle", "control"): np.linspace(0.2, 0.6, 9), ("m", "ancestral"): np.linspace(0.4, 0.9, 9)})
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # below the axes, off the curves
    assert labels == ["oracle: TVD(O2, O1), n = 9 contexts", "m / ancestral: TVD(M, H), n = 9 contexts"]
    assert "TVD(M, H)" in fig.axes[0].get_xlabel() and "TVD(O2, O1)" in fig.axes[0].get_xlabel()


def test_the_token_calibration_figure_wraps_its_four_metrics_into_rows_of_three():
    from varprobe.families.token_calibration.plots import metrics_against_bins

    table = pd.DataFrame([{"model": "m", "labels": "corpus", "metric": metric, "bins": m, "value": 0.1 * m}
                          for metric in ("ece", "classwise_ece", "full_ece", "full_ece_weighted") for m in (5, 10)])
    fig = metrics_against_bins(table)
    fig.canvas.draw()
    assert len(fig.axes) == 4 and _columns(fig) == 3 and len(fig.legends) == 1


def test_the_mean_w1_figure_gives_every_panel_the_same_rows_and_the_papers_level():
    """Fig. 5: a system missing from one panel keeps its row empty there (the rows line up across a
    row of panels, named on the first), and the paper's level is a dotted line in every panel."""
    from varprobe.plots.production import mean_w1

    rows = [{"dataset": d, "model": "m", "decoding": dec, "probe": "lexical-1", "available": True,
             "statistic": s, "n_inputs": 2, "mean": 0.2, "ci_low": 0.1, "ci_high": 0.3}
            for d, decodings in (("asset", ("ancestral", "top-k-30")), ("wmt14", ("top-k-30",)))
            for dec in decodings for s in ("w1_C_H", "w1_control")]
    fig = mean_w1(pd.DataFrame(rows), ["lexical-1"], paper_level=0.1)
    fig.canvas.draw()
    names = ["human control", "m / ancestral", "m / top-k-30"]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == names
    assert all(list(ax.get_yticks()) == [0, 1, 2] for ax in fig.axes)
    wmt = fig.axes[1]
    assert [line.get_ydata()[0] for line in wmt.lines if line.get_marker() == "o"] == [0, 2]
    assert all(any(line.get_linestyle() == ":" and line.get_xdata()[0] == 0.1 for line in ax.lines) for ax in fig.axes)
    assert "below 0.1" in fig.legends[0].get_texts()[0].get_text()


def test_the_w1_densities_name_the_decoding_they_draw():
    from varprobe.plots.production import w1_densities

    divergences = pd.DataFrame({"dataset": "asset", "model": "m", "decoding": ["ancestral", "top-k-30"],
                                "probe": "lexical-1", "input_id": ["a", "a"], "w1_C_H": [0.3, 0.5],
                                "w1_control": [0.1, 0.1]})
    fig = w1_densities(divergences, ["lexical-1"], "top-k-30")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["m / top-k-30", "human control"]


MANY_DECODINGS = ("ancestral", "temperature-0.5", "top-k-30", "top-p-0.9", "typical-0.2", "temperature-0.7",
                  "top-k-10", "top-k-50", "top-p-0.8", "top-p-0.95", "typical-0.95")


def _many_decodings(tmp_path, decodings=MANY_DECODINGS) -> str:
    """The page of ``_run`` with ``decodings`` (eleven) on two tasks and seven probes: asset
    lexical-1's lowest mean W1(C, H) is top-k-30's, its interval clear of ancestral's; elsewhere
    ancestral's."""
    results, entries, config = _run(tmp_path)
    rows = []
    for dataset in ("wmt14", "asset"):
        for probe in ("lexical-1", "lexical-2", "syntactic-1", "syntactic-2", "semantic", "lexical-3", "syntactic-3"):
            for i, decoding in enumerate(decodings):
                # asset lexical-1: top-k-30 lowest, its interval clear of ancestral's; else ancestral lowest
                mean = 0.3 - 0.2 * (decoding == "top-k-30") if (dataset, probe) == ("asset", "lexical-1") else 0.1 + 0.01 * i
                for statistic, value in (("w1_C_H", mean), ("w1_control", 0.05)):
                    rows.append({"dataset": dataset, "model": "m", "decoding": decoding, "probe": probe,
                                 "available": True, "statistic": statistic, "n_inputs": 200, "mean": value,
                                 "ci_low": value - 0.005, "ci_high": value + 0.005})
    path = next(e["table"] for e in entries if e["name"] == "production_summary")
    pd.DataFrame(rows).to_parquet(path)
    path = next(e["table"] for e in entries if e["name"] == "production_beats_copy")
    _beats_copy([(d, decoding, True) for d in ("wmt14", "asset") for decoding in decodings]).to_parquet(path)
    page = render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries,
                  figures=[], benchmarks=str(results / "benchmarks"), measured=_measured(results),
                  results=str(results))
    return page


def test_a_run_of_many_decodings_shows_fig_5s_numbers_and_reads_them_against_the_paper(tmp_path):
    """Eleven decodings make the production table of the paper's main probes too long for the page:
    it shows the mean-W1 figure's numbers on them instead (the lowest system per column in bold),
    the appendix every probe's rows, a finding counts where
    ancestral sampling is lowest, and a task where the paper has it lowest and ours does not is a
    disagreement with the overlap of the intervals measured."""
    page = _many_decodings(tmp_path)
    table = page[page.index("### Production"):page.index("Reading it against the paper (Giulianelli")]
    assert re.search(r"\| dataset\s+\| system\s+\| inputs\s+\| lexical-1\s+\| syntactic-2\s+\| semantic\s+\|", table)
    assert re.search(r"\| asset\s+\| m / top-k-30\s+\| 200\s+\| \*\*0\.100 \[0\.095, 0\.105\]\*\*\s+\|", table)
    assert re.search(r"\| wmt14\s+\| human control\s+\| 200\s+\| 0\.050 \[0\.045, 0\.055\]", table)
    assert "The table of the paper's main probes (66 rows:" in table and "The table of every probe (154 rows)" in table
    assert "| lexical-2 " not in table and "| lexical-2 " in page.split("<!-- appendix -->")[1]
    assert ("ancestral sampling has the lowest mean W1(C, H) of the run's 11 decodings in 5 of the 6 task x probe "
            "cells of the production table (wmt14 3 of 3, asset 2 of 3); where another decoding is lowest, its interval "
            "overlaps ancestral's in 0 of 1 cells") in page  # the cells of the table, the paper's main probes
    part = page[page.index("### Production: the decoding that matches"):]
    assert "another decoding is lowest in 1 of the 6 task x probe cells of those tasks on the paper's probes" in part
    assert "in 0 of those 1 cells the lowest decoding's 95% interval overlaps ancestral's (there" in part
    assert re.search(r"\| asset\s+\| m\s+\| lexical-1\s+\| top-k-30\s+\| 0\.100\s+\| 0\.300\s+\| no\s+\|", part)


def _rows(table: str) -> list[list[str]]:
    """The cells of each body row of a Markdown table."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:] if line.startswith("|")]


def test_the_production_table_shows_the_papers_main_probes_and_the_appendix_every_probe(tmp_path):
    """Three decodings, two tasks, seven probes: the page's production table has a row per task,
    system and main probe of the paper (``GIULIANELLI_PROBES``) and links to the appendix, whose
    table has a row per task, system and probe."""
    from varprobe.published import GIULIANELLI_PROBES
    from varprobe.results_page.page import split

    main, appendix = split(_many_decodings(tmp_path, MANY_DECODINGS[:3]))
    table = main[main.index("### Production\n"):main.index("Reading it against the paper (Giulianelli")]
    shown = _rows(table[table.index("| dataset"):table.index("\n\n", table.index("| dataset"))])
    assert {r[3] for r in shown} == set(GIULIANELLI_PROBES) and len(shown) == 2 * 3 * len(GIULIANELLI_PROBES)
    assert "in the [appendix](results-appendix.md#production-variability-every-probe)" in table
    every = appendix[appendix.index("### Production variability: every probe\n"):]
    every = _rows(every[every.index("| dataset"):every.index("\n\n", every.index("| dataset"))])
    assert len(every) == 2 * 3 * 7 and {r[3] for r in every} >= {"lexical-2", "syntactic-3", *GIULIANELLI_PROBES}


def test_the_glossary_defines_only_the_quantities_of_the_sections_on_the_page():
    from varprobe.results_page.tables import GLOSSARY as STUDIES

    assert list(glossary({"production"})) == ["human control (production)", "H, M, C (production)",
                                               "W1(M, H), W1(C, H)"]
    assert "TVD(O2, O1)" in glossary({"provo", "production"}) and "RSD" not in glossary({"provo", "production"})
    assert set(STUDIES) < set(GLOSSARY)  # the studies' and the families' (their page modules)
    assert "RSD" in GLOSSARY and "TVD_syn, TVD_sem" in GLOSSARY and "RSD" not in STUDIES


def test_every_panel_labels_its_shared_x_axis():
    """Four panels on a shared x axis, three a row: every panel keeps its tick labels, the first
    row's too (the token-calibration figure lost them where a panel had none below it, and the
    first row's first panel lost them over the panel below it)."""
    from varprobe.plots.layout import panel_grid

    fig, axes = panel_grid(4, sharex=True)
    for ax in axes:
        ax.plot([1, 10, 100], [0, 1, 2])
    fig.canvas.draw()
    shown = [any(label.get_visible() and label.get_text() for label in ax.get_xticklabels()) for ax in axes]
    assert shown == [True, True, True, True]


def test_what_was_run_names_a_whole_corpus_as_all_passages(tmp_path):
    from varprobe.results_page.findings import what_was_run

    _, entries, config = _run(tmp_path)
    config = _validated(config)
    config["provo"]["texts"] = "all"
    lines = dict(what_was_run(config, entries))
    assert lines["Provo"].startswith("all passages (6 contexts), 40 draws per context")


def test_what_was_run_says_which_provo_position_ours_and_the_papers_leave_out():
    from varprobe.results_page.findings import provo_positions_left_out

    provo = {"texts": "all", "corpus": None}
    said = provo_positions_left_out(provo, 2686)
    assert said.startswith(": the norms' 2,687 positions but (18, 3), whose responses mix")
    assert said.endswith("leaves out the corpus's last, (55, 62)")
    assert provo_positions_left_out(provo, 2685) == ""
    assert provo_positions_left_out({"texts": [1, 2], "corpus": None}, 2686) == ""


def test_the_page_imports_no_computation():
    """The page reads tables: importing it loads no model fitting, tagging or sampling library
    and none of the package's analyses or metrics (their tables come from the workflow's rules)."""
    code = ("import sys, varprobe.results_page.page; print('\\n'.join(m for m in sys.modules if m.startswith("
            "('sklearn', 'nltk', 'pymc', 'varprobe.analysis', 'varprobe.metrics', 'varprobe.probes'))))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == []


def _schema_defaults(node: dict) -> set[str]:
    """The keys of the config schema that have a default, at any depth."""
    found = set()
    for key, entry in node.get("properties", {}).items():
        if "default" in entry:
            found.add(key)
        found |= _schema_defaults(entry)
    return found | (_schema_defaults(node["items"]) if isinstance(node.get("items"), dict) else set())


def test_no_schema_default_is_restated_by_the_page():
    """The page reads the validated config, whose defaults the schema applied: no ``.get(KEY,
    DEFAULT)`` of a key the schema gives a default restates it in the page's code."""
    import ast

    keys = _schema_defaults(yaml.safe_load(SCHEMA.read_text()))
    restated = []
    for path in sorted((Path(__file__).parents[1] / "src/varprobe/results_page").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in keys):
                restated.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert restated == []


def test_the_page_renders_from_the_validated_config_alone(tmp_path):
    """Given the validated config and the measured tables, the page needs no setting of its own:
    Table 1 says the configured bins and draws, and a config without the Provo study makes no
    Provo section."""
    results, entries, config = _run(tmp_path)
    settings = _validated(config)
    settings["provo"]["ece_bins"] = 7
    page = render(config=settings, configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_measured(results), results=str(results))
    assert "ECE uses 7 equal-width bins" in page and "sampled 40 times per context" in page
    del settings["provo"]
    page = render(config=settings, configfiles=[str(config)], commit="abc", entries=[], figures=[],
                  benchmarks=str(results / "benchmarks"), measured={}, results=str(results))
    assert "### Table 1" not in page and "## The paper's draw count" not in page


def test_a_pair_differs_when_the_papers_printed_value_is_outside_our_interval_or_far_from_ours():
    """With an interval: the paper's value widened by half its last digit against ours; without
    one: more than 10% of the paper's value apart; a paper's bound: our interval above it."""
    from varprobe.results_page.disagreements import Pair

    def pair(ours, paper_value, decimals=2, low=np.nan, high=np.nan, bound=False):
        return Pair("g", "w", ours=ours, low=low, high=high, paper=paper_value, decimals=decimals,
                    bound=bound).differs()

    assert pair(0.433, 0.42, low=0.426, high=0.44) and not pair(0.433, 0.43, low=0.426, high=0.44)
    assert pair(0.097, 0.14) and not pair(0.595, 0.60) and pair(0.409, 0.57)
    assert pair(0.5, 0.1, 1, 0.49, 0.51, bound=True) and not pair(0.05, 0.1, 1, 0.04, 0.06, bound=True)
    assert not pair(0.0004, 0.0, 3) and pair(0.01, 0.0, 3)


def _render_run(tmp_path, measured=None):
    results, entries, config = _run(tmp_path)
    measured = measured or _measured(results)
    settings = _validated(config)
    page = render(config=settings, configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=measured, results=str(results))
    return page, entries, measured, settings


def test_every_value_that_differs_from_the_papers_is_under_disagreements_with_its_cause(tmp_path):
    """The generator's completeness: every pair of a value of ours and the paper's printed beside it
    that differs has a row under its group's heading, or (a group the appendix lists, ``appendix_pairs``)
    under the appendix's heading of its list, with a cause; no agreeing pair is listed."""
    from varprobe.results_page.disagreements import groups, pairs
    from varprobe.results_page.page import split

    page, entries, measured, config = _render_run(tmp_path)
    found = pairs(entries, measured, config)
    differing = [p for p in found if p.differs()]
    GROUPS = groups()
    assert {"table1_human_ece_corpus", "table1_oracle_ece_human_majority", "table1_oracle_expected_tvd",
            "table2_biased", "table2_oracle", "table3_coefficients", "table4_model", "table4_oracle",
            "production_w1", "liu_rsd", "replacement_share"} <= {p.group for p in differing}
    part = page[page.index("## Disagreements with the papers"):page.index("## The papers' tables")]
    appendix = split(page)[1]
    entries_by_title = {chunk.split("\n", 1)[0]: chunk for chunk in part.split("\n### ")[1:]}
    details = {chunk.split("\n", 1)[0]: chunk for chunk in appendix.split("\n### ")[1:]}
    for p in differing:
        entry = entries_by_title[GROUPS[p.group].title]
        listed = entry + details.get(f"{GROUPS[p.group].title}: ours, where it differs from the paper's", "")
        assert re.search(rf"\| {re.escape(p.where)}\s+\| {re.escape(p.row()['ours'])}\s+\| "
                         rf"{re.escape(p.row()['paper'])}\s+\|", listed), p
        assert re.search(r"\n- cause: \S", entry), p.group
    for p in found:
        if not p.differs():
            assert f"| {p.where} " not in part + appendix, p
    table4 = entries_by_title["Table 4: the oracles' token-level ECE"] + \
        details["Table 4: the oracles' token-level ECE: the authors' definitions switched one at a time"]
    assert "the authors' protocol gives oracle 1 0.500 and oracle 2 0.396" in table4
    assert "`random.seed(0)` (line 103) in every context" in table4
    assert re.search(r"\| authors - switch\s+\| `single_split`\s+\| 0\.388\s+\| 0\.436\s+\|", table4)
    assert "Tie-breaking" in entries_by_title["Table 1: Human, ECE oracle-1 majority"]
    assert "`raw_corpus_word` 0.144 (`TVD/GPT2/GPT2_sampling.py` lines 37 and 307)" in \
        entries_by_title["Table 1: Human, ECE corpus word"]


def test_a_group_without_a_cause_is_unexplained_and_a_pair_without_a_heading_is_refused(tmp_path, monkeypatch):
    from varprobe.families.token_level import page as token_level_page
    from varprobe.results_page import disagreements

    assert set(disagreements.causes()) <= set(disagreements.groups())
    page, entries, measured, config = _render_run(tmp_path)
    monkeypatch.delitem(token_level_page.CAUSES, "table4_oracle")
    found = {d["title"]: d for d in disagreements.generated(entries, measured, config)}
    assert found["Table 4: the oracles' token-level ECE"]["cause"] == "unexplained"
    stray = disagreements.Pair("nowhere", "w", ours=1.0, low=np.nan, high=np.nan, paper=0.5, decimals=2)
    monkeypatch.setattr(disagreements, "pairs", lambda *args: [stray])
    with pytest.raises(KeyError, match="nowhere"):
        disagreements.generated(entries, measured, config)


def test_tables_two_and_four_name_every_model_they_hold_and_the_papers_systems():
    from varprobe.families.biased_estimator.page import table_two
    from varprobe.families.token_level.page import table_four

    biased = [pd.DataFrame([_system(m, "biased", 0.5), _system("oracle", "control", 0.4)]) for m in ("a", "b")]
    two = table_two(biased)
    assert "biased estimate of a, b " in two.attrs["title"]
    assert {"a / biased", "b / biased", "oracle control (ours)", "paper: GPT-2 biased",
            "paper: Oracle 1 (Table 1's Oracle2)", "paper: Oracle 2"} <= set(two.columns)
    assert "paper: GPT-2 oracle 1" not in two.columns
    level = [pd.DataFrame({"model": m, "system": ["model", "oracle 1"], "n_contexts": 6, "expected_tvd": 0.6,
                           "ci_low": 0.5, "ci_high": 0.7, "expected_tvd_oracle1": 0.6, "ece_human_majority": 0.1,
                           "mean_entropy": 1.0}) for m in ("a", "b")]
    four = table_four(level)
    assert "ECE of a, b and" in four.attrs["title"]
    assert list(four.loc[four["model"] == "paper", "system"]) == ["GPT-2", "oracle 1", "oracle 2"]


def test_each_run_system_is_read_against_the_papers_column_of_its_decoding():
    from varprobe.results_page.disagreements import paper_system

    assert paper_system({"name": "ancestral"}, False) == "GPT2"
    assert paper_system({"name": "ancestral-1000", "n_samples": 1000}, False) == "GPT2"
    assert paper_system({"name": "ancestral"}, True) == "GPT2 fine-tuned"
    assert paper_system({"name": "t", "temperature": 0.5}, False) == "GPT2 T=0.5"
    assert paper_system({"name": "t", "temperature": 0.5}, True) is None
    assert paper_system({"name": "exact", "method": "enumerate"}, False) is None


def test_each_published_system_answers_its_own_column_of_table_one():
    """A model entry ``published: {system: NAME}`` answers that system's column of Table 1, the
    list mode of ChatGPT the paper's ChatGPT_D (``ChatGPT list``)."""
    from varprobe.results_page.published_systems import columns

    names = ("gpt2", "gpt2-fine-tuned", "gpt2-temperature-0.5", "bloom", "chatgpt", "chatgpt-list")
    config = {"models": [{"name": "m", "pretrained": "m"},
                         *({"name": f"{n}-published", "published": {"system": n}} for n in names)]}
    assert columns(config) == {"gpt2-published": "GPT2", "gpt2-fine-tuned-published": "GPT2 fine-tuned",
                               "gpt2-temperature-0.5-published": "GPT2 T=0.5", "bloom-published": "Bloom",
                               "chatgpt-published": "ChatGPT", "chatgpt-list-published": "ChatGPT list"}
    assert set(columns(config).values()) <= set(paper.TABLE_1)


def _published_entry(page: str) -> str:
    """The Disagreements entry of the paper's own systems' rows."""
    part = page[page.index("### Table 1: the paper's own systems, from their published samples"):]
    return part[:part.index("\n### ", 1)]


def test_a_published_systems_row_is_read_against_its_own_column(tmp_path):
    """The paper's Bloom from its published samples: each of its four values beside the paper's
    Bloom column, in a group of its own (not the run's models', whose cause names ``m`` alone)."""
    from varprobe.results_page.disagreements import STUDY_CAUSES as CAUSES, pairs

    page, entries, measured, config = _render_run(tmp_path)
    bloom = [p for p in pairs(entries, measured, config) if p.where.startswith("bloom-published")]
    assert {p.group for p in bloom} == {"table1_published"}
    assert sorted(p.paper for p in bloom) == sorted(paper.TABLE_1["Bloom"])
    assert all(p.where.endswith("(paper: Bloom)") for p in bloom)
    assert "the run's models (`m`) against the paper's GPT-2" in CAUSES["table1_models"](entries, measured, config)
    assert re.search(r"\| bloom-published / given, E TVD\(·, H\) \(paper: Bloom\)\s+\| "
                     r"0\.655 \[0\.640, 0\.670\] \| 0\.61", _published_entry(page))


def test_the_definition_that_moves_a_published_value_most_is_named_only_past_the_threshold():
    """``most_moved``: the switch row farthest from its end, with its value; none within ``MOVES``
    (Bloom's E TVD moves 0.007 by the authors' words, then less than half of it)."""
    from varprobe.results_page.tables import MOVES, most_moved

    table = _bloom_authors()
    assert most_moved(table, "expected_tvd", "ours + switch", "ours") == (
        "`authors_words` (their words, lowercased): 0.610")
    table.loc[table["switch"] == "authors_words", "expected_tvd"] = 0.6034 + MOVES / 2
    table.loc[table["switch"] == "raw_corpus_word", "expected_tvd"] = 0.6034
    assert most_moved(table, "expected_tvd", "ours + switch", "ours") == f"none by more than {MOVES}"


def test_the_published_rows_cause_is_the_authors_protocol_on_their_samples(tmp_path):
    """The cause cites the system's ``authors.parquet``: under the authors' protocol its four values
    are the paper's digits, so ours differs by the protocol, each definition named; nothing is
    unexplained. A value the authors' protocol does not bring to the paper's digits is counted and
    what remains of it unexplained; without the table, the entry is unexplained."""
    from varprobe.results_page.disagreements import UNEXPLAINED, cause

    page, entries, measured, config = _render_run(tmp_path)
    entry = _published_entry(page)
    assert ("`bloom-published` (Bloom, 656 contexts): ECE corpus word 0.071, ECE human majority 0.086, ECE "
            "oracle-1 majority 0.073, E TVD(·, H) 0.613, the paper's digits in 4 of 4") in entry
    assert "what moves ours off them is the protocol" in entry and "a confidence of 1 lies in no bin" in entry
    assert UNEXPLAINED not in entry
    assert re.search(r"\| bloom-published / given \| Bloom\s+\| ECE corpus word\s+\| 0\.120\s+\| 0\.071\s+\| "
                     r"0\.07", entry)
    tables.write(_bloom_authors(ece_corpus=0.2), measured["provo_published"]["bloom-published"], "provo_published")
    moved = str(cause("table1_published", entries, measured, config)["cause"])
    assert "ECE corpus word 0.200" in moved and "the paper's digits in 3 of 4" in moved
    assert f"What remains between the authors' protocol and the paper (`bloom-published`'s ECE corpus word) is " \
           f"{UNEXPLAINED}" in moved
    del measured["provo_published"]
    assert cause("table1_published", entries, measured, config)["cause"] == UNEXPLAINED


def test_table_one_shows_the_papers_own_systems_under_both_protocols(page, tmp_path):
    """Table 1's section: per published system and value ours, the authors' protocol and the paper,
    with the contexts each averages, after the human and oracle values; a run without the paper's
    systems has neither the table nor the sentence on their rows."""
    part = page[page.index("### Table 1: expected TVD and ECE"):page.index("## Why can't models")]
    block = part[part.index("### The paper's own systems under our protocol and the authors'"):]
    assert part.index("### Table 1's human and oracle values") < part.index("### The paper's own systems")
    for label, ours, authors, printed_value in (("ECE corpus word", "0.120", "0.071", "0.07"),
                                                ("ECE human majority", "0.150", "0.086", "0.09"),
                                                ("ECE oracle-1 majority", "0.110", "0.073", "0.07"),
                                                ("E TVD(·, H)", "0.655", "0.613", "0.61")):
        assert re.search(rf"\| bloom-published / given \| Bloom\s+\| {re.escape(label)}\s+\| {ours}\s+\| "
                         rf"{authors}\s+\| {printed_value}\s+\| 5 / 656\s+\|", block), label
    assert re.search(r"\| ECE corpus word\s+\|.*\| `raw_corpus_word` \(the corpus word as printed\): 0\.073\s+\| "
                     r"`raw_corpus_word` \(the corpus word as printed\): 0\.045\s+\|", block)
    assert re.search(r"\| ECE human majority\s+\|.*\| `authors_words` \(their words, lowercased\): 0\.089\s+\| "
                     r"`authors_words` \(their words, lowercased\): 0\.077\s+\|", block)
    assert "the rows `MODEL / given` of `bloom-published` are the samples its authors published" in part
    results, entries, config = _run(tmp_path, published=False)
    alone = render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                   benchmarks=str(results / "benchmarks"), measured=_measured(results, published=False),
                   results=str(results))
    assert "The paper's own systems" not in alone and "`MODEL / given`" not in alone


# ---- issue 70, round four: no string from outside the project reaches a page as markup ----------

HOSTILE = [
    "<img src=x onerror=alert(1)>", "</script><script>alert(1)</script>", '"><svg onload=alert(1)>',
    "[x](javascript:alert(1))", "![x](javascript:alert(1))", '<a href="javascript:alert(1)">x</a>',
    "a | b `c` **d** _e_ ~~f~~ $g$ &lt;h&gt; &#60;i", "``code | pipe``", "<!-- a comment -->",
    "<https://example.com>", "x[^1] [ref]: https://example.com", "back\\slash\\", "\\<img src=x onerror=alert(1)>",
    "two\n\n<script>alert(1)</script>\nlines",
]
"""Strings a data file, a config value or a model's output may hold: HTML, Markdown links and
images, inline code, emphasis, MyST's math, entity references, a table's pipe, a blank line."""
LINE_STARTS = ["# heading", "> quote", "- item", "+ item", "+++", "1. item", "3) item", ":::{note}",
               "% comment", "(target)=", "[ref]: https://example.com"]
"""Strings that start a block where they start a line (a heading, a list, a MyST directive,
comment or target, a reference definition)."""
class _Elements(HTMLParser):
    """Every start tag of an HTML text with its attributes, and the text of each paragraph."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.paragraphs: list[str] = []
        self._in_paragraph = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "p":
            self.paragraphs.append("")
            self._in_paragraph = True

    def handle_endtag(self, tag):
        self._in_paragraph = self._in_paragraph and tag != "p"

    def handle_data(self, data):
        if self._in_paragraph:
            self.paragraphs[-1] += data


def _html(page: str) -> _Elements:
    """``page`` rendered as the documentation's build renders it (MyST with ``docs/conf.py``'s
    extensions, docutils' HTML writer), read back."""
    import runpy

    from docutils.core import publish_string
    from myst_parser.parsers.docutils_ import Parser

    extensions = runpy.run_path(str(Path(__file__).parents[1] / "docs/conf.py"))["myst_enable_extensions"]
    html = publish_string(page, parser=Parser(), writer="html5", settings_overrides={
        "myst_enable_extensions": extensions, "report_level": 5, "output_encoding": "unicode"})
    found = _Elements()
    found.feed(html.split("<body>", 1)[1])
    return found


@pytest.mark.parametrize("value", HOSTILE + LINE_STARTS)
def test_a_string_from_outside_reaches_a_table_cell_and_a_line_of_the_page_as_text(value):
    """A table's cell (``markdown``) and a template value (``finalize``: in a list item, at the
    start of a line) render as the elements a plain word does, and read as the string itself."""
    from varprobe.results_page.markup import finalize
    from varprobe.results_page.tables import markdown

    def page(text):
        return f"{markdown(pd.DataFrame({text: [text], 'n': [1]}))}\n\n- {finalize(text)}\n\n{finalize(text)}, more\n"

    plain, found = _html(page("plain")), _html(page(value))
    assert found.tags == plain.tags
    shown = " ".join(value.split())
    assert found.paragraphs == [shown, "n", shown, "1", shown, f"{shown}, more"]


def test_inline_code_of_a_string_from_outside_holds_it_whole():
    """``code`` fences a string by more backticks than it holds: the code element holds it all."""
    from varprobe.results_page.markup import code

    plain = _html(f"input {code('plain')} here\n")
    for value in ("a`b", "``x``", "`", "<img src=x onerror=alert(1)>", "a\n\nb"):
        found = _html(f"input {code(value)} here\n")
        assert found.tags == plain.tags and found.paragraphs == [f"input {' '.join(value.split())} here"]


def _hostile_run(tmp_path):
    """``_run``'s tables with hostile strings in every one a user's data or config reaches the
    page through: the production task's ids, sources, references and outputs (the example and
    the most miscalibrated inputs), a config file's text and name, a figure's file name and a
    benchmark folder's name; and the page of it."""
    results, entries, config = _run(tmp_path)
    wmt = results / "production/wmt14"
    evil = iter(HOSTILE * 3)
    ids = [next(evil), next(evil)]
    pd.DataFrame({"dataset": "wmt14", "split": "test", "input_id": ids, "source": [next(evil), next(evil)],
                  "references": [[next(evil), next(evil)], [next(evil)]]}).to_parquet(wmt / "instances.parquet")
    pd.DataFrame({"input_id": [ids[0], ids[0], ids[1]], "sample_index": [0, 1, 0],
                  "text": [next(evil), next(evil), next(evil)]}).to_parquet(wmt / "m/ancestral/samples.parquet")
    tables.write(pd.DataFrame({
        "dataset": "wmt14", "model": "m", "decoding": "ancestral", "statistic": "w1_C_H", "input_id": [ids[0]],
        "excess": [0.4], "values": ['{"lexical-1": 0.7}'], "source": [next(evil)], "references": [[next(evil)]],
        "samples": [[next(evil)]]}), wmt / "m/ancestral/miscalibrated.parquet", "production_miscalibrated",
        {"thresholds": {"lexical-1": 0.3}})
    named = tmp_path / "<svg onload=alert(1)>.yaml"
    named.write_text(config.read_text() + "# ```\n# </details><script>alert(1)</script>\n")
    figure = results / "provo/figures/<img src=x onerror=alert(1)>.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"png")
    figures = copy_figures([str(figure)], str(results), results / "docs/figures")
    bench = results / "benchmarks/<img src=x onerror=alert(1)>/1.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "12.0\t0:00:12\t812.5\t1\t1\t1\t0\t0\t90\t11.0\n")
    return render(config=_validated(named), configfiles=[str(named)], commit="abc", entries=entries,
                  figures=figures, benchmarks=str(results / "benchmarks"), measured=_measured(results),
                  results=str(results))


def test_hostile_data_and_config_reach_the_rendered_page_as_text_with_no_live_element(tmp_path):
    """On main the production example and the most-miscalibrated table copied ids, sources,
    references and outputs raw into the page: rendered (Sphinx + MyST), ``<img src=x
    onerror=...>`` ran. Every element of the rendered page is one the page writes itself: no
    script, svg or math; an image is the figure's own, an element with an ``on*`` attribute or a
    ``javascript:`` link is none."""
    found = _html(_hostile_run(tmp_path))
    tags = {tag for tag, _ in found.tags}
    assert not tags & {"script", "svg", "math", "iframe", "object", "embed", "style"}
    assert not [(t, a) for t, a in found.tags if any(k.startswith("on") for k in a)]
    assert not [a for _, a in found.tags if any("javascript:" in (v or "") for v in a.values())]
    images = [a["src"] for t, a in found.tags if t == "img"]
    assert images == ["figures/provo__figures__%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.png"]
    text = " ".join(found.paragraphs)
    shown = (f"wmt14, input {HOSTILE[0]}: source \"{HOSTILE[2]}\"",  # the example
             HOSTILE[4], HOSTILE[5], HOSTILE[7], HOSTILE[8], HOSTILE[12])  # its rows; a most miscalibrated output
    assert [value for value in shown if value not in text] == []


def test_a_config_file_is_shown_whole_in_its_code_block_whatever_it_holds(tmp_path):
    """A config line of backticks closed the YAML block on main, and what followed was Markdown
    and HTML: the block's fence is longer than any run of backticks in the file."""
    page = _hostile_run(tmp_path)
    block = page[page.index("&lt;svg onload=alert(1)&gt;.yaml</code></summary>"):]
    assert block.split("\n")[2] == "````yaml" and "# </details><script>alert(1)</script>\n````\n</details>" in block


def test_the_miscalibrated_inputs_name_the_thresholds_they_were_selected_with(tmp_path):
    """On main ``thresholds: {lexical-1: -5}`` was headed "above the paper's thresholds" with the
    paper's 0.3 printed below it. The heading and the table say whose thresholds were used."""
    from varprobe.results_page.findings import miscalibrated_block

    results, _, _ = _run(tmp_path)
    measured = _measured(results)
    path = measured["production_miscalibrated"][0]
    frame = tables.read(path, "production_miscalibrated")
    tables.write(frame, path, "production_miscalibrated", {"thresholds": {"lexical-1": 0.5, "semantic": 0.2}})
    block = miscalibrated_block(measured)
    assert block["title"] == "The most miscalibrated inputs (above the run's thresholds, not the paper's)"
    assert re.search(r"\| wmt14\s+\| lexical-1\s+\| > 0\.5\s+\| > 0\.3\s+\| the run's own\s+\|", block["note"])
    assert re.search(r"\| wmt14\s+\| semantic\s+\| > 0\.2\s+\| > 0\.2\s+\| the paper's\s+\|", block["note"])
    frame.to_parquet(path)  # no thresholds in its metadata: which were used is unknown
    with pytest.raises(ValueError, match=r"miscalibrated\.parquet: production_miscalibrated table without its "
                                         r"thresholds"):
        miscalibrated_block(measured)


def test_the_ece_glossary_entry_states_the_runs_bins(tmp_path):
    """On main the glossary said 10 bins whatever ``provo.ece_bins`` was."""
    results, entries, config = _run(tmp_path)
    config.write_text(config.read_text().replace("ece_bins: 10", "ece_bins: 7"))
    page = render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_measured(results), results=str(results))
    assert "- **ECE**: expected calibration error over 7 equal-width bins" in page
    assert "10 equal-width bins" not in page


@pytest.mark.parametrize(("rsd_bins", "own"), [([5, 10, 20, 50, 100, 200, 500], False), ([5, 10, 20], True)])
def test_the_rsd_caption_states_the_runs_bin_counts_and_whether_they_are_liu_et_als(tmp_path, rsd_bins, own):
    """On main the caption said "the configured bin counts" and printed Liu et al.'s beside them
    whatever ``analyses.token_calibration.rsd_bins`` held."""
    results, entries, config = _run(tmp_path)
    config.write_text(config.read_text().replace("analyses: {oracle_replacement: {}}",
                                                 f"analyses: {{oracle_replacement: {{}}, token_calibration: "
                                                 f"{{rsd_bins: {rsd_bins}}}}}"))
    page = render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_measured(results), results=str(results))
    caption = " ".join(page[page.index("RSD over M is"):].split("\n\n")[0].split())
    assert caption.startswith(f"RSD over M is the relative standard deviation of the metric over the run's bin "
                              f"counts (`rsd_bins`: {', '.join(map(str, rsd_bins))}; Liu et al.: 5, 10, 20, 50, "
                              f"100, 200, 500)")
    assert ("not Liu et al.'s, so their RSDs beside ours are over other bin counts" in caption) is own


def test_the_page_and_its_appendix_split_at_the_appendix_line(page):
    from varprobe.results_page.page import APPENDIX, split

    main, appendix = split(page)
    assert "## Configuration" not in main and "## Time and memory per stage" not in main
    assert main.rstrip().endswith("[appendix](results-appendix.md).")
    assert appendix.startswith("# varprobe results: appendix\n\n## The tables too long for the page")
    assert appendix.index("## The tables too long") < appendix.index("## Configuration")
    assert "## Time and memory per stage" in appendix and APPENDIX not in main + appendix
    with pytest.raises(ValueError, match="must hold the line"):
        split(main)


MOVED = {  # the appendix's heading of each table the page moved there, and a line of the table
    "Table 1's human and oracle values with each of the authors' definitions switched": "| authors - switch |",
    "Table 1: Oracle2, E TVD(O2, O1): the oracle control's E TVD in each resplit": "| resplit ",
    "Table 4: the oracles' token-level ECE: the authors' definitions switched one at a time": "| ours + switch ",
    "Production: the level of W1(C, H): ours, where it differs from the paper's": "| wmt14, m / ancestral, lexical-1",
    "Failure rate: the failed draws of each system by reason, beside the paper's rates": "| m / ancestral  | all ",
}


def test_the_detail_tables_are_in_the_appendix_and_the_page_links_to_each_where_it_was(page):
    """Table 1's and Table 4's switch tables, the resplits' table, the failure table and the list of
    W1 values above the paper's bound stand in the appendix, each under its heading and none on the
    page, which links to each heading's anchor (as MyST and GitHub make it) from where it was; the
    W1 list's place holds a line that sums it up."""
    from myst_parser.slugs import github_slugify

    from varprobe.results_page.page import split

    main, appendix = split(page)
    headings = {github_slugify(line[4:]) for line in appendix.splitlines() if line.startswith("### ")}
    for heading, line in MOVED.items():
        assert f"\n### {heading}\n" in appendix and line in appendix.split(f"### {heading}\n")[1].split("###")[0]
        assert f"### {heading}" not in main and line not in main
        assert f"](results-appendix.md#{github_slugify(heading)})" in main
    assert set(re.findall(r"\]\(results-appendix\.md#([^)]+)\)", main)) == {
        github_slugify(h) for h in MOVED} | {"production-variability-every-probe"}
    assert {github_slugify(h) for h in MOVED} <= headings
    w1 = main[main.index("### Production: the level of W1(C, H)"):]
    assert w1.split("\n- cause:")[0].endswith(
        "- ours: 2 values, 0.500 (paper: < 0.1); each with its interval, task, system and probe in the [appendix]"
        f"(results-appendix.md#{github_slugify(list(MOVED)[3])})")
    provo = main[main.index("### Table 1's human and oracle values: ours"):main.index("## Why can't models")]
    assert f"each of the authors' definitions switched: in the [appendix](results-appendix.md#" in provo


def test_the_models_rows_cause_measures_the_draws_where_the_run_has_both_counts(tmp_path):
    """Table 1's model rows against GPT-2's: where the run samples a model at its 40 draws and at
    the paper's 1,000, the cause gives both E TVDs (the draws alone); without, it says it cannot;
    Table 4's says both values are exact softmaxes, Table 2's names both supports."""
    from varprobe.results_page.disagreements import causes

    CAUSES = causes()

    summary = pd.DataFrame({"model": ["m", "m", "m"], "decoding": ["ancestral", "ancestral-1000", "temperature-0.5"],
                            "expected_tvd": [0.70, 0.62, 0.66]})
    summary.to_parquet(tmp_path / "summary.parquet")
    entries = [{"name": "provo_summary", "table": str(tmp_path / "summary.parquet")}]
    decodings = [{"name": "ancestral"}, {"name": "ancestral-1000", "n_samples": 1000},
                 {"name": "temperature-0.5", "temperature": 0.5}]
    config = {"models": [{"name": "m"}], "provo": {"n_samples": 40, "decodings": decodings},
              "analyses": {"biased_estimator": {"samples_decoding": "ancestral", "nucleus": [0.7, 0.8, 0.9],
                                                "nucleus_samples": 20}}}
    cause = CAUSES["table1_models"](entries, {}, config)
    assert "m 0.700 at 40 draws per context and 0.620 at 1,000 (lowers it by 0.080)" in cause
    assert "GPT2 T=0.5 column was drawn 40 times" in cause and cause.endswith("against the paper's GPT-2.")
    alone = CAUSES["table1_models"](entries, {}, {**config, "provo": {"n_samples": 40, "decodings": decodings[::2]}})
    assert "does not measure the draws alone" in alone
    assert "softmax" in CAUSES["table4_model"](entries, {}, config)
    support = CAUSES["table2_biased"](entries, {}, config)
    assert "its 40 ancestral draws per context, the greedy word, 3 x 20 nucleus draws" in support
    assert "GPT-2's 1,000 samples, the greedy word, 3 x 100 nucleus draws" in support


def test_the_thresholds_table_sets_each_threshold_beside_the_papers_for_its_own_task():
    """The paper states its thresholds per task (Sec. 7, fns. 12-15): dialogue's unigram threshold
    is 0.2, translation's 0.3, and simplification states none for unigrams."""
    from varprobe.results_page.findings import threshold_table

    table = threshold_table({"wmt14": {"lexical-1": 0.3}, "dailydialog": {"lexical-1": 0.2},
                             "asset": {"lexical-1": 0.3, "syntactic-2": 0.2}}).set_index(["dataset", "probe"])
    assert table.loc[("dailydialog", "lexical-1"), "the paper's"] == "> 0.2"
    assert table.loc[("dailydialog", "lexical-1"), "whose"] == "the paper's"
    assert table.loc[("wmt14", "lexical-1"), "the paper's"] == "> 0.3"
    assert table.loc[("asset", "lexical-1"), "the paper's"] == "–"
    assert table.loc[("asset", "lexical-1"), "whose"] == "the run's own"
    assert table.loc[("asset", "syntactic-2"), "whose"] == "the paper's"
