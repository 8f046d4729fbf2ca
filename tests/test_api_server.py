"""API models against a real OpenAI-compatible server: llama-cpp-python serving SmolLM2-135M-Instruct
on loopback (fixture ``llama_server``), through the CLI subcommands the workflow calls."""

from __future__ import annotations

import json

import pytest

from varprobe import tables
from varprobe.api.cache import ReplyCache
from varprobe.api.client import ApiAuthError, ApiClient
from varprobe.api.endpoint import ApiEndpoint
from varprobe.cli import build_parser
from varprobe.data.instances import first_inputs
from varprobe.data.production import read_instances
from varprobe.data.provo import contexts_table
from varprobe.words import normalise_word

pytestmark = pytest.mark.slow  # a real llama.cpp server serving SmolLM2

KEY_ENV = "VARPROBE_TEST_API_KEY"
LLAMA_CPP_NEUTRAL = {"min_p": 0.0, "repeat_penalty": 1.0}
"""llama-cpp-python's request fields that truncate or reweight the distribution by default
(min_p 0.05, repeat_penalty 1.1), set to no-ops; top_k (default 40) is a decoding parameter."""


def _entry(server, mode: str, max_tokens: int | None = None) -> dict:
    return {"name": "smollm2-api", "api": {
        "base_url": server["base_url"], "model": server["model"], "api_key_env": KEY_ENV,
        "parameters": ["temperature", "top_p", "top_k"], "extra_body": LLAMA_CPP_NEUTRAL,
        "provo": {"mode": mode, "max_tokens": max_tokens}, "max_retries": 1, "backoff": 0.1}}


def _run(*argv: str) -> None:
    """Run a ``varprobe`` subcommand in this process (its errors raise, unlike ``main``)."""
    args = build_parser().parse_args(argv)
    args.run(args)


@pytest.fixture(scope="module")
def contexts(provo_norms, tmp_path_factory):
    path = tmp_path_factory.mktemp("api-contexts") / "contexts.parquet"
    tables.write(contexts_table(provo_norms, [1]).iloc[[0, 5, 20]], path, "provo_contexts")
    return path


def _provo(server, tmp_path, contexts, mode, n, cache, max_tokens=None, tag="run"):
    out, stats = tmp_path / f"{tag}.parquet", tmp_path / f"{tag}-stats.parquet"
    _run("provo-api-sample", "--model", json.dumps(_entry(server, mode, max_tokens)),
         "--decoding", json.dumps({"name": "ancestral"}), "--contexts", str(contexts),
         "--n-samples", str(n), "--seed", "0", "--api-cache", str(cache), "--out", str(out),
         "--replies-out", str(stats))
    return tables.read(out, "provo_samples"), tables.read(stats, "provo_api_parse"), out, stats


def _no_key_in(paths, key: str) -> None:
    for path in paths:
        assert key.encode() not in path.read_bytes(), path


def test_provo_single_mode_reads_words_caches_and_reproduces_by_seed(llama_server, contexts, tmp_path,
                                                                     monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, llama_server["key"])
    cache = tmp_path / "cache"
    samples, stats, *outputs = _provo(llama_server, tmp_path, contexts, "single", 3, cache, max_tokens=8)
    assert "9 requests sent, 0 cache hits" in capsys.readouterr().err
    assert len(samples) == 9 and samples.groupby(["text_id", "word_number"]).size().eq(3).all()
    words = samples.loc[~samples["failed"], "word"]
    assert len(words) and all(w and normalise_word(w) == w for w in words)
    assert all(w in normalise_word(t) for w, t in zip(words, samples.loc[~samples["failed"], "text"], strict=True))
    assert (stats["kept"] + stats["failed"] == 3).all() and (stats["replies"] == 3).all()

    again, _, *_ = _provo(llama_server, tmp_path, contexts, "single", 3, cache, max_tokens=8, tag="again")
    assert "0 requests sent, 9 cache hits" in capsys.readouterr().err
    assert again.equals(samples)

    fresh, _, *_ = _provo(llama_server, tmp_path, contexts, "single", 3, tmp_path / "fresh", max_tokens=8,
                          tag="fresh")
    assert fresh["text"].tolist() == samples["text"].tolist()      # the server honours seeds
    _no_key_in([*outputs, *cache.rglob("*.json")], llama_server["key"])


def test_provo_list_mode_parse_statistics_add_up(llama_server, contexts, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, llama_server["key"])
    samples, stats, *outputs = _provo(llama_server, tmp_path, contexts, "list", 10, tmp_path / "cache",
                                      max_tokens=80)
    assert (stats["replies"] == 1).all() and (stats["requested"] == 10).all()
    assert (stats["kept"] + stats["shortfall"] == stats["requested"]).all()
    assert (stats["items"] - stats["invalid"] == stats["kept"] + stats["extra"]).all()
    kept = samples.groupby(["text_id", "word_number"]).size()
    assert kept.reindex(list(zip(stats["text_id"], stats["word_number"], strict=True)), fill_value=0).tolist() \
        == stats["kept"].tolist()
    assert not samples["failed"].any() and all(normalise_word(w) == w and w for w in samples["word"])
    _no_key_in([*outputs, *(tmp_path / "cache").rglob("*.json")], llama_server["key"])


def test_production_sample_dispatches_to_the_endpoint(llama_server, data_mirror, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, llama_server["key"])
    instances = tmp_path / "instances.parquet"
    tables.write(first_inputs(read_instances("asset", data_mirror / "asset", "test"), 2), instances,
                 "production_instances")
    out = tmp_path / "samples.parquet"
    argv = ["production-sample", "--model", json.dumps(_entry(llama_server, "single")),
            "--decoding", json.dumps({"name": "top-p-0.9", "top_p": 0.9}), "--instances", str(instances),
            "--prompt", "Rewrite this sentence so that it is simpler to read.\n{source}",
            "--n-samples", "3", "--max-new-tokens", "24", "--seed", "0", "--api-cache",
            str(tmp_path / "cache"), "--out", str(out)]
    _run(*argv)
    assert "6 requests sent" in capsys.readouterr().err
    samples = tables.read(out, "production_samples")
    assert samples.groupby("input_id").size().eq(3).all() and samples["text"].str.len().gt(0).all()
    metadata = tables.read_metadata(out)
    assert metadata["generation"] == {"temperature": 1.0, "top_p": 0.9, "top_k": 0, **LLAMA_CPP_NEUTRAL,
                                      "max_tokens": 24}
    _run(*argv)
    assert "0 requests sent, 6 cache hits" in capsys.readouterr().err
    _no_key_in([out, *(tmp_path / "cache").rglob("*.json")], llama_server["key"])


def test_a_wrong_key_is_an_authentication_error_that_hides_it(llama_server, tmp_path):
    endpoint = ApiEndpoint.from_config("smollm2-api", _entry(llama_server, "single")["api"])
    wrong = "wrong-" + llama_server["key"]
    body = {"model": llama_server["model"], "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    with ApiClient(endpoint, ReplyCache(tmp_path), environ={KEY_ENV: wrong}) as client, \
            pytest.raises(ApiAuthError, match=f"HTTP 401 .*environment variable {KEY_ENV}") as caught:
        client.replies([body])
    assert wrong not in str(caught.value) and llama_server["key"] not in str(caught.value)
