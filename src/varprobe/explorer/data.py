"""The explorer's data, assembled from the workflow's tables into compact column arrays.

Pure functions on DataFrames (no file access, no models): each returns plain lists and dicts that
``varprobe.explorer.page`` writes as JavaScript chunks. Numbers are rounded to ``DIGITS`` decimals
for the page only (the Parquet tables keep full precision); NaN becomes ``None`` (JSON null).

Provo. Per context (in the contexts table's order): passage, position, context, corpus word,
number of humans, human entropy and the oracle control's TVD (mean TVD between the oracle
halves); per system: TVD to all humans, its interval [``tvd_lower``, ``tvd_upper``] for an exact
system (NaN for a sampled one, which has no per-context interval), the failure rate (failed
draws / draws; for an exact system the resolved failure mass F) and, for an exact system, the
certified mass 1 - u. The word distributions of a context:

* humans: every response with its count (the MLE is count / sum of counts);
* a sampled system: the ``top`` most frequent words with p = count / (draws that gave a word),
  the MLE the TVD is computed on (failures rejected), the corpus word always included, the rest
  as ``other``; failures as counts per reason;
* an exact system: the ``top`` largest resolved word masses p_w exactly as enumerated (the
  corpus word always included), ``other`` the other resolved words' mass, ``unresolved`` u, and
  the failure mass per reason, so that words + other + failures + unresolved = 1.

Production. Per system (dataset x model x decoding): the per-input, per-probe statistics of its
divergences table and, where given, its per-input adequacy (chrF, BLEU, the shares of outputs in
the task's language, empty and copying the input) aligned to the dataset's inputs; per block of inputs: the source, references,
samples and, per probe, the H, M and C distances of each input; the sources of a dataset in one
chunk (the table shows them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np
import pandas as pd

DIGITS = 6
"""Decimals kept for the page."""
TOP_WORDS = 25
"""Word bars per system and context (the corpus word is added when it falls outside)."""
INPUT_BLOCK = 50
"""Production inputs per data chunk (texts and distances load a block at a time)."""
PRODUCTION_STATISTICS = (
    "mean_H", "mean_M", "mean_C", "mean_M_minus_H", "mean_C_minus_H", "w1_M_H", "w1_C_H",
    "w1_control",
)
PRODUCTION_ADEQUACY = ("chrf", "bleu", "sari", "language_share", "empty_share", "copy_share",
                       "reference_language_share")
"""The per-input adequacy statistics shown (``analysis.adequacy.STATISTICS``); one a task does
not score (SARI outside simplification, NaN in every row) is left out."""


def number(value) -> float | None:
    """``value`` rounded to ``DIGITS`` decimals; None for NaN or a missing value."""
    return None if value is None or pd.isna(value) else round(float(value), DIGITS)


def numbers(values) -> list[float | None]:
    """``number`` of each value."""
    return [number(v) for v in values]


@dataclass(frozen=True)
class ProvoSystem:
    """One Provo system's tables: its per-context TVD table and its samples (``exact`` False) or
    enumerated distribution (``exact`` True), with its summary row (a dict, may be empty)."""

    model: str
    decoding: str
    _: KW_ONLY
    tvd: pd.DataFrame
    estimate: pd.DataFrame
    exact: bool
    summary: dict

    @property
    def name(self) -> str:
        return f"{self.model}/{self.decoding}"


KEY = ["text_id", "word_number"]


def _aligned(contexts: pd.DataFrame, table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``columns`` of ``table`` in the order of ``contexts`` (NaN where a context is missing)."""
    return contexts[KEY].merge(table[[*KEY, *columns]], on=KEY, how="left")


def provo_table(contexts: pd.DataFrame, oracle: pd.DataFrame,
                systems: Sequence[ProvoSystem]) -> dict:
    """The Provo view's context table and system list (see the module docstring).

    ``oracle``: the oracle control's TVD table (schema ``provo_tvd``). Raises ValueError naming
    the system when two systems share a name.
    """
    names = [s.name for s in systems]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"systems given more than once: {repeated}")
    control = _aligned(contexts, oracle, ["tvd_oracle2_oracle1", "entropy_human", "n_humans"])
    table = {
        "text_id": [int(v) for v in contexts["text_id"]],
        "word_number": [int(v) for v in contexts["word_number"]],
        "context": [str(v) for v in contexts["context"]],
        "corpus_word": [str(v) for v in contexts["corpus_word"]],
        "n_humans": [None if pd.isna(v) else int(v) for v in control["n_humans"]],
        "entropy_human": numbers(control["entropy_human"]),
        "tvd_oracle": numbers(control["tvd_oracle2_oracle1"]),
    }
    listed = []
    for system in systems:
        scored = _aligned(contexts, system.tvd, ["tvd", "tvd_lower", "tvd_upper"])
        failure, certified = _failure_and_certified(contexts, system)
        listed.append({
            "name": system.name, "model": system.model, "decoding": system.decoding,
            "exact": system.exact,
            "summary": {k: _plain(v) for k, v in system.summary.items()},
            "tvd": numbers(scored["tvd"]),
            "tvd_lower": numbers(scored["tvd_lower"]) if system.exact else None,
            "tvd_upper": numbers(scored["tvd_upper"]) if system.exact else None,
            "failure_rate": numbers(failure),
            "certified": numbers(certified) if system.exact else None,
        })
    return {"contexts": table, "systems": listed}


