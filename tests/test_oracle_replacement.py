"""The k%-oracle replacement (Sec. 5, App. E), TVD differences (App. C.4), their CLI and the
scheduling of both appendix rule families from config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import SNAKEMAKE, responses_table

from varprobe import tables
from varprobe.analysis.next_word import ModelEstimate
from varprobe.families.oracle_replacement.analysis import (
    disjoint_oracles,
    oracle_pairs,
    oracle_size,
    pooled_histograms,
    replaced_values,
    replacement_curve,
    replacement_overlap,
    replacement_summary,
    tvd_differences,
)
from varprobe.cli import main



HUMANS = {
    (1, 1): {"the": 12, "a": 6, "one": 4},
    (1, 2): {"cat": 10, "dog": 8, "bird": 3},
    (1, 3): {"sat": 20, "ran": 2},
    (1, 4): {"on": 9},               # too few for two oracles of 5
}
MODEL = {
    (1, 1): ModelEstimate({"the": 0.5, "an": 0.5}, 10, 10),
    (1, 2): ModelEstimate({"fish": 1.0}, 10, 10),
    (1, 3): ModelEstimate(None, 10, 0),   # every draw failed
    (1, 4): ModelEstimate({"on": 1.0}, 10, 10),
}


def test_disjoint_oracles_have_size_s_and_share_no_response():
    counts = {"the": 7, "a": 5, "one": 1}
    for seed in range(20):
        a, b = disjoint_oracles(counts, 6, np.random.default_rng(seed))
        assert sum(a.values()) == 6 and sum(b.values()) == 6
        assert all(a.get(w, 0) + b.get(w, 0) <= n for w, n in counts.items())
    with pytest.raises(ValueError, match="two disjoint oracles of size 7"):
        disjoint_oracles(counts, 7, np.random.default_rng(0))


def test_pairs_skip_and_count_contexts():
    pairs, skipped = oracle_pairs(responses_table(HUMANS), MODEL, oracle_sizes=["5", "11"], seeds=3, seed=0)
    assert skipped.to_dict("records") == [
        {"oracle_size": "5", "n_too_few_humans": 1, "n_without_words": 1},
        {"oracle_size": "11", "n_too_few_humans": 2, "n_without_words": 1},  # 21 and 9 < 22
    ]
    assert set(map(tuple, pairs[["text_id", "word_number"]].values)) == {(1, 1), (1, 2)}
    # the model only says "fish" in (1, 2), which no human does: TVD to any oracle is 1
    assert (pairs.loc[pairs["word_number"] == 2, "tvd_model_oracle"] == 1).all()
    again, _ = oracle_pairs(responses_table(HUMANS), MODEL, oracle_sizes=["5", "11"], seeds=3, seed=0)
    pd.testing.assert_frame_equal(pairs, again)


def test_the_half_split_gives_each_oracle_half_the_responses():
    # 22, 21 and 9 responses: oracles of 11, 10 (one response left out) and 4; (1, 3) has no model word
    humans = {**HUMANS, (1, 5): {"x": 1}}    # one response: too few for two halves
    pairs, skipped = oracle_pairs(responses_table(humans), MODEL, oracle_sizes=["half"], seeds=2, seed=0)
    assert skipped.to_dict("records") == [{"oracle_size": "half", "n_too_few_humans": 1, "n_without_words": 1}]
    assert set(map(tuple, pairs[["text_id", "word_number"]].values)) == {(1, 1), (1, 2), (1, 4)}
    # (1, 4): every response is "on", so both halves and the model are the same distribution
    assert (pairs.loc[pairs["word_number"] == 4, ["tvd_oracle_oracle", "tvd_model_oracle"]] == 0).all(axis=None)
    assert oracle_size("half") == "half" and oracle_size("10") == "10"
    for bad in ("0", "-3", "halves", "2.5"):
        with pytest.raises(ValueError, match=f"oracle size '{bad}'"):
            oracle_size(bad)


def synthetic_pairs(n: int = 50, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"text_id": 1, "word_number": np.arange(n), "oracle_size": 10, "seed_index": 0,
                         "tvd_oracle_oracle": rng.uniform(0, 0.6, n), "tvd_model_oracle": rng.uniform(0, 1, n)})


def test_k0_is_the_model_k100_the_oracle_and_sets_are_nested():
    pairs = synthetic_pairs()
    assert replaced_values(pairs, 0, [0, 10, 0]).mean() == pytest.approx(pairs["tvd_model_oracle"].mean())
    assert replaced_values(pairs, 100, [0, 10, 0]).mean() == pytest.approx(pairs["tvd_oracle_oracle"].mean())
    model = pairs["tvd_model_oracle"].to_numpy()
    changed = [set(np.flatnonzero(replaced_values(pairs, k, [0, 10, 0]) != model)) for k in (10, 30, 70)]
    assert changed[0] <= changed[1] <= changed[2] and len(changed[1]) == 15
    with pytest.raises(ValueError, match="k = 120"):
        replaced_values(pairs, 120, [0, 10, 0])


def test_mean_is_linear_in_k_in_expectation():
    pairs = synthetic_pairs()
    m0, m100 = pairs["tvd_model_oracle"].mean(), pairs["tvd_oracle_oracle"].mean()
    for k in (20, 50, 80):
        means = [replaced_values(pairs, k, [seed, 10, 0]).mean() for seed in range(400)]
        assert np.mean(means) == pytest.approx(m0 - k / 100 * (m0 - m100), abs=0.005)


def test_curve_and_summary_with_matching_k():
    pairs = pd.concat([synthetic_pairs(40, 0).assign(seed_index=0),
                       synthetic_pairs(40, 1).assign(seed_index=1)], ignore_index=True)
    skipped = pd.DataFrame([{"oracle_size": 10, "n_too_few_humans": 2, "n_without_words": 0}])
    curve, histograms = replacement_curve(pairs, skipped, k_percent=[0, 50, 100], seed=0, bins=4)
    assert len(curve) == 6 and (curve["n_too_few_humans"] == 2).all()
    at0, at100 = curve[curve["k"] == 0], curve[curve["k"] == 100]
    assert at0["mean_tvd"].tolist() == pytest.approx(at0["model_mean_tvd"].tolist())
    assert at100["mean_tvd"].tolist() == pytest.approx(at100["oracle_mean_tvd"].tolist())
    assert (histograms.groupby(["group", "seed_index"])["count"].sum() == 40).all()


def constant_pairs(model: list[float], oracle: list[float]) -> pd.DataFrame:
    """One seed's pairs: the model's TVD m(c) and the oracles' h(c) of each context."""
    return pd.DataFrame({"text_id": 1, "word_number": np.arange(len(model)), "oracle_size": "half",
                         "seed_index": 0, "tvd_oracle_oracle": oracle, "tvd_model_oracle": model})


