"""A causal LM's prompts for the generation engine: their keys/values and last logits, one prompt
per forward or several in one.

A prompt that starts with the job's shared prefix (``prefix``: the chat template and the
instruction before the input) and goes on past it runs its own tokens only, on top of the
prefix's keys/values (encoded once per encoder); any other runs whole.

**Several prompts in one forward.** A forward of a few dozen positions reads every weight of the
model for them alone, so on CPU a prompt's positions cost about as much as a decoding pass's rows
(the weights, not the arithmetic, set the pace). Where a row's bits do not depend on the other
rows of its products (``multiplies_packed``: every product of a float32 CPU model runs packed)
and the model's layers all attend causally through the configured attention function
(``TOGETHER_TYPES``), the own tokens of the next prompts, up to ``PROMPT_COLUMNS`` cache columns
of them (their prefixes included), run as one sequence: products, norms and position
embeddings treat each position alone, and the attention runs per prompt (``_attention``): its
queries over the prefix's keys/values and its own, the call a forward of the prompt alone makes.
So a prompt's keys/values are the same to the bit whichever prompts share its forward, and as
encoded alone (but for a prompt of one own token: alone, its products have one row). Its last
logits come from one output-layer product over the group's last positions, so they too keep their
bits in any company; a lone prompt runs twice, so that no product has a single row
(``tests/test_prompts.py``).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import torch
from transformers.cache_utils import DynamicCache
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, AttentionInterface

from varprobe.models.packing import multiplies_packed

PROMPT_COLUMNS = 1024
"""The most cache columns (each prompt's prefix included) of the prompts encoded in one forward:
it bounds the keys/values held for prompts whose samples wait for a cache row."""
TOGETHER_TYPES = frozenset({"llama"})
"""Model types (``config.model_type``) whose prompts may run several per forward: every layer
attends causally over all columns through ``config._attn_implementation``, positions come from
``position_ids`` and the logits are the output layer of the last hidden states. Others (sliding
windows, logit soft-capping, learned absolute positions with other conventions) run one prompt
per forward."""
ATTENTION = "varprobe_prompts"
"""The name ``_attention`` is registered under (``transformers.AttentionInterface``)."""

Encoding = tuple[torch.Tensor, torch.Tensor]
"""Keys and values, one tensor each: a prompt's ``(layers, heads, columns, head_dim)``, one
layer's ``(1, heads, columns, head_dim)``."""


@dataclass
class _Group:
    """The prompts of one forward: prompt i's own tokens are the forward's positions
    ``bounds[i]``, on top of the shared prefix's keys/values where ``shared[i]``; ``prefix``
    holds those per layer. ``_attention`` fills in each layer's keys and values per prompt."""

    bounds: list[tuple[int, int]]
    shared: list[bool]
    prefix: list[Encoding] | None
    keys: dict[int, list[torch.Tensor]] = field(default_factory=dict)
    values: dict[int, list[torch.Tensor]] = field(default_factory=dict)


def _attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask,
               group: _Group, **kwargs) -> tuple[torch.Tensor, None]:
    """Attention of each prompt of ``group`` alone: its queries over its columns (the prefix's
    keys/values, if it has them, then its own), through the model's SDPA attention with the mask a
    forward of that prompt alone gets (none, causal, for a prompt run whole; for one on top of
    the prefix of P columns, query i sees columns up to P + i). The output is the prompts' in
    order, ``(1, positions, heads, head_dim)``."""
    sdpa, layer, outputs = ALL_ATTENTION_FUNCTIONS["sdpa"], module.layer_idx, []
    keys, values = group.keys.setdefault(layer, []), group.values.setdefault(layer, [])
    for (start, end), shared in zip(group.bounds, group.shared, strict=True):
        past_keys, past_values = group.prefix[layer] if shared else (key[:, :, :0], value[:, :, :0])
        keys.append(torch.cat([past_keys, key[:, :, start:end]], dim=-2))
        values.append(torch.cat([past_values, value[:, :, start:end]], dim=-2))
        columns = keys[-1].shape[2]
        mask = (torch.ones(end - start, columns, dtype=torch.bool, device=query.device)
                .tril(columns - (end - start))[None, None] if shared else None)
        outputs.append(sdpa(module, query[:, :, start:end], keys[-1], values[-1], mask, **kwargs)[0])
    return torch.cat(outputs, dim=1), None


AttentionInterface.register(ATTENTION, _attention)


