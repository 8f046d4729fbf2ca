"""``varprobe.evaluate``: the next-word study (Ilia & Aziz 2024) of one model on a slice of the
Provo Corpus, in a notebook or a training loop, without Snakemake.

It runs the functions the workflow's rules call, in their order: ``provo-data`` (the contexts
and human responses of the passages), ``provo-sample`` (complete next words drawn from the
model), ``provo-divergence`` (per-context TVD to the humans with the oracle control, ECE) and
``provo-oracle`` (the oracle control and the human MLE as systems). With the same seed and
settings it gives the numbers the workflow gives: a draw depends only on (seed, context key,
model, decoding), never on the batch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from varprobe import tables
from varprobe.model_strings import parse_model
from varprobe.workflow_files import config_schema

__all__ = ["Evaluation", "evaluate"]


def provo_defaults() -> dict:
    """The config schema's defaults of the ``provo`` section: the values ``evaluate`` takes
    when it is not given them, the workflow's own."""
    section = config_schema()["properties"]["provo"]["properties"]
    return {key: entry["default"] for key, entry in section.items() if "default" in entry}


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """What ``evaluate`` computed, as the workflow's tables (their schemas in brackets).

    ``contexts`` (``provo_contexts``) and ``responses`` (``provo_responses``): the slice's
    contexts and human responses; ``samples`` (``provo_samples``): every draw; ``tvd``
    (``provo_tvd``): per context, TVD(model, humans) and the oracle control's TVD(O2, O1) among
    others; ``summary`` (``provo_system``): one row each for the model, the oracle control and
    the human MLE, with E TVD (eq. 2) and its 95% interval and the three ECEs."""

    contexts: pd.DataFrame
    responses: pd.DataFrame
    samples: pd.DataFrame
    tvd: pd.DataFrame
    summary: pd.DataFrame


def evaluate(
    model,
    tokenizer=None,
    *,
    name: str | None = None,
    texts: Sequence[int] = (1,),
    decoding: str | Mapping = "ancestral",
    seed: int = 0,
    norms: str | Path | None = None,
    data_mirror: str | Path | None = None,
    **settings,
) -> Evaluation:
    """The Provo next-word study of ``model`` on passages ``texts``.

    Parameters
    ----------
    model : str or torch.nn.Module
        A hub id or model folder, or a ``varprobe run --model`` string
        (``pretrained=ID,dtype=bfloat16,device=cuda,...``), loaded as the workflow loads that
        model entry; or a causal LM already in memory (with ``tokenizer``), sampled on the
        device it is on.
    tokenizer : optional
        The tokenizer of a model in memory; not given with a name.
    name : str, optional
        The model's name in the tables (default: the name ``varprobe run`` gives a model string,
        ``model`` for a model in memory).
    texts : sequence of int
        Provo passages, 1 to 55.
    decoding : str or mapping
        A sampled decoding: its name (``ancestral``) or its config entry
        (``{"name": "temperature-0.5", "temperature": 0.5}``).
    seed : int
        The config's ``seed``: of the draws, the oracle's resplits and the bootstrap.
    norms : str or Path, optional
        The Provo norms file; by default fetched (from ``data_mirror``, else
        ``$VARPROBE_DATA_MIRROR``, else downloaded) into ``$XDG_CACHE_HOME/varprobe/data``.
    data_mirror : str or Path, optional
        A local copy of the datasets (the config's ``data_mirror``).
    **settings
        Any of the config's ``provo`` settings ``n_samples``, ``max_tokens``, ``batch_size``,
        ``resplits``, ``ece_bins``, ``bootstrap_resamples`` (defaults: the config schema's).

    Returns
    -------
    Evaluation

    Raises
    ------
    ValueError
        For a decoding that does not sample (an exact enumeration runs in the workflow), an
        unknown setting, a tokenizer with a model name or none with a model in memory.
    """
    from varprobe.analysis.next_word import (
        ControlSettings, context_table, failure_rate, human_summary, model_summary, oracle_summary,
        oracle_table, sampled_estimates,
    )
    from varprobe.data.provo import contexts_table, read_norms, responses_table

    chosen = _settings(settings)
    entry = {"name": decoding} if isinstance(decoding, str) else dict(decoding)
    if entry.get("method", "sample") != "sample":
        raise ValueError(f"evaluate draws samples; decoding {entry['name']!r} is method "
                         f"{entry['method']!r}, which runs in the workflow (provo.decodings)")
    loaded_model, loaded_tokenizer, name = _model(model, tokenizer, name)
    raw = read_norms(Path(norms) if norms else _fetched_norms(data_mirror))
    contexts = tables.conform(contexts_table(raw, list(texts)), "provo_contexts")
    responses = tables.conform(responses_table(raw, list(texts)), "provo_responses")
    samples = _draws(loaded_model, loaded_tokenizer, entry, contexts, chosen, seed)

    control = ControlSettings(seed, chosen["resplits"], chosen["ece_bins"], chosen["bootstrap_resamples"])
    tvd, oracle_hits = context_table(contexts, responses, sampled_estimates(samples), control)
    oracle, confidences, hits = oracle_table(contexts, responses, control)
    rows = [{"model": name, "decoding": entry["name"],
             **model_summary(tvd, oracle_hits, failure_rate(samples), control)},
            {"model": "oracle", "decoding": "control", **oracle_summary(oracle, confidences, hits, control)},
            {"model": "human", "decoding": "mle", **human_summary(contexts, responses, control)}]
    summary = tables.conform(pd.DataFrame(rows), "provo_system")
    return Evaluation(contexts=contexts, responses=responses, samples=samples,
                      tvd=tables.conform(tvd, "provo_tvd"), summary=summary)


