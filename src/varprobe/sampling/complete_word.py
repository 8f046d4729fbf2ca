"""The complete-word sampler: N draws of the first complete word a model writes after a context.

Ilia & Aziz (2024, Sec. 3) estimate a model's distribution over complete next words by drawing
token sequences until a word boundary, slicing off the first complete word and rejecting draws
that produce none. This module does that with three properties:

* **Shared prefixes.** The context is encoded once. Draws that have produced the same tokens so
  far have the same next-token distribution, so each step runs the network once per distinct
  prefix (a node of the prefix tree), not once per draw; a draw leaves the batch as soon as
  its word is complete or it fails.
* **Reproducibility.** Draw j of a context uses its own stream of uniforms
  ``U[j, t]`` (inverse-CDF sampling), seeded by ``(seed, context key)``. Which draws share a
  batch therefore cannot change any draw: the result depends on (seed, model, decoding,
  context) alone, not on the batch size or the order of contexts. The forward passes over
  generated tokens are cut from the prefix tree alone (each step's open nodes, in tree order,
  ``PASS_NODES`` at a time), never from the batch size, so floating-point rounding cannot differ
  between batch sizes either.
* **The shared encoding is never copied per draw.** A pass's rows attend to the chain's one
  encoding by broadcasting and to their own generated keys (``_prefix_attention``); the scores
  of both parts go through one softmax, so this is ordinary attention over the concatenation.
* **No truncated words.** A draw whose word is still open after ``max_tokens`` tokens fails
  as ``token_budget`` (see ``varprobe.words`` for the boundary rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, replace

import numpy as np
import torch
from transformers import AttentionInterface
from transformers.cache_utils import Cache, CacheLayerMixin

from varprobe.sampling.chains import prefix_chains
from varprobe.sampling.decoding import Decoding, UnusableWeights, inverse_cdf
from varprobe.sampling.word_model import WordModel
from varprobe.words import Extraction


CHAIN_DRAWS = 2048
"""At most this many draws (contexts x n_samples) are sampled from one shared encoding."""
PASS_NODES = {"cpu": 256, "cuda": 1024}
"""Open prefix-tree nodes per forward pass over generated tokens, per device type (other
devices: the CUDA count). A step's open nodes, in tree order, are cut into passes of this many
(the last pass of a step holds the rest), so the passes depend on the prefix tree alone."""
DISTRIBUTION_ROWS = 8
"""At most this many next-token distributions (float64 over the vocabulary) are computed at
once: small blocks reuse the allocator's memory, where a pass's worth of rows (100 MB for 256
rows of a 49k vocabulary) is fresh pages every time, which are slow to fill."""
ATTENTION = "varprobe_shared_prefix"
"""The name ``_prefix_attention`` is registered under in transformers' ``AttentionInterface``."""


@dataclass(frozen=True)
class Draw:
    """One sample: the decoded continuation, its first complete word (``""`` on failure) and
    the failure reason (``""`` when it produced a word)."""

    sample_index: int
    text: str
    _: KW_ONLY
    word: str
    failure: str
    n_tokens: int


def draw_rows(keys: Iterable[tuple[int, int]], drawn: Iterable[list[Draw]]) -> list[dict]:
    """The ``provo_samples`` rows of each context's draws, one row per draw with count 1; a draw
    without a word is ``failed``.

    Parameters
    ----------
    keys : iterable of (int, int)
        The contexts' ``(text_id, word_number)``.
    drawn : iterable of list of Draw
        ``CompleteWordSampler.sample_many``'s draws of the same contexts, in the same order.

    Returns
    -------
    list of dict
        The rows, context by context.
    """
    return [{"text_id": key[0], "word_number": key[1], "sample_index": d.sample_index, "text": d.text,
             "word": d.word, "failed": not d.word, "failure": d.failure, "n_tokens": d.n_tokens, "count": 1}
            for key, draws in zip(keys, drawn, strict=True) for d in draws]


