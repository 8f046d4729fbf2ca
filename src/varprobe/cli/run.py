"""The user's commands: ``varprobe run``, one model through the workflow in a run folder of its
own, and ``varprobe list``, what the registries hold.

``varprobe run --model pretrained=ID[,KEY=VALUE...]`` takes the workflow's default config
(``config.yaml``, the checkout's or the installed package's: ``varprobe.workflow_files``; or the
file of ``--config``), puts
the one model in place of its models, keeps the chosen studies and analyses, caps the inputs at
``--limit``, writes the result as the run folder's ``config.yaml`` and runs Snakemake there on the
workflow's Snakefile. That is the config path exactly (a working directory holding its own
``config.yaml``), so the run gives the tables that ``snakemake`` gives on that file.
"""

from __future__ import annotations

import argparse
import copy
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from varprobe.model_strings import parse_model
from varprobe.workflow_files import config_schema, root

STUDIES = ("provo", "production")
"""The studies of the config, by their section."""

PROVO_PASSAGES = 55
"""Provo's passages, numbered 1 to 55 (``provo.texts: all``)."""

def _split(text: str | None) -> list[str] | None:
    return None if text is None else [v for v in (s.strip() for s in text.split(",")) if v]


def _anchored(config: dict, base: Path) -> None:
    """Make the config's relative data paths (``data_mirror``, a task's or corpus's ``file``)
    absolute, relative to ``base`` (the folder of the config that names them), so that they
    name the same files from the run folder."""
    def anchor(entry: dict, key: str) -> None:
        value = entry.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            entry[key] = str(base / value)

    anchor(config, "data_mirror")
    for dataset in (config.get("production") or {}).get("datasets") or []:
        if isinstance(dataset, dict):
            anchor(dataset, "data_mirror")
            anchor(dataset, "file")
    corpus = (config.get("provo") or {}).get("corpus")
    if isinstance(corpus, dict):
        anchor(corpus, "file")


def _limit_provo(provo: dict, limit: int, notes: list[str]) -> None:
    """At most ``limit`` passages of ``provo.texts`` (its first), and the figure contexts and
    enumerated passages of the ones kept."""
    texts = provo.get("texts", "all")
    texts = list(range(1, PROVO_PASSAGES + 1)) if texts == "all" else list(texts)
    kept = texts[:limit]
    provo["texts"] = kept
    if "figure_contexts" in provo:
        provo["figure_contexts"] = [c for c in provo["figure_contexts"]
                                    if str(c).partition(":")[0].isdigit() and int(str(c).partition(":")[0]) in kept]
    decodings = []
    for decoding in provo.get("decodings") or []:
        if isinstance(decoding, dict) and decoding.get("texts"):
            chosen = [t for t in decoding["texts"] if t in kept]
            if not chosen:
                notes.append(f"provo decoding {decoding.get('name')!r} left out: --limit {limit} keeps "
                             f"passages {kept}, none of its {decoding['texts']}")
                continue
            decoding = {**decoding, "texts": chosen}
        decodings.append(decoding)
    if "decodings" in provo:
        provo["decodings"] = decodings


def compose(base: dict, *, model: dict, studies: list[str] | None = None, analyses: list[str] | None = None,
            limit: int | None = None) -> tuple[dict, list[str]]:
    """The config of a run of one model: ``base`` with ``model`` as its only model, the
    ``studies`` (default: those of ``base``), the ``analyses`` (default: those of ``base`` that
    the studies can run; ``[]``: none) each with its settings in ``base`` (else the schema's
    defaults) and, with ``limit``, at most that many Provo passages (the first of
    ``provo.texts``) and inputs per production dataset (``production.max_inputs``).

    Parameters
    ----------
    base : dict
        The config it starts from (not changed).
    model : dict
        The model's config entry (``parse_model``).
    studies : list of str, optional
        Sections of ``STUDIES`` to run.
    analyses : list of str, optional
        Keys of ``analyses`` (``varprobe.families``) to run.
    limit : int, optional
        The cap on passages and inputs.

    Returns
    -------
    (dict, list of str)
        The config, and a note for each thing of ``base`` it left out that was not asked for.
    """
    from varprobe.families import families

    config = copy.deepcopy(base)
    notes: list[str] = []
    config["models"] = [model]
    present = [s for s in STUDIES if config.get(s) is not None]
    chosen = present if studies is None else studies
    for study in chosen:
        if study not in STUDIES:
            raise ValueError(f"--studies: unknown study {study!r}; the studies: {', '.join(STUDIES)}")
        if study not in present:
            raise ValueError(f"--studies: {study} has no section in the config; the config's studies: "
                             f"{', '.join(present) or 'none'}")
    if not chosen:
        raise ValueError(f"--studies: no study to run; the studies: {', '.join(STUDIES)}")
    for study in STUDIES:
        if study not in chosen:
            config.pop(study, None)
    known = families()
    settings = base.get("analyses") or {}
    if analyses is None:
        analyses = [key for key in settings if "provo" in chosen or not known[key].provo]
        notes += [f"analyses.{key} left out: it reads the Provo study, not run"
                  for key in settings if key not in analyses]
    for key in analyses:
        if key not in known:
            raise ValueError(f"--analyses: unknown analysis {key!r}; the analyses: {', '.join(known)}")
        if known[key].provo and "provo" not in chosen:
            raise ValueError(f"--analyses: {key} reads the Provo study's tables; run it with --studies provo")
    config.pop("analyses", None)
    if analyses:
        config["analyses"] = {key: copy.deepcopy(settings.get(key) or {}) for key in analyses}
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit: {limit} is not a positive number of passages and inputs")
        if "provo" in config:
            _limit_provo(config["provo"], limit, notes)
        if "production" in config:
            current = config["production"].get("max_inputs")
            config["production"]["max_inputs"] = limit if current is None else min(current, limit)
    return config, notes


