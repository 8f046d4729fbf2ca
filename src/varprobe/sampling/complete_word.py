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
  context) alone, not on the batch size or the order of contexts.
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
    """How many draws per context, the token budget per draw, the batch size and the seed."""

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


class _Vocabulary:
    """Decoding of generated token ids into the text that follows the context.

    Continuations are decoded behind a fixed reference token and the reference's text is cut
    off, so tokenizers that drop a leading space when decoding a lone word piece
    (SentencePiece) still show the word boundary.
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.reference = tokenizer.encode("a", add_special_tokens=False)[-1:]
        self.prefix = tokenizer.decode(self.reference)
        eos = tokenizer.eos_token_id
        self.eos = {eos} if isinstance(eos, int) else set(eos or ())

    def text(self, ids: Sequence[int]) -> str:
        """The continuation text of generated ``ids`` (end-of-sequence tokens excluded)."""
        body = [i for i in ids if i not in self.eos]
        return self.tokenizer.decode(self.reference + body)[len(self.prefix) :]

    def read(self, ids: Sequence[int]) -> Extraction:
        """The first-word status of a continuation after generated ``ids``."""
        ended = bool(ids) and ids[-1] in self.eos
        text = self.text(ids)
        if text.endswith("\ufffd") and not ended:
            return Extraction(INCOMPLETE)  # a multi-byte character still being spelled
        return first_word(text, ended)


class CompleteWordSampler:
    """Draw complete next words from a causal LM under a decoding algorithm."""

    def __init__(self, model, tokenizer, decoding: Decoding, settings: SamplerSettings) -> None:
        self.model = model
        self.vocabulary = _Vocabulary(tokenizer)
        self.tokenizer = tokenizer
        self.decoding = decoding
        self.settings = settings
        self.device = next(model.parameters()).device

    def uniforms(self, key: Sequence[int]) -> np.ndarray:
        """The ``(n_samples, max_tokens)`` uniforms of the context with integer ``key``.

        Row j is the start of draw j's own stream (child j of ``SeedSequence([seed, *key])``),
        so a draw does not change when ``n_samples`` or ``max_tokens`` change.
        """
        children = np.random.SeedSequence([self.settings.seed, *key]).spawn(self.settings.n_samples)
        return np.stack([np.random.default_rng(c).random(self.settings.max_tokens) for c in children])

    def sample_many(self, contexts: Iterable[tuple[Sequence[int], str]]) -> Iterator[list[Draw]]:
        """Yield the draws of each ``(key, context)`` in order."""
        for key, context in contexts:
            yield self.sample(key, context)

    @torch.inference_mode()
    def sample(self, key: Sequence[int], context: str) -> list[Draw]:
        """The ``n_samples`` draws for one context, ordered by sample index."""
        settings = self.settings
        u = self.uniforms(key)
        ids = self.tokenizer(context, return_tensors="pt")["input_ids"].to(self.device)
        out = self.model(input_ids=ids, use_cache=True)
        # A group is a batch of prefix-tree nodes sharing one KV cache: (cache, logits, nodes),
        # a node being (generated ids, indices of the draws at that node).
        groups = [(out.past_key_values, out.logits[:, -1, :], [((), np.arange(settings.n_samples))])]
        draws: dict[int, Draw] = {}
        for step in range(settings.max_tokens):
            children = []
            for cache, logits, nodes in groups:
                probs = self.decoding.probabilities(logits.float())
                for parent, (prefix, rows) in enumerate(nodes):
                    tokens = _inverse_cdf(probs[parent], u[rows, step])
                    for token in np.unique(tokens):
                        child_rows = rows[tokens == token]
                        child = (*prefix, int(token))
                        status = self.vocabulary.read(child)
                        if status.done:
                            for row in child_rows:
                                draws[int(row)] = self._draw(int(row), child, status)
                        else:
                            children.append((cache, parent, child, child_rows))
            if step + 1 == settings.max_tokens or not children:
                break
            groups = list(self._advance(children))
        budget = Extraction("token_budget")
        for _, _, prefix, rows in children:
            for row in rows:
                draws.setdefault(int(row), self._draw(int(row), prefix, budget))
        return [draws[j] for j in range(settings.n_samples)]

    def _advance(self, children: list) -> Iterator[tuple]:
        """Run the network on the last token of each open node, ``batch_size`` nodes at a time."""
        size = self.settings.batch_size
        for start in range(0, len(children), size):
            chunk = children[start : start + size]
            cache = _select(chunk, self.model.config)
            tokens = torch.tensor([[c[2][-1]] for c in chunk], device=self.device)
            out = self.model(input_ids=tokens, past_key_values=cache, use_cache=True)
            yield out.past_key_values, out.logits[:, -1, :], [(c[2], c[3]) for c in chunk]

    def _draw(self, row: int, ids: Sequence[int], status: Extraction) -> Draw:
        failure = "" if status.word else status.status
        return Draw(row, self.vocabulary.text(ids), status.word, failure, len(ids))


def _inverse_cdf(probs: torch.Tensor, u: np.ndarray) -> np.ndarray:
    """Token ids ``F^{-1}(u)`` for uniforms ``u`` under the distribution ``probs`` (one row)."""
    cdf = torch.cumsum(probs, dim=-1)
    target = torch.as_tensor(u, dtype=cdf.dtype, device=cdf.device) * cdf[-1]
    picked = torch.searchsorted(cdf, target, right=True).clamp_(max=cdf.numel() - 1)
    return picked.cpu().numpy()


def _select(chunk: list, config) -> DynamicCache:
    """A KV cache whose row i is the cache row of node i's parent, for the nodes of ``chunk``.

    Parents may sit in different groups; every draw has advanced the same number of tokens, so
    their caches hold equally many positions and rows can be stacked. Consecutive nodes of one
    group are gathered with one ``index_select`` per layer.
    """
    runs: list[tuple[object, list[int]]] = []
    for cache, parent, _, _ in chunk:
        if runs and runs[-1][0] is cache:
            runs[-1][1].append(parent)
        else:
            runs.append((cache, [parent]))
    layers = []
    for layer in range(len(runs[0][0].layers)):
        keys, values = [], []
        for cache, parents in runs:
            index = torch.tensor(parents, device=cache.layers[layer].keys.device)
            keys.append(cache.layers[layer].keys.index_select(0, index))
            values.append(cache.layers[layer].values.index_select(0, index))
        layers.append((torch.cat(keys), torch.cat(values)))
    return DynamicCache(layers, config=config)
