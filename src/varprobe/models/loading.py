"""Load a configured model and its tokenizer through transformers' ``Auto*`` classes.

Hub ids, local directories (including tiny random models saved by the tests) and package
folders with a GGUF file all take this one path. A model whose config says it is an
encoder-decoder (Marian, T5) loads as ``AutoModelForSeq2SeqLM``, any other as
``AutoModelForCausalLM``. A spec with a fine-tuning ``checkpoint`` loads its base weights the same
way and then the checkpoint's trained parameters over them (``varprobe.models.checkpoint``).
A spec with a ``device_map`` is placed by transformers/accelerate over the devices it names
(``"auto"``: the node's GPUs, then CPU) instead of being moved whole to ``spec.device``.
A local GGUF file (a package's or a directory's) is converted once into the model cache
(``varprobe.models.cache``) and loaded from there: the same weights, without parsing and
dequantizing the GGUF file in every job. An entry's ``model_args`` reach ``from_pretrained``
(``revision`` the config and tokenizer too), its ``adapter`` is merged into the loaded weights
(``peft``), and the hub commit the weights came from is kept in ``LoadedModel.provenance``, for
the tables and the run record. A float32 model on the CPU gets its linear layers'
weights packed for oneDNN (``varprobe.models.packing``): about twice the speed of its products
in sampling and scoring passes.
"""

from __future__ import annotations

import json
import pickle
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from varprobe.data.sources import Digest
from varprobe.models import cache, parts
from varprobe.models.checkpoint import apply_checkpoint
from varprobe.models.gguf_reads import parsed_once
from varprobe.models.packing import pack_linears
from varprobe.models.spec import NO_CUSTOM_CODE, NO_PEFT, ModelSpec, ModelUnavailable, torch_dtype


@dataclass
class LoadedModel:
    """A model in eval mode on its device, with its tokenizer; ``provenance`` says what was
    loaded (``provenance``: the hub commit, the requested revision, ``model_args``,
    ``trust_remote_code``, the dtype)."""

    spec: ModelSpec
    model: torch.nn.Module
    tokenizer: object
    provenance: dict = field(default_factory=dict)

    @property
    def is_seq2seq(self) -> bool:
        """Whether the model is an encoder-decoder (its outputs hold no copy of the input)."""
        return bool(getattr(self.model.config, "is_encoder_decoder", False))

    @property
    def device(self) -> torch.device:
        """Where the model's inputs go: its input embedding's device (with a ``device_map``
        the other layers may lie elsewhere; accelerate moves activations between them and
        returns the outputs here)."""
        return self.model.get_input_embeddings().weight.device


def check_available(spec: ModelSpec) -> None:
    """Fail fast, before any compute, when a model's weights or samples cannot be reached.

    Reads only the config (a local file, or a few kB from the hub) — not the weights. An API
    model is not checked here: its block is, by ``varprobe.api.endpoint.ApiEndpoint.from_config``
    (``varprobe check-models``).

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    None

    Raises
    ------
    ModelUnavailable
        Saying why the model cannot be reached.
    """
    if spec.is_api:
        return
    problem = spec.local_problem()
    if problem:
        raise ModelUnavailable(problem)
    if spec.is_external:
        return
    location, gguf_file = source(spec)
    check_pickle_weights(spec, location, gguf_file)
    try:
        model_kwargs(spec)  # a quantization_config transformers does not know
    except ValueError as err:
        raise ModelUnavailable(str(err)) from None
    try:
        AutoConfig.from_pretrained(location, gguf_file=gguf_file, **config_args(spec))
    except (OSError, ValueError) as err:
        raise ModelUnavailable(_unreachable(spec, location, err)) from err


def config_args(spec: ModelSpec) -> dict:
    """The keyword arguments the config and the tokenizer are read with: ``trust_remote_code``
    (False unless the entry opts in) and the ``revision`` of ``model_args``; the config also its
    ``subfolder``.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    dict
    """
    held = spec.load_args()
    return {"trust_remote_code": spec.trust_remote_code,
            **{k: held[k] for k in ("revision", "subfolder") if k in held}}