def _settings(given: Mapping) -> dict:
    """The ``provo`` settings of a call: ``given`` over the schema's defaults; ValueError naming
    a key that is not one of them."""
    known = ("n_samples", "max_tokens", "batch_size", "resplits", "ece_bins", "bootstrap_resamples")
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ValueError(f"evaluate takes no setting {unknown}; its provo settings: {', '.join(known)}")
    defaults = provo_defaults()
    return {key: given.get(key, defaults[key]) for key in known}


def _model(model, tokenizer, name: str | None):
    """The network, its tokenizer and its name in the tables: loaded from a name as a
    ``pretrained`` model entry is (``varprobe.models.loading.load_causal_lm``), or the model in
    memory as it is."""
    if isinstance(model, (str, Path)):
        if tokenizer is not None:
            raise ValueError("evaluate: a model given by name loads its own tokenizer; pass "
                             "a tokenizer only with a model in memory")
        from varprobe.models.loading import load_causal_lm
        from varprobe.models.spec import ModelSpec

        text = model if isinstance(model, str) and "=" in model else f"pretrained={model}"
        entry = parse_model(text, config_schema())
        entry["name"] = name or entry["name"]
        loaded = load_causal_lm(ModelSpec.from_config(entry))
        return loaded.model, loaded.tokenizer, entry["name"]
    if tokenizer is None:
        raise ValueError("evaluate: a model in memory needs its tokenizer (evaluate(model, tokenizer))")
    model.eval()
    return model, tokenizer, name or "model"


def _fetched_norms(mirror: str | Path | None) -> Path:
    """The Provo norms, fetched once into the data cache (``varprobe.data.fetching.fetch``,
    checked against their pinned digest)."""
    from varprobe.data.fetching import fetch, source_of, verify_copy
    from varprobe.data.sources import resolve_mirror

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "varprobe" / "data" / "provo"
    resolved = resolve_mirror(str(mirror) if mirror else None)
    path = cache / Path(source_of("provo").mirror_path).name
    if path.is_file():
        verify_copy("provo", path, resolved)
        return path
    cache.mkdir(parents=True, exist_ok=True)
    return fetch("provo", path, resolved)


def _draws(model, tokenizer, entry: dict, contexts: pd.DataFrame, chosen: dict, seed: int) -> pd.DataFrame:
    """``provo-sample``'s table for ``contexts``: ``n_samples`` complete words per context."""
    import torch

    from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings, draw_rows
    from varprobe.sampling.decoding import Decoding
    from varprobe.sampling.word_model import WordModel

    settings = SamplerSettings(chosen["n_samples"], chosen["max_tokens"], chosen["batch_size"], seed)
    sampler = CompleteWordSampler(WordModel(model, tokenizer), Decoding.from_config(entry), settings)
    keys = list(zip(contexts["text_id"], contexts["word_number"], strict=True))
    with torch.no_grad():
        rows = draw_rows(keys, sampler.sample_many(list(zip(keys, contexts["context"], strict=True))))
    return tables.conform(pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_samples"])), "provo_samples")
