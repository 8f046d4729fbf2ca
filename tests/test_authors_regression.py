"""Ilia & Aziz's App. B regression under their own protocol (varprobe.families.regression.authors)
and beside ours (varprobe.families.regression.codings.regression_codings): the split is the authors'
notebook's, the authors' row is ``ARDRegression()`` on their raw design, and each row says which
quantity its coefficient is."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.families.regression.authors import (
    AUTHORS_SEED, ard_coefficients, authors_order, one_split, split_tvds)
from varprobe.analysis.next_word import ControlSettings, ModelEstimate, context_table
from varprobe.families.regression.codings import REGRESSION_CODINGS, ROLES, SPREAD_SEEDS, regression_codings
from varprobe.families.regression.analysis import LABELS
from varprobe.data.provo import responses_table
from varprobe.metrics.distributions import mle, tvd


def _notebook_split(human: list[dict], seed: int = 0) -> tuple[list, list]:
    """The authors' ``sample_oracle_without_replacement_disjoint_groups`` as their notebook has it
    (``Additional_Experiments/Appendix_B/analysis_predictors.ipynb``, cell 1:46-68), on their
    per-context list ``[{'pred', 'count'}, ...]``: the reference the package must equal."""
    list_words_reps = [[x["pred"]] * int(x["count"]) for x in human]
    words_list = [item for sublist in list_words_reps for item in sublist]
    random.seed(seed)
    if len(words_list) % 2 == 1:
        remove_word = random.sample(words_list, 1)
        words_list.remove(remove_word[0])
    subset1 = random.sample(words_list, len(words_list) // 2)
    subset2 = words_list.copy()
    for item in subset1:
        subset2.remove(item)
    return subset1, subset2


def _frequencies(words: list) -> dict[str, float]:
    return {w: n / len(words) for w, n in Counter(words).items()}


@pytest.mark.parametrize("n_words", [32, 37, 40, 41, 43])
def test_one_split_is_the_authors_notebook_split(n_words):
    rng = np.random.default_rng(n_words)
    counts = Counter(rng.choice(["are", "is", "was", "once", "will", "birth"], size=n_words,
                                p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05]).tolist())
    human = [{"pred": w, "count": counts[w]} for w in dict.fromkeys(authors_order(counts))]  # the norms' order
    for seed in (AUTHORS_SEED, 1, 7):
        first, second = _notebook_split(human, seed)
        o1, o2 = one_split(counts, seed)
        assert o1 == pytest.approx(_frequencies(first)) and o2 == pytest.approx(_frequencies(second))
        assert len(first) == len(second) == n_words // 2  # half of the even list, not Table 1's 20


def test_the_authors_order_is_the_norms_order(provo_norms):
    """Every position whose responses our reading leaves as typed lists them in the norms file as
    ``authors_order`` does: most frequent first, ties alphabetically."""
    responses = responses_table(provo_norms)
    ours = {k: authors_order(dict(zip(g["response"], g["count"], strict=True)))
            for k, g in responses.groupby(["text_id", "word_number"])}
    same = 0
    for (t, w), rows in provo_norms.groupby(["Text_ID", "Word_Number"], sort=False):
        listed = [r for r, n in zip(rows["Response"], rows["Response_Count"], strict=True) for _ in range(int(n))]
        key = (int(t), int(w))
        if key in ours and sorted(listed) == sorted(ours[key]):
            assert listed == ours[key], key
            same += 1
    assert same > 2500


def _study(n: int = 120, seed: int = 3):
    """A small corpus: contexts, responses, a model's estimates and its provo_tvd table."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(8)]
    contexts = pd.DataFrame({"text_id": 1, "word_number": range(2, n + 2),
                             "context": [" ".join(["the"] * (i % 9 + 1)) for i in range(n)],
                             "context_length": [i % 9 + 1 for i in range(n)], "word": "w0", "corpus_word": "w0"})
    rows, estimates = [], {}
    for w in contexts["word_number"]:
        p = rng.dirichlet(np.full(len(vocabulary), rng.uniform(0.1, 2.0)))
        counts = Counter(rng.choice(vocabulary, size=int(rng.integers(36, 44)), p=p).tolist())
        rows += [{"text_id": 1, "word_number": w, "response": r, "count": c} for r, c in sorted(counts.items())]
        draws = Counter(rng.choice(vocabulary, size=40, p=rng.dirichlet(np.ones(len(vocabulary)))).tolist())
        estimates[(1, int(w))] = ModelEstimate(mle(draws), 40, 40)
    responses = pd.DataFrame(rows)
    table, _ = context_table(contexts, responses, estimates, ControlSettings(seed=0, resplits=5))
    tags = [["NOUN", "VERB", "DET", "ADJ"][i % 4] for i in range(n)]
    return responses, estimates, table, tags


