"""The results page's study sections: the studies' own (the Provo study, fine-tuning, production)
and one per analysis family, each from its folder's ``page`` module
(``varprobe.families.<name>.page``), in the order of their positions.

A family's page module holds ``SECTION`` (a ``Section``: heading, the paper's items it answers,
the tables it shows by name prefix, its figures' folders and its position), and where it has
them ``VIEWS`` (how it shows its tables: a name prefix's view takes all of the prefix's frames
and the run's measured tables, ``measured`` of ``varprobe.results_page.page.render``, and gives
the frames to print), ``FIGURES`` (the paper figure each of its figures answers, by a part of
the figure's path), ``GLOSSARY`` (its quantities' names and definitions), ``NOTES`` (by name
prefix, a function of the run's config giving the Markdown the page writes under the table),
``FINDINGS`` and ``DISPUTED_BY`` (its findings, ``varprobe.results_page.findings``) and
``GROUPS``, ``PAIRS`` and ``CAUSES`` (its disagreements with the paper, with their measured
causes, ``varprobe.results_page.disagreements``). The page reads them by section, in page order;
nothing else lists a family's section.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from types import ModuleType

import pandas as pd

from varprobe.families import families
from varprobe.results_page.markup import Markup

View = Callable[[list[pd.DataFrame], Mapping], list[pd.DataFrame]]
"""A section's view of the tables of one name prefix: (its frames, the run's measured tables) to
the frames the page prints."""


@dataclass(frozen=True)
class Section:
    """One study's section: its heading, the paper's tables and figures it answers, the
    registered tables it shows (by name prefix), its figures (by study folder) and its position
    on the page (lowest first)."""

    heading: str
    _: KW_ONLY
    paper: str
    entries: tuple[str, ...]
    figures: tuple[str, ...]
    position: int


STUDY_SECTIONS = {
    "provo": Section("Next-word calibration: expected TVD and ECE",
                     paper="Ilia & Aziz 2024, Table 1, Figs. 1-2",
                     entries=("provo_summary", "provo_api_replies"),
                     figures=("provo",), position=0),
    "finetune": Section("Fine-tuning on Provo",
                        paper="Ilia & Aziz 2024, App. F, Figs. 17-18",
                        entries=("finetune_comparison", "finetune_losses"),
                        figures=("finetune",), position=70),
    "production": Section("Production variability",
                          paper="Giulianelli et al. 2023, Secs. 6-7, Figs. 2-5",
                          entries=("production_summary", "production_adequacy", "production_beats_copy"),
                          figures=("production",), position=90),
}
"""The studies' own sections (those of no analysis family), by key."""


def page_modules() -> dict[str, ModuleType]:
    """Each analysis family's page module (``varprobe.families.<name>.page``), by family name."""
    return {family.name: importlib.import_module(family.module("page"))
            for family in dict.fromkeys(families().values())}


def sections() -> dict[str, Section]:
    """Every section of the page, by key (a family's is its name), in page order.

    Returns
    -------
    dict of str to Section
        ``STUDY_SECTIONS`` and each family's ``SECTION``, sorted by position.

    Raises
    ------
    ValueError
        Naming a family whose section's key or position another section has.
    """
    found = dict(STUDY_SECTIONS)
    for name, module in page_modules().items():
        if name in found:
            raise ValueError(f"analysis family {name!r}: a study's section has that key")
        found[name] = module.SECTION
    positions = [s.position for s in found.values()]
    clash = [key for key, s in found.items() if positions.count(s.position) > 1]
    if clash:
        raise ValueError(f"page sections {', '.join(clash)} share a position")
    return dict(sorted(found.items(), key=lambda item: item[1].position))


def by_section(study: Mapping, hook: str) -> list:
    """Per section of the page, in page order (``sections``): a study's entry of ``study`` (by
    section key), or an analysis family's page module's attribute ``hook``, where it has one.

    Parameters
    ----------
    study : Mapping
        The studies' own entries, by section key.
    hook : str
        The attribute of a family's page module (``FINDINGS``, ``GROUPS``, ...).

    Returns
    -------
    list
        The entries found, in page order.
    """
    modules = page_modules()
    found = [study[key] if key in study else getattr(modules.get(key), hook, None) for key in sections()]
    return [value for value in found if value is not None]


def family_views(measured: Mapping) -> dict[str, Callable[[list[pd.DataFrame]], list[pd.DataFrame]]]:
    """The families' views (``VIEWS``) by name prefix, each given the run's ``measured`` tables."""
    return {prefix: (lambda frames, view=view: view(frames, measured))
            for module in page_modules().values() for prefix, view in getattr(module, "VIEWS", {}).items()}


def family_figures() -> dict[str, str]:
    """The paper figure each of the families' figures answers, by a part of its path (``FIGURES``)."""
    return {part: item for module in page_modules().values() for part, item in getattr(module, "FIGURES", {}).items()}


def family_glossary() -> dict[str, tuple[str, str]]:
    """The families' glossary entries (``GLOSSARY``): each name with its definition and the section
    (family) it belongs to."""
    return {term: (definition, name) for name, module in page_modules().items()
            for term, definition in getattr(module, "GLOSSARY", {}).items()}


def family_notes(config: Mapping) -> dict[str, Markup]:
    """What the page writes under each family table, by name prefix (``NOTES``), for the run's
    validated ``config``: Markdown of the family's own, not of a table or a config string."""
    return {prefix: Markup(note(config))
            for module in page_modules().values() for prefix, note in getattr(module, "NOTES", {}).items()}
