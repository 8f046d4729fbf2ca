"""varprobe.analysis.page_measures: the tables of the Provo study the results page reads beyond
its summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings
from varprobe.analysis.page_measures import failure_table, interval_table, oracle_split_table
from varprobe.results_page.tables import intervals


def _tvd(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"tvd": rng.uniform(0.3, 0.8, n), "tvd_model_oracle1": rng.uniform(0.3, 0.8, n),
                         "confidence": rng.uniform(0.1, 0.9, n), "model_mode": rng.choice(["a", "b"], n),
                         "corpus_word": rng.choice(["a", "b"], n), "human_majority": rng.choice(["a", "b"], n)})


def test_intervals_hold_each_systems_mean_and_table_one_reads_them():
    found = interval_table([("m", "ancestral", _tvd()), ("oracle", "control", _tvd())], bins=5, resamples=200,
                           seed=0)
    tables.conform(found, "provo_intervals")
    assert set(found.loc[found["model"] == "m", "quantity"]) == {"tvd_oracle1", "ece_corpus", "ece_human_majority"}
    assert found.loc[found["model"] == "m", "mean"].isna().all()
    oracle = found[found["model"] == "oracle"].iloc[0]
    assert oracle["quantity"] == "tvd_humans" and oracle["ci_low"] <= oracle["mean"] <= oracle["ci_high"]
    assert oracle["mean"] == pytest.approx(_tvd()["tvd"].mean())
    shown = intervals(found)
    assert len(shown[("oracle", "control")]["tvd_humans"]) == 3 and len(shown[("m", "ancestral")]["ece_corpus"]) == 2


def test_a_system_without_failures_keeps_its_draws():
    samples = pd.DataFrame({"text": [" a", " ---", " b"], "failed": [False, True, False],
                            "failure": ["", "token_budget", ""], "count": [5, 3, 2]})
    found = failure_table([("m", "ancestral", samples), ("m", "cold", samples.assign(failed=False, failure=""))])
    tables.conform(found, "provo_failures")
    failed = found[found["decoding"] == "ancestral"].iloc[0]
    assert (failed["reason"], failed["draws"], failed["draws_without_letter"], failed["total_draws"]) == (
        "token_budget", 3, 3, 10)
    assert failed["share_of_draws"] == pytest.approx(0.3)
    none = found[found["decoding"] == "cold"]
    assert len(none) == 1 and none.iloc[0]["reason"] == "" and none.iloc[0]["total_draws"] == 10


def test_oracle_splits_give_one_row_per_resplit_and_half_against_all_is_closer():
    contexts = pd.DataFrame({"text_id": 1, "word_number": [2, 3]})
    responses = pd.DataFrame({"text_id": 1, "word_number": [2, 2, 2, 3, 3],
                              "response": ["a", "b", "c", "a", "b"], "count": [6, 5, 3, 8, 6]})
    found = oracle_split_table(contexts, responses, ControlSettings(seed=0, resplits=4, ece_bins=10,
                                                                    bootstrap_resamples=10))
    tables.conform(found, "provo_oracle_splits")
    assert list(found["resplit"]) == [0, 1, 2, 3]
    assert (found["tvd_oracle2_humans"] < found["tvd_oracle2_oracle1"]).all()
