"""Subcommands of the Provo next-word study (Ilia & Aziz 2024): data, samples, divergences, figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from varprobe import tables
from varprobe.commands import (
    add_checkpoint,
    add_control,
    add_estimates,
    add_model_job,
    add_raw_checks,
    add_shard_options,
    control_settings,
    json_value,
    load_model,
    merge_shards,
    read_estimates,
    verify_raw,
)


def _provo_data(args: argparse.Namespace) -> None:
    from varprobe.data.provo import contexts_table, dropped_responses, read_norms, responses_table
    from varprobe.data.sources import Digest
    from varprobe.data.user_files import provenance

    if args.corpus:
        _corpus_data(args)
        return
    verify_raw("provo", args.norms, mirror=args.mirror, allow_unverified=args.allow_unverified)
    norms = read_norms(Path(args.norms))
    texts = None if args.texts == ["all"] else [int(t) for t in args.texts]
    contexts = contexts_table(norms, texts, verify=not args.allow_unverified)
    data = {"data": {**provenance(Path(args.norms), Digest.of(Path(args.norms))), "corpus": "provo",
                     "language": "en", "rows": len(norms), "contexts": len(contexts)}}
    tables.write(contexts, args.contexts_out, "provo_contexts", data)
    dropped = dropped_responses(norms, texts)
    print(f"provo: {int(dropped['count'].sum())} responses hold no word (punctuation only) and are "
          f"dropped, in {len(dropped)} contexts", file=sys.stderr)
    metadata = {**data, "dropped_responses": {"total": int(dropped["count"].sum()),
                                              "contexts": dropped.astype(int).values.tolist()}}
    tables.write(responses_table(norms, texts), args.responses_out, "provo_responses", metadata)


def _corpus_data(args: argparse.Namespace) -> None:
    """``provo-data`` on a cloze corpus of the config (``--corpus``, ``varprobe.data.cloze``)."""
    from varprobe.data.cloze import MIN_RESPONSES, read_corpus, without_thin_contexts

    corpus = read_corpus(args.corpus)
    contexts, responses, dropped = corpus["contexts"], corpus["responses"], corpus["dropped"]
    if args.texts != ["all"]:
        texts = [int(t) for t in args.texts]
        unknown = sorted(set(texts) - set(contexts["text_id"]))
        if unknown:
            raise ValueError(f"provo.texts names passages {unknown} that corpus "
                             f"{corpus['metadata']['corpus']!r} does not hold")
        contexts, responses, dropped = (t[t["text_id"].isin(texts)].reset_index(drop=True)
                                        for t in (contexts, responses, dropped))
    name = corpus["metadata"].get("file", corpus["metadata"]["corpus"])
    contexts, responses, thin = without_thin_contexts(contexts, responses, name)
    print(f"{corpus['metadata']['corpus']}: {len(contexts)} contexts, {int(responses['count'].sum())} "
          f"responses; {int(dropped['count'].sum())} responses hold no word and are dropped, in "
          f"{len(dropped)} contexts", file=sys.stderr)
    if thin:
        shown = ", ".join(f"{t}:{w} ({n})" for t, w, n in thin[:5]) + (" ..." if len(thin) > 5 else "")
        print(f"{name}: {len(thin)} contexts hold fewer than {MIN_RESPONSES} responses with a word, which "
              f"the oracle control cannot split in two, and are left out of the study (text_id:word_number "
              f"(responses)): {shown}", file=sys.stderr)
    metadata = {"data": {**corpus["metadata"], "contexts": len(contexts),
                         "responses": int(responses["count"].sum()),
                         "dropped_responses": int(dropped["count"].sum()),
                         "contexts_left_out": {"reason": f"fewer than {MIN_RESPONSES} responses with a word",
                                               "count": len(thin), "contexts": thin}}}
    tables.write(contexts, args.contexts_out, "provo_contexts", metadata)
    tables.write(responses, args.responses_out, "provo_responses",
                 {**metadata, "dropped_responses": {"total": int(dropped["count"].sum()),
                                                    "contexts": dropped.astype(int).values.tolist()}})


def _provo_sample(args: argparse.Namespace) -> None:
    from dataclasses import replace

    from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings, draw_rows
    from varprobe.sampling.decoding import Decoding
    from varprobe.sampling.memory import AUTO, halving
    from varprobe.sampling.shards import shard_rows
    from varprobe.sampling.word_model import WordModel

    decoding = Decoding.from_config(args.decoding)
    settings = SamplerSettings(args.n_samples, args.max_tokens, args.batch_size, args.seed)
    contexts = tables.read(args.contexts, "provo_contexts")
    if args.texts:
        contexts = contexts[contexts["text_id"].isin(args.texts)]
    else:
        rows_of_shard = shard_rows(contexts["text_id"].tolist(), args.shard, args.shards)
        contexts = contexts.iloc[rows_of_shard.start : rows_of_shard.stop]
    loaded, device = load_model(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback,
                                checkpoint=args.checkpoint)
    keys = list(zip(contexts["text_id"], contexts["word_number"], strict=True))
    work = list(zip(keys, contexts["context"], strict=True))
    job = f"{loaded.spec.name}/{decoding.name} shard {args.shard}/{args.shards}"
    lm = WordModel(loaded.model, loaded.tokenizer)  # one for every batch size halving tries
    drawn = halving(lambda size, done: CompleteWordSampler(lm, decoding, replace(settings, batch_size=size)
                                                           ).sample_many(work[done:]),
                    settings.batch_size, auto=loaded.spec.batch_size == AUTO, what=job)
    rows = draw_rows(keys, tqdm(drawn, total=len(keys), file=sys.stderr, mininterval=5, desc=job))
    metadata = {"model": args.model, "decoding": decoding.name,
                "generation": decoding.parameters(), "sampler": vars(settings),
                "device": device, "shard": [args.shard, args.shards],
                "checkpoint": args.checkpoint, "texts": args.texts, "loaded": loaded.provenance}
    frame = pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_samples"]))
    tables.write(frame, args.out, "provo_samples", metadata)


def _provo_enumerate(args: argparse.Namespace) -> None:
    from varprobe.sampling.decoding import Decoding
    from varprobe.sampling.enumeration import EnumerationSettings, Enumerator
    from varprobe.sampling.word_model import WordModel

    entry = args.decoding
    decoding = Decoding.from_config(entry)
    defaults = EnumerationSettings()
    settings = EnumerationSettings(
        target_mass=entry.get("target_mass", defaults.target_mass),
        max_forward_tokens=entry.get("max_forward_tokens", defaults.max_forward_tokens),
        max_tokens=args.max_tokens,
        min_mass=entry.get("min_mass", defaults.min_mass),
        batch_size=args.batch_size,
    )
    contexts = tables.read(args.contexts, "provo_contexts")
    texts = entry.get("texts")
    if texts:
        absent = sorted(set(texts) - set(contexts["text_id"].tolist()))
        if absent:
            raise ValueError(f"decoding {decoding.name!r}: texts {absent} are not passages of "
                             f"{args.contexts} (provo.texts)")
        contexts = contexts[contexts["text_id"].isin(texts)]
    loaded, device = load_model(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback)
    enumerator = Enumerator(WordModel(loaded.model, loaded.tokenizer), decoding, settings)
    rows = []
    keys = list(zip(contexts["text_id"], contexts["word_number"], strict=True))
    found_all = tqdm(enumerator.enumerate_many(contexts["context"], [f"context ({t}, {w})" for t, w in keys]),
                     total=len(keys), file=sys.stderr,
                     mininterval=5, desc=f"{loaded.spec.name}/{decoding.name}")
    for (t, w), found in zip(keys, found_all, strict=True):
        shared = {"text_id": t, "word_number": w, "unresolved_mass": found.unresolved_mass,
                  "failure_mass": found.failure_mass, "forward_tokens": found.forward_tokens}
        rows.extend({**shared, "word": word, "failure": "", "probability": p} for word, p in found.words.items())
        rows.extend({**shared, "word": "", "failure": f, "probability": p} for f, p in found.failures.items())
    metadata = {"model": args.model, "decoding": decoding.name,
                "generation": decoding.parameters(), "enumeration": vars(settings), "device": device,
                "texts": texts}
    frame = pd.DataFrame(rows, columns=list(tables.SCHEMAS["provo_distribution"]))
    tables.write(frame, args.out, "provo_distribution", metadata)


def _provo_merge(args: argparse.Namespace) -> None:
    merge_shards(args.shards, args.out, "provo_samples")


def _provo_ingest(args: argparse.Namespace) -> None:
    from varprobe.data.provo import read_norms
    from varprobe.sampling.external import read_external_samples

    contexts = tables.read(args.contexts, "provo_contexts")
    verify_raw("provo", args.norms, mirror=args.mirror, allow_unverified=args.allow_unverified)
    norms = read_norms(Path(args.norms))
    corpus = set(zip(norms["Text_ID"], norms["Word_Number"], strict=True))
    samples, coverage, warnings = read_external_samples(args.samples_csv, contexts, corpus)
    for line in [*warnings, coverage.describe(args.samples_csv)]:
        print(line, file=sys.stderr)
    tables.write(samples, args.out, "provo_samples", {"model": {"samples": args.samples_csv},
                                                      "decoding": "given",
                                                      "coverage": coverage.as_metadata()})


def _provo_published(args: argparse.Namespace) -> None:
    from varprobe.analysis.published_samples import AUTHORS_VALUES, model_switch_table, samples_table
    from varprobe.data.provo import read_norms
    from varprobe.data.published_generations import (
        DATASET, corpus_contexts, locate_records, place_records, read_records, system,
    )
    from varprobe.results_page.paper import TABLE_1

    published = system(args.system)
    verify_raw("provo", args.norms, mirror=args.mirror, allow_unverified=args.allow_unverified)
    verify_raw(DATASET, *args.files, mirror=args.mirror, allow_unverified=args.allow_unverified)
    norms = read_norms(Path(args.norms))
    located = locate_records(read_records(published, args.files), corpus_contexts(norms))
    placement = place_records(located)
    print(placement.describe(published.name), file=sys.stderr)
    with tables.atomic(args.out) as partial:
        samples_table(published, placement).to_csv(partial, index=False)
    names = {"system": published.name, "column": published.column}
    switches = model_switch_table(published, located, norms, args.seed)
    paper = {"protocol": "paper", "switch": "", **dict(zip(AUTHORS_VALUES, TABLE_1[published.column], strict=True))}
    rows = pd.concat([switches, pd.DataFrame([paper])], ignore_index=True).assign(**names)
    values = rows[rows["protocol"] == "authors"].iloc[0]
    print(f"provo-published: {published.name} under the authors' protocol: "
          + ", ".join(f"{k} {values[k]:.3f}" for k in AUTHORS_VALUES), file=sys.stderr)
    tables.write(rows[list(tables.SCHEMAS["provo_published"])], args.authors_out, "provo_published", names)


def _provo_divergence(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import context_table, model_summary

    settings = control_settings(seed=args.seed, resplits=args.resplits, ece_bins=args.ece_bins,
                                bootstrap=args.bootstrap)
    contexts = tables.read(args.contexts, "provo_contexts")
    estimates, failure_rate = read_estimates(args.samples, args.distribution)
    table, oracle_hits = context_table(
        contexts, tables.read(args.responses, "provo_responses"), estimates, settings
    )
    _write_system(args, table, model_summary(table, oracle_hits, failure_rate, settings))


def _provo_oracle(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import human_summary, oracle_summary, oracle_table

    settings = control_settings(seed=args.seed, resplits=args.resplits, ece_bins=args.ece_bins,
                                bootstrap=args.bootstrap)
    contexts = tables.read(args.contexts, "provo_contexts")
    responses = tables.read(args.responses, "provo_responses")
    table, confidences, hits = oracle_table(contexts, responses, settings)
    _write_system(args, table, oracle_summary(table, confidences, hits, settings))
    names = {"model": "human", "decoding": "mle"}
    row = {**names, **human_summary(contexts, responses, settings)}
    tables.write(pd.DataFrame([row]), args.human_out, "provo_system", names)


def _provo_authors(args: argparse.Namespace) -> None:
    from varprobe.analysis.authors_protocol import VALUES, switch_table
    from varprobe.analysis.next_word import ControlSettings
    from varprobe.data.provo import check_complete, read_norms

    verify_raw("provo", args.norms, mirror=args.mirror, allow_unverified=args.allow_unverified)
    norms = read_norms(Path(args.norms))
    texts = None if args.texts == ["all"] else [int(t) for t in args.texts]
    if not args.allow_unverified:
        check_complete(norms, texts)
    if texts is not None:
        norms = norms[norms["Text_ID"].isin(texts)]
    settings = ControlSettings(seed=args.seed, resplits=args.resplits, ece_bins=args.ece_bins)
    table = switch_table(norms, settings)
    for label in ("ours", "authors", "paper"):
        row = table[table["protocol"] == label].iloc[0]
        print(f"provo-authors: {label}: " + ", ".join(f"{k} {row[k]:.3f}" for k in VALUES), file=sys.stderr)
    tables.write(table, args.out, "provo_authors",
                 {"seed": args.seed, "resplits": args.resplits, "ece_bins": args.ece_bins, "texts": args.texts})


def _write_system(args: argparse.Namespace, table: pd.DataFrame, summary: dict) -> None:
    names = {"model": args.model, "decoding": args.decoding}
    tables.write(table, args.tvd_out, "provo_tvd", names)
    tables.write(pd.DataFrame([{**names, **summary}]), args.system_out, "provo_system", names)


def _provo_summary(args: argparse.Namespace) -> None:
    from varprobe.analysis.next_word import coverage_notes

    rows = pd.concat([tables.read(p, "provo_system") for p in args.systems], ignore_index=True)
    for note in coverage_notes(rows):
        print(note, file=sys.stderr)
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


def _provo_figure_size(args: argparse.Namespace) -> None:
    from varprobe.analysis.model_size import QUANTITIES, size_table
    from varprobe.plots.provo import model_size

    table = size_table(tables.read(args.summary, "provo_system"), args.parameters)
    tables.write(table, args.table, "provo_model_size")
    model_size(table, QUANTITIES).savefig(args.figure, dpi=150)


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
    estimates, _ = read_estimates(args.samples, args.distribution)
    model = {k: e.distribution for k, e in estimates.items() if e.distribution is not None}
    fig, table = word_bars(contexts[mask], human, model, args.label)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "provo_bars")


def _add_system(parser: argparse.ArgumentParser) -> None:
    """The options of a job that scores one system with the oracle control: the control's
    (``add_control``), the system's names and its two tables (``_write_system``)."""
    add_control(parser)
    parser.add_argument("--model", required=True, help="the system's model name")
    parser.add_argument("--decoding", required=True, help="the system's decoding name")
    parser.add_argument("--tvd-out", required=True)
    parser.add_argument("--system-out", required=True)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("provo-data", help="Provo norms, or a cloze corpus -> contexts and responses tables")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--norms", help="the Provo norms file")
    source.add_argument("--corpus", type=json_value, help="a cloze corpus's config entry (JSON, varprobe.data.cloze)")
    p.add_argument("--texts", nargs="+", required=True, help="passage ids, or 'all'")
    p.add_argument("--contexts-out", required=True)
    p.add_argument("--responses-out", required=True)
    add_raw_checks(p)
    p.set_defaults(run=_provo_data)

    p = sub.add_parser("provo-sample", help="draw complete next words from a model")
    add_model_job(p)
    p.add_argument("--contexts", required=True)
    p.add_argument("--n-samples", type=int, required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    add_shard_options(p, "contexts")
    p.add_argument("--texts", type=int, nargs="+", default=None,
                   help="sample these passages' contexts instead of the shard's share")
    add_checkpoint(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_sample)

    p = sub.add_parser("provo-enumerate", help="exact complete next words by enumeration")
    add_model_job(p)
    p.add_argument("--contexts", required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True, help="open prefixes per forward pass")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_enumerate)

    p = sub.add_parser("provo-merge", help="concatenate sample shards, in order, into one table")
    p.add_argument("--shards", nargs="+", required=True, help="the shard tables, in shard order")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_merge)

    p = sub.add_parser("provo-ingest", help="external samples CSV -> samples table")
    p.add_argument("--samples-csv", required=True)
    p.add_argument("--contexts", required=True)
    p.add_argument("--norms", required=True, help="the Provo norms: which contexts exist at all")
    add_raw_checks(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_ingest)

    p = sub.add_parser("provo-published",
                       help="a published system's samples (Ilia & Aziz) -> samples CSV, and its Table 1 "
                            "values under ours, the authors' protocol and each of its switches")
    p.add_argument("--system", required=True, help="the published system (varprobe.data.published_generations)")
    p.add_argument("--files", nargs="+", required=True, help="its files, as fetched")
    p.add_argument("--norms", required=True, help="the Provo norms: the contexts and responses")
    add_raw_checks(p)
    p.add_argument("--seed", type=int, required=True, help="our oracle splits' seed (the authors' are fixed)")
    p.add_argument("--out", required=True, help="the samples CSV (text_id, word_number, sample, count)")
    p.add_argument("--authors-out", required=True,
                   help="its values under ours, the authors' protocol and each switch, beside the paper's")
    p.set_defaults(run=_provo_published)

    p = sub.add_parser("provo-divergence", help="per-context TVD, oracle control, ECE of a model")
    _add_system(p)
    add_estimates(p)
    p.set_defaults(run=_provo_divergence)

    p = sub.add_parser("provo-oracle", help="the oracle control (and the human MLE) summarised as systems")
    _add_system(p)
    p.add_argument("--human-out", required=True, help="the summary row of the full human MLE")
    p.set_defaults(run=_provo_oracle)

    p = sub.add_parser("provo-authors",
                       help="Table 1's human and oracle values under ours, the authors' protocol and each switch")
    p.add_argument("--norms", required=True, help="the Provo norms file (raw responses, every position)")
    p.add_argument("--texts", nargs="+", required=True, help="passage ids, or 'all'")
    p.add_argument("--seed", type=int, required=True, help="our splits' seed (the authors' are fixed)")
    p.add_argument("--resplits", type=int, required=True)
    p.add_argument("--ece-bins", type=int, required=True)
    add_raw_checks(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_authors)

    p = sub.add_parser("provo-summary", help="one row per system")
    p.add_argument("--systems", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_summary)

    p = sub.add_parser("provo-figure-tvd", help="KDE of per-context TVD (paper Fig. 2)")
    p.add_argument("--tvd", nargs="+", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_provo_figure_tvd)

    p = sub.add_parser("provo-figure-size", help="Table 1's quantities against model size, beside the oracle")
    p.add_argument("--summary", required=True, help="the Provo summary table")
    p.add_argument("--parameters", type=json_value, required=True,
                   help='JSON: each sized model\'s parameter count, {"name": 135000000, ...}')
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_provo_figure_size)

    p = sub.add_parser("provo-figure-bars", help="top-15 human vs model words (paper Fig. 1)")
    p.add_argument("--contexts", required=True)
    p.add_argument("--responses", required=True)
    add_estimates(p)
    p.add_argument("--label", required=True)
    p.add_argument("--select", nargs="+", required=True, help="contexts as TEXT_ID:WORD_NUMBER")
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_provo_figure_bars)
