"""Parse-time checks of the workflow config, beyond what its JSON schema can say.

The workflow (``workflow/rules/common.smk``) calls these before any target is built, so a bad
config fails ``snakemake --dry-run`` with one line per problem naming the key path and the bad
value. They read the config only (and, for models, the local file system): no network, no model.

* ``credential_problems``: no config value (nor ``$VARPROBE_DATA_MIRROR``) is a URL that carries
  a credential (``varprobe.credentials``): the run would write it wherever it writes the config.
  It runs before the schema, so that no other message repeats such a value.
* ``name_problems``: every list the workflow turns into a dict by name has unique names, and no
  name is one the result tables use for their own rows (``RESERVED_MODELS``,
  ``RESERVED_DECODINGS``).
* ``reference_problems``: every name a config entry refers to (a model's decodings, a dataset's
  models, a fine-tuning base, the production figures' decoding, an oracle-replacement figure's k,
  a figure context (checked against the corpus file's contexts, a ``context_id`` corpus's named by
  their id: ``figure_context_problems``) exists.
* ``dataset_problems``: every dataset a config entry names is one of ``varprobe.data.DATASETS``
  (the schema accepts any name; the error lists the known ones), and a task that brings its own
  file (``file:``/``datasets:``) is not named like one.
* ``analysis_problems``: every key of ``analyses`` is an analysis family's
  (``varprobe.families``).
* ``dataset_option_problems``: a production dataset entry's keys beyond the schema's are options
  of the dataset's record, of their defaults' types (the schema lists no dataset's options).
* ``user_data_problems``: a file a production task brings is there, of a known type, the
  pinned one (``sha256``) and has the columns its entry names.
* ``corpus_problems``: the cloze corpus (``provo.corpus``) names a form of its contexts, its file
  is readable as configured, and no model needs Provo itself.
* ``model_problems``: models the local file system shows to be unreachable, and samples files
  whose header names a column the reader does not know.
* ``draw_memory_problems``: an ``n_samples`` whose draws of one context cannot fit in the
  sampling job's ``mem_mb`` (``draw_memory``).
* ``job_value_problems``: schema-valid values that a job would refuse, or turn into a table that
  only looks complete: a split a registered dataset lacks (``split_problems``), more few-shot
  examples than their split holds (``few_shot_problems``), too few ``provo.resplits`` for the
  authors' protocol, an oracle size no Provo context fills, token-calibration bins the
  accumulator refuses or an ``rsd_ddof`` that leaves the RSD no degree of freedom.
* ``template_problems``: a prompt (a production dataset's, an API model's Provo prompt) that
  ``str.format`` cannot fill, or that lacks the input's placeholder.
* ``api_decoding_problems``, ``truncation_problems``: an API model's decoding that its endpoint
  cannot apply (a parameter it does not accept), and a production language whose token budget no
  tokenizer counts, on the config with its defaults.
* ``path_problems``: no path of ``PATH_KEYS`` holds a brace (a placeholder such as ``{HOME}``).
* ``threshold_problems``, ``figure_probe_problems``: miscalibration thresholds and figure probes
  the user gave for probes the config does not compute, or none left; the notes say what is
  dropped (defaults, ``DEPENDENT_DEFAULTS``, and a dataset's thresholds of probes it lacks).
* ``config_notes``: what the run does otherwise than the config reads (default thresholds
  dropped, shards capped at the units of work, a samples file's column read under its known
  name); ``varprobe.config_loading.validate_config`` returns them for the workflow to print.

``check_config`` raises one ``ConfigError`` naming all of them. They read a config without
changing it; reading the files, filling in the schema's defaults and running these checks in
order is ``varprobe.config_loading.validate_config``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from varprobe.run_plan import (
    RunPlan,
    computed_probes,
    evaluated_inputs,
    figure_probes,
    miscalibration_thresholds,
    production_shards,
    provo_shards,
)

RESERVED_MODELS = {"oracle": "the oracle control's row of the Provo summaries",
                   "human": "the human MLE's row of the Provo summaries (Table 1, Human)"}
"""Model names the tables use for their own rows, with the row each one names."""

RESERVED_DECODINGS = {
    "given": "the decoding of an external samples file",
    "control": "the oracle control's decoding",
    "biased": "the biased estimate's row (analyses.biased_estimator)",
}
"""Decoding names the tables use for their own rows, with the row each one names."""

NAMED_LISTS = (
    (("models",), RESERVED_MODELS),
    (("provo", "decodings"), RESERVED_DECODINGS),
    (("production", "decodings"), RESERVED_DECODINGS),
    (("production", "datasets"), {}),
)
"""The config lists of ``{name: ...}`` entries the workflow keys by name, with their reserved
names."""

VALUE_LISTS = (
    ("provo", "texts"),
    ("provo", "figure_contexts"),
)
"""Config lists of plain values where a repeated value would repeat (or merge) results; the
analysis families declare their own (``Family.value_lists``)."""


def value_lists() -> list[tuple]:
    """``VALUE_LISTS`` and every analysis family's, as config key paths."""
    from varprobe.families import families

    unique = dict.fromkeys(families().values())
    return [*VALUE_LISTS, *(("analyses", *path) for family in unique for path in family.value_lists)]


class ConfigError(ValueError):
    """A config that the workflow cannot run as written; the message names every culprit."""


def shortened(value: object, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters with ``...`` where it is longer."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def key_path(parts: Iterable) -> str:
    """``("models", 1, "name")`` -> ``models[1].name``: a config key as the user reads it."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(top level)"


def value_at(config: dict, path: tuple) -> object:
    """The value at key ``path`` of ``config``, or None where a key on the way is absent or
    null."""
    for key in path:
        if not isinstance(config, dict) or config.get(key) is None:
            return None
        config = config[key]
    return config


def _strings(value: object, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """``(key path, string)`` of every string held anywhere in ``value`` (mappings, lists)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, (*path, i))