def summarised(pairs: pd.DataFrame, threshold: float = 0.8) -> pd.DataFrame:
    """The summary of one system over the grid 0, 10, ..., 100 with 4 bins of [0, 1]."""
    skipped = pd.DataFrame([{"oracle_size": "half", "n_too_few_humans": 0, "n_without_words": 0}])
    curve, histograms = replacement_curve(pairs, skipped, k_percent=list(range(0, 101, 10)), seed=0, bins=4)
    names = {"model": "m", "decoding": "d"}
    pooled = pooled_histograms(histograms.assign(**names))
    return replacement_summary(curve.assign(**names), replacement_overlap(pooled), threshold).set_index("k")


def test_the_overlap_matches_before_k_100_where_the_distributions_match():
    # The oracles' TVDs are all 0.1 (bin [0, 0.25)), the model's all 0.9: with k% replaced, k% of
    # the mass is in the oracles' bin, so overlap_k = k / 100 exactly (20 contexts, round(k C / 100)).
    summary = summarised(constant_pairs([0.9] * 20, [0.1] * 20))
    assert summary["overlap"].tolist() == pytest.approx([k / 100 for k in range(0, 101, 10)])
    assert summary.loc[80, "matches_oracle"] and not summary.loc[70, "matches_oracle"]
    assert summary["k_match"].unique().tolist() == [80]
    # A model whose TVDs are the oracles', in another order of contexts, matches at once.
    oracle = list(np.linspace(0.05, 0.95, 20))
    assert summarised(constant_pairs(oracle[::-1], oracle))["k_match"].unique().tolist() == [0]


