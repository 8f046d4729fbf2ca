"""Request bodies for an endpoint under a decoding.

Every decoding parameter the endpoint accepts (``api.parameters``) is sent with the decoding's
value, neutral or not, so that a server's own defaults (llama.cpp's top-k 40, say) cannot
change the decoding; temperature is always among them. A decoding that moves a parameter the
endpoint does not accept away from its neutral value is an error, never silently dropped.
Decoding fields override ``extra_body``; the model, the prompt, the token budget and the seed
override both.
"""

from __future__ import annotations

import zlib

from varprobe.api.endpoint import NEUTRAL, ApiEndpoint
from varprobe.sampling.decoding import Decoding


def decoding_fields(endpoint: ApiEndpoint, decoding: Decoding) -> dict[str, float | int]:
    """The request fields of ``decoding`` at ``endpoint`` (ValueError names model, decoding and
    parameter when the endpoint cannot express the decoding).

    Parameters
    ----------
    endpoint : ApiEndpoint
        The model's endpoint.
    decoding : Decoding
        The decoding's transforms.

    Returns
    -------
    dict of str to float or int
        Each request field (``temperature``, ``top_p``, ...) and its value.

    Raises
    ------
    ValueError
        See above.
    """
    values = decoding.parameters()
    for key, neutral in NEUTRAL.items():
        if key not in endpoint.parameters and values[key] != neutral:
            raise ValueError(
                f"model {endpoint.name!r}: decoding {decoding.name!r} sets {key}={values[key]!r}, "
                f"but the endpoint accepts only {list(endpoint.parameters)} (api.parameters)"
            )
    return {k: int(values[k]) if k == "top_k" else float(values[k]) for k in endpoint.parameters}


def sent_parameters(endpoint: ApiEndpoint, decoding: Decoding, max_tokens: int) -> dict:
    """The fields every request of ``decoding`` carries besides model, prompt and seed.

    Parameters
    ----------
    endpoint : ApiEndpoint
        The model's endpoint.
    decoding : Decoding
        The decoding's transforms.
    max_tokens : int
        The token budget of each reply.

    Returns
    -------
    dict
        The fields, as stored with the samples.
    """
    return {**endpoint.extra_body, **decoding_fields(endpoint, decoding), "max_tokens": max_tokens}


def request_body(endpoint: ApiEndpoint, decoding: Decoding, prompt: str, *, max_tokens: int,
                 seed: int, system: str | None = None) -> dict:
    """The JSON body of one request: ``prompt`` as the one user message (chat), after a system
    message ``system`` where one is given, or as the prompt (completions, which have no system
    turn: ``system`` is then put before the prompt, on a line of its own); ``seed`` is sent
    where ``api.seed`` is true.

    Parameters
    ----------
    endpoint : ApiEndpoint
        The model's endpoint.
    decoding : Decoding
        The decoding's transforms.
    prompt : str
        The rendered prompt.
    max_tokens : int
        The token budget of the reply.
    seed : int
        The request's seed (``request_seed``).
    system : str, optional
        The system turn's text.

    Returns
    -------
    dict
    """
    if endpoint.endpoint == "chat":
        turns = [] if system is None else [{"role": "system", "content": system}]
        text = {"messages": [*turns, {"role": "user", "content": prompt}]}
    else:
        text = {"prompt": prompt if system is None else f"{system}\n{prompt}"}
    body = {"model": endpoint.model, **text, **sent_parameters(endpoint, decoding, max_tokens)}
    if endpoint.seed:
        body["seed"] = seed
    return body


def request_seed(*parts: object) -> int:
    """A request's seed from the run's seed and the request's identity (e.g. ``seed, text_id,
    word_number, index``): CRC-32 of the parts joined by ``:``, in 31 bits (servers take int32).

    Parameters
    ----------
    *parts : object
        The run's seed and the request's identity, in order.

    Returns
    -------
    int
        In ``[0, 2**31)``.
    """
    return zlib.crc32(":".join(str(p) for p in parts).encode()) & 0x7FFFFFFF
