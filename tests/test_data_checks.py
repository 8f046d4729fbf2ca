"""Every raw file and user CSV is checked before it is used: pinned digests on fetch and on
reuse, each loader's own counts, encodings, empty files, unreadable tables (issue 14, items 3,
6, 9, 10, 11, 14)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

from varprobe import tables
from varprobe.cli import main
from varprobe.data import SOURCES, published_generations
from varprobe.data.asset import read_asset
from varprobe.data.dailydialog import read_dailydialog
from varprobe.data.provo import contexts_table, read_norms
from varprobe.data.fetching import fetch, verify_copy
from varprobe.data.sources import Digest
from varprobe.data.wmt14 import read_wmt14
from varprobe.sampling.external import read_external_samples

NORMS = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"


@pytest.fixture(scope="module")
def truncated_norms(tmp_path_factory, data_mirror, provo_norms) -> Path:
    """The norms CSV cut after a complete row: passage 26 keeps 3 of its positions (the issue's
    case: 1,307 positions, 1,306 contexts once (18, 3) is dropped, in 26 passages)."""
    cut = provo_norms.index[(provo_norms["Text_ID"] == 26) & (provo_norms["Word_Number"] == 5)][0]
    lines = (data_mirror / NORMS).read_bytes().split(b"\n")
    path = tmp_path_factory.mktemp("truncated") / "Provo_Corpus-Predictability_Norms.csv"
    path.write_bytes(b"\n".join(lines[: cut + 1]) + b"\n")
    return path


def _mirror_with(tmp_path: Path, data_mirror: Path, relative: str, content: Path | bytes) -> Path:
    """A mirror folder holding only ``relative``, with ``content`` (a file's or raw bytes)."""
    target = tmp_path / "mirror" / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content.read_bytes() if isinstance(content, Path) else content)
    return tmp_path / "mirror"


def test_every_mirror_file_matches_its_pinned_digest(data_mirror):
    pinned = [s for name, sources in SOURCES.items() if name != published_generations.DATASET
              for s in sources if s.expected(True) is not None]
    assert len(pinned) == 1 + 1 + 22 + 2  # provo, wmt14, asset, dailydialog
    for source in pinned:
        assert Digest.of(data_mirror / source.mirror_path) == source.expected(True), source.mirror_path
    # Ilia & Aziz's published samples: pinned to the commit, in a mirror where it holds them.
    published = SOURCES[published_generations.DATASET]
    assert len(published) == 2 + 8 + 7 + 7  # Bloom and ChatGPT; GPT-2's, fine-tuned and T = 0.5
    for source in published:
        assert source.url.startswith(f"https://raw.githubusercontent.com/evgeniael/predict_next_word/"
                                     f"{published_generations.COMMIT}/TVD/")
        path = data_mirror / source.mirror_path
        assert not path.is_file() or Digest.of(path) == source.digest, source.mirror_path
    assert all(s.expected(True) is None and s.expected(False) is None for s in SOURCES["writingprompts"])
    assert SOURCES["provo"][0].expected(False) is None  # the OSF original could not be examined


def test_norms_truncated_at_a_row_boundary_are_refused_by_the_loader(truncated_norms):
    norms = read_norms(truncated_norms)
    assert (norms["Text_ID"].nunique(), len(norms.drop_duplicates(["Text_ID", "Word_Number"]))) == (26, 1307)
    with pytest.raises(ValueError, match=r"passages 26 \(3 of its 45 positions\) lack positions"):
        contexts_table(norms)
    with pytest.raises(ValueError, match="data_verify: false"):
        contexts_table(norms, texts=[25, 26])
    assert len(contexts_table(norms, texts=[1])) > 0  # complete passages still read
    assert len(contexts_table(norms, verify=False)) == 1306  # the opt-out reads what is there: 1,306 contexts


def test_a_norms_file_missing_whole_passages_is_refused(provo_norms):
    with pytest.raises(ValueError, match="54 passages and 2627 positions, the published norms have 55 and 2687"):
        contexts_table(provo_norms[provo_norms["Text_ID"] != 55])


