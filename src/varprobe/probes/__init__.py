"""Production probes (Giulianelli et al. 2023, Sec. 3.2): distances between two productions.

Each probe is a pure function of two pre-processed texts (token or tag sequences, embeddings);
the pre-processing (parsing, embedding) runs once per text and is reused across its pairs.

``PROBES`` is the one list of probes: each module defines its record (``probe.Probe``: name,
what it needs, how it featurises a text, its distance), and the analysis, the CLI and the
reports loop over it. A new probe is one module and one entry here.
"""

from collections.abc import Sequence

from varprobe.probes.lexical import LEXICAL
from varprobe.probes.probe import NEEDS, Prepared, Probe
from varprobe.probes.semantic import SEMANTIC
from varprobe.probes.syntactic import SYNTACTIC

PROBES = {p.name: p for p in (LEXICAL, SYNTACTIC, SEMANTIC)}
"""Every probe by name, in the order the tables list them."""


def probe_names(orders: Sequence[int]) -> list[str]:
    """Every probe of a study: ``lexical-n`` and ``syntactic-n`` for each order, ``semantic``.

    Parameters
    ----------
    orders : sequence of int
        The n-gram orders of the study (``production.ngram_orders``).

    Returns
    -------
    list of str
        The probe names, in the order of ``PROBES`` and, within a probe, of ``orders``.
    """
    return [name for probe in PROBES.values() for name, _ in probe.instances(orders)]


__all__ = ["NEEDS", "PROBES", "Prepared", "Probe", "probe_names"]
