"""Analysis families: the studies of the config's ``analyses`` (Ilia & Aziz 2024, Sec. 5 and
the appendices; Liu et al. 2024), each built on the Provo study's tables but token calibration,
whose corpus may be a production dataset's references.

A family is declared once, by a module of this package that imports nothing: ``KEYS``, its
config keys; ``RULE_FILE``, its rules (``workflow/rules/<RULE_FILE>.smk``); ``TABLES``, the column
contracts of the tables only it writes (``varprobe.tables``); ``VALUE_LISTS``, its config lists of
plain values (key paths below ``analyses``) where a repeated value would repeat or merge results
(default none); ``PROVO``, whether it reads the Provo study's tables, so that a config running it
needs a ``provo:`` section (default True). The table contracts, the workflow and the config checks
read ``families()``; nothing else lists them. A family's science is ``varprobe.analysis.<name>``,
its subcommands ``varprobe.cli.<name>``, its figures ``varprobe.plots.<name>``, all of the
declaration's module name.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from functools import cache


@dataclass(frozen=True, eq=False)
class Family:
    """An analysis family: the declaration of module ``name`` of this package.

    Attributes
    ----------
    name : str
        The module name shared by its declaration, analysis, command-line and plot modules.
    keys : tuple of str
        The keys under the config's ``analyses`` that run it.
    rule_file : str
        Its rules, ``workflow/rules/<rule_file>.smk``.
    tables : Mapping
        The column contracts of the tables only it writes, by table name.
    value_lists : tuple of tuple of str
        Its config lists of plain values, as key paths below ``analyses``.
    provo : bool
        Whether it reads the Provo study's tables.
    """

    name: str
    _: KW_ONLY
    keys: tuple[str, ...]
    rule_file: str
    tables: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    value_lists: tuple[tuple[str, ...], ...] = ()
    provo: bool = True


def declared(name: str) -> Family:
    """The family declared by module ``name`` of this package.

    Parameters
    ----------
    name : str
        The declaration's module name, e.g. ``"sample_size"``.

    Returns
    -------
    Family
        Its ``KEYS``, ``RULE_FILE``, ``TABLES``, ``VALUE_LISTS`` and ``PROVO``.
    """
    module = importlib.import_module(f"{__name__}.{name}")
    return Family(name=name, keys=module.KEYS, rule_file=module.RULE_FILE,
                  tables=getattr(module, "TABLES", {}), value_lists=getattr(module, "VALUE_LISTS", ()),
                  provo=getattr(module, "PROVO", True))


@cache
def families() -> dict[str, Family]:
    """Every family by config key, sorted (a family with several keys is listed under each).

    Returns
    -------
    dict of str to Family
        The family of each module of this package, under each of its keys.
    """
    found = {}
    for module in pkgutil.iter_modules(__path__):
        family = declared(module.name)
        for key in family.keys:
            found[key] = family
    return dict(sorted(found.items()))


def family_tables(taken: Iterable[str] = ()) -> dict[str, Mapping[str, str]]:
    """The column contracts of every family's tables, by table name.

    Parameters
    ----------
    taken : iterable of str
        Table names declared elsewhere (``varprobe.tables.SCHEMAS`` passes its own).

    Returns
    -------
    dict of str to Mapping
        Each family table's columns and dtypes.

    Raises
    ------
    ValueError
        Naming a table that two families, or a family and ``taken``, both declare.
    """
    declared_by = dict.fromkeys(taken, "varprobe.tables.SCHEMAS")
    found = {}
    for key, family in families().items():
        for name, columns in family.tables.items():
            if declared_by.setdefault(name, key) not in (key, *family.keys):
                raise ValueError(f"table {name!r} of analysis family {key!r} is already declared "
                                 f"by {declared_by[name]}")
            found[name] = columns
    return found
