"""The run record: one JSON file (``results/run.json``) that says what a run was and what it
found, written by the workflow's last job (``varprobe run-record``) so that two runs can be
compared without reading their pages (``varprobe.run_comparison``).

It holds (``FIELDS``): the merged, validated config with its secrets removed (``redact``) and its
digest, the commit of the workflow's checkout and whether its tree was dirty (None outside a git
checkout), the versions of the packages that decide the numbers, what each model was (a hub
model's revision, a GGUF file's SHA-256 as pip or the config recorded it, an API model's
endpoint), the seeds, the data files' pinned and found digests, the stage times and the headline
numbers with their intervals (``headlines``). ``provenance`` is the part that every summary
table also carries in its Parquet metadata (``varprobe.tables.PROVENANCE_ENV``).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from varprobe import tables
from varprobe.credentials import CREDENTIAL_PARAMETER, url_credentials
from varprobe.stage_times import stage_times

FORMAT = "varprobe-run/1"
"""The record's ``format``: a reader refuses another one, naming it."""

RECORD = "run.json"
"""The record's file name in a run's results folder."""

REDACTED = "<redacted>"
"""What stands in the record where the config held a secret."""

PACKAGES = ("varprobe", "torch", "transformers", "tokenizers", "accelerate", "safetensors", "gguf",
            "peft", "snakemake", "numpy", "pandas", "pyarrow", "scipy", "scikit-learn", "spacy",
            "sentence-transformers", "pymc", "huggingface-hub", "openai")
"""The distributions whose versions a record states (None where one is not installed)."""

FIELDS = {
    "format": "the record's format, " + FORMAT,
    "written": "when the record was written (UTC, ISO 8601)",
    "provenance": "commit, dirty, config_digest, versions: the same in every summary table's metadata",
    "python": "the Python version",
    "config": "the merged, validated config (the schema's defaults applied), secrets removed",
    "models": "per model: its kind and what identifies its weights (revision, sha256, endpoint, file)",
    "seeds": "every seed of the config by its dotted key",
    "data": "per raw or user data file: its pinned digest and the digest found (or recorded)",
    "stage_times": "per stage: jobs, wall_s, cpu_s, longest_s, peak_rss_mb (varprobe.stage_times)",
    "headlines": "the headline numbers: one row per study, table, system and quantity, with its interval",
}
"""The record's top-level keys and what each holds (docs/outputs.md)."""


def redact(value, key: str = ""):
    """``value`` (a config or any part of it) with every secret replaced by ``REDACTED``: the
    value of a key whose name says it holds a credential (``api_key``, ``token``, ``password``,
    ``Authorization``, ...; ``varprobe.credentials.CREDENTIAL_PARAMETER``), but not a key naming
    the environment variable that holds one (``api_key_env``), and any text that is a URL
    carrying a credential (``varprobe.credentials.url_credentials``). The config checks refuse
    both; the record does not rely on them.

    Parameters
    ----------
    value : object
        A JSON-like value (mappings, lists, scalars).
    key : str, optional
        The key that holds ``value`` in its mapping.

    Returns
    -------
    object
        A copy without secrets.
    """
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, key) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if key and not key.endswith("_env") and CREDENTIAL_PARAMETER.search(key):
        return REDACTED
    if isinstance(value, str) and url_credentials(value):
        return REDACTED
    return value


def config_digest(config: dict) -> str:
    """The SHA-256 of the redacted config as canonical JSON (sorted keys): two runs of one config
    have one digest.

    Parameters
    ----------
    config : dict
        The merged, validated config.

    Returns
    -------
    str
        64 hex digits.
    """
    text = json.dumps(redact(config), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def git_state(checkout: str | Path) -> dict:
    """The commit of the git checkout holding ``checkout`` and whether its tracked files differ
    from it; both None outside a git checkout (or without git).

    Parameters
    ----------
    checkout : str or Path
        A folder of the checkout (the workflow's).

    Returns
    -------
    dict
        ``{"commit": str or None, "dirty": bool or None}``.
    """
    try:
        commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        changes = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(changes.strip())}