def model_kwargs(spec: ModelSpec) -> dict:
    """The keyword arguments of the model's ``from_pretrained`` beyond its location and GGUF
    file: its dtype (``torch_dtype``), ``trust_remote_code``, ``model_args`` (less ``adapter``;
    a ``quantization_config`` mapping made transformers' config object, so a wrong one is named
    here), and its placement: a ``device_map``, or, for a quantized model (which cannot be moved
    after loading), its whole device.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        When ``quantization_config`` is not one transformers knows.
    """
    kwargs = {"dtype": torch_dtype(spec.dtype), "trust_remote_code": spec.trust_remote_code,
              **spec.load_args()}
    quantization = kwargs.get("quantization_config")
    if quantization is not None:
        from transformers.quantizers.auto import AutoQuantizationConfig

        try:
            kwargs["quantization_config"] = AutoQuantizationConfig.from_dict(dict(quantization))
        except (ValueError, TypeError, KeyError) as err:
            raise ValueError(f"model {spec.name!r}: model_args.quantization_config {quantization!r} is not a "
                             f"quantization transformers knows ({err})") from None
    if spec.device_map is not None:
        kwargs["device_map"] = spec.device_map
    elif quantization is not None:
        kwargs["device_map"] = {"": spec.device}
    return kwargs


