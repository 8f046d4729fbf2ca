"""Credentials in URLs.

A run copies its config and its models' entries into what it writes: the results page, the
samples' Parquet metadata, every API cache file, the jobs' logs and the console. A URL that
carries a credential, ``http://user:secret@host/v1`` or ``https://host/data?token=...``, would
be copied with them. The config checks (``varprobe.config_checks.credential_problems``) and the
API endpoint (``varprobe.api.endpoint.ApiEndpoint.from_config``) therefore refuse such a URL,
naming where they found it and never repeating it; an API key is given by the name of the
environment variable holding it (``api_key_env``).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

CREDENTIAL_PARAMETER = re.compile(
    r"(?:^|[_.-])(?:key|apikey|token|secret|password|passwd|pwd|sig|signature|auth|authorization|"
    r"credential|session)s?$",
    re.IGNORECASE,
)
"""A query parameter whose name says it holds a credential: ``key``, ``api_key``, ``token``,
``access_token``, ``X-Amz-Signature``, ``X-Amz-Credential``, ``sig``, ``password``, ..."""


def url_credentials(text: str) -> str | None:
    """What credential the URL ``text`` carries, in words, or None.

    A text is a URL here when it has a scheme and a host (``scheme://host...``). It carries a
    credential when it has userinfo before the host (``user@`` or ``user:password@``), or a query
    parameter whose name matches ``CREDENTIAL_PARAMETER``. The words name the parameters, never
    their values.
    """
    if "://" not in text:
        return None
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    if "@" in parts.netloc:
        return "credentials before its host (user:password@)"
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)
             if CREDENTIAL_PARAMETER.search(name)]
    if names:
        return "a credential in its query (" + ", ".join(f"{name}=" for name in names) + ")"
    return None