@dataclass(frozen=True)
class SamplerSettings:
    """How many draws per context, the token budget per draw, the batch size and the seed.

    ``batch_size`` bounds memory only: the prefix-tree nodes whose next-token distributions
    (float64 over the vocabulary) are held at once, at most ``DISTRIBUTION_ROWS`` in any case.
    The forward passes do not depend on it (``PASS_NODES``) and each distribution is computed
    from its own row, so it changes no draw.
    """

    n_samples: int = 40
    max_tokens: int = 20
    batch_size: int = 256
    seed: int = 0

    def __post_init__(self) -> None:
        for key in ("n_samples", "max_tokens", "batch_size"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")


class CompleteWordSampler:
    """Draw complete next words from a causal LM under a decoding algorithm."""

    def __init__(self, lm: WordModel, decoding: Decoding, settings: SamplerSettings) -> None:
        self.lm = lm
        self.model, self.vocabulary, self.device = lm.model, lm.vocabulary, lm.device
        self.decoding = decoding
        self.settings = settings
        self.pass_nodes = PASS_NODES.get(self.device.type, PASS_NODES["cuda"])
        AttentionInterface.register(ATTENTION, _prefix_attention)

    def uniforms(self, key: Sequence[int]) -> np.ndarray:
        """The ``(n_samples, max_tokens)`` uniforms of the context with integer ``key``.

        Row j is the start of draw j's own stream (child j of ``SeedSequence([seed, *key])``),
        so a draw does not change when ``n_samples`` or ``max_tokens`` change.

        Parameters
        ----------
        key : sequence of int
            The context's key (``text_id, word_number``).

        Returns
        -------
        numpy.ndarray
            Uniforms in [0, 1), shape ``(n_samples, max_tokens)``.
        """
        children = np.random.SeedSequence([self.settings.seed, *key]).spawn(self.settings.n_samples)
        return np.stack([np.random.default_rng(c).random(self.settings.max_tokens) for c in children])

    def sample(self, key: Sequence[int], context: str) -> list[Draw]:
        """The ``n_samples`` draws for one context, ordered by sample index.

        Parameters
        ----------
        key : sequence of int
            The context's key (``text_id, word_number``).
        context : str
            The context text.

        Returns
        -------
        list of Draw
            ``n_samples`` draws.
        """
        return next(self.sample_many([(key, context)]))

    def sample_many(self, contexts: Iterable[tuple[Sequence[int], str]]) -> Iterator[list[Draw]]:
        """Yield the draws of each ``(key, context)`` in order.

        Every context is encoded first and checked against the model's positions
        (``WordModel.check_fits``, ``varprobe.models.window.check_window``: a context whose tokens and ``max_tokens``
        draws do not fit is refused, named with its key and lengths, before any draw).
        Consecutive contexts whose token ids extend one another (the prefixes of one passage)
        form a chain of at most ``CHAIN_DRAWS`` draws that is encoded once and sampled in one
        batch; see ``_draw_chain``. Chains never depend on ``batch_size``: the passage
        encoding a context reads, and the passes its draws run in, are computed for the same
        chain whatever the batch size, so the draws are the same to the bit.

        Parameters
        ----------
        contexts : iterable of (sequence of int, str)
            ``(key, context)`` of each context.

        Yields
        ------
        list of Draw
            The ``n_samples`` draws of each context, in order.
        """
        encoded = [(key, context, self.lm.encode(context)) for key, context in contexts]
        self.lm.check_fits(((f"context ({', '.join(map(str, key))}) ({len(context.split()):,} words)", len(ids))
                            for key, context, ids in encoded),
                           self.settings.max_tokens)
        limit = max(1, CHAIN_DRAWS // self.settings.n_samples)
        for chain in prefix_chains(encoded, lambda item: item[2], limit):
            yield from self._sample_chain([(key, ids) for (key, _, _), ids in chain])

    def _sample_chain(self, chain: list[tuple[Sequence[int], list[int]]]) -> list[list[Draw]]:
        """``_draw_chain``; where a next-token distribution is unusable (``UnusableWeights``), an
        error naming the chain's contexts."""
        try:
            return self._draw_chain(chain)
        except UnusableWeights as error:
            raise ValueError(f"contexts {[tuple(key) for key, _ in chain]}: {error}") from error

    @torch.inference_mode()
    def _draw_chain(self, chain: list[tuple[Sequence[int], list[int]]]) -> list[list[Draw]]:
        """Draw for contexts whose ids are prefixes of the last one's.

        The last (longest) context is run through the network once. Context c of length L_c
        reads its first next-token distribution at position L_c - 1 and attends to positions
        [0, L_c) of that shared encoding; its draws' own tokens follow at positions L_c,
        L_c + 1, ... (explicit position ids). Step t runs the open nodes of every context in
        the chain, in tree order, ``pass_nodes`` per pass, and draws their children pass by
        pass.
        """
        settings = self.settings
        lengths = [len(ids) for _, ids in chain]
        ends = torch.tensor([n - 1 for n in lengths], device=self.device)
        out = self.model(input_ids=torch.tensor([chain[-1][1]], device=self.device), use_cache=True,
                         logits_to_keep=ends)
        shared = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        uniforms = [self.uniforms(key) for key, _ in chain]
        draws: list[dict[int, Draw]] = [{} for _ in chain]
        roots = [_Node(c, (), np.arange(settings.n_samples), None) for c in range(len(chain))]
        frontier = self._branch(roots, out.logits[0], 0, uniforms, draws)
        own: list | None = None
        for step in range(1, settings.max_tokens):
            if not frontier:
                break
            grown, parts = [], []
            for start in range(0, len(frontier), self.pass_nodes):
                nodes = frontier[start : start + self.pass_nodes]
                logits, keys_values = self._forward(nodes, shared, lengths, step - 1, own)
                placed = [replace(node, kv=start + i) for i, node in enumerate(nodes)]
                grown.extend(self._branch(placed, logits, step, uniforms, draws))
                parts.append(keys_values)
            own = [tuple(torch.cat(kv, 0) for kv in zip(*layer, strict=True)) for layer in zip(*parts, strict=True)]
            frontier = grown
        for node in frontier:
            self._finish(draws[node.context], node, Extraction("token_budget"))
        return [[d[j] for j in range(settings.n_samples)] for d in draws]

    def _branch(self, nodes: list[_Node], logits: torch.Tensor, step: int, uniforms: list[np.ndarray],
                draws: list[dict[int, Draw]]) -> list[_Node]:
        """Draw token ``step`` of every draw of ``nodes`` from the nodes' next-token ``logits``
        (one row each; ``batch_size`` or ``DISTRIBUTION_ROWS`` distributions at a time); record
        the draws that are done and return the still open children, in tree order (by parent,
        then token id)."""
        children = []
        block = min(self.settings.batch_size, DISTRIBUTION_ROWS)
        for start in range(0, len(nodes), block):
            part = nodes[start : start + block]
            cdf = self.decoding.probabilities(logits[start : start + len(part)]).cumsum(-1)
            picked = _inverse_cdf(cdf, [uniforms[node.context][node.rows, step] for node in part])
            for node, tokens in zip(part, picked, strict=True):
                for token in np.unique(tokens):
                    child = _Node(node.context, (*node.prefix, int(token)), node.rows[tokens == token], node.kv)
                    status = self.vocabulary.read(child.prefix)
                    if status.done:
                        self._finish(draws[node.context], child, status)
                    else:
                        children.append(child)
        return children

    def _forward(self, nodes: list[_Node], shared: list, lengths: list[int], generated: int,
                 own: list | None) -> tuple[torch.Tensor, list]:
        """One pass over the newest token of each of ``nodes``, which have ``generated`` earlier
        own tokens (their parents' keys/values sit in ``own``, one ``(keys, values)`` per layer
        indexed by ``node.kv``). Returns the nodes' next-token logits and their own keys/values
        after this token."""
        context_lengths = torch.tensor([lengths[n.context] for n in nodes], device=self.device)
        passage = shared[0][0].shape[2]
        columns = torch.arange(passage, device=self.device)
        mask = torch.zeros(len(nodes), 1, 1, passage, dtype=shared[0][0].dtype, device=self.device)
        mask.masked_fill_(columns >= context_lengths[:, None, None, None], -torch.inf)
        if own is None:
            layers = [_OwnLayer(None, None, passage) for _ in shared]
        else:
            index = torch.tensor([n.kv for n in nodes], device=self.device)
            layers = [_OwnLayer(k.index_select(0, index), v.index_select(0, index), passage) for k, v in own]
        with _attention(self.model, ATTENTION):
            out = self.model(
                input_ids=torch.tensor([[n.prefix[-1]] for n in nodes], device=self.device),
                past_key_values=Cache(layers=layers),
                attention_mask=mask,
                position_ids=(context_lengths + generated)[:, None],
                use_cache=True,
                shared_prefix=shared,
            )
        return out.logits[:, -1], [(layer.keys, layer.values) for layer in layers]

    def _finish(self, draws: dict[int, Draw], node: _Node, status: Extraction) -> None:
        text = self.vocabulary.text(node.prefix)
        failure = "" if status.word else status.status
        for row in node.rows:
            draws[int(row)] = Draw(int(row), text, word=status.word, failure=failure, n_tokens=len(node.prefix))


@dataclass(frozen=True)
class _Node:
    """A prefix-tree node: the draws of one context that generated the same tokens so far.

    ``kv`` is the row of the node's own keys/values (or, for a child not yet run, its parent's)
    among the last step's, or None before any generated token was run through the network.
    """

    context: int
    prefix: tuple[int, ...]
    rows: np.ndarray
    kv: int | None


class _OwnLayer(CacheLayerMixin):
    """One layer's generated keys and values of a pass's rows, ``(rows, heads, g, head_dim)``;
    the shared encoding's ``passage`` positions come before them but stay out of this cache
    (``_prefix_attention`` reads them). ``update`` appends the new token's and returns the rows'
    own keys/values only."""

    is_sliding = False

    def __init__(self, keys: torch.Tensor | None, values: torch.Tensor | None, passage: int) -> None:
        super().__init__()
        self.keys, self.values, self.passage = keys, values, passage
        self.is_initialized = True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        raise AssertionError("initialised at construction")

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if self.keys is None:
            self.keys, self.values = key_states, value_states
        else:
            self.keys = torch.cat([self.keys, key_states], 2)
            self.values = torch.cat([self.values, value_states], 2)
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.passage + (0 if self.keys is None else self.keys.shape[2])

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.get_seq_length() + query_length, 0

    def get_max_length(self) -> int:
        return -1


@contextmanager
def _attention(model, name: str) -> Iterator[None]:
    """Run ``model`` with the attention function registered as ``name``, then restore its own."""
    config = model.config
    before = config._attn_implementation
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = before


def _prefix_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      attention_mask: torch.Tensor, scaling: float | None = None, dropout: float = 0.0,
                      shared_prefix: list | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """Attention of one new token per row over the chain's shared encoding and the row's own
    generated keys (an ``AttentionInterface`` function).

    ``query`` is ``(R, H, 1, d)``; ``key``/``value`` are the rows' own keys/values
    ``(R, K, g, d)`` (this token's included); ``shared_prefix[layer]`` holds the encoding's
    ``(1, K, P, d)`` keys and values, read by every row through a broadcast product (query head
    h reads key head ``h // (H / K)``); ``attention_mask`` ``(R, 1, 1, P)`` is 0 where a row may
    attend to the encoding and -inf past its context. With scores s = scaling * q . k over both
    parts, the output is softmax([s_shared + mask, s_own]) . [v_shared, v_own], the softmax in
    float32 (as transformers' eager attention): exactly attention over the concatenation.
    """
    unsupported = {k: kwargs[k] for k in ("softcap", "s_aux") if kwargs.get(k) is not None}
    window = kwargs.get("sliding_window")
    if unsupported or dropout or (window is not None and window < attention_mask.shape[-1] + key.shape[2]):
        raise NotImplementedError(
            f"the complete-word sampler's shared-prefix attention supports plain causal attention only; "
            f"{type(module).__name__} asked for {unsupported or {'dropout': dropout, 'sliding_window': window}}")
    shared_keys, shared_values = shared_prefix[module.layer_idx]
    rows, heads, _, dim = query.shape
    kv_heads, passage = shared_keys.shape[1], shared_keys.shape[2]
    group = heads // kv_heads
    scaling = dim**-0.5 if scaling is None else scaling
    q = query.reshape(rows, kv_heads, group, dim)
    q_shared = q.permute(1, 0, 2, 3).reshape(kv_heads, rows * group, dim)
    scores_shared = torch.bmm(q_shared, shared_keys[0].transpose(1, 2)).view(kv_heads, rows, group, passage)
    scores = torch.cat([scores_shared.permute(1, 0, 2, 3) * scaling + attention_mask,
                        torch.matmul(q, key.transpose(2, 3)) * scaling], -1)
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    probs_shared = probs[..., :passage].permute(1, 0, 2, 3).reshape(kv_heads, rows * group, passage)
    out = torch.bmm(probs_shared, shared_values[0]).view(kv_heads, rows, group, dim).permute(1, 0, 2, 3)
    out = out + torch.matmul(probs[..., passage:], value)
    return out.reshape(rows, heads, 1, dim).transpose(1, 2), None


def _inverse_cdf(cdf: torch.Tensor, uniforms: list[np.ndarray]) -> list[np.ndarray]:
    """Per row of ``cdf`` (nodes x V, unnormalised cumulative sums), its token ids ``F^{-1}(u)``
    for its own number of uniforms u (``decoding.inverse_cdf`` over uniforms padded to a
    rectangle)."""
    width = max(len(u) for u in uniforms)
    padded = np.zeros((len(uniforms), width))
    for i, u in enumerate(uniforms):
        padded[i, : len(u)] = u
    picked = inverse_cdf(cdf, torch.as_tensor(padded, dtype=cdf.dtype, device=cdf.device)).cpu().numpy()
    return [row[: len(u)] for row, u in zip(picked, uniforms, strict=True)]
