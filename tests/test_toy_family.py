"""A new analysis family is one folder, as CONTRIBUTING.md says: a toy family written into a folder
on the families' package path reaches the config checks, the table contracts, the command line,
the availability check and a section of the results page with its finding and its disagreement with the paper, with no
edit anywhere else."""

from __future__ import annotations

import re
import sys

import pandas as pd
import pytest

from test_results_page import _measured, _run, _validated
from varprobe import families as family_package
from varprobe import tables
from varprobe.availability import reason_function
from varprobe.cli import build_parser, main
from varprobe.config_checks import check_config
from varprobe.families import families
from varprobe.results_page import sections
from varprobe.results_page.page import render

TOY = {
    "__init__.py": '''"""Declaration of the toy family: how many characters each model's name has."""

KEYS = ("toy_counts",)

TABLES = {"toy_counts_summary": {"model": "string", "n_characters": "int64"}}

PROVO = False
''',
    "analysis.py": '''"""The toy family's science: a name's length."""


def counts(names):
    """Each name with its number of characters."""
    return [(name, len(name)) for name in names]
''',
    "cli.py": '''"""The toy family's subcommand."""

import pandas as pd

from varprobe import tables
from varprobe.families.toy_counts.analysis import counts


def _toy(args):
    frame = pd.DataFrame(counts(args.models), columns=["model", "n_characters"])
    tables.write(frame, args.out, "toy_counts_summary")


def register(sub):
    p = sub.add_parser("toy-counts", help="the characters of each model's name")
    p.add_argument("--models", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_toy)
''',
    "page.py": '''"""The toy family's section of the results page."""

import math

from varprobe.results_page.disagreements import Group, Pair
from varprobe.results_page.findings import table_of
from varprobe.results_page.sections import Section

SECTION = Section("Toy counts", paper="Nobody 2026, Table 9", entries=("toy_counts_summary",),
                  figures=("toy_counts",), position=55)

VIEWS = {"toy_counts_summary": lambda frames, measured: [
    f.assign(doubled=f["n_characters"] * 2) for f in frames]}

GLOSSARY = {"toy count": "the number of characters of a model's name"}

NOTES = {"toy_counts_summary": lambda config: f"Counted under seed {config['seed']}."}

FINDINGS = {"toy_counts_summary": (lambda frame: [f"Toy: the first name has {frame['n_characters'].iloc[0]} "
                                                  "characters (toy table)."], ())}

GROUPS = {"toy_length": Group("Toy: the name's length", "Nobody 2026, Table 9")}


def toy_pairs(entries, measured, config):
    frame = table_of(entries, "toy_counts_summary")
    return [] if frame is None else [Pair("toy_length", f"{r.model}, characters", ours=float(r.n_characters),
                                          low=math.nan, high=math.nan, paper=9.0, decimals=0)
                                     for r in frame.itertuples(index=False)]


PAIRS = toy_pairs

CAUSES = {"toy_length": lambda entries, measured, config: "Measured: the toy's names are short."}
''',
    "rules.smk": '''rule toy_counts:
    output:
        f"{RESULTS}/analyses/toy_counts/summary.parquet",
    shell:
        "varprobe toy-counts --models m --out {output:q}"
''',
}


@pytest.fixture
def toy_family(tmp_path, monkeypatch):
    """The toy family's folder on the families' package path, gone again after the test."""
    folder = tmp_path / "families" / "toy_counts"
    folder.mkdir(parents=True)
    for name, text in TOY.items():
        (folder / name).write_text(text)
    monkeypatch.setattr(family_package, "__path__", [*family_package.__path__, str(folder.parent)])
    families.cache_clear()
    yield families()["toy_counts"]
    families.cache_clear()
    for module in [m for m in sys.modules if m.startswith("varprobe.families.toy_counts")]:
        del sys.modules[module]


def test_a_toy_family_is_found_by_its_folder_alone(toy_family):
    assert toy_family.rules.is_file() and toy_family.name == "toy_counts"
    check_config({"models": [], "analyses": {"toy_counts": {}}})  # needs no provo section
    assert tables.declared_columns("toy_counts_summary") == {"model": "string", "n_characters": "int64"}
    assert reason_function("toy_counts") is None  # it runs on any corpus
    assert "toy-counts" in build_parser()._subparsers._group_actions[0].choices


def test_a_toy_familys_subcommand_writes_its_declared_table(toy_family, tmp_path):
    out = tmp_path / "summary.parquet"
    main(["toy-counts", "--models", "m", "gpt2", "--out", str(out)])
    assert tables.read(out, "toy_counts_summary").values.tolist() == [["m", 1], ["gpt2", 4]]


def test_a_toy_familys_section_lands_on_the_page_at_its_position(toy_family, tmp_path):
    order = list(sections.sections())
    assert order.index("sample_size") < order.index("toy_counts") < order.index("token_level")
    results, entries, config = _run(tmp_path)
    out = results / "analyses/toy_counts/summary.parquet"
    main(["toy-counts", "--models", "m", "--out", str(out)])
    entries.append({"name": "toy_counts_summary", "table": str(out), "title": "Toy counts per model",
                    "category": "Toy", "schema": "toy_counts_summary"})
    page = render(config=_validated(config), configfiles=[str(config)], commit="abc123", entries=entries,
                  figures=[], benchmarks=str(results / "benchmarks"), measured=_measured(results),
                  results=str(results))
    section = page[page.index("Toy counts"):]
    assert "Nobody 2026, Table 9" in section[:400]
    view = pd.DataFrame({"model": ["m"], "n_characters": [1], "doubled": [2]})
    assert all(str(cell) in section[:1200] for cell in ("doubled", *view.iloc[0].tolist()))
    assert "Counted under seed 0." in section[:1500]
    assert page.index("Toy counts") < page.index("Token level")
    assert "the number of characters of a model's name" in page  # its glossary entry
    assert "Toy: the first name has 1 characters (toy table)." in page  # its finding
    dispute = page[page.index("### Toy: the name's length"):]
    assert re.search(r"\| m, characters\s+\| 1\s+\| 9\s+\|", dispute[:800])  # its pair, which differs
    assert "- cause: Measured: the toy's names are short." in dispute[:1200]
