"""Tokens and part-of-speech tags from a spaCy pipeline, for the lexical and syntactic probes.

The syntactic probe is the n-gram distance (``lexical.ngram_distance``) over universal POS tags
(spaCy's ``Token.pos_``). Tags come from a trained pipeline for the output language, named in the
config; without one the probe is unavailable for that language, never computed with another
language's tagger. Tokens for the lexical probe come from the same pipeline, or from spaCy's
rule-based tokenizer of the language (``spacy.blank``) when no trained pipeline is configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Components a tagged doc needs: ``tok2vec`` feeds the ``tagger`` (fine-grained tags), and the
# ``attribute_ruler`` maps those to the universal tags in ``pos_`` (``morphologizer`` does both in
# the pipelines of other languages). Everything else only costs time.
POS_COMPONENTS = ("tok2vec", "tagger", "attribute_ruler", "morphologizer")


@dataclass(frozen=True)
class Parsed:
    """One text as the probes use it: its token strings and their POS tags (None: no tagger)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None


def load_pipeline(language: str, name: str | None):
    """The spaCy pipeline ``name`` with only the POS components, or ``spacy.blank(language)``
    (tokenizer only) when ``name`` is None. Raises OSError naming the pipeline if not installed."""
    import spacy

    if name is None:
        return spacy.blank(language)
    try:
        nlp = spacy.load(name)
    except OSError as err:
        raise OSError(f"spaCy pipeline {name!r} for language {language!r} is not installed ({err})") from err
    if nlp.lang != language:
        raise ValueError(f"spaCy pipeline {name!r} is for language {nlp.lang!r}, not {language!r}")
    for component in [c for c in nlp.pipe_names if c not in POS_COMPONENTS]:
        nlp.remove_pipe(component)
    return nlp


def parse(texts: Iterable[str], nlp, batch_size: int = 256) -> list[Parsed]:
    """Tokens and tags of each text, in order; tags are None for a tokenizer-only pipeline."""
    tagged = bool(nlp.pipe_names)
    return [
        Parsed(tuple(t.text for t in doc), tuple(t.pos_ for t in doc) if tagged else None)
        for doc in nlp.pipe(texts, batch_size=batch_size)
    ]