def test_split_tvds_take_target_and_predictor_from_one_split():
    responses, estimates, _, _ = _study(n=4)
    found = split_tvds(responses, estimates, [AUTHORS_SEED, 1]).set_index(["seed", "text_id", "word_number"])
    counts = responses[responses["word_number"] == 3].set_index("response")["count"].to_dict()
    o1, o2 = one_split(counts, 1)
    row = found.loc[(1, 1, 3)]
    assert row["tvd_model_oracle1"] == pytest.approx(tvd(estimates[(1, 3)].distribution, o1))
    assert row["tvd_oracle2_oracle1"] == pytest.approx(tvd(o2, o1))
    assert len(found) == 8


def test_the_authors_row_is_ardregression_on_their_raw_design_beside_the_same_coding_on_resplit_means():
    responses, estimates, table, tags = _study()
    codings = regression_codings(table, tags, responses, estimates)
    tables.conform(codings.assign(model="m", decoding="d"), "regression_codings")
    assert list(codings["coding"]) == list(REGRESSION_CODINGS)
    found = codings[codings["role"] != ""].set_index("role")
    assert sorted(found.index) == sorted(ROLES)

    splits = split_tvds(responses, estimates, [AUTHORS_SEED]).set_index(["text_id", "word_number"])
    raw = table.set_index(["text_id", "word_number"])[["entropy_human", "entropy_model", "context_length"]]
    raw = raw.join(splits[["tvd_model_oracle1", "tvd_oracle2_oracle1"]])
    design = pd.concat([raw[["entropy_human", "entropy_model", "tvd_oracle2_oracle1", "context_length"]]
                        .reset_index(drop=True), pd.get_dummies(pd.Series(tags), dtype=float)], axis=1)
    by_hand = ard_coefficients(design, raw["tvd_model_oracle1"].to_numpy())
    authors = found.loc["authors"]
    assert authors["tvd_oracle2_oracle1"] == pytest.approx(by_hand["tvd_oracle2_oracle1"])
    assert authors["entropy_human"] == pytest.approx(by_hand["entropy_human"])
    top = max(by_hand, key=lambda c: abs(by_hand[c]))
    assert authors["largest"] == (LABELS[top] if by_hand[top] else "")
    assert (authors["units"], authors["split"], authors["reference"]) == (
        "per unit", "one split (seed 0) for both", "none")
    assert authors["sd_tvd_oracle2_oracle1"] == pytest.approx(raw["tvd_oracle2_oracle1"].std(ddof=0))
    assert authors["correlation"] == pytest.approx(np.corrcoef(raw["tvd_oracle2_oracle1"], raw["entropy_human"])[0, 1])
    assert authors["seed_min"] <= authors["tvd_oracle2_oracle1"] <= authors["seed_max"]
    assert authors["seed_min"] <= authors["seed_mean"] <= authors["seed_max"]
    assert list(SPREAD_SEEDS) == list(range(20))

    resplits = found.loc["authors on resplits"]  # the same coding, the tvd table's resplit means
    design["tvd_oracle2_oracle1"] = table["tvd_oracle2_oracle1"].to_numpy()
    on_means = ard_coefficients(design, table["tvd_model_oracle1"].to_numpy())
    assert resplits["tvd_oracle2_oracle1"] == pytest.approx(on_means["tvd_oracle2_oracle1"])
    assert (resplits["units"], resplits["split"]) == ("per unit", "mean of the resplits")
    assert np.isnan(resplits["seed_min"]) and found.loc["own split", "split"] == "target seed 0, predictor seed 1"
    assert np.isnan(found.loc["without human entropy", "entropy_human"])
    assert set(codings["units"]) == {"per SD", "per unit"} and (codings["n_contexts"] == len(table)).all()


def test_contexts_without_a_model_word_are_left_out_of_every_coding():
    responses, estimates, table, tags = _study(n=60)
    estimates[(1, 2)] = ModelEstimate(None, 40, 0)
    table.loc[0, ["tvd_model_oracle1", "entropy_model"]] = np.nan
    found = regression_codings(table, tags, responses, estimates)
    assert (found["n_contexts"] == 59).all()


