"""Tokens and part-of-speech tags from a spaCy pipeline, for the lexical and syntactic probes.

The syntactic probe is the n-gram distance (``lexical.ngram_distance``) over universal POS tags
(spaCy's ``Token.pos_``). Tags come from a trained pipeline for the output language, named in the
config; without one the probe is unavailable for that language, never computed with another
language's tagger. Tokens for the lexical probe come from the same pipeline, or from spaCy's
rule-based tokenizer of the language (``spacy.blank``) when no trained pipeline is configured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from varprobe.probes.lexical import ngram_counts, ngram_distances
from varprobe.probes.probe import Prepared, Probe

# Components that write ``pos_``: the ``tagger`` (fine-grained tags, which the ``attribute_ruler``
# maps to universal tags) and the ``morphologizer`` (other languages' pipelines). The attribute
# ruler reads more than tags: in the English pipelines some of its patterns match the parser's
# dependency labels (``has`` is AUX or VERB by whether it heads a clause), so a component that
# runs before the last of these can change ``pos_`` and is kept; only what runs after it goes.
POS_WRITERS = ("tagger", "attribute_ruler", "morphologizer")


@dataclass(frozen=True)
class Parsed:
    """One text as the probes use it: its token strings and their POS tags (None: no tagger)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None


def load_pipeline(language: str, name: str | None):
    """The spaCy pipeline ``name`` up to its last component that writes ``pos_``, or
    ``spacy.blank(language)`` (tokenizer only) when ``name`` is None.

    Parameters
    ----------
    language : str
        The language code of the blank pipeline.
    name : str or None
        An installed spaCy pipeline, or None for the tokenizer alone.

    Returns
    -------
    spacy.language.Language
        The pipeline, without the components after its last tagger.

    Raises
    ------
    OSError
        Naming the pipeline when it is not installed.
    """
    import spacy

    if name is None:
        return spacy.blank(language)
    try:
        nlp = spacy.load(name)
    except OSError as err:
        raise OSError(f"spaCy pipeline {name!r} for language {language!r} is not installed ({err})") from err
    if nlp.lang != language:
        raise ValueError(f"spaCy pipeline {name!r} is for language {nlp.lang!r}, not {language!r}")
    for component in after_last_pos_writer(nlp):
        nlp.remove_pipe(component)
    return nlp


def after_last_pos_writer(nlp) -> list[str]:
    """The components of ``nlp`` that run after its last ``POS_WRITERS`` component (by factory):
    they cannot change ``pos_``, so removing them leaves every tag as the full pipeline gives it.

    Parameters
    ----------
    nlp : spacy.language.Language
        A loaded pipeline.

    Returns
    -------
    list of str
        Those components' names, in pipeline order; every component when the pipeline writes no tag.
    """
    names = nlp.pipe_names
    writers = [i for i, name in enumerate(names)
               if nlp.get_pipe_meta(name).factory in POS_WRITERS]
    return names[writers[-1] + 1:] if writers else list(names)


def parse(texts: Iterable[str], nlp, batch_size: int = 256) -> list[Parsed]:
    """Tokens and tags of each text, in order; tags are None for a tokenizer-only pipeline.

    Parameters
    ----------
    texts : iterable of str
        The texts to parse.
    nlp : spacy.language.Language
        The pipeline (``load_pipeline``).
    batch_size : int
        Texts per ``nlp.pipe`` batch.

    Returns
    -------
    list of Parsed
        One record per text: its tokens and their universal POS tags (None without a tagger).
    """
    tagged = bool(nlp.pipe_names)
    return [
        Parsed(tuple(t.text for t in doc), tuple(t.pos_ for t in doc) if tagged else None)
        for doc in nlp.pipe(texts, batch_size=batch_size)
    ]


def _tag_ngrams(prepared: Prepared, n: int) -> list[Counter]:
    return [ngram_counts(p.tags, n) for p in prepared.parsed]


SYNTACTIC = Probe("syntactic", needs="tagger", featurise=_tag_ngrams, distance=ngram_distances,
                  ordered=True)
"""The syntactic probe: n-gram distance over universal POS tags."""
