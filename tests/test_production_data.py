"""The production datasets: real files from the mirror, and WritingPrompts on a file in its
original format written here (no copy of it exists on these machines)."""

from __future__ import annotations

import pandas as pd
import pytest

from varprobe import tables
from varprobe.cli import main
from varprobe.data import SOURCES
from varprobe.data.asset import read_asset
from varprobe.data.dailydialog import read_dailydialog
from varprobe.data.instances import cap_references
from varprobe.data.fetching import fetch
from varprobe.data.wmt14 import read_wmt14
from varprobe.data.writingprompts import clean_story, read_writingprompts


def test_wmt14_has_500_sentences_with_the_10_extra_references(data_mirror):
    path = data_mirror / SOURCES["wmt14"][0].mirror_path
    table = read_wmt14(path)
    assert len(table) == 500 and table["input_id"].is_unique
    assert table["references"].map(len).eq(10).all()
    first = table.set_index("input_id").loc["1"]
    assert first["source"] == "Orlando Bloom and Miranda Kerr still love each other"
    assert first["references"][0] == "Orlando Bloom und Miranda Kerr lieben sich noch"
    with_original = read_wmt14(path, references="all").set_index("input_id").loc["1"]
    assert with_original["references"][0] == "Orlando Bloom und Miranda Kerr lieben sich noch immer"
    assert len(with_original["references"]) == 11


def test_asset_valid_and_test_sizes(data_mirror):
    folder = data_mirror / "asset"
    valid, test = read_asset(folder, "valid"), read_asset(folder, "test")
    assert (len(valid), len(test)) == (2000, 359)
    assert valid["references"].map(len).eq(10).all()
    assert valid.loc[0, "source"].startswith("Adjacent counties are Marin")
    assert valid.loc[0, "references"][0].startswith("countries next to it are Marin")


def test_dailydialog_keeps_the_history_and_only_the_relevant_responses(data_mirror):
    table = read_dailydialog(data_mirror / "dailydialog_pp" / "dev.jsonl", "dev")
    assert len(table) == 1028 and table["references"].map(len).eq(5).all()
    first = table.set_index("input_id").loc["0"]
    assert first["source"].split("\n")[0] == "Am I too abrupt? Did I scare you? Or you don't want ..."
    assert len(first["source"].split("\n")) == 3
    assert first["references"][0] == "So nice of you."
    joined = read_dailydialog(data_mirror / "dailydialog_pp" / "dev.jsonl", "dev", separator="<|endoftext|>")
    assert joined.loc[0, "source"].count("<|endoftext|>") == 2


def test_writingprompts_groups_stories_and_keeps_prompts_with_enough(writingprompts_mirror):
    folder = writingprompts_mirror / "writingprompts"
    table = read_writingprompts(folder / "test.wp_source", folder / "test.wp_target",
                                min_stories=4)
    assert table["input_id"].tolist() == ["0"]
    assert table.loc[0, "source"] == "A dragon opens a bakery ."
    # The repeated story is kept once; the prompt with one story is dropped.
    assert table.loc[0, "references"] == [
        "It baked .\nThen it slept .", "Fire and bread .", "Smoke rose from the oven at dawn .",
        "The village came for the rolls ."]
    assert read_writingprompts(folder / "test.wp_source", folder / "test.wp_target",
                               min_stories=5).empty
    assert clean_story("a <newline>b") == "a\nb"


def test_writingprompts_references_are_capped_by_a_seeded_choice_per_input(writingprompts_mirror,
                                                                          tmp_path):
    """The paper uses up to 10 stories per prompt: a cap keeps a seeded choice, in file order,
    that depends on the seed and the input alone; the instances table records how many there
    were."""
    def run(out, *options):
        main(["production-data", "--dataset", "writingprompts", "--split", "test",
              "--raw-dir", str(writingprompts_mirror / "writingprompts"), "--min-stories", "2",
              "--out", str(out), *options])
        return tables.read(out, "production_instances").set_index("input_id")["references"]

    full = run(tmp_path / "full.parquet")
    stories = list(full["0"])
    choices = {seed: list(run(tmp_path / f"{seed}.parquet", "--max-references", "2", "--seed", str(seed))["0"])
               for seed in range(6)}
    for chosen in choices.values():
        assert len(chosen) == 2 and chosen == [s for s in stories if s in chosen]
    assert len({tuple(c) for c in choices.values()}) > 1
    assert tables.read_metadata(tmp_path / "0.parquet")["references_available"] == {"0": 4}
    # Another input in the table does not move this one's choice.
    table = read_writingprompts(writingprompts_mirror / "writingprompts" / "test.wp_source",
                                writingprompts_mirror / "writingprompts" / "test.wp_target",
                                min_stories=2)
    other = table.assign(input_id="7")
    both = cap_references(pd.concat([other, table], ignore_index=True), 2, seed=3)
    assert list(both.set_index("input_id").loc["0", "references"]) == choices[3]
    assert cap_references(table, None, seed=3)["references"].equals(table["references"])