def credential_problems(config: dict, environ: Mapping[str, str]) -> list[str]:
    """A line per config value, and for ``$VARPROBE_DATA_MIRROR`` in ``environ``, that is a URL
    carrying a credential (``varprobe.credentials.url_credentials``), naming the key and what
    it carries but not the value. An API model's ``base_url`` is pointed to ``api_key_env``."""
    from varprobe.credentials import url_credentials
    from varprobe.data.sources import MIRROR_ENV

    problems = []
    for path, value in _strings(config):
        found = url_credentials(value)
        if found is None:
            continue
        if len(path) == 4 and path[0] == "models" and path[2:] == ("api", "base_url"):
            name = config["models"][path[1]].get("name")
            problems.append(f"{key_path(path)}: model {name!r}: the URL holds {found}, which the run "
                            "would write into its results, the samples' metadata, the API cache and "
                            "the logs; remove it and give the key through api.api_key_env, the name "
                            "of the environment variable holding it (sent as a bearer token, never "
                            "written)")
        else:
            problems.append(f"{key_path(path)}: the URL holds {found}, which the run would write "
                            "into its results and logs; remove it (a key belongs in the environment)")
    found = url_credentials(environ.get(MIRROR_ENV, ""))
    if found is not None:
        problems.append(f"${MIRROR_ENV}: the URL holds {found}; the data mirror is a local folder")
    return problems


def _duplicates(values: list, path: tuple, what: str, field: str | None = None) -> list[str]:
    """A line per value that ``values`` (the list at ``path``) holds more than once, naming
    every place it appears (``path[i].field``)."""
    places = {}
    for i, value in enumerate(values):
        places.setdefault(repr(value), []).append(key_path((*path, i, *([field] if field else []))))
    return [
        f"{', '.join(where)}: {what} {value} is given {len(where)} times; each {what} must be unique"
        for value, where in places.items()
        if len(where) > 1
    ]


def name_problems(config: dict) -> list[str]:
    """Duplicate or reserved names in the named lists, and repeated values in the value lists
    (``NAMED_LISTS``, ``value_lists``)."""
    problems = []
    for path, reserved in NAMED_LISTS:
        names = [entry["name"] for entry in value_at(config, path) or []]
        problems += _duplicates(names, path, "name", "name")
        problems += [
            f"{key_path((*path, i, 'name'))}: {name!r} is reserved for {reserved[name]}; "
            f"reserved names here: {', '.join(reserved)}"
            for i, name in enumerate(names)
            if name in reserved
        ]
    for path in value_lists():
        values = value_at(config, path)
        if isinstance(values, list):
            problems += _duplicates(values, path, "value")
    for i, model in enumerate(config.get("models", [])):
        problems += _duplicates(model.get("decodings", []), ("models", i, "decodings"), "decoding")
    for i, dataset in enumerate(value_at(config, ("production", "datasets")) or []):
        problems += _duplicates(dataset.get("models", []), ("production", "datasets", i, "models"), "model")
    return problems


def _unknown(path: tuple, value: str, known: Iterable[str], what: str) -> str:
    names = ", ".join(dict.fromkeys(known)) or "none"
    return f"{key_path(path)}: {value!r} is not {what} (those are: {names})"


def _kind(model: dict) -> str:
    """The kind of a model entry (``ModelSpec.kind``)."""
    from varprobe.models.spec import ModelSpec

    return ModelSpec.from_config(model).kind


def reference_problems(config: dict) -> list[str]:
    """Names that a config entry refers to but that are not configured (or not of the right
    kind): a model's decodings, a dataset's models, a fine-tuning base, the production figures'
    decoding, the token-calibration corpus, an oracle-replacement figure's k, a figure context's
    passage."""
    from varprobe.models.backends import LOGITS

    provo = {d["name"] for d in value_at(config, ("provo", "decodings")) or []}
    production = [d["name"] for d in value_at(config, ("production", "decodings")) or []]
    plan = RunPlan.from_config(config)
    networks = plan.with_capability(LOGITS)
    problems = []
    for i, model in enumerate(config.get("models", [])):
        problems += [
            _unknown(("models", i, "decodings", j), d, sorted({*provo, *production}),
                     "a decoding of provo.decodings or production.decodings")
            for j, d in enumerate(model.get("decodings", [])) if d not in provo and d not in production
        ]
        base = (model.get("finetune") or {}).get("base")
        if base is not None and base not in networks:
            problems.append(_unknown(("models", i, "finetune", "base"), base, networks,
                                     "a configured pretrained or package model"))
    for i, dataset in enumerate(value_at(config, ("production", "datasets")) or []):
        runnable = plan.runnable_on(dataset["name"])
        problems += [
            _unknown(("production", "datasets", i, "models", j), m, runnable,
                     f"a configured model that can run on {dataset['name']!r}")
            for j, m in enumerate(dataset.get("models", [])) if m not in runnable
        ]
    figure_decoding = value_at(config, ("production", "figures", "decoding"))
    if figure_decoding is not None and figure_decoding not in production:
        problems.append(_unknown(("production", "figures", "decoding"), figure_decoding, production,
                                 "a decoding of production.decodings"))
    replacement = value_at(config, ("analyses", "oracle_replacement")) or {}
    for i, k in enumerate(replacement.get("figure_k", [])):
        if "k_percent" in replacement and k not in replacement["k_percent"]:
            problems.append(_unknown(("analyses", "oracle_replacement", "figure_k", i), k,
                                     map(repr, replacement["k_percent"]), "in k_percent"))
    if 100 not in replacement.get("k_percent", [100]):
        problems.append(f"{key_path(('analyses', 'oracle_replacement', 'k_percent'))}: "
                        f"{replacement['k_percent']} lacks 100, the oracles' histogram every k is matched against")
    problems += _corpus_problems(config)
    texts = value_at(config, ("provo", "texts"))
    for i, decoding in enumerate(value_at(config, ("provo", "decodings")) or []):
        chosen = decoding.get("texts") if isinstance(decoding, dict) else None
        if chosen and decoding.get("method") != "enumerate":
            problems.append(f"provo.decodings[{i}].texts: decoding {decoding.get('name')!r} is "
                            "sampled; texts restricts an enumerated decoding (method: enumerate) "
                            "only (a sampled one covers provo.texts, in provo.shards jobs)")
        if isinstance(decoding, dict) and "n_samples" in decoding and decoding.get("method") == "enumerate":
            problems.append(f"provo.decodings[{i}].n_samples: decoding {decoding.get('name')!r} is "
                            "enumerated; n_samples sets the draws of a sampled decoding only")
        outside = [t for t in chosen or [] if isinstance(texts, list) and t not in texts]
        if outside:
            problems.append(f"provo.decodings[{i}].texts: passages {outside} of decoding "
                            f"{decoding.get('name')!r} are not among provo.texts {texts}")
    return problems + figure_context_problems(config)


PASSAGE_POSITION = re.compile(r"^[0-9]+:[0-9]+$")
"""A figure context of Provo or of a passage-form corpus: ``passage:position``."""


