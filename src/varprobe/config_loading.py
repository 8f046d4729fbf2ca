"""Reading a run's config: the files Snakemake read, in the order they apply, merged into one
config, completed with the schema's defaults and handed to the checks (``varprobe.config_checks``).

``validate_config`` is what the workflow runs at parse time (``workflow/rules/common.smk``) and
``varprobe plan`` before its estimate:

* ``base_config_problem``: the base config (``BASE_CONFIG``) is among the files read;
* ``duplicate_keys``: no file gives a key twice in one mapping;
* ``credential_problems`` (a check): no value is a URL with a credential, before any message could
  quote it;
* ``switch_off``: a section of ``SWITCHABLE`` set to null is removed, as if absent;
* ``schema_errors``: the schema's complaints, one line each (key path, bad value, what is
  allowed), where ``snakemake.utils.validate`` fills in its defaults;
* ``normalise_languages``: language codes in lowercase;
* then the checks, and the notes of what the run does otherwise than the config reads.

``in_precedence`` orders the files read as they apply (the page shows them that way). These are
the only functions that change a config; the checks read it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from varprobe.config_checks import (
    DEPENDENT_DEFAULTS,
    LANGUAGE_MAPS,
    ConfigError,
    api_decoding_problems,
    check_config,
    config_notes,
    credential_problems,
    dataset_option_problems,
    key_path,
    report,
    shortened,
    truncation_problems,
    value_at,
)


def _allowed(error) -> str:
    """What the schema allows where ``error`` (a jsonschema ValidationError) failed: for a
    choice of forms, the schema's own ``allowed`` text where it has one."""
    keys = [option.get("required", [None])[0] for option in error.schema.get("oneOf", [])]
    if error.validator == "oneOf" and keys and all(keys):
        given = [k for k in keys if k in error.instance]
        return f"give exactly one of {', '.join(keys)} (got {', '.join(given) or 'none'})"
    if error.validator in ("oneOf", "anyOf") and "allowed" in error.schema:
        return f"allowed: {error.schema['allowed']}"
    if error.validator in ("oneOf", "anyOf"):
        if not error.context:
            return "it matches more than one of the allowed forms; keep one"
        reasons = dict.fromkeys(e.message for e in error.context if not e.path)
        return "allowed: " + " | ".join(reasons or dict.fromkeys(e.message for e in error.context))
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        return f"{error.message}; known keys: {', '.join(known)}"
    if error.validator == "enum":
        return "allowed: " + ", ".join(map(repr, error.validator_value))
    if error.validator == "not":
        banned = error.validator_value
        return f"not allowed: {shortened(banned.get('const', banned) if isinstance(banned, dict) else banned)}"
    return error.message.replace(repr(error.instance), "it", 1)