def snakemake_command(snakefile: Path, extra: list[str]) -> list[str]:
    """The argument list that runs the workflow of ``snakefile`` in the working directory, with
    Snakemake's arguments ``extra`` (a ``--profile``, ``--cores``, targets), in this interpreter.

    Parameters
    ----------
    snakefile : Path
        The workflow's Snakefile.
    extra : list of str
        Snakemake's own arguments.

    Returns
    -------
    list of str
        The command, one argument per item (never a shell string).
    """
    return [sys.executable, "-m", "snakemake", "-s", str(snakefile), *extra]


def write_config(folder: Path, config: dict, *, given: list[str], base: Path, snakemake: list[str]) -> Path:
    """Write ``config`` as the run folder's ``config.yaml``, headed by the command that wrote it,
    the config it started from and the Snakemake command that runs it.

    Parameters
    ----------
    folder : Path
        The run folder (created).
    config : dict
        The run's config (``compose``).
    given : list of str
        The ``varprobe run`` arguments.
    base : Path
        The config it started from.
    snakemake : list of str
        The Snakemake command run in the folder.

    Returns
    -------
    Path
        The file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.yaml"
    header = (f"# The config of this run, written by: varprobe run {shlex.join(given)}\n"
              f"# ({base} with that model, those studies and limits). Run here (rerun to resume) by:\n"
              f"# {shlex.join(snakemake)}\n")
    path.write_text(header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return path


def _given(args: argparse.Namespace) -> list[str]:
    """The options of ``varprobe run`` as given, for the config's header."""
    given = ["--model", args.model]
    for option in ("studies", "analyses", "limit", "out", "config"):
        if getattr(args, option) is not None:
            given += [f"--{option}", str(getattr(args, option))]
    return given


