"""Sending request bodies to an endpoint: cache first, bounded concurrency, retries.

``ApiClient.replies(bodies)`` returns one reply per body, in the order given, whatever the
concurrency. A body whose response is cached is not sent. A request that fails with HTTP 408,
409, 429 or 5xx, a connection error or a timeout is retried after ``backoff * 2**attempt``
seconds (or the server's ``Retry-After``), up to ``max_retries`` times; then the client raises
``ApiError`` naming the model, URL, status and the start of the server's answer. 401 and 403
raise ``ApiAuthError`` naming the model and the key's environment variable; any other 4xx
raises at once with the server's message. The key's value never enters a message, a cache file
or a table.
"""

from __future__ import annotations

import email.utils
import json
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
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
    the first request has to be sent).
    """

    def __init__(self, endpoint: ApiEndpoint, cache: ReplyCache, environ: Mapping[str, str] = os.environ):
        self.endpoint = endpoint
        self.cache = cache
        self.environ = environ
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
            futures = [pool.submit(self._response, r) for r in requests]
            try:
                responses = [f.result() for f in tqdm(futures, desc=desc or self.endpoint.name,
                                                      file=sys.stderr, mininterval=5)]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return [self._reply(r) for r in responses]

    def _response(self, request: dict) -> dict:
        cached = self.cache.get(request)
        if cached is not None:
            self._count("cache_hits")
            return cached
        response = self._send(request["body"])
        self.cache.put(request, response)
        return response

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

    def _send(self, body: dict) -> dict:
        """POST ``body``, retrying as the module docstring says; the parsed JSON response."""
        headers, url, name = self._headers(), self.endpoint.url, self.endpoint.name
        content = json.dumps(body, ensure_ascii=False).encode()
        self._count("sent")
        for attempt in range(self.endpoint.max_retries + 1):
            wait = self.endpoint.backoff * 2**attempt
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
                wait = _retry_after(response, wait)
            if attempt == self.endpoint.max_retries:
                break
            self._count("retries")
            time.sleep(wait)
        raise ApiError(f"model {name!r}: {url} failed {self.endpoint.max_retries + 1} times "
                       f"(api.max_retries={self.endpoint.max_retries}); last: {problem}")

    def _json(self, response: httpx.Response) -> dict:
        try:
            data = response.json()
        except ValueError as err:
            raise ApiError(f"model {self.endpoint.name!r}: {self.endpoint.url} answered no JSON: "
                           f"{self._redact(response.text[:EXCERPT])!r}") from err
        if not isinstance(data, dict) or not data.get("choices"):
            raise ApiError(f"model {self.endpoint.name!r}: {self.endpoint.url} answered no choices: "
                           f"{self._redact(response.text[:EXCERPT])!r}")
        return data

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
        return self._redact(" ".join(text.split())[:EXCERPT]) or "(empty body)"

    def _redact(self, text: str) -> str:
        variable = self.endpoint.api_key_env
        key = self.environ.get(variable) if variable else None
        return text.replace(key, "***") if key else text

    def _reply(self, response: dict) -> Reply:
        choice = response["choices"][0]
        if self.endpoint.endpoint == "chat":
            text = (choice.get("message") or {}).get("content") or ""
        else:
            text = choice.get("text") or ""
        usage = response.get("usage") or {}
        return Reply(text, choice.get("finish_reason"), usage.get("completion_tokens"))


def _retry_after(response: httpx.Response, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); ``default``
    where there is none or it cannot be read."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return default
