"""A disk cache of endpoint replies, so that a rerun or a resumed job never sends a request twice.

A request is identified by its URL, its JSON body and its ``draw``: the how-many-th of identical
requests in one batch it is (0 unless the same body is sent several times, as N unseeded
requests for one prompt are). Headers, and so the API key, are no part of it. The key of a
request is the SHA-256 of its canonical JSON (sorted keys, no spaces, UTF-8); the cache holds
one file per request, ``DIR/KEY[:2]/KEY.json``, with the request and the server's response,
written atomically.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from varprobe.tables import atomic


def canonical(value: object) -> str:
    """``value`` as canonical JSON: sorted keys, no spaces, non-ASCII kept.

    Parameters
    ----------
    value : object
        A JSON-serialisable value.

    Returns
    -------
    str
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(request: dict) -> str:
    """The cache key of ``request`` (``{"url", "body", "draw"}``).

    Parameters
    ----------
    request : dict
        The request: ``url``, ``body`` and ``draw``.

    Returns
    -------
    str
        The SHA-256 (hex) of its canonical JSON.
    """
    return hashlib.sha256(canonical(request).encode()).hexdigest()


class ReplyCache:
    """Responses by request, one JSON file each under ``directory``."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, request: dict) -> Path:
        """The file of ``request``.

        Parameters
        ----------
        request : dict
            The request.

        Returns
        -------
        Path
        """
        key = request_key(request)
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: dict) -> dict | None:
        """The stored response to ``request``, or None. A file that is no JSON record of this
        request is an error naming the file.

        Parameters
        ----------
        request : dict
            The request.

        Returns
        -------
        dict or None
            The response's JSON.

        Raises
        ------
        ValueError
            See above.
        """
        path = self.path(request)
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"API cache file {path} is corrupt ({err}); delete it to resend the request") from err
        if not isinstance(record, dict) or "response" not in record or record.get("request") != request:
            raise ValueError(f"API cache file {path} does not hold this request and a response; "
                             "delete it to resend the request")
        return record["response"]

    def put(self, request: dict, response: dict) -> None:
        """Store ``response`` to ``request`` (atomically).

        Parameters
        ----------
        request : dict
            The request.
        response : dict
            The server's JSON response.

        Returns
        -------
        None
        """
        with atomic(self.path(request)) as partial:
            partial.write_text(canonical({"request": request, "response": response}), encoding="utf-8")