def corpus_contexts(config: dict) -> dict[str, tuple[int, int]] | None:
    """The contexts of the configured corpus file by the name ``provo.figure_contexts`` gives
    them (``varprobe.data.cloze.context_names``), or None: Provo, a ``datasets:`` source, or a
    file that ``corpus_problems`` names as unreadable (its contexts are known when a job reads
    it)."""
    from varprobe.data.cloze import context_names, corpus_form
    from varprobe.data.user_files import file_problem

    corpus = value_at(config, ("provo", "corpus"))
    if not isinstance(corpus, dict) or "file" not in corpus:
        return None
    try:
        corpus_form(corpus.get("columns", {}))
    except ValueError:
        return None
    if file_problem(corpus, {f"columns.{role}": c for role, c in corpus["columns"].items()}):
        return None
    return context_names(corpus)


def decoding_contexts(config: dict) -> dict[str, int]:
    """The contexts of the corpus file that each Provo decoding covers: those of its ``texts``
    (an enumerated decoding's), else of ``provo.texts``; a ``context_id`` corpus's text is one
    context. Empty where the corpus is not read at parse time (Provo, a ``datasets:`` source)."""
    names = corpus_contexts(config)
    if names is None:
        return {}
    keys = set(names.values())
    texts = config["provo"].get("texts", "all")
    counts = {}
    for decoding in config["provo"].get("decodings") or []:
        chosen = decoding.get("texts") or texts
        counts[decoding["name"]] = len(keys) if chosen == "all" else sum(t in chosen for t, _ in keys)
    return counts


def figure_context_keys(config: dict) -> list[str]:
    """``provo.figure_contexts`` as ``text_id:word_number`` keys of the contexts table: a
    ``context_id`` corpus's contexts are named by their id (``corpus_contexts``), the others
    are keys already."""
    items = value_at(config, ("provo", "figure_contexts")) or []
    names = corpus_contexts(config) if items else None
    if names is None:
        return list(items)
    return [":".join(map(str, names[item])) for item in items]


def figure_context_problems(config: dict) -> list[str]:
    """Figure contexts that name no context of the corpus file, or no ``passage:position``
    (Provo, a ``datasets:`` source), or whose passage is not among ``provo.texts``. Provo's
    positions are checked by the figure's job, which reads the norms."""
    items = value_at(config, ("provo", "figure_contexts")) or []
    texts = value_at(config, ("provo", "texts"))
    try:
        names = corpus_contexts(config) if items else None
    except (OSError, ValueError) as err:
        return [f"provo.corpus.file: {err} (read to check provo.figure_contexts)"]
    problems, keys = [], {}
    context_ids = names is not None and "context_id" in config["provo"]["corpus"]["columns"]
    for i, item in enumerate(items):
        at = key_path(("provo", "figure_contexts", i))
        if names is not None and item not in names:
            known = ", ".join(map(repr, list(names)[:5])) + (", ..." if len(names) > 5 else "")
            how = ("by its context_id as the corpus file gives it" if context_ids else
                   "as passage:position, the passage's number as provo.texts has it")
            problems.append(f"{at}: {item!r} is no context of corpus {config['provo']['corpus']['name']!r}; "
                            f"name one {how} (its contexts: {known})")
        elif names is None and not PASSAGE_POSITION.match(item):
            problems.append(f"{at}: {item!r} is not passage:position (e.g. '1:5')")
        else:
            keys[i] = names[item] if names is not None else tuple(map(int, item.split(":")))
    problems += [f"{key_path(('provo', 'figure_contexts', i))}: {items[i]!r} is in "
                 f"{'context' if context_ids else 'passage'} {text_id}, which is not among provo.texts {texts}"
                 for i, (text_id, _) in keys.items() if isinstance(texts, list) and text_id not in texts]
    return problems


def _unconfigured_dataset(config: dict, path: tuple, dataset: str, role: str) -> list[str]:
    """The dataset named at ``path`` where it is a known production dataset that is not among
    ``production.datasets`` (``role``: what it is there for); an unknown one is
    ``dataset_problems``' to name."""
    from varprobe.data import DATASETS

    configured = [d.get("name") for d in value_at(config, ("production", "datasets")) or []]
    if dataset in DATASETS and dataset not in configured:
        return [_unknown(path, dataset, configured, f"among production.datasets, {role}")]
    return []


def _corpus_problems(config: dict) -> list[str]:
    """The token-calibration corpus where it is not configured: ``provo`` without a ``provo:``
    section, or a production dataset that is not among ``production.datasets``."""
    corpus = value_at(config, ("analyses", "token_calibration", "corpus"))
    if corpus == "provo" and "provo" not in config:
        return ["analyses.token_calibration.corpus: 'provo' needs the Provo study, and the config has no "
                "`provo:` section"]
    dataset = corpus.get("dataset") if isinstance(corpus, dict) else None
    return _unconfigured_dataset(config, ("analyses", "token_calibration", "corpus", "dataset"), dataset,
                                 "whose references are the corpus")


def dataset_problems(config: dict) -> list[str]:
    """Dataset names that are not in ``varprobe.data.DATASETS``: a production dataset's name, the
    token-calibration corpus's dataset, a fine-tuning's dataset (which may also be ``provo``)."""
    from varprobe.data import DATASETS
    from varprobe.data.user_task import is_user_task

    entries = list(enumerate(value_at(config, ("production", "datasets")) or []))
    named = [(("production", "datasets", i, "name"), entry.get("name"), DATASETS)
             for i, entry in entries if not is_user_task(entry)]
    problems = [f"{key_path(('production', 'datasets', i, 'name'))}: {entry['name']!r} is a registered "
                "dataset; give your own task another name" for i, entry in entries
                if is_user_task(entry) and entry.get("name") in DATASETS]
    problems += [f"{key_path(('production', 'datasets', i))}: give `file:` or `datasets:`, not both"
                 for i, entry in entries if "file" in entry and "datasets" in entry]
    problems += [f"{key_path(('production', 'datasets', i, key))}: only your own task (`file:` or "
                 f"`datasets:`) has {key}; {entry.get('name')!r} is a registered dataset"
                 for i, entry in entries if not is_user_task(entry)
                 for key in ("fields", "min_references", "sha256") if key in entry]
    corpus = value_at(config, ("analyses", "token_calibration", "corpus"))
    if isinstance(corpus, dict):
        named.append((("analyses", "token_calibration", "corpus", "dataset"), corpus.get("dataset"),
                      DATASETS))
    named += [(("models", i, "finetune", "dataset"), model["finetune"].get("dataset"), ["provo", *DATASETS])
              for i, model in enumerate(config.get("models", [])) if _kind(model) == "fine-tuned"]
    own = "; or your own task: give its entry `file:` or `datasets:` (docs/own-data.md)"
    return problems + [_unknown(path, name, known, "provo or a production dataset" if "provo" in known
                                else "a production dataset") + (own if path[0] == "production" else "")
                       for path, name, known in named if name not in known]


