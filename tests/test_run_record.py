"""The run record (varprobe.run_record) and runs side by side (varprobe.run_comparison): secrets
kept out, the headlines read from the summary tables, ``varprobe compare`` on two runs with a
known difference and ``varprobe collect``. The record the workflow writes on the tiny model:
tests/test_workflow.py (test_the_run_record_...)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from varprobe import run_comparison, run_record, tables
from varprobe.cli import main

KEY = "sk-varprobe-test-0123456789abcdef"
PASSWORD = "hunter2-not-a-real-one"


def api_config(monkeypatch) -> dict:
    """A config with an API model whose key is in the environment, and secrets written where the
    config checks would refuse them (a header, a URL with a password, a key's value)."""
    monkeypatch.setenv("VARPROBE_TEST_API_KEY", KEY)
    return {
        "seed": 3,
        "models": [{"name": "remote", "api": {
            "base_url": "http://127.0.0.1:9/v1", "model": "smollm2", "api_key_env": "VARPROBE_TEST_API_KEY",
            "extra_headers": {"Authorization": f"Bearer {KEY}"}, "api_key": KEY}},
            {"name": "mirrored", "samples": f"https://user:{PASSWORD}@example.org/samples.csv"}],
        "data_mirror": f"https://reader:{PASSWORD}@example.org/mirror",
        "provo": {"texts": [1], "n_samples": 4, "decodings": [{"name": "ancestral"}]},
        "analyses": {"oracle_replacement": {"seeds": 10}},
    }


def test_no_secret_reaches_the_record_and_the_key_s_variable_is_named(tmp_path, monkeypatch):
    config = api_config(monkeypatch)
    record = run_record.build(config=config, checkout=tmp_path, results=tmp_path / "results",
                              report_tables=[], measured={}, probes=[])
    run_record.write(record, tmp_path / "run.json")
    text = (tmp_path / "run.json").read_text()
    assert KEY not in text and PASSWORD not in text
    api = record["config"]["models"][0]["api"]
    assert api["api_key_env"] == "VARPROBE_TEST_API_KEY"
    assert api["api_key"] == api["extra_headers"]["Authorization"] == run_record.REDACTED
    assert record["config"]["data_mirror"] == run_record.REDACTED
    assert record["models"][0] == {"name": "remote", "kind": "api", "base_url": "http://127.0.0.1:9/v1",
                                   "model": "smollm2"}
    assert record["seeds"] == {"seed": 3, "analyses.oracle_replacement.seeds": 10}
    # outside a git checkout: no commit, no dirtiness
    assert (record["provenance"]["commit"], record["provenance"]["dirty"]) == (None, None)


def test_the_config_digest_is_the_redacted_config_s(monkeypatch):
    config = api_config(monkeypatch)
    other = json.loads(json.dumps(config))
    other["models"][0]["api"]["api_key"] = "sk-another"
    assert run_record.config_digest(config) == run_record.config_digest(other)
    other["seed"] = 4
    assert run_record.config_digest(config) != run_record.config_digest(other)


def test_a_checkout_s_commit_and_dirtiness(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f").write_text("a")
    git("add", "f")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert run_record.git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "f").write_text("b")
    assert run_record.git_state(tmp_path) == {"commit": head, "dirty": True}


def summary_table(tvd: float, half_width: float) -> pd.DataFrame:
    """A Provo summary: the human row, the oracle control at E TVD 0.4 and model m at ``tvd``."""
    rows = []
    for model, decoding, value, width in (("human", "mle", float("nan"), float("nan")),
                                          ("oracle", "control", 0.4, 0.02), ("m", "ancestral", tvd, half_width)):
        rows.append({"model": model, "decoding": decoding, "n_contexts": 50, "n_contexts_not_sampled": 0,
                     "n_contexts_all_failed": 0, "expected_tvd": value, "ci_low": value - width,
                     "ci_high": value + width, "expected_tvd_lower": float("nan"),
                     "expected_tvd_upper": float("nan"), "expected_tvd_oracle1": float("nan"),
                     "oracle_expected_tvd": 0.4, "ece_corpus": 0.1, "n_contexts_without_corpus_word": 0,
                     "ece_human_majority": 0.2, "ece_oracle_majority": 0.3, "failure_rate": 0.0,
                     "mean_entropy_model": 1.0, "mean_entropy_human": 1.0})
    return pd.DataFrame(rows)


def write_run(folder: Path, tvd: float, half_width: float = 0.01) -> Path:
    """A run folder with a Provo summary and its record, as the workflow's last job writes it."""
    summary = folder / "results/provo/summary.parquet"
    tables.write(summary_table(tvd, half_width), summary, "provo_system")
    record = run_record.build(config={"seed": 0, "models": []}, checkout=folder, results=folder / "results",
                              report_tables=[{"name": "provo_summary", "table": str(summary),
                                              "schema": "provo_system"}], measured={}, probes=[])
    run_record.write(record, folder / "results/run.json")
    return folder


def test_the_headlines_are_the_summary_s_numbers_with_the_oracle_as_ceiling(tmp_path):
    record = run_record.read(write_run(tmp_path / "a", 0.7))
    headlines = run_comparison.headline_frame(record).set_index(["model", "quantity"])
    assert headlines.loc[("m", "expected_tvd"), ["mean", "ci_low", "ci_high"]].tolist() == pytest.approx(
        [0.7, 0.69, 0.71])
    assert headlines.loc[("oracle", "expected_tvd"), "role"] == "ceiling"
    assert headlines.loc[("human", "ece_corpus"), "role"] == "reference"
    assert ("human", "expected_tvd") not in headlines.index  # the human row has no E TVD


def test_compare_names_the_known_difference_and_whether_the_intervals_overlap(tmp_path, capsys):
    a, b = write_run(tmp_path / "a", 0.7), write_run(tmp_path / "b", 0.6)
    found = run_comparison.differences(run_record.read(a), run_record.read(b)).set_index(["model", "quantity"])
    assert found.loc[("m", "expected_tvd"), "difference"] == pytest.approx(-0.1)
    assert found.loc[("m", "expected_tvd"), "overlap"] is False
    assert found.loc[("oracle", "expected_tvd"), "difference"] == 0 and found.loc[("oracle", "expected_tvd"), "overlap"]
    main(["compare", str(a), str(b / "results/run.json")])
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if "m / ancestral" in x and "expected_tvd" in x)
    assert "0.700 [0.690, 0.710]" in line and "0.600 [0.590, 0.610]" in line
    assert "-0.100" in line and line.endswith("apart")
    assert "1 with intervals apart" in printed
    c = write_run(tmp_path / "c", 0.69, half_width=0.05)
    wide = run_comparison.differences(run_record.read(a), run_record.read(c)).set_index(["model", "quantity"])
    assert wide.loc[("m", "expected_tvd"), "overlap"] is True