def _plain(value):
    """A summary value as JSON holds it: numbers rounded (NaN None), integers as int."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return number(value)
    return None if value is None or pd.isna(value) else str(value)


def _failure_and_certified(contexts: pd.DataFrame, system: ProvoSystem):
    """Per context: failure rate (share of failed draws, or failure mass) and certified mass."""
    if system.exact:
        per = system.estimate.groupby(KEY, as_index=False)[["failure_mass", "unresolved_mass"]].first()
        per["certified"] = 1.0 - per["unresolved_mass"]
        found = _aligned(contexts, per, ["failure_mass", "certified"])
        return found["failure_mass"], found["certified"]
    draws = system.estimate.assign(bad=system.estimate["count"].where(system.estimate["failed"], 0))
    per = draws.groupby(KEY, as_index=False)[["count", "bad"]].sum()
    per["rate"] = per["bad"] / per["count"]
    return _aligned(contexts, per, ["rate"])["rate"], None


def _ranked(masses: dict[str, float], corpus_word: str, top: int) -> tuple[list, float]:
    """The ``top`` largest (word, mass) pairs, ties by word, with the corpus word kept; and the
    mass of the words left out."""
    ranked = sorted(masses.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = ranked[:top]
    if corpus_word in masses and all(w != corpus_word for w, _ in kept):
        kept.append((corpus_word, masses[corpus_word]))
    shown = {w for w, _ in kept}
    other = math.fsum(p for w, p in masses.items() if w not in shown)
    return [[w, number(p)] for w, p in kept], number(other)


def _sampled_words(rows: pd.DataFrame, corpus_word: str, top: int) -> dict:
    words = rows[~rows["failed"]].groupby("word")["count"].sum()
    total = int(words.sum())
    masses = {str(w): int(n) / total for w, n in words.items()} if total else {}
    shown, other = _ranked(masses, corpus_word, top)
    failures = rows[rows["failed"]].groupby("failure")["count"].sum().sort_values(ascending=False)
    return {
        "words": shown, "other": other, "unresolved": None, "draws": int(rows["count"].sum()),
        "kept": total, "failures": [[str(r), int(n)] for r, n in failures.items()],
    }


def _exact_words(rows: pd.DataFrame, corpus_word: str, top: int) -> dict:
    resolved = rows[rows["failure"] == ""]
    masses = {str(w): float(p) for w, p in zip(resolved["word"], resolved["probability"],
                                               strict=True)}
    shown, other = _ranked(masses, corpus_word, top)
    failed = rows[rows["failure"] != ""].sort_values("probability", ascending=False)
    return {
        "words": shown, "other": other, "unresolved": number(rows["unresolved_mass"].iloc[0]),
        "draws": None, "kept": None,
        "failures": [[str(r), number(p)] for r, p in zip(failed["failure"], failed["probability"],
                                                         strict=True)],
    }


def provo_words(contexts: pd.DataFrame, responses: pd.DataFrame,
                systems: Sequence[ProvoSystem], top: int = TOP_WORDS) -> dict[int, list]:
    """Per passage (text_id), per context of it in table order: the human responses with their
    counts and each system's word distribution (see the module docstring); a system without
    rows for a context gets None."""
    if top < 1:
        raise ValueError(f"top = {top!r}: at least one word bar per system")
    human = {k: g for k, g in responses.groupby(KEY)}
    estimates = [{k: g for k, g in s.estimate.groupby(KEY)} for s in systems]
    passages: dict[int, list] = {}
    for t, w, corpus_word in contexts[[*KEY, "corpus_word"]].itertuples(index=False):
        key = (int(t), int(w))
        said = human.get(key)
        counts = ([] if said is None else
                  sorted(([str(r), int(n)] for r, n in zip(said["response"], said["count"],
                                                            strict=True)),
                         key=lambda rn: (-rn[1], rn[0])))
        per_system = []
        for system, groups in zip(systems, estimates, strict=True):
            rows = groups.get(key)
            if rows is None:
                per_system.append(None)
            elif system.exact:
                per_system.append(_exact_words(rows, str(corpus_word), top))
            else:
                per_system.append(_sampled_words(rows, str(corpus_word), top))
        passages.setdefault(key[0], []).append({"human": counts, "systems": per_system})
    return passages


@dataclass(frozen=True)
class ProductionSystem:
    """One production system's tables (schemas ``production_samples``, ``_distances``,
    ``_divergences`` and, or None, ``_adequacy``)."""

    dataset: str
    model: str
    decoding: str
    _: KW_ONLY
    samples: pd.DataFrame
    distances: pd.DataFrame
    divergences: pd.DataFrame
    adequacy: pd.DataFrame | None = None

    @property
    def name(self) -> str:
        return f"{self.dataset}/{self.model}/{self.decoding}"


def production_statistics(instances: pd.DataFrame, system: ProductionSystem) -> dict:
    """A system's per-input statistics for each probe, aligned to ``instances``' input order:
    ``{"probes": [...], "statistics": {probe: {statistic: [...]}}}``."""
    order = instances[["input_id"]].astype(str)
    found = {}
    probes = list(dict.fromkeys(system.divergences["probe"]))
    for probe in probes:
        rows = system.divergences[system.divergences["probe"] == probe].astype({"input_id": str})
        aligned = order.merge(rows, on="input_id", how="left")
        found[probe] = {s: numbers(aligned[s]) for s in PRODUCTION_STATISTICS}
    return {"probes": probes, "statistics": found}


def production_adequacy(instances: pd.DataFrame, system: ProductionSystem) -> dict:
    """A system's per-input adequacy, aligned to ``instances``' input order:
    ``{statistic: [...]}`` (None for an input without a row) for each statistic of
    ``PRODUCTION_ADEQUACY`` the task scores; empty without an adequacy table."""
    if system.adequacy is None:
        return {}
    order = instances[["input_id"]].astype(str)
    aligned = order.merge(system.adequacy.astype({"input_id": str}), on="input_id", how="left")
    return {s: numbers(aligned[s]) for s in PRODUCTION_ADEQUACY if system.adequacy[s].notna().any()}


def production_sources(instances: pd.DataFrame) -> dict:
    """A dataset's input ids and sources, in table order (the production table's first column)."""
    return {"input_id": [str(v) for v in instances["input_id"]],
            "source": [str(v) for v in instances["source"]]}


def production_texts(instances: pd.DataFrame, block: int = INPUT_BLOCK) -> list[dict]:
    """A dataset's references in blocks of ``block`` inputs."""
    if block < 1:
        raise ValueError(f"block = {block!r}: at least one input per block")
    return [
        {"references": [[str(r) for r in refs]
                        for refs in instances["references"].iloc[start:start + block]]}
        for start in range(0, len(instances), block)
    ]


