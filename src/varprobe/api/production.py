"""N full productions per input from an endpoint (Giulianelli et al. 2023), under a decoding.

Production ``j`` of input ``input_id`` is one request with the rendered prompt, the decoding's
fields (``bodies.request_body``), ``max_tokens`` = the token budget and seed
``request_seed(seed, input_id, j)``; so the productions do not depend on the order of inputs, on
the other inputs or on the client's concurrency. Like ``varprobe.sampling.generate.generate``,
each production is the reply's text with outer whitespace removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from varprobe.api.bodies import request_body, request_seed
from varprobe.api.client import ApiClient
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.replies import cut_reply


def api_productions(client: ApiClient, work: Sequence[tuple[str, str]], decoding: Decoding, *,
                    n_samples: int, max_new_tokens: int, seed: int, system: str | None = None,
                    reply: str = "whole") -> list[list[str]]:
    """For each ``(input_id, prompt)`` of ``work``: ``n_samples`` productions, in order, each
    reply cut by ``varprobe.sampling.replies.cut_reply``.

    Parameters
    ----------
    client : ApiClient
        The model's client.
    work : sequence of (str, str)
        ``(input_id, rendered prompt)`` pairs.
    decoding : Decoding
        The decoding's transforms.
    n_samples : int
        Productions per input.
    max_new_tokens : int
        Token budget of each production.
    seed : int
        The run's seed (``request_seed``).
    system : str, optional
        The system turn of each request (``request_body``).
    reply : str, optional
        How a reply is cut (``varprobe.sampling.replies.REPLIES``).

    Returns
    -------
    list of list of str
        ``n_samples`` productions per input, in the order of ``work``.

    Raises
    ------
    ValueError
        When ``n_samples`` or ``max_new_tokens`` is below 1.
    """
    if n_samples < 1 or max_new_tokens < 1:
        raise ValueError(f"n_samples and max_new_tokens must be >= 1, got {n_samples}, {max_new_tokens}")
    bodies = [
        request_body(client.endpoint, decoding, prompt, max_tokens=max_new_tokens,
                     seed=request_seed(seed, input_id, j), system=system)
        for input_id, prompt in work
        for j in range(n_samples)
    ]
    texts = [cut_reply(r.text, reply) for r in client.replies(bodies, desc=f"{client.endpoint.name}/{decoding.name}")]
    return [texts[i * n_samples : (i + 1) * n_samples] for i in range(len(work))]
