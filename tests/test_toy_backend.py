"""A new kind of model is one ``Backend`` record and its key in the config schema's ``models`` item,
as CONTRIBUTING.md says: a toy backend, which reads a network's weights from a folder named in a
block of its own, is taken by the config, routed by the run plan to every stage of its
capabilities, and sampled by a stage command through the one loading path, with no edit
anywhere else."""

from __future__ import annotations

import copy
import json

import pytest

from test_run_plan import CONFIG
from varprobe import tables
from varprobe.cli import main
from varprobe.config_checks import check_config
from varprobe.config_loading import schema_errors
from varprobe.models import backends
from varprobe.models.backends import ENDPOINT, GIVEN, LOGITS, SAMPLER, Backend
from varprobe.models.spec import ModelSpec
from varprobe.run_plan import RunPlan
from varprobe.workflow_files import config_schema

TOY = Backend("toy-folder", ("toy",), (LOGITS, SAMPLER), weights=True,
              locate=lambda spec: spec.options["toy"]["folder"])
"""The toy backend: a network whose folder its entry names as ``toy: {folder: PATH}``."""

TOY_BLOCK = {"type": "object", "additionalProperties": False, "required": ["folder"],
             "properties": {"folder": {"type": "string"}}}
"""The toy's key in the ``models`` item of the schema: the one schema edit."""


@pytest.fixture
def toy_backend(monkeypatch):
    """The toy backend among the registered ones, gone again after the test."""
    monkeypatch.setattr(backends, "BACKENDS", (*backends.BACKENDS, TOY))
    return TOY


def _with_toy(schema: dict) -> dict:
    """The config schema with the toy's key in the ``models`` item."""
    schema = copy.deepcopy(schema)
    item = schema["properties"]["models"]["items"]
    item["properties"]["toy"] = TOY_BLOCK
    item["oneOf"].append({"required": ["toy"]})
    return schema


def _config(folder: str) -> dict:
    """The run plan tests' config with a toy model beside its models."""
    return {**CONFIG, "models": [*CONFIG["models"], {"name": "toy", "toy": {"folder": folder}}]}


def test_a_toy_backend_is_a_kind_with_its_capabilities(toy_backend, tiny_model_dir):
    spec = ModelSpec.from_config({"name": "toy", "toy": {"folder": str(tiny_model_dir)}})
    assert (spec.source, spec.kind) == ("toy", "toy-folder")
    assert spec.can(LOGITS) and spec.can(SAMPLER) and not spec.can(ENDPOINT) and not spec.can(GIVEN)
    assert spec.location() == str(tiny_model_dir)
    with pytest.raises(ValueError, match="give exactly one of .*toy"):
        ModelSpec.from_config({"name": "both", "toy": {"folder": "x"}, "pretrained": "x"})


def test_an_unregistered_key_is_no_source():
    with pytest.raises(ValueError, match=r"model 'toy': give exactly one of .* \(got none\)"):
        ModelSpec.from_config({"name": "toy", "toy": {"folder": "x"}})
    with pytest.raises(ValueError, match=r"model 'bare': give exactly one of .* \(got none\)"):
        ModelSpec("bare").kind


def test_the_config_takes_a_toy_model_by_its_schema_entry(toy_backend, tiny_model_dir):
    config = _config(str(tiny_model_dir))
    assert any(e.startswith("models[6]") for e in schema_errors(config, config_schema()))
    assert not [e for e in schema_errors(config, _with_toy(config_schema())) if e.startswith("models")]
    bad = {**config, "models": [*CONFIG["models"], {"name": "toy", "toy": {"path": "x"}}]}
    assert any(e.startswith("models[6].toy") for e in schema_errors(bad, _with_toy(config_schema())))
    check_config({"models": [{"name": "net", "pretrained": "hub/net"}, config["models"][-1]]})


def test_the_run_plan_routes_a_toy_model_to_the_stages_of_its_capabilities(toy_backend, tiny_model_dir):
    plan = RunPlan.from_config(_config(str(tiny_model_dir)))
    assert "toy" in plan.with_capability(LOGITS) and "toy" in plan.with_capability(SAMPLER)
    assert "toy" not in plan.with_capability(ENDPOINT) + plan.with_capability(GIVEN)
    assert {d for m, d in plan.provo_systems() if m == "toy"} == set(plan.provo_decodings)  # exact among them
    assert {d for d, m, _ in plan.production_systems() if m == "toy"} == {"wmt14"}  # asset names its models
    assert plan.job_entry("toy") == {"name": "toy", "toy": {"folder": str(tiny_model_dir)}}


def test_a_fine_tuning_of_a_toy_model_reads_its_weights_from_the_toy_block(toy_backend, tiny_model_dir):
    config = _config(str(tiny_model_dir))
    config["models"].append({"name": "toy-ft", "finetune": {"base": "toy", "dataset": "provo"}})
    entry = RunPlan.from_config(config).job_entry("toy-ft")
    assert entry["toy"] == {"folder": str(tiny_model_dir)}
    assert ModelSpec.from_config({**entry, "checkpoint": "ckpt"}).kind == "fine-tuned"


def test_a_stage_command_samples_a_toy_model_as_the_same_network_given_as_pretrained(
        toy_backend, tiny_model_dir, data_mirror, tmp_path):
    contexts, responses = tmp_path / "contexts.parquet", tmp_path / "responses.parquet"
    main(["provo-data", "--norms", str(data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"),
          "--texts", "1", "--contexts-out", str(contexts), "--responses-out", str(responses),
          "--mirror", str(data_mirror)])
    drawn = {}
    for label, entry in {"toy": {"toy": {"folder": str(tiny_model_dir)}},
                         "pretrained": {"pretrained": str(tiny_model_dir)}}.items():
        out = tmp_path / f"{label}.parquet"
        main(["provo-sample", "--model", json.dumps({"name": "tiny", **entry}), "--decoding",
              '{"name": "ancestral"}', "--contexts", str(contexts), "--n-samples", "5", "--max-tokens", "20",
              "--batch-size", "64", "--seed", "4", "--gpus", "0", "--out", str(out)])
        drawn[label] = tables.read(str(out), "provo_samples")
    assert len(drawn["toy"]) == 5 * len(tables.read(str(contexts), "provo_contexts"))
    assert drawn["toy"].equals(drawn["pretrained"])
