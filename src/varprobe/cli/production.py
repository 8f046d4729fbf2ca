"""Subcommands of the production-variability study (Giulianelli et al. 2023)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from varprobe import resume, tables
from varprobe.cli.api import add_api_options
from varprobe.commands import (
    add_checkpoint,
    add_model_job,
    add_raw_checks,
    add_shard_options,
    job_spec,
    json_value,
    merge_shards,
    verify_raw,
)
from varprobe.data import DATASETS
from varprobe.data.instances import INPUT_CHOICES, cap_references
from varprobe.sampling.replies import REPLIES


def _production_data(args: argparse.Namespace) -> None:
    from varprobe.data import dataset, record_of

    record = record_of({**args.entry, "name": args.dataset}) if args.entry else dataset(args.dataset)
    raw_dir = Path(args.raw_dir)
    verify_raw(args.dataset, *(raw_dir / f for f in record.raw_files(args.split) if (raw_dir / f).is_file()),
               mirror=args.mirror, allow_unverified=args.allow_unverified)
    options = {option: getattr(args, option) for option in record.options}
    read = record.read_instances(raw_dir, args.split, not args.allow_unverified, **options)
    table = INPUT_CHOICES[args.input_choice](read, args.max_inputs, args.seed)
    available = dict(zip(table["input_id"], table["references"].map(len), strict=True))
    metadata = {"max_references": args.max_references, "seed": args.seed,
                "max_inputs": args.max_inputs, "input_choice": args.input_choice,
                "references_available": available,
                **({"data": read.attrs["provenance"]} if "provenance" in read.attrs else {})}
    tables.write(cap_references(table, args.max_references, args.seed), args.out,
                 "production_instances", metadata)


def _shard_instances(args: argparse.Namespace) -> pd.DataFrame:
    """The instances of this job's shard: a contiguous run of near-equal size, in input order
    (each input's productions depend on (seed, input, sample index) alone, so the shards'
    tables concatenate to the unsharded one)."""
    from varprobe.sampling.shards import shard_rows

    instances = tables.read(args.instances, "production_instances")
    rows = shard_rows(range(len(instances)), args.shard, args.shards)
    return instances.iloc[rows.start : rows.stop]


def _prompt_template(args: argparse.Namespace) -> tuple[str, dict]:
    """The job's prompt template: ``--prompt``, or with ``--few-shot K`` its few-shot form over K
    examples of ``--examples`` drawn with ``--seed`` (``data.few_shot``), none of them an input
    of ``--instances``; and what was drawn, for the samples' metadata."""
    from varprobe.data.few_shot import choose_examples, few_shot_template

    if args.few_shot is None:
        return args.prompt, {}
    if args.examples is None:
        raise ValueError("--few-shot needs --examples (the instances table the examples are drawn from)")
    inputs = set(tables.read(args.instances, "production_instances")["source"])
    chosen = choose_examples(tables.read(args.examples, "production_instances"), args.few_shot,
                             args.seed, inputs)
    return few_shot_template(args.prompt, chosen), {"few_shot": {
        "k": args.few_shot, "split": str(chosen["split"].iloc[0]), "template": args.prompt,
        "input_ids": list(chosen["input_id"])}}


