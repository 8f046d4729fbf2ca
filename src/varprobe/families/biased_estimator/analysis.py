"""The biased model estimate of next-word distributions (Ilia & Aziz 2024, Appendix A, eq. 1).

Instead of the Monte Carlo estimate (the MLE of complete-word draws), the model's probability
of each word of a *support* S(c) is computed exactly and renormalised over S(c):

    log q(w | c) = log P(w | c) - log sum_{k in S(c)} P(k | c),

where P(w | c) is the probability that the model's first complete word after c is w: the
probability of the tokens of ``" " + w`` times the beginning-of-word correction, the mass of
the tokens that close the word (``varprobe.sampling.scoring``). The paper's eq. (1) writes
log f(c, w) - log f(c) for the first term (the joint probability of the token sequence); the
correction makes it the probability of the *complete* word, so "the" does not take mass that
belongs to "there" (Pimentel & Meister 2024).

The support is the union of (``SOURCES``):

* ``samples``: the words of the system's samples table (the configured ``samples_decoding``);
* ``greedy``: the word of one draw with top_k = 1;
* ``nucleus-P``: the words of ``nucleus_samples`` draws with top_p = P, for each configured P;
* ``human``: every human response;
* ``corpus``: the word of the text.

The greedy and nucleus draws use the complete-word sampler with stream key
``(text_id, word_number, s)``, s = 0 for greedy and 1, 2, ... for the nucleus values in
order: no draw reuses the uniforms of the samples table (key ``(text_id, word_number)``).

The estimator is biased: it puts all the mass on S(c), so it overestimates the words in it and
gives 0 to every other word; it forces the model to give mass to every human response.

*Surface form.* A word is scored as its normalised form (lowercase, punctuation removed, as
Provo's responses are: ``varprobe.words.normalise_word``), so "don't" is scored as " dont" and
a sentence-initial word in lowercase; different spellings the model would write for one
normalised word are not summed. This underestimates P(w | c) for such words.

The family's declaration: ``varprobe.families.biased_estimator``; its subcommands:
``varprobe.families.biased_estimator.cli``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from varprobe.analysis.next_word import ModelEstimate, human_counts, model_counts
from varprobe.metrics.dense import renormalise
from varprobe.words import has_word_char


@dataclass(frozen=True, kw_only=True)
class BiasedSettings:
    """The nucleus values and draws per value, the sampler's token budget, batch size and seed."""

    nucleus: tuple[float, ...] = (0.7, 0.8, 0.9)
    nucleus_samples: int = 100
    max_tokens: int = 20
    batch_size: int = 256
    seed: int = 0

    def __post_init__(self) -> None:
        for p in self.nucleus:
            if not 0 < p <= 1:
                raise ValueError(f"nucleus values must be in (0, 1], got {p}")
        if self.nucleus_samples < 1:
            raise ValueError(f"nucleus_samples must be >= 1, got {self.nucleus_samples}")


def sources(nucleus: Sequence[float]) -> tuple[str, ...]:
    """The support's sources, in the order they are listed in the support table.

    Parameters
    ----------
    nucleus : sequence of float
        The nucleus masses drawn at.

    Returns
    -------
    tuple of str
        The sources' names: the samples, greedy, one per nucleus mass, the humans and the
        corpus word.
    """
    return ("samples", "greedy", *(f"nucleus-{p:g}" for p in nucleus), "human", "corpus")


def model_draws(lm, contexts: pd.DataFrame, settings: BiasedSettings) -> dict:
    """Per context ``(text_id, word_number)``: ``{source: [word or "" for a failed draw]}`` for
    the greedy draw and the nucleus draws (module docstring).

    Parameters
    ----------
    lm : varprobe.sampling.word_model.WordModel
        The causal LM as the samplers read it (the job's one, which its scorer shares).
    contexts : pandas.DataFrame
        The contexts to draw at (``provo_contexts``).
    settings : BiasedSettings
        The nucleus masses, draws per mass, token budget, batch size and seed.

    Returns
    -------
    dict
        Per context, the words of each source.
    """
    from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
    from varprobe.sampling.decoding import Decoding

    runs = [("greedy", Decoding("greedy", top_k=1), 1)]
    runs += [(f"nucleus-{p:g}", Decoding(f"nucleus-{p:g}", top_p=p), settings.nucleus_samples)
             for p in settings.nucleus]
    keys = [(int(t), int(w)) for t, w in zip(contexts["text_id"], contexts["word_number"], strict=True)]
    draws: dict = {key: {} for key in keys}
    for stream, (source, decoding, n) in enumerate(runs):
        sampler = CompleteWordSampler(
            lm, decoding,
            SamplerSettings(n, settings.max_tokens, settings.batch_size, settings.seed),
        )
        work = (((*key, stream), ctx) for key, ctx in zip(keys, contexts["context"], strict=True))
        for key, found in zip(keys, sampler.sample_many(work), strict=True):
            draws[key][source] = [d.word for d in found]
    return draws


