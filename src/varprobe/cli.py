"""Command line: one subcommand per workflow stage. The Snakemake rules call these, nothing else.

Every subcommand reads tables, calls the package and writes tables atomically; errors end the
process with a one-line message that names the culprit (``varprobe: error: ...``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from varprobe import tables


def _fetch(args: argparse.Namespace) -> None:
    from varprobe.data.sources import fetch, resolve_mirror

    fetch(args.dataset, Path(args.dest), resolve_mirror(args.mirror), args.file)


def _provo_data(args: argparse.Namespace) -> None:
    from varprobe.data.provo import contexts_table, read_norms, responses_table

    norms = read_norms(Path(args.norms))
    texts = None if args.texts == ["all"] else [int(t) for t in args.texts]
    tables.write(contexts_table(norms, texts), args.contexts_out, "provo_contexts")
    tables.write(responses_table(norms, texts), args.responses_out, "provo_responses")


ENUMERATION_KEYS = ("method", "target_mass", "max_forward_tokens", "expand_batch")
"""Keys of a decoding entry that configure enumeration, not the decoding algorithm."""


def _decoding(entry: str):
    """The decoding algorithm of a decoding's config entry (JSON)."""
    from varprobe.sampling.decoding import Decoding

    return Decoding(**{k: v for k, v in json.loads(entry).items() if k not in ENUMERATION_KEYS})


def _job_spec(args: argparse.Namespace):
    """The model of ``args.model`` on the device its job may use (``--gpus``, ``--cpu-fallback``)."""
    import dataclasses

    import torch

    from varprobe.models.loading import run_device
    from varprobe.models.spec import ModelSpec

    spec = ModelSpec.from_config(json.loads(args.model))
    device = run_device(spec, args.gpus, args.cpu_fallback, torch.cuda.is_available())
    if device != spec.device:
        print(f"model {spec.name!r} configured for {spec.device!r} runs on {device!r}", file=sys.stderr)
    return dataclasses.replace(spec, device=device)


def _load_model(args: argparse.Namespace):
    """The causal LM of ``args.model``, loaded on the device its job may use, and that device."""
    from varprobe.models.loading import load_causal_lm

    spec = _job_spec(args)
    return load_causal_lm(spec), spec.device


def _provo_sample(args: argparse.Namespace) -> None:
    from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
    from varprobe.sampling.shards import shard_rows

    decoding = _decoding(args.decoding)
    settings = SamplerSettings(args.n_samples, args.max_tokens, args.batch_size, args.seed)
    contexts = tables.read(args.contexts, "provo_contexts")
    rows_of_shard = shard_rows(contexts["text_id"].tolist(), args.shard, args.shards)
    contexts = contexts.iloc[rows_of_shard.start : rows_of_shard.stop]
    loaded, device = _load_model(args)
    sampler = CompleteWordSampler(loaded.model, loaded.tokenizer, decoding, settings)
    keys = list(zip(contexts["text_id"], contexts["word_number"], strict=True))
    work = ((key, ctx) for key, ctx in zip(keys, contexts["context"], strict=True))
    rows = []
    progress = tqdm(sampler.sample_many(work), total=len(keys), file=sys.stderr, mininterval=5,
                    desc=f"{loaded.spec.name}/{decoding.name} shard {args.shard}/{args.shards}")
    for key, draws in zip(keys, progress, strict=True):
        rows.extend(
            {"text_id": key[0], "word_number": key[1], "sample_index": d.sample_index, "text": d.text,
             "word": d.word, "failed": not d.word, "failure": d.failure, "n_tokens": d.n_tokens,
             "count": 1}
            for d in draws
        )
    metadata = {"model": json.loads(args.model), "decoding": decoding.name,
                "generation": decoding.parameters(), "sampler": vars(settings),
                "device": device, "shard": [args.shard, args.shards]}
    frame = pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_samples"]))
    tables.write(frame, args.out, "provo_samples", metadata)


