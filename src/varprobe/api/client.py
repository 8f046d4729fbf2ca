"""Sending request bodies to an endpoint: cache first, bounded concurrency, retries.

``ApiClient.replies(bodies)`` returns one reply per body, in the order given, whatever the
concurrency. A body whose response is cached is not sent. A request that fails with HTTP 408,
409, 429 or 5xx, a connection error or a timeout is retried after ``backoff * 2**attempt``
seconds (or the server's ``Retry-After``), up to ``max_retries`` times; then the client raises
``ApiError`` naming the model, URL, status and the start of the server's answer. No wait is
longer than ``timeout``: a backoff is cut to it, and a ``Retry-After`` above it fails at once
(naming the value) rather than sleeping; so a request waits at most ``max_retries * timeout``
seconds in all. 401 and 403 raise ``ApiAuthError`` naming the model and the key's environment
variable; any other 4xx raises at once with the server's message.

A 2xx answer is read (``ApiClient.parse``) before it is cached, and only a reply that reads is
cached: one that is no JSON (an HTML page, a cut body), holds an ``error``, or lacks the text of
its first choice (``choices[0].message.content`` of a chat reply, ``choices[0].text`` of a
completion) raises ``MalformedReply`` at once, naming the model, URL and what is missing, and is
neither retried nor cached. A cached response that does not read (cached by a version that
cached before reading) is a cache miss: the request is sent again and its file replaced. The
key's value never enters a message, a cache file or a table.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
from tqdm import tqdm

from varprobe.api.cache import ReplyCache, canonical
from varprobe.api.endpoint import ApiEndpoint

RETRIED = frozenset({408, 409, 429})
"""Statuses retried besides 5xx."""

EXCERPT = 300
"""Characters of a server's answer quoted in an error."""


class ApiError(RuntimeError):
    """An endpoint that did not answer a request."""


class ApiAuthError(ApiError):
    """An endpoint that refused the key (HTTP 401 or 403), or a key that is not set."""


class MalformedReply(ApiError):
    """A 2xx answer that is no chat or completion reply (module docstring)."""


@dataclass(frozen=True)
class Reply:
    """The text of a response's first choice, why generation stopped (``length``: the token
    budget ran out) and the completion's length in tokens where the server reports it."""

    text: str
    finish_reason: str | None
    completion_tokens: int | None

    @property
    def truncated(self) -> bool:
        """Whether the token budget cut the reply."""
        return self.finish_reason == "length"