def _production_sample(args: argparse.Namespace) -> None:
    from varprobe.models.loading import load_generator
    from varprobe.models.spec import ModelSpec
    from varprobe.sampling.decoding import Decoding
    from varprobe.sampling.generate import (
        DEFAULT_BATCH_SIZE,
        GenerationSettings,
        generate,
        generation_parameters,
        render_prompt,
    )
    from varprobe.sampling.memory import AUTO, halving

    if ModelSpec.from_config(args.model).is_api:
        _production_api_sample(args)
        return
    decoding = Decoding.from_config(args.decoding)
    settings = GenerationSettings(args.n_samples, args.max_new_tokens, args.seed, args.chat,
                                  system=args.system_prompt, reply=args.reply)
    instances = _shard_instances(args)
    template, drawn = _prompt_template(args)
    spec = job_spec(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback,
                    checkpoint=args.checkpoint)
    loaded = load_generator(spec)
    work = [(i, render_prompt(template, s)) for i, s in zip(instances["input_id"], instances["source"], strict=True)]
    metadata = {"model": args.model, "decoding": decoding.name,
                "generation": generation_parameters(decoding, settings), "seed": args.seed,
                "prompt": template, "chat_template": settings.chat and not loaded.is_seq2seq,
                "system_prompt": settings.system, "reply": settings.reply, "device": spec.device, "shard": [args.shard, args.shards], **drawn}
    rows = _finished_rows(args.out, metadata, len(work))
    skip = {row["input_id"] for row in rows}
    finished: set = set()   # the inputs drawn before a halving (batch_size: auto) are not drawn again

    def draw(size: int, _done: int):
        for input_id, samples in generate(loaded, work, decoding, settings, batch_size=size,
                                          skip=skip | finished, template=template):
            finished.add(input_id)
            yield input_id, samples

    job = f"{spec.name}/{decoding.name} shard {args.shard}/{args.shards}"
    productions = halving(draw, args.batch_size or DEFAULT_BATCH_SIZE, auto=spec.batch_size == AUTO, what=job)
    progress = tqdm(productions, total=len(work) - len(skip), file=sys.stderr,
                    desc=f"{spec.name}/{decoding.name}", mininterval=5)
    for input_id, samples in progress:
        rows.extend({"input_id": input_id, "sample_index": j, "text": t} for j, t in enumerate(samples))
        resume.keep(pd.DataFrame(rows), args.out, "production_samples", metadata)
    order = {input_id: k for k, (input_id, _) in enumerate(work)}
    table = pd.DataFrame(rows, columns=list(tables.SCHEMAS["production_samples"]))
    table = table.sort_values("input_id", key=lambda ids: ids.map(order), kind="stable")
    tables.write(table, args.out, "production_samples", metadata)
    resume.clear(args.out)


def _finished_rows(out: str, metadata: dict, n_inputs: int) -> list[dict]:
    """The sample rows that a cut-off run of this job left beside ``out`` (``varprobe.resume``);
    said on stderr when there are any."""
    done = resume.finished(out, "production_samples", metadata)
    if done is None:
        return []
    print(f"{resume.RESUMING} {done['input_id'].nunique()} of {n_inputs} inputs were finished by a run that was "
          f"cut off ({resume.partial_path(out)})", file=sys.stderr)
    return done.to_dict("records")


def _production_merge(args: argparse.Namespace) -> None:
    merge_shards(args.shards, args.out, "production_samples")


def _production_api_sample(args: argparse.Namespace) -> None:
    """``production-sample`` for a model behind an endpoint (``varprobe.api.production``); the
    endpoint applies its own chat template (api.endpoint chat), so ``--chat`` does not apply."""
    from varprobe.api.cache import ReplyCache
    from varprobe.api.client import ApiClient
    from varprobe.api.production import api_productions
    from varprobe.cli.api import api_endpoint, api_metadata
    from varprobe.sampling.decoding import Decoding
    from varprobe.sampling.generate import render_prompt

    endpoint = api_endpoint(args)
    decoding = Decoding.from_config(args.decoding)
    instances = _shard_instances(args)
    template, drawn = _prompt_template(args)
    work = [(i, render_prompt(template, s))
            for i, s in zip(instances["input_id"], instances["source"], strict=True)]
    with ApiClient(endpoint, ReplyCache(args.api_cache)) as client:
        productions = api_productions(client, work, decoding, n_samples=args.n_samples,
                                      max_new_tokens=args.max_new_tokens, seed=args.seed,
                                      system=args.system_prompt, reply=args.reply)
        print(client.report(), file=sys.stderr)
    rows = [{"input_id": input_id, "sample_index": j, "text": t}
            for (input_id, _), samples in zip(work, productions, strict=True) for j, t in enumerate(samples)]
    metadata = {"model": args.model, "decoding": decoding.name,
                **api_metadata(endpoint, decoding, args.max_new_tokens), "n_samples": args.n_samples,
                "seed": args.seed, "prompt": template, "chat_template": endpoint.endpoint == "chat",
                "system_prompt": args.system_prompt, "reply": args.reply, "device": "api", "shard": [args.shard, args.shards], **drawn}
    tables.write(pd.DataFrame(rows, columns=list(tables.SCHEMAS["production_samples"])), args.out,
                 "production_samples", metadata)