def versions() -> dict[str, str | None]:
    """The installed version of each of ``PACKAGES`` (None where it is not installed).

    Returns
    -------
    dict of str to str or None
    """
    found = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def provenance(config: dict, checkout: str | Path) -> dict:
    """What a run's tables and record say of their origin: the checkout's commit and dirtiness
    (``git_state``), the config's digest (``config_digest``) and the package versions.

    Parameters
    ----------
    config : dict
        The merged, validated config.
    checkout : str or Path
        The workflow's folder.

    Returns
    -------
    dict
        ``commit``, ``dirty``, ``config_digest``, ``versions``.
    """
    return {**git_state(checkout), "config_digest": config_digest(config), "versions": versions()}


def seeds(config, prefix: str = "") -> dict:
    """Every seed of ``config`` by its dotted key (``seed``, ``analyses.oracle_replacement.seeds``,
    a list's items by index): keys named ``seed``, ``seeds`` or ending in ``_seed``.

    Parameters
    ----------
    config : object
        The config or a part of it.
    prefix : str, optional
        The dotted key of ``config``.

    Returns
    -------
    dict
    """
    found = {}
    items = config.items() if isinstance(config, dict) else enumerate(config) if isinstance(config, list) else ()
    for key, value in items:
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(key, str) and (key in ("seed", "seeds") or key.endswith("_seed")) \
                and not isinstance(value, (dict, list)):
            found[path] = value
        elif isinstance(value, (dict, list)):
            found.update(seeds(value, path))
    return found


