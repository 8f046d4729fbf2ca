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
  most probable first.

**The search** is defined sequentially: repeatedly take the frontier entry with the largest
mass (ties: the older entry) and

* *expand* it if it is an open prefix: one forward token on the context's keys/values plus the
  prefix's own; children whose mass is below ``min_mass`` stay in the frontier for good;
* *classify* it if it is a child: by the sampler's rules, y + t either closes the word (its
  mass goes to the outcome) or stays open (a new frontier entry).

The covered mass (resolved words + resolved failures) only grows and each resolved outcome's
mass is a lower bound on its exact probability; the frontier's mass is ``unresolved_mass`` =
1 - covered. The search stops when covered >= ``target_mass`` (< 1), when the next entry is an open
prefix and the context has spent ``max_forward_tokens`` (its encoding counts one token per
position), or when the frontier is empty (exact).

**Batching never changes the result.** Open prefixes are run through the network ahead of
the sequential search, up to ``batch_size`` per round: the prefix the search waits for, then
the ones it will expand next (the frontier merged in mass order, children read ahead), no more
than the gap to the target or the forward-token budget can use; the search then consumes the
expansions in its own order. Every pass has the same number of rows (``PASS_ROWS``, spare rows
filled with further prefixes or a repeated row) and every row attends over the same shapes
(the shared encoding and ``max_tokens - 1`` own positions, padding masked), so each expansion
is the same to the bit in any pass; children are read ``chunk`` at a time but consumed one by
one. ``batch_size`` and ``chunk`` change speed and memory only. Consecutive contexts whose
tokens extend one another (the prefixes of one passage, up to ``CHAIN_CONTEXTS``) are
enumerated together: the longest is encoded once and their open prefixes share the passes. A
context's reported ``forward_tokens`` is what its sequential search used (its encoding plus its
expansions); expansions computed ahead and never consumed, and the encoding a chain shares,
are not in it. A sliding-window layer (Gemma 3 has them) sees only its last ``W`` positions:
a context whose tokens plus ``max_tokens`` exceed ``W`` is refused, since no row could then see
its whole context, as the sequential definition requires.

*Shortcut.* When y's text ends in an open word run after the glue, every child whose decoded
text starts with a delimiter (whitespace) closes that same word; such
children are resolved in one sum when y is expanded. This relies on decoding being
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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from transformers import DynamicCache

from varprobe.sampling.chains import prefix_chains
from varprobe.sampling.decoding import Decoding, UnusableWeights, usable
from varprobe.sampling.word_model import WordModel
from varprobe.words import COMPLETE, FAILURES, Extraction, first_word

PASS_ROWS = {"cpu": 32, "cuda": 128}
"""Rows of every forward pass, per device type (short passes are padded; other devices: the
CUDA count): matrix products round a row differently depending on how many rows they
multiply, so a fixed count keeps the results the same to the bit whatever the batching."""

CHAIN_CONTEXTS = 8
"""At most this many contexts are enumerated together on one shared encoding."""