def hub_commit(location: str, revision: str | None, reported: str | None) -> str | None:
    """The hub commit a model was loaded from: ``reported`` (the config's ``_commit_hash``) when
    transformers gave one, else the snapshot folder of the local hub cache that holds the
    config at ``revision``; None for a local folder, or where neither tells (no network is asked).

    Parameters
    ----------
    location : str
        The hub id or folder the model was read from.
    revision : str or None
        The revision asked for (None: the default branch).
    reported : str or None
        The commit transformers reported.

    Returns
    -------
    str or None
    """
    if reported:
        return str(reported)
    if Path(location).expanduser().exists():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(location, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 (an id the hub's cache cannot parse: no commit known)
        return None
    return Path(found).parent.name if isinstance(found, str) else None


def pickle_weights(folder: Path) -> list[Path]:
    """The pickle-format weight files that ``from_pretrained`` would read from ``folder``: none
    where it holds safetensors weights (read first); else ``pytorch_model.bin``, or the shards
    its index names.

    Parameters
    ----------
    folder : Path
        A local model folder.

    Returns
    -------
    list of Path
    """
    from transformers.utils import WEIGHTS_INDEX_NAME, WEIGHTS_NAME

    if next(folder.glob("*.safetensors"), None) is not None:
        return []
    index = folder / WEIGHTS_INDEX_NAME
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise ModelUnavailable(f"{index}: not a weights index ({err})") from err
        return [folder / name for name in names]
    return [folder / WEIGHTS_NAME] if (folder / WEIGHTS_NAME).is_file() else []


UNSUPPORTED_GLOBAL = re.compile(r"Unsupported global: GLOBAL (\S+)")
"""What torch's weights-only unpickler names when a pickle calls something that is no tensor."""


def check_pickle_weights(spec: ModelSpec, location: str, gguf_file: str | None) -> None:
    """Refuse a local folder's pickle-format weights (``pickle_weights``) that do not load as
    tensors alone: each is read with ``torch.load(weights_only=True)`` (memory-mapped where it
    is a zip file, so no weight is read), which runs none of the pickle's calls. Unpickling any
    more could run code that a file brings, so such weights are never loaded.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.
    location : str
        Where ``from_pretrained`` reads it (``source``).
    gguf_file : str or None
        The GGUF file it reads there, if any (then no pickle is read).

    Returns
    -------
    None

    Raises
    ------
    ModelUnavailable
        Naming the model and the file.
    """
    folder = Path(location).expanduser()
    if gguf_file or not folder.is_dir():
        return
    for path in pickle_weights(folder):
        try:
            torch.load(path, map_location="cpu", weights_only=True, mmap=zipfile.is_zipfile(path))
        except Exception as err:  # noqa: BLE001 (whatever the unpickler refuses)
            raise ModelUnavailable(_pickle_refused(spec, path, err)) from None


def _pickle_refused(spec: ModelSpec, path: Path | str, err: Exception) -> str:
    """Why the pickle weights at ``path`` are not loaded (torch's own advice, to unpickle
    without the weights-only check, is not repeated)."""
    found = UNSUPPORTED_GLOBAL.search(str(err))
    what = f"it calls {found.group(1)}" if found else f"{type(err).__name__}"
    return (f"model {spec.name!r}: {path} is pickle-format weights that do not load as tensors alone "
            f"({what}); pickle weights are not loaded beyond that, since unpickling can run code "
            "that comes with the file; convert the model to safetensors (model.safetensors) where "
            "it comes from, or use a copy that has them")


def source(spec: ModelSpec) -> tuple[str, str | None]:
    """Where ``from_pretrained`` reads ``spec``: ``(location, gguf_file)``.

    A package that assembles its GGUF file (``ModelSpec.assembles``), or a file in ``parts``
    (``varprobe.models.parts.joined``), has it written once into the model cache first. A GGUF file on the local disk (a package's or a local directory's) is
    served from the model cache (converted there on first use, ``varprobe.models.cache.converted``,
    in an entry of its own for each setting of the ``model_args`` that change weights): the entry's folder
    and no ``gguf_file``. A hub id, a folder of ordinary weights, or any model while
    ``$VARPROBE_CACHE`` is ``off``, is read where it is.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    location : str
        The hub id or folder.
    gguf_file : str or None
        The GGUF file within it, or None.

    Raises
    ------
    ModelUnavailable
        When the model's files cannot be reached.
    """
    location, known = spec.location(), None
    try:
        if spec.parts is not None:
            target = parts.joined(spec.parts, spec.gguf_file, spec.sha256)
            location, known = str(target.parent), Digest(spec.sha256, target.stat().st_size)
        if spec.assembles():
            location = str(cache.assembled(spec.package, spec.gguf_file).parent)
        if not spec.gguf_file or cache.cache_root() is None:
            return location, spec.gguf_file
        gguf_path = Path(location).expanduser() / spec.gguf_file
        if not gguf_path.is_file():
            return location, spec.gguf_file
        return str(cache.converted(gguf_path, spec.dtype, known=known, weights=spec.weight_args())), None
    except (OSError, ValueError) as err:
        raise ModelUnavailable(_unreachable(spec, location, err)) from err


def run_device(spec: ModelSpec, gpus: int, cpu_fallback: bool, cuda_available: bool) -> str:
    """The device a sampling job runs ``spec`` on.

    ``gpus`` is the number of GPUs the job was given (its ``gpu`` resource). A model configured
    for CUDA runs on CPU when the job was given none (a cluster without GPUs, declared in the
    profile) or, with ``cpu_fallback``, when no CUDA device is usable although one was
    requested (CI's scheduler hands out fake GPUs). Otherwise a missing CUDA device is an error
    that names the settings to change.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.
    gpus : int
        GPUs given to the job.
    cpu_fallback : bool
        Whether to run on CPU where no CUDA device is usable.
    cuda_available : bool
        Whether a CUDA device is usable.

    Returns
    -------
    str
        A torch device name.

    Raises
    ------
    ModelUnavailable
        When the model needs CUDA and none is usable.
    """
    if not spec.device.startswith("cuda"):
        return spec.device
    if gpus == 0 or (cpu_fallback and not cuda_available):
        return "cpu"
    if not cuda_available:
        raise ModelUnavailable(
            f"model {spec.name!r} asks for device {spec.device!r} but CUDA is not available "
            "here; on a machine or cluster without GPUs set `gpu: 0` for its model jobs "
            "(provo_sample, provo_enumerate, production_sample, finetune_provo, "
            "finetune_production) under `set-resources` in the "
            "profile (CUDA models then run on CPU), or `device: cpu` for the model in config.yaml"
        )
    return spec.device


def load_causal_lm(spec: ModelSpec) -> LoadedModel:
    """Load ``spec`` as a causal LM in eval mode on ``spec.device`` with ``spec.dtype`` weights
    (its checkpoint's parameters over the base weights when it has one).

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    LoadedModel
        The model and its tokenizer.

    Raises
    ------
    ValueError
        When ``spec`` is a samples file.
    ModelUnavailable
        When its files cannot be reached.
    """
    return _load(spec, seq2seq=False)


def load_generator(spec: ModelSpec) -> LoadedModel:
    """Load ``spec`` as a seq2seq model if its config is an encoder-decoder, else as a causal LM.

    Parameters
    ----------
    spec : ModelSpec
        The model's config entry.

    Returns
    -------
    LoadedModel
        The model and its tokenizer.

    Raises
    ------
    ValueError
        When ``spec`` is a samples file.
    ModelUnavailable
        When its files cannot be reached.
    """
    if spec.is_external:
        raise ValueError(f"model {spec.name!r} is a samples file, not a network")
    location, gguf_file = source(spec)
    try:
        config = AutoConfig.from_pretrained(location, gguf_file=gguf_file, **config_args(spec))
    except (OSError, ValueError) as err:
        raise ModelUnavailable(_unreachable(spec, location, err)) from err
    return _load(spec, seq2seq=bool(getattr(config, "is_encoder_decoder", False)),
                 where=(location, gguf_file))


def _load(spec: ModelSpec, seq2seq: bool,
          where: tuple[str, str | None] | None = None) -> LoadedModel:
    if spec.is_external:
        raise ValueError(f"model {spec.name!r} is a samples file, not a network")
    if spec.device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelUnavailable(
            f"model {spec.name!r} asks for device {spec.device!r} but CUDA is not available here"
        )
    location, gguf_file = where or source(spec)
    auto = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    kwargs = model_kwargs(spec)
    if spec.gguf_file and gguf_file is None:  # served from the model cache: its own flat folder
        kwargs = {k: v for k, v in kwargs.items() if k not in ("subfolder", "variant")}
    check_pickle_weights(spec, location, gguf_file)
    tokenizer_args = {k: v for k, v in config_args(spec).items() if k != "subfolder"}
    try:
        with parsed_once():
            tokenizer = AutoTokenizer.from_pretrained(location, gguf_file=gguf_file, **tokenizer_args)
            model = auto.from_pretrained(location, gguf_file=gguf_file, **kwargs)
    except pickle.UnpicklingError as err:  # a hub model's pickle weights
        raise ModelUnavailable(_pickle_refused(spec, location, err)) from None
    except ImportError as err:  # a quantization or attention kernel whose package is missing
        raise ModelUnavailable(f"model {spec.name!r}: its model_args need a package that is not "
                               f"installed here ({str(err).strip().splitlines()[0]})") from None
    except (OSError, ValueError) as err:
        raise ModelUnavailable(_unreachable(spec, location, err)) from err
    revision = spec.load_args().get("revision")
    provenance = {"commit": hub_commit(location, revision, getattr(model.config, "_commit_hash", None)),
                  "revision": revision, "model_args": spec.model_args or {},
                  "trust_remote_code": spec.trust_remote_code, "dtype": str(model.dtype).removeprefix("torch.")}
    if spec.adapter:
        model = _with_adapter(spec, model)
    if spec.checkpoint:
        apply_checkpoint(model, spec.checkpoint)
    if "device_map" not in kwargs:
        model = model.to(spec.device)
        pack_linears(model)
    return LoadedModel(spec, model.eval(), tokenizer, provenance)


def _with_adapter(spec: ModelSpec, model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with the PEFT adapter of ``spec`` merged into its weights (a plain model again,
    which the samplers run like any other)."""
    try:
        from peft import PeftModel
    except ImportError:
        raise ModelUnavailable(f"model {spec.name!r}: {NO_PEFT}") from None
    try:
        adapted = PeftModel.from_pretrained(model, spec.adapter, is_trainable=False)
    except (OSError, ValueError) as err:
        raise ModelUnavailable(f"model {spec.name!r}: adapter {spec.adapter!r} cannot be applied "
                               f"({str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__})") from err
    return adapted.merge_and_unload()


HUB_LINK = re.compile(r"\s*Check ?out '?https://huggingface\.co/[^ ]*'? for available files\.?")
"""transformers' pointer to a hub page, which it builds from a local path too."""


def _unreachable(spec: ModelSpec, location: str, err: Exception) -> str:
    if "trust_remote_code" in str(err) and not spec.trust_remote_code:  # transformers' advice to run its code
        return f"model {spec.name!r}: {location!r} maps the model to code of its own; {NO_CUSTOM_CODE}"
    first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if spec.package is not None or Path(location).expanduser().exists():
        first_line = HUB_LINK.sub("", first_line)
    return (
        f"model {spec.name!r}: no weights reachable at {location!r} ({first_line}); "
        "fix the hub id or path in config.yaml, or download the model where there is internet"
    )
