"""The record of a production probe (Giulianelli et al. 2023, Sec. 3.2): what it needs, how it
featurises a text, its distance. Each probe's module defines one (``LEXICAL``, ``SYNTACTIC``,
``SEMANTIC``) and ``varprobe.probes.PROBES`` lists them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

NEEDS = {
    "tokenizer": None,
    "tagger": "no spaCy tagging pipeline configured for language {language!r}",
    "encoder": "no sentence encoder configured for language {language!r}",
}
"""What a probe can need, and why it is unavailable for a language without it: ``tokenizer``, a
spaCy pipeline (a blank one of the language is always there); ``tagger``, a trained pipeline that
writes POS tags; ``encoder``, a sentence encoder."""


@dataclass(frozen=True)
class Prepared:
    """Distinct texts as every probe reads them, prepared once: their tokens and tags
    (``syntactic.Parsed``; tags None without a tagger) and their unit-norm embeddings (None
    without an encoder)."""

    texts: list[str]
    parsed: list
    vectors: np.ndarray | None


@dataclass(frozen=True)
class Probe:
    """A production probe: ``featurise(prepared, n)`` gives one feature per text of
    ``prepared`` (n: the n-gram order of an ``ordered`` probe, else None), and
    ``distance(features, left, right)`` the distances of the text pairs ``left[i], right[i]``
    (indices into the texts; NaN where the probe leaves a pair undefined). An ``ordered`` probe
    is run once per configured order, as ``NAME-n``; it is available where its ``needs``
    (a key of ``NEEDS``) is met."""

    name: str
    _: KW_ONLY
    needs: str
    featurise: Callable[[Prepared, int | None], Any]
    distance: Callable[[Any, Sequence[int], Sequence[int]], Sequence[float]]
    ordered: bool = False

    def __post_init__(self) -> None:
        if self.needs not in NEEDS:
            raise ValueError(f"probe {self.name!r}: needs must be one of {list(NEEDS)}, got {self.needs!r}")

    def instances(self, orders: Sequence[int]) -> list[tuple[str, int | None]]:
        """The probes this record runs for n-gram ``orders``: (name, order) each.

        Parameters
        ----------
        orders : sequence of int
            The study's n-gram orders.

        Returns
        -------
        list of (str, int or None)
            ``(name-n, n)`` per order for an ordered probe, else ``[(name, None)]``.
        """
        return [(f"{self.name}-{n}", n) for n in orders] if self.ordered else [(self.name, None)]
