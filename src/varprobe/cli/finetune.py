"""Subcommands of fine-tuning (Ilia & Aziz 2024, App. F): train a model's last blocks on Provo
passages or on a production dataset's references, and plot the losses (Fig. 18)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from varprobe import tables
from varprobe.commands import add_model_job, add_raw_checks, job_spec, json_value, verify_raw


def _settings(args: argparse.Namespace):
    from varprobe.finetune.settings import FinetuneSettings

    return FinetuneSettings.from_config(args.settings)


def _base_spec(args: argparse.Namespace):
    """The base model on the job's device; an entry that is already fine-tuned is an error."""
    spec = job_spec(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback)
    if spec.checkpoint:
        raise ValueError(f"model {spec.name!r}: fine-tuning starts from the base model's entry, "
                         f"not from one with checkpoint {spec.checkpoint!r}")
    return spec


def _train_and_write(args: argparse.Namespace, loaded, train_examples, validation_examples,
                     settings, data: dict, fold: int | None) -> None:
    """Train ``loaded`` and write its checkpoint (the kept epoch's weights) and losses table (its
    rows of the kept epoch marked ``kept``, and which parameters trained); ``data`` describes the
    examples in the manifest and the table's metadata."""
    from varprobe.finetune.examples import end_token
    from varprobe.finetune.training import train
    from varprobe.models.checkpoint import save_checkpoint

    tokenizer, model = loaded.tokenizer, loaded.model
    pad = tokenizer.pad_token_id
    if pad is None and loaded.is_seq2seq:
        raise ValueError(f"model {loaded.spec.name!r}: its tokenizer has no padding token")
    pad = pad if pad is not None else end_token(model, tokenizer)
    name = args.name or loaded.spec.name

    label = name if fold is None else f"{name} fold {fold}"

    def progress(loss) -> None:
        print(f"{label} epoch {loss.epoch} {loss.split} loss {loss.loss:.4f} "
              f"({loss.tokens} tokens)", file=sys.stderr)

    training = train(model, train_examples, validation_examples, settings, pad_id=pad, on_loss=progress)
    print(f"{label} keeps epoch {training.kept_epoch} ({settings.keep_epoch}; trains "
          f"{settings.trainable_parts})", file=sys.stderr)
    manifest = {"base": args.model, "name": name, "settings": settings.to_dict(),
                "data": data, "device": loaded.spec.device, "kept_epoch": training.kept_epoch}
    save_checkpoint(model, training.trainable, args.checkpoint_out, manifest)
    rows = [{"model": name, "fold": fold, "epoch": loss.epoch, "split": loss.split,
             "loss": loss.loss, "tokens": loss.tokens, "examples": loss.examples,
             "kept": loss.epoch == training.kept_epoch, "trainable_parts": settings.trainable_parts}
            for loss in training.losses]
    tables.write(pd.DataFrame(rows), args.losses_out, "finetune_losses",
                 {**manifest, "trainable": training.trainable})


def _finetune_provo(args: argparse.Namespace) -> None:
    from varprobe.data.provo import check_complete, passages_table, read_norms
    from varprobe.finetune.examples import length_limit, text_examples
    from varprobe.models.loading import load_causal_lm

    settings = _settings(args)
    for option, ids in (("--train-passages", args.train_passages),
                        ("--validation-passages", args.validation_passages)):
        if len(set(ids)) != len(ids):
            raise ValueError(f"{option} repeats passages {sorted({i for i in ids if ids.count(i) > 1})}")
    shared = sorted(set(args.train_passages) & set(args.validation_passages))
    if shared:
        raise ValueError(f"passages {shared} are both training and validation passages")
    verify_raw("provo", args.norms, mirror=args.mirror, allow_unverified=args.allow_unverified)
    norms = read_norms(Path(args.norms))
    if not args.allow_unverified:
        check_complete(norms, args.train_passages + args.validation_passages)
    passages = passages_table(norms, args.train_passages + args.validation_passages)
    text = dict(zip(passages["text_id"], passages["text"], strict=True))
    loaded = load_causal_lm(_base_spec(args))
    limit = length_limit(loaded.model, settings.max_length)
    train_examples = text_examples(loaded.tokenizer, [text[i] for i in args.train_passages], limit)
    validation_examples = text_examples(
        loaded.tokenizer, [text[i] for i in args.validation_passages], limit)
    data = {"kind": "provo", "fold": args.fold, "train_passages": args.train_passages,
            "validation_passages": args.validation_passages}
    _train_and_write(args, loaded, train_examples, validation_examples, settings, data, args.fold)


def _pairs(instances: pd.DataFrame, prompt: str) -> list[tuple[str, str, str]]:
    """``(input_id/j, rendered prompt, reference j)`` for every reference of every instance."""
    from varprobe.sampling.generate import render_prompt

    return [(f"{input_id}/{j}", render_prompt(prompt, source), reference)
            for input_id, source, references in
            zip(instances["input_id"], instances["source"], instances["references"], strict=True)
            for j, reference in enumerate(references)]