def _run(args: argparse.Namespace) -> None:
    workflow = root()
    model = parse_model(args.model, config_schema())
    base_file = Path(args.config).resolve() if args.config else workflow / "config.yaml"
    if not base_file.is_file():
        raise ValueError(f"--config {args.config}: no such file")
    base = yaml.safe_load(base_file.read_text())
    if not isinstance(base, dict):
        raise ValueError(f"--config {args.config}: not a YAML mapping of config keys")
    _anchored(base, base_file.parent)
    analyses = _split(args.analyses)
    if analyses == ["none"]:
        analyses = []
    config, notes = compose(base, model=model, studies=_split(args.studies), analyses=analyses,
                            limit=args.limit)
    for note in notes:
        print(f"varprobe: note: {note}", file=sys.stderr)
    folder = Path(args.out or Path("runs") / model["name"]).resolve()
    extra = list(args.snakemake_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    command = snakemake_command(workflow / "Snakefile", extra)
    write_config(folder, config, given=_given(args), base=base_file, snakemake=command)
    print(f"varprobe: running in {folder}: {shlex.join(command)}", file=sys.stderr, flush=True)
    # Its jobs call `varprobe` on PATH: this interpreter's, as scripts/launch.sh puts the venv's first.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    finished = subprocess.run(command, cwd=folder, env=env, check=False)
    if finished.returncode:
        raise SystemExit(finished.returncode)


def list_rows(what: str) -> list[tuple[str, str]]:
    """What ``varprobe list WHAT`` prints: (name, what it is) per entry of the registry.

    Parameters
    ----------
    what : str
        ``datasets``, ``analyses``, ``decodings`` or ``probes``.

    Returns
    -------
    list of (str, str)
        One row per entry, in the registry's order.
    """
    schema = config_schema()
    if what == "datasets":
        from varprobe.data import DATASETS

        rows = [("provo", "the next-word study's cloze norms (provo:, Ilia & Aziz 2024)")]
        for name, d in DATASETS.items():
            options = "; options " + ", ".join(f"{k}={v!r}" for k, v in d.options.items()) if d.options else ""
            rows.append((name, f"production task (production.datasets), split {d.default_split}, "
                               f"output language {d.output_language}{options}"))
        return rows
    if what == "analyses":
        from varprobe.families import families

        described = schema["properties"]["analyses"]["properties"]
        return [(key, f"{described.get(key, {}).get('description', '')} [family {f.name}"
                      f"{', reads the Provo study' if f.provo else ''}]")
                for key, f in families().items()]
    if what == "probes":
        from varprobe.probes import PROBES

        return [(name, f"needs {p.needs}" + (", once per n-gram order as NAME-n" if p.ordered else ""))
                for name, p in PROBES.items()]
    if what == "decodings":
        from dataclasses import fields

        from varprobe.sampling.decoding import ENUMERATION_KEYS, SAMPLING_KEYS, Decoding

        entry = schema["properties"]["provo"]["properties"]["decodings"]["items"]["properties"]
        rows = [(f"{f.name} (parameter)", f"{entry[f.name].get('description', entry[f.name].get('type', ''))}; "
                                          f"default {f.default}")
                for f in fields(Decoding) if f.name in entry and f.name != "name"]
        rows += [(f"{key} (provo only)", entry[key].get("description", entry[key].get("type", "")))
                 for key in entry if key in ENUMERATION_KEYS + SAMPLING_KEYS]
        config = yaml.safe_load((root() / "config.yaml").read_text())
        named = {}
        for section in STUDIES:
            defaults = schema["properties"][section]["properties"]["decodings"]["default"]
            for d in [*defaults, *((config.get(section) or {}).get("decodings") or [])]:
                named.setdefault(d["name"], {k: v for k, v in d.items() if k != "name"})
        rows += [(name, ", ".join(f"{k}={v}" for k, v in params.items()) or "every parameter at its default (ancestral sampling)")
                 for name, params in named.items()]
        return rows
    raise ValueError(f"nothing to list as {what!r}; list one of: {', '.join(LISTS)}")


LISTS = ("datasets", "analyses", "decodings", "probes")
"""What ``varprobe list`` lists."""


def _list(args: argparse.Namespace) -> None:
    rows = list_rows(args.what)
    width = max(len(name) for name, _ in rows)
    for name, text in rows:
        print(f"{name:<{width}}  {text}".rstrip())


def register(sub) -> None:
    """Add ``run`` and ``list`` to ``sub``.

    Parameters
    ----------
    sub : argparse subparsers
        The ``varprobe`` command's subcommands.

    Returns
    -------
    None
    """
    p = sub.add_parser(
        "run", help="run the studies on one model: varprobe run --model pretrained=ID [-- SNAKEMAKE_ARGS]",
        description="Run the workflow's studies on one model in a run folder of its own: the folder's "
                    "config.yaml is the workflow's default config with this model, these studies and "
                    "limits; arguments after -- go to Snakemake (e.g. --profile slurm, --cores 4).")
    p.add_argument("--model", required=True, metavar="KEY=VALUE,...",
                   help="pretrained=HUB_ID_OR_DIR or package=NAME,gguf_file=FILE, then any config key of a "
                        "model: name=, device=cuda, dtype=bfloat16, device_map=auto, gpus=N")
    p.add_argument("--studies", default=None, metavar="STUDY,...",
                   help=f"the studies to run, of {', '.join(STUDIES)} (default: the config's)")
    p.add_argument("--analyses", default=None, metavar="KEY,...",
                   help="the analyses to run, or none (default: the config's that the studies can run; "
                        "varprobe list analyses)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most N Provo passages and N inputs per production task")
    p.add_argument("--out", default=None, metavar="DIR", help="the run folder (default: runs/MODEL_NAME)")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="the config to start from (default: the workflow's config.yaml); its relative data "
                        "paths are read from its folder")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER, metavar="-- SNAKEMAKE_ARGS",
                   help="Snakemake's own arguments")
    p.set_defaults(run=_run)

    p = sub.add_parser("list", help="list the registered datasets, analyses, decodings or probes")
    p.add_argument("what", choices=LISTS)
    p.set_defaults(run=_list)