def recorded_digest(package: str, file: str) -> str | None:
    """The SHA-256 pip recorded for ``file`` of the installed package ``package`` (its RECORD),
    so that a GGUF file of hundreds of MB is not read again; None where none is recorded.

    Parameters
    ----------
    package : str
        The import name.
    file : str
        The file's path inside the package.

    Returns
    -------
    str or None
        64 hex digits, or None.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    target = (Path(spec.origin).parent / file).resolve()
    for distribution in importlib.metadata.packages_distributions().get(package, []):
        for entry in importlib.metadata.files(distribution) or []:
            if entry.hash is None or entry.hash.mode != "sha256":
                continue
            if Path(entry.locate()).resolve() == target:
                raw = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4))
                return raw.hex()
    return None


def hub_revision(repo_id: str, revision: str | None = None) -> str | None:
    """The commit of hub model ``repo_id`` (at ``revision``, default its main branch) that the
    local hub cache holds, which is what a run loaded; None where it holds none.

    Parameters
    ----------
    repo_id : str
        The hub id.
    revision : str, optional
        A branch, tag or commit.

    Returns
    -------
    str or None
    """
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except ValueError:  # not a hub id
        return None
    if not isinstance(found, str):
        return None
    parts = Path(found).parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts else None


def model_identity(entry: dict) -> dict:
    """What identifies a configured model's weights: its kind and, by kind, a hub model's
    revision (``hub_revision``; a local folder's path), a package's version and its GGUF file's
    SHA-256 (pip's record, else read once), ``parts``' configured SHA-256, an API model's endpoint
    and model name, a samples file's SHA-256 (read: such files are small), a published system's
    name (its files are pinned), a fine-tuned model's base and dataset. A hub id's revision is None where the hub cache holds none.

    Parameters
    ----------
    entry : dict
        A ``models`` entry of the config.

    Returns
    -------
    dict
    """
    from varprobe.data.sources import Digest

    entry = redact(entry)
    found: dict = {"name": entry["name"]}
    model_args = entry.get("model_args") or {}
    if entry.get("finetune"):
        finetune = entry["finetune"]
        return {**found, "kind": "fine-tuned", "base": finetune.get("base"), "dataset": finetune.get("dataset")}
    if entry.get("api"):
        api = entry["api"]
        return {**found, "kind": "api", "base_url": api.get("base_url"), "model": api.get("model")}
    if entry.get("published"):
        return {**found, "kind": "samples", "published": entry["published"]["system"]}
    if entry.get("samples"):
        path = Path(entry["samples"])
        return {**found, "kind": "samples", "file": entry["samples"],
                "sha256": Digest.of(path).sha256 if path.is_file() else None}
    found["kind"] = "network"
    if entry.get("checkpoint"):
        found["checkpoint"] = entry["checkpoint"]
    if entry.get("parts"):
        return {**found, "parts": list(entry["parts"]), "gguf_file": entry.get("gguf_file"),
                "sha256": entry.get("sha256"), "sha256_from": "config"}
    if entry.get("package"):
        package = entry["package"]
        found["package"] = package
        try:
            found["package_version"] = importlib.metadata.version(package.replace("_", "-"))
        except importlib.metadata.PackageNotFoundError:
            found["package_version"] = None
        if entry.get("gguf_file"):
            found["gguf_file"] = entry["gguf_file"]
            digest = recorded_digest(package, entry["gguf_file"])
            found["sha256"], found["sha256_from"] = (digest, "pip record") if digest else (None, None)
        return found
    pretrained = str(entry.get("pretrained"))
    local = Path(pretrained).expanduser()
    if local.exists():
        found["path"] = str(local)
        if entry.get("gguf_file") and (local / entry["gguf_file"]).is_file():
            found["gguf_file"] = entry["gguf_file"]
            found["sha256"] = Digest.of(local / entry["gguf_file"]).sha256
            found["sha256_from"] = "file"
        return found
    found["hub_id"] = pretrained
    found["revision_requested"] = model_args.get("revision")
    found["revision"] = hub_revision(pretrained, model_args.get("revision"))
    return found


def data_checksums(config: dict, results: Path) -> list[dict]:
    """Each raw data file of the configured studies: its pinned digest (``varprobe.data.sources``)
    and, for the Provo norms, the SHA-256 of the run's copy (13 MB, read here); then every
    digest the workflow recorded of a data file the config brings (``results/digests``).

    Parameters
    ----------
    config : dict
        The merged, validated config.
    results : Path
        The run's results folder.

    Returns
    -------
    list of dict
    """
    from varprobe.data import DATASETS
    from varprobe.data.provo import SOURCES as PROVO_SOURCES
    from varprobe.data.sources import Digest

    def pinned(digest) -> str | None:
        return digest.sha256 if digest is not None else None

    rows = []
    named = ([("provo", s) for s in PROVO_SOURCES] if "provo" in config and not config["provo"].get("corpus") else [])
    for dataset in (config.get("production") or {}).get("datasets", []):
        record = DATASETS.get(dataset.get("name"))
        if record is not None and not dataset.get("file") and not dataset.get("datasets"):
            named += [(record.name, s) for s in record.sources]
    for name, source in named:
        copy = results / "raw" / name / source.file
        row = {"dataset": name, "file": source.file, "pinned_sha256": pinned(source.digest),
               "pinned_mirror_sha256": pinned(source.mirror_digest), "sha256": None}
        if name == "provo" and copy.is_file():
            row["sha256"] = Digest.of(copy).sha256
        rows.append(row)
    digests = results / "digests"
    for record in sorted(digests.rglob("*.sha256")) if digests.is_dir() else []:
        words = record.read_text().split()  # "sha256 <hex> (<n> bytes)" (user_files.record_digest)
        rows.append({"dataset": str(record.relative_to(digests).with_suffix("")), "file": None,
                     "pinned_sha256": None, "pinned_mirror_sha256": None,
                     "sha256": words[1] if len(words) > 1 and words[0] == "sha256" else None})
    return rows


HEADLINE_COLUMNS = ("study", "table", "dataset", "probe", "model", "decoding", "role", "quantity",
                    "mean", "ci_low", "ci_high")
"""The columns of a headline row (and of the ``run_headlines`` table, with the run's)."""

PROVO_INTERVAL_QUANTITIES = {"tvd_oracle1": "expected_tvd_oracle1", "ece_corpus": "ece_corpus",
                             "ece_human_majority": "ece_human_majority", "tvd_humans": None}
"""The quantities of the Provo intervals table (Table 1's bootstrap intervals) a record keeps as
headlines, each with the summary's column that holds its mean (None: the intervals table does):
E TVD(M, O1), the ECEs against the corpus word and the human majority, and the oracle's
E TVD(O2, H)."""

PRODUCTION_STATISTIC = "w1_M_H"
"""The production study's headline statistic per probe: the Wasserstein-1 distance between a
system's and the humans' distance distributions; the human control's (``w1_C_H``) is its ceiling."""

CONTROL = "human control"
"""The model name of the human control's rows in the headlines (production)."""


def _number(value) -> float | None:
    """``value`` as a float, or None where it is missing (NaN, NA)."""
    if value is None or pd.isna(value):
        return None
    return float(value)


def _row(**fields) -> dict:
    row = {k: fields.get(k, "") for k in HEADLINE_COLUMNS}
    for k in ("mean", "ci_low", "ci_high"):
        row[k] = _number(fields.get(k))
    return row


def provo_headlines(summary: pd.DataFrame, intervals: pd.DataFrame | None = None) -> list[dict]:
    """The Provo study's headlines: per system E TVD with its interval from the summary
    (``provo_system``; the oracle control's row, role ``ceiling``, is the humans' own
    variability), the human row's ECEs (role ``reference``, Table 1's human row: no interval),
    then the quantities of ``PROVO_INTERVAL_QUANTITIES`` with their bootstrap intervals
    (``provo_intervals``, their means from the summary).

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``provo_system`` table.
    intervals : pandas.DataFrame, optional
        A ``provo_intervals`` table.

    Returns
    -------
    list of dict
        Rows of ``HEADLINE_COLUMNS``.
    """
    rows = []
    roles = {"oracle": "ceiling", "human": "reference"}
    for r in summary.itertuples(index=False):
        if _number(r.expected_tvd) is None:
            continue
        rows.append(_row(study="provo", table="provo/summary", model=r.model, decoding=r.decoding,
                         role=roles.get(r.model, "system"), quantity="expected_tvd",
                         mean=r.expected_tvd, ci_low=r.ci_low, ci_high=r.ci_high))
    for r in summary[summary["model"] == "human"].itertuples(index=False):
        rows += [_row(study="provo", table="provo/summary", model=r.model, decoding=r.decoding, role="reference",
                      quantity=q, mean=getattr(r, q), ci_low=None, ci_high=None)
                 for q in ("ece_corpus", "ece_human_majority") if _number(getattr(r, q)) is not None]
    if intervals is None:
        return rows
    means = summary.set_index(["model", "decoding"])
    for r in intervals.itertuples(index=False):
        if r.quantity not in PROVO_INTERVAL_QUANTITIES:
            continue
        mean, column = r.mean, PROVO_INTERVAL_QUANTITIES[r.quantity]
        if _number(mean) is None and column and (r.model, r.decoding) in means.index:
            mean = means.loc[(r.model, r.decoding), column]
        rows.append(_row(study="provo", table="provo/page/intervals", model=r.model, decoding=r.decoding,
                         role=roles.get(r.model, "system"), quantity=r.quantity, mean=mean,
                         ci_low=r.ci_low, ci_high=r.ci_high))
    return rows


def production_headlines(summary: pd.DataFrame, probes: list[str]) -> list[dict]:
    """The production study's headlines: per dataset, probe of ``probes`` (the figures' probes)
    and system, ``PRODUCTION_STATISTIC`` with its interval, and per dataset and probe the human
    control's ``w1_C_H`` once (model ``CONTROL``, role ``ceiling``: the same inputs for every
    system; the first system's row). Unavailable probes are left out.

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``production_summary`` table.
    probes : list of str
        The probes kept.

    Returns
    -------
    list of dict
        Rows of ``HEADLINE_COLUMNS``.
    """
    rows, controls = [], set()
    kept = summary[summary["available"] & summary["probe"].isin(probes)]
    for r in kept.itertuples(index=False):
        if r.statistic == PRODUCTION_STATISTIC:
            rows.append(_row(study="production", table="production/summary", dataset=r.dataset, probe=r.probe,
                             model=r.model, decoding=r.decoding, role="system", quantity=r.statistic,
                             mean=r.mean, ci_low=r.ci_low, ci_high=r.ci_high))
        elif r.statistic == "w1_C_H" and (r.dataset, r.probe) not in controls:
            controls.add((r.dataset, r.probe))
            rows.append(_row(study="production", table="production/summary", dataset=r.dataset, probe=r.probe,
                             model=CONTROL, decoding="", role="ceiling", quantity=r.statistic,
                             mean=r.mean, ci_low=r.ci_low, ci_high=r.ci_high))
    return rows


def finetune_headlines(comparison: pd.DataFrame) -> list[dict]:
    """A fine-tuned model's headline: per decoding, the mean over contexts of its TVD less the
    pretrained model's, with its interval (``finetune_comparison``).

    Parameters
    ----------
    comparison : pandas.DataFrame
        A ``finetune_comparison`` table.

    Returns
    -------
    list of dict
        Rows of ``HEADLINE_COLUMNS``.
    """
    return [_row(study="finetune", table="finetune/comparison", model=r.model, decoding=r.decoding,
                 role="system", quantity="mean_difference", mean=r.mean_difference,
                 ci_low=r.difference_ci_low, ci_high=r.difference_ci_high)
            for r in comparison.itertuples(index=False)]


def headlines(report_tables: list[dict], measured: dict, probes: list[str]) -> list[dict]:
    """The run's headline numbers from the summary tables the results page reads:
    ``report_tables``, the report's registry entries (``name``, ``table``, ``schema``), read by
    schema (``provo_system``, ``production_summary``, ``finetune_comparison``); ``measured``, the
    page's measured tables, for ``provo_intervals``; ``probes``, the production figures' probes.

    Parameters
    ----------
    report_tables : list of dict
        The registry's entries.
    measured : dict
        The page's tables by name.
    probes : list of str
        The production probes kept.

    Returns
    -------
    list of dict
        Rows of ``HEADLINE_COLUMNS``, in the registry's order.
    """
    rows = []
    for entry in report_tables:
        schema, path = entry.get("schema"), entry["table"]
        if entry["name"] == "provo_summary":
            intervals = measured.get("provo_intervals")
            rows += provo_headlines(tables.read(path, "provo_system"),
                                    tables.read(intervals, "provo_intervals") if intervals else None)
        elif entry["name"] == "production_summary":
            rows += production_headlines(tables.read(path, "production_summary"), probes)
        elif entry["name"].startswith("finetune_comparison") or schema == "finetune_comparison":
            rows += finetune_headlines(tables.read(path, "finetune_comparison"))
    return rows


def build(*, config: dict, checkout: str | Path, results: str | Path, report_tables: list[dict],
          measured: dict, probes: list[str]) -> dict:
    """The run record of the run whose results are in ``results`` (``FIELDS``).

    Parameters
    ----------
    config : dict
        The merged, validated config.
    checkout : str or Path
        The workflow's folder (its git checkout).
    results : str or Path
        The run's results folder.
    report_tables : list of dict
        The report's registry entries (``headlines``).
    measured : dict
        The page's measured tables (``headlines``).
    probes : list of str
        The production figures' probes.

    Returns
    -------
    dict
        JSON-serialisable.
    """
    results = Path(results)
    benchmarks = results / "benchmarks"
    stages = stage_times(benchmarks) if benchmarks.is_dir() else {}
    stages.pop("run_record", None)
    return {
        "format": FORMAT,
        "written": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "provenance": provenance(config, checkout),
        "python": platform.python_version(),
        "config": redact(config),
        "models": [model_identity(m) for m in config.get("models", [])],
        "seeds": seeds(config),
        "data": data_checksums(config, results),
        "stage_times": {name: dataclasses.asdict(stage) for name, stage in stages.items()},
        "headlines": headlines(report_tables, measured, probes),
    }


def write(record: dict, path: str | Path) -> None:
    """Write ``record`` as indented JSON to ``path`` atomically (NaN written as null).

    Parameters
    ----------
    record : dict
        A record from ``build``.
    path : str or Path
        The file.

    Returns
    -------
    None
    """
    text = json.dumps(_finite(record), indent=1, sort_keys=False, allow_nan=False) + "\n"
    with tables.atomic(path) as partial:
        partial.write_text(text, encoding="utf-8")


def _finite(value):
    """``value`` with every non-finite float as None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def read(run: str | Path) -> dict:
    """The record of ``run``: a run's folder (its ``results/run.json``, or its own ``run.json``)
    or the file itself. FileNotFoundError or ValueError naming the path otherwise.

    Parameters
    ----------
    run : str or Path
        A run folder, a results folder or a record.

    Returns
    -------
    dict

    Raises
    ------
    FileNotFoundError
        When no record is found there.
    ValueError
        When the file is not a run record.
    """
    run = Path(run)
    candidates = [run] if run.is_file() else [run / "results" / RECORD, run / RECORD]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise FileNotFoundError(f"no run record at {run} (looked for {', '.join(map(str, candidates))}); "
                                "a finished run writes results/run.json")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a run record: {err}") from err
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"{path} is not a run record of format {FORMAT} (format: {found!r})")
    record["path"] = str(path)
    return record

