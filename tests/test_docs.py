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
    assert "| `seed` | integer | `0` | a description no page has yet |" in docs.configuration_page()

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
