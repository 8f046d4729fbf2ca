"""API models through the workflow, against the real llama.cpp server of ``llama_server``:
both Provo modes and one production dataset, the reply cache across reruns, tuning that reruns
nothing, the key kept out of every file, and a decoding the endpoint cannot apply. (A wrong
key and the other request errors: tests/test_api_server.py and tests/test_api.py.)"""

from __future__ import annotations

import os

import pytest
import yaml
from helpers import output, scheduled, snakemake, write_config

from varprobe import tables

pytestmark = pytest.mark.slow  # Snakemake runs against a real llama.cpp server

KEY_ENV = "VARPROBE_TEST_API_KEY"
# llama.cpp truncates by default (top_k 40, min_p 0.05, repeat_penalty 1.1): listing top_k and
# neutralising the rest makes the endpoint sample ancestrally.
LLAMA_CPP = {"parameters": ["temperature", "top_p", "top_k"],
             "extra_body": {"min_p": 0.0, "repeat_penalty": 1.0}}


def api_model(name: str, server: dict, mode: str, **provo) -> dict:
    return {"name": name, "api": {"base_url": server["base_url"], "model": server["model"],
                                  "api_key_env": KEY_ENV, "provo": {"mode": mode, **provo},
                                  **LLAMA_CPP}}


def with_production(workdir) -> None:
    """Add a production section of ASSET's first two inputs to the config in ``workdir``."""
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["production"] = {
        "datasets": [{"name": "asset", "prompt": "Simplify this sentence: {source}"}],
        "max_inputs": 2, "n_samples": 2, "max_new_tokens": 24, "bootstrap_resamples": 50,
        "decodings": [{"name": "ancestral"}],
        "probes": {"spacy_pipelines": {"en": None}, "sentence_encoders": {"en": None},
                   "max_response_tokens": None},
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def files_containing(root, secret: str) -> list:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.fixture(scope="module")
def api_run(tmp_path_factory, data_mirror, llama_server):
    """A Provo passage through SmolLM2 behind the server, in single and in list mode, plus
    ASSET's first inputs."""
    workdir = tmp_path_factory.mktemp("api")
    # Six tokens complete nearly every first word (a reply cut mid-word fails as token_budget).
    models = [api_model("smol-single", llama_server, "single", max_tokens=6),
              {**api_model("smol-list", llama_server, "list"), "decodings": ["ancestral"]}]
    # Passage 36, one of the two shortest (38 contexts): the server answers one request at a time.
    write_config(workdir, data_mirror, models, texts=[36], n_samples=2, figure_contexts=["36:5"])
    with_production(workdir)
    os.environ[KEY_ENV] = llama_server["key"]
    run = snakemake(workdir)
    assert run.returncode == 0, output(run)
    return workdir


def test_an_api_model_runs_both_provo_modes_and_a_production_dataset(api_run):
    results = api_run / "results"
    contexts = tables.read(results / "provo/contexts.parquet", "provo_contexts")
    summary = tables.read(results / "provo/summary.parquet", "provo_system").set_index(["model", "decoding"])
    oracle = summary.loc[("oracle", "control"), "expected_tvd"]
    for model in ("smol-single", "smol-list"):
        row = summary.loc[(model, "ancestral")]
        assert row["n_contexts"] - row["n_contexts_not_sampled"] - row["n_contexts_all_failed"] > len(contexts) / 2
        assert oracle < row["expected_tvd"] <= 1
    replies = tables.read(results / "provo/api_replies.parquet", "provo_api_summary").set_index("model")
    assert replies.loc["smol-single", "requested"] == replies.loc["smol-single", "replies"] == 2 * len(contexts)
    listed = replies.loc["smol-list"]
    assert listed["replies"] == len(contexts)
    assert listed["kept"] + listed["shortfall"] == listed["requested"] == 2 * len(contexts)
    assert listed["items"] - listed["invalid"] == listed["kept"] + listed["extra"]
    assert "Replies of the API models" in (results / "report/provo_api_replies.html").read_text()
    samples = tables.read(results / "provo/smol-list/ancestral/samples.parquet", "provo_samples")
    assert len(samples) == listed["kept"] and samples["word"].str.len().gt(0).all()
    productions = tables.read(results / "production/asset/smol-single/ancestral/samples.parquet",
                              "production_samples")
    assert len(productions) == 2 * 2 and productions["text"].str.len().gt(0).all()
    production = tables.read(results / "production/summary.parquet", "production_summary")
    assert set(production["model"]) == {"smol-single", "smol-list"}


def test_tuning_reruns_only_the_page_and_a_rerun_is_answered_from_the_cache(api_run):
    """An API model's tuning (concurrency, retries, timeout, backoff) changes no table: only the
    page, which shows the config it was rendered with, is rendered again."""
    config = yaml.safe_load((api_run / "config.yaml").read_text())
    for model in config["models"]:
        model["api"].update(concurrency=1, max_retries=2, timeout=30, backoff=0.5)
    (api_run / "config.yaml").write_text(yaml.safe_dump(config))
    assert scheduled(api_run) == {"results_page": 1, "run_record": 1, "all": 1}
    cached = sorted((api_run / "results/cache/api").rglob("*.json"))
    samples = [f"results/{study}/{model}/ancestral/samples.parquet"
               for study in ("provo", "production/asset") for model in ("smol-single", "smol-list")]
    schema = {"provo": "provo_samples", "production": "production_samples"}
    before = [tables.read(api_run / p, schema[p.split("/")[1]]) for p in samples]
    rerun = snakemake(api_run, "--forcerun", "provo_api_sample", "production_sample", "--", *samples)
    assert rerun.returncode == 0, output(rerun)
    logs = [p.read_text() for rule in ("provo_api_sample", "production_sample")
            for p in (api_run / "results/logs" / rule).rglob("*.log")]
    assert len(logs) == 4 and all("0 requests sent" in log for log in logs)
    assert sorted((api_run / "results/cache/api").rglob("*.json")) == cached
    after = [tables.read(api_run / p, schema[p.split("/")[1]]) for p in samples]
    for old, new in zip(before, after, strict=True):
        assert old.equals(new)


def test_the_key_is_in_no_file(api_run, llama_server):
    assert files_containing(api_run, llama_server["key"]) == []


def test_a_decoding_the_endpoint_cannot_apply_is_refused_before_any_request(tmp_path, data_mirror):
    server = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    model = {"name": "chat", "api": {"base_url": server["base_url"], "model": "m"}}
    write_config(tmp_path, data_mirror, [model],
                 decodings=[{"name": "ancestral"}, {"name": "top-k-5", "top_k": 5}])
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "model 'chat'" in output(run) and "top_k" in output(run) and "top-k-5" in output(run)
    assert "`decodings:`" in output(run)


def test_a_credential_in_a_url_stops_the_run_before_anything_is_written(tmp_path, data_mirror):
    """Credentials in base_url (or any URL of the config) would be copied into the results page,
    the samples' metadata, the cache and the logs: the run stops at parse time, naming the keys
    but not the secret, and the config stays the only file holding it."""
    secret = "s3cret-in-the-url"
    model = {"name": "chat", "api": {"base_url": f"http://user:{secret}@127.0.0.1:9/v1", "model": "m"}}
    write_config(tmp_path, data_mirror, [model])
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    config["api_cache"] = f"https://cache.example/replies?token={secret}"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path)
    assert run.returncode != 0
    assert "models[0].api.base_url: model 'chat': the URL holds credentials before its host" in output(run)
    assert "api.api_key_env" in output(run)
    assert "api_cache: the URL holds a credential in its query (token=)" in output(run)
    assert secret not in output(run)
    assert files_containing(tmp_path, secret) == [tmp_path / "config.yaml"]
