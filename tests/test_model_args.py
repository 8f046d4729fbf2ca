"""Model loading as users expect (issue 74, item 5): ``model_args`` reach ``from_pretrained``
(a hub revision, the attention kernel, a quantization config as a mapping, a PEFT adapter), the
hub commit loaded is recorded, ``trust_remote_code`` is an explicit opt-in, ``dtype: auto``
takes the config's precision, the model cache is keyed by the arguments that change weights, and
``batch_size: auto`` halves a sampling job's batch on running out of memory with the samples a
smaller fixed batch gives."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from helpers import REPO

from varprobe import tables
from varprobe.config_checks import ConfigError, check_config
from varprobe.data.sources import Digest
from varprobe.models import cache
from varprobe.models.loading import check_available, load_causal_lm, model_kwargs, source
from varprobe.models.spec import NO_PEFT, WEIGHT_ARGS, ModelSpec, ModelUnavailable
from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.memory import halving, is_out_of_memory
from varprobe.sampling.word_model import WordModel

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _validated(entry: dict) -> dict:
    from snakemake.utils import validate

    config = {"models": [entry]}
    validate(config, str(SCHEMA_PATH))
    return config


# --- the entry's keys ---------------------------------------------------------------------------


def test_model_args_are_parsed_into_from_pretrained_arguments_and_the_weight_changing_ones():
    entry = {"name": "m", "pretrained": "org/m", "dtype": "auto", "trust_remote_code": True,
             "batch_size": "auto",
             "model_args": {"revision": "v2", "attn_implementation": "sdpa", "adapter": "org/lora",
                            "quantization_config": {"load_in_8bit": True}}}
    spec = ModelSpec.from_config(entry)
    assert spec.load_args() == {"revision": "v2", "attn_implementation": "sdpa",
                                "quantization_config": {"load_in_8bit": True}}
    assert spec.adapter == "org/lora" and spec.trust_remote_code and spec.batch_size == "auto"
    assert spec.weight_args() == {"adapter": "org/lora", "quantization_config": {"load_in_8bit": True},
                                  "revision": "v2"}
    assert set(spec.weight_args()) <= set(WEIGHT_ARGS)
    assert ModelSpec.from_config({"name": "m", "pretrained": "org/m"}).trust_remote_code is False
    assert _validated(entry)["models"][0]["model_args"]["revision"] == "v2"


@pytest.mark.parametrize(("entry", "message"), [
    ({"model_args": {"trust_remote_code": True}},
     "model 'm': model_args 'trust_remote_code' not known .*trust_remote_code is a key of the model's entry"),
    ({"model_args": {"revison": "v2"}}, "model_args 'revison' not known \\(known: revision, "),
    ({"model_args": {"quantization_config": "4bit"}}, "quantization_config must be a mapping"),
    ({"model_args": {"revision": ""}}, "model_args.revision must be a non-empty string"),
    ({"model_args": ["revision"]}, "model_args must be a mapping"),
    ({"trust_remote_code": "yes"}, "trust_remote_code must be true or false, got 'yes'"),
    ({"dtype": "float8"}, "dtype must be one of float32, float16, bfloat16, auto, got 'float8'"),
    ({"batch_size": 16}, "batch_size takes `auto`"),
])
def test_a_wrong_loading_key_is_named_with_the_model(entry, message):
    with pytest.raises(ValueError, match=message):
        ModelSpec.from_config({"name": "m", "pretrained": "org/m", **entry})


def test_model_args_of_a_model_without_weights_are_refused():
    with pytest.raises(ValueError, match="model 's': model_args apply to pretrained, package or parts"):
        ModelSpec.from_config({"name": "s", "samples": "s.csv", "model_args": {"revision": "v1"}})


def test_the_schema_refuses_an_unknown_model_arg_and_a_numeric_model_batch_size():
    from snakemake.exceptions import WorkflowError

    for entry in ({"name": "m", "pretrained": "o/m", "model_args": {"cache_dir": "/x"}},
                  {"name": "m", "pretrained": "o/m", "batch_size": 8},
                  {"name": "m", "pretrained": "o/m", "dtype": "float64"}):
        with pytest.raises(WorkflowError):
            _validated(entry)


# --- loading ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def half_model_dir(tmp_path_factory, tiny_model_dir) -> Path:
    """The tiny GPT-2 saved in float16 (its config says so), with its tokenizer."""
    from transformers import AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("tiny-half")
    for name in os.listdir(tiny_model_dir):
        if not name.endswith(".safetensors"):
            shutil.copy(tiny_model_dir / name, folder / name)
    AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float16).save_pretrained(folder)
    return folder


def test_model_args_reach_from_pretrained_and_dtype_auto_takes_the_configs_precision(half_model_dir):
    entry = {"name": "half", "pretrained": str(half_model_dir), "model_args": {"attn_implementation": "eager"}}
    auto = load_causal_lm(ModelSpec.from_config({**entry, "dtype": "auto"}))
    assert auto.model.dtype == torch.float16
    assert auto.model.config._attn_implementation == "eager"
    assert auto.provenance == {"commit": None, "revision": None, "model_args": {"attn_implementation": "eager"},
                               "trust_remote_code": False, "dtype": "float16"}
    plain = load_causal_lm(ModelSpec.from_config({"name": "half", "pretrained": str(half_model_dir)}))
    assert plain.model.dtype == torch.float32 and plain.provenance["dtype"] == "float32"
    assert plain.model.config._attn_implementation != "eager"


def test_a_quantization_config_is_made_transformers_config_and_a_wrong_one_is_named(tiny_model_dir):
    from transformers import BitsAndBytesConfig

    spec = ModelSpec.from_config({"name": "q", "pretrained": str(tiny_model_dir), "device": "cpu",
                                  "model_args": {"quantization_config": {"load_in_4bit": True}}})
    kwargs = model_kwargs(spec)
    assert isinstance(kwargs["quantization_config"], BitsAndBytesConfig)
    assert kwargs["quantization_config"].load_in_4bit
    assert kwargs["device_map"] == {"": "cpu"}  # a quantized model is placed at load, never moved
    wrong = ModelSpec.from_config({"name": "q", "pretrained": str(tiny_model_dir),
                                   "model_args": {"quantization_config": {"quant_method": "nonsense"}}})
    with pytest.raises(ModelUnavailable, match="model 'q': model_args.quantization_config .* is not a "
                                               "quantization transformers knows"):
        check_available(wrong)


def test_a_quantization_whose_package_is_missing_is_named(tiny_model_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)
    spec = ModelSpec.from_config({"name": "q", "pretrained": str(tiny_model_dir),
                                  "model_args": {"quantization_config": {"load_in_4bit": True}}})
    with pytest.raises(ModelUnavailable, match="model 'q': its model_args need a package that is not installed"):
        load_causal_lm(spec)


def test_an_adapter_without_peft_is_a_clear_error_before_any_weight_is_read(tiny_model_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)  # as where peft is not installed
    entry = {"name": "lora", "pretrained": str(tiny_model_dir), "model_args": {"adapter": "org/adapter"}}
    spec = ModelSpec.from_config(entry)
    assert spec.local_problem() == f"model 'lora': {NO_PEFT}"
    assert "pip install peft" in NO_PEFT
    with pytest.raises(ModelUnavailable, match="model_args.adapter needs the peft package"):
        check_available(spec)
    with pytest.raises(ModelUnavailable, match="model_args.adapter needs the peft package"):
        load_causal_lm(spec)
    with pytest.raises(ConfigError, match=r"models\[0\]: model 'lora': model_args.adapter needs the peft"):
        check_config({"models": [entry]})


HUB_SCRIPT = """
import json, sys
import torch
from varprobe.models.loading import check_available, load_causal_lm
from varprobe.models.spec import ModelSpec, ModelUnavailable
out = {}
for label, entry in json.loads(sys.argv[1]).items():
    spec = ModelSpec.from_config(entry)
    try:
        check_available(spec)
        loaded = load_causal_lm(spec)
    except ModelUnavailable as err:
        out[label] = {"refused": str(err)}
        continue
    weights = loaded.model.get_input_embeddings().weight
    out[label] = {"commit": loaded.provenance["commit"], "sum": float(weights.double().sum()),
                  "class": type(loaded.model).__name__}