def user_data_problems(config: dict) -> list[str]:
    """The files that production tasks bring (``file:``) and that cannot be read as configured:
    missing, of an unknown type, not the pinned one (``sha256``), or without a column the entry
    names (``data/user_files.py: file_problem``; the rows are checked when a job reads them)."""
    from varprobe.data.user_files import file_problem
    from varprobe.data.user_task import wanted_columns

    found = [(i, file_problem(entry, wanted_columns(entry)))
             for i, entry in enumerate(value_at(config, ("production", "datasets")) or []) if "file" in entry]
    return [f"{key_path(('production', 'datasets', i, 'file'))}: {problem}" for i, problem in found if problem]


def corpus_problems(config: dict) -> list[str]:
    """What stops the configured cloze corpus (``provo.corpus``, ``varprobe.data.cloze``): its
    ``columns`` name no form of a context, its file cannot be read as configured
    (``user_data_problems``' checks), or a model needs Provo itself (a samples file of Provo
    contexts, a fine-tuning on Provo's passages)."""
    from varprobe.data.cloze import corpus_form
    from varprobe.data.user_files import file_problem

    corpus = value_at(config, ("provo", "corpus"))
    if not isinstance(corpus, dict):
        return []
    at = key_path(("provo", "corpus"))
    try:
        corpus_form(corpus.get("columns", {}))
    except ValueError as err:
        return [f"{at}.{err}"]
    problems = []
    problem = file_problem(corpus, {f"columns.{role}": c for role, c in corpus["columns"].items()})
    if problem:
        problems.append(f"{at}.file: {problem}")
    for i, model in enumerate(config.get("models", [])):
        kind = _kind(model)
        if kind == "samples" or (kind == "fine-tuned" and model["finetune"].get("dataset") == "provo"):
            problems.append(f"{key_path(('models', i))}: model {model['name']!r} "
                            f"({'a samples file of Provo contexts' if kind == 'samples' else 'fine-tuned on Provo passages'}) "
                            f"needs the Provo corpus, and the next-word study reads corpus {corpus.get('name')!r}")
    return problems


def dataset_option_problems(config: dict, entry_keys: Iterable[str]) -> list[str]:
    """Keys of a production dataset entry that are neither ``entry_keys`` (the schema's) nor an
    option of the dataset's record (``Dataset.options``), and options whose value is not of
    their default's type."""
    from varprobe.data import DATASETS

    problems = []
    for i, entry in enumerate(value_at(config, ("production", "datasets")) or []):
        record = DATASETS.get(entry.get("name"))
        if record is None:
            continue  # named by dataset_problems
        for key in sorted(set(entry) - set(entry_keys)):
            path = key_path(("production", "datasets", i, key))
            if key not in record.options:
                problems.append(f"{path}: not a key of a dataset entry nor an option of dataset "
                                f"{record.name!r} (its options: {', '.join(record.options) or 'none'})")
            elif type(entry[key]) is not type(record.options[key]):
                problems.append(f"{path}: {shortened(entry[key])} is not a "
                                f"{type(record.options[key]).__name__} like its default "
                                f"{record.options[key]!r}")
    return problems


def finetune_problems(config: dict) -> list[str]:
    """Fine-tuned models (``finetune:``) that cannot be trained or evaluated as configured
    (``_provo_finetune_problems``, ``_production_finetune_problems``)."""
    problems = []
    for i, model in enumerate(config.get("models", [])):
        tune = model.get("finetune")
        if isinstance(tune, dict) and _kind(model) == "fine-tuned":
            check = _provo_finetune_problems if tune.get("dataset") == "provo" else _production_finetune_problems
            problems += check(config, ("models", i, "finetune"), model["name"], tune)
    return problems


def _no_study(at: str, name: str, dataset: str, study: str) -> str:
    return (f"{at}.dataset: model {name!r} is fine-tuned on {dataset!r} but the config has no "
            f"`{study}:` section to evaluate it in")


def _provo_finetune_problems(config: dict, path: tuple, name: str, tune: dict) -> list[str]:
    """A Provo fine-tuning needs the ``provo:`` section, at least ``folds`` training passages
    (Ilia & Aziz 2024, App. F: passages 1-40 in 4 contiguous folds), one of them among
    ``provo.texts`` (each fold's model samples the contexts it holds out), passage spans that
    run forward, and no passage both a training and a validation one (the job refuses it)."""
    from varprobe.data.provo import N_PASSAGES

    at = key_path(path)
    problems = [] if "provo" in config else [_no_study(at, name, "provo", "provo")]
    spans = {key: tune[key] for key in ("train_passages", "validation_passages") if tune.get(key)}
    backward = [key for key, span in spans.items() if span["first"] > span["last"]]
    problems += [f"{at}.{key}: first {spans[key]['first']} is after last {spans[key]['last']}: the span holds "
                 "no passage; give first <= last" for key in backward]
    if len(spans) == 2 and not backward:
        train, validation = (set(range(s["first"], s["last"] + 1)) for s in spans.values())
        shared = sorted(train & validation)
        if shared:
            problems.append(f"{at}.validation_passages: passages {shared[0]}-{shared[-1]} are also "
                            f"training passages (train_passages {spans['train_passages']['first']}-"
                            f"{spans['train_passages']['last']}); the validation loss needs passages "
                            "the model is not trained on")
    span = None if "train_passages" in backward else tune.get("train_passages")
    folds, texts = tune.get("folds"), value_at(config, ("provo", "texts"))
    if span and folds and span["last"] - span["first"] + 1 < folds:
        problems.append(f"{at}.train_passages: passages {span['first']}-{span['last']} cannot be cut "
                        f"into {folds} folds (finetune.folds): a fold holds at least one passage")
    passages = range(1, N_PASSAGES + 1) if texts == "all" else texts
    if span and passages and not set(passages) & set(range(span["first"], span["last"] + 1)):
        problems.append(f"{at}.train_passages: no passage of provo.texts {texts} is among passages "
                        f"{span['first']}-{span['last']}, so no fold holds one out and model {name!r} "
                        "has no contexts to sample")
    return problems