def support(named_words: Mapping[str, Iterable[str]], order: Sequence[str]) -> dict[str, list[str]]:
    """The support of one context: ``{word: [sources it came from]}`` over the words of every
    source in ``order`` (empty strings, i.e. failed draws, and words without a letter or digit
    are left out). Words are listed in order of first appearance, sources in ``order``.

    Parameters
    ----------
    named_words : Mapping of str to iterable of str
        Each source's words.
    order : sequence of str
        The sources, in the order to list them.

    Returns
    -------
    dict of str to list of str
        Each support word with its sources.
    """
    found: dict[str, list[str]] = {}
    for source in order:
        for word in named_words.get(source, ()):
            if word and has_word_char(word) and source not in found.setdefault(word, []):
                found[word].append(source)
    return found


def biased_estimates(
    contexts: pd.DataFrame,
    samples: pd.DataFrame,
    responses: pd.DataFrame,
    draws: dict,
    *,
    score_many,
    order: Sequence[str],
) -> pd.DataFrame:
    """The support table (schema ``biased_support``) of ``contexts``: per context, each support
    word with its sources, log P(w | c) and renormalised probability q(w | c), and on every row
    the context's model draws (samples, greedy, nucleus) and how many of them gave a word.

    ``draws``: ``model_draws``' result; ``score_many(pairs)``: for each ``(context, words)``
    in order, log P(w | c) per word (``WordScorer.word_log_probs_many``).

    Parameters
    ----------
    contexts : pandas.DataFrame
        The contexts (``provo_contexts``).
    samples : pandas.DataFrame
        The model's samples (``provo_samples``).
    responses : pandas.DataFrame
        The human responses (``provo_responses``).
    draws : dict
        ``model_draws``' result.
    score_many : callable
        Log P(w | c) of the words of each ``(context, words)`` pair.
    order : sequence of str
        The sources (``sources``).

    Returns
    -------
    pandas.DataFrame
        The support table.
    """
    humans = human_counts(responses)
    sampled = model_counts(samples)
    drawn = samples.groupby(["text_id", "word_number"])["count"].sum()
    supports = []
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        own = draws.get(key, {})
        named = {"samples": sorted(sampled.get(key, {})), **own, "human": sorted(humans[key]),
                 "corpus": [ctx.corpus_word]}
        supports.append((ctx.context, key, own, support(named, order)))
    scores = score_many((context, list(found)) for context, _, _, found in supports)
    rows = []
    for (_, key, own, found), log_probs in zip(supports, scores, strict=True):
        words = list(found)
        q = renormalise(log_probs)
        n_draws = int(drawn.get(key, 0)) + sum(len(v) for v in own.values())
        n_words = sum(sampled.get(key, {}).values()) + sum(bool(w) for v in own.values() for w in v)
        rows.extend(
            {"text_id": key[0], "word_number": key[1], "word": w, "sources": ",".join(found[w]),
             "log_probability": float(lp), "probability": float(p), "n_draws": n_draws,
             "n_words": n_words}
            for w, lp, p in zip(words, log_probs, q, strict=True)
        )
    return pd.DataFrame(rows, columns=["text_id", "word_number", "word", "sources", "log_probability",
                                       "probability", "n_draws", "n_words"])


def support_estimates(support: pd.DataFrame) -> tuple[dict[tuple[int, int], ModelEstimate], float]:
    """The per-context estimates q(. | c) of a support table (``biased_estimates``, possibly
    the concatenation of its shards) and the share of model draws that gave no word.

    Parameters
    ----------
    support : pandas.DataFrame
        A ``biased_support`` table.

    Returns
    -------
    tuple of (dict, float)
        ``ModelEstimate`` per ``(text_id, word_number)``, and the failure share.
    """
    estimates = {}
    for (t, w), rows in support.groupby(["text_id", "word_number"], sort=False):
        estimates[(int(t), int(w))] = ModelEstimate(
            dict(zip(rows["word"], rows["probability"].astype(float), strict=True)),
            int(rows["n_draws"].iloc[0]), int(rows["n_words"].iloc[0]))
    n_draws = sum(e.n_draws for e in estimates.values())
    n_words = sum(e.n_words for e in estimates.values())
    return estimates, ((n_draws - n_words) / n_draws if n_draws else float("nan"))
