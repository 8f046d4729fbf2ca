"""Every config value reaches the rules' commands as one argument, never as shell code (issue 60):
a config whose paths and strings hold command substitutions, backticks, quotes and spaces is
dry-run, and every printed command is run by bash against a ``varprobe`` that only records its
arguments."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import PROBES, output, snakemake
from test_own_data_workflow import CLOZE_NL, TASK

pytestmark = pytest.mark.slow  # Snakemake dry runs

MARK = "PWNED"
HOSTILE = f"odd $(touch {MARK}) `touch {MARK}` 'single' \"double\"  two  spaces"
"""What each planted value holds: were it shell code, bash would create the file MARK."""

RECORDER = f"""#!{sys.executable} -I
import json, os, sys
with open(os.environ["VARPROBE_RECORD"], "a") as record:
    record.write(json.dumps(sys.argv[1:]) + "\\n")
"""
"""A ``varprobe`` that writes its arguments, one JSON list per call, and does nothing else."""

JOB = re.compile(r"^(?:local)?rule (\S+):\n(.*?)^Shell command: (?:None$|(.*?)\n\n)", re.M | re.S)
"""A job as ``snakemake -n -p`` prints it: its rule, its fields, its command (None: it has none)."""


def planted(name: str) -> str:
    """A file or folder name holding the hostile string."""
    return f"{name} {HOSTILE}"


def study_config(workdir: Path, data_mirror: Path, model_dir: Path) -> dict:
    """Every study, model kind and analysis, with the hostile string in each value that can
    hold it: the data mirror, the API cache, a local model's folder, a samples CSV, an own
    task's file, prompts, an API model's name and prompt, NLTK data folders."""
    (workdir / planted("mirror")).symlink_to(data_mirror)
    (workdir / planted("model")).symlink_to(model_dir)
    (workdir / f"{planted('samples')}.csv").write_text("text_id,word_number,sample,count\n1,2,are,1\n")
    (workdir / f"{planted('task')}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in TASK))
    prompt = f"{HOSTILE} {{source}}\n"
    return {
        "seed": 0, "data_mirror": planted("mirror"), "api_cache": planted("cache"),
        "models": [
            {"name": "tiny", "pretrained": planted("model"), "parameters": 1000},
            {"name": "published", "samples": f"{planted('samples')}.csv"},
            {"name": "bloom-published", "published": {"system": "bloom"}},
            {"name": "api", "decodings": ["ancestral"],
             "api": {"base_url": "http://127.0.0.1:9/v1", "model": HOSTILE,
                     "provo": {"prompt": f"{HOSTILE} {{context}}"}}},
            {"name": "ft", "decodings": ["ancestral"], "parameters": 1000,
             "finetune": {"base": "tiny", "dataset": "provo", "folds": 2,
                          "train_passages": {"first": 1, "last": 2},
                          "validation_passages": {"first": 41, "last": 41}}},
            {"name": "ft-asset", "finetune": {"base": "tiny", "dataset": "asset", "split": "test",
                                              "validation_split": "valid"}},
        ],
        "provo": {
            "texts": [1], "n_samples": 4, "figure_contexts": ["1:5"],
            "decodings": [{"name": "ancestral"}, {"name": "exact", "method": "enumerate",
                                                  "target_mass": 0.5, "max_forward_tokens": 10}],
        },
        "production": {
            "datasets": [{"name": "asset", "prompt": prompt},
                         {"name": "mine", "file": f"{planted('task')}.jsonl", "language": "en",
                          "prompt": prompt, "few_shot": 1}],
            "max_inputs": 2, "n_samples": 2, "max_new_tokens": 4, "probes": PROBES,
            "decodings": [{"name": "ancestral"}],
            "figures": {"probes": ["lexical-1"], "decoding": "ancestral"},
        },
        "analyses": {
            "token_calibration": {}, "syntactic_tvd": {"nltk_data": [planted("nltk")]},
            "semantic_tvd": {}, "regression": {"reference_tag": "."}, "biased_estimator": {},
            "token_level": {}, "sample_size": {}, "oracle_replacement": {},
        },
    }


def corpus_config(workdir: Path, model_dir: Path) -> dict:
    """The next-word study on an own cloze corpus whose file name holds the hostile string."""
    corpus = workdir / f"{planted('cloze')}.tsv"
    corpus.write_text("passage\tposition\ttext\tresponse\tcount\n"
                      + "".join("\t".join(map(str, row)) + "\n" for row in CLOZE_NL), encoding="utf-8")
    (workdir / planted("model")).symlink_to(model_dir)
    return {
        "models": [{"name": "tiny", "pretrained": planted("model")}],
        "provo": {
            "corpus": {"name": "cloze-nl", "file": corpus.name, "language": "nl",
                       "columns": {"passage": "passage", "position": "position", "text": "text",
                                   "response": "response", "count": "count"}},
            "texts": "all", "n_samples": 4, "decodings": [{"name": "ancestral"}],
        },
    }


def printed_jobs(text: str) -> list[tuple[str, str, list[str]]]:
    """``(rule, shell command, log files)`` of each job with a command that a ``-n -p`` run
    printed."""
    jobs = []
    for rule, fields, command in JOB.findall(text):
        if not command:
            continue
        logs = re.search(r"^    log: (.*)$", fields, re.M)
        jobs.append((rule, command, logs.group(1).split(", ") if logs else []))
    return jobs


def run_recorded(workdir: Path, jobs: list[tuple[str, str, list[str]]]) -> dict[str, list[list[str]]]:
    """Run each job's command with bash in ``workdir``, ``varprobe`` being ``RECORDER``; the
    argument lists it recorded, by rule."""
    bin_dir = workdir / "recorder"
    bin_dir.mkdir()
    (bin_dir / "varprobe").write_text(RECORDER)
    (bin_dir / "varprobe").chmod(0o755)
    recorded = {}
    for number, (rule, command, logs) in enumerate(jobs):
        for log in logs:
            (workdir / log).parent.mkdir(parents=True, exist_ok=True)
        record = workdir / "records" / f"{number}.jsonl"
        record.parent.mkdir(exist_ok=True)
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VARPROBE_RECORD": str(record)}
        run = subprocess.run(["bash", "-c", f"set -euo pipefail; {command}"], cwd=workdir, env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0, (rule, command, run.stderr)
        recorded.setdefault(rule, []).extend(json.loads(line) for line in record.read_text().splitlines())
    return recorded


@pytest.fixture(scope="module")
def quoting_runs(tmp_path_factory, data_mirror, tiny_model_dir):
    """The dry runs of both configs, every printed command run against the recorder: the rules
    the workflow defines, the rules whose commands ran, what the recorder got, and the work
    folders."""
    studies = tmp_path_factory.mktemp("quoting-studies")
    (studies / "config.yaml").write_text(yaml.safe_dump(study_config(studies, data_mirror, tiny_model_dir)))
    overlay = studies / f"{planted('overlay')}.yaml"
    overlay.write_text("seed: 0\n")
    corpus = tmp_path_factory.mktemp("quoting-corpus")
    (corpus / "config.yaml").write_text(yaml.safe_dump(corpus_config(corpus, tiny_model_dir)))

    listed = snakemake(studies, "--list-rules", "--configfile", "config.yaml", str(overlay))
    assert listed.returncode == 0, output(listed)
    recorded = {}
    for workdir, configs in ((studies, ["config.yaml", str(overlay)]), (corpus, ["config.yaml"])):
        run = snakemake(workdir, "-n", "-p", "--configfile", *configs)
        assert run.returncode == 0, output(run)
        for rule, calls in run_recorded(workdir, printed_jobs(run.stdout)).items():
            recorded.setdefault(rule, []).extend(calls)
    defined = {line.split()[0] for line in listed.stdout.splitlines() if line and not line[0].isspace()}
    return {"defined": defined, "recorded": recorded, "workdirs": (studies, corpus), "overlay": overlay}


def values_of(calls: list[list[str]], option: str) -> list[str]:
    """The argument after each ``option`` in ``calls``."""
    return [call[i + 1] for call in calls for i, arg in enumerate(call[:-1]) if arg == option]


def test_every_rule_with_a_command_is_run(quoting_runs):
    """The configs reach every rule the workflow defines, so a new rule is checked too; `all`
    alone has no command."""
    assert set(quoting_runs["recorded"]) == quoting_runs["defined"] - {"all"}
    assert all(quoting_runs["recorded"].values())


def test_no_planted_value_runs_as_a_command(quoting_runs):
    for workdir in quoting_runs["workdirs"]:
        assert not list(workdir.rglob(f"{MARK}*"))


def test_each_planted_value_reaches_the_cli_as_one_argument(quoting_runs):
    recorded = quoting_runs["recorded"]
    every_call = [call for calls in recorded.values() for call in calls]
    assert set(values_of(recorded["production_sample"] + recorded["provo_api_sample"], "--api-cache")) == {
        planted("cache")}
    assert sorted(values_of(recorded["provo_ingest"], "--samples-csv")) == [
        "results/provo/bloom-published/given/published.csv", f"{planted('samples')}.csv"]
    assert set(values_of(recorded["fetch_dataset"] + recorded["provo_data"] + recorded["provo_published"],
                         "--mirror")) == {planted("mirror")}
    assert set(values_of(recorded["syntactic_tvd"], "--nltk-data")) == {planted("nltk")}
    prompts = values_of(recorded["production_sample"] + recorded["finetune_production"], "--prompt")
    assert set(prompts) == {f"{HOSTILE} {{source}}\n"}
    models = [json.loads(m) for m in values_of(every_call, "--model") if m.startswith("{")]
    assert {m.get("pretrained") for m in models} >= {planted("model")}
    assert {m["api"]["model"] for m in models if "api" in m} == {HOSTILE}
    entries = [json.loads(e) for e in values_of(recorded["production_data"], "--entry")]
    assert [e["file"] for e in entries] == [f"{planted('task')}.jsonl"]
    corpora = [json.loads(c) for c in values_of(recorded["provo_data"], "--corpus")]
    assert [c["file"] for c in corpora] == [f"{planted('cloze')}.tsv"]
    page = recorded["results_page"][0]
    assert str(quoting_runs["overlay"]) in page[page.index("--configfiles") + 1:page.index("--workflow-dir")]


def test_every_recorded_command_is_one_the_cli_accepts(quoting_runs):
    """A value split into several arguments, or several options passed as one, fails here as it
    fails the job ("unrecognized arguments")."""
    from varprobe.cli import build_parser

    parser = build_parser()
    for rule, calls in quoting_runs["recorded"].items():
        for call in calls:
            try:
                parser.parse_args(call)
            except SystemExit:
                pytest.fail(f"rule {rule}: the CLI refuses varprobe {call}")
