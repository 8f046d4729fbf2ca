"""``varprobe.evaluate``: the next-word study of one model without Snakemake gives the tables
the workflow's stage commands give on the same slice, seed and settings, for a model named or
in memory, whatever the batch size; a call it cannot honour is refused, naming what."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

import varprobe
from varprobe import tables
from varprobe.cli import main

SETTINGS = {"n_samples": 6, "resplits": 3, "bootstrap_resamples": 40, "ece_bins": 5}
SEED = 3


@pytest.fixture(scope="module")
def stage_tables(tmp_path_factory, data_mirror, tiny_model_dir):
    """The tables of provo-data, provo-sample, provo-divergence and provo-oracle run on passage
    1 with the tiny model, as the rules run them."""
    out = tmp_path_factory.mktemp("stages")
    path = {k: str(out / f"{k}.parquet") for k in ("contexts", "responses", "samples", "tvd", "system",
                                                    "oracle_tvd", "oracle", "human")}
    norms = str(data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv")
    control = ["--contexts", path["contexts"], "--responses", path["responses"], "--seed", str(SEED),
               "--resplits", "3", "--ece-bins", "5", "--bootstrap", "40"]
    main(["provo-data", "--norms", norms, "--texts", "1", "--contexts-out", path["contexts"],
          "--responses-out", path["responses"], "--mirror", str(data_mirror)])
    main(["provo-sample", "--model", json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)}),
          "--decoding", '{"name": "ancestral"}', "--contexts", path["contexts"], "--n-samples", "6",
          "--max-tokens", "20", "--batch-size", "256", "--seed", str(SEED), "--gpus", "0", "--out", path["samples"]])
    main(["provo-divergence", *control, "--model", "tiny", "--decoding", "ancestral", "--samples", path["samples"],
          "--tvd-out", path["tvd"], "--system-out", path["system"]])
    main(["provo-oracle", *control, "--model", "oracle", "--decoding", "control", "--tvd-out", path["oracle_tvd"],
          "--system-out", path["oracle"], "--human-out", path["human"]])
    schema = {"contexts": "provo_contexts", "responses": "provo_responses", "samples": "provo_samples",
              "tvd": "provo_tvd", "system": "provo_system", "oracle": "provo_system", "human": "provo_system"}
    return {k: tables.read(path[k], s) for k, s in schema.items()}, norms


def test_evaluate_gives_the_tables_of_the_stage_commands(stage_tables, tiny_model_dir):
    expected, norms = stage_tables
    result = varprobe.evaluate(str(tiny_model_dir), name="tiny", texts=[1], seed=SEED, norms=norms, **SETTINGS)
    for name in ("contexts", "responses", "samples", "tvd"):
        pd.testing.assert_frame_equal(getattr(result, name).reset_index(drop=True), expected[name], check_like=False)
    systems = pd.concat([expected["system"], expected["oracle"], expected["human"]], ignore_index=True)
    pd.testing.assert_frame_equal(result.summary, systems)
    assert result.summary["model"].tolist() == ["tiny", "oracle", "human"]


def test_a_model_in_memory_at_another_batch_size_draws_the_same_words(stage_tables, tiny_model_dir):
    expected, norms = stage_tables
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    result = varprobe.evaluate(model, tokenizer, texts=[1], seed=SEED, norms=norms, batch_size=7, **SETTINGS)
    assert result.samples["word"].tolist() == expected["samples"]["word"].tolist()
    assert result.summary.loc[0, "model"] == "model"
    assert result.summary.loc[0, "expected_tvd"] == pytest.approx(expected["system"].loc[0, "expected_tvd"])


@pytest.mark.parametrize(("call", "message"), [
    (dict(decoding={"name": "exact", "method": "enumerate"}), "evaluate draws samples; decoding 'exact'"),
    (dict(n_sample=4), "evaluate takes no setting ['n_sample']"),
    (dict(tokenizer=object()), "a model given by name loads its own tokenizer"),
])
def test_a_call_it_cannot_honour_is_refused_naming_what(call, message, tiny_model_dir, data_mirror):
    norms = data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        varprobe.evaluate(str(tiny_model_dir), norms=norms, **call)


def test_a_model_in_memory_without_its_tokenizer_is_refused():
    with pytest.raises(ValueError, match=r"needs its tokenizer"):
        varprobe.evaluate(object())


def test_the_norms_are_fetched_from_the_mirror_into_the_cache_and_checked(tmp_path, monkeypatch, data_mirror):
    from varprobe.evaluation import _fetched_norms

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fetched = _fetched_norms(data_mirror)
    assert fetched.parent == tmp_path / "varprobe" / "data" / "provo"
    assert fetched.read_bytes() == (data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv").read_bytes()
    fetched.write_bytes(fetched.read_bytes()[:-10])
    with pytest.raises(ValueError, match=str(fetched.name)):
        _fetched_norms(data_mirror)
