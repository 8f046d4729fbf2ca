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
  context) alone, not on the batch size or the order of contexts. Every forward pass over
  generated tokens has the same number of rows (``PASS_ROWS``), whatever the batch size, so
  floating-point rounding cannot differ between batch sizes either.
* **No truncated words.** A draw whose word is still open after ``max_tokens`` tokens fails
  as ``token_budget`` (see ``varprobe.words`` for the boundary rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers import DynamicCache

from varprobe.sampling.decoding import Decoding
from varprobe.words import INCOMPLETE, Extraction, first_word


CHAIN_DRAWS = 2048
"""At most this many draws (contexts x n_samples) are sampled from one shared encoding."""
PASS_ROWS = {"cpu": 32, "cuda": 128}
"""Rows of every forward pass over generated tokens, per device type (a short pass repeats its
last row; other devices: the CUDA count). Matrix products round a row differently depending on
how many rows they multiply, so a fixed count keeps every draw the same to the bit whatever the
batch size (on a given device). The enumerator's passes have the same counts."""


@dataclass(frozen=True)
class Draw:
    """One sample: the decoded continuation, its first complete word (``""`` on failure) and
    the failure reason (``""`` when it produced a word)."""

    sample_index: int
    text: str
    word: str
    failure: str
    n_tokens: int


@dataclass(frozen=True)
class SamplerSettings:
    """How many draws per context, the token budget per draw, the batch size and the seed.

    ``batch_size`` bounds memory only: the prefix-tree nodes whose next-token distributions
    (float64 over the vocabulary) are held at once. Forward passes always have ``PASS_ROWS``
    rows, and the distributions are computed row by row, so it changes no draw.
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


def special_ids(tokenizer) -> set[int]:
    """The ids of every special (control) token: the tokenizer's ``all_special_ids``, its added
    tokens marked ``special`` (SmolLM2's ``<|im_start|>``, ``<|endoftext|>``, ...) and its
    end-of-sequence id(s)."""
    eos = tokenizer.eos_token_id
    added = getattr(tokenizer, "added_tokens_decoder", {})
    return ({eos} if isinstance(eos, int) else set(eos or ())) | set(tokenizer.all_special_ids) | {
        i for i, token in added.items() if getattr(token, "special", False)
    }


class Vocabulary:
    """Decoding of generated token ids into the text that follows the context.

    Every special token (``special_ids``) ends the text: it is no text itself, and the draw's
    word is read as of the end of text (``first_word`` with ``ended``). Continuations are
    decoded behind a fixed reference token and the reference's text is cut off, so tokenizers
    that drop a leading space when decoding a lone word piece (SentencePiece) still show the
    word boundary.
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.reference = tokenizer.encode("a", add_special_tokens=False)[-1:]
        self.prefix = tokenizer.decode(self.reference)
        self.special = special_ids(tokenizer)

    def text(self, ids: Sequence[int]) -> str:
        """The continuation text of generated ``ids`` (special tokens excluded)."""
        body = [i for i in ids if i not in self.special]
        return self.tokenizer.decode(self.reference + body)[len(self.prefix) :]

    def read(self, ids: Sequence[int]) -> Extraction:
        """The first-word status of a continuation after generated ``ids``; a special token
        ends it."""
        ended = bool(ids) and ids[-1] in self.special
        text = self.text(ids)
        if text.endswith("\ufffd") and not ended:
            return Extraction(INCOMPLETE)  # a multi-byte character still being spelled
        return first_word(text, ended)


class CompleteWordSampler:
    """Draw complete next words from a causal LM under a decoding algorithm."""

    def __init__(self, model, tokenizer, decoding: Decoding, settings: SamplerSettings) -> None:
        self.model = model
        self.vocabulary = Vocabulary(tokenizer)
        self.tokenizer = tokenizer
        self.decoding = decoding
        self.settings = settings
        self.device = next(model.parameters()).device
        self.pass_rows = PASS_ROWS.get(self.device.type, PASS_ROWS["cuda"])

    def uniforms(self, key: Sequence[int]) -> np.ndarray:
        """The ``(n_samples, max_tokens)`` uniforms of the context with integer ``key``.

        Row j is the start of draw j's own stream (child j of ``SeedSequence([seed, *key])``),
        so a draw does not change when ``n_samples`` or ``max_tokens`` change.
        """
        children = np.random.SeedSequence([self.settings.seed, *key]).spawn(self.settings.n_samples)
        return np.stack([np.random.default_rng(c).random(self.settings.max_tokens) for c in children])

    def encode(self, context: str) -> list[int]:
        """Token ids of a context, with the tokenizer's default special tokens."""
        return list(self.tokenizer(context)["input_ids"])

    def sample(self, key: Sequence[int], context: str) -> list[Draw]:
        """The ``n_samples`` draws for one context, ordered by sample index."""
        return self._sample_chain([(key, self.encode(context))])[0]

    def sample_many(self, contexts: Iterable[tuple[Sequence[int], str]]) -> Iterator[list[Draw]]:
        """Yield the draws of each ``(key, context)`` in order.

        Consecutive contexts whose token ids extend one another (the prefixes of one passage)
        form a chain of at most ``CHAIN_DRAWS`` draws that is encoded once and sampled in one
        batch; see ``_sample_chain``. Chains never depend on ``batch_size``: the passage
        encoding a context reads is computed for the same chain whatever the batch size, so
        the draws are the same to the bit.
        """
        limit = max(1, CHAIN_DRAWS // self.settings.n_samples)
        chain: list[tuple[Sequence[int], list[int]]] = []
        for key, context in contexts:
            ids = self.encode(context)
            if chain and (len(chain) == limit or ids[: len(chain[-1][1])] != chain[-1][1]):
                yield from self._sample_chain(chain)
                chain = []
            chain.append((key, ids))
        if chain:
            yield from self._sample_chain(chain)

    @torch.inference_mode()
    def _sample_chain(self, chain: list[tuple[Sequence[int], list[int]]]) -> list[list[Draw]]:
        """Draw for contexts whose ids are prefixes of the last one's.

        The last (longest) context is run through the network once. Context c of length L_c
        reads its first next-token distribution at position L_c - 1 and attends to positions
        [0, L_c) of that shared cache; its draws' own tokens follow at positions L_c, L_c + 1,
        ... (explicit position ids, the positions in between masked out). Every open draw of
        every context in the chain then advances in the same batches.
        """
        settings = self.settings
        lengths = [len(ids) for _, ids in chain]
        out = self.model(input_ids=torch.tensor([chain[-1][1]], device=self.device), use_cache=True)
        shared = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        logits = out.logits[0, [n - 1 for n in lengths]]
        uniforms = [self.uniforms(key) for key, _ in chain]
        nodes = [_Node(c, (), np.arange(settings.n_samples), None) for c in range(len(chain))]
        draws: list[dict[int, Draw]] = [{} for _ in chain]
        children: list[_Node] = []
        batches: list = []
        for step in range(settings.max_tokens):
            children = []
            for start in range(0, len(nodes), settings.batch_size):
                cdf = self.decoding.probabilities(logits[start : start + settings.batch_size]).cumsum(-1)
                for node, row_cdf in zip(nodes[start : start + settings.batch_size], cdf, strict=False):
                    tokens = _inverse_cdf(row_cdf, uniforms[node.context][node.rows, step])
                    for token in np.unique(tokens):
                        child = _Node(node.context, (*node.prefix, int(token)),
                                      node.rows[tokens == token], node.kv)
                        status = self.vocabulary.read(child.prefix)
                        if status.done:
                            self._finish(draws[node.context], child, status)
                        else:
                            children.append(child)
            if step + 1 == settings.max_tokens or not children:
                break
            logits, nodes, batches = self._advance(children, shared, lengths, step, batches)
        for child in children:
            self._finish(draws[child.context], child, Extraction("token_budget"))
        return [[d[j] for j in range(settings.n_samples)] for d in draws]

    def _advance(self, children: list[_Node], shared: list, lengths: list[int], generated: int,
                 previous: list):
        """Run the network on the newest token of each open node, in passes of ``pass_rows``
        rows (the last pass repeats its last node; the repeats' outputs are not used).

        ``previous`` holds the last step's per-pass generated keys/values, where the parents'
        are. Returns the nodes' next-token logits, the nodes (each now pointing at its own
        keys/values: ``generated + 1`` positions after the shared prefix) and their passes.
        """
        # Every pass has the same rows whatever the batch size, and every row attends over the
        # whole shared encoding (positions past a context's end are masked): each node's
        # logits are computed by the same operations on the same shapes.
        passage = shared[0][0].shape[2]
        parts, advanced, batches = [], [], []
        for start in range(0, len(children), self.pass_rows):
            nodes = children[start : start + self.pass_rows]
            chunk = nodes + nodes[-1:] * (self.pass_rows - len(nodes))
            size = len(chunk)
            context_lengths = torch.tensor([lengths[n.context] for n in chunk], device=self.device)
            layers = []
            for index, (keys, values) in enumerate(shared):
                keys, values = keys.expand(size, -1, -1, -1), values.expand(size, -1, -1, -1)
                if generated:
                    own_keys, own_values = _gather(previous, chunk, index)
                    keys, values = torch.cat([keys, own_keys], 2), torch.cat([values, own_values], 2)
                layers.append((keys, values))
            mask = torch.ones(size, passage + generated + 1, dtype=torch.long, device=self.device)
            mask[:, :passage] = torch.arange(passage, device=self.device) < context_lengths[:, None]
            out = self.model(
                input_ids=torch.tensor([[n.prefix[-1]] for n in chunk], device=self.device),
                past_key_values=DynamicCache(layers, config=self.model.config),
                attention_mask=mask,
                position_ids=(context_lengths + generated)[:, None],
                use_cache=True,
            )
            batch = len(batches)
            batches.append(
                [(layer.keys[:, :, passage:], layer.values[:, :, passage:]) for layer in out.past_key_values.layers]
            )
            parts.append(out.logits[: len(nodes), -1, :])
            advanced.extend(_Node(n.context, n.prefix, n.rows, (batch, i)) for i, n in enumerate(nodes))
        return torch.cat(parts), advanced, batches

    def _finish(self, draws: dict[int, Draw], node: _Node, status: Extraction) -> None:
        text = self.vocabulary.text(node.prefix)
        failure = "" if status.word else status.status
        for row in node.rows:
            draws[int(row)] = Draw(int(row), text, status.word, failure, len(node.prefix))


@dataclass(frozen=True)
class _Node:
    """A prefix-tree node: the draws of one context that generated the same tokens so far.

    ``kv`` locates the node's own keys/values (batch, row) among the last step's outputs, or
    is None before any generated token was run through the network.
    """

    context: int
    prefix: tuple[int, ...]
    rows: np.ndarray
    kv: tuple[int, int] | None


def _inverse_cdf(cdf: torch.Tensor, u: np.ndarray) -> np.ndarray:
    """Token ids ``F^{-1}(u)``: the first index whose cumulative probability exceeds ``u``."""
    target = torch.as_tensor(u, dtype=cdf.dtype, device=cdf.device) * cdf[-1]
    picked = torch.searchsorted(cdf, target, right=True).clamp_(max=cdf.numel() - 1)
    return picked.cpu().numpy()


def _gather(batches: list, chunk: list[_Node], layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The generated keys and values of each node's parent in ``chunk``, for one layer.

    Parents sit in the previous step's batches; consecutive parents of one batch are gathered
    with one ``index_select``.
    """
    runs: list[tuple[int, list[int]]] = []
    for node in chunk:
        batch, row = node.kv
        if runs and runs[-1][0] == batch:
            runs[-1][1].append(row)
        else:
            runs.append((batch, [row]))
    keys, values = [], []
    for batch, rows in runs:
        stored_keys, stored_values = batches[batch][layer]
        index = torch.tensor(rows, device=stored_keys.device)
        keys.append(stored_keys.index_select(0, index))
        values.append(stored_values.index_select(0, index))
    return torch.cat(keys), torch.cat(values)