def test_the_overlap_does_not_match_where_only_the_means_do():
    # The oracles' TVDs are all 0.5, the model's half 0.1 and half 0.9: the means agree at k = 0,
    # the distributions do not; half the model's mass at most is ever in the oracles' bin
    # [0.5, 0.75) before k = 100, so with threshold 0.8 no k below 80 matches.
    summary = summarised(constant_pairs([0.1, 0.9] * 10, [0.5] * 20))
    assert summary.loc[0, "mean_tvd"] == pytest.approx(summary.loc[0, "oracle_mean_tvd"])
    assert summary.loc[0, "overlap"] == 0 and not summary.loc[70, "matches_oracle"]
    assert summary["k_match"].iloc[0] == 80
    assert summarised(constant_pairs([0.1, 0.9] * 10, [0.5] * 20), threshold=1.0)["k_match"].iloc[0] == 100


def test_the_overlap_needs_the_oracles_histogram():
    pooled = pooled_histograms(pd.DataFrame({
        "model": "m", "decoding": "d", "group": "s=10 k=50", "seed_index": [0, 1],
        "bin_left": 0.0, "bin_right": 1.0, "count": [3, 4], "density": 1.0}))
    assert pooled["count"].tolist() == [7] and pooled["density"].tolist() == [1.0]
    with pytest.raises(ValueError, match="m / d, oracle size 10: no histogram at k = 100"):
        replacement_overlap(pooled)


def tvd_table(values: dict[tuple[int, int], float]) -> pd.DataFrame:
    frame = pd.DataFrame([{"text_id": t, "word_number": w, "tvd": v} for (t, w), v in values.items()])
    for column in tables.SCHEMAS["provo_tvd"]:
        if column not in frame:
            frame[column] = pd.NA if column in ("n_draws", "n_words") else (
                "" if tables.SCHEMAS["provo_tvd"][column] == "string" else 0)
    return tables.conform(frame, "provo_tvd")


def test_tvd_differences_hand_worked():
    system = tvd_table({(1, 1): 0.7, (1, 2): np.nan, (1, 3): 0.2})
    oracle = tvd_table({(1, 1): 0.3, (1, 2): 0.4, (1, 3): 0.5})
    found = tvd_differences(system, oracle)
    assert found["difference"].tolist() == pytest.approx([0.4, -0.3])
    with pytest.raises(ValueError, match=r"\[\[1, 3\]\]"):
        tvd_differences(system, oracle[oracle["word_number"] != 3])


