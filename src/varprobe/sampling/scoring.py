"""Exact model probabilities of given continuations: next tokens, and complete words.

The context is encoded as the sampler encodes it (``CompleteWordSampler.encode``: the
tokenizer's default special tokens, no trailing space) and a continuation that starts a new
word is the text ``" " + w`` (``varprobe.words``: a continuation that starts a new word starts
with whitespace).

*Word probability with the beginning-of-word correction* (Pimentel & Meister 2024). The tokens
y_1..y_n of ``" " + w`` spell w, but the model has only written the word w once the token after
them starts something else; so

    log P(w | c) = sum_i log pi(y_i | c, y_<i) + log sum_{t in B} pi(t | c, y),

where pi is the model's next-token distribution (softmax over the full vocabulary, no
decoding transformation) and B the tokens that close an open word run at once: the *regular*
tokens whose text starts with whitespace (``varprobe.sampling.word_model.delimiter_tokens``)
and every special token (``varprobe.sampling.word_model.special_ids``: they end the text).
Punctuation that follows w (``" dog."``) belongs to w's whitespace-delimited run and closes it
only when whitespace or the end of text follows; that later closure is not in B.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import torch
from transformers import DynamicCache

from varprobe.sampling.chains import Item, prefix_chains
from varprobe.sampling.decoding import UnusableWeights
from varprobe.sampling.word_model import WordModel


CHAIN_CONTEXTS = 64
"""At most this many contexts share one encoding; their next-token logits are held together
(64 x 262,144 float32 logits, 67 MB, for Gemma-3's vocabulary)."""


class WordScorer:
    """Next-token distributions and beginning-of-word-corrected word log-probabilities of a
    causal LM, ``batch_size`` words per forward pass on the context's key/value cache."""

    def __init__(self, lm: WordModel, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.lm = lm
        self.model, self.device = lm.model, lm.device
        self.batch_size = batch_size
        closing = lm.closes_open_word.copy()
        closing[[t for t in lm.vocabulary.special if t < lm.size]] = True
        self.closing = torch.tensor(closing, device=self.device)
        """Per token id: whether it is in B, the tokens that close an open word run at once."""
        self.closing_weight = self.closing.double()
        """B as a float64 0/1 vector: a row of unnormalised probabilities times it is their mass on B."""

    def word_ids(self, word: str) -> list[int]:
        """Token ids of the continuation ``" " + word`` (no special tokens).

        Parameters
        ----------
        word : str
            The word.

        Returns
        -------
        list of int
            The token ids of ``" " + word``.
        """
        return list(self.lm.tokenizer.encode(" " + word, add_special_tokens=False))

    def first_token(self, word: str) -> int:
        """The first token id of the continuation ``" " + word``.

        Parameters
        ----------
        word : str
            The word.

        Returns
        -------
        int
            The token id.

        Raises
        ------
        ValueError
            When the word encodes to no token.
        """
        ids = self.word_ids(word)
        if not ids:
            raise ValueError(f"word {word!r} encodes to no token")
        return ids[0]

    def next_token_log_probs(self, contexts: Iterable[str]) -> Iterator[torch.Tensor]:
        """log pi(. | c) of each context in order: the float64 log-softmax over the full
        vocabulary, shape ``(V,)`` (one held at a time; ``_encodings``).

        Parameters
        ----------
        contexts : iterable of str
            The context texts, in order.

        Yields
        ------
        torch.Tensor
            float64, shape ``(V,)``: the next-token log-probabilities of one context, in nats.
        """
        for _, _, _, first in self._encodings((context, None) for context in contexts):
            yield first

    def word_log_probs(self, context: str, words: Sequence[str]) -> np.ndarray:
        """log P(w | c) of each of ``words`` after one context (``word_log_probs_many``).

        Parameters
        ----------
        context : str
            The context text.
        words : sequence of str
            The words to score.

        Returns
        -------
        numpy.ndarray
            float64, shape ``(len(words),)``: log P(w | c) in nats.
        """
        return next(self.word_log_probs_many([(context, words)]))

    def word_log_probs_many(self, items: Iterable[tuple[str, Sequence[str]]]) -> Iterator[np.ndarray]:
        """Per ``(context, words)`` in order: log P(w | c) with the beginning-of-word correction
        (module docstring) for each word.

        Words of one token length share a batch, which runs on the context's key/value cache
        (``_encodings``) without padding: every position a pass computes, with its
        full-vocabulary output layer, is one a word needs.

        Parameters
        ----------
        items : iterable of (str, sequence of str)
            ``(context, words)`` pairs, in order.

        Yields
        ------
        numpy.ndarray
            float64, shape ``(len(words),)``: log P(w | c) in nats, one array per pair.

        Raises
        ------
        ValueError
            When a context does not fit the model's positions, or a word encodes to no token.
        """
        for words, length, cache, first in self._encodings(items):
            yield self._score_words(cache, length, first, words)

    def _encodings(self, items: Iterable[tuple[str, Item]]) -> Iterator[tuple[Item, int, list, torch.Tensor]]:
        """Per ``(context, payload)`` in order: the payload, the context's length in tokens, its
        key/value cache (one ``(keys, values)`` per layer) and log pi(. | c).

        Consecutive contexts whose ids extend one another (``prefix_chains``, at most
        ``CHAIN_CONTEXTS``) share one encoding of the longest: a context reads the keys/values
        of its own first positions and the output layer runs at the contexts' last positions
        only, so a passage of n contexts costs one pass over its tokens, not n passes over
        its prefixes. The chains depend on the contexts alone, not on how they are batched or
        sharded by passage. Logits that hold NaN or infinity at a context's end are an error
        naming the context; so is a context that does not fit the model's positions with its
        longest word (``WordModel.check_fits``, before any pass).
        """
        encoded = [(item, self.lm.encode(item[0])) for item in items]
        self.lm.check_fits(((f"context {_opening(item[0])} ({len(item[0].split()):,} words)", len(ids))
                            for item, ids in encoded),
                           max((len(self.word_ids(w)) for (_, words), _ in encoded
                                for w in (() if words is None else words)), default=0))
        for chain in prefix_chains(encoded, lambda pair: pair[1], CHAIN_CONTEXTS):
            yield from self._chain_encodings([(item, ids) for (item, _), ids in chain])

    @torch.inference_mode()
    def _chain_encodings(self, chain: list) -> Iterator[tuple]:
        """``_encodings`` of one chain of ``((context, payload), ids)``. A sliding-window layer
        keeps only the last positions of an encoding longer than its window, which no shorter
        context can be cut from: such a chain's contexts are encoded one by one instead."""
        ends = torch.tensor([len(ids) - 1 for _, ids in chain], device=self.device)
        out = self.model(input_ids=torch.tensor([chain[-1][1]], device=self.device), use_cache=True,
                         logits_to_keep=ends)
        unusable = ~torch.isfinite(out.logits[0]).all(-1)
        if bool(unusable.any()):
            raise ValueError(f"the context {chain[-1][0][0]!r} or a prefix of it: "
                             f"{UnusableWeights(unusable.nonzero()[:, 0].tolist())}")
        layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        if len(chain) > 1 and any(keys.shape[2] < len(chain[-1][1]) for keys, _ in layers):
            for member in chain:
                yield from self._chain_encodings([member])
            return
        for index, ((_, payload), ids) in enumerate(chain):
            n = len(ids)
            cache = [(keys[:, :, :n], values[:, :, :n]) for keys, values in layers]
            yield payload, n, cache, torch.log_softmax(out.logits[0, index].double(), -1)

    def _score_words(self, shared: list, passage: int, first: torch.Tensor, words: Sequence[str]) -> np.ndarray:
        """log P(w | c) of ``words`` on one context's cache, ``batch_size`` words of one token
        length per pass."""
        by_length: dict[int, list[int]] = {}
        encoded = [self.word_ids(w) for w in words]
        for i, (word, word_ids) in enumerate(zip(words, encoded, strict=True)):
            if not word_ids:
                raise ValueError(f"word {word!r} encodes to no token")
            by_length.setdefault(len(word_ids), []).append(i)
        scores = np.empty(len(words))
        for group in by_length.values():
            for start in range(0, len(group), self.batch_size):
                rows = group[start : start + self.batch_size]
                scores[rows] = self._score_chunk(shared, passage, first, [encoded[i] for i in rows])
        return scores

    @torch.inference_mode()
    def _score_chunk(self, shared: list, passage: int, first: torch.Tensor,
                     chunk: list[list[int]]) -> np.ndarray:
        """log P(w | c) of words of one token length n, in one pass on the context's cache."""
        tokens = torch.tensor(chunk, dtype=torch.long, device=self.device)
        size, n = tokens.shape
        layers = [(k.expand(size, -1, -1, -1), v.expand(size, -1, -1, -1)) for k, v in shared]
        out = self.model(
            input_ids=tokens,
            past_key_values=DynamicCache(layers, config=self.model.config),
            attention_mask=torch.ones(size, passage + n, dtype=torch.long, device=self.device),
            position_ids=(passage + torch.arange(n, device=self.device)).expand(size, -1),
        )
        return self._word_scores(out.logits, tokens, first)

    def _word_scores(self, logits: torch.Tensor, tokens: torch.Tensor, first: torch.Tensor) -> np.ndarray:
        """log P(w | c) of each row's word from its pass's logits ``(rows, n, V)`` after its
        tokens ``(rows, n)`` and log pi(. | c) ``first``.

        log pi(t | c, y_1..y_{i+1}) of word b is logits[b, i, t] - norm[b, i]. One float64 block
        of exp(logits - top) serves the normaliser and the mass on B (a product with B's 0/1
        vector), so neither B's columns nor a second exponential is materialised: with Gemma-3's
        262,144 tokens two log-sum-exps over the vocabulary were a large share of the scoring's
        time (the documentation's performance page, ``scoring_speed``).
        """
        logits = logits.double()
        picked = logits[:, :-1].gather(-1, tokens[:, 1:, None])[..., 0]
        top = logits.amax(-1, keepdim=True)
        mass = logits.sub_(top).exp_()
        norm = mass.sum(-1).log_() + top[..., 0]
        closing = (mass[:, -1] @ self.closing_weight).log_() + top[:, -1, 0] - norm[:, -1]
        inner = picked - norm[:, :-1]
        return (first[tokens[:, 0]] + inner.sum(-1) + closing).cpu().numpy()


def _opening(context: str) -> str:
    """A context's first words in a message: its first 40 characters, quoted."""
    return repr(context[:40] + ("..." if len(context) > 40 else ""))