def _production_finetune_problems(config: dict, path: tuple, name: str, tune: dict) -> list[str]:
    """A production fine-tuning needs the ``production:`` section with its dataset among
    ``production.datasets``, and a training ``split``. A dataset that is not a known one at all
    is ``dataset_problems``' to name."""
    from varprobe.data import DATASETS

    dataset, at = tune.get("dataset"), key_path(path)
    if dataset not in DATASETS:
        return []
    if "production" not in config:
        problems = [_no_study(at, name, dataset, "production")]
    else:
        problems = _unconfigured_dataset(config, (*path, "dataset"), dataset, "where the model is evaluated")
    if not tune.get("split"):
        problems.append(f"{at}.split: model {name!r} is fine-tuned on {dataset!r}, which needs the split "
                        "it trains on (e.g. the dataset's train split)")
    return problems


def analysis_problems(config: dict) -> list[str]:
    """Keys of ``analyses`` that no analysis family answers to (``varprobe.families``),
    and families that read the Provo study's tables (``Family.provo``) in a config without a
    ``provo:`` section."""
    from varprobe.families import families

    known = families()
    problems = []
    for key in config.get("analyses") or {}:
        if key not in known:
            problems.append(_unknown(("analyses",), key, known, "an analysis family"))
        elif known[key].provo and "provo" not in config:
            problems.append(f"analyses.{key}: it analyses the Provo study's tables, and the config has no "
                            f"`provo:` section; add one, or remove analyses.{key}")
    return problems


TEMPLATES = (
    (("production", "datasets"), ("prompt",), ("source",), ("source",)),
    (("models",), ("api", "provo", "prompt"), ("context", "n"), ("context",)),
)
"""The config strings that ``str.format`` fills in: the list they are in, the key path in each
entry, the placeholders it may hold and those it must hold. A production dataset's prompt also
prompts its fine-tuned models (``finetune.smk``); the chat template is a switch, not a string."""


def template_problem(template: str, allowed: Iterable[str], required: Iterable[str]) -> str | None:
    """Why ``str.format`` cannot fill ``template`` with ``allowed`` placeholders, or leaves out
    one of ``required`` (every input would get the same text), or None. A brace that is no
    placeholder (``{text}``, JSON) is the usual culprit: the message says how to write one."""
    from string import Formatter

    literal = "write a literal brace as {{ or }}"
    try:
        fields = [f for _, f, _, _ in Formatter().parse(template) if f is not None]
    except ValueError as err:
        return f"{shortened(template)} is not a template: {err}; {literal}"
    names = ", ".join(f"{{{a}}}" for a in allowed)
    unknown = [f for f in fields if f not in allowed]
    if unknown:
        return (f"{shortened(template)} has placeholder {{{unknown[0]}}}; the only placeholders are "
                f"{names}; {literal}")
    try:
        template.format(**dict.fromkeys(allowed, ""))
    except (ValueError, KeyError, IndexError, AttributeError) as err:  # a field in a format spec
        return f"{shortened(template)} is not a template: {err!r}; {literal}"
    missing = [r for r in required if r not in fields]
    if missing:
        return (f"{shortened(template)} has no {{{missing[0]}}}: every input would get the same "
                f"prompt; put {{{missing[0]}}} where the input goes")
    return None


def template_problems(config: dict) -> list[str]:
    """Every templated config string (``TEMPLATES``) that cannot be filled in as the jobs fill it
    (``template_problem``), named by its key path."""
    problems = []
    for path, key, allowed, required in TEMPLATES:
        for i, entry in enumerate(value_at(config, path) or []):
            template = value_at(entry, key)
            if isinstance(template, str):
                problem = template_problem(template, allowed, required)
                if problem:
                    problems.append(f"{key_path((*path, i, *key))}: {problem}")
    return problems


DRAW_BYTES = 600
"""A lower bound of the memory one draw holds in a sampling job besides its token stream: its
seed (a child ``SeedSequence``), its generator's state while its uniforms are drawn, and its
record (measured with ``tracemalloc``: about 700 bytes a draw at 20 tokens, of which 160 are the
uniforms)."""


def draw_memory(n_samples: int, max_tokens: int) -> int:
    """Bytes that the ``n_samples`` draws of one context (or input) hold at once, at least:
    ``n_samples * (DRAW_BYTES + 8 * max_tokens)`` (a float64 uniform per token). A job holds
    one context's draws at the least, whatever its batch size."""
    return n_samples * (DRAW_BYTES + 8 * max_tokens)


DRAWN = (
    (("provo",), "max_tokens", "provo_sample", "context"),
    (("production",), "max_new_tokens", "production_sample", "input"),
)
"""The sampled studies: their section, the key of a draw's token budget, the sampling rule and
what a draw is drawn for."""


def draw_memory_problems(config: dict) -> list[str]:
    """``n_samples`` settings (a study's, a decoding's) whose draws of one context (or input) need more
    memory than the sampling job has (``resources``' ``mem_mb`` of its rule, first attempt):
    the job would die in a ``MemoryError`` after the dry run passed."""
    problems = []
    for section, budget, rule, unit in DRAWN:
        study = value_at(config, section)
        if not isinstance(study, dict) or "n_samples" not in study:
            continue
        resources = config.get("resources", {})
        mem_mb = {**resources.get("default", {}), **resources.get(rule, {})}.get("mem_mb")
        if mem_mb is None:
            continue
        settings = [((*section, "n_samples"), study["n_samples"])]
        settings += [((*section, "decodings", i, "n_samples"), d["n_samples"])
                     for i, d in enumerate(study.get("decodings") or []) if isinstance(d, dict) and "n_samples" in d]
        for path, n in settings:
            need = draw_memory(n, study.get(budget, 1))
            if need > mem_mb * 2**20:
                problems.append(f"{key_path(path)}: {n:,} draws per {unit} need at least {need / 2**30:,.1f} GiB "
                                f"in one {rule} job ({DRAW_BYTES} bytes and 8 per token of {key_path((*section, budget))} "
                                f"a draw), more than its resources.{rule}.mem_mb {mem_mb:,} MB; lower it, or raise mem_mb")
    return problems