def test_cli_on_small_tables(tmp_path):
    responses, model_tvd, oracle_tvd = (tmp_path / f"{n}.parquet" for n in ("responses", "tvd", "oracle"))
    tables.write(responses_table(HUMANS), responses, "provo_responses")
    rows = [{"text_id": 1, "word_number": w, "sample_index": i, "text": x, "word": x, "failed": False,
             "failure": "", "n_tokens": 1, "count": 1}
            for w, words in ((1, ["the", "an"]), (2, ["fish", "cat"]), (3, ["sat"]), (4, ["on"]))
            for i, x in enumerate(words)]
    samples = tmp_path / "samples.parquet"
    tables.write(pd.DataFrame(rows), samples, "provo_samples")
    curve, hist = tmp_path / "curve.parquet", tmp_path / "hist.parquet"
    main(["oracle-replacement", "--samples", str(samples), "--responses", str(responses), "--seed", "0",
          "--oracle-sizes", "half", "5", "--seeds", "2", "--k-percent", "0", "50", "100", "--bins", "5",
          "--model", "m", "--decoding", "d", "--curve-out", str(curve), "--histogram-out", str(hist)])
    written = tables.read(curve, "oracle_replacement")
    # the half split keeps (1, 4), whose 9 responses cannot fill two oracles of 5
    assert written["n_contexts"].tolist() == [4] * 6 + [3] * 6
    out = {n: tmp_path / n for n in ("summary.parquet", "pooled.parquet", "curve.png", "hist.png")}
    main(["oracle-replacement-summary", "--curves", str(curve), "--histograms", str(hist),
          "--figure-k", "0", "50", "--overlap-threshold", "0.8", "--summary-out", str(out["summary.parquet"]),
          "--table", str(out["pooled.parquet"]), "--curve-figure", str(out["curve.png"]),
          "--histogram-figure", str(out["hist.png"])])
    summary = tables.read(out["summary.parquet"], "oracle_replacement_summary")
    assert summary["k"].tolist() == [0, 50, 100] * 2 and summary["n_seeds"].unique().tolist() == [2]
    assert summary["oracle_size"].tolist() == ["5"] * 3 + ["half"] * 3
    assert summary.loc[summary["k"] == 100, "overlap"].tolist() == pytest.approx([1.0, 1.0])
    pooled = tables.read(out["pooled.parquet"], "histogram")
    assert set(pooled["group"]) == {f"s={s} k={k}" for s in ("5", "half") for k in (0, 50, 100)}
    assert pooled.groupby("group")["count"].sum().to_dict() == {
        **{f"s=5 k={k}": 6 for k in (0, 50, 100)}, **{f"s=half k={k}": 8 for k in (0, 50, 100)}}
    tables.write(tvd_table({(1, 1): 0.7, (1, 2): 0.9}), model_tvd, "provo_tvd",
                 {"model": "m", "decoding": "d"})
    tables.write(tvd_table({(1, 1): 0.3, (1, 2): 0.4}), oracle_tvd, "provo_tvd")
    main(["tvd-differences", "--tvd", str(model_tvd), "--oracle", str(oracle_tvd), "--bins", "4",
          "--out", str(tmp_path / "diff.parquet"), "--table", str(tmp_path / "diffhist.parquet"),
          "--figure", str(tmp_path / "diff.png")])
    diffs = tables.read(tmp_path / "diff.parquet", "tvd_differences")
    assert diffs["difference"].tolist() == pytest.approx([0.4, 0.5])
    assert (tmp_path / "diff.png").stat().st_size > 5_000


@pytest.mark.slow
def test_rules_are_scheduled_from_config(tmp_path, data_mirror, tiny_model_dir):
    exact = {"name": "exact", "method": "enumerate", "target_mass": 0.5, "max_forward_tokens": 60}
    config = {
        "seed": 0, "data_mirror": str(data_mirror),
        "models": [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
        "provo": {"texts": [1], "n_samples": 8, "decodings": [{"name": "ancestral"}, exact]},
        "analyses": {"sample_size": {"sizes": [4, 8]}, "oracle_replacement": {"seeds": 2}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([*SNAKEMAKE, "--cores", "1",
                          "-n", "--quiet", "rules"], cwd=tmp_path, capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    counts = {p[0]: int(p[1]) for p in map(str.split, run.stdout.splitlines())
              if len(p) == 2 and p[1].isdigit()}
    # sampled systems only for the subsampling; every system for the replacement
    assert counts["sample_size"] == 1 and counts["sample_size_figure"] == 1
    assert counts["oracle_replacement"] == 2 and counts["oracle_replacement_summary"] == 1
    assert counts["tvd_differences"] == 1