@dataclass(frozen=True, kw_only=True)
class EnumerationSettings:
    """When to stop (covered mass, forward tokens per context), the token budget per path,
    the mass below which a child is never classified, and, for speed and memory only, the
    open prefixes per forward pass and the children classified at once."""

    target_mass: float = 0.95
    max_forward_tokens: int = 100_000
    max_tokens: int = 20
    min_mass: float = 1e-9
    batch_size: int = 64
    chunk: int = 64

    def __post_init__(self) -> None:
        if not 0 < self.target_mass <= 1:
            raise ValueError(f"target_mass must be in (0, 1], got {self.target_mass}")
        if not 0 <= self.min_mass < 1:
            raise ValueError(f"min_mass must be in [0, 1), got {self.min_mass}")
        for key in ("max_forward_tokens", "max_tokens", "batch_size", "chunk"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")


@dataclass(frozen=True)
class Enumeration:
    """The outcome masses of one context.

    ``words``: resolved mass per normalised word; ``failures``: resolved mass per failure
    reason (every reason of ``varprobe.words.FAILURES``, zeros included); ``unresolved_mass``:
    the frontier's mass; ``forward_tokens``: token positions the search ran through the network.
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
        W = 0.

        Returns
        -------
        dict of str to float
            Probability of each resolved word, summing to 1 (empty when W = 0).
        """
        total = self.word_mass
        return {w: p / total for w, p in self.words.items() if p > 0} if total > 0 else {}


@dataclass(eq=False)
class _Expanded:
    """A prefix run through the network.

    ``keys``/``values``: the keys and values of its last token, ``(layers, heads, head_dim)``
    (None for the empty prefix), its ancestors' being found through ``parent``; ``closed``: the
    mass its delimiter children resolve to ``word`` at once (the shortcut); ``dropped``: the
    mass of its children below ``min_mass``; ``tokens``, ``probs`` and suffix sums ``rest``: its
    other children, most probable first; ``reads``: their classifications so far; ``next``: the
    first unclassified one.
    """

    prefix: tuple[int, ...]
    mass: float
    parent: _Expanded | None
    keys: torch.Tensor | None
    values: torch.Tensor | None
    word: str
    closed: float
    dropped: float
    tokens: np.ndarray
    probs: np.ndarray
    rest: np.ndarray
    reads: list[Extraction] = field(default_factory=list)
    next: int = 0

    @property
    def frontier_mass(self) -> float:
        return self.mass * float(self.rest[self.next])

    def path(self) -> list[_Expanded]:
        """The expanded prefixes from the first generated token to this one."""
        nodes, node = [], self
        while node.keys is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]


@dataclass(eq=False)
class _Open:
    """An open prefix not yet expanded, and the prefix it extends."""

    prefix: tuple[int, ...]
    mass: float
    parent: _Expanded

    @property
    def frontier_mass(self) -> float:
        return self.mass


class _Search:
    """One context's sequential search: outcome masses, the frontier (a max-heap), and the
    expansions computed ahead of it (``ready``, by prefix)."""

    def __init__(self, encoded: int) -> None:
        self.words: dict[str, float] = defaultdict(float)
        self.failures: dict[str, float] = dict.fromkeys(FAILURES, 0.0)
        self.covered = 0.0
        self.dropped = 0.0
        self.forward_tokens = encoded
        self.heap: list = []
        self.order = itertools.count()
        self.ready: dict[tuple[int, ...], _Expanded] = {}
        self.done = False

    def resolve(self, word: str, failure: str, mass: float) -> None:
        if word:
            self.words[word] += mass
        else:
            self.failures[failure] += mass
        self.covered += mass

    def push(self, entry: _Open | _Expanded, priority: float) -> None:
        heapq.heappush(self.heap, (-priority, next(self.order), entry))

    def apply(self, node: _Expanded) -> None:
        """Record an expansion: its shortcut mass, its dropped children, its other children."""
        if node.closed:
            self.resolve(node.word, "", node.closed)
        self.dropped += node.dropped
        if len(node.tokens):
            self.push(node, node.mass * float(node.probs[0]))

    def result(self) -> Enumeration:
        frontier = (entry.frontier_mass for _, _, entry in self.heap)
        unresolved = math.fsum(itertools.chain(frontier, [self.dropped]))
        return Enumeration(dict(self.words), self.failures, unresolved, self.forward_tokens)


