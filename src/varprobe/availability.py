"""Which configured analyses can run on the configured cloze corpus: a family that cannot run on
every corpus says why, by the function of its name in ``UNAVAILABLE``."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from varprobe.analysis import oracle_replacement, regression, word_classes
from varprobe.families import families


def _oracle_replacement(key: str, corpus: Mapping, settings: Mapping) -> str | None:
    """``oracle_replacement.too_few_responses`` on the corpus's responses; a corpus that cannot be
    read is left to the job that reads it, which names the problem."""
    from varprobe.data.cloze import read_corpus

    try:
        responses = read_corpus(corpus)["responses"]
    except (OSError, ValueError, ImportError):
        return None
    return oracle_replacement.too_few_responses(responses, settings["oracle_sizes"], corpus["name"])


UNAVAILABLE: dict[str, Callable[[str, Mapping, Mapping], str | None]] = {
    "oracle_replacement": _oracle_replacement,
    "regression": regression.unavailable,
    "word_classes": word_classes.unavailable,
}
"""Why a family (by its name, ``varprobe.families.Family.name``) cannot run its key ``key`` on the
cloze corpus entry ``corpus`` (``varprobe.data.cloze``) with its ``settings`` (the key's config
entry), or None where it can. A family absent runs on any corpus."""


def unavailable_analyses(config: Mapping) -> dict[str, str]:
    """The configured analysis keys that cannot run on the configured cloze corpus.

    Parameters
    ----------
    config : Mapping
        The workflow's config: its ``analyses`` and ``provo.corpus`` (absent: Provo itself, which
        runs every analysis).

    Returns
    -------
    dict of str to str
        Each analysis key that cannot run, with the reason.
    """
    corpus = (config.get("provo") or {}).get("corpus")
    if corpus is None:
        return {}
    known = families()
    reasons = {key: UNAVAILABLE[known[key].name](key, corpus, settings or {})
               for key, settings in (config.get("analyses") or {}).items()
               if key in known and known[key].name in UNAVAILABLE}
    return {key: reason for key, reason in reasons.items() if reason}
