"""Attention functions the samplers run a model's forward with, through transformers'
``AttentionInterface`` (the model's own projections, positions and layers around them)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial

import torch
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, AttentionInterface

ROW_GROUPS = "varprobe_row_groups"
"""The prefix of the names ``row_group_attention`` is registered under, one per wrapped
attention function (``row_group_attention_name``)."""


@contextmanager
def using(model, name: str | None) -> Iterator[None]:
    """Run ``model`` with the attention function registered as ``name`` (None: its own), then
    restore its own."""
    if name is None:
        yield
        return
    config = model.config
    before = config._attn_implementation
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = before


def row_group_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor | None, *, inner: str, row_groups: Sequence[tuple[int, int, int]] = (),
                        **kwargs) -> tuple[torch.Tensor, None]:
    """The attention function registered as ``inner``, run once per group of rows over the group's own columns.

    ``row_groups`` holds ``(start, stop, span)``: rows ``start:stop`` of the pass attend over
    the first ``span`` columns of ``key``/``value`` (and of the mask), the columns past a group's
    own longest row being masked for every row of it. A masked column adds an exact zero to a
    row's softmax and its sum of values, so each row's output is what ``inner`` gives it over
    all the columns (``tests/test_generate.py`` checks this on the machine that runs it); the
    groups only skip work. Without groups (a forward that does not pass them) it is ``inner``.
    """
    attention = one_query_attention if _plain(query, attention_mask, kwargs) else ALL_ATTENTION_FUNCTIONS[inner]
    if len(row_groups) < 2:
        return attention(module, query, key, value, attention_mask, **kwargs)
    outputs = [attention(module, query[start:stop], key[start:stop, :, :span], value[start:stop, :, :span],
                     None if attention_mask is None else attention_mask[start:stop, ..., :span], **kwargs)[0]
               for start, stop, span in row_groups]
    return torch.cat(outputs), None


def row_group_attention_name(model) -> str | None:
    """The name under which ``row_group_attention`` wraps ``model``'s own attention function
    (registered with that function's mask builder), or None where its attention is not one
    transformers registers globally with a mask builder (a model's own eager attention): its
    passes then run as one group."""
    own = model.config._attn_implementation
    if own not in ALL_ATTENTION_FUNCTIONS._global_mapping or own not in ALL_MASK_ATTENTION_FUNCTIONS._global_mapping:
        return None
    name = f"{ROW_GROUPS}_{own}"
    if name not in ALL_ATTENTION_FUNCTIONS._global_mapping:
        AttentionInterface.register(name, partial(row_group_attention, inner=own))
        ALL_MASK_ATTENTION_FUNCTIONS.register(name, ALL_MASK_ATTENTION_FUNCTIONS[own])
    return name


def _plain(query: torch.Tensor, attention_mask: torch.Tensor | None, kwargs: dict) -> bool:
    """Whether ``one_query_attention`` computes what the model asks for: one query per row, a
    mask, and no softcap, sinks, dropout or position bias."""
    extras = ("softcap", "s_aux", "sinks", "position_bias")
    return (query.shape[2] == 1 and attention_mask is not None and not kwargs.get("dropout")
            and all(kwargs.get(k) is None for k in extras))


def one_query_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor, scaling: float | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """Attention of one query per row: softmax(scaling * q . k + mask) . v over the row's columns,
    the softmax in float32 (as transformers' eager attention), as two batched products.

    ``query`` ``(R, H, 1, d)``; ``key``/``value`` ``(R, K, S, d)`` with query head h reading key
    head ``h // (H / K)``; ``attention_mask`` ``(R, 1, 1, S)``, boolean (True: attend) or
    additive. Returns ``(R, 1, H, d)`` as transformers' attention functions do.
    """
    rows, heads, _, dim = query.shape
    kv_heads, columns = key.shape[1], key.shape[2]
    scaling = dim**-0.5 if scaling is None else scaling
    q = query.reshape(rows, kv_heads, heads // kv_heads, dim)
    scores = torch.matmul(q, key.transpose(2, 3)) * scaling
    if attention_mask.dtype == torch.bool:
        scores = scores.masked_fill(~attention_mask[..., :columns], float("-inf"))
    else:
        scores = scores + attention_mask[..., :columns]
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(probs, value).view(rows, 1, heads, dim), None