def test_fetch_refuses_a_mirror_file_that_is_not_the_pinned_one(tmp_path, data_mirror, truncated_norms,
                                                                  capsys):
    mirror = _mirror_with(tmp_path, data_mirror, NORMS, truncated_norms)
    dest = tmp_path / "raw" / "provo" / "Provo_Corpus-Predictability_Norms.csv"
    with pytest.raises(ValueError) as caught:
        fetch("provo", dest, mirror)
    message = str(caught.value)
    assert str(mirror / NORMS) in message and "is not the pinned file" in message
    assert f"expected sha256 {SOURCES['provo'][0].mirror_digest.sha256} (13,166,182 bytes)" in message
    assert f"got sha256 {Digest.of(truncated_norms).sha256}" in message
    assert "fix or replace" in message and "data_verify: false" in message
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    fetch("provo", dest, mirror, verify=False)
    assert dest.read_bytes() == truncated_norms.read_bytes()
    assert f"{mirror / NORMS}: not checked against its pinned digest" in capsys.readouterr().err


def test_a_reused_copy_is_checked_again(tmp_path, data_mirror, truncated_norms, capsys):
    copy = tmp_path / "raw" / "provo" / "Provo_Corpus-Predictability_Norms.csv"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(truncated_norms, copy)
    with pytest.raises(ValueError) as caught:
        verify_copy("provo", copy, data_mirror)
    assert str(caught.value).startswith(f"{copy} (fetched from {data_mirror / NORMS}) is not the pinned file")
    assert f"delete {copy} and rerun to fetch it again" in str(caught.value)
    verify_copy("provo", copy, None)  # a download from OSF: no digest, the loader decides
    assert "no pinned digest" in capsys.readouterr().err
    shutil.copyfile(data_mirror / NORMS, copy)
    verify_copy("provo", copy, data_mirror)


def test_provo_data_cli_refuses_a_stale_copy_and_the_opt_out_warns(tmp_path, data_mirror, truncated_norms,
                                                                     capsys):
    out = ["--contexts-out", str(tmp_path / "c.parquet"), "--responses-out", str(tmp_path / "r.parquet")]
    command = ["provo-data", "--norms", str(truncated_norms), "--texts", "all", "--mirror", str(data_mirror)]
    with pytest.raises(SystemExit):
        main([*command, *out])
    assert "is not the pinned file" in capsys.readouterr().err
    assert not (tmp_path / "c.parquet").exists()
    main([*command, "--allow-unverified", *out])
    assert "not checked against its pinned digest nor its loader's counts" in capsys.readouterr().err
    assert len(tables.read(tmp_path / "c.parquet", "provo_contexts")) == 1306


