"""varprobe.results_page.departures: every departure from the papers is one record, the results
page lists those of the studies it shows, and the documentation's page is written from the same
records."""

from __future__ import annotations

import re

import pytest
from test_results_page import _measured, _run, _validated

from varprobe.results_page.departures import DEPARTURES, departure_table
from varprobe.results_page.page import render
from varprobe.results_page.sections import sections

SECTIONS = sections()


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    results, entries, config = _run(tmp_path_factory.mktemp("departures"))
    return render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_measured(results), results=str(results))


def _section(page: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## )", page, re.M | re.S)
    assert match, f"the page has no section {heading!r}"
    return match.group(1)


def test_each_record_belongs_to_a_section_of_the_page():
    assert {d.section for d in DEPARTURES} <= set(SECTIONS)
    assert len({d.where for d in DEPARTURES}) == len(DEPARTURES)


def test_the_page_lists_the_departures_of_the_studies_it_shows_and_no_others(page):
    shown = {key for key, section in SECTIONS.items() if f"\n## {section.heading}\n" in page}
    rows = [line for line in _section(page, "Departures from the papers").splitlines() if line.startswith("|")][2:]
    assert shown
    assert [row.split("|")[1].strip() for row in rows] == [d.where for d in DEPARTURES if d.section in shown]


def test_the_table_keeps_the_records_markdown_and_the_papers_own_words():
    table = departure_table({"production", "word_classes"})
    assert set(table["where"]) == {d.where for d in DEPARTURES if d.section in {"production", "word_classes"}}
    control = table.set_index("where").loc["production human control", "the paper (or its authors' code)"]
    assert "two disjoint samples" in control   # the paper's words; the overlap is its code's
    clusters = table.set_index("where").loc["number of semantic clusters", "the paper (or its authors' code)"]
    assert "semantic_TVD.py" in clusters and "5%" in clusters
