"""Bring your own data end to end (issue 42): a Dutch cloze corpus and a multi-reference task,
each written by the test in the generic format and named by one config entry, run through the
workflow on the tiny random GPT-2, like Provo and the built-in tasks."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from test_production_workflow import PROBES
from helpers import TINY_EXACT, job_logs, output, scheduled, snakemake
from varprobe import tables

pytestmark = pytest.mark.slow  # a Snakemake run

CLOZE_NL = [  # passage, position, passage text, response, count
    ("fiets", 2, "De fiets stond tegen de muur.", "fiets", 6), ("fiets", 2, "De fiets stond tegen de muur.", "man", 4),
    ("fiets", 3, "De fiets stond tegen de muur.", "stond", 5), ("fiets", 3, "De fiets stond tegen de muur.", "is", 5),
    ("regen", 2, "Gisteren regende het hard.", "was", 7), ("regen", 2, "Gisteren regende het hard.", "regende", 3),
    ("regen", 3, "Gisteren regende het hard.", "het", 9), ("regen", 3, "Gisteren regende het hard.", "!", 1),
]
TASK = [
    {"id": "t1", "source": "The committee talked for hours.", "references": ["They talked long.", "A long talk."]},
    {"id": "t2", "source": "Rain will get heavier.", "references": ["More rain.", "Heavier rain soon.", "Rain."]},
    {"id": "t3", "source": "One reference only.", "references": ["Only one."]},
]


def write_own_data(workdir, data_mirror, tiny_model_dir):
    """The Dutch corpus, the task and a config naming both, in ``workdir``."""
    corpus = workdir / "cloze-nl.tsv"
    corpus.write_text("passage\tposition\ttext\tresponse\tcount\n"
                      + "".join("\t".join(map(str, row)) + "\n" for row in CLOZE_NL), encoding="utf-8")
    task = workdir / "task.jsonl"
    task.write_text("".join(json.dumps(row) + "\n" for row in TASK), encoding="utf-8")
    config = {
        "seed": 0, "data_mirror": str(data_mirror),
        "models": [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
        "provo": {
            "corpus": {"name": "cloze-nl", "file": "cloze-nl.tsv", "language": "nl",
                       "columns": {"passage": "passage", "position": "position", "text": "text",
                                   "response": "response", "count": "count"}},
            "texts": "all", "n_samples": 6, "max_tokens": 5, "resplits": 4, "bootstrap_resamples": 50,
            "decodings": [{"name": "ancestral"}], "figure_contexts": ["1:3"],
        },
        "analyses": {"syntactic_tvd": {}},
        "production": {
            "datasets": [{"name": "mine", "file": "task.jsonl", "language": "en", "min_references": 2,
                          "prompt": "Simplify: {source}\n"}],
            "n_samples": 3, "max_new_tokens": 8, "bootstrap_resamples": 50, "probes": PROBES,
            "decodings": [{"name": "top-k-30", "top_k": 30}],
            "figures": {"probes": ["lexical-1", "syntactic-2", "semantic"], "decoding": "top-k-30"},
        },
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.fixture(scope="module")
def own_data_run(tmp_path_factory, data_mirror, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("own-data")
    write_own_data(workdir, data_mirror, tiny_model_dir)
    run = snakemake(workdir)
    assert run.returncode == 0, output(run) + job_logs(workdir)
    return workdir, run


def test_the_corpus_runs_the_next_word_study(own_data_run):
    workdir, _ = own_data_run
    provo = workdir / "results" / "provo"
    contexts = tables.read(provo / "contexts.parquet", "provo_contexts")
    assert contexts[["text_id", "word_number", "context"]].values.tolist() == [
        [1, 2, "De"], [1, 3, "De fiets"], [2, 2, "Gisteren"], [2, 3, "Gisteren regende"]]
    recorded = tables.read_metadata(provo / "contexts.parquet")["data"]
    assert (recorded["corpus"], recorded["language"], recorded["rows"]) == ("cloze-nl", "nl", 8)
    assert recorded["passage_ids"] == {"1": "fiets", "2": "regen"}
    summary = tables.read(provo / "summary.parquet", "provo_system")
    assert sorted(summary["model"]) == ["human", "oracle", "tiny"]
    assert len(tables.read(provo / "tiny/ancestral/tvd.parquet", "provo_tvd")) == 4
    assert (provo / "tiny/ancestral/bars.png").stat().st_size > 10_000


def test_an_analysis_the_corpus_cannot_feed_is_not_run_and_says_why(own_data_run):
    workdir, run = own_data_run
    reason = ("analyses.syntactic_tvd is not run: its POS tagger (NLTK's averaged perceptron, universal "
              "tagset) tags English only, and corpus 'cloze-nl' is in 'nl'")
    assert reason in output(run)
    assert not (workdir / "results" / "analyses" / "syntactic_tvd").exists()
    page = (workdir / "results" / "docs" / "results.md").read_text()
    assert "## Analyses not run on this corpus" in page
    assert "- `analyses.syntactic_tvd`: its POS tagger (NLTK's averaged perceptron" in page


def test_the_task_runs_the_production_study_like_a_built_in_one(own_data_run):
    workdir, _ = own_data_run
    out = workdir / "results" / "production"
    instances = tables.read(out / "mine/instances.parquet", "production_instances")
    assert list(instances["input_id"]) == ["t1", "t2"]  # t3 has one reference: dropped
    recorded = tables.read_metadata(out / "mine/instances.parquet")["data"]
    assert (recorded["rows"], recorded["inputs"], recorded["dropped_inputs"]) == (3, 2, ["t3"])
    summary = tables.read(out / "summary.parquet", "production_summary")
    assert set(summary["dataset"]) == {"mine"} and set(summary["model"]) == {"tiny"}
    for name in ("human_variability", "mean_differences", "w1_densities", "mean_w1"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
    assert scheduled(workdir) == {}


def test_a_new_task_entry_schedules_its_jobs_only(own_data_run, tmp_path):
    workdir, _ = own_data_run
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    (workdir / "other.csv").write_text("id,source,reference\nx,Hello,Hi\nx,Hello,Hey\n")
    config["production"]["datasets"].append({"name": "other", "file": "other.csv", "language": "en",
                                             "fields": {"references": "reference"}, "prompt": "{source}"})
    original = (workdir / "config.yaml").read_text()
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    try:
        jobs = scheduled(workdir)
    finally:
        (workdir / "config.yaml").write_text(original)
    assert {k: jobs[k] for k in ("production_data", "production_sample", "production_distances")} == {
        "production_data": 1, "production_sample": 1, "production_distances": 1}
    assert "provo_sample" not in jobs


def test_a_data_file_edited_with_its_time_kept_is_read_again(tmp_path, data_mirror, tiny_model_dir):
    """Issue 60, item 11: on main, a corpus or task file edited with its time kept (``cp -p``,
    ``rsync -a``) left "Nothing to be done", although the tables record the file's SHA-256."""
    write_own_data(tmp_path, data_mirror, tiny_model_dir)
    targets = ("results/provo/contexts.parquet", "results/production/mine/instances.parquet")
    run = snakemake(tmp_path, *targets)
    assert run.returncode == 0, output(run) + job_logs(tmp_path)
    assert scheduled(tmp_path, *targets) == {}
    for name, old, new in (("cloze-nl.tsv", "\tman\t4", "\tman\t5"), ("task.jsonl", "More rain.", "Much rain.")):
        path = tmp_path / name
        times = path.stat()
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert scheduled(tmp_path, *targets) == {"provo_data": 1, "production_data": 1}