def _finetune_production(args: argparse.Namespace) -> None:
    from varprobe.finetune.examples import end_token, length_limit, pair_examples
    from varprobe.models.loading import load_generator

    settings = _settings(args)
    train_instances = tables.read(args.instances, "production_instances")
    validation_instances = (tables.read(args.validation_instances, "production_instances")
                            if args.validation_instances else train_instances.iloc[:0])
    loaded = load_generator(_base_spec(args))
    chat = args.chat and not loaded.is_seq2seq
    end = end_token(loaded.model, loaded.tokenizer)
    limit = length_limit(loaded.model, settings.max_length)
    examples = {
        split: pair_examples(loaded.tokenizer, _pairs(frame, args.prompt), seq2seq=loaded.is_seq2seq,
                             chat=chat, end=end, max_length=limit)
        for split, frame in (("train", train_instances), ("validation", validation_instances))
    }
    data = {"kind": "production", "prompt": args.prompt, "chat_template": chat,
            "train_inputs": len(train_instances), "train_pairs": len(examples["train"]),
            "validation_inputs": len(validation_instances),
            "validation_pairs": len(examples["validation"])}
    _train_and_write(args, loaded, examples["train"], examples["validation"], settings, data, None)


def _finetune_figure(args: argparse.Namespace) -> None:
    from varprobe.plots.finetune import loss_curves

    losses = pd.concat([tables.read(p, "finetune_losses") for p in args.losses], ignore_index=True)
    fig, table = loss_curves(losses)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "finetune_losses")


def _finetune_comparison(args: argparse.Namespace) -> None:
    import numpy as np

    from varprobe.analysis.finetune_comparison import comparison_summary, paired_tvds
    from varprobe.plots.finetune import tvd_histograms

    if not len(args.decodings) == len(args.finetuned) == len(args.pretrained):
        raise ValueError("give one --finetuned and one --pretrained table per --decodings name")
    rng = np.random.default_rng(args.seed)
    pairs, rows = [], []
    for decoding, tuned, base in zip(args.decodings, args.finetuned, args.pretrained, strict=True):
        paired = paired_tvds(tables.read(tuned, "provo_tvd"), tables.read(base, "provo_tvd"), decoding)
        rows.append({"model": args.model, "base": args.base, "decoding": decoding,
                     **comparison_summary(paired, rng, args.bootstrap)})
        pairs.append(paired)
    paired = pd.concat(pairs, ignore_index=True)
    tables.write(paired, args.contexts_out, "finetune_pairs", {"model": args.model, "base": args.base})
    tables.write(pd.DataFrame(rows), args.summary_out, "finetune_comparison")
    tvd_histograms(paired, args.model, args.base).savefig(args.figure, dpi=150)


def _add_training(parser: argparse.ArgumentParser) -> None:
    add_model_job(parser, decoding=False)
    parser.add_argument("--settings", type=json_value, required=True,
                        help="JSON of fine-tuning settings (FinetuneSettings; omitted keys default)")
    parser.add_argument("--name", default=None,
                        help="the fine-tuned model's name in the losses table (default: the base's)")
    parser.add_argument("--checkpoint-out", required=True, help="checkpoint folder to write")
    parser.add_argument("--losses-out", required=True)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("finetune-provo",
                       help="train a causal LM's last blocks on Provo passages (one fold)")
    _add_training(p)
    p.add_argument("--norms", required=True, help="the Provo norms CSV")
    add_raw_checks(p)
    p.add_argument("--train-passages", type=int, nargs="+", required=True)
    p.add_argument("--validation-passages", type=int, nargs="+", required=True)
    p.add_argument("--fold", type=int, required=True, help="the fold this model holds out (1..k)")
    p.set_defaults(run=_finetune_provo)

    p = sub.add_parser("finetune-production",
                       help="train a model's last (decoder) blocks on prompt -> reference pairs")
    _add_training(p)
    p.add_argument("--instances", required=True, help="training instances table")
    p.add_argument("--validation-instances", default=None, help="validation instances table")
    p.add_argument("--prompt", required=True, help="template with {source}")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=False)
    p.set_defaults(run=_finetune_production)

    p = sub.add_parser("finetune-figure", help="training and validation loss per epoch (Fig. 18)")
    p.add_argument("--losses", nargs="+", required=True, help="losses tables (one per fold)")
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_finetune_figure)

    p = sub.add_parser("finetune-comparison",
                       help="TVD of a fine-tuned and its pretrained model on the held-out contexts")
    p.add_argument("--model", required=True, help="the fine-tuned model's name")
    p.add_argument("--base", required=True, help="the pretrained model's name")
    p.add_argument("--decodings", nargs="+", required=True)
    p.add_argument("--finetuned", nargs="+", required=True, help="its tvd tables, per decoding")
    p.add_argument("--pretrained", nargs="+", required=True, help="the base's, per decoding")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--bootstrap", type=int, required=True)
    p.add_argument("--contexts-out", required=True)
    p.add_argument("--summary-out", required=True)
    p.add_argument("--figure", required=True)
    p.set_defaults(run=_finetune_comparison)
