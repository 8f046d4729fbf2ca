"""The documentation's generated pages are current: each committed page equals what
``docs/generate.py`` writes from its source now (the config schema, the declared table columns,
the benchmarks' record), so a changed source without a regenerated page fails here."""

from __future__ import annotations

import importlib.util
import json

import pytest

from varprobe.profiles import PROFILES

ROOT = PROFILES.parent


def generator():
    """``docs/generate.py`` as a module."""
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["docs/configuration/keys.md", "docs/outputs/tables.md",
                                  "docs/performance.md", "README.md"])
def test_committed_generated_page_is_current(page):
    assert (ROOT / page).read_text() == generator().pages()[ROOT / page], (
        f"{page} is not current: run python docs/generate.py")


def test_pages_follow_their_sources(tmp_path, monkeypatch):
    """A new schema key, a new table column and a new benchmark run each change their page."""
    docs = generator()
    schema = docs.yaml.safe_load(docs.SCHEMA.read_text())
    schema["properties"]["seed"]["description"] = "a description no page has yet"
    changed = tmp_path / "schema.yaml"
    changed.write_text(docs.yaml.safe_dump(schema))
    monkeypatch.setattr(docs, "SCHEMA", changed)
    assert "| `seed` | integer (>= 0, <= 4294967295) | `0` | a description no page has yet |" \
        in docs.configuration_page()

    from varprobe.tables import SCHEMAS

    monkeypatch.setitem(SCHEMAS, "provo_responses", {"text_id": "int32", "a_new_column": "string"})
    assert "| a_new_column | string |" in docs.tables_page()

    record = tmp_path / "records.jsonl"
    lines = docs.RECORD.read_text().splitlines()
    run = {"benchmark": "default_job", "date": "2999-01-01", "commit": "abc1234",
           "machine": {"cpu": "Test CPU", "flags": "avx2", "cores": 4, "load": 0.0},
           "options": {}, "figures": {"seconds": 1200}, "note": "a new run"}
    record.write_text("\n".join([*lines, json.dumps(run)]) + "\n")
    monkeypatch.setattr(docs, "RECORD", record)
    page = docs.performance_page()
    assert "| 2999-01-01 | `abc1234` | Test CPU | avx2 | 4 |" in page and "a new run" in page
    assert "the default job 20 minutes" in docs.times_line() and "4 Test CPU cores" in docs.times_line()


def test_configuration_page_documents_every_key():
    """Every key of the schema's top level and of each section appears on the page."""
    docs = generator()
    page = docs.configuration_page()
    schema = docs.yaml.safe_load(docs.SCHEMA.read_text())
    for name, section in schema["properties"].items():
        assert f"`{name}`" in page
        for key in section.get("properties", {}):
            assert f"`{name}.{key}`" in page, f"{name}.{key} missing"


def synthetic_record(path, runs):
    """``runs`` as a record file at ``path``, each (benchmark, date, commit, cpu, figures)."""
    lines = [{"benchmark": benchmark, "date": date, "commit": commit,
              "machine": {"cpu": cpu, "flags": "avx2", "cores": 2, "load": 0.0, "gpu": None},
              "options": {}, "figures": figures, "note": ""}
             for benchmark, date, commit, cpu, figures in runs]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_headline_is_each_machines_latest_run(tmp_path, monkeypatch):
    """Two machines, two dates each: the table holds each machine's latest run carrying the
    headline figure (a later run without it does not count), the newest machine first."""
    docs = generator()
    record = synthetic_record(tmp_path / "records.jsonl", [
        ("bench", "2030-01-01", "a1", "CPU A", {"speedup": 2.0}),
        ("bench", "2030-01-02", "b1", "CPU B", {"speedup": 3.0}),
        ("bench", "2030-01-03", "a2", "CPU A", {"speedup": 2.5}),
        ("bench", "2030-01-04", "b2", "CPU B", {"speedup": 3.5}),
        ("bench", "2030-01-05", "b3", "CPU B", {"other": 9.0})])
    monkeypatch.setattr(docs, "RECORD", record)
    monkeypatch.setattr(docs, "HEADLINES", {"bench": ("speedup", "the old way", "A sentence.")})
    rows = docs.headline_rows(docs.records())
    assert [(row[1], row[2], row[4], row[5]) for row in rows] == [
        ("2 x CPU B", "`speedup` = 3.5", "2030-01-04", "`b2`"),
        ("2 x CPU A", "`speedup` = 2.5", "2030-01-03", "`a2`")]
    assert rows[0][3] == "the old way" and rows[0][6] == "A sentence."
    page = docs.performance_page()
    assert "| `bench` | 2 x CPU B | `speedup` = 3.5 | the old way | 2030-01-04 |" in page
    assert page.index("## Today") < page.index("`speedup` = 3.5") < page.index("## History")


def test_benchmark_without_headline_fails(tmp_path, monkeypatch):
    """A recorded benchmark missing from ``HEADLINES``, or whose headline figure no run records,
    stops the generator naming it."""
    docs = generator()
    record = synthetic_record(tmp_path / "records.jsonl", [
        ("bench", "2030-01-01", "a1", "CPU A", {"speedup": 2.0}),
        ("forgotten", "2030-01-01", "a1", "CPU A", {"speedup": 2.0})])
    monkeypatch.setattr(docs, "RECORD", record)
    monkeypatch.setattr(docs, "HEADLINES", {"bench": ("speedup", "the old way", "A sentence.")})
    with pytest.raises(SystemExit, match="forgotten"):
        docs.performance_page()
    monkeypatch.setattr(docs, "HEADLINES", {"bench": ("speedup", "x", "y."),
                                            "forgotten": ("ratio", "x", "y.")})
    with pytest.raises(SystemExit, match="forgotten.*'ratio'"):
        docs.performance_page()


def test_every_recorded_benchmark_has_a_headline():
    """Each benchmark of ``benchmarks/records.jsonl`` has a headline that one of its runs carries,
    and every headline names a recorded benchmark."""
    docs = generator()
    runs = docs.records()
    assert set(docs.HEADLINES) == {run["benchmark"] for run in runs}
    for name, (figure, _, _) in docs.HEADLINES.items():
        assert any(run["benchmark"] == name and figure in run["figures"] for run in runs), name
    assert {row[0] for row in docs.headline_rows(runs)} - {""} == {f"`{name}`" for name in docs.HEADLINES}