STANDALONE_EN = [(f"q{k}", sentence, word) for k, (sentence, words) in enumerate([
    ("I like my coffee", ("black", "hot")), ("The dog chased the", ("cat", "ball")),
    ("She opened the", ("door", "box")), ("We went to the", ("park", "beach")),
    ("He drank a glass of", ("water", "milk")), ("They sat on the", ("bench", "grass")),
    ("It was a cold", ("night", "day")), ("Please close the", ("window", "door")),
], start=1) for word in words]


def test_a_regression_fit_with_too_few_contexts_is_not_scheduled_and_says_why(tmp_path, data_mirror, tiny_model_dir):
    """Issue 60, item 16: on main a context_id corpus failed its figure context after sampling,
    then its enumerated decoding's regression (``texts: [1]``, one context) 24 minutes in."""
    (tmp_path / "cloze-en.csv").write_text("item,sentence,answer\n" + "".join(
        f"{i},{s},{w}\n" for i, s, w in STANDALONE_EN), encoding="utf-8")
    config = {
        "seed": 0, "data_mirror": str(data_mirror), "models": [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
        "provo": {"corpus": {"name": "cloze-en", "file": "cloze-en.csv", "language": "en",
                             "columns": {"context_id": "item", "context": "sentence", "response": "answer"}},
                  "texts": "all", "n_samples": 4, "max_tokens": 5, "figure_contexts": ["q2"],
                  "decodings": [{"name": "ancestral"}, {**TINY_EXACT, "texts": [1]}]},
        "analyses": {"regression": {}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = scheduled(tmp_path)
    assert jobs["regression"] == 1 and jobs["provo_figure_bars"] == 2
    run = snakemake(tmp_path, "-n", "results/docs/results.md")
    assert run.returncode == 0, output(run)
    assert ("analyses.regression is not fitted for tiny / exact covers 1 context, and a fit needs 6 at least"
            in output(run))
    assert "results/analyses/regression/tiny/ancestral/coefficients.parquet" in output(run)
    assert "results/analyses/regression/tiny/exact/" not in output(run)
