"""A fine-tuning checkpoint: the trained parameters only, applied over freshly loaded base weights.

A checkpoint is a folder holding

* ``trainable.safetensors``: the trained parameters by their names in the model
  (``model.named_parameters()``), nothing else (for SmolLM2-135M's last 2 blocks ~28 MB, not the
  540 MB model);
* ``manifest.json``: ``format``, the SHA-256 of the weights file, every parameter's shape and
  dtype, and what the caller records (base model entry, settings, data).

The folder is written beside its destination under a temporary name and renamed when complete,
so a failed job never leaves a partial checkpoint that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from varprobe.data.sources import Digest

FORMAT = "varprobe-finetune/1"
WEIGHTS = "trainable.safetensors"
MANIFEST = "manifest.json"


def save_checkpoint(model: torch.nn.Module, names: list[str], folder: str | Path,
                    manifest: dict) -> None:
    """Write the parameters ``names`` of ``model`` and ``manifest`` (JSON-serialisable, extended
    with format, hash and parameter shapes) to ``folder``, replacing any folder there.

    Parameters
    ----------
    model : torch.nn.Module
        The fine-tuned model.
    names : list of str
        The names of the parameters saved (those trained).
    folder : str or Path
        The checkpoint folder.
    manifest : dict
        What the run records besides the format, hash and shapes.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        When ``model`` lacks a parameter of ``names``.
    """
    folder = Path(folder)
    parameters = dict(model.named_parameters())
    missing = [n for n in names if n not in parameters]
    if missing:
        raise ValueError(f"{type(model).__name__} has no parameters {missing[:3]}")
    tensors = {n: parameters[n].detach().to("cpu").contiguous() for n in names}
    partial = folder.with_name(f".{folder.name}.{os.getpid()}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    try:
        # bytes written by Python get the umask's permissions (save_file's file is owner-only)
        (partial / WEIGHTS).write_bytes(save(tensors))
        shapes = {n: {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
                  for n, t in tensors.items()}
        full = {**manifest, "format": FORMAT, "sha256": Digest.of(partial / WEIGHTS).sha256,
                "parameters": shapes}
        (partial / MANIFEST).write_text(json.dumps(full, indent=1, sort_keys=True) + "\n")
        if folder.is_dir():
            shutil.rmtree(folder)
        elif folder.exists():
            folder.unlink()
        partial.rename(folder)
    finally:
        if partial.exists():
            shutil.rmtree(partial)


def read_manifest(folder: str | Path) -> dict:
    """The manifest of the checkpoint in ``folder``; errors name the folder and what is wrong.

    Parameters
    ----------
    folder : str or Path
        The checkpoint folder.

    Returns
    -------
    dict

    Raises
    ------
    FileNotFoundError
        When the folder holds no manifest.
    ValueError
        When the manifest is no JSON or of another format.
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {folder}: no {MANIFEST} (not a fine-tuning checkpoint)")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"checkpoint {folder}: {MANIFEST} is not valid JSON ({err})") from err
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(f"checkpoint {folder}: format {found!r}, expected {FORMAT!r}")
    return manifest


def apply_checkpoint(model: torch.nn.Module, folder: str | Path) -> dict:
    """Overwrite ``model``'s parameters with the checkpoint's and return its manifest.

    Errors name the checkpoint and the culprit: a weights file that is missing, unreadable or
    not the one the manifest hashed; a parameter the file and manifest disagree on, that the
    model lacks, or whose shape differs. Nothing is overwritten unless every parameter fits.

    Parameters
    ----------
    model : torch.nn.Module
        The base model; its parameters are overwritten in place.
    folder : str or Path
        The checkpoint folder.

    Returns
    -------
    dict
        The checkpoint's manifest.

    Raises
    ------
    FileNotFoundError
        When the manifest or the weights file is missing.
    ValueError
        For any of the other faults above.
    """
    manifest = read_manifest(folder)
    path = Path(folder) / WEIGHTS
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {folder}: weights file {WEIGHTS} is missing")
    if Digest.of(path).sha256 != manifest.get("sha256"):
        raise ValueError(f"checkpoint {folder}: {WEIGHTS} does not match the SHA-256 in its "
                         "manifest (corrupt or replaced)")
    try:
        tensors = load_file(path)
    except (SafetensorError, OSError) as err:
        raise ValueError(f"checkpoint {folder}: {WEIGHTS} is unreadable ({err})") from err
    expected = manifest.get("parameters", {})
    if set(tensors) != set(expected):
        differ = sorted(set(tensors) ^ set(expected))
        raise ValueError(f"checkpoint {folder}: weights file and manifest disagree on parameters "
                         f"{differ[:3]}")
    parameters = dict(model.named_parameters())
    for name, tensor in tensors.items():
        if name not in parameters:
            raise ValueError(f"checkpoint {folder}: parameter {name!r} does not exist in "
                             f"{type(model).__name__}")
        if parameters[name].shape != tensor.shape:
            raise ValueError(f"checkpoint {folder}: parameter {name!r} has shape "
                             f"{list(tensor.shape)}, the model's has {list(parameters[name].shape)}")
    with torch.no_grad():
        for name, tensor in tensors.items():
            parameters[name].copy_(tensor)
    return manifest