class PromptEncoder:
    """Prompts' keys/values and last logits under ``model``, with the shared ``prefix``
    (module docstring)."""

    def __init__(self, model, prefix: Sequence[int] = ()) -> None:
        self.model, self.prefix = model, list(prefix)
        self.device = next(model.parameters()).device
        self.together = (self.device.type == "cpu" and multiplies_packed(model)
                         and model.config.model_type in TOGETHER_TYPES)
        self._prefix_states: list[Encoding] | None = None

    def shared(self, ids: Sequence[int]) -> int:
        """The prefix tokens ``ids`` runs on top of: all of ``prefix`` if it starts with it and
        goes on past it, else none.

        Parameters
        ----------
        ids : sequence of int
            A prompt's token ids.

        Returns
        -------
        int
            The number of leading tokens taken from the prefix's cache (0 or ``len(prefix)``).
        """
        n = len(self.prefix)
        return n if len(ids) > n and list(ids[:n]) == self.prefix else 0

    def take(self, waiting: deque) -> list:
        """The inputs (with ``ids``) whose prompts are encoded next: the first of ``waiting``
        and, where prompts run together, those after it while their columns fit in
        ``PROMPT_COLUMNS``; taken off ``waiting``.

        Parameters
        ----------
        waiting : collections.deque
            The inputs waiting for their prompt's encoding, each with its ``ids``; shortened in place.

        Returns
        -------
        list
            The inputs taken, at least one.
        """
        group = [waiting.popleft()]
        columns = len(group[0].ids)
        while self.together and waiting and columns + len(waiting[0].ids) <= PROMPT_COLUMNS:
            columns += len(waiting[0].ids)
            group.append(waiting.popleft())
        return group

    @torch.inference_mode()
    def encode(self, prompts: Sequence[Sequence[int]]) -> list[tuple[Encoding, torch.Tensor]]:
        """Each prompt's keys/values and its last logits (1 x V): one forward for all of them
        where prompts run together, else one each. Their bits depend on the prompt alone.

        Parameters
        ----------
        prompts : sequence of sequence of int
            The prompts' token ids.

        Returns
        -------
        list of (Encoding, torch.Tensor)
            Per prompt, in order: its key/value cache and its last logits, shape ``(1, V)``.
        """
        if self.together:
            # A lone prompt runs twice: a product of one row (a prompt of one own token, or its
            # last position in the output layer) would round unlike a pass of two or more.
            return self._together(prompts if len(prompts) > 1 else [*prompts, *prompts])[: len(prompts)]
        return [self._alone(ids) for ids in prompts]

    def _alone(self, ids: Sequence[int]) -> tuple[Encoding, torch.Tensor]:
        """One prompt in a forward of its own, on top of the prefix's keys/values in a cache."""
        shared = self.shared(ids)
        cache = DynamicCache(config=self.model.config)
        if shared:
            for layer, (keys, values) in enumerate(self._prefix()):
                cache.update(keys, values, layer)
        out = self.model(input_ids=torch.tensor([ids[shared:]], device=self.device), past_key_values=cache,
                         use_cache=True, logits_to_keep=1)
        keys, values = zip(*_layers(out), strict=True)
        return (torch.cat(keys), torch.cat(values)), out.logits[:, -1]

    def _together(self, prompts: Sequence[Sequence[int]]) -> list[tuple[Encoding, torch.Tensor]]:
        """All ``prompts`` in one forward: their own tokens one after another, at their own
        positions, each attending on its own (``_attention``); logits at each one's last position."""
        starts = [self.shared(ids) for ids in prompts]
        own = [list(ids[start:]) for ids, start in zip(prompts, starts, strict=True)]
        ends = torch.tensor([len(ids) for ids in own]).cumsum(0).tolist()
        bounds = list(zip([0, *ends[:-1]], ends, strict=True))
        group = _Group(bounds, [start > 0 for start in starts], self._prefix() if any(starts) else None)
        positions = torch.cat([torch.arange(start, start + len(ids)) for start, ids in zip(starts, own, strict=True)])
        with self._attention(ATTENTION):
            out = self.model(input_ids=torch.tensor([list(itertools.chain(*own))], device=self.device),
                             position_ids=positions[None].to(self.device), use_cache=False,
                             logits_to_keep=torch.tensor(ends, device=self.device) - 1, group=group)
        layers = sorted(group.keys)
        return [((torch.cat([group.keys[layer][i] for layer in layers]),
                  torch.cat([group.values[layer][i] for layer in layers])), out.logits[:, i])
                for i in range(len(prompts))]

    def _prefix(self) -> list[Encoding]:
        """The shared prefix's keys and values per layer, encoded at the first call."""
        if self._prefix_states is None:
            out = self.model(input_ids=torch.tensor([self.prefix], device=self.device), use_cache=True,
                             logits_to_keep=1)
            self._prefix_states = _layers(out)
        return self._prefix_states

    @contextlib.contextmanager
    def _attention(self, name: str) -> Iterator[None]:
        """Within it the model attends through the attention function ``name``."""
        config, before = self.model.config, self.model.config._attn_implementation
        config._attn_implementation = name
        try:
            yield
        finally:
            config._attn_implementation = before


def _layers(out) -> list[Encoding]:
    """The keys and values per layer of a forward's cache."""
    return [(layer.keys, layer.values) for layer in out.past_key_values.layers]