def production_outputs(instances: pd.DataFrame, system: ProductionSystem,
                       block: int = INPUT_BLOCK) -> list[dict]:
    """A system's samples and distances in the blocks of ``production_texts``: per input its
    samples in order of ``sample_index`` and, per probe, ``{"H": [...], "M": [...], "C": [...]}``
    (NaN distances, undefined pairs, left out as every statistic leaves them out)."""
    if block < 1:
        raise ValueError(f"block = {block!r}: at least one input per block")
    samples = {k: g.sort_values("sample_index")["text"].astype(str).tolist()
               for k, g in system.samples.astype({"input_id": str}).groupby("input_id")}
    defined = system.distances.dropna(subset=["distance"]).astype({"input_id": str})
    # One pass over the pairs (millions at paper scale), not one filter per input and probe.
    found = {key: np.round(group.to_numpy(dtype=float), DIGITS).tolist()
             for key, group in defined.groupby(["input_id", "probe", "kind"], sort=False)["distance"]}
    probes = list(dict.fromkeys(system.divergences["probe"]))
    ids = [str(v) for v in instances["input_id"]]
    chunks = []
    for start in range(0, len(ids), block):
        part = ids[start:start + block]
        pairs = [{probe: {kind: found.get((input_id, probe, kind), []) for kind in ("H", "M", "C")}
                  for probe in probes} for input_id in part]
        chunks.append({"samples": [samples.get(i, []) for i in part], "distances": pairs})
    return chunks
