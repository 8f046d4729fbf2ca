"""Analysis families: the studies of the config's ``analyses`` (Ilia & Aziz 2024, Sec. 5 and
the appendices; Liu et al. 2024), each built on the Provo study's tables but token calibration,
whose corpus may be a production dataset's references.

A family is one module of ``varprobe.analysis`` that declares itself once, as ``FAMILY``: its
config keys, its rule file, the column contracts of the tables it writes, its subcommands and its
config lists of plain values. The command line, the table contracts, the workflow and the config
checks read ``families()``; nothing else lists them. A new family is its analysis module (science,
subcommands, ``FAMILY``), its plot module, its rule file and its schema entry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache


@dataclass(frozen=True, eq=False)
class Family:
    """An analysis family.

    ``keys``: the keys under the config's ``analyses`` that run it; ``rule_file``: its rules,
    ``workflow/rules/<rule_file>.smk``; ``register(sub)``: adds its subcommands to the
    ``varprobe`` parser's subparsers ``sub``; ``tables``: the column contracts of the tables only
    it writes (``varprobe.tables``); ``value_lists``: its config lists of plain values (key paths
    below ``analyses``) where a repeated value would repeat or merge results; ``provo``: whether
    it reads the Provo study's tables, so that a config running it needs a ``provo:`` section;
    ``unavailable(key, corpus, settings)``: why key ``key`` cannot run on the cloze corpus entry
    ``corpus`` (``varprobe.data.cloze``) with its ``settings`` (the key's config entry), or None
    where it can.
    """

    keys: tuple[str, ...]
    rule_file: str
    register: Callable[[object], None]
    tables: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    value_lists: tuple[tuple[str, ...], ...] = ()
    provo: bool = True
    unavailable: Callable[[str, Mapping, Mapping], str | None] | None = None


@cache
def families() -> dict[str, Family]:
    """Every family by config key: the ``FAMILY`` of each module of ``varprobe.analysis`` that
    has one (a family with several keys is listed under each)."""
    import varprobe.analysis

    found = {}
    for module in pkgutil.iter_modules(varprobe.analysis.__path__):
        family = getattr(importlib.import_module(f"varprobe.analysis.{module.name}"), "FAMILY", None)
        for key in family.keys if family else ():
            found[key] = family
    return dict(sorted(found.items()))


def unavailable_analyses(config: Mapping) -> dict[str, str]:
    """The configured analysis keys that cannot run on the configured cloze corpus
    (``provo.corpus``; Provo itself runs every one), each with the reason (``Family.unavailable``)."""
    corpus = (config.get("provo") or {}).get("corpus")
    if corpus is None:
        return {}
    known = families()
    reasons = {key: known[key].unavailable(key, corpus, settings or {})
               for key, settings in (config.get("analyses") or {}).items()
               if key in known and known[key].unavailable is not None}
    return {key: reason for key, reason in reasons.items() if reason}


def family_tables(taken: Iterable[str] = ()) -> dict[str, Mapping[str, str]]:
    """The column contracts of every family's tables, by table name; ValueError naming a table
    that two families, or a family and the tables ``taken`` (``varprobe.tables.SCHEMAS``, which
    passes its names: this module imports no table module), both declare."""
    declared = dict.fromkeys(taken, "varprobe.tables.SCHEMAS")
    found = {}
    for key, family in families().items():
        for name, columns in family.tables.items():
            if declared.setdefault(name, key) not in (key, *family.keys):
                raise ValueError(f"table {name!r} of analysis family {key!r} is already declared "
                                 f"by {declared[name]}")
            found[name] = columns
    return found