def _entries(config: dict) -> Iterator[tuple[int, dict, object]]:
    """``(index, entry, record)`` of every ``production.datasets`` entry of a registered dataset
    (``varprobe.data.DATASETS``); a task's own data and an unknown name (``dataset_problems``)
    are left out."""
    from varprobe.data import DATASETS
    from varprobe.data.user_task import is_user_task

    for i, entry in enumerate(value_at(config, ("production", "datasets")) or []):
        if isinstance(entry, dict) and entry.get("name") in DATASETS and not is_user_task(entry):
            yield i, entry, DATASETS[entry["name"]]


def split_problems(config: dict) -> list[str]:
    """Splits that a registered dataset does not have (``Dataset.splits``): a production dataset
    entry's ``split`` and ``few_shot_split``, a production fine-tuning's ``split`` and
    ``validation_split``, each named with the dataset's splits. The workflow would look for raw
    files that no source holds and fail in an input function that names no key."""
    from varprobe.data import DATASETS

    named = [(("production", "datasets", i, key), record, entry[key])
             for i, entry, record in _entries(config)
             for key in ("split", "few_shot_split") if entry.get(key) is not None]
    named += [(("models", i, "finetune", key), DATASETS[tune["dataset"]], tune[key])
              for i, model in enumerate(config.get("models", []))
              for tune in [model.get("finetune")] if isinstance(tune, dict) and tune.get("dataset") in DATASETS
              for key in ("split", "validation_split") if tune.get(key) is not None]
    return [f"{key_path(path)}: {split!r} is not a split of dataset {record.name!r} (its splits: "
            f"{', '.join(record.splits)})"
            for path, record, split in named if split not in record.splits]


def few_shot_problems(config: dict) -> list[str]:
    """``few_shot`` settings that ask for more examples than their split can give: its inputs
    (``Dataset.splits``, where the record fixes their number), less the evaluated ones where the
    examples come from the evaluated split (an input is never its own example). The job would
    fail once the raw files are fetched; a split whose size an option decides is left to it."""
    problems = []
    for i, entry, record in _entries(config):
        split = entry.get("split", record.default_split)
        examples = entry.get("few_shot_split", split)
        size = record.splits.get(examples)
        if "few_shot" not in entry or size is None:
            continue
        evaluated = evaluated_inputs(config, entry, size) if examples == split else 0
        limit = size - evaluated
        if entry["few_shot"] <= limit:
            continue
        message = (f"{key_path(('production', 'datasets', i, 'few_shot'))}: {entry['few_shot']:,} examples "
                   f"asked, but split {examples!r} of dataset {record.name!r} has {size:,} inputs")
        if evaluated:
            others = [s for s in record.splits if s != split]
            message += (f", {evaluated:,} of them evaluated (max_inputs), which are never examples: at most "
                        f"{limit:,}; lower few_shot, cap max_inputs, or draw the examples from another "
                        f"split (few_shot_split: {' or '.join(others) or 'none'})")
        else:
            message += f": at most {limit:,}; lower few_shot"
        problems.append(message)
    return problems


def resplit_problems(config: dict) -> list[str]:
    """``provo.resplits`` too few for the authors' protocol table, which every run on Provo
    builds (``provo_authors``): its one-split oracle values are those of split ``SINGLE_SPLIT``
    (0-based; ``varprobe.analysis.authors_protocol``)."""
    from varprobe.analysis.authors_protocol import SINGLE_SPLIT

    provo = config.get("provo")
    if not isinstance(provo, dict) or provo.get("corpus") is not None:
        return []
    resplits = provo.get("resplits", SINGLE_SPLIT + 1)
    if resplits > SINGLE_SPLIT:
        return []
    return [f"provo.resplits: {resplits} is too few for the authors' protocol table (rule provo_authors, "
            f"built on Provo), whose single-split oracle values are those of resplit {SINGLE_SPLIT + 1}; "
            f"give at least {SINGLE_SPLIT + 1} (the paper averages 20)"]


def oracle_size_problems(config: dict) -> list[str]:
    """Oracle sizes of ``analyses.oracle_replacement`` that no Provo context can fill: two
    disjoint oracles of s responses need 2s, and none has more than ``MOST_RESPONSES``. Every
    context would be skipped at that size, and the tables would lack it without a word. (On a
    cloze corpus, ``varprobe.availability`` reads the responses.)"""
    from varprobe.data.provo import MOST_RESPONSES

    sizes = value_at(config, ("analyses", "oracle_replacement", "oracle_sizes"))
    if not isinstance(config.get("provo"), dict) or config["provo"].get("corpus") is not None or not sizes:
        return []
    return [f"{key_path(('analyses', 'oracle_replacement', 'oracle_sizes', i))}: two disjoint oracles of "
            f"{size} responses need a context with {2 * size}, and no Provo context has more than "
            f"{MOST_RESPONSES}; give at most {MOST_RESPONSES // 2}, or half"
            for i, size in enumerate(sizes) if isinstance(size, int) and 2 * size > MOST_RESPONSES]


TOKEN_CALIBRATION = ("analyses", "token_calibration")


def calibration_bin_counts(settings: Mapping) -> list[int]:
    """The numbers of bins the token-calibration job computes: ``rsd_bins`` and ``bins``."""
    return sorted({*settings["rsd_bins"], settings["bins"]})


def bin_problems(config: dict) -> list[str]:
    """Token-calibration bins whose least common multiple reaches the accumulator's bound
    (``metrics.token_calibration.MAX_RESOLUTION``, the job's error), and an ``rsd_ddof`` that
    leaves the RSD over ``rsd_bins`` no degree of freedom (every RSD NaN)."""
    import math

    from varprobe.metrics.token_calibration import MAX_RESOLUTION

    settings = value_at(config, TOKEN_CALIBRATION)
    if not isinstance(settings, dict) or not {"bins", "rsd_bins", "rsd_ddof"} <= set(settings):
        return []
    problems = []
    bins = calibration_bin_counts(settings)
    if math.lcm(*bins) >= MAX_RESOLUTION:
        problems.append(f"{key_path((*TOKEN_CALIBRATION, 'rsd_bins'))}: the numbers of bins {bins} (with bins) "
                        f"have least common multiple {math.lcm(*bins):,}, the accumulator's fine bins; it must "
                        f"be below {MAX_RESOLUTION:,}: give numbers with common factors (e.g. the paper's "
                        "5, 10, 20, 50, 100, 200, 500)")
    values = len(set(settings["rsd_bins"]))
    if settings["rsd_ddof"] >= values:
        problems.append(f"{key_path((*TOKEN_CALIBRATION, 'rsd_ddof'))}: {settings['rsd_ddof']} leaves the "
                        f"standard deviation over the {values} numbers of rsd_bins no degree of freedom "
                        f"(every RSD would be NaN); give less than {values}, or more rsd_bins")
    return problems