class ApiClient:
    """Replies of ``endpoint`` to request bodies, through ``cache``.

    ``counts`` holds the requests ``sent`` (each attempt counted once per request), the
    ``cache_hits`` and the ``retries`` so far. ``environ`` is where the key is looked up (when
    the first request has to be sent); ``sleep`` waits before a retry.
    """

    def __init__(self, endpoint: ApiEndpoint, cache: ReplyCache, environ: Mapping[str, str] = os.environ,
                 sleep: Callable[[float], None] = time.sleep):
        self.endpoint = endpoint
        self.cache = cache
        self.environ = environ
        self.sleep = sleep
        self.counts = {"sent": 0, "cache_hits": 0, "retries": 0}
        self._lock = threading.Lock()
        self._http = httpx.Client(timeout=endpoint.timeout)

    def close(self) -> None:
        """Close the HTTP connections.

        Returns
        -------
        None
        """
        self._http.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def report(self) -> str:
        """One line of counts, for stderr.

        Returns
        -------
        str
        """
        c = self.counts
        return (f"model {self.endpoint.name!r} at {self.endpoint.url}: {c['sent']} requests sent, "
                f"{c['cache_hits']} cache hits, {c['retries']} retries")

    def replies(self, bodies: Sequence[dict], desc: str = "") -> list[Reply]:
        """The reply to each of ``bodies``, in order (module docstring).

        Parameters
        ----------
        bodies : sequence of dict
            The request bodies; a body repeated is a further draw of it.
        desc : str, optional
            The progress bar's label (default: the endpoint's name).

        Returns
        -------
        list of Reply
            One per body, in order.
        """
        seen: dict[str, int] = {}
        requests = []
        for body in bodies:
            text = canonical(body)
            requests.append({"url": self.endpoint.url, "body": body, "draw": seen.get(text, 0)})
            seen[text] = seen.get(text, 0) + 1
        with ThreadPoolExecutor(self.endpoint.concurrency) as pool:
            futures = [pool.submit(self._reply, r) for r in requests]
            try:
                return [f.result() for f in tqdm(futures, desc=desc or self.endpoint.name,
                                                 file=sys.stderr, mininterval=5)]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _reply(self, request: dict) -> Reply:
        """The reply to ``request``: the cached one where it reads, else the server's, cached
        once it reads."""
        cached = self.cache.get(request)
        if cached is not None:
            try:
                reply = self.parse(cached)
            except MalformedReply:
                pass  # cached by a version that cached before reading: send it again
            else:
                self._count("cache_hits")
                return reply
        response = self._send(request["body"])
        reply = self.parse(response)
        self.cache.put(request, response)
        return reply

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        variable = self.endpoint.api_key_env
        if variable is None:
            return headers
        key = self.environ.get(variable)
        if not key:
            raise ApiAuthError(f"model {self.endpoint.name!r}: environment variable {variable} "
                               "(api.api_key_env) holds no API key; set it or set api_key_env: null")
        return {**headers, "Authorization": f"Bearer {key}"}

    def _send(self, body: dict) -> object:
        """POST ``body``, retrying as the module docstring says; the decoded JSON of the answer."""
        headers, url, name = self._headers(), self.endpoint.url, self.endpoint.name
        content = json.dumps(body, ensure_ascii=False).encode()
        self._count("sent")
        for attempt in range(self.endpoint.max_retries + 1):
            retry_after = None
            try:
                response = self._http.post(url, content=content, headers=headers)
            except httpx.TransportError as err:
                problem = f"{type(err).__name__}: {self._redact(str(err))}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return self._json(response)
                message = self._message(response)
                if status in (401, 403):
                    raise ApiAuthError(
                        f"model {name!r}: {url} refused the request with HTTP {status} ({message}); "
                        f"check the API key in environment variable {self.endpoint.api_key_env}"
                        if self.endpoint.api_key_env else
                        f"model {name!r}: {url} refused the request with HTTP {status} ({message}); "
                        "it wants an API key: set api.api_key_env to the variable holding it"
                    )
                if status not in RETRIED and status < 500:
                    raise ApiError(f"model {name!r}: {url} rejected the request with HTTP {status}: {message}")
                problem = f"HTTP {status}: {message}"
                retry_after = response.headers.get("Retry-After")
            if attempt == self.endpoint.max_retries:
                break
            wait = self._wait(attempt, retry_after, problem)
            self._count("retries")
            self.sleep(wait)
        raise ApiError(f"model {name!r}: {url} failed {self.endpoint.max_retries + 1} times "
                       f"(api.max_retries={self.endpoint.max_retries}); last: {problem}")

    def _wait(self, attempt: int, retry_after: str | None, problem: str) -> float:
        """Seconds before retry ``attempt + 1``: the server's ``Retry-After`` where it gives one
        that reads, else ``backoff * 2**attempt``, and never above ``api.timeout`` (a
        ``Retry-After`` above it raises ``ApiError``)."""
        limit = self.endpoint.timeout
        asked = _retry_after(retry_after) if retry_after is not None else None
        if asked is None:
            return min(self.endpoint.backoff * 2**attempt, limit)
        if asked > limit:
            raise ApiError(f"model {self.endpoint.name!r}: {self.endpoint.url} answered {problem}, with "
                           f"Retry-After: {self._excerpt(retry_after)[:40]}, a wait above api.timeout "
                           f"({limit:g} s); not waiting: rerun later, or raise api.timeout")
        return asked

    def _json(self, response: httpx.Response) -> object:
        """The decoded JSON of a 2xx ``response``; ``MalformedReply`` where it is none."""
        try:
            return response.json()
        except (ValueError, RecursionError) as err:
            kind = response.headers.get("Content-Type", "no Content-Type")
            raise MalformedReply(f"model {self.endpoint.name!r}: {self.endpoint.url} answered HTTP "
                                 f"{response.status_code} with no JSON ({self._excerpt(kind)[:60]}): "
                                 f"{self._excerpt(response.text)!r}") from err

    def parse(self, response: object) -> Reply:
        """The reply of a 2xx answer's decoded JSON ``response`` (module docstring).

        Parameters
        ----------
        response : object
            The decoded JSON.

        Returns
        -------
        Reply

        Raises
        ------
        MalformedReply
            Naming the model, the URL and what is wrong, with the start of ``response``.
        """
        field = "message.content" if self.endpoint.endpoint == "chat" else "text"
        problem = _shape_problem(response, field)
        if problem is not None:
            raise MalformedReply(f"model {self.endpoint.name!r}: {self.endpoint.url} answered {problem}: "
                                 f"{self._excerpt(canonical(response))!r}")
        choice = response["choices"][0]
        text = choice["message"]["content"] if field == "message.content" else choice["text"]
        tokens = (response.get("usage") or {}).get("completion_tokens")
        return Reply(text, choice.get("finish_reason"), tokens)

    def _message(self, response: httpx.Response) -> str:
        """The server's error message (OpenAI's ``error.message`` or FastAPI's ``detail`` where
        present, else the body), shortened."""
        try:
            data = response.json()
        except ValueError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(data, dict) and isinstance(data.get("detail"), str):
            text = data["detail"]
        else:
            text = response.text
        return self._excerpt(text) or "(empty body)"

    def _excerpt(self, text: str) -> str:
        """The start of ``text`` for a message: the key redacted (before cutting, so that no part
        of it is left), whitespace collapsed, ``EXCERPT`` characters."""
        return " ".join(self._redact(text).split())[:EXCERPT]

    def _redact(self, text: str) -> str:
        variable = self.endpoint.api_key_env
        key = self.environ.get(variable) if variable else None
        return text.replace(key, "***") if key else text


def _shape_problem(response: object, field: str) -> str | None:
    """What keeps ``response`` from being a reply whose first choice holds its text in ``field``
    (``message.content`` or ``text``), in words; None when it is one."""
    if not isinstance(response, dict):
        return f"JSON that is no object ({type(response).__name__})"
    if response.get("error"):
        return "an error"
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices:
        return "no choices (a non-empty list)"
    choice = choices[0]
    if not isinstance(choice, dict):
        return "choices[0] that is no object"
    if field == "message.content":
        if not isinstance(choice.get("message"), dict):
            return "no message in choices[0]"
        text = choice["message"].get("content")
    else:
        text = choice.get("text")
    if not isinstance(text, str):
        return f"no text in choices[0].{field} (a string; got {type(text).__name__})"
    if choice.get("finish_reason") is not None and not isinstance(choice["finish_reason"], str):
        return "a choices[0].finish_reason that is no string"
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, dict):
        return "a usage that is no object"
    tokens = (usage or {}).get("completion_tokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0):
        return "a usage.completion_tokens that is no count"
    return None


def _retry_after(value: str) -> float | None:
    """Seconds to wait from a ``Retry-After`` header ``value`` (seconds or an HTTP date); None
    where it cannot be read."""
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
