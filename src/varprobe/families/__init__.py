"""Analysis families: the studies of the config's ``analyses`` (Ilia & Aziz 2024, Sec. 5 and
the appendices; Liu et al. 2024), each built on the Provo study's tables but token calibration,
whose corpus may be a production dataset's references.

A family is one folder of this package, ``families/<name>/``:

- ``__init__.py``, its declaration, which imports nothing: ``KEYS``, its config keys; ``TABLES``,
  the column contracts of the tables only it writes (``varprobe.tables``); ``VALUE_LISTS``, its
  config lists of plain values (key paths below ``analyses``) where a repeated value would repeat
  or merge results (default none); ``PROVO``, whether it reads the Provo study's tables, so that a
  config running it needs a ``provo:`` section (default True);
- ``analysis.py``, its science on tables (with ``unavailable`` where it cannot run on every cloze
  corpus, ``varprobe.availability``);
- ``cli.py``, its subcommands (``register``);
- ``plots.py``, its figures, where it draws any;
- ``rules.smk``, its Snakemake rules;
- ``page.py``, its section of the results page, with its findings and its disagreements with the
  paper (``varprobe.results_page.sections``).

The table contracts, the command line, the workflow, the config checks and the results page read
``families()``; nothing else lists them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from functools import cache
from pathlib import Path


@dataclass(frozen=True, eq=False)
class Family:
    """An analysis family: the declaration of module ``name`` of this package.

    Attributes
    ----------
    name : str
        Its folder's name, ``varprobe.families.<name>``.
    keys : tuple of str
        The keys under the config's ``analyses`` that run it.
    folder : Path
        Its folder, which holds its modules and its rules (``rules``).
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
    folder: Path
    tables: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    value_lists: tuple[tuple[str, ...], ...] = ()
    provo: bool = True

    @property
    def rules(self) -> Path:
        """Its Snakemake rules, ``<folder>/rules.smk``."""
        return self.folder / "rules.smk"

    def module(self, role: str) -> str:
        """The dotted name of its module ``role`` (``analysis``, ``cli``, ``plots``, ``page``)."""
        return f"{__name__}.{self.name}.{role}"


def declared(name: str) -> Family:
    """The family declared by folder ``name`` of this package.

    Parameters
    ----------
    name : str
        The folder's name, e.g. ``"sample_size"``.

    Returns
    -------
    Family
        Its ``KEYS``, ``TABLES``, ``VALUE_LISTS`` and ``PROVO``, and its folder.
    """
    module = importlib.import_module(f"{__name__}.{name}")
    return Family(name=name, keys=module.KEYS, folder=Path(module.__file__).parent,
                  tables=getattr(module, "TABLES", {}), value_lists=getattr(module, "VALUE_LISTS", ()),
                  provo=getattr(module, "PROVO", True))


@cache
def families() -> dict[str, Family]:
    """Every family by config key, sorted (a family with several keys is listed under each).

    Returns
    -------
    dict of str to Family
        The family of each folder of this package, under each of its keys.
    """
    found = {}
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
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