def job_value_problems(config: dict) -> list[str]:
    """Schema-valid values that a job would refuse, or turn into a result that only looks
    complete, checked here instead against what the job requires of them: splits, few-shot
    examples, resplits, oracle sizes, token-calibration bins."""
    return [*split_problems(config), *few_shot_problems(config), *resplit_problems(config),
            *oracle_size_problems(config), *bin_problems(config)]


PATH_KEYS = (
    ("data_mirror",),
    ("api_cache",),
    ("models", "*", "pretrained"),
    ("models", "*", "gguf_file"),
    ("models", "*", "samples"),
    ("provo", "corpus", "file"),
    ("provo", "corpus", "datasets", "path"),
    ("production", "datasets", "*", "file"),
    ("production", "datasets", "*", "datasets", "path"),
    ("production", "datasets", "*", "data_mirror"),
    ("production", "probes", "spacy_pipelines", "*"),
    ("production", "probes", "sentence_encoders", "*"),
    ("production", "probes", "truncation_tokenizers", "*"),
    ("analyses", "syntactic_tvd", "nltk_data", "*"),
    ("analyses", "semantic_tvd", "embeddings", "path"),
)
"""The config keys that hold a path (or a hub id, which may be one); ``*`` is any list index or
mapping key."""


def _is_path_key(path: tuple) -> bool:
    return any(len(path) == len(key) and all(k in ("*", p) for k, p in zip(key, path)) for key in PATH_KEYS)


def path_problems(config: dict) -> list[str]:
    """A line per value of ``PATH_KEYS`` that holds a brace. A path is taken as written: varprobe
    expands no placeholder (``{HOME}``), and Snakemake would read the braces of an input path as
    a wildcard; so a path with braces is refused, naming the key and the value, rather than
    taken literally (a folder named ``{HOME}``, most likely a mistake)."""
    return [f"{key_path(path)}: value {shortened(value)} holds a brace: a path is taken as written "
            "(no {placeholder} is filled in, and the workflow would read braces as wildcards); "
            "give the path itself"
            for path, value in _strings(config) if _is_path_key(path) and ("{" in value or "}" in value)]


def model_problems(config: dict) -> list[str]:
    """The models the local file system already shows to be unreachable (``ModelSpec.
    local_problem``: a package not installed, a gguf_file absent, a missing or empty local
    directory, a samples file not found), each named by its entry. Hub ids are checked at the
    start of a run, where the network is."""
    from varprobe.models.spec import ModelSpec

    found = [
        (i, ModelSpec.from_config(entry).local_problem() or _header_problem(entry))
        for i, entry in enumerate(config.get("models", []))
    ]
    return [f"models[{i}]: {problem}" for i, problem in found if problem]


def api_decoding_problems(config: dict) -> list[str]:
    """A line per API model and decoding of its studies that its endpoint cannot apply
    (``varprobe.api.bodies.decoding_fields``: a parameter the endpoint does not accept), which
    would otherwise be sent without it and so silently changed; of a config with the schema's
    defaults filled in."""
    from varprobe.api.bodies import decoding_fields
    from varprobe.api.endpoint import ApiEndpoint
    from varprobe.models.backends import ENDPOINT
    from varprobe.sampling.decoding import Decoding

    plan = RunPlan.from_config(config)
    api = set(plan.with_capability(ENDPOINT))
    if not api:
        return []
    runs = [(m, plan.provo_decodings[d]) for m, d in plan.provo_systems() if m in api]
    runs += [(m, plan.production_decodings[d]) for _, m, d in plan.production_systems() if m in api]
    problems = []
    for model, decoding in runs:
        try:
            decoding_fields(ApiEndpoint.from_config(model, plan.models[model].entry["api"]), Decoding.from_config(decoding))
        except ValueError as err:
            problems.append(f"{err}; leave the decoding out with the model's `decodings:` list")
    return list(dict.fromkeys(problems))


def truncation_problems(config: dict) -> list[str]:
    """A line per output language of the production datasets whose probed texts have a token
    budget and no tokenizer to count it (``RunPlan.truncation_problem``), of a config with the
    schema's defaults filled in."""
    if "production" not in config:
        return []
    plan = RunPlan.from_config(config)
    found = (plan.truncation_problem(plan.dataset_setting(d, "language")) for d in plan.datasets)
    return list(dict.fromkeys(p for p in found if p))


def _header_problem(entry: dict) -> str | None:
    """Why a samples file's header cannot be read (an unknown or missing column), or None."""
    from varprobe.sampling.external import header_warnings

    if "samples" not in entry:
        return None
    try:
        header_warnings(entry["samples"])
    except ValueError as err:
        return f"model {entry['name']!r}: {err}"
    return None


LANGUAGE_MAPS = ("spacy_pipelines", "sentence_encoders", "truncation_tokenizers")
"""The keys of ``production.probes`` that map a language code to a resource."""


def known_languages(config: dict) -> list[str]:
    """The languages a production task may be in: those ``production.probes`` names a resource
    (or null) for in one of ``LANGUAGE_MAPS``."""
    probes = value_at(config, ("production", "probes")) or {}
    return sorted({code for key in LANGUAGE_MAPS for code in probes.get(key) or {}})


def language_problems(config: dict) -> list[str]:
    """Production datasets whose ``language`` is none of ``known_languages``: its probes would
    have no entry to read (a task would lose them without a word, or fail in a job)."""
    known = known_languages(config)
    return [
        f"{key_path(('production', 'datasets', i, 'language'))}: {entry['language']!r} is no language "
        f"of production.probes (known: {', '.join(known)}); give one of them, or add "
        f"{entry['language']!r} to production.probes.spacy_pipelines and sentence_encoders "
        "(null where there is none)"
        for i, entry in enumerate(value_at(config, ("production", "datasets")) or [])
        if known and "language" in entry and entry["language"] not in known
    ]


THRESHOLDS = ("production", "miscalibration", "thresholds")