def _provo_enumerate(args: argparse.Namespace) -> None:
    from varprobe.sampling.enumeration import EnumerationSettings, Enumerator

    entry = json.loads(args.decoding)
    decoding = _decoding(args.decoding)
    settings = EnumerationSettings(
        target_mass=entry.get("target_mass", EnumerationSettings.target_mass),
        max_forward_tokens=entry.get("max_forward_tokens", EnumerationSettings.max_forward_tokens),
        max_tokens=args.max_tokens,
        batch_size=entry.get("expand_batch", EnumerationSettings.batch_size),
    )
    contexts = tables.read(args.contexts, "provo_contexts")
    loaded, device = _load_model(args)
    enumerator = Enumerator(loaded.model, loaded.tokenizer, decoding, settings)
    rows = []
    work = contexts[["text_id", "word_number", "context"]].itertuples(index=False)
    for t, w, context in tqdm(work, total=len(contexts), file=sys.stderr, mininterval=5,
                              desc=f"{loaded.spec.name}/{decoding.name}"):
        found = enumerator.enumerate(context)
        shared = {"text_id": t, "word_number": w, "unresolved_mass": found.unresolved_mass,
                  "failure_mass": found.failure_mass, "forward_tokens": found.forward_tokens}
        rows.extend({**shared, "word": word, "failure": "", "probability": p} for word, p in found.words.items())
        rows.extend({**shared, "word": "", "failure": f, "probability": p} for f, p in found.failures.items())
    metadata = {"model": json.loads(args.model), "decoding": decoding.name,
                "generation": decoding.parameters(), "enumeration": vars(settings), "device": device}
    frame = pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_distribution"]))
    tables.write(frame, args.out, "provo_distribution", metadata)


def _provo_merge(args: argparse.Namespace) -> None:
    from varprobe.sampling.shards import merge_metadata

    parts = [tables.read(p, "provo_samples") for p in args.shards]
    metadata = merge_metadata([tables.read_metadata(p) for p in args.shards], args.shards)
    tables.write(pd.concat(parts, ignore_index=True), args.out, "provo_samples", metadata)


def _provo_ingest(args: argparse.Namespace) -> None:
    from varprobe.sampling.external import read_external_samples

    contexts = tables.read(args.contexts, "provo_contexts")
    samples = read_external_samples(args.samples_csv, contexts)
    tables.write(samples, args.out, "provo_samples", {"model": {"samples": args.samples_csv},
                                                      "decoding": "given"})


def _control_settings(args: argparse.Namespace):
    from varprobe.analysis.next_word import ControlSettings

    return ControlSettings(args.seed, args.resplits, args.ece_bins, args.bootstrap)


def _estimates(args: argparse.Namespace) -> tuple[dict, float]:
    """The model's per-context estimates from ``--samples`` or ``--distribution``, and its
    failure rate: the share of failed draws, or the mean resolved failure mass per context."""
    from varprobe.analysis.next_word import enumerated_estimates, sampled_estimates

    if args.samples:
        samples = tables.read(args.samples, "provo_samples")
        drawn = int(samples["count"].sum())
        failed = int(samples.loc[samples["failed"], "count"].sum())
        return sampled_estimates(samples), failed / drawn if drawn else float("nan")
    distribution = tables.read(args.distribution, "provo_distribution")
    per_context = distribution.groupby(["text_id", "word_number"])["failure_mass"].first()
    return enumerated_estimates(distribution), float(per_context.mean())