@pytest.fixture
def page_run(tmp_path):
    """The results page's test run (``test_results_page._run``) and its measured tables."""
    from test_results_page import _measured, _run, _validated

    results, entries, config = _run(tmp_path)
    return entries, _measured(results), _validated(config)


def _table3_cause(entries, measured, config) -> tuple[str, str]:
    from varprobe.results_page.disagreements import cause

    found = cause("table3_tvd_oracles", entries, measured, config)
    return str(found["cause"]), found["table"]


def _set(measured, **by_role):
    """Rewrite the run's codings table with ``{role: {column: value}}``; return it."""
    path = measured["regression_codings"]
    codings = tables.read(path, "regression_codings")
    for role, values in by_role.items():
        for column, value in values.items():
            codings.loc[codings["role"] == role, column] = value
    tables.write(codings, path, "regression_codings")
    return codings.set_index("role")


def test_the_table_3_cause_states_each_protocols_coefficient_as_its_table_has_it(page_run):
    """The cause names the authors' protocol's coefficient per unit and per SD, its seeds' range,
    the same coding on the resplit means and their difference, with the sign the table gives,
    and every number it cites is in its table: rewritten, the table moves the sentence."""
    from varprobe.results_page.claims import numbers
    from varprobe.results_page.tables import number

    entries, measured, config = page_run
    for authors, resplits in ((0.118, 0.124), (0.5, 0.1)):
        role = _set(measured, authors={"tvd_oracle2_oracle1": authors, "sd_tvd_oracle2_oracle1": 0.18,
                                       "seed_min": 0.0, "seed_mean": 0.094, "seed_max": 0.6,
                                       "largest": "TVD between oracles", "largest_coefficient": authors},
                    **{"authors on resplits": {"tvd_oracle2_oracle1": resplits}})
        text, table = _table3_cause(entries, measured, config)
        moved = "raises" if authors > resplits else "lowers"
        assert (f"The authors' protocol on this system gives {number(authors)} per unit, {number(authors * 0.18)} "
                f"per SD, and 0.000-0.600 (mean 0.094) over the seeds 0-19") in text
        assert (f"the same coding on the resplit means gives {number(resplits)}: one split shared by target and "
                f"predictor {moved} the coefficient by {number(abs(authors - resplits))} at seed 0") in text
        assert f"its largest (the authors' protocol: TVD between oracles ({number(authors)} per unit))" in text
        own = number(role.loc["own split", "tvd_oracle2_oracle1"])
        assert f"of its own (one split's noise in each, none shared) it is {own}" in text
        assert "per unit of TVD(O2, O1)" in text and "per standard deviation (SD) of TVD(O2, O1)" in text
        assert "the paper's (GPT-2; cell 16 prints it)" in table and "0.117 (0.1152)" in table
        assert f"{number(0.117 * 0.18)} (at the authors' protocol's SD)" in table
        assert set(numbers(text)) <= set(numbers(table)), set(numbers(text)) - set(numbers(table))
    for r, said in ((0.976, "which of the two is the larger is identified under neither protocol"),
                    (0.2, "which correlate at 0.200 over these contexts (0.900 in one split), are told apart")):
        _set(measured, authors={"correlation": 0.9}, **{"authors on resplits": {"correlation": r}})
        assert said in _table3_cause(entries, measured, config)[0]


def test_the_largest_coefficient_verdict_states_the_authors_protocol_as_its_table_has_it(page_run):
    from varprobe.results_page import verdicts

    entries, measured, config = page_run
    for largest, r, verdict in (("TVD between oracles", 0.976, "not testable"), ("human entropy", 0.2, None),
                                ("", 0.976, "not testable")):
        _set(measured, authors={"largest": largest, "largest_coefficient": 0.25},
             **{"authors on resplits": {"correlation": r}})
        found = verdicts.decide(entries, measured, config)["IA-3"]
        said = f"{largest} (0.250 per unit)" if largest else "none: every coefficient pruned to 0"
        assert f"the authors' protocol on m / ancestral: largest {said}" in found.ours
        assert "per SD)" in found.ours
        assert (found.verdict == "not testable") == (verdict == "not testable")
        assert ("correlate at r = 0.976" in found.reason) == (verdict == "not testable")