class Enumerator:
    """Exact complete-next-word distributions of a causal LM under a decoding algorithm."""

    def __init__(self, lm: WordModel, decoding: Decoding, settings: EnumerationSettings) -> None:
        self.lm = lm
        self.model, self.vocabulary, self.device = lm.model, lm.vocabulary, lm.device
        self.decoding = decoding
        self.settings = settings
        self.pass_rows = PASS_ROWS.get(self.device.type, PASS_ROWS["cuda"])
        self._closing = torch.as_tensor(lm.closes_open_word, device=self.device)

    def enumerate(self, context: str) -> Enumeration:
        """Enumerate the first complete word after one context until a stopping rule holds.

        Parameters
        ----------
        context : str
            The context text.

        Returns
        -------
        Enumeration
            The context's resolved word and failure masses.
        """
        return next(self.enumerate_many([context]))

    def enumerate_many(self, contexts: Iterable[str], names: Iterable[str] | None = None) -> Iterator[Enumeration]:
        """Yield the enumeration of each context in order, consecutive contexts whose tokens
        extend one another enumerated together (module docstring). Every context is encoded
        and checked against the model's positions first (``WordModel.check_fits``, as the sampler);
        ``names`` name the contexts in its message (default: their order, from 1).

        Parameters
        ----------
        contexts : iterable of str
            The context texts, in order.
        names : iterable of str, optional
            A name per context, used in error messages.

        Yields
        ------
        Enumeration
            One per context, in the order of ``contexts``.

        Raises
        ------
        ValueError
            When a context (or a prefix of it) does not fit the model's positions; the message names it.
        """
        contexts = list(contexts)
        encoded = [self.lm.encode(context) for context in contexts]
        names = list(names) if names is not None else [f"context {k}" for k in range(1, len(contexts) + 1)]
        self.lm.check_fits(((f"{name} ({len(context.split()):,} words)", len(ids))
                            for name, context, ids in zip(names, contexts, encoded, strict=True)),
                           self.settings.max_tokens)
        for chain in prefix_chains(range(len(contexts)), encoded.__getitem__, CHAIN_CONTEXTS):
            yield from self._enumerate_chain([ids for _, ids in chain])

    def _enumerate_chain(self, chain: list[list[int]]) -> list[Enumeration]:
        """``_search_chain``; where a next-token distribution is unusable (``UnusableWeights``),
        an error naming the chain's longest context."""
        try:
            return self._search_chain(chain)
        except UnusableWeights as error:
            context = self.lm.tokenizer.decode(chain[-1])
            raise ValueError(f"the context {context!r} or a prefix of it: {error}") from error

    @torch.inference_mode()
    def _search_chain(self, chain: list[list[int]]) -> list[Enumeration]:
        """Enumerate contexts whose ids are prefixes of the last one's, on its one encoding."""
        lengths = [len(ids) for ids in chain]
        positions = lengths[-1] + self.settings.max_tokens
        if self.lm.window is not None and positions > self.lm.window:
            raise NotImplementedError(
                f"exact enumeration of a context of {lengths[-1]} tokens with max_tokens "
                f"{self.settings.max_tokens} needs {positions} positions, beyond "
                f"{type(self.model).__name__}'s sliding attention window of {self.lm.window}")
        out = self.model(input_ids=torch.tensor([chain[-1]], device=self.device), use_cache=True)
        shared = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        first = self.decoding.probabilities(out.logits[0, [n - 1 for n in lengths]])
        usable(first.sum(-1))
        searches = [_Search(n) for n in lengths]
        for search, probs in zip(searches, first, strict=True):
            search.apply(self._expansion((), 1.0, None, None, None, probs))
        while waiting := [index for index, search in enumerate(searches) if self._run(search)]:
            self._compute(waiting, searches, shared, lengths)
        return [search.result() for search in searches]

    def _run(self, search: _Search) -> bool:
        """Advance the sequential search (module docstring) until it stops (False) or needs an
        expansion not computed yet (True: the open prefix on top of its frontier)."""
        settings = self.settings
        while not search.done and not self._reached(search) and search.heap:
            entry = search.heap[0][2]
            if isinstance(entry, _Expanded):
                heapq.heappop(search.heap)
                self._classify(search, entry)
                continue
            if search.forward_tokens >= settings.max_forward_tokens:
                break
            node = search.ready.pop(entry.prefix, None)
            if node is None:
                return True
            heapq.heappop(search.heap)
            search.forward_tokens += 1
            search.apply(node)
        search.done, search.ready = True, {}
        return False

    def _gap(self, search: _Search) -> float:
        """The mass still to certify (infinite for a target of 1, which runs to exhaustion
        whatever the rounding of the covered mass)."""
        return self.settings.target_mass - search.covered if self.settings.target_mass < 1 else math.inf

    def _reached(self, search: _Search) -> bool:
        """Whether the target mass is certified."""
        return self._gap(search) <= 0

    def _classify(self, search: _Search, node: _Expanded) -> None:
        """Classify ``node``'s next child and requeue the node while children remain."""
        index = node.next
        mass = node.mass * float(node.probs[index])
        closed = self._outcome(node, index)
        if closed:
            search.resolve(closed.word, "" if closed.word else closed.status, mass)
        else:
            search.push(_Open((*node.prefix, int(node.tokens[index])), mass, node), mass)
        node.next += 1
        if node.next < len(node.tokens):
            search.push(node, node.mass * float(node.probs[node.next]))
        else:
            node.reads = []

    def _outcome(self, node: _Expanded, index: int) -> Extraction | None:
        """How ``node``'s child ``index`` closes by the sampler's rules (its reading, or
        ``token_budget`` at ``max_tokens`` tokens), or None while it stays open. Children are
        read ``chunk`` at a time and the readings kept."""
        if index >= len(node.reads):
            stop = min(index + self.settings.chunk, len(node.tokens))
            node.reads.extend(self.vocabulary.read((*node.prefix, int(t))) for t in node.tokens[len(node.reads) : stop])
        status = node.reads[index]
        if status.done:
            return status
        return Extraction("token_budget") if len(node.prefix) + 1 == self.settings.max_tokens else None

    def _ahead(self, search: _Search) -> Iterator[_Open]:
        """The open prefixes the search will expand next, most massive first, not computed yet:
        the frontier merged in mass order, children read ahead (their readings kept; the
        search's state is untouched). Gives up after ``chunk`` children in a row that close."""
        merge = [(priority, (0, order), entry, getattr(entry, "next", 0)) for priority, order, entry in search.heap]
        heapq.heapify(merge)
        tie, misses = itertools.count(), 0
        while merge and misses < self.settings.chunk:
            _, _, entry, index = heapq.heappop(merge)
            if isinstance(entry, _Expanded):
                if index + 1 < len(entry.tokens):
                    following = -entry.mass * float(entry.probs[index + 1])
                    heapq.heappush(merge, (following, (1, next(tie)), entry, index + 1))
                if self._outcome(entry, index):
                    misses += 1
                    continue
                entry = _Open((*entry.prefix, int(entry.tokens[index])), entry.mass * float(entry.probs[index]), entry)
            if entry.prefix not in search.ready:
                misses = 0
                yield entry

    def _needed(self, search: _Search, ahead: Iterator[_Open], share: int) -> list[_Open]:
        """The prefixes from ``ahead`` to compute for a waiting search: the one it waits for,
        then more while ``share``, its forward-token budget and the gap to the target allow
        (each expansion resolves at most its prefix's mass, so fewer cannot reach the target)."""
        room = max(1, min(share, self.settings.max_forward_tokens - search.forward_tokens - len(search.ready)))
        gap, lined = self._gap(search), math.fsum(node.mass for node in search.ready.values())
        needed = []
        for entry in ahead:
            needed.append(entry)
            lined += entry.mass
            if len(needed) == room or lined >= gap:
                break
        return needed

    def _compute(self, waiting: list[int], searches: list[_Search], shared: list, lengths: list[int]) -> None:
        """Expand the prefixes the waiting searches need (``_needed``), ``batch_size`` shared
        among them; rows left over in the last pass go to their next prefixes beyond that."""
        share = max(1, self.settings.batch_size // len(waiting))
        ahead = {index: self._ahead(searches[index]) for index in waiting}
        picked = {index: self._needed(searches[index], ahead[index], share) for index in waiting}
        for index in waiting:
            spare = -sum(map(len, picked.values())) % self.pass_rows
            picked[index] += itertools.islice(ahead[index], spare)
        rows = [(index, entry) for index in waiting for entry in picked[index]]
        for start in range(0, len(rows), self.pass_rows):
            part = rows[start : start + self.pass_rows]
            for (index, entry), node in zip(part, self._advance(part, shared, lengths), strict=True):
                searches[index].ready[entry.prefix] = node

    def _advance(self, rows: list[tuple[int, _Open]], shared: list, lengths: list[int]) -> list[_Expanded]:
        """Run each open prefix's last token on its context's part of the shared encoding plus
        its ancestors' keys/values (``max_tokens - 1`` own positions, padding masked), in one
        pass of ``pass_rows`` rows (the last row repeated)."""
        real, rows = len(rows), rows + rows[-1:] * (self.pass_rows - len(rows))
        size, passage, room = len(rows), shared[0][0].shape[2], self.settings.max_tokens - 1
        paths = [entry.parent.path() for _, entry in rows]
        own_keys, own_values = (_stack(paths, room, shared, kind) for kind in ("keys", "values"))
        layers = [(torch.cat([keys.expand(size, -1, -1, -1), own_keys[i]], 2),
                   torch.cat([values.expand(size, -1, -1, -1), own_values[i]], 2))
                  for i, (keys, values) in enumerate(shared)]
        context_lengths = torch.tensor([lengths[c] for c, _ in rows], device=self.device)
        own = torch.tensor([len(path) for path in paths], device=self.device)
        positions = torch.arange(passage + room + 1, device=self.device)
        mask = (positions < context_lengths[:, None]) | (positions == passage + room)
        mask |= (positions >= passage) & (positions < passage + own[:, None])
        out = self.model(
            input_ids=torch.tensor([[entry.prefix[-1]] for _, entry in rows], device=self.device),
            past_key_values=DynamicCache(layers, config=self.model.config),
            attention_mask=mask.long(),
            position_ids=(context_lengths + own)[:, None],
            use_cache=True,
        )
        cache = out.past_key_values.layers
        keys = torch.stack([layer.keys[:, :, -1] for layer in cache], 1)
        values = torch.stack([layer.values[:, :, -1] for layer in cache], 1)
        probs = self.decoding.probabilities(out.logits[:, -1])
        usable(probs[:real].sum(-1))
        return [self._expansion(entry.prefix, entry.mass, entry.parent, keys[row], values[row], probs[row])
                for row, (_, entry) in enumerate(rows[:real])]

    def _expansion(self, prefix: tuple[int, ...], mass: float, parent: _Expanded | None,
                   keys: torch.Tensor | None, values: torch.Tensor | None, probs: torch.Tensor) -> _Expanded:
        """An expanded prefix from its next-token distribution ``probs`` (float64): the
        shortcut's mass (module docstring), the children below ``min_mass`` set aside, the
        others sorted."""
        word = self._open_word(prefix)
        closed = 0.0
        if word:
            closing = self._closing & (probs > 0)
            closed = mass * float(probs[closing].sum())
            probs = probs.masked_fill(closing, 0.0)
        keep = (probs > 0) & (probs * mass >= self.settings.min_mass)
        dropped = mass * float(probs[~keep].sum())
        tokens = torch.nonzero(keep)[:, 0]
        ordered, order = torch.sort(probs[tokens], descending=True, stable=True)
        ordered = ordered.cpu().numpy()
        rest = np.append(np.cumsum(ordered[::-1])[::-1], 0.0)
        return _Expanded(prefix, mass, parent, keys, values, word, closed, dropped,
                         tokens[order].cpu().numpy(), ordered, rest)

    def _open_word(self, prefix: tuple[int, ...]) -> str:
        """The word a delimiter would close after ``prefix``, or ``""`` when its text has no
        open word run or ends in U+FFFD (the shortcut does not apply)."""
        text = self.vocabulary.text(prefix)
        if not prefix or text.endswith("\ufffd"):
            return ""
        closed = first_word(text + " ", False)
        return closed.word if closed.status == COMPLETE else ""


def _stack(paths: list[list[_Expanded]], room: int, shared: list, kind: str) -> list[torch.Tensor]:
    """Per layer, the ``(len(paths), heads, room, head_dim)`` keys (``kind``) or values of each
    path's tokens, zero-padded after them."""
    reference = shared[0][0 if kind == "keys" else 1]
    pad = reference.new_zeros(len(shared), reference.shape[1], reference.shape[3])
    cells = [cell for path in paths for cell in [getattr(node, kind) for node in path] + [pad] * (room - len(path))]
    stacked = torch.stack(cells).view(len(paths), room, *pad.shape)
    return list(stacked.permute(2, 0, 3, 1, 4))