def schema_errors(config: dict, schema: dict) -> list[str]:
    """One line per schema error of ``config``: ``key.path: value <bad value>: <allowed>``,
    sorted by key path; empty when the config is valid."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema).iter_errors(config),
                    key=lambda e: list(map(str, e.absolute_path)))
    return [
        f"{key_path(e.absolute_path)}: value {shortened(e.instance)}: {_allowed(e)}"
        if e.validator not in ("additionalProperties", "required")
        else f"{key_path(e.absolute_path)}: {_allowed(e)}"
        for e in errors
    ]


def normalise_languages(config: dict) -> list[str]:
    """Write every language code of ``config`` in lowercase, in place: a production dataset's and
    the cloze corpus's ``language`` and the language keys of ``production.probes``'
    ``LANGUAGE_MAPS``, so that ``EN`` is ``en`` wherever a code is compared; a note per code
    that changed. Codes are matched without case (ISO 639-1 writes them in lowercase)."""
    notes = []

    def lower(mapping: dict, key: str, path: tuple) -> None:
        code = mapping.get(key)
        if isinstance(code, str) and code != code.strip().lower():
            mapping[key] = code.strip().lower()
            notes.append(f"{key_path(path)}: language {code!r} read as {mapping[key]!r}")

    for i, entry in enumerate(value_at(config, ("production", "datasets")) or []):
        lower(entry, "language", ("production", "datasets", i, "language"))
    corpus = value_at(config, ("provo", "corpus"))
    if isinstance(corpus, dict):
        lower(corpus, "language", ("provo", "corpus", "language"))
    probes = value_at(config, ("production", "probes")) or {}
    for key in LANGUAGE_MAPS:
        mapping = probes.get(key) or {}
        for code in list(mapping):
            if code != code.strip().lower():
                mapping[code.strip().lower()] = mapping.pop(code)
                notes.append(f"production.probes.{key}: language {code!r} read as {code.strip().lower()!r}")
    return notes


def duplicate_keys(path: str) -> list[str]:
    """A line per mapping key that the YAML file at ``path`` gives twice in one mapping (YAML
    loaders keep the last one without a word), with both line numbers."""
    import yaml

    found = []

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if key in seen:
                    where = f"line {line}" if seen[key] == line else f"lines {seen[key]} and {line}"
                    found.append(f"{path}, {where}: key {key!r} is given twice in one mapping "
                                 "(only the last would count); keep one")
                seen.setdefault(key, line)
            return super().construct_mapping(node, deep=deep)

    yaml.load(Path(path).read_text(), Loader=Loader)  # noqa: S506 (a SafeLoader subclass)
    return found


BASE_CONFIG = "config.yaml"
"""The Snakefile's ``configfile:``, read from the working directory; every file under
``configs/`` is an overlay on it."""


def base_config_problem(files: Iterable[str], workdir: Path) -> str | None:
    """Why the config files read (``workflow.configfiles``) lack the base config, or None.

    Snakemake drops a ``configfile:`` that is absent from the working directory without a word
    when ``--configfile`` names other files (a run with ``--directory`` elsewhere): the run would
    take the schema's defaults wherever ``config.yaml`` sets a key. A file of that name given on
    the command line counts as the base."""
    files = [str(f) for f in files]
    if any(Path(f).name == BASE_CONFIG for f in files):
        return None
    return (f"{BASE_CONFIG} was not read: it is not in the working directory {workdir}, and "
            f"--configfile named only overlays on it ({', '.join(files) or 'none'}). Run from the "
            f"checkout, copy {BASE_CONFIG} into the working directory, or give it first: "
            f"--configfile /path/to/{BASE_CONFIG} {' '.join(files)}")


def in_precedence(read: Iterable, command_line: Iterable) -> list[str]:
    """The config files Snakemake read (``workflow.configfiles``) in the order they apply, each
    over the ones before it: the Snakefile's ``configfile:`` first, then those of ``--configfile``
    (``workflow.overwrite_configfiles``) in their given order. Snakemake lists the command line's
    files first but applies them last, over the Snakefile's."""
    given = {Path(f).resolve() for f in command_line}
    files = [str(f) for f in read]
    return ([f for f in files if Path(f).resolve() not in given]
            + [f for f in files if Path(f).resolve() in given])


SWITCHABLE = ("provo", "production", "analyses")
"""The top-level sections an overlay config can switch off by setting them to null."""


def switch_off(config: dict) -> list[str]:
    """Remove from ``config`` each section of ``SWITCHABLE`` that is null (an overlay over
    config.yaml that runs one study alone: ``provo: null``), as if it were absent, and say which."""
    off = [key for key in SWITCHABLE if key in config and config[key] is None]
    for key in off:
        del config[key]
    return [f"{key}: null in the config: not run" for key in off]


def validate_config(config: dict, schema_path: str, files: Iterable[str]) -> list[str]:
    """Validate ``config`` (read from the YAML ``files``) against the schema at ``schema_path``,
    filling in the schema's defaults (``snakemake.utils.validate``), then ``check_config``, and
    return the ``config_notes`` for the console. A base config not read, a key given twice in a
    file, a credential in a URL, or a schema error, raises ``ConfigError`` with one line each (instead of silent
    defaults, a silent last-wins, or Snakemake's dump of the schema). A section of ``SWITCHABLE``
    set to null is removed first (``switch_off``); language codes are lowercased after the
    schema (``normalise_languages``)."""
    import yaml
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    files = list(files)
    off = switch_off(config)
    missing = base_config_problem(files, Path.cwd())
    if missing:
        raise ConfigError(report([missing]))
    twice = [line for path in files for line in duplicate_keys(path)]
    if twice:
        raise ConfigError(report(twice))
    credentials = credential_problems(config, os.environ)
    if credentials:
        raise ConfigError(report(credentials))
    schema = yaml.safe_load(Path(schema_path).read_text())
    given = [path for path in DEPENDENT_DEFAULTS if value_at(config, path) is not None]
    try:
        validate(config, schema_path)
    except WorkflowError:
        raise ConfigError(report(schema_errors(config, schema))) from None
    languages = normalise_languages(config)
    entry = schema["properties"]["production"]["properties"]["datasets"]["items"]["properties"]
    options = dataset_option_problems(config, entry)
    if options:
        raise ConfigError(report(options))
    check_config(config, given)
    planned = [*api_decoding_problems(config), *truncation_problems(config)]
    if planned:
        raise ConfigError(report(planned))
    return [*off, *languages, *config_notes(config)]