def test_asset_with_every_file_cut_alike_is_refused(tmp_path, data_mirror):
    for path in (data_mirror / "asset").glob("asset.test.*"):
        lines = path.read_text(encoding="utf-8").split("\n")
        (tmp_path / path.name).write_text("\n".join(lines[:-1]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"asset.test.orig has 358 lines, the published split has 359"):
        read_asset(tmp_path, "test")
    assert len(read_asset(tmp_path, "test", verify=False)) == 358


def test_wmt14_missing_a_sentence_or_damaged_is_refused(tmp_path, data_mirror):
    lines = gzip.open(data_mirror / SOURCES["wmt14"][0].mirror_path, "rt", encoding="utf-8").read().split("\n")
    short = tmp_path / "short.gz"
    with gzip.open(short, "wt", encoding="utf-8") as out:
        out.write("\n".join(lines[12:]))  # the first sentence's 12 lines dropped
    with pytest.raises(ValueError, match="499 sentences, 0 of them without exactly the tags"):
        read_wmt14(short)
    cut = tmp_path / "cut.gz"
    cut.write_bytes((data_mirror / SOURCES["wmt14"][0].mirror_path).read_bytes()[:50_000])
    with pytest.raises(ValueError, match=rf"{cut} is not a complete gzip file"):
        read_wmt14(cut)


def test_dailydialog_cut_short_or_mid_line_is_refused(tmp_path, data_mirror):
    text = (data_mirror / "dailydialog_pp" / "dev.jsonl").read_text(encoding="utf-8")
    short = tmp_path / "dev.jsonl"
    short.write_text("\n".join(text.split("\n")[:1000]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="1000 contexts, 0 of them without 5 responses.*1028"):
        read_dailydialog(short, "dev")
    short.write_text(text[:5000], encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{short}:\d+: not a JSON object"):
        read_dailydialog(short, "dev", verify=False)


def test_files_in_another_encoding_say_encoding(tmp_path, data_mirror):
    norms = tmp_path / "norms.csv"
    norms.write_bytes((data_mirror / NORMS).read_bytes()[:20_000].decode("latin-1").encode("utf-16"))
    with pytest.raises(ValueError, match=rf"{norms}: wrong encoding: UTF-16 \(byte-order mark\)"):
        read_norms(norms)
    for path in (data_mirror / "asset").glob("asset.test.*"):
        (tmp_path / path.name).write_bytes(path.read_text(encoding="utf-8").encode("utf-16-le"))
    with pytest.raises(ValueError, match="asset.test.orig: wrong encoding: the file holds NUL bytes"):
        read_asset(tmp_path, "test")


def test_a_corrupt_table_names_its_file(tmp_path):
    path = tmp_path / "samples.parquet"
    tables.write(pd.DataFrame({"input_id": ["a"], "sample_index": [0], "text": ["x"]}), path,
                 "production_samples")
    path.write_bytes(path.read_bytes()[:-30])
    for read in (lambda: tables.read(path, "production_samples"), lambda: tables.read_metadata(path),
                 lambda: tables.read_frame(path)):
        with pytest.raises(ValueError, match=rf"table {path} is not a readable Parquet file .*delete it"):
            read()
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        tables.read(tmp_path / "nope.parquet", "production_samples")


@pytest.fixture(scope="module")
def corpus(provo_norms) -> set[tuple[int, int]]:
    return set(zip(provo_norms["Text_ID"], provo_norms["Word_Number"], strict=True))


@pytest.fixture(scope="module")
def passage_one_contexts(provo_norms) -> pd.DataFrame:
    return contexts_table(provo_norms, texts=[1])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty (0 bytes)"),
        (b"\n  \n", "is empty (4 bytes)"),
        (b"text_id,word_number,sample,count\n", "has a header but no rows (no draws)"),
        ("text_id,word_number,sample\n1,2,are\n".encode("utf-16"), "wrong encoding: UTF-16"),
        ("text_id,word_number,sample\n1,2,caf\xe9\n".encode("latin-1"),
         "wrong encoding: byte 0xe9 at offset 34 is not utf-8"),
        (b"text_id,word_number,sample\n1,2,are\n1,2,\"is\n", "line 3: not a readable CSV row (unexpected end of data)"),
        (b"text_id,word_number,sample\n1,2,are\ntext_id,word_number,sample\n1,2,is\n",
         "row 3: the header repeated (1 such rows)"),
        (b"text_id,word_number,sample,count\n1,2,are,1\n sample , text_id,count,word_number\n",
         "row 3: the header repeated (1 such rows)"),
        (b"text_id,word_number,sample\n1,2,are\n1,2\n",
         "row 2 (line 3): 2 fields, the header has 3 (text_id, word_number, sample); a comma missing?"),
        (b"text_id,word_number,sample\n1,2,are,\n1,3,is,\n", "row 1 (line 2): 4 fields, the header has 3"),
        (b"text_id,word_number,sample,count\n1,2,are,100000000000000000000\n",
         "row 2: column count must be a whole number of at most 9 digits, got '100000000000000000000'"),
        (b"text_id,word_number,sample,count\n1,2,are,-3\n",
         "row 2: column count must be a whole number of at most 9 digits, got '-3'"),
        (b"text_id,word_number,sample,count\n1,2,are,0\n", "row 2: count must be >= 1, got 0"),
    ],
)
def test_unusable_samples_files_say_what_is_wrong(tmp_path, passage_one_contexts, corpus, content, message):
    path = tmp_path / "given.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError) as caught:
        read_external_samples(path, passage_one_contexts, corpus)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_samples_outside_the_configured_contexts_are_skipped_and_counted(tmp_path, passage_one_contexts,
                                                                         corpus):
    path = tmp_path / "given.csv"
    path.write_text("text_id,word_number,sample,count\n1,2,are,3\n2,2,dog,1\n2,3,cat,2\n18,3,the,5\n1,3,now,1\n")
    samples, coverage, _ = read_external_samples(path, passage_one_contexts, corpus)
    assert samples[["text_id", "word_number", "word", "count"]].values.tolist() == [
        [1, 2, "are", 3], [1, 3, "now", 1]]
    assert (coverage.skipped_rows, coverage.skipped_draws, coverage.skipped_contexts) == (3, 8, 3)
    assert coverage.configured_without_rows == len(passage_one_contexts) - 2
    path.write_text("text_id,word_number,sample\n1,2,are\n56,2,x\n1,999,y\n")
    with pytest.raises(ValueError, match=r"2 rows name .* not have: row 3 \(56, 2\), row 4 \(1, 999\)"):
        read_external_samples(path, passage_one_contexts, corpus)
    path.write_text("text_id,word_number,sample\n2,2,dog\n")
    with pytest.raises(ValueError, match=r"none of its 1 rows is for a configured context \(configured passages: \[1\]\)"):
        read_external_samples(path, passage_one_contexts, corpus)


@pytest.mark.parametrize("header", [" count", "Count", "COUNT ", "\tcount"])
def test_a_count_column_spelled_otherwise_is_read_with_a_warning(tmp_path, passage_one_contexts, corpus,
                                                                header):
    """A whitespace or case variant of ``count`` is the count column (on main its counts were
    dropped: every row one draw), and the reader says so."""
    path = tmp_path / "given.csv"
    path.write_text(f"text_id,word_number,sample,{header}\n1,2,are,3\n1,3,now,2\n")
    samples, _, warnings = read_external_samples(path, passage_one_contexts, corpus)
    assert samples["count"].tolist() == [3, 2]
    assert warnings == [f"samples file {path}: column {header!r} read as 'count' (whitespace or case differs)"]


@pytest.mark.parametrize("header", ["counts", "n", "weight"])
def test_an_unknown_column_in_a_samples_file_is_an_error_naming_it(tmp_path, passage_one_contexts, corpus,
                                                                   header):
    path = tmp_path / "given.csv"
    path.write_text(f"text_id,word_number,sample,{header}\n1,2,are,3\n")
    with pytest.raises(ValueError) as caught:
        read_external_samples(path, passage_one_contexts, corpus)
    assert str(caught.value) == (
        f"samples file {path}: unknown column(s) [{header!r}]; expected columns: text_id, word_number, "
        "sample and optionally count (a misspelled column would be read as absent)")


def test_norms_columns_spelled_otherwise_are_read_with_a_warning(tmp_path):
    """The norms' columns in other case or with spaces are read as theirs (on main: 'lacks
    columns'), with a warning naming each; columns the reader does not use are ignored."""
    path = tmp_path / "norms.csv"
    path.write_text(" text_id,Text,WORD_NUMBER,Word,Response,Response_Count ,Extra\n1,a b,2,b,b,3,x\n",
                    encoding="latin-1")
    with pytest.warns(UserWarning) as caught:
        norms = read_norms(path)
    assert norms[["Text_ID", "Word_Number", "Response_Count"]].values.tolist() == [[1, 2, 3]]
    assert sorted(str(w.message) for w in caught) == sorted(
        f"Provo norms file {path}: column {cell!r} read as {column!r} (whitespace or case differs)"
        for cell, column in ((" text_id", "Text_ID"), ("WORD_NUMBER", "Word_Number"),
                             ("Response_Count ", "Response_Count")))


def test_two_columns_that_read_as_one_are_an_error(tmp_path, passage_one_contexts, corpus):
    path = tmp_path / "given.csv"
    path.write_text("text_id,word_number,sample,count,Count\n1,2,are,3,1\n")
    with pytest.raises(ValueError, match=r"columns 'count', 'Count' both read as column 'count'"):
        read_external_samples(path, passage_one_contexts, corpus)


def test_ingest_logs_and_stores_what_it_skipped(tmp_path, data_mirror, passage_one, capsys):
    csv = tmp_path / "given.csv"
    csv.write_text("text_id,word_number,sample\n1,2,are\n18,3,the\n30,4,house\n")
    out = tmp_path / "samples.parquet"
    main(["provo-ingest", "--samples-csv", str(csv), "--contexts", str(passage_one["contexts"]),
          "--norms", str(data_mirror / NORMS), "--mirror", str(data_mirror), "--out", str(out)])
    assert f"samples file {csv}: skipped 2 rows (2 draws) for 2 corpus contexts" in capsys.readouterr().err
    assert tables.read_metadata(out)["coverage"] == {
        "skipped_rows": 2, "skipped_draws": 2, "skipped_contexts": 2, "configured_without_rows": 3}
    assert len(tables.read(out, "provo_samples")) == 1