def test_instances_round_trip_through_parquet(data_mirror, tmp_path):
    table = read_asset(data_mirror / "asset", "test")
    tables.write(table, tmp_path / "asset.parquet", "production_instances")
    back = tables.read(tmp_path / "asset.parquet", "production_instances")
    assert list(back.loc[3, "references"]) == table.loc[3, "references"]


def test_fetch_names_the_file_of_a_dataset_with_several(data_mirror, tmp_path):
    dest = fetch("asset", tmp_path / "asset.test.orig", data_mirror, file="asset.test.orig")
    assert dest.read_text(encoding="utf-8").startswith(read_asset(data_mirror / "asset", "test").loc[0, "source"])
    with pytest.raises(ValueError, match="dataset 'asset' has no file 'nope'"):
        fetch("asset", tmp_path / "x", data_mirror, file="nope")
    with pytest.raises(FileNotFoundError, match="writingprompts/test.wp_source"):
        fetch("writingprompts", tmp_path / "y", data_mirror, file="test.wp_source")


def test_download_unpacks_the_member_of_an_archive(tmp_path, monkeypatch):
    import tarfile

    from varprobe.data import sources

    member = tmp_path / "writingPrompts" / "test.wp_source"
    member.parent.mkdir()
    member.write_text("[ WP ] A prompt .\n")
    archive = tmp_path / "writingPrompts.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(member, arcname="writingPrompts/test.wp_source")
    local = sources.Source(url=archive.as_uri(), mirror_path="writingprompts/test.wp_source",
                           member="writingPrompts/test.wp_source")
    monkeypatch.setitem(SOURCES, "writingprompts", (local,))
    dest = fetch("writingprompts", tmp_path / "raw" / "test.wp_source", None, file="test.wp_source")
    assert dest.read_text() == "[ WP ] A prompt .\n"
    monkeypatch.setitem(SOURCES, "writingprompts",
                        (sources.Source(local.url, local.mirror_path, member="nope"),))
    with pytest.raises(OSError, match="no member 'nope'"):
        fetch("writingprompts", tmp_path / "raw" / "other", None, file="test.wp_source")
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == ["test.wp_source"]


def test_every_dataset_record_fetches_the_files_its_default_split_reads():
    from varprobe.data import DATASETS, dataset

    for name, record in DATASETS.items():
        fetched = {s.file for s in record.sources}
        assert set(record.raw_files(record.default_split)) <= fetched, name
        assert SOURCES[name] == record.sources
    with pytest.raises(ValueError, match="unknown production dataset 'xsum'; known: wmt14, asset"):
        dataset("xsum")
    with pytest.raises(ValueError, match=r"'asset' has no option \['min_stories'\]; its options: none"):
        dataset("asset").read_instances("nowhere", "valid", min_stories=3)
    with pytest.raises(FileNotFoundError, match="raw files"):
        dataset("wmt14").read_instances("nowhere", "newstest2014", references="all")


def test_a_seeded_input_choice_spreads_over_the_split_in_its_order(data_mirror, tmp_path):
    """``--input-choice seeded``: max_inputs inputs drawn uniformly over the whole split by the
    seed (the same for a seed, another for another), kept in the dataset's order; ``first`` (the
    default) keeps the first ones."""
    def ids(*options):
        out = tmp_path / f"{'-'.join(options)}.parquet"
        main(["production-data", "--dataset", "wmt14", "--split", "test", "--raw-dir", str(path.parent),
              "--max-inputs", "20", "--out", str(out), *options])
        return list(tables.read(out, "production_instances")["input_id"])

    path = data_mirror / SOURCES["wmt14"][0].mirror_path
    every = list(read_wmt14(path)["input_id"])
    first, seeded = ids(), ids("--input-choice", "seeded", "--seed", "0")
    assert first == every[:20]
    assert len(seeded) == 20 and seeded == [i for i in every if i in seeded]
    assert max(map(every.index, seeded)) > 250 and seeded != first
    assert ids("--input-choice", "seeded", "--seed", "0") == seeded
    assert ids("--input-choice", "seeded", "--seed", "1") != seeded
