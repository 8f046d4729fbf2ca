"""Which configured analyses can run on the configured cloze corpus: a family that cannot run on
every corpus says why, by the function ``unavailable`` of its analysis module
(``varprobe.families.<name>.analysis``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from varprobe.families import families


def reason_function(name: str) -> Callable[[str, Mapping, Mapping], str | None] | None:
    """The function that says why family ``name`` (``varprobe.families.Family.name``) cannot run
    its key on a cloze corpus: ``unavailable(key, corpus, settings)`` of its analysis module, with
    ``corpus`` the cloze corpus entry (``varprobe.data.cloze``) and ``settings`` the key's config
    entry, giving the reason or None where it can. None for a family without one: it runs on any
    corpus."""
    module = importlib.import_module(f"varprobe.families.{name}.analysis")
    return getattr(module, "unavailable", None)


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
    reasons = {}
    for key, settings in (config.get("analyses") or {}).items():
        why = reason_function(known[key].name) if key in known else None
        if why is not None:
            reasons[key] = why(key, corpus, settings or {})
    return {key: reason for key, reason in reasons.items() if reason}