def _production_distances(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import Probes, pairwise_distances
    from varprobe.models.packing import pack_linears
    from varprobe.probes.semantic import load_encoder
    from varprobe.probes.syntactic import load_pipeline

    instances = tables.read(args.instances, "production_instances")
    samples = tables.read(args.samples, "production_samples")
    spacy_name, encoder = args.spacy_pipeline, args.encoder
    sentence_encoder = load_encoder(encoder) if encoder is not None else None
    if sentence_encoder is not None:
        # The encoder's products from oneDNN-packed weights (on CPU in float32): the sentence
        # encoder is most of this job's time; embeddings agree with the unpacked ones to 1e-5.
        pack_linears(sentence_encoder)
    probes = Probes(tuple(args.orders), load_pipeline(args.language, spacy_name), sentence_encoder,
                    args.batch_size)
    by_input = samples.sort_values(["input_id", "sample_index"]).groupby("input_id")["text"].apply(list)
    items = [(i, list(refs), by_input.get(i, [])) for i, refs in
             zip(instances["input_id"], instances["references"], strict=True)]
    items, truncation = _truncated(items, args)
    unavailable = probes.unavailable(args.language)
    tables.write(pairwise_distances(items, probes), args.out, "production_distances",
                 {"language": args.language, "spacy_pipeline": spacy_name, "encoder": encoder,
                  "unavailable": unavailable, "truncation": truncation})


def _truncated(items: list, args: argparse.Namespace) -> tuple[list, dict]:
    """``items`` with every reference and sample cut to ``--max-response-tokens`` tokens of the
    ``--truncation-tokenizer`` (``probes/truncation.py``; unchanged without a budget), and
    what was done: the budget, the tokenizer and how many texts were cut on each side."""
    from varprobe.analysis.production import distinct_texts
    from varprobe.probes.truncation import load_tokenizer, truncate

    if args.max_response_tokens is None:
        return items, {"max_tokens": None}
    if args.truncation_tokenizer is None:
        raise ValueError("--max-response-tokens needs --truncation-tokenizer (the tokenizer that "
                         "counts the tokens)")
    spec = args.truncation_tokenizer
    texts = distinct_texts(items)
    cut = dict(zip(texts, truncate(texts, load_tokenizer(spec), args.max_response_tokens), strict=True))
    changed = {text for text, short in cut.items() if short != text}
    references = [t for _, refs, _ in items for t in refs]
    samples = [t for _, _, drawn in items for t in drawn]
    summary = {"max_tokens": args.max_response_tokens, "tokenizer": spec,
               "references_cut": sum(t in changed for t in references), "references": len(references),
               "samples_cut": sum(t in changed for t in samples), "samples": len(samples)}
    print(f"truncation to {args.max_response_tokens} tokens: {summary['references_cut']} of "
          f"{len(references)} references and {summary['samples_cut']} of {len(samples)} samples cut",
          file=sys.stderr)
    return [(i, [cut[t] for t in refs], [cut[t] for t in drawn]) for i, refs, drawn in items], summary


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
    from varprobe.analysis.production import summarise
    from varprobe.probes import probe_names

    frames = []
    for path in args.divergences:
        unavailable = tables.read_metadata(path).get("unavailable", {})
        probes = probe_names(args.orders)
        summary = summarise(tables.read(path, "production_divergences"), probes, args.seed,
                            args.bootstrap)
        summary["available"] = ~summary["probe"].isin(list(unavailable))
        frames.append(summary.assign(**_system_names(path)))
    tables.write(pd.concat(frames, ignore_index=True), args.out, "production_summary")


def _production_adequacy(args: argparse.Namespace) -> None:
    from varprobe.analysis.adequacy import IDENTIFIER, copy_samples, input_adequacy

    instances = tables.read(args.instances, "production_instances")
    if args.copy_source:
        samples, prompt = copy_samples(instances), None
    else:
        samples = tables.read(args.samples, "production_samples")
        prompt = tables.read_metadata(args.samples).get("prompt")
    tables.write(input_adequacy(instances, samples, args.language, simplification=args.simplification), args.out,
                 "production_adequacy", {"language": args.language, "identifier": IDENTIFIER,
                                         "prompt": prompt, "copy_source": args.copy_source})


COPY_FOLDER = "copy_source"
"""The folder of a dataset's copy-baseline adequacy table: ``.../DATASET/copy_source/adequacy.parquet``."""


def _copy_names(path: str) -> dict[str, str]:
    """dataset, model and decoding of a copy baseline's table from its path
    ``.../DATASET/copy_source/x`` (model ``COPY_BASELINE``, decoding empty)."""
    from varprobe.analysis.adequacy import COPY_BASELINE

    parts = Path(path).parts
    if len(parts) < 3 or parts[-2] != COPY_FOLDER:
        raise ValueError(f"--copy-adequacy {path}: a copy baseline's table is at "
                         f".../DATASET/{COPY_FOLDER}/adequacy.parquet")
    return {"dataset": parts[-3], "model": COPY_BASELINE, "decoding": ""}


def _production_adequacy_summary(args: argparse.Namespace) -> None:
    from varprobe.analysis.adequacy import summarise

    frames = []
    for path, names in [*((p, _copy_names(p)) for p in args.copy_adequacy),
                        *((p, _system_names(p)) for p in args.adequacy)]:
        language = tables.read_metadata(path)["language"]
        summary = summarise(tables.read(path, "production_adequacy"), args.seed, args.bootstrap)
        frames.append(summary.assign(**names, language=language))
    columns = list(tables.SCHEMAS["production_adequacy_summary"])
    tables.write(pd.concat(frames, ignore_index=True)[columns], args.out, "production_adequacy_summary")


def _production_beats_copy(args: argparse.Namespace) -> None:
    from varprobe.analysis.adequacy import beats_copy

    summary = tables.read(args.summary, "production_adequacy_summary")
    tables.write(beats_copy(summary), args.out, "production_beats_copy")


def _production_miscalibrated(args: argparse.Namespace) -> None:
    from varprobe.analysis.production import miscalibrated

    divergences = tables.read(args.divergences, "production_divergences")
    thresholds = args.thresholds
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
    from varprobe.results_page import paper

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
        "mean_w1": plots.mean_w1(summary, args.probes, paper.GIULIANELLI_LEVELS["w1_decoding"]),
    }
    for name, path in zip(figures, args.figures, strict=True):
        figures[name].savefig(path, dpi=120)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("production-data", help="a production dataset -> its instances table")
    p.add_argument("--dataset", required=True,
                   help=f"a registered dataset ({', '.join(DATASETS)}), or the name of --entry's")
    p.add_argument("--entry", type=json_value, default=None,
                   help="the config entry (JSON) of a dataset that brings its own file "
                        "(file: or datasets:, varprobe.data.user_task)")
    p.add_argument("--raw-dir", required=True)
    p.add_argument("--split", required=True)
    for name, record in DATASETS.items():
        for option, default in record.options.items():
            p.add_argument(f"--{option.replace('_', '-')}", type=type(default), default=default,
                           help=f"{name} only (default {default!r})")
    p.add_argument("--max-inputs", type=int, default=None)
    p.add_argument("--input-choice", choices=tuple(INPUT_CHOICES), default="first",
                   help="which --max-inputs inputs: the first ones, or a seeded uniform choice (--seed)")
    p.add_argument("--max-references", type=int, default=None,
                   help="keep a seeded choice of at most this many references per input")
    p.add_argument("--seed", type=int, default=0, help="the reference choice's seed")
    add_raw_checks(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_data)

    p = sub.add_parser("production-sample", help="N full productions per input from a model")
    add_model_job(p)
    p.add_argument("--instances", required=True)
    p.add_argument("--prompt", required=True, help="template with {source}")
    p.add_argument("--few-shot", type=int, default=None,
                   help="K: put K solved examples of --examples (drawn with --seed) before each input")
    p.add_argument("--examples", default=None,
                   help="the instances table (another split) that --few-shot draws its examples from")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--system-prompt", default=None,
                   help="the chat template's system turn (default: the template's own)")
    p.add_argument("--reply", choices=REPLIES, default="whole",
                   help="how a production is cut: whole, or its first non-empty line")
    p.add_argument("--n-samples", type=int, required=True)
    p.add_argument("--max-new-tokens", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--batch-size", type=int, default=None,
                   help="rows (samples) in flight (default: sampling.generate.DEFAULT_BATCH_SIZE); "
                        "speed and memory only, never the productions")
    add_shard_options(p, "inputs")
    add_checkpoint(p)
    add_api_options(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_sample)

    p = sub.add_parser("production-merge", help="concatenate production sample shards, in order")
    p.add_argument("--shards", nargs="+", required=True, help="the shard tables, in shard order")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_merge)

    p = sub.add_parser("production-distances", help="H, M and C probe distances of a system")
    p.add_argument("--instances", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--language", required=True)
    p.add_argument("--spacy-pipeline", type=json_value, required=True, help="JSON: a pipeline name or null")
    p.add_argument("--encoder", type=json_value, required=True,
                   help="JSON: hub id, path, {package: ...} or null")
    p.add_argument("--orders", type=int, nargs="+", required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--max-response-tokens", type=int, default=None,
                   help="cut every reference and sample to this many tokens before probing")
    p.add_argument("--truncation-tokenizer", type=json_value, default=None,
                   help="JSON: hub id, path or {package: ...} of the tokenizer that counts them")
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

    p = sub.add_parser("production-adequacy",
                       help="per input: chrF, BLEU, SARI, output-language, empty and copy shares")
    p.add_argument("--instances", required=True)
    outputs = p.add_mutually_exclusive_group(required=True)
    outputs.add_argument("--samples", help="a system's samples table")
    outputs.add_argument("--copy-source", action="store_true",
                         help="the copy baseline: each input's source as its one output")
    p.add_argument("--language", required=True, help="the task's output language (ISO 639-1)")
    p.add_argument("--simplification", action="store_true",
                   help="a simplification task: score SARI (else NaN)")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_adequacy)

    p = sub.add_parser("production-adequacy-summary",
                       help="bootstrap means over inputs of every system's adequacy and copy baseline")
    p.add_argument("--adequacy", nargs="+", required=True,
                   help="per-input adequacy tables, at .../DATASET/MODEL/DECODING/adequacy.parquet")
    p.add_argument("--copy-adequacy", nargs="+", default=[],
                   help=f"each dataset's copy baseline, at .../DATASET/{COPY_FOLDER}/adequacy.parquet")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--bootstrap", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_adequacy_summary)

    p = sub.add_parser("production-beats-copy",
                       help="per system: whether it beats copying the source on its task")
    p.add_argument("--summary", required=True, help="the adequacy summary, with the copy baselines")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_production_beats_copy)

    p = sub.add_parser("production-miscalibrated", help="the most miscalibrated inputs (Sec. 7)")
    p.add_argument("--instances", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--divergences", required=True)
    p.add_argument("--statistic", required=True)
    p.add_argument("--thresholds", type=json_value, required=True, help="JSON {probe: threshold}")
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
