"""The kinds of model (backends) and what each can do: the one registry that model entries, the
run plan and the workflow route by.

A backend is chosen by the one source key of a model entry (``Backend.sources``: ``pretrained``
for a network, ``api`` for an endpoint, ...) and declares its capabilities: the stages that can
run it. The workflow asks the run plan for the models with a capability
(``varprobe.run_plan.RunPlan.with_capability``), never for a kind, so a new backend is one
``Backend`` record in ``BACKENDS`` (its source key in the config schema's ``models`` item beside
it) and every stage of its capabilities runs it.

This module imports nothing of the package: ``varprobe.models.spec`` reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

LOGITS = "logits"
"""One network's next-token logits over the whole corpus: complete-word enumeration and the
token-level analyses (token calibration, the biased estimator, Table 4)."""
SAMPLER = "sampler"
"""Words and texts drawn here, by the package's samplers, from a network's logits (a fine-tuned
model's per fold or checkpoint)."""
ENDPOINT = "endpoint"
"""Words and texts from an endpoint's replies (``varprobe.api``)."""
GIVEN = "given"
"""Draws given in a file (a samples CSV, a published system's samples): scored, never drawn."""

CAPABILITIES = (LOGITS, SAMPLER, ENDPOINT, GIVEN)
"""Every capability a backend can declare; each is the input of a stage of the workflow."""


@dataclass(frozen=True)
class Backend:
    """A kind of model.

    Attributes
    ----------
    kind : str
        Its name (``ModelSpec.kind``).
    sources : tuple of str
        The keys of a model entry that choose it (an entry gives exactly one source key).
    capabilities : tuple of str
        What it can do (of ``CAPABILITIES``): the stages that run it.
    weights : bool
        Whether its sources give a network's weights, over which a fine-tuning checkpoint
        applies.
    locate : callable or None
        For a backend of weights that the network's sources do not describe: the hub id or
        folder ``from_pretrained`` reads, from the ``ModelSpec`` (its block is
        ``spec.options[source]``); the model then loads by the one loading path
        (``varprobe.models.loading``). None for the network's own sources
        (``ModelSpec.location``) and for backends without weights.
    """

    kind: str
    sources: tuple[str, ...]
    capabilities: tuple[str, ...]
    _: KW_ONLY
    weights: bool = False
    locate: Callable[[object], str] | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.capabilities) - set(CAPABILITIES))
        if unknown:
            raise ValueError(f"backend {self.kind!r}: capabilities {', '.join(unknown)} are none of "
                             f"{', '.join(CAPABILITIES)}")


NETWORK = Backend("network", ("pretrained", "package", "parts"), (LOGITS, SAMPLER), weights=True)
"""A network loaded here (``varprobe.models.loading``): a hub id or folder, a package's weights, or
a GGUF file joined from parts."""
FINE_TUNED = Backend("fine-tuned", ("finetune",), (SAMPLER,))
"""A network fine-tuned from another configured one (``varprobe.finetune``), evaluated in its
own study only; its jobs read its base's weights with the trained checkpoint over them."""
API = Backend("api", ("api",), (ENDPOINT,))
"""A model behind an OpenAI-compatible endpoint (``varprobe.api``): text only."""
SAMPLES = Backend("samples", ("samples", "published"), (GIVEN,))
"""A file of draws: a samples CSV, or a published system's samples."""

BACKENDS = (NETWORK, FINE_TUNED, API, SAMPLES)
"""Every backend, in the order an entry's source keys are listed."""


def sources() -> tuple[str, ...]:
    """The keys of a model entry that say where the model comes from, over every backend.

    Returns
    -------
    tuple of str
    """
    return tuple(key for backend in BACKENDS for key in backend.sources)


def weight_sources() -> tuple[str, ...]:
    """The source keys that give a network's weights (``Backend.weights``).

    Returns
    -------
    tuple of str
    """
    return tuple(key for backend in BACKENDS if backend.weights for key in backend.sources)


def chosen_by(source: str) -> Backend:
    """The backend a source key chooses.

    Parameters
    ----------
    source : str
        A source key of a model entry.

    Returns
    -------
    Backend

    Raises
    ------
    KeyError
        When no backend takes that key.
    """
    for backend in BACKENDS:
        if source in backend.sources:
            return backend
    raise KeyError(f"no backend takes the model entry key {source!r} (known: {', '.join(sources())})")


def of_kind(kind: str) -> Backend:
    """The backend of a kind.

    Parameters
    ----------
    kind : str
        A ``Backend.kind``.

    Returns
    -------
    Backend
    """
    return next(backend for backend in BACKENDS if backend.kind == kind)
