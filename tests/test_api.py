"""API models offline: the config block, request bodies, the reply cache, the list parser, and the
client against a scripted loopback HTTP server (retries, Retry-After, authentication, 4xx)."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from varprobe import tables
from varprobe.api.bodies import request_body, request_seed, sent_parameters
from varprobe.api.cache import ReplyCache
from varprobe.api.client import ApiAuthError, ApiClient, ApiError, MalformedReply
from varprobe.api.endpoint import LIST_PROMPT, SINGLE_PROMPT, ApiEndpoint
from varprobe.api.production import api_productions
from varprobe.api.provo import provo_samples
from varprobe.api.word_lists import parse_word_list
from varprobe.cli import build_parser, main
from varprobe.sampling.decoding import Decoding

DATA = Path(__file__).parent / "data"
SECRET = "sk-test-0123456789abcdef"


def _endpoint(**block) -> ApiEndpoint:
    return ApiEndpoint.from_config("m", {"base_url": "http://127.0.0.1:1/v1", "model": "x", **block})


def test_config_defaults_and_errors_name_the_model_and_key():
    endpoint = _endpoint()
    assert endpoint.url == "http://127.0.0.1:1/v1/chat/completions"
    assert (endpoint.parameters, endpoint.seed, endpoint.provo.mode, endpoint.api_key_env) == (
        ("temperature", "top_p"), True, "single", None)
    assert _endpoint(endpoint="completions", base_url="http://h/v1/").url == "http://h/v1/completions"
    bad = [
        ({"base_url": None}, "api.base_url is required"),
        ({"base_url": f"http://user:{SECRET}@127.0.0.1:1/v1"},
         r"api.base_url holds credentials before its host \(user:password@\); remove it and give the key "
         "through api.api_key_env"),
        ({"base_url": f"https://host/v1?key={SECRET}"}, r"api.base_url holds a credential in its query \(key=\)"),
        ({"model": ""}, "api.model is required"),
        ({"colour": 1}, r"unknown api key\(s\) \['colour'\]"),
        ({"endpoint": "embeddings"}, "api.endpoint must be one of"),
        ({"parameters": ["top_p"]}, "must include temperature"),
        ({"parameters": ["temperature", "min_p"]}, r"names \['min_p'\]"),
        ({"extra_body": {"max_tokens": 3}}, r"sets \['max_tokens'\]"),
        ({"extra_body": {"top_k": 40}}, "top_k=40, which would change every decoding"),
        ({"provo": {"mode": "pairs"}}, "api.provo.mode must be one of"),
        ({"provo": {"prompt": "no placeholder"}}, r"must contain \{context\}"),
        ({"provo": {"max_token": 5}}, "unknown api.provo key"),
        ({"concurrency": 0}, "api.concurrency must be an integer >= 1"),
        ({"timeout": 0}, "api.timeout must be a number > 0"),
    ]
    for block, message in bad:
        with pytest.raises(ValueError, match=f"model 'm': .*{message}"):
            _endpoint(**block)
    assert _endpoint(extra_body={"top_k": 0, "min_p": 0.0}).extra_body == {"top_k": 0, "min_p": 0.0}


def test_bodies_send_every_accepted_parameter_and_refuse_what_the_endpoint_cannot_do():
    endpoint = _endpoint(parameters=["temperature", "top_p", "top_k"],
                         extra_body={"top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0})
    body = request_body(endpoint, Decoding("top-k-30", top_k=30), "Hi", max_tokens=12, seed=7)
    assert body == {"model": "x", "messages": [{"role": "user", "content": "Hi"}], "temperature": 1.0,
                    "top_p": 1.0, "top_k": 30, "min_p": 0.0, "repeat_penalty": 1.0, "max_tokens": 12,
                    "seed": 7}
    completions = _endpoint(endpoint="completions", seed=False)
    assert request_body(completions, Decoding("t", temperature=0.5), "Hi", max_tokens=5, seed=7) == {
        "model": "x", "prompt": "Hi", "temperature": 0.5, "top_p": 1.0, "max_tokens": 5}
    with pytest.raises(ValueError, match="model 'm': decoding 'typical-0.9' sets typical_p=0.9"):
        sent_parameters(endpoint, Decoding("typical-0.9", typical_p=0.9), 5)
    seeds = {request_seed(0, 1, w, i) for w in range(2, 40) for i in range(40)}
    assert len(seeds) == 38 * 40 and max(seeds) < 2**31
    assert request_seed(0, 1, 2, 0) != request_seed(1, 1, 2, 0)


def test_prompts_are_the_papers():
    endpoint = _endpoint(provo={"mode": "list"})
    assert endpoint.provo.render("The cat", 40) == LIST_PROMPT.format(context="The cat", n=40)
    assert "which 40 words are plausible continuations to the context The cat. I have" in \
        endpoint.provo.render("The cat", 40)
    assert endpoint.provo.token_budget(40) == 400 and _endpoint().provo.token_budget(40) == 16
    assert SINGLE_PROMPT.endswith("Return only the word and nothing else.")
    with pytest.raises(KeyError, match="placeholder 'ctx'"):
        _endpoint(provo={"prompt": "{context} {ctx}"}).provo.render("a", 1)


def test_cache_is_keyed_by_the_request_and_names_a_corrupt_file(tmp_path):
    cache = ReplyCache(tmp_path)
    request = {"url": "u", "body": {"b": 1, "a": [1.0, "é"]}, "draw": 0}
    assert cache.get(request) is None
    cache.put(request, {"choices": [{"text": "x"}]})
    assert cache.get({"draw": 0, "body": {"a": [1.0, "é"], "b": 1}, "url": "u"}) == {"choices": [{"text": "x"}]}
    assert cache.get({**request, "draw": 1}) is None
    path = cache.path(request)
    assert path.parent.name == path.stem[:2] and not list(tmp_path.rglob("*.partial"))
    path.write_text("{not json")
    with pytest.raises(ValueError, match=f"API cache file {path} is corrupt"):
        cache.get(request)
    path.write_text(json.dumps({"request": {**request, "draw": 5}, "response": {}}))
    with pytest.raises(ValueError, match=f"API cache file {path} does not hold this request"):
        cache.get(request)


def _recorded() -> list[dict]:
    return json.loads((DATA / "api_list_replies.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", _recorded(), ids=lambda c: c["id"])
def test_list_replies_parse_into_their_words(case):
    parsed = parse_word_list(case["reply"], case["truncated"])
    assert [item.word for item in parsed.items if item.word] == case["words"]
    assert (parsed.invalid, parsed.multiword, bool(parsed.preamble)) == (
        case["invalid"], case["multiword"], case["preamble"])


class _Scripted(BaseHTTPRequestHandler):
    """Answers POSTs from the server's ``script`` (status, headers, body, optionally seconds to
    wait first) in turn, where the script is empty or says None: 200 with a reply echoing the
    request's seed. A scripted Content-Length replaces the body's. Records every request's
    headers and body."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.seen.append({"headers": dict(self.headers), "body": body})
            scripted = self.server.script.pop(0) if self.server.script else None
        status, headers, payload, *delay = scripted or (200, {}, {
            "choices": [{"message": {"content": f"word{body.get('seed')} and more"},
                         "text": f" word{body.get('seed')}", "finish_reason": "stop"}],
            "usage": {"completion_tokens": 3}})
        time.sleep(delay[0] if delay else 0)
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        for key, value in {"Content-Length": str(len(data)), **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    server.script, server.seen, server.lock = [], [], threading.Lock()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _client(server, tmp_path, sleep=time.sleep, **block) -> ApiClient:
    endpoint = _endpoint(**{"base_url": f"http://127.0.0.1:{server.server_port}/v1", "backoff": 0.0,
                            "max_retries": 2, **block})
    return ApiClient(endpoint, ReplyCache(tmp_path / "cache"), environ={"KEY": SECRET}, sleep=sleep)


def _body(seed: int) -> dict:
    return {"model": "x", "messages": [{"role": "user", "content": "hi"}], "seed": seed}


def test_client_retries_429_and_5xx_then_answers_in_order(loopback, tmp_path):
    loopback.script = [(429, {"Retry-After": "0"}, {"error": {"message": "slow down"}}), None,
                       (500, {}, "boom"), None, (503, {}, ""), (408, {}, ""), None]
    with _client(loopback, tmp_path, api_key_env="KEY", concurrency=1) as client:
        replies = client.replies([_body(s) for s in (1, 2, 3)])
        assert [r.text for r in replies] == ["word1 and more", "word2 and more", "word3 and more"]
        assert client.counts == {"sent": 3, "cache_hits": 0, "retries": 4}
        assert all(s["headers"]["Authorization"] == f"Bearer {SECRET}" for s in loopback.seen)
        assert client.replies([_body(2), _body(1)])[0].text == "word2 and more"
        assert client.counts == {"sent": 3, "cache_hits": 2, "retries": 4}
    assert len(loopback.seen) == 7
    assert not any(SECRET in p.read_text() for p in (tmp_path / "cache").rglob("*.json"))


def test_client_gives_up_after_max_retries_naming_model_url_and_status(loopback, tmp_path):
    loopback.script = [(502, {}, "bad gateway " * 100)] * 3
    with _client(loopback, tmp_path) as client, \
            pytest.raises(ApiError, match=r"model 'm': http://127.0.0.1:\d+/v1/chat/completions failed "
                                          r"3 times .*last: HTTP 502: bad gateway") as caught:
        client.replies([_body(1)])
    assert client.counts["retries"] == 2 and len(str(caught.value)) < 600


def test_client_auth_error_names_the_variable_never_the_key(loopback, tmp_path):
    loopback.script = [(401, {}, {"error": {"message": f"Invalid API Key {SECRET}"}})]
    with _client(loopback, tmp_path, api_key_env="KEY") as client, \
            pytest.raises(ApiAuthError, match="model 'm': .* HTTP 401 .* environment variable KEY") as caught:
        client.replies([_body(1)])
    assert SECRET not in str(caught.value) and client.counts["retries"] == 0
    endpoint = _endpoint(api_key_env="MISSING_KEY")
    with ApiClient(endpoint, ReplyCache(tmp_path), environ={}) as client, \
            pytest.raises(ApiAuthError, match="environment variable MISSING_KEY .* holds no API key"):
        client.replies([_body(1)])


def test_client_reports_another_4xx_at_once_with_the_servers_message(loopback, tmp_path):
    loopback.script = [(400, {}, {"error": {"message": "max_tokens is too large"}})]
    with _client(loopback, tmp_path) as client, \
            pytest.raises(ApiError, match="rejected the request with HTTP 400: max_tokens is too large"):
        client.replies([_body(1)])
    assert client.counts["retries"] == 0 and not list((tmp_path / "cache").rglob("*.json"))


def test_client_retries_a_refused_connection(tmp_path):
    endpoint = _endpoint(base_url="http://127.0.0.1:9/v1", backoff=0.0, max_retries=1)
    with ApiClient(endpoint, ReplyCache(tmp_path)) as client, \
            pytest.raises(ApiError, match="failed 2 times .*last: ConnectError"):
        client.replies([_body(1)])


def _choice(**fields) -> dict:
    return {"choices": [{"message": {"content": "word"}, "finish_reason": "stop", **fields}]}


MALFORMED = [
    # (id, status, headers, body, api.endpoint, what the error says the server answered)
    ("text", 200, {}, f"upstream failed for Bearer {SECRET}", "chat", "HTTP 200 with no JSON"),
    ("html", 200, {"Content-Type": "text/html"}, f"<html><body>Sign in {SECRET}</body></html>", "chat",
     r"HTTP 200 with no JSON \(text/html\): '<html>"),
    ("key-at-the-cut", 200, {}, "x" * 295 + SECRET, "chat", "HTTP 200 with no JSON"),
    ("truncated", 200, {}, '{"choices": [{"message": {"content": "wo', "chat", "HTTP 200 with no JSON"),
    ("empty", 200, {}, "", "chat", "HTTP 200 with no JSON"),
    ("no-content", 204, {}, "", "chat", "HTTP 204 with no JSON"),
    ("list", 200, {}, [1, 2], "chat", r"JSON that is no object \(list\)"),
    ("string", 200, {}, "\"abc\"", "chat", r"JSON that is no object \(str\)"),
    ("null", 200, {}, "null", "chat", r"JSON that is no object \(NoneType\)"),
    ("error", 200, {}, {"error": {"message": f"quota exceeded for {SECRET}"}}, "chat", "an error"),
    ("error-beside-choices", 200, {}, {**_choice(), "error": "overloaded"}, "chat", "an error"),
    ("choices-missing", 200, {}, {"id": "x"}, "chat", "no choices"),
    ("choices-empty", 200, {}, {"choices": []}, "chat", "no choices"),
    ("choices-string", 200, {}, {"choices": "abc"}, "chat", "no choices"),
    ("choices-null", 200, {}, {"choices": None}, "chat", "no choices"),
    ("choice-string", 200, {}, {"choices": ["abc"]}, "chat", r"choices\[0\] that is no object"),
    ("choice-empty", 200, {}, {"choices": [{}]}, "chat", r"no message in choices\[0\]"),
    ("message-string", 200, {}, _choice(message="word"), "chat", r"no message in choices\[0\]"),
    ("content-missing", 200, {}, _choice(message={"role": "assistant"}), "chat",
     r"no text in choices\[0\].message.content \(a string; got NoneType\)"),
    ("content-null", 200, {}, _choice(message={"content": None, "refusal": "no"}), "chat",
     r"no text in choices\[0\].message.content"),
    ("content-number", 200, {}, _choice(message={"content": 3}), "chat",
     r"no text in choices\[0\].message.content \(a string; got int\)"),
    ("content-parts", 200, {}, _choice(message={"content": [{"type": "text", "text": "a"}]}), "chat",
     r"no text in choices\[0\].message.content \(a string; got list\)"),
    ("completion-no-text", 200, {}, _choice(), "completions", r"no text in choices\[0\].text"),
    ("finish-reason-number", 200, {}, _choice(finish_reason=1), "chat",
     r"a choices\[0\].finish_reason that is no string"),
    ("usage-string", 200, {}, {**_choice(), "usage": "3"}, "chat", "a usage that is no object"),
    ("tokens-string", 200, {}, {**_choice(), "usage": {"completion_tokens": "3"}}, "chat",
     "a usage.completion_tokens that is no count"),
    ("tokens-bool", 200, {}, {**_choice(), "usage": {"completion_tokens": True}}, "chat",
     "a usage.completion_tokens that is no count"),
    ("tokens-negative", 200, {}, {**_choice(), "usage": {"completion_tokens": -1}}, "chat",
     "a usage.completion_tokens that is no count"),
]


@pytest.mark.parametrize(("status", "headers", "payload", "kind", "said"),
                         [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_a_malformed_reply_fails_at_once_naming_model_and_url_and_is_never_cached(
        loopback, tmp_path, status, headers, payload, kind, said):
    loopback.script = [(status, headers, payload)]
    with _client(loopback, tmp_path, api_key_env="KEY", endpoint=kind) as client:
        url = re.escape(client.endpoint.url)
        with pytest.raises(MalformedReply, match=f"^model 'm': {url} answered {said}") as caught:
            client.replies([_body(1)])
        assert client.counts["retries"] == 0 and len(loopback.seen) == 1
    message = str(caught.value)
    assert SECRET[:8] not in message and len(message) < 500
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_a_malformed_reply_fails_the_job_with_exit_1_and_writes_nothing(loopback, tmp_path, capsys):
    loopback.script = [(200, {}, {"choices": [{}]})]
    contexts, out = tmp_path / "contexts.parquet", tmp_path / "s.parquet"
    tables.write(_contexts().iloc[:1].assign(context_length=1, word="w", corpus_word="w"), contexts,
                 "provo_contexts")
    model = {"name": "m", "api": {"base_url": f"http://127.0.0.1:{loopback.server_port}/v1", "model": "x"}}
    with pytest.raises(SystemExit) as caught:
        main(["provo-api-sample", "--model", json.dumps(model), "--decoding", '{"name": "ancestral"}',
              "--contexts", str(contexts), "--n-samples", "1", "--seed", "0", "--api-cache",
              str(tmp_path / "c"), "--out", str(out), "--replies-out", str(tmp_path / "p.parquet")])
    assert caught.value.code == 1
    assert f"model 'm': http://127.0.0.1:{loopback.server_port}/v1/chat/completions answered no message" \
        in capsys.readouterr().err
    assert not out.exists() and not list((tmp_path / "c").rglob("*.json"))


def test_a_malformed_reply_cached_by_an_older_version_is_sent_again(loopback, tmp_path):
    with _client(loopback, tmp_path) as client:
        request = {"url": client.endpoint.url, "body": _body(1), "draw": 0}
        client.cache.put(request, {"choices": "abc"})
        assert [r.text for r in client.replies([_body(1)])] == ["word1 and more"]
        assert client.counts == {"sent": 1, "cache_hits": 0, "retries": 0}
        assert client.cache.get(request)["choices"][0]["message"]["content"] == "word1 and more"
        client.replies([_body(1)])
        assert client.counts["cache_hits"] == 1 and len(loopback.seen) == 1


@pytest.mark.parametrize("retry_after", ["86400", "Fri, 01 Jan 2100 00:00:00 GMT"])
def test_a_retry_after_above_the_timeout_fails_at_once_naming_url_and_value(loopback, tmp_path, retry_after):
    slept = []
    loopback.script = [(429, {"Retry-After": retry_after}, {"error": {"message": "rate limited"}})]
    with _client(loopback, tmp_path, sleep=slept.append, timeout=60) as client, \
            pytest.raises(ApiError, match=f"model 'm': {re.escape(client.endpoint.url)} answered HTTP 429: "
                                          f"rate limited, with Retry-After: {retry_after}, a wait above "
                                          r"api.timeout \(60 s\); not waiting") as caught:
        client.replies([_body(1)])
    assert slept == [] and len(loopback.seen) == 1 and len(str(caught.value)) < 400
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_every_wait_is_at_most_the_timeout(loopback, tmp_path):
    slept = []
    loopback.script = [(503, {}, ""), (429, {"Retry-After": "45"}, ""), (500, {}, ""), (503, {}, ""), None]
    with _client(loopback, tmp_path, sleep=slept.append, backoff=25, max_retries=4, timeout=60) as client:
        assert client.replies([_body(1)])[0].text == "word1 and more"
    assert slept == [25, 45, 60, 60]


@pytest.mark.parametrize(("scripted", "last"), [
    ((200, {}, _choice(), 2.0), "ReadTimeout"),
    ((200, {"Content-Length": "1000"}, _choice()), "RemoteProtocolError"),
], ids=["read-timeout", "cut-connection"])
def test_a_timeout_or_a_cut_connection_is_retried_then_names_model_and_url(loopback, tmp_path, scripted, last):
    loopback.script = [scripted] * 2
    with _client(loopback, tmp_path, api_key_env="KEY", max_retries=1, timeout=0.25) as client, \
            pytest.raises(ApiError, match=f"^model 'm': {re.escape(client.endpoint.url)} failed 2 times "
                                          f".*last: {last}") as caught:
        client.replies([_body(1)])
    assert SECRET not in str(caught.value) and client.counts["retries"] == 1
    assert not list((tmp_path / "cache").rglob("*.json"))


def _contexts() -> pd.DataFrame:
    return pd.DataFrame({"text_id": [1, 1, 2], "word_number": [2, 3, 2],
                         "context": ["There", "There are", "The"]})


def test_provo_single_mode_seeds_each_request_and_reads_first_words(loopback, tmp_path):
    with _client(loopback, tmp_path, concurrency=3) as client:
        samples, stats = provo_samples(client, _contexts(), Decoding("ancestral"), n=4, seed=0)
    tables.conform(samples, "provo_samples")
    tables.conform(stats, "provo_api_parse")
    assert len(samples) == 12 and samples.groupby(["text_id", "word_number"]).size().eq(4).all()
    expected = [f"word{request_seed(0, t, w, i)}" for t, w, i in
                zip(samples["text_id"], samples["word_number"], samples["sample_index"], strict=True)]
    assert samples["word"].tolist() == expected and not samples["failed"].any()
    assert (stats["kept"] == 4).all() and (stats["multiword"] == 4).all() and (stats["shortfall"] == 0).all()
    bodies = [s["body"] for s in loopback.seen]
    assert all(b["temperature"] == 1.0 and b["top_p"] == 1.0 and b["max_tokens"] == 16 for b in bodies)
    assert bodies[0]["messages"][0]["content"] == SINGLE_PROMPT.format(context="There")
    with _client(loopback, tmp_path, concurrency=1) as client:
        again, _ = provo_samples(client, _contexts().iloc[::-1], Decoding("ancestral"), n=4, seed=0)
        assert client.counts["sent"] == 0
    key = ["text_id", "word_number", "sample_index"]
    pd.testing.assert_frame_equal(again.sort_values(key, ignore_index=True), samples)


def test_provo_list_mode_keeps_n_words_and_counts_what_it_dropped(loopback, tmp_path):
    def reply(content, finish="stop"):
        return (200, {}, {"choices": [{"message": {"content": content}, "finish_reason": finish}]})

    loopback.script = [reply("Here are 3 words:\n1. is\n2. \"are\"\n3. were here\n4. was"),
                       reply("many, ..., few"), reply("1. a\n2. b\n3. lon", "length")]
    with _client(loopback, tmp_path, provo={"mode": "list"}, concurrency=1) as client:
        samples, stats = provo_samples(client, _contexts(), Decoding("ancestral"), n=3, seed=0)
    words = {k: g["word"].tolist() for k, g in samples.groupby(["text_id", "word_number"])}
    assert words == {(1, 2): ["is", "are", "were"], (1, 3): ["many", "few"], (2, 2): ["a", "b"]}
    stats = stats.set_index(["text_id", "word_number"])
    assert stats.loc[(1, 2), ["items", "multiword", "extra", "kept", "preamble"]].tolist() == [4, 1, 1, 3, 1]
    assert stats.loc[(1, 3), ["items", "invalid", "kept", "shortfall"]].tolist() == [3, 1, 2, 1]
    assert stats.loc[(2, 2), ["truncated", "invalid", "kept", "shortfall"]].tolist() == [1, 1, 2, 1]
    assert (stats["kept"] + stats["shortfall"] == stats["requested"]).all()
    assert (stats["items"] - stats["invalid"] == stats["kept"] + stats["extra"]).all()
    assert "which 3 words are plausible" in loopback.seen[0]["body"]["messages"][0]["content"]


def test_productions_are_seeded_per_input_and_index(loopback, tmp_path):
    work = [("a", "Translate: one"), ("b", "Translate: two")]
    with _client(loopback, tmp_path, endpoint="completions", concurrency=2) as client:
        productions = api_productions(client, work, Decoding("top-p", top_p=0.9), n_samples=3,
                                      max_new_tokens=20, seed=5)
    assert productions == [[f"word{request_seed(5, i, j)}" for j in range(3)] for i in ("a", "b")]
    assert {(s["body"]["prompt"], s["body"]["top_p"], s["body"]["max_tokens"]) for s in loopback.seen} == {
        ("Translate: one", 0.9, 20), ("Translate: two", 0.9, 20)}


def test_unseeded_identical_requests_are_distinct_draws(loopback, tmp_path):
    loopback.script = [(200, {}, {"choices": [{"message": {"content": w}}]}) for w in ("x", "y", "z")]
    with _client(loopback, tmp_path, seed=False, concurrency=1) as client:
        first = [r.text for r in client.replies([_body(0)] * 3)]
        assert sorted(first) == ["x", "y", "z"]
        assert sorted(r.text for r in client.replies([_body(0)] * 3)) == first
        assert client.counts["cache_hits"] == 3


def _cli(*argv: str) -> None:
    """Run a ``varprobe`` subcommand in this process (its errors raise, unlike ``main``)."""
    args = build_parser().parse_args(argv)
    args.run(args)


def test_provo_api_sample_writes_both_tables_without_the_key(loopback, tmp_path, monkeypatch):
    monkeypatch.setenv("VARPROBE_TEST_KEY", SECRET)
    contexts, out, stats = tmp_path / "contexts.parquet", tmp_path / "s.parquet", tmp_path / "p.parquet"
    tables.write(_contexts().assign(context_length=1, word="w", corpus_word="w"), contexts, "provo_contexts")
    model = {"name": "m", "api": {"base_url": f"http://127.0.0.1:{loopback.server_port}/v1", "model": "x",
                                  "api_key_env": "VARPROBE_TEST_KEY", "provo": {"mode": "single"}}}
    common = ["--contexts", str(contexts), "--n-samples", "2", "--seed", "0", "--api-cache", str(tmp_path / "c"),
              "--out", str(out), "--replies-out", str(stats)]
    _cli("provo-api-sample", "--model", json.dumps(model), "--decoding", '{"name": "ancestral"}', *common)
    assert len(tables.read(out, "provo_samples")) == 6 and len(tables.read(stats, "provo_api_parse")) == 3
    metadata = tables.read_metadata(out)
    assert metadata["generation"] == {"temperature": 1.0, "top_p": 1.0, "max_tokens": 16}
    assert metadata["provo"]["mode"] == "single" and metadata == tables.read_metadata(stats)
    for path in (out, stats, *(tmp_path / "c").rglob("*.json")):
        assert SECRET.encode() not in path.read_bytes()
    with pytest.raises(ValueError, match="decoding 'exact' needs the model's distribution"):
        _cli("provo-api-sample", "--model", json.dumps(model), "--decoding",
             '{"name": "exact", "method": "enumerate"}', *common)
    with pytest.raises(ValueError, match="model 'hub' has no api block"):
        _cli("provo-api-sample", "--model", '{"name": "hub", "pretrained": "gpt2"}', "--decoding",
             '{"name": "ancestral"}', *common)
    instances = tmp_path / "instances.parquet"
    tables.write(pd.DataFrame({"dataset": ["d"], "split": ["t"], "input_id": ["0"], "source": ["s"],
                               "references": [["r"]]}), instances, "production_instances")
    with pytest.raises(ValueError, match="model 'm' is an API model: give --api-cache"):
        _cli("production-sample", "--model", json.dumps(model), "--decoding", '{"name": "ancestral"}',
             "--instances", str(instances), "--prompt", "{source}", "--n-samples", "1",
             "--max-new-tokens", "4", "--seed", "0", "--out", str(tmp_path / "prod.parquet"))


def test_a_system_turn_is_sent_before_the_prompt_on_either_endpoint():
    chat = request_body(_endpoint(), Decoding("ancestral"), "Translate.", max_tokens=5, seed=1,
                        system="Be brief.")
    assert chat["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Translate."}]
    assert request_body(_endpoint(), Decoding("ancestral"), "Translate.", max_tokens=5,
                        seed=1)["messages"] == [{"role": "user", "content": "Translate."}]
    completion = request_body(_endpoint(endpoint="completions"), Decoding("ancestral"), "Translate.",
                              max_tokens=5, seed=1, system="Be brief.")
    assert completion["prompt"] == "Be brief.\nTranslate."