def test_collect_gathers_every_run_s_headlines_into_one_table(tmp_path, capsys):
    runs = [write_run(tmp_path / "runs" / name, tvd) for name, tvd in (("small", 0.8), ("large", 0.5))]
    out = tmp_path / "all.parquet"
    main(["collect", *map(str, runs), "--out", str(out)])
    table = tables.read(out, "run_headlines")
    each = len(run_record.read(runs[0])["headlines"])
    assert len(table) == 2 * each and set(table["run"]) == {"small", "large"}
    tvd = table[(table["quantity"] == "expected_tvd") & (table["model"] == "m")].set_index("run")["mean"]
    assert tvd.to_dict() == pytest.approx({"small": 0.8, "large": 0.5})
    assert set(table.loc[table["role"] == "ceiling", "model"]) == {"oracle"}
    printed = capsys.readouterr().out
    block = printed.split("provo / expected_tvd\n")[1].split("\n\n")[0].splitlines()
    means = [float(re.search(r"(\d\.\d{3}) \[", line).group(1)) for line in block]
    assert means == [0.4, 0.4, 0.5, 0.8]  # the smallest first: the ceilings, then large, then small
    assert "large: m / ancestral" in block[2] and block[0].endswith("(ceiling)")

def test_a_file_that_is_no_run_record_is_named(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="is not a run record of format varprobe-run/1"):
        run_record.read(tmp_path / "run.json")
    with pytest.raises(FileNotFoundError, match="no run record at"):
        run_record.read(tmp_path / "missing")


def test_production_headlines_keep_the_figures_probes_and_the_control_once_per_probe():
    rows = []
    for model in ("a", "b"):
        for probe, available in (("lexical-1", True), ("semantic", False), ("syntactic-2", True)):
            for statistic, mean in (("w1_M_H", 0.3 if model == "a" else 0.2), ("w1_C_H", 0.1), ("mean_M", 5.0)):
                rows.append({"dataset": "asset", "model": model, "decoding": "ancestral", "probe": probe,
                             "available": available, "statistic": statistic, "n_inputs": 4, "mean": mean,
                             "ci_low": mean - 0.05, "ci_high": mean + 0.05})
    summary = tables.conform(pd.DataFrame(rows), "production_summary")
    found = run_record.production_headlines(summary, ["lexical-1", "semantic"])
    assert [(h["model"], h["probe"], h["quantity"], h["role"]) for h in found] == [
        ("a", "lexical-1", "w1_M_H", "system"), ("human control", "lexical-1", "w1_C_H", "ceiling"),
        ("b", "lexical-1", "w1_M_H", "system")]
    assert [h["mean"] for h in found] == pytest.approx([0.3, 0.1, 0.2])


def test_a_fine_tuned_model_s_headline_is_its_difference_to_the_pretrained_model():
    comparison = pd.DataFrame([{"model": "ft", "base": "m", "decoding": "ancestral", "n_contexts": 9,
                                "expected_tvd_pretrained": 0.7, "expected_tvd_finetuned": 0.6,
                                "expected_tvd_oracle": 0.4, "mean_difference": -0.1, "difference_ci_low": -0.15,
                                "difference_ci_high": -0.05, "share_finetuned_closer": 0.6,
                                "share_finetuned_farther": 0.4}])
    (found,) = run_record.finetune_headlines(tables.conform(comparison, "finetune_comparison"))
    assert (found["quantity"], found["mean"], found["ci_low"], found["ci_high"]) == (
        "mean_difference", -0.1, -0.15, -0.05)