print(json.dumps(out))
"""


def _run_isolated(tmp_path: Path, entries: dict) -> dict:
    """Load ``entries`` in a fresh process whose hub cache is ``tmp_path/hub`` (offline) and whose
    downloaded-code folder lies under ``tmp_path/home``."""
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HOME": str(tmp_path / "home"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VARPROBE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", HUB_SCRIPT, json.dumps(entries)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_revision_loads_that_commits_weights_and_the_commit_is_recorded(tmp_path, tiny_model_dir):
    """A hub repository (in an offline hub cache) with two commits: main and the tag v2, whose
    embedding differs. The default loads main's, revision v2 the other, a commit hash its own;
    each load records the commit it read."""
    from transformers import AutoModelForCausalLM

    first, second = "a" * 40, "b" * 40
    repo = tmp_path / "hub" / "models--org--tiny"
    for commit in (first, second):
        shutil.copytree(tiny_model_dir, repo / "snapshots" / commit)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        model.get_input_embeddings().weight.add_(1.0)
    model.save_pretrained(repo / "snapshots" / second)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(first)
    (repo / "refs" / "v2").write_text(second)
    hub = {"name": "hub", "pretrained": "org/tiny"}
    found = _run_isolated(tmp_path, {
        "default": hub, "tag": {**hub, "model_args": {"revision": "v2"}},
        "hash": {**hub, "model_args": {"revision": second}}})
    assert found["default"]["commit"] == first and found["tag"]["commit"] == second
    assert found["hash"] == found["tag"] and found["tag"]["sum"] != found["default"]["sum"]


def test_code_that_comes_with_a_model_runs_only_with_the_explicit_opt_in(tmp_path, tiny_model_dir):
    folder = tmp_path / "custom"
    shutil.copytree(tiny_model_dir, folder)
    marker = tmp_path / "ran"
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="mine-gpt2", architectures=["MineModel"],
                  auto_map={"AutoConfig": "configuration_mine.MineConfig",
                            "AutoModelForCausalLM": "modeling_mine.MineModel"})
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "configuration_mine.py").write_text(
        "from transformers import GPT2Config\n\n\nclass MineConfig(GPT2Config):\n    model_type = 'mine-gpt2'\n")
    (folder / "modeling_mine.py").write_text(
        "import pathlib\n\nfrom transformers import GPT2LMHeadModel\n\nfrom .configuration_mine import MineConfig\n\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n\n\n"
        "class MineModel(GPT2LMHeadModel):\n    config_class = MineConfig\n")
    entry = {"name": "custom", "pretrained": str(folder)}
    found = _run_isolated(tmp_path, {"refused": entry})
    assert "maps the model to code of its own" in found["refused"]["refused"]
    assert "trust_remote_code: true" in found["refused"]["refused"] and not marker.exists()
    spec = ModelSpec.from_config({**entry, "trust_remote_code": True})
    assert spec.local_problem() is None and spec.trust_remote_code
    found = _run_isolated(tmp_path, {"trusted": {**entry, "trust_remote_code": True}})
    assert found["trusted"]["class"] == "MineModel" and marker.read_text() == "ran"


# --- the model cache ----------------------------------------------------------------------------


def test_the_cache_key_holds_the_weight_changing_model_args_and_is_unchanged_without_them():
    digest, versions = Digest("0" * 64, 10), {"transformers": "5"}
    plain = cache.entry_name(digest, "float32", versions)
    assert cache.entry_name(digest, "float32", versions, {}) == plain
    names = {cache.entry_name(digest, "float32", versions, w)
             for w in ({"revision": "v1"}, {"revision": "v2"}, {"adapter": "a"},
                       {"quantization_config": {"load_in_4bit": True}})}
    assert len(names) == 4 and plain not in names


def test_a_gguf_models_revision_gets_an_entry_of_its_own(tmp_path, monkeypatch):
    from test_model_cache import GGUF, write_tiny_gguf

    folder = tmp_path / "weights"
    folder.mkdir()
    write_tiny_gguf(folder / GGUF)
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    entry = {"name": "g", "pretrained": str(folder), "gguf_file": GGUF}
    plain, _ = source(ModelSpec.from_config(entry))
    pinned, _ = source(ModelSpec.from_config({**entry, "model_args": {"revision": "v1"}}))
    kernel, _ = source(ModelSpec.from_config({**entry, "model_args": {"attn_implementation": "eager"}}))
    assert plain != pinned and kernel == plain  # an attention kernel changes no weight
    manifest = json.loads((Path(pinned) / cache.MANIFEST).read_text())
    assert manifest["weights"] == {"revision": "v1"} and "weights" not in json.loads(
        (Path(plain) / cache.MANIFEST).read_text())


# --- batch_size: auto ---------------------------------------------------------------------------


def test_out_of_memory_errors_are_told_from_other_errors():
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))
    assert is_out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: "
                                         "can't allocate memory: you tried to allocate 8 bytes. out of memory"))
    assert is_out_of_memory(MemoryError())
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(ValueError("out of memory"))


def _oom_above(monkeypatch, limit: int, seen: list[int]) -> None:
    """Make the sampler run out of memory on its second chain at any batch size above ``limit``."""
    original = CompleteWordSampler._draw_chain
    calls = {"n": 0}

    def draw(self, chain):
        seen.append(self.settings.batch_size)
        calls["n"] += 1
        if self.settings.batch_size > limit and calls["n"] > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (forced by the test)")
        return original(self, chain)

    monkeypatch.setattr(CompleteWordSampler, "_draw_chain", draw)


def _work(contexts: pd.DataFrame) -> list:
    return [((t, w), c) for t, w, c in zip(contexts["text_id"], contexts["word_number"], contexts["context"],
                                           strict=True)]


def test_halving_on_out_of_memory_gives_the_samples_of_a_fixed_smaller_batch(tiny_model, passage_one,
                                                                             monkeypatch, capsys):
    contexts = tables.read(passage_one["contexts"], "provo_contexts")
    work = _work(contexts)
    decoding = Decoding.from_config({"name": "ancestral"})
    settings = SamplerSettings(n_samples=600, max_tokens=6, batch_size=8, seed=3)

    def sampler(size):
        return CompleteWordSampler(WordModel(tiny_model.model, tiny_model.tokenizer), decoding,
                                   SamplerSettings(600, 6, size, 3))

    fixed = list(sampler(2).sample_many(work))
    seen: list[int] = []
    _oom_above(monkeypatch, 2, seen)
    halved = list(halving(lambda size, done: sampler(size).sample_many(work[done:]), settings.batch_size,
                          auto=True, what="test"))
    assert halved == fixed
    assert seen[:2] == [8, 8] and 4 in seen and seen[-1] == 2  # 8 fails, 4 fails, 2 finishes
    message = capsys.readouterr().err
    assert "test: out of memory (CUDA out of memory (forced by the test)); batch_size auto: going on at " \
           "batch size 4" in message and "at batch size 2" in message
    with pytest.raises(torch.cuda.OutOfMemoryError):  # without auto the error stands
        list(halving(lambda size, done: sampler(size).sample_many(work[done:]), 8, auto=False, what="test"))


def test_halving_stops_at_batch_size_one_and_never_hides_another_error():
    def always_oom(size, done):
        raise RuntimeError("out of memory")
        yield

    with pytest.raises(RuntimeError, match="out of memory"):
        list(halving(always_oom, 4, auto=True, what="t"))

    def broken(size, done):
        raise RuntimeError("a bug")
        yield

    with pytest.raises(RuntimeError, match="a bug"):
        list(halving(broken, 4, auto=True, what="t"))
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        list(halving(broken, 0, auto=True, what="t"))


def test_provo_sample_with_batch_size_auto_writes_the_table_a_smaller_batch_writes(
        tmp_path, tiny_model_dir, passage_one, monkeypatch, capsys):
    from varprobe.cli import main

    entry = {"name": "tiny", "pretrained": str(tiny_model_dir)}

    def sample(model: dict, size: int, out: Path) -> pd.DataFrame:
        main(["provo-sample", "--model", json.dumps(model), "--decoding", json.dumps({"name": "ancestral"}),
              "--contexts", str(passage_one["contexts"]), "--n-samples", "1024", "--max-tokens", "3",
              "--batch-size", str(size), "--seed", "0", "--gpus", "0", "--out", str(out)])
        return tables.read(out, "provo_samples")

    fixed = sample(entry, 2, tmp_path / "fixed.parquet")
    seen: list[int] = []
    _oom_above(monkeypatch, 2, seen)
    auto = sample({**entry, "batch_size": "auto"}, 8, tmp_path / "auto.parquet")
    pd.testing.assert_frame_equal(auto, fixed)
    assert seen[-1] == 2
    metadata = tables.read_metadata(tmp_path / "auto.parquet")
    assert metadata["loaded"]["trust_remote_code"] is False and metadata["loaded"]["commit"] is None
    capsys.readouterr()
    with pytest.raises(SystemExit):  # without auto, the job fails on the error
        sample(entry, 8, tmp_path / "plain.parquet")
    assert "varprobe: error: CUDA out of memory (forced by the test)" in capsys.readouterr().err


def test_the_keys_are_documented():
    docs = (REPO / "docs" / "models.md").read_text()
    keys = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["models"]["items"]["properties"]
    for key in ("model_args", "trust_remote_code", "batch_size"):
        assert key in keys and f"`{key}" in docs
    for key in keys["model_args"]["properties"]:
        assert f"`models[].model_args.{key}`" in (REPO / "docs" / "configuration" / "keys.md").read_text()


def test_production_sample_with_batch_size_auto_writes_the_table_a_smaller_batch_writes(
        tmp_path, tiny_model_dir, monkeypatch, capsys):
    from varprobe.cli import main
    from varprobe.sampling.engine import Engine

    instances = tmp_path / "instances.parquet"
    sources = ["It rained.", "A man walked his dog in the park.", "Prices rose again in May.", "The train was late."]
    tables.write(pd.DataFrame({"dataset": "toy", "split": "test", "input_id": [f"i{k}" for k in range(4)],
                               "source": sources, "references": [["a reference"]] * 4}),
                 instances, "production_instances")
    entry = {"name": "tiny", "pretrained": str(tiny_model_dir)}

    def produce(model: dict, size: int, out: Path) -> pd.DataFrame:
        main(["production-sample", "--model", json.dumps(model), "--decoding", '{"name": "ancestral"}',
              "--instances", str(instances), "--prompt", "Simplify: {source}", "--no-chat", "--n-samples", "3",
              "--max-new-tokens", "6", "--seed", "0", "--batch-size", str(size), "--gpus", "0", "--out", str(out)])
        return tables.read(out, "production_samples")

    fixed = produce(entry, 2, tmp_path / "fixed.parquet")
    seen: list[int] = []
    started, draw = Engine.__init__, Engine._draw

    def init(self, *args, batch_size, **kwargs):
        self.asked = batch_size
        started(self, *args, batch_size=batch_size, **kwargs)

    def oom_above_two(self, weights, rows):
        seen.append(self.asked)
        if self.asked > 2 and len(seen) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (forced by the test)")
        return draw(self, weights, rows)

    monkeypatch.setattr(Engine, "__init__", init)
    monkeypatch.setattr(Engine, "_draw", oom_above_two)
    auto = produce({**entry, "batch_size": "auto"}, 8, tmp_path / "auto.parquet")
    pd.testing.assert_frame_equal(auto, fixed)
    assert seen[0] == 8 and seen[-1] == 2
    assert "batch_size auto: going on at batch size 4" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # without auto, the job fails on the error
        produce(entry, 8, tmp_path / "plain.parquet")
    assert "varprobe: error: CUDA out of memory (forced by the test)" in capsys.readouterr().err
