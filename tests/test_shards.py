"""Sharding a sampling job (Provo contexts, production inputs): bounds, and merged shards ==
one unsharded run."""

from __future__ import annotations

import json

import pytest

from varprobe import cli, tables
from varprobe.sampling.shards import merge_metadata, shard_bounds, shard_rows


def test_bounds_cover_every_row_once_in_order():
    passages = [1] * 7 + [2] * 5 + [3] * 9
    for shards in range(1, 25):
        bounds = shard_bounds(passages, shards)
        assert len(bounds) == shards
        assert bounds[0][0] == 0 and bounds[-1][1] == len(passages)
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))


def test_cuts_fall_on_the_nearest_passage_boundary():
    passages = [1] * 10 + [2] * 10 + [3] * 10 + [4] * 10
    # Equal cuts at 13.3 and 26.7 move to the boundaries 10 and 30.
    assert shard_bounds(passages, 3) == [(0, 10), (10, 30), (30, 40)]
    # Equal cuts at 8, 16, 24, 32 (5 shards) move to 10, 20, 20, 30: one shard is empty.
    assert shard_bounds(passages, 5) == [(0, 10), (10, 20), (20, 20), (20, 30), (30, 40)]
    assert shard_bounds(passages, 4) == [(0, 10), (10, 20), (20, 30), (30, 40)]
    uneven = [1] * 9 + [2] * 11 + [3] * 20
    assert shard_bounds(uneven, 2) == [(0, 20), (20, 40)]
    # The cut at 30 lies inside passage 3, whose boundaries are 20 and 40: a tie, the smaller wins.
    assert shard_bounds(uneven, 4) == [(0, 9), (9, 20), (20, 20), (20, 40)]


def test_a_passage_is_never_split_and_extra_shards_are_empty():
    assert shard_bounds([5] * 10, 3) == [(0, 0), (0, 10), (10, 10)]
    assert [len(shard_rows([1, 1], i, 3)) for i in (1, 2, 3)] == [0, 2, 0]
    passages = [1] * 7 + [2] * 5 + [3] * 9
    for shards in range(1, 25):
        cuts = {a for a, _ in shard_bounds(passages, shards)}
        assert cuts <= {0, 7, 12, 21}


@pytest.mark.parametrize(("shard", "shards"), [(0, 2), (3, 2), (1, 0)])
def test_bad_shard_numbers_are_named(shard, shards):
    with pytest.raises(ValueError, match="shard"):
        shard_rows([1, 1, 2], shard, shards)


def test_merge_refuses_shards_drawn_with_other_settings():
    one = {"model": {"name": "m"}, "shard": [1, 2], "device": "cpu"}
    with pytest.raises(ValueError, match="b.parquet was drawn with other settings"):
        merge_metadata([one, {"model": {"name": "x"}, "shard": [2, 2]}], ["a.parquet", "b.parquet"])
    with pytest.raises(ValueError, match=r"b.parquet is shard \[1, 2\], expected \[2, 2\]"):
        merge_metadata([one, one], ["a.parquet", "b.parquet"])


def _sample(tmp_path, contexts, model_dir, shard, shards, batch_size=256):
    out = tmp_path / f"{shard}-of-{shards}-b{batch_size}.parquet"
    cli.main([
        "provo-sample", "--model", json.dumps({"name": "tiny", "pretrained": str(model_dir)}),
        "--decoding", json.dumps({"name": "ancestral"}), "--contexts", str(contexts),
        "--n-samples", "6", "--max-tokens", "8", "--batch-size", str(batch_size), "--seed", "3",
        "--shard", str(shard), "--shards", str(shards), "--out", str(out),
    ])
    return out


def _merge(tmp_path, parts, name):
    out = tmp_path / name
    cli.main(["provo-merge", "--shards", *map(str, parts), "--out", str(out)])
    return out


def test_merged_shards_equal_the_unsharded_run(tmp_path, provo_norms, tiny_model_dir):
    from varprobe.data.provo import contexts_table

    # Two passages, 3 shards: each passage lands whole in one shard and one shard is empty.
    contexts = contexts_table(provo_norms, [1, 2])
    contexts = contexts[contexts["word_number"] <= 9]
    path = tmp_path / "contexts.parquet"
    tables.write(contexts, path, "provo_contexts")
    whole = _merge(tmp_path, [_sample(tmp_path, path, tiny_model_dir, 1, 1)], "whole.parquet")
    parts = [_sample(tmp_path, path, tiny_model_dir, i, 3) for i in (1, 2, 3)]
    assert sorted(len(tables.read(p, "provo_samples")) for p in parts)[0] == 0
    merged = _merge(tmp_path, parts, "merged.parquet")
    expected, got = tables.read(whole, "provo_samples"), tables.read(merged, "provo_samples")
    assert len(got) == 6 * len(contexts)
    assert got.equals(expected)
    assert tables.read_metadata(merged) == tables.read_metadata(whole)
    assert tables.read_metadata(merged)["device"] == "cpu"


def _produce(tmp_path, instances, model_dir, shard, shards):
    out = tmp_path / f"productions-{shard}-of-{shards}.parquet"
    cli.main(["production-sample", "--model", json.dumps({"name": "tiny", "pretrained": str(model_dir)}),
              "--decoding", '{"name": "ancestral"}', "--instances", str(instances),
              "--prompt", "Simplify: {source}", "--no-chat", "--n-samples", "3",
              "--max-new-tokens", "6", "--seed", "0", "--batch-size", "4", "--gpus", "0",
              "--shard", str(shard), "--shards", str(shards), "--out", str(out)])
    return out


def test_merged_production_shards_equal_the_unsharded_run(tmp_path, data_mirror, tiny_model_dir):
    """Five ASSET inputs in 3 shards (2, 1, 2 inputs): the merged productions are the unsharded
    ones, row for row, with the same metadata."""
    from varprobe.data.asset import read_asset

    path = tmp_path / "instances.parquet"
    tables.write(read_asset(data_mirror / "asset", "valid").head(5), path, "production_instances")
    whole = tmp_path / "whole.parquet"
    cli.main(["production-merge", "--shards", str(_produce(tmp_path, path, tiny_model_dir, 1, 1)),
              "--out", str(whole)])
    parts = [_produce(tmp_path, path, tiny_model_dir, i, 3) for i in (1, 2, 3)]
    assert [tables.read(p, "production_samples")["input_id"].nunique() for p in parts] == [2, 1, 2]
    merged = tmp_path / "merged.parquet"
    cli.main(["production-merge", "--shards", *map(str, parts), "--out", str(merged)])
    expected, got = tables.read(whole, "production_samples"), tables.read(merged, "production_samples")
    assert len(got) == 15 and got["text"].str.len().gt(0).any()
    assert got.equals(expected)
    assert tables.read_metadata(merged) == tables.read_metadata(whole)
