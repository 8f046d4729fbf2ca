"""Ilia & Aziz's published samples as systems (issue 73, item 2): their files read, each record
placed on the Provo context of its text, its draws read by our word rule into a samples CSV that
provo-ingest reads, and Table 1's values under the authors' protocol. The extracts in
tests/data/published_generations are records of the real files (its README names them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from varprobe import tables
from varprobe.analysis.published_samples import LIST_WORDS, authors_values, continuation_sample, samples_table
from varprobe.cli import main
from varprobe.data.provo import contexts_table
from varprobe.data.published_generations import (
    SYSTEMS,
    PublishedSystem,
    Record,
    context_tokens,
    corpus_contexts,
    locate_records,
    place_records,
    read_records,
)
from varprobe.models.spec import ModelSpec
from varprobe.run_record import model_identity
from varprobe.words import first_word

EXTRACTS = Path(__file__).parent / "data" / "published_generations"
NORMS = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"


def extract(name: str) -> list[Record]:
    """The records of the extract of system ``name``'s file."""
    published = SYSTEMS[name]
    return read_records(published, [EXTRACTS / f for f in published.files])


@pytest.fixture(scope="module")
def corpus(provo_norms):
    return corpus_contexts(provo_norms)


def test_word_num_is_provo_word_number_but_for_the_em_dash_of_passage_36(provo_norms):
    """The published key's context is our contexts table's for that key (MacRoman characters
    aside): no off-by-one, but in passage 36, cut from a copy with an em-dash token the norms do
    not count, where (36, 30)'s context is the norms' (36, 29)."""
    ours = contexts_table(provo_norms)
    ours = dict(zip(zip(ours["text_id"], ours["word_number"]), ours["context"]))
    for record in extract("bloom") + extract("chatgpt"):
        if record.key == (36, 30):
            assert "Ñ" in record.context and record.context != ours[(36, 30)]
            assert context_tokens(record.context) == context_tokens(ours[(36, 29)])
        else:
            assert context_tokens(record.context) == context_tokens(ours[record.key]), record.key
    assert context_tokens("on womenÕs rights") == ("on", "women's", "rights")


def test_records_are_placed_by_their_text_and_a_repeated_context_keeps_its_first(corpus):
    records = extract("bloom")
    located = locate_records(records, corpus)
    assert [key for key, _ in located] == [(33, 36), (12, 5), (9, 26), (40, 3), (40, 3), (36, 29)]
    placement = place_records(located)
    assert placement.moved == (((36, 30), (36, 29)),)
    assert placement.repeats == ((40, 3),)
    assert placement.records[(40, 3)] is records[3]
    with pytest.raises(ValueError, match=r"published record \(1, 3\): its context .* is no context of passage 1"):
        locate_records([Record((1, 3), "Not the passage", (), ())], corpus)


def test_a_continuation_is_read_as_the_models_own_draws_are():
    """Every Bloom draw's sample reads, as a new word (the samples file's rule), the first word
    our rule reads off the continuation itself: glued punctuation skipped, a draw that extends
    the context's last word or holds no word failed."""
    for record in extract("bloom"):
        for text, _ in record.draws:
            sample = continuation_sample(text)
            assert first_word(" " + sample.lstrip(), ended=True).word == first_word(text, ended=True).word, text
    assert continuation_sample(", if not counter-product") == " if not counter-product"
    assert continuation_sample("'s parents put him on") == ""
    assert continuation_sample("") == ""


def test_samples_rows_of_each_reading(corpus):
    bloom = samples_table(SYSTEMS["bloom"], place_records(locate_records(extract("bloom"), corpus)))
    assert list(bloom.columns) == ["text_id", "word_number", "sample", "count"]
    assert bloom.groupby(["text_id", "word_number"]).size().to_dict() == {
        (9, 26): 40, (12, 5): 40, (33, 36): 40, (36, 29): 40, (40, 3): 40}
    glued = bloom[(bloom["text_id"] == 12) & (bloom["word_number"] == 5)]
    assert (glued["sample"] == "").sum() == 3  # "'s parents ...", "'s feelings ...", "’s mother ..."
    listed = samples_table(SYSTEMS["chatgpt-list"], place_records(locate_records(extract("chatgpt-list"), corpus)))
    sizes = listed.groupby(["text_id", "word_number"]).size()
    assert sizes.max() == LIST_WORDS and len(sizes) == 3  # the 41-item reply gives 40 draws
    gpt2 = PublishedSystem("extract", column="GPT2 T=0.5", folder="TVD/GPT2_Temp/Generations",
                           files=("Paragraphs_temp-30-42.json",), reading="word")
    [first, _] = read_records(gpt2, [EXTRACTS / "Paragraphs_temp-30-42.json"])
    assert ("Failed to generate word", 1) in first.draws and ("failed to generate word", 1) in first.authors_words
    rows = samples_table(gpt2, place_records(locate_records([first], corpus)))
    assert rows["count"].sum() == 40 and rows.loc[rows["sample"] == "", "count"].tolist() == [1]