def threshold_problems(config: dict, given: bool) -> list[str]:
    """Thresholds that name a probe no dataset computes, where the user ``given`` them (the
    schema's defaults are dropped instead, as a dataset drops those of probes it alone lacks:
    ``threshold_notes``), and datasets left with no threshold at all (every input would count
    as miscalibrated)."""
    from varprobe.data import DATASETS

    thresholds = value_at(config, THRESHOLDS)
    if thresholds is None:
        return []
    datasets = [d for d in value_at(config, ("production", "datasets")) or [] if d.get("name") in DATASETS]
    computed = {d["name"]: computed_probes(config, d) for d in datasets}  # unknown names: dataset_problems
    anywhere = list(dict.fromkeys(p for probes in computed.values() for p in probes))
    problems = [
        f"{key_path((*THRESHOLDS, p))}: probe {p!r} is not computed for any dataset (computed: "
        f"{', '.join(anywhere)}); remove the threshold, or turn the probe on (production.probes)"
        for p in thresholds if given and datasets and p not in anywhere
    ]
    problems += [
        f"{key_path(THRESHOLDS)}: no threshold ({', '.join(thresholds) or 'none'}) is for a probe "
        f"computed for dataset {name!r}; give thresholds for some of its probes: {', '.join(probes)}"
        for name, probes in computed.items() if not set(thresholds) & set(probes)
    ]
    return problems


def threshold_notes(config: dict) -> list[str]:
    """A line per dataset that drops thresholds because it does not compute their probes (no
    tagger or encoder for its language, or an n-gram order not configured)."""
    thresholds = value_at(config, THRESHOLDS) or {}
    notes = []
    for dataset in value_at(config, ("production", "datasets")) or []:
        kept = miscalibration_thresholds(config, dataset)
        off = [p for p in thresholds if p not in kept]
        if off:
            notes.append(f"{key_path(THRESHOLDS)}: {', '.join(off)} dropped for dataset "
                         f"{dataset['name']!r}, which does not compute those probes (production.probes); "
                         f"its miscalibrated inputs exceed {kept}")
    return notes


FIGURE_PROBES = ("production", "figures", "probes")


def figure_probe_problems(config: dict, given: bool) -> list[str]:
    """Figure probes the user ``given`` that the study does not compute (defaults are dropped
    instead: ``figure_probe_notes``), or none left to draw."""
    from varprobe.probes import probe_names

    probes = value_at(config, FIGURE_PROBES)
    if probes is None:
        return []
    study = probe_names(config["production"]["probes"]["ngram_orders"])
    if given:
        return [_unknown((*FIGURE_PROBES, i), p, study, "a probe of production.probes.ngram_orders")
                for i, p in enumerate(probes) if p not in study]
    if not figure_probes(config):
        return [f"{key_path(FIGURE_PROBES)}: none of the default figure probes ({', '.join(probes)}) is "
                f"computed; give some of {', '.join(study)}"]
    return []


def figure_probe_notes(config: dict) -> list[str]:
    """A line naming the default figure probes dropped because the study does not compute them."""
    probes = value_at(config, FIGURE_PROBES) or []
    off = [p for p in probes if p not in figure_probes(config)]
    return [f"{key_path(FIGURE_PROBES)}: default figure probes {', '.join(off)} dropped: not computed "
            "for production.probes.ngram_orders"] if off else []


def shard_notes(config: dict) -> list[str]:
    """A line per shards setting capped at the units of work, with the number that will run."""
    notes = []
    if "provo" in config and provo_shards(config) < config["provo"]["shards"]:
        notes.append(f"provo.shards: {config['provo']['shards']} is more than the configured "
                     f"passages (a shard holds whole passages): {provo_shards(config)} sampling "
                     "jobs per model x decoding will run")
    for dataset in value_at(config, ("production", "datasets")) or []:
        capped = production_shards(config, dataset)
        if capped < config["production"]["shards"]:
            notes.append(f"production.shards: {config['production']['shards']} is more than the "
                         f"{capped} inputs of dataset {dataset['name']!r} (max_inputs, its split's inputs): {capped} "
                         "generation jobs per model x decoding will run")
    return notes


def resource_notes(configured: Iterable[str], read: Iterable[str]) -> list[str]:
    """A line per ``resources`` entry but ``default`` that no rule of the run reads, with the
    closest name one does: an entry for a rule of a study or analysis not configured, or a
    misspelt one, changes no job.

    Parameters
    ----------
    configured : iterable of str
        The config's ``resources`` keys.
    read : iterable of str
        The entries the run's rules read (``RESOURCE_LOOKUPS`` of ``workflow/rules/common.smk``).
    """
    import difflib

    read = sorted(set(read))
    notes = []
    for name in configured:
        if name == "default" or name in read:
            continue
        close = difflib.get_close_matches(name, read, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        notes.append(f"resources.{name}: no rule of this run reads it{hint}; it applies only to "
                     "a run whose studies and analyses have a rule of that name")
    return notes


def config_notes(config: dict) -> list[str]:
    """What the run does otherwise than a schema-valid, checked config reads: default
    thresholds and figure probes dropped, shards capped (``shard_notes``), a samples file's
    columns read under their known names (``varprobe.sampling.external.header_warnings``)."""
    from varprobe.sampling.external import header_warnings

    headers = [f"models[{i}]: {line}" for i, entry in enumerate(config.get("models", []))
               if "samples" in entry for line in header_warnings(entry["samples"])]
    return [*threshold_notes(config), *figure_probe_notes(config), *shard_notes(config), *headers]


DEPENDENT_DEFAULTS = (THRESHOLDS, FIGURE_PROBES)
"""Config keys whose schema default names probes that other settings may turn off: a default is
resolved against the configured probes (what is off dropped, and said), a value the user gave is
checked against them."""


def check_config(config: dict, given: Iterable[tuple] = ()) -> None:
    """Raise ``ConfigError`` listing every name, reference, local model, threshold and figure
    probe problem of a schema-valid config; ``given``: the keys of ``DEPENDENT_DEFAULTS`` that
    the user set (the others hold the schema's defaults)."""
    problems = [*name_problems(config), *reference_problems(config), *dataset_problems(config),
                *user_data_problems(config), *corpus_problems(config),
                *finetune_problems(config), *analysis_problems(config), *model_problems(config),
                *template_problems(config), *draw_memory_problems(config), *job_value_problems(config),
                *language_problems(config), *path_problems(config)]
    given = set(given)
    if "production" in config and not problems:
        problems += [*threshold_problems(config, THRESHOLDS in given),
                     *figure_probe_problems(config, FIGURE_PROBES in given)]
    if problems:
        raise ConfigError(report(problems))


def report(problems: list[str]) -> str:
    """The message of a ``ConfigError``: one indented line per problem."""
    return "the config is invalid:\n" + "\n".join(f"  {p}" for p in problems)














