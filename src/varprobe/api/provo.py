"""Provo next words from a chat endpoint, in the two ways of Ilia & Aziz (2024), App. C.2.

*single*: ``n`` independent requests per context with prompt 1; the seed of request ``i`` is
``request_seed(seed, text_id, word_number, i)``. A reply is read like an external sample: its
first complete word with an implied leading space (``varprobe.words.first_word``); a reply with
no word is a failed draw, kept as a failed row. A reply cut by the token budget while its first
word is still open fails as ``token_budget``.

*list*: one request per context with prompt 2 asking for ``n`` words (seed
``request_seed(seed, text_id, word_number, 0)``), read by ``parse_word_list``; the first ``n``
words are the draws, extra words are dropped, and a shortfall leaves fewer draws (as the paper
reports for ChatGPT). Invalid items are no draws.

Both return a samples table (schema ``provo_samples``, one row per draw, count 1) and a
parse-statistics table (schema ``provo_api_parse``), one row per context:

* ``requested`` = n; ``replies``: replies received; ``truncated``: replies the budget cut;
  ``preamble``: replies with a dropped preamble (list mode);
* ``items``: answers given (single: one per reply; list: the parsed items);
  ``invalid``: items with no complete word; ``multiword``: items holding several words;
* ``valid`` = items - invalid; ``kept`` = min(valid, n) draws with a word; ``extra`` =
  valid - kept; ``shortfall`` = n - kept; ``failed``: failed rows of the samples table (single:
  = invalid; list: 0).

Replies are independent of the order of contexts and of the client's concurrency.
"""

from __future__ import annotations

import pandas as pd

from varprobe import tables
from varprobe.api.bodies import request_body, request_seed
from varprobe.api.client import ApiClient, Reply
from varprobe.api.word_lists import parse_word_list
from varprobe.sampling.decoding import Decoding
from varprobe.words import INCOMPLETE, Extraction, first_word, has_word_char


def provo_samples(client: ApiClient, contexts: pd.DataFrame, decoding: Decoding, *, n: int,
                  seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Samples and parse statistics of ``n`` draws per context (module docstring), in the mode
    of the client's endpoint (``api.provo.mode``).

    Parameters
    ----------
    client : ApiClient
        The model's client.
    contexts : pandas.DataFrame
        A ``provo_contexts`` table.
    decoding : Decoding
        The decoding's transforms.
    n : int
        Draws per context.
    seed : int
        The run's seed.

    Returns
    -------
    samples : pandas.DataFrame
        A ``provo_samples`` table.
    parses : pandas.DataFrame
        A ``provo_api_parse`` table: the parse statistics of the replies per context.

    Raises
    ------
    ValueError
        When ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"n_samples must be >= 1, got {n}")
    endpoint = client.endpoint
    prompting = endpoint.provo
    keys = list(zip(contexts["text_id"].astype(int), contexts["word_number"].astype(int), strict=True))
    per_context = n if prompting.mode == "single" else 1
    bodies = [
        request_body(endpoint, decoding, prompting.render(context, n),
                     max_tokens=prompting.token_budget(n), seed=request_seed(seed, t, w, i))
        for (t, w), context in zip(keys, contexts["context"], strict=True)
        for i in range(per_context)
    ]
    replies = client.replies(bodies, desc=f"{endpoint.name}/{decoding.name} provo {prompting.mode}")
    read = _single if prompting.mode == "single" else _list
    rows, stats = [], []
    for c, key in enumerate(keys):
        draws, counts = read(replies[c * per_context : (c + 1) * per_context], n)
        rows.extend({"text_id": key[0], "word_number": key[1], "sample_index": i, **d, "count": 1}
                    for i, d in enumerate(draws))
        stats.append({"text_id": key[0], "word_number": key[1], "mode": prompting.mode, **counts})
    samples = pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_samples"]))
    return samples, pd.DataFrame(stats, columns=list(tables.SCHEMAS["provo_api_parse"]))


def _statistics(n: int, replies: list[Reply], items: int, invalid: int, multiword: int,
                failed: int, preamble: int = 0) -> dict[str, int]:
    valid = items - invalid
    kept = min(valid, n)
    return {"requested": n, "replies": len(replies), "truncated": sum(r.truncated for r in replies),
            "preamble": preamble, "items": items, "invalid": invalid, "multiword": multiword,
            "valid": valid, "kept": kept, "extra": valid - kept, "shortfall": n - kept,
            "failed": failed}


def _single(replies: list[Reply], n: int) -> tuple[list[dict], dict[str, int]]:
    draws = []
    for reply in replies:
        extraction = first_word(" " + reply.text.lstrip(), ended=not reply.truncated)
        if extraction.status == INCOMPLETE:
            extraction = Extraction("token_budget")
        draws.append({"text": reply.text, "word": extraction.word, "failed": not extraction.word,
                      "failure": "" if extraction.word else extraction.status,
                      "n_tokens": reply.completion_tokens})
    multiword = sum(sum(has_word_char(t) for t in r.text.split()) > 1 for r in replies)
    failed = sum(d["failed"] for d in draws)
    return draws, _statistics(n, replies, len(replies), failed, multiword, failed)


def _list(replies: list[Reply], n: int) -> tuple[list[dict], dict[str, int]]:
    (reply,) = replies
    parsed = parse_word_list(reply.text, reply.truncated)
    valid = [item for item in parsed.items if item.word][:n]
    draws = [{"text": item.text, "word": item.word, "failed": False, "failure": "", "n_tokens": None}
             for item in valid]
    return draws, _statistics(n, replies, len(parsed.items), parsed.invalid, parsed.multiword, 0,
                              int(bool(parsed.preamble)))
