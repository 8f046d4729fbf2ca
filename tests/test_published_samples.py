"""Ilia & Aziz's published samples as systems (issue 73, item 2): their files read, each record
placed on the Provo context of its text, its draws read by our word rule into a samples CSV that
provo-ingest reads, and Table 1's values under the authors' protocol. The extracts in
tests/data/published_generations are records of the real files (its README names them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from varprobe import tables
from varprobe.analysis.published_samples import (
    AUTHORS_MODEL,
    LIST_WORDS,
    MODEL_SWITCHES,
    ModelProtocol,
    continuation_sample,
    model_switch_table,
    model_values,
    samples_table,
)
from varprobe.cli import main
from varprobe.data.provo import contexts_table
from varprobe.data.published_generations import (
    FAILED,
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
    values = model_values(SYSTEMS["gpt2"], locate_records([record, left_out], corpus), norms=provo_norms,
                          protocol=AUTHORS_MODEL)
    assert values["n_contexts"] == 1
    assert values["expected_tvd"] == pytest.approx(0.375)
    assert values["ece_corpus"] == pytest.approx(0.25) and values["ece_human_majority"] == pytest.approx(0.25)
    assert values["ece_oracle_majority"] == pytest.approx(0.3)


@pytest.fixture(scope="module")
def bloom_run(tmp_path_factory, data_mirror):
    """Bloom's extract through provo-published, provo-ingest and provo-divergence (the samples
    model's path), on the extract's passages: the authors' table, the samples and our summary."""
    out = tmp_path_factory.mktemp("bloom")
    norms = str(data_mirror / NORMS)
    path = {k: str(out / f"{k}.parquet") for k in ("contexts", "responses", "authors", "samples", "tvd", "system")}
    main(["provo-data", "--norms", norms, "--texts", "9", "12", "33", "36", "40", "--contexts-out",
          path["contexts"], "--responses-out", path["responses"], "--mirror", str(data_mirror)])
    csv = str(out / "published.csv")
    main(["provo-published", "--system", "bloom", "--files", str(EXTRACTS / "bloom_generations.json"),
          "--norms", norms, "--allow-unverified", "--seed", str(SEED), "--out", csv, "--authors-out", path["authors"]])
    main(["provo-ingest", "--samples-csv", csv, "--contexts", path["contexts"], "--norms", norms,
          "--allow-unverified", "--out", path["samples"]])
    main(["provo-divergence", "--contexts", path["contexts"], "--responses", path["responses"], "--seed", str(SEED),
          "--resplits", "20", "--ece-bins", "10", "--bootstrap", "10", "--model", "bloom", "--decoding", "given",
          "--samples", path["samples"], "--tvd-out", path["tvd"], "--system-out", path["system"]])
    schema = {"authors": "provo_published", "samples": "provo_samples", "system": "provo_system"}
    return {k: tables.read(path[k], s) for k, s in schema.items()}


SEED = 5


def test_published_cli_writes_a_samples_file_that_provo_ingest_reads(bloom_run):
    table = bloom_run["authors"]
    assert table["protocol"].tolist() == (["ours"] + ["ours + switch"] * 9 + ["authors"]
                                          + ["authors - switch"] * 9 + ["paper"])
    authors, paper = (table[table["protocol"] == p].iloc[0] for p in ("authors", "paper"))
    assert paper["expected_tvd"] == 0.61 and authors["n_contexts"] == 5
    samples = bloom_run["samples"]
    keys = set(zip(samples["text_id"], samples["word_number"]))
    assert keys == {(9, 26), (12, 5), (33, 36), (36, 29), (40, 3)}
    assert int(samples["count"].sum()) == 200
    comma = samples[(samples["text_id"] == 33) & (samples["word_number"] == 36)]
    assert comma.loc[comma["sample_index"] == 30, "word"].tolist() == ["if"]  # ", if not counter-product"
    assert not comma["failed"].any()


def test_our_end_of_the_switch_table_is_our_pipelines_summary_of_the_same_samples(bloom_run):
    """Every switch off is the row provo-divergence gives the samples file: the switch table runs
    from our own numbers to the authors' (whose end the hand test above checks)."""
    table, ours = bloom_run["authors"], bloom_run["system"].iloc[0]
    row = table[table["protocol"] == "ours"].iloc[0]
    for value in ("expected_tvd", "ece_corpus", "ece_human_majority", "ece_oracle_majority"):
        assert row[value] == pytest.approx(ours[value], abs=1e-12), value
    assert row["n_contexts"] == ours["n_contexts"]


def test_each_switch_row_differs_from_its_end_by_that_definition_alone(provo_norms, corpus):
    """One record at (1, 2), whose corpus word is "are": its words "is", "are" and "zebra" tie at
    1/3. The first most probable word (``first_max_ties``) is "is", a miss: ECE |1/3 - 0|; the
    lexicographically first is "are", a hit: ECE |1/3 - 1|. So the tie rule alone moves the
    corpus-word ECE, from either end of the table."""
    words = (("is", 1), ("are", 1), ("zebra", 1))
    located = locate_records([Record((1, 2), "There", words, words),
                              Record((1, 3), "There are", ((FAILED, 1),), ((FAILED, 1),))], corpus)
    table = model_switch_table(SYSTEMS["gpt2"], located, provo_norms, seed=0).set_index(["protocol", "switch"])
    corpus_ece = table["ece_corpus"]
    assert corpus_ece[("authors", "")] == pytest.approx(1 / 3)
    assert corpus_ece[("authors - switch", "first_max_ties")] == pytest.approx(2 / 3)
    assert corpus_ece[("ours", "")] == pytest.approx(2 / 3)
    assert corpus_ece[("ours + switch", "first_max_ties")] == pytest.approx(1 / 3)
    others = [s for s in MODEL_SWITCHES if s != "first_max_ties"]
    assert [corpus_ece[("authors - switch", s)] for s in others] == pytest.approx([1 / 3] * len(others))
    assert table.loc[("ours", ""), "n_contexts"] == 1  # the second record has no word
    assert table.loc[("authors", ""), "n_contexts"] == 1
    assert model_values(SYSTEMS["gpt2"], located, norms=provo_norms, protocol=ModelProtocol()) == pytest.approx(
        dict(table.loc[("ours", ""), ["ece_corpus", "ece_human_majority", "ece_oracle_majority", "expected_tvd",
                                       "n_contexts"]]))


def test_a_published_model_entry_is_a_samples_model_of_a_known_system():
    entry = {"name": "bloom-published", "published": {"system": "bloom"}}
    spec = ModelSpec.from_config(entry)
    assert spec.kind == "samples" and spec.local_problem() is None
    assert model_identity(entry) == {"name": "bloom-published", "kind": "samples", "published": "bloom"}
    with pytest.raises(ValueError, match="unknown published system 'blom'; known: gpt2, gpt2-fine-tuned"):
        ModelSpec.from_config({"name": "b", "published": {"system": "blom"}})
    with pytest.raises(ValueError, match="published takes one key, system"):
        ModelSpec.from_config({"name": "b", "published": {"system": "bloom", "words": "authors"}})
