"""Exact next-word distributions by best-first enumeration of token continuations.

The complete-word sampler (``complete_word``) draws tokens y_1, y_2, ... from the decoding's
next-token distribution pi(. | c, y_<i) until ``Vocabulary.read`` says the first word is done,
and fails as ``token_budget`` when it is not done after ``max_tokens`` tokens. The probability
of an outcome o (a normalised word, or a failure reason) is therefore

    P(o | c) = sum over closing paths y with outcome o of  prod_i pi(y_i | c, y_<i),

where a *closing path* is a token sequence whose proper prefixes are all open (first word
incomplete) and which is itself done, or open at length ``max_tokens`` (``token_budget``).
Summing over paths merges the token paths that spell the same normalised word.

The enumerator computes these sums best first. The *frontier* holds the mass not yet assigned
to an outcome, in two kinds of entries:

* an open prefix y not yet run through the network, with mass P(y) = prod_i pi(y_i | c, y_<i);
* the unclassified children of an expanded prefix y: tokens t with mass P(y) pi(t | c, y) each,
  classified a ``chunk`` at a time, most probable first.

The entry with the largest mass (for children: the largest child) is processed first. Open
prefixes are expanded ``batch_size`` at a time: one forward token each, on the context's
key/value cache plus the prefix's own generated keys/values. Classifying a child decides, by
the sampler's rules, whether y + t closes the word (its mass goes to the outcome), or stays
open (a new frontier entry). The covered mass (resolved words + resolved failures) only grows
and every resolved outcome's mass is a lower bound on its exact probability; the frontier's
mass is ``unresolved_mass`` = 1 - covered. Enumeration stops when covered >= ``target_mass``,
when no open prefix can be expanded within ``max_forward_tokens`` (the context encoding
counts: one forward token per context position), or when the frontier is empty (exact).

*Shortcut.* When y's text ends in an open word run after the glue, every child whose decoded
text starts with a delimiter (whitespace or breaking punctuation) closes that same word; such
children are resolved in one sum instead of one by one. This relies on decoding being
concatenative for *regular* tokens (text(y + t) = text(y) + text(t)): tokens that are not
special, whose text is non-empty and holds no U+FFFD (partial UTF-8 bytes), with a tokenizer
that does not clean up spaces, after a prefix whose text does not end in U+FFFD. Every other
child is classified with ``Vocabulary.read`` itself, the sampler's own call.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from transformers import DynamicCache

from varprobe.sampling.complete_word import Vocabulary
from varprobe.sampling.decoding import Decoding
from varprobe.words import COMPLETE, FAILURES, first_word, is_delimiter


def delimiter_tokens(vocabulary: Vocabulary, size: int) -> np.ndarray:
    """Per token id below ``size`` (the model's output size): whether the token is *regular*
    (see the module docstring) and its text starts with a delimiter, so that it closes an open
    word run. Tokenizers that clean up spaces have no regular tokens (all False)."""
    tokenizer = vocabulary.tokenizer
    mask = np.zeros(size, dtype=bool)
    if getattr(tokenizer, "clean_up_tokenization_spaces", False):
        return mask
    special = set(getattr(tokenizer, "added_tokens_decoder", {})) | vocabulary.eos
    ids = [t for t in range(min(size, len(tokenizer))) if t not in special]
    texts = tokenizer.batch_decode([vocabulary.reference + [t] for t in ids])
    for t, text in zip(ids, texts, strict=True):
        piece = text[len(vocabulary.prefix) :]
        mask[t] = bool(piece) and "\ufffd" not in piece and is_delimiter(piece[0])
    return mask


@dataclass(frozen=True)
class EnumerationSettings:
    """When to stop (covered mass, forward tokens), the token budget per path, the number of
    open prefixes per forward pass and of children classified per step."""

    target_mass: float = 0.95
    max_forward_tokens: int = 100_000
    max_tokens: int = 20
    batch_size: int = 64
    chunk: int = 64

    def __post_init__(self) -> None:
        if not 0 < self.target_mass <= 1:
            raise ValueError(f"target_mass must be in (0, 1], got {self.target_mass}")
        for key in ("max_forward_tokens", "max_tokens", "batch_size", "chunk"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")


@dataclass(frozen=True)
class Enumeration:
    """The outcome masses of one context.

    ``words``: resolved mass per normalised word; ``failures``: resolved mass per failure
    reason (every reason of ``varprobe.words.FAILURES``, zeros included); ``unresolved_mass``:
    the frontier's mass; ``forward_tokens``: token positions run through the network.
    """

    words: dict[str, float]
    failures: dict[str, float]
    unresolved_mass: float
    forward_tokens: int

    @property
    def word_mass(self) -> float:
        """W = sum_w p_w, the resolved word mass."""
        return math.fsum(self.words.values())

    @property
    def failure_mass(self) -> float:
        """F, the resolved failure mass (the draws the sampler would reject)."""
        return math.fsum(self.failures.values())

    @property
    def covered_mass(self) -> float:
        """W + F, the mass certified to its outcome."""
        return self.word_mass + self.failure_mass

    def distribution(self) -> dict[str, float]:
        """The word distribution p_w / W: failures rejected as the sampler rejects them, the
        unresolved mass left out (the completion that sends it all to failures). Empty when
        W = 0."""
        total = self.word_mass
        return {w: p / total for w, p in self.words.items() if p > 0} if total > 0 else {}


@dataclass(eq=False)
class _Expanded:
    """A prefix run through the network: its mass, its generated keys/values per layer, each
    ``(1, heads, len(prefix), head_dim)``, and its children left to classify, most probable
    first (``tokens``, their probabilities ``probs`` and suffix sums ``rest``)."""

    prefix: tuple[int, ...]
    mass: float
    kv: list[tuple[torch.Tensor, torch.Tensor]]
    tokens: np.ndarray
    probs: np.ndarray
    rest: np.ndarray
    next: int = 0

    @property
    def frontier_mass(self) -> float:
        return self.mass * float(self.rest[self.next])


@dataclass(eq=False)
class _Open:
    """An open prefix not yet run through the network, and the prefix it extends."""

    prefix: tuple[int, ...]
    mass: float
    parent: _Expanded

    @property
    def frontier_mass(self) -> float:
        return self.mass


class _Search:
    """The state of one context's enumeration: outcome masses and the frontier (a max-heap)."""

    def __init__(self) -> None:
        self.words: dict[str, float] = defaultdict(float)
        self.failures: dict[str, float] = dict.fromkeys(FAILURES, 0.0)
        self.covered = 0.0
        self.forward_tokens = 0
        self.heap: list = []
        self.order = itertools.count()

    def resolve(self, word: str, failure: str, mass: float) -> None:
        if word:
            self.words[word] += mass
        else:
            self.failures[failure] += mass
        self.covered += mass

    def push(self, entry: _Open | _Expanded, priority: float) -> None:
        heapq.heappush(self.heap, (-priority, next(self.order), entry))

    def result(self) -> Enumeration:
        unresolved = math.fsum(entry.frontier_mass for _, _, entry in self.heap)
        return Enumeration(dict(self.words), self.failures, unresolved, self.forward_tokens)


class Enumerator:
    """Exact complete-next-word distributions of a causal LM under a decoding algorithm."""

    def __init__(self, model, tokenizer, decoding: Decoding, settings: EnumerationSettings) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.vocabulary = Vocabulary(tokenizer)
        self.decoding = decoding
        self.settings = settings
        self.device = next(model.parameters()).device
        self.closes_open_word = delimiter_tokens(
            self.vocabulary, self.model.get_output_embeddings().weight.shape[0]
        )

    def encode(self, context: str) -> list[int]:
        """Token ids of a context, with the tokenizer's default special tokens (as the sampler)."""
        return list(self.tokenizer(context)["input_ids"])

    @torch.inference_mode()
    def enumerate(self, context: str) -> Enumeration:
        """Enumerate the first complete word after ``context`` until a stopping rule holds."""
        settings = self.settings
        ids = self.encode(context)
        search = _Search()
        out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True)
        shared = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        search.forward_tokens = len(ids)
        empty = [(k[:, :, :0], v[:, :, :0]) for k, v in shared]
        self._expand(search, (), 1.0, empty, self._probabilities(out.logits[:, -1])[0])
        while search.covered < settings.target_mass:
            batch = self._next_batch(search)
            if not batch:
                break
            search.forward_tokens += len(batch)
            kvs, logits = self._advance(batch, shared)
            for node, kv, probs in zip(batch, kvs, self._probabilities(logits), strict=True):
                self._expand(search, node.prefix, node.mass, kv, probs)
        return search.result()

    def _probabilities(self, logits: torch.Tensor) -> np.ndarray:
        """The decoding's float64 next-token distributions ``(n, V)`` on the CPU."""
        return self.decoding.probabilities(logits).cpu().numpy()

    def _expand(self, search: _Search, prefix: tuple[int, ...], mass: float, kv, probs: np.ndarray):
        """Record an expanded prefix: resolve its delimiter children at once (module docstring,
        *Shortcut*) and queue the others for classification."""
        word = self._open_word(prefix)
        if word:
            closing = self.closes_open_word & (probs > 0)
            search.resolve(word, "", mass * float(probs[closing].sum()))
            probs = np.where(closing, 0.0, probs)
        tokens = np.flatnonzero(probs > 0)
        tokens = tokens[np.argsort(-probs[tokens], kind="stable")]
        ordered = probs[tokens]
        rest = np.append(np.cumsum(ordered[::-1])[::-1], 0.0)
        node = _Expanded(prefix, mass, kv, tokens, ordered, rest)
        if len(tokens):
            search.push(node, mass * ordered[0])

    def _open_word(self, prefix: tuple[int, ...]) -> str:
        """The word a delimiter would close after ``prefix``, or ``""`` when its text has no
        open word run or ends in U+FFFD (the shortcut does not apply)."""
        text = self.vocabulary.text(prefix)
        if not prefix or text.endswith("\ufffd"):
            return ""
        closed = first_word(text + " ", False)
        return closed.word if closed.status == COMPLETE else ""

    def _classify(self, search: _Search, node: _Expanded) -> None:
        """Classify the next ``chunk`` children of ``node`` and requeue its remaining ones."""
        stop = min(node.next + self.settings.chunk, len(node.tokens))
        for token, prob in zip(node.tokens[node.next : stop], node.probs[node.next : stop], strict=True):
            child = (*node.prefix, int(token))
            mass = node.mass * float(prob)
            status = self.vocabulary.read(child)
            if status.done:
                search.resolve(status.word, "" if status.word else status.status, mass)
            elif len(child) == self.settings.max_tokens:
                search.resolve("", "token_budget", mass)
            else:
                search.push(_Open(child, mass, node), mass)
        node.next = stop
        if stop < len(node.tokens):
            search.push(node, node.mass * float(node.probs[stop]))

    def _next_batch(self, search: _Search) -> list[_Open]:
        """Pop the open prefixes to expand next, classifying the children popped on the way.

        At most ``batch_size`` prefixes and no more than the forward-token budget has left;
        none when the target mass is reached (the popped prefixes go back to the frontier).
        """
        room = min(self.settings.batch_size, self.settings.max_forward_tokens - search.forward_tokens)
        batch: list[_Open] = []
        while search.heap and len(batch) < room and search.covered < self.settings.target_mass:
            _, _, entry = heapq.heappop(search.heap)
            if isinstance(entry, _Expanded):
                self._classify(search, entry)
            else:
                batch.append(entry)
        if search.covered >= self.settings.target_mass:
            for entry in batch:
                search.push(entry, entry.mass)
            return []
        return batch

    def _advance(self, batch: list[_Open], shared: list) -> tuple[list, torch.Tensor]:
        """Run each prefix's last token on the context cache plus its parent's generated
        keys/values (right-padded to the longest, padding masked). Returns each prefix's own
        keys/values per layer and the next-token logits ``(len(batch), V)``."""
        size, passage = len(batch), shared[0][0].shape[2]
        own = [len(node.prefix) - 1 for node in batch]
        longest = max(own)
        layers = []
        for index, (keys, values) in enumerate(shared):
            parents = [node.parent.kv[index] for node in batch]
            padded_keys = torch.cat([F.pad(k, (0, 0, 0, longest - n)) for (k, _), n in zip(parents, own)])
            padded_values = torch.cat([F.pad(v, (0, 0, 0, longest - n)) for (_, v), n in zip(parents, own)])
            layers.append((torch.cat([keys.expand(size, -1, -1, -1), padded_keys], 2),
                           torch.cat([values.expand(size, -1, -1, -1), padded_values], 2)))
        mask = torch.ones(size, passage + longest + 1, dtype=torch.long, device=self.device)
        for row, n in enumerate(own):
            mask[row, passage + n : passage + longest] = 0
        out = self.model(
            input_ids=torch.tensor([[node.prefix[-1]] for node in batch], device=self.device),
            past_key_values=DynamicCache(layers, config=self.model.config),
            attention_mask=mask,
            position_ids=torch.tensor([[passage + n] for n in own], device=self.device),
            use_cache=True,
        )
        kvs = [
            [(torch.cat([layer.keys[row : row + 1, :, passage : passage + n], layer.keys[row : row + 1, :, -1:]], 2),
              torch.cat([layer.values[row : row + 1, :, passage : passage + n], layer.values[row : row + 1, :, -1:]], 2))
             for layer in out.past_key_values.layers]
            for row, n in enumerate(own)
        ]
        return kvs, out.logits[:, -1, :]

