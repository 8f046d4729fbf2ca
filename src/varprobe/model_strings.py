"""A model given as one string, ``pretrained=ID[,KEY=VALUE...]`` (``varprobe run --model``,
``varprobe.evaluate``): its config entry, each key one of the config schema's model keys.
"""

from __future__ import annotations

import re
from pathlib import Path

SOURCE_KEYS = ("pretrained", "package")
"""The keys of a ``--model`` string that say where the weights are: one of them."""

SCALARS = {"string", "integer", "number", "boolean"}
"""The schema types a ``KEY=VALUE`` of a ``--model`` string can give."""

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A model name the config schema takes (``models[].name``)."""


def _types(entry: dict) -> set[str]:
    """The JSON types a schema entry admits (its ``type``, or its ``oneOf`` alternatives')."""
    kinds = entry.get("type")
    if kinds is None and "oneOf" in entry:
        return set().union(*(_types(option) for option in entry["oneOf"]))
    if "enum" in entry and kinds is None:
        return {type_name(v) for v in entry["enum"]}
    return set([kinds] if isinstance(kinds, str) else kinds or [])


def type_name(value) -> str:
    """The JSON type name of a YAML scalar.

    Parameters
    ----------
    value : object
        A value read from YAML.

    Returns
    -------
    str
        ``boolean``, ``integer``, ``number``, ``null`` or ``string``.
    """
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else "string"


def scalar(text: str, kinds: set[str]):
    """The value of ``text`` for a key whose schema admits ``kinds``: kept as a string where a
    string is admitted and nothing else, else read as lm-evaluation-harness reads its
    ``--model_args`` (``true``/``false`` a boolean, a numeral a number, anything else a string).

    Parameters
    ----------
    text : str
        The ``VALUE`` of a ``KEY=VALUE``.
    kinds : set of str
        The JSON types the key admits (empty: any).

    Returns
    -------
    object
        The value.
    """
    if kinds == {"string"}:
        return text
    if text.lower() in ("true", "false") and (not kinds or "boolean" in kinds):
        return text.lower() == "true"
    for kind, read in (("integer", int), ("number", float)):
        if not kinds or kind in kinds:
            try:
                return read(text)
            except ValueError:
                pass
    return text


def default_name(entry: dict) -> str:
    """The model's name where the ``--model`` string gives none: the last part of its hub id,
    directory or package, with every character the schema refuses in a name made ``-``.

    Parameters
    ----------
    entry : dict
        The model's config entry so far (``pretrained`` or ``package``).

    Returns
    -------
    str
        A name matching ``NAME``.
    """
    source = next(str(entry[k]) for k in SOURCE_KEYS if k in entry)
    name = re.sub(r"[^A-Za-z0-9._-]", "-", Path(source.rstrip("/")).name).lstrip("._-")
    if not name:
        raise ValueError(f"--model: no name can be made of {source!r}; give one: name=NAME")
    return name


def parse_model(text: str, schema: dict) -> dict:
    """The model's config entry of a ``--model`` string, ``pretrained=ID[,KEY=VALUE...]`` (or
    ``package=NAME,gguf_file=FILE``): each key one of the config schema's model keys that takes a
    plain value (``models[]``), its value of that key's type, or one of the keys of its
    ``model_args`` (passed to ``from_pretrained``) that takes a plain value, which goes there
    (any other key too, where ``model_args`` is an open mapping); an unknown key is refused,
    naming it and the known ones.

    Parameters
    ----------
    text : str
        The ``--model`` string.
    schema : dict
        The config schema.

    Returns
    -------
    dict
        The model's entry, with its ``name`` (``default_name`` unless given).
    """
    item = schema["properties"]["models"]["items"]["properties"]
    plain = {key: _types(entry) for key, entry in item.items() if key != "model_args" and _types(entry) & SCALARS}
    extra = item.get("model_args")
    described = (extra or {}).get("properties", {})
    passed_on = {key: _types(entry) for key, entry in described.items() if _types(entry) & SCALARS}
    open_ended = extra is not None and extra.get("additionalProperties", True) is not False
    entry: dict = {}
    unknown = []
    for part in (p.strip() for p in text.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not key or not eq or not value:
            raise ValueError(f"--model {text!r}: {part!r} is not KEY=VALUE (the form: "
                             "pretrained=HUB_ID_OR_DIR[,dtype=bfloat16,...])")
        if key in plain:
            target, kinds = entry, plain[key]
        elif key in passed_on or (open_ended and key not in described):
            target, kinds = entry.setdefault("model_args", {}), passed_on.get(key, set())
        else:
            unknown.append(key)
            continue
        if key in target:
            raise ValueError(f"--model {text!r}: {key} is given twice")
        target[key] = scalar(value, kinds)
    if unknown:
        takes = f"a model takes {sorted(plain)}"
        if passed_on:
            takes += f", and for from_pretrained (model_args) {sorted(passed_on)}"
        raise ValueError(f"--model {text!r}: unknown keys {unknown}; {takes} (the config schema's keys with a "
                         "plain value; give the others in a config file, --config)")
    sources = [k for k in SOURCE_KEYS if k in entry]
    if len(sources) != 1:
        raise ValueError(f"--model {text!r}: give exactly one of {' or '.join(k + '=...' for k in SOURCE_KEYS)} "
                         f"(got {sources or 'neither'})")
    entry.setdefault("name", default_name(entry))
    if not NAME.match(str(entry["name"])):
        raise ValueError(f"--model {text!r}: name {entry['name']!r} must match {NAME.pattern}")
    return {"name": entry.pop("name"), **entry}
