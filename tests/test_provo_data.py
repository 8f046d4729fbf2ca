"""The Provo loader on the real OSF-layout file, and the fetch step."""

from __future__ import annotations

import pytest

from varprobe.data.provo import (
    AMBIGUOUS_POSITIONS,
    contexts_table,
    dropped_responses,
    read_norms,
    responses_table,
)
from varprobe.data.fetching import fetch
from varprobe.words import read_word


def test_real_file_has_every_position_and_about_forty_responses(provo_norms):
    contexts = contexts_table(provo_norms)
    responses = responses_table(provo_norms)
    positions = provo_norms.drop_duplicates(["Text_ID", "Word_Number"])
    assert len(positions) == 2687
    assert len(contexts) == 2687 - len(AMBIGUOUS_POSITIONS)
    assert contexts["text_id"].nunique() == 55
    per_context = responses.groupby(["text_id", "word_number"])["count"].sum()
    assert per_context.index.equals(contexts.set_index(["text_id", "word_number"]).index)
    assert 39 < per_context.mean() < 41
    assert per_context.min() >= 30 and per_context.max() <= 50


def test_context_is_the_first_n_minus_one_tokens(provo_norms):
    contexts = contexts_table(provo_norms, texts=[1])
    first = contexts.iloc[0]
    assert (first.text_id, first.word_number, first.context, first.word) == (1, 2, "There", "are")
    for row in contexts.itertuples():
        assert len(row.context.split(" ")) == row.word_number - 1 == row.context_length


def test_literal_na_and_null_responses_are_words(provo_norms):
    responses = responses_table(provo_norms)
    assert responses["response"].notna().all()
    assert {"na", "true", "false"} <= set(responses["response"])  # <NA> reads "na"
    assert not (responses["response"].isin(["TRUE", "FALSE", "<NA>"])).any()


def test_responses_are_read_as_model_words_are(provo_norms):
    """A response is the word a model writing it gets (``read_word``): no response keeps
    punctuation, and responses that read alike are one row."""
    responses = responses_table(provo_norms)
    words = set(responses["response"])
    assert all(read_word(w) == w for w in words)
    assert {"tightlipped", "andor", "mr", "heattrapping"} <= words
    assert not words & {"tight-lipped", "and/or", "mr.", "?", "-", ""}
    assert not responses.duplicated(["text_id", "word_number", "response"]).any()


def test_punctuation_only_responses_are_dropped_and_counted(provo_norms):
    """The norms' 75 punctuation-only responses (in 62 contexts) are no words: they leave the
    human distribution, which is the MLE over the remaining responses, and are counted."""
    raw = provo_norms[provo_norms["Response_Count"] > 0]
    dropped = dropped_responses(provo_norms)
    assert int(dropped["count"].sum()) == 75 and len(dropped) == 62
    responses = responses_table(provo_norms)
    kept = responses.groupby(["text_id", "word_number"])["count"].sum()
    typed = raw[[(t, w) not in AMBIGUOUS_POSITIONS for t, w in zip(raw["Text_ID"], raw["Word_Number"])]]
    typed = typed.groupby(["Text_ID", "Word_Number"])["Response_Count"].sum()
    lost = dropped.set_index(["text_id", "word_number"])["count"].reindex(kept.index, fill_value=0)
    assert (kept.to_numpy() + lost.to_numpy() == typed.to_numpy()).all()
    hyphens = responses[(responses["text_id"] == 28) & (responses["word_number"] == 39)]
    assert hyphens["count"].sum() == typed.loc[(28, 39)] - 3


def test_provo_data_records_the_dropped_responses(data_mirror, tmp_path, capsys):
    from varprobe import tables
    from varprobe.cli import main

    out = {"contexts": tmp_path / "c.parquet", "responses": tmp_path / "r.parquet"}
    main(["provo-data", "--norms", str(data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"),
          "--texts", "28", "--contexts-out", str(out["contexts"]), "--responses-out", str(out["responses"])])
    dropped = tables.read_metadata(out["responses"])["dropped_responses"]
    assert dropped["total"] == sum(n for *_, n in dropped["contexts"]) > 0
    assert [28, 39, 3] in dropped["contexts"]
    assert "responses hold no word" in capsys.readouterr().err


def test_corpus_words_are_read_as_model_words_are(provo_norms):
    contexts = contexts_table(provo_norms)
    assert (contexts["corpus_word"] == contexts["word"].map(read_word)).all()
    assert contexts["corpus_word"].str.len().gt(0).all()


def test_mojibake_apostrophes_are_repaired(provo_norms):
    contexts = contexts_table(provo_norms, texts=[27])
    word = contexts.set_index("word_number").loc[44]
    assert word["word"] == "doesn't" and word["corpus_word"] == "doesnt"


def test_unknown_passage_is_named(provo_norms):
    with pytest.raises(ValueError, match=r"\[99\]"):
        contexts_table(provo_norms, texts=[1, 99])


def test_missing_and_corrupt_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read_norms(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("Text_ID,Word_Number\n1,2\n", encoding="latin-1")
    with pytest.raises(ValueError, match="lacks columns"):
        read_norms(bad)
    bad.write_text("Text_ID,Text,Word_Number,Word,Response,Response_Count\nx,a b,2,b,b,1\n")
    with pytest.raises(ValueError, match="column Text_ID holds 'x', not a whole number of at most 9 digits, in row 1"):
        read_norms(bad)


@pytest.mark.parametrize("value", ["100000000000000000000", "-1", "2.5", "", "NaN"])
def test_a_bad_number_in_the_norms_is_named_with_its_column_row_and_value(tmp_path, value):
    """A count past int64 ended in an OverflowError (or, read as a float, wrapped silently); a
    negative one was read; none named its row."""
    bad = tmp_path / "bad.csv"
    bad.write_text(f"Text_ID,Text,Word_Number,Word,Response,Response_Count\n1,a b,2,b,b,1\n1,a b,2,b,c,{value}\n")
    with pytest.raises(ValueError) as raised:
        read_norms(bad)
    assert str(raised.value) == (f"Provo norms file {bad}: column Response_Count holds {value!r}, not a whole "
                                 "number of at most 9 digits, in row 2 (row 1 is the first under the header; 1 "
                                 "such rows)")


def test_fetch_copies_from_the_mirror_and_names_a_missing_one(data_mirror, tmp_path):
    dest = fetch("provo", tmp_path / "raw" / "provo.csv", data_mirror)
    assert dest.read_bytes()[:7] == b"Text_ID"
    with pytest.raises(FileNotFoundError, match="data mirror"):
        fetch("provo", tmp_path / "other.csv", tmp_path)
    assert not (tmp_path / "other.csv").exists()
    assert list((tmp_path / "raw").iterdir()) == [dest]