def test_authors_values_by_hand(provo_norms, corpus):
    """One scored record at (1, 2), "There": words are 30, is 10; the responses are 16 are, 9 is
    and 15 others of 40. TVD = (|.75 - .4| + |.25 - .225| + .375) / 2 = .375; the mode "are"
    (.75) is the corpus word and the human majority, so both ECEs are |.75 - 1|; it is oracle 1's
    majority in 18 of the authors' 20 splits: (18 * .25 + 2 * .75) / 20 = .3. The last record is
    left out, as the authors' loops leave it."""
    record = Record((1, 2), "There", (("x", 40),), (("are", 30), ("Is", 10)))
    left_out = Record((1, 3), "There are", (("x", 40),), (("Failed to generate word", 40),))
    values = authors_values(locate_records([record, left_out], corpus), provo_norms)
    assert values["n_contexts"] == 1
    assert values["expected_tvd"] == pytest.approx(0.375)
    assert values["ece_corpus"] == pytest.approx(0.25) and values["ece_human_majority"] == pytest.approx(0.25)
    assert values["ece_oracle_majority"] == pytest.approx(0.3)


def test_published_cli_writes_a_samples_file_that_provo_ingest_reads(tmp_path, data_mirror, provo_norms):
    norms = str(data_mirror / NORMS)
    contexts = tmp_path / "contexts.parquet"
    tables.write(contexts_table(provo_norms, [9, 12, 33, 36, 40]), contexts, "provo_contexts")
    csv, authors = tmp_path / "published.csv", tmp_path / "authors.parquet"
    main(["provo-published", "--system", "bloom", "--files", str(EXTRACTS / "bloom_generations.json"),
          "--norms", norms, "--allow-unverified", "--out", str(csv), "--authors-out", str(authors)])
    table = tables.read(authors, "provo_published")
    assert table["protocol"].tolist() == ["authors", "paper"]
    assert table["expected_tvd"].iloc[1] == 0.61 and table["n_contexts"].iloc[0] == 5
    out = tmp_path / "samples.parquet"
    main(["provo-ingest", "--samples-csv", str(csv), "--contexts", str(contexts), "--norms", norms,
          "--allow-unverified", "--out", str(out)])
    samples = tables.read(out, "provo_samples")
    keys = set(zip(samples["text_id"], samples["word_number"]))
    assert keys == {(9, 26), (12, 5), (33, 36), (36, 29), (40, 3)}
    assert int(samples["count"].sum()) == 200
    comma = samples[(samples["text_id"] == 33) & (samples["word_number"] == 36)]
    assert comma.loc[comma["sample_index"] == 30, "word"].tolist() == ["if"]  # ", if not counter-product"
    assert not comma["failed"].any()


def test_a_published_model_entry_is_a_samples_model_of_a_known_system():
    entry = {"name": "bloom-published", "published": {"system": "bloom"}}
    spec = ModelSpec.from_config(entry)
    assert spec.kind == "samples" and spec.local_problem() is None
    assert model_identity(entry) == {"name": "bloom-published", "kind": "samples", "published": "bloom"}
    with pytest.raises(ValueError, match="unknown published system 'blom'; known: gpt2, gpt2-fine-tuned"):
        ModelSpec.from_config({"name": "b", "published": {"system": "blom"}})
    with pytest.raises(ValueError, match="published takes one key, system"):
        ModelSpec.from_config({"name": "b", "published": {"system": "bloom", "words": "authors"}})
