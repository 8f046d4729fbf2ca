"""Which configured analyses can run on the configured cloze corpus: each family that cannot run
on every corpus says why, by its analysis module's ``unavailable(key, corpus, settings)``."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from varprobe.analysis import oracle_replacement, regression, word_classes
from varprobe.families import families

UNAVAILABLE: dict[str, Callable[[str, Mapping, Mapping], str | None]] = {
    module.__name__.rpartition(".")[2]: module.unavailable
    for module in (oracle_replacement, regression, word_classes)
}
"""Every family's ``unavailable`` by the family's name (``varprobe.families.Family.name``): why
its key ``key`` cannot run on the cloze corpus entry ``corpus`` (``varprobe.data.cloze``) with its
``settings`` (the key's config entry), or None where it can. A family absent runs on any corpus."""


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