def _provo_divergence(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import context_table, model_summary

    settings = _control_settings(args)
    contexts = tables.read(args.contexts, "provo_contexts")
    estimates, failure_rate = _estimates(args)
    table, oracle_hits = context_table(
        contexts, tables.read(args.responses, "provo_responses"), estimates, settings
    )
    _write_system(args, table, model_summary(table, oracle_hits, failure_rate, settings))


def _provo_oracle(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import oracle_summary, oracle_table

    settings = _control_settings(args)
    table, confidences, hits = oracle_table(
        tables.read(args.contexts, "provo_contexts"),
        tables.read(args.responses, "provo_responses"),
        settings,
    )
    _write_system(args, table, oracle_summary(table, confidences, hits, settings))


def _write_system(args: argparse.Namespace, table: pd.DataFrame, summary: dict) -> None:
    names = {"model": args.model, "decoding": args.decoding}
    tables.write(table, args.tvd_out, "provo_tvd", names)
    tables.write(pd.DataFrame([{**names, **summary}]), args.system_out, "provo_system", names)


def _provo_summary(args: argparse.Namespace) -> None:
    rows = pd.concat([tables.read(p, "provo_system") for p in args.systems], ignore_index=True)
    tables.write(rows.sort_values(["model", "decoding"], ignore_index=True), args.out, "provo_system")


def _provo_figure_tvd(args: argparse.Namespace) -> None:
    from varprobe.plots.provo import tvd_density

    series = {}
    for path in args.tvd:
        names = tables.read_metadata(path)
        column = "tvd_oracle2_oracle1" if names["model"] == "oracle" else "tvd"
        series[(names["model"], names["decoding"])] = tables.read(path, "provo_tvd")[column].to_numpy()
    fig, table = tvd_density(series)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "provo_kde")


def _provo_figure_bars(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import human_counts
    from varprobe.metrics.distributions import mle
    from varprobe.plots.provo import word_bars

    contexts = tables.read(args.contexts, "provo_contexts")
    chosen = {tuple(int(x) for x in item.split(":")) for item in args.select}
    keys = set(zip(contexts["text_id"], contexts["word_number"], strict=True))
    missing = sorted(chosen - keys)
    if missing:
        raise ValueError(f"provo.figure_contexts names contexts {missing} that are not configured")
    mask = [k in chosen for k in zip(contexts["text_id"], contexts["word_number"], strict=True)]
    human = {k: mle(c) for k, c in human_counts(tables.read(args.responses, "provo_responses")).items()}
    model = {k: e.distribution for k, e in _estimates(args)[0].items() if e.distribution is not None}
    fig, table = word_bars(contexts[mask], human, model, args.label)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "provo_bars")


def _production_data(args: argparse.Namespace) -> None:
    from varprobe.data.instances import first_inputs
    from varprobe.data.production import read_instances

    table = read_instances(args.dataset, Path(args.raw_dir), args.split, args.references,
                           args.min_stories, args.turn_separator)
    tables.write(first_inputs(table, args.max_inputs), args.out, "production_instances")


def _production_sample(args: argparse.Namespace) -> None:
    from varprobe.models.loading import load_generator
    from varprobe.sampling.generate import (
        GenerationSettings, generate, generation_parameters, render_prompt,
    )

    decoding = _decoding(args.decoding)
    settings = GenerationSettings(args.n_samples, args.max_new_tokens, args.seed, args.chat)
    instances = tables.read(args.instances, "production_instances")
    spec = _job_spec(args)
    loaded = load_generator(spec)
    work = [(i, render_prompt(args.prompt, s)) for i, s in zip(instances["input_id"], instances["source"], strict=True)]
    rows = []
    progress = tqdm(generate(loaded, work, decoding, settings), total=len(work), file=sys.stderr,
                    desc=f"{spec.name}/{decoding.name}", mininterval=5)
    for (input_id, _), samples in zip(work, progress, strict=True):
        rows.extend({"input_id": input_id, "sample_index": j, "text": t} for j, t in enumerate(samples))
    metadata = {"model": json.loads(args.model), "decoding": decoding.name,
                "generation": generation_parameters(decoding, settings), "seed": args.seed,
                "prompt": args.prompt, "chat_template": settings.chat and not loaded.is_seq2seq,
                "device": spec.device}
    tables.write(pd.DataFrame(rows), args.out, "production_samples", metadata)


def _production_distances(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import Probes, pairwise_distances, probe_names
    from varprobe.probes.semantic import load_encoder
    from varprobe.probes.syntactic import load_pipeline

    instances = tables.read(args.instances, "production_instances")
    samples = tables.read(args.samples, "production_samples")
    spacy_name, encoder = json.loads(args.spacy_pipeline), json.loads(args.encoder)
    probes = Probes(tuple(args.orders), load_pipeline(args.language, spacy_name),
                    load_encoder(encoder) if encoder is not None else None, args.batch_size)
    by_input = samples.sort_values(["input_id", "sample_index"]).groupby("input_id")["text"].apply(list)
    items = [(i, list(refs), by_input.get(i, [])) for i, refs in
             zip(instances["input_id"], instances["references"], strict=True)]
    reasons = {
        "syntactic": f"no spaCy tagging pipeline configured for language {args.language!r}",
        "semantic": f"no sentence encoder configured for language {args.language!r}",
    }
    available = probes.available()
    unavailable = {p: reasons[p.split("-")[0]] for p in probe_names(probes.orders) if p not in available}
    tables.write(pairwise_distances(items, probes), args.out, "production_distances",
                 {"language": args.language, "spacy_pipeline": spacy_name, "encoder": encoder,
                  "unavailable": unavailable})


def _production_divergence(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import input_divergences

    instances = tables.read(args.instances, "production_instances")
    n_refs = dict(zip(instances["input_id"], instances["references"].map(len), strict=True))
    distances = tables.read(args.distances, "production_distances")
    metadata = tables.read_metadata(args.distances)
    tables.write(input_divergences(distances, n_refs, args.seed), args.out,
                 "production_divergences", metadata)


def _system_names(path: str) -> dict[str, str]:
    """dataset, model and decoding of a system's table from its path ``.../DATASET/MODEL/DECODING/x``."""
    dataset, model, decoding = Path(path).parts[-4:-1]
    return {"dataset": dataset, "model": model, "decoding": decoding}


def _production_summary(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import probe_names, summarise

    frames = []
    for path in args.divergences:
        unavailable = tables.read_metadata(path).get("unavailable", {})
        probes = probe_names(args.orders)
        summary = summarise(tables.read(path, "production_divergences"), probes, args.seed,
                            args.bootstrap)
        summary["available"] = ~summary["probe"].isin(list(unavailable))
        frames.append(summary.assign(**_system_names(path)))
    tables.write(pd.concat(frames, ignore_index=True), args.out, "production_summary")


def _production_miscalibrated(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import miscalibrated

    divergences = tables.read(args.divergences, "production_divergences")
    thresholds = json.loads(args.thresholds)
    unavailable = tables.read_metadata(args.divergences).get("unavailable", {})
    thresholds = {p: t for p, t in thresholds.items() if p not in unavailable}
    flagged = miscalibrated(divergences, args.statistic, thresholds, args.limit)
    instances = tables.read(args.instances, "production_instances").set_index("input_id")
    samples = tables.read(args.samples, "production_samples")
    by_input = samples.sort_values("sample_index").groupby("input_id")["text"].apply(list)
    rows = [
        {**_system_names(args.out), "statistic": args.statistic, "input_id": row["input_id"],
         "excess": row["excess"], "values": json.dumps({p: row[p] for p in thresholds}),
         "source": instances.loc[row["input_id"], "source"],
         "references": list(instances.loc[row["input_id"], "references"]),
         "samples": by_input.get(row["input_id"], [])}
        for _, row in flagged.iterrows()
    ]
    columns = list(tables.SCHEMAS["production_miscalibrated"])
    tables.write(pd.DataFrame(rows, columns=columns), args.out, "production_miscalibrated",
                 {"thresholds": thresholds})


def _production_figures(args: argparse.Namespace) -> None:
    from varprobe.plots import production as plots

    summary = tables.read(args.summary, "production_summary")
    divergences = pd.concat(
        [tables.read(p, "production_divergences").assign(**_system_names(p)) for p in args.divergences],
        ignore_index=True)
    human = pd.concat(
        [tables.read(p, "production_distances").query("kind == 'H'").assign(**_system_names(p))
         for p in args.human], ignore_index=True)
    figures = {
        "human_variability": plots.human_variability(human, args.probes),
        "mean_differences": plots.mean_differences(divergences, args.probes, args.decoding),
        "w1_densities": plots.w1_densities(divergences, args.probes, args.decoding),
        "mean_w1": plots.mean_w1(summary, args.probes),
    }
    for name, path in zip(figures, args.figures, strict=True):
        figures[name].savefig(path, dpi=120)


def _check_models(args: argparse.Namespace) -> None:
    from varprobe.models.loading import check_available
    from varprobe.models.spec import ModelSpec

    for entry in json.loads(args.models):
        check_available(ModelSpec.from_config(entry))


def _add_control(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--resplits", type=int, required=True)
    parser.add_argument("--ece-bins", type=int, required=True)
    parser.add_argument("--bootstrap", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--decoding", required=True)
    parser.add_argument("--contexts", required=True)
    parser.add_argument("--responses", required=True)
    parser.add_argument("--tvd-out", required=True)
    parser.add_argument("--system-out", required=True)


def _add_model_job(parser: argparse.ArgumentParser) -> None:
    """The options of a job that runs a model: its config entry, the decoding's, and which
    device it may use."""
    parser.add_argument("--model", required=True, help="the model's config entry as JSON")
    parser.add_argument("--decoding", required=True, help="the decoding's config entry as JSON")
    parser.add_argument("--gpus", type=int, default=1,
                        help="GPUs given to this job; 0 runs CUDA models on CPU")
    parser.add_argument("--cpu-fallback", action="store_true",
                        help="run CUDA models on CPU where no CUDA device is usable")


def _add_estimates(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--samples", help="a samples table (sampled decodings)")
    group.add_argument("--distribution", help="a distribution table (exact decodings)")


def build_parser() -> argparse.ArgumentParser:
    """The ``varprobe`` argument parser with one subcommand per stage."""
    parser = argparse.ArgumentParser(prog="varprobe", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    p = sub.add_parser("fetch", help="place a dataset's raw file (download or data mirror)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--file", default=None, help="which file of a dataset of several")
    p.add_argument("--dest", required=True)
    p.add_argument("--mirror", default=None, help="mirror folder (default: $VARPROBE_DATA_MIRROR)")
    p.set_defaults(run=_fetch)

    p = sub.add_parser("provo-data", help="Provo norms -> contexts and responses tables")
    p.add_argument("--norms", required=True)
    p.add_argument("--texts", nargs="+", required=True, help="passage ids, or 'all'")
    p.add_argument("--contexts-out", required=True)
    p.add_argument("--responses-out", required=True)
    p.set_defaults(run=_provo_data)

    p = sub.add_parser("provo-sample", help="draw complete next words from a model")
    _add_model_job(p)
    p.add_argument("--contexts", required=True)
    p.add_argument("--n-samples", type=int, required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--shard", type=int, default=1, help="which shard of the contexts (1-based)")
    p.add_argument("--shards", type=int, default=1, help="how many shards the contexts form")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_sample)

    p = sub.add_parser("provo-enumerate", help="exact complete next words by enumeration")
    _add_model_job(p)
    p.add_argument("--contexts", required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_enumerate)

    p = sub.add_parser("provo-merge", help="concatenate sample shards, in order, into one table")
    p.add_argument("--shards", nargs="+", required=True, help="the shard tables, in shard order")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_merge)

    p = sub.add_parser("provo-ingest", help="external samples CSV -> samples table")
    p.add_argument("--samples-csv", required=True)
    p.add_argument("--contexts", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_ingest)

    p = sub.add_parser("provo-divergence", help="per-context TVD, oracle control, ECE of a model")
    _add_control(p)
    _add_estimates(p)
    p.set_defaults(run=_provo_divergence)

    p = sub.add_parser("provo-oracle", help="the oracle control summarised as a system")
    _add_control(p)
    p.set_defaults(run=_provo_oracle)

    p = sub.add_parser("provo-summary", help="one row per system")
    p.add_argument("--systems", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_summary)

    p = sub.add_parser("provo-figure-tvd", help="KDE of per-context TVD (paper Fig. 2)")
    p.add_argument("--tvd", nargs="+", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_provo_figure_tvd)

    p = sub.add_parser("provo-figure-bars", help="top-15 human vs model words (paper Fig. 1)")
    p.add_argument("--contexts", required=True)
    p.add_argument("--responses", required=True)
    _add_estimates(p)
    p.add_argument("--label", required=True)
    p.add_argument("--select", nargs="+", required=True, help="contexts as TEXT_ID:WORD_NUMBER")
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_provo_figure_bars)

    p = sub.add_parser("production-data", help="a production dataset -> its instances table")
    p.add_argument("--dataset", required=True)
    p.add_argument("--raw-dir", required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--references", default="extra", help="wmt14: extra, original or all")
    p.add_argument("--min-stories", type=int, default=5, help="writingprompts")
    p.add_argument("--turn-separator", default="\n", help="dailydialog: between context turns")
    p.add_argument("--max-inputs", type=int, default=None)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_data)

    p = sub.add_parser("production-sample", help="N full productions per input from a model")
    _add_model_job(p)
    p.add_argument("--instances", required=True)
    p.add_argument("--prompt", required=True, help="template with {source}")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--n-samples", type=int, required=True)
    p.add_argument("--max-new-tokens", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_sample)

    p = sub.add_parser("production-distances", help="H, M and C probe distances of a system")
    p.add_argument("--instances", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--language", required=True)
    p.add_argument("--spacy-pipeline", required=True, help="JSON: a pipeline name or null")
    p.add_argument("--encoder", required=True, help="JSON: hub id, path, {package: ...} or null")
    p.add_argument("--orders", type=int, nargs="+", required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_distances)

    p = sub.add_parser("production-divergence", help="per-input means, differences, W1, control")
    p.add_argument("--instances", required=True)
    p.add_argument("--distances", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_divergence)

    p = sub.add_parser("production-summary", help="bootstrap means over inputs of every system")
    p.add_argument("--divergences", nargs="+", required=True)
    p.add_argument("--orders", type=int, nargs="+", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--bootstrap", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_summary)

    p = sub.add_parser("production-miscalibrated", help="the most miscalibrated inputs (Sec. 7)")
    p.add_argument("--instances", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--divergences", required=True)
    p.add_argument("--statistic", required=True)
    p.add_argument("--thresholds", required=True, help="JSON {probe: threshold}")
    p.add_argument("--limit", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_miscalibrated)

    p = sub.add_parser("production-figures", help="paper Figs. 2-5 from the production tables")
    p.add_argument("--summary", required=True)
    p.add_argument("--divergences", nargs="+", required=True)
    p.add_argument("--human", nargs="+", required=True, help="one distances table per dataset")
    p.add_argument("--probes", nargs="+", required=True)
    p.add_argument("--decoding", required=True, help="the decoding of Figs. 3 and 4")
    p.add_argument("--figures", nargs=4, required=True, help="Fig. 2, 3, 4, 5 paths")
    p.set_defaults(run=_production_figures)

    p = sub.add_parser("check-models", help="fail fast when a configured model is unreachable")
    p.add_argument("--models", required=True, help="the models list of the config as JSON")
    p.set_defaults(run=_check_models)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``varprobe`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError, RuntimeError, KeyError) as err:
        parser.exit(1, f"varprobe: error: {err}\n")


if __name__ == "__main__":
    main()
