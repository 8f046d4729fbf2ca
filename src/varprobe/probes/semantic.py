"""Sentence embeddings and the semantic probe: cosine distance (Giulianelli et al. 2023, Sec. 3.2).

The encoder is a sentence-transformers model named in the config: a hub id or a directory
(``sentence-transformers/all-distilroberta-v1`` in the paper), or ``{package: NAME}`` for weights
shipped inside an installed Python package (its ``get_model_path()``, else its folder).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from varprobe.probes.probe import Prepared, Probe


def encoder_location(spec: str | dict) -> str:
    """The path or hub id of an encoder given as a string or ``{package: NAME}``.

    Parameters
    ----------
    spec : str or dict
        A hub id or path, or ``{"package": NAME}`` for an offline model package.

    Returns
    -------
    str
        The hub id or the local path to load the encoder from.
    """
    if isinstance(spec, str):
        return spec
    try:
        module = importlib.import_module(spec["package"])
    except ImportError as err:
        raise OSError(f"sentence encoder package {spec['package']!r} is not installed") from err
    if hasattr(module, "get_model_path"):
        return str(module.get_model_path())
    return str(Path(module.__file__).parent)


def load_encoder(spec: str | dict, device: str = "cpu"):
    """A ``SentenceTransformer`` for ``spec``; OSError naming it when it cannot be loaded.

    Parameters
    ----------
    spec : str or dict
        The encoder, as ``encoder_location`` reads it.
    device : str
        The torch device to load it on.

    Returns
    -------
    sentence_transformers.SentenceTransformer
        The loaded encoder.

    Raises
    ------
    OSError
        Naming ``spec`` when it cannot be loaded.
    """
    from sentence_transformers import SentenceTransformer

    location = encoder_location(spec)
    try:
        return SentenceTransformer(location, device=device)
    except (OSError, ValueError) as err:
        raise OSError(f"sentence encoder {location!r} could not be loaded ({err})") from err


def embed(texts: list[str], encoder, batch_size: int = 64) -> np.ndarray:
    """Unit-norm float32 embeddings ``(len(texts), d)``, computed in batches.

    Parameters
    ----------
    texts : list of str
        The texts to embed.
    encoder : sentence_transformers.SentenceTransformer
        The sentence encoder (``load_encoder``).
    batch_size : int
        Texts per forward pass.

    Returns
    -------
    numpy.ndarray
        float32 of shape ``(len(texts), d)``, each row of norm 1.
    """
    return encoder.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                          convert_to_numpy=True, show_progress_bar=False)


def cosine_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine distance 1 - a.b / (|a| |b|) of two ``(m, d)`` arrays, in [0, 2].

    A zero vector has no direction: its distances are NaN.

    Parameters
    ----------
    a, b : numpy.ndarray
        Two arrays of shape ``(m, d)``; row i of ``a`` is compared with row i of ``b``.

    Returns
    -------
    numpy.ndarray
        Shape ``(m,)``: the cosine distance of each row pair, NaN where either row is zero.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = np.einsum("...d,...d->...", a, b) / norms
    return np.where(norms > 0, 1.0 - np.clip(similarity, -1.0, 1.0), np.nan)


def _embeddings(prepared: Prepared, n: None) -> np.ndarray:
    return prepared.vectors


def _vector_distances(vectors: np.ndarray, left, right) -> np.ndarray:
    return cosine_distances(vectors[left], vectors[right])


SEMANTIC = Probe("semantic", needs="encoder", featurise=_embeddings, distance=_vector_distances)
"""The semantic probe: cosine distance of sentence embeddings."""
