"""Token-level calibration of a causal LM over a text corpus (Liu et al. 2024): the corpus texts,
and the teacher-forced pass that streams every position's next-token distribution into a
``CalibrationAccumulator``, once with the corpus's labels and once with labels drawn from the
model itself (the estimators' floor: what a perfectly calibrated model scores on as many
positions); the family's subcommands and its tables (``FAMILY``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.analysis.family import Family
from varprobe.commands import json_value, load_model
from varprobe.metrics.token_calibration import CalibrationAccumulator
from varprobe.models.window import position_limit


def provo_passages(contexts: pd.DataFrame, max_texts: int | None = None) -> list[str]:
    """Each Provo passage's full text, rebuilt from the contexts table: for every text_id (in
    order), its last context + " " + that context's word. ``max_texts``: the first that many."""
    if contexts.empty:
        raise ValueError("contexts table is empty: no Provo passages to score")
    last = contexts.sort_values(["text_id", "word_number"]).groupby("text_id").tail(1)
    texts = [f"{c} {w}" if c else w for c, w in zip(last["context"], last["word"], strict=True)]
    return texts[:max_texts] if max_texts else texts


def reference_texts(instances: pd.DataFrame, max_texts: int | None = None) -> list[str]:
    """The references of a production instances table, instance by instance, in order (empty ones
    skipped). ``max_texts``: the first that many texts."""
    texts = [str(r) for refs in instances["references"] for r in refs if str(r).strip()]
    if not texts:
        raise ValueError("instances table holds no references to score")
    return texts[:max_texts] if max_texts else texts


def max_length(model) -> int:
    """The longest input the model takes (``varprobe.models.window.position_limit``), or 1024
    if it does not say."""
    return position_limit(model.config) or 1024


def token_sequences(tokenizer, texts: Iterable[str]) -> Iterator[list[int]]:
    """Each text's token ids, with the tokenizer's BOS prepended when it has one (then every
    token of the text is predicted; without one, prediction starts at the second token)."""
    bos = getattr(tokenizer, "bos_token_id", None)
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        yield ([bos] if bos is not None else []) + list(ids)


def windows(ids: list[int], length: int) -> Iterator[tuple[list[int], list[int]]]:
    """(inputs, targets) windows of at most ``length`` inputs covering ``ids``: every token after
    the first is a target exactly once; a long text restarts its context at each window."""
    for start in range(0, len(ids) - 1, length):
        inputs = ids[start : start + length]
        targets = ids[start + 1 : start + 1 + length]
        yield inputs[: len(targets)], targets


def drawn_labels(probs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One label per row drawn from that row's own distribution by inverse CDF
    (``varprobe.sampling.decoding.inverse_cdf``, the samplers' own): row i's label is the first
    class k with p_i1 + ... + p_ik > u_i (p_i1 + ... + p_iK), for ``uniforms`` u_i in [0, 1). A
    class of probability 0 is never drawn. Labels drawn so make a perfectly calibrated model
    (P(y_i = k) = p_ik), whose metrics measure the binned estimators' finite-sample bias."""
    import torch

    from varprobe.sampling.decoding import inverse_cdf

    cdf = torch.from_numpy(np.cumsum(probs, axis=1))
    return inverse_cdf(cdf, torch.from_numpy(uniforms)[:, None])[:, 0].numpy()


def score_texts(model, tokenizer, texts: Iterable[str], accumulator: CalibrationAccumulator,
                rows_per_update: int = 64, floor: CalibrationAccumulator | None = None,
                seed: int = 0) -> int:
    """Run ``model`` teacher-forced over each text and add the softmax of every position to
    ``accumulator``, ``rows_per_update`` positions at a time (float64 softmax, so rows sum to 1
    well within the accumulator's tolerance). With ``floor``, add every position to it as well
    with a label drawn from its own distribution (``drawn_labels``; position j of the corpus takes
    the j-th uniform of ``numpy.random.default_rng(seed)``, so the labels do not depend on
    ``rows_per_update``). Returns the number of texts that had a position."""
    import torch

    device = next(model.parameters()).device
    length = max_length(model)
    uniforms = np.random.default_rng(seed)
    scored = 0
    with torch.no_grad():
        for ids in token_sequences(tokenizer, texts):
            if len(ids) < 2:
                continue
            scored += 1
            for inputs, targets in windows(ids, length):
                logits = model(torch.tensor([inputs], device=device)).logits[0]
                if logits.shape[-1] != accumulator.n_classes:
                    raise ValueError(
                        f"model gives {logits.shape[-1]} logits per position, the accumulator "
                        f"expects {accumulator.n_classes}"
                    )
                labels = np.asarray(targets, dtype=np.int64)
                for start in range(0, len(targets), rows_per_update):
                    part = logits[start : start + rows_per_update].double()
                    probs = torch.softmax(part, dim=-1).cpu().numpy()
                    accumulator.update(probs, labels[start : start + rows_per_update])
                    if floor is not None:
                        floor.update(probs, drawn_labels(probs, uniforms.random(len(probs))))
    return scored


def metric_table(accumulator: CalibrationAccumulator) -> pd.DataFrame:
    """One row per (metric, bins) with value and bin_weight_sum, plus n_positions and
    vocabulary_size."""
    frame = pd.DataFrame(accumulator.results())
    frame["n_positions"] = accumulator.n_positions
    frame["vocabulary_size"] = accumulator.n_classes
    return frame


def rsd_table(metrics: pd.DataFrame, ddof: int = 1) -> pd.DataFrame:
    """Per metric, the mean, standard deviation (``ddof``) and relative standard deviation of its
    values over the bins in ``metrics`` (Liu et al. 2024, Table 1)."""
    from varprobe.metrics.token_calibration import relative_std

    rows = []
    for name, group in metrics.groupby("metric", sort=False):
        values = group.sort_values("bins")["value"].to_numpy()
        rows.append({
            "metric": name, "bins": ",".join(map(str, sorted(group["bins"]))),
            "n_bins_values": len(values), "mean": values.mean(),
            "std": values.std(ddof=ddof) if len(values) > ddof else np.nan,
            "rsd": relative_std(values, ddof), "ddof": ddof,
        })
    return pd.DataFrame(rows)


def summary_table(metrics: pd.DataFrame, rsd: pd.DataFrame, headline_bins: int) -> pd.DataFrame:
    """Per model and metric: the value at ``headline_bins`` beside the metric's RSD over bins.

    ``metrics`` and ``rsd`` carry a ``model`` column (several models stacked)."""
    chosen = metrics[metrics["bins"] == headline_bins]
    if chosen.empty:
        raise ValueError(f"bins {headline_bins} is not among the computed bins {sorted(metrics['bins'].unique())}")
    merged = chosen.merge(rsd[["model", "metric", "rsd"]], on=["model", "metric"], how="left")
    return merged.sort_values(["model", "metric"], ignore_index=True)


# The command line: the rules call these subcommands.


def _token_calibration(args: argparse.Namespace) -> None:
    if args.contexts:
        texts = provo_passages(tables.read(args.contexts, "provo_contexts"), args.max_texts)
    else:
        texts = reference_texts(tables.read(args.instances, "production_instances"), args.max_texts)
    loaded, device = load_model(args)
    n_classes = loaded.model.get_output_embeddings().weight.shape[0]
    accumulator = CalibrationAccumulator(n_classes, bins=tuple(args.bins))
    floor = CalibrationAccumulator(n_classes, bins=tuple(args.bins))
    n_texts = score_texts(loaded.model, loaded.tokenizer, texts, accumulator, args.rows_per_update, floor,
                          args.seed)
    if accumulator.n_positions == 0:
        raise ValueError(f"corpus {args.corpus!r}: no text has two tokens, nothing to score")
    names = {"model": loaded.spec.name, "corpus": args.corpus}
    metrics = metric_table(accumulator).assign(**names)
    rsd = rsd_table(metrics, args.ddof).assign(**names)
    run = {**names, "model_entry": args.model, "device": device, "n_texts": n_texts}
    metadata = {**run, "resolution": accumulator.resolution, "sparse_pairs": accumulator.n_sparse_pairs,
                "accumulator_peak_bytes": accumulator.peak_nbytes}
    print(f"{loaded.spec.name}: {n_texts} texts, {accumulator.n_positions} positions, "
          f"{n_classes} classes; accumulator peak {accumulator.peak_nbytes / 2**20:.1f} MiB "
          f"({accumulator.n_sparse_pairs} sparse pairs)", file=sys.stderr)
    tables.write(metrics, args.out, "token_calibration", metadata)
    tables.write(rsd, args.rsd_out, "token_calibration_rsd", metadata)
    tables.write(metric_table(floor).assign(**names), args.floor_out, "token_calibration",
                 {**run, "labels": "drawn from the model's own distributions", "seed": args.seed})


def _token_calibration_summary(args: argparse.Namespace) -> None:
    from varprobe.plots.token_calibration import metrics_against_bins

    metrics = pd.concat([tables.read(p, "token_calibration") for p in args.metrics], ignore_index=True)
    rsd = pd.concat([tables.read(p, "token_calibration_rsd") for p in args.rsd], ignore_index=True)
    peaks = {(m := tables.read_metadata(p))["model"]: m["accumulator_peak_bytes"] for p in args.metrics}
    summary = summary_table(metrics, rsd, args.bins)
    summary["accumulator_peak_bytes"] = summary["model"].map(peaks)
    tables.write(summary, args.out, "token_calibration_summary", {"headline_bins": args.bins})
    floors = pd.concat([tables.read(p, "token_calibration") for p in args.floors], ignore_index=True)
    curve = (pd.concat([metrics.assign(labels="corpus"), floors.assign(labels="drawn")], ignore_index=True)
             .sort_values(["model", "labels", "metric", "bins"], ignore_index=True))
    metrics_against_bins(curve).savefig(args.figure, dpi=150)
    tables.write(curve, args.table, "token_calibration_figure")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("token-calibration",
                       help="a model's ECE, cw-ECE and Full-ECE over a corpus, for every number of bins")
    p.add_argument("--model", type=json_value, required=True, help="the model's config entry as JSON")
    p.add_argument("--gpus", type=int, default=1, help="GPUs given to this job; 0 runs CUDA models on CPU")
    p.add_argument("--cpu-fallback", action="store_true",
                   help="run CUDA models on CPU where no CUDA device is usable")
    corpus = p.add_mutually_exclusive_group(required=True)
    corpus.add_argument("--contexts", help="a Provo contexts table: its passages are the corpus")
    corpus.add_argument("--instances", help="a production instances table: its references are the corpus")
    p.add_argument("--corpus", required=True, help="the corpus's name, recorded in the tables")
    p.add_argument("--bins", type=int, nargs="+", required=True, help="numbers of bins M")
    p.add_argument("--max-texts", type=int, default=None, help="score only the first texts")
    p.add_argument("--ddof", type=int, default=1, help="delta degrees of freedom of the RSD's std")
    p.add_argument("--rows-per-update", type=int, default=64,
                   help="positions per accumulator update (memory only; results do not depend on it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the floor's drawn labels")
    p.add_argument("--out", required=True)
    p.add_argument("--rsd-out", required=True)
    p.add_argument("--floor-out", required=True,
                   help="the metrics with every label drawn from the model's own distribution: a "
                        "perfectly calibrated model's values, the estimators' finite-sample bias")
    p.set_defaults(run=_token_calibration)

    p = sub.add_parser("token-calibration-summary",
                       help="token calibration across models: headline table and figure")
    p.add_argument("--metrics", nargs="+", required=True)
    p.add_argument("--rsd", nargs="+", required=True)
    p.add_argument("--floors", nargs="+", required=True,
                   help="the models' floor tables (labels drawn from the model), drawn beside the metrics")
    p.add_argument("--bins", type=int, required=True, help="the headline number of bins")
    p.add_argument("--out", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_token_calibration_summary)


FAMILY = Family(
    keys=("token_calibration",),
    rule_file="token_calibration",
    register=register,
    provo=False,  # its corpus decides (config_checks.reference_problems)
    tables={
        # Token-level calibration (Liu et al. 2024): one row per metric x number of bins of a model
        # (metrics.parquet: the corpus's labels; floor.parquet: labels drawn from the model).
        "token_calibration": {
            "model": "string", "corpus": "string", "metric": "string", "bins": "int32",
            "value": "float64", "bin_weight_sum": "float64", "n_positions": "int64",
            "vocabulary_size": "int64",
        },
        # The relative standard deviation of each metric over the numbers of bins (paper Table 1).
        "token_calibration_rsd": {
            "model": "string", "corpus": "string", "metric": "string", "bins": "string",
            "n_bins_values": "int32", "mean": "float64", "std": "float64", "rsd": "float64",
            "ddof": "int32",
        },
        # The figure's numbers: the metrics (labels "corpus") and their floors (labels "drawn").
        "token_calibration_figure": {
            "model": "string", "corpus": "string", "labels": "string", "metric": "string",
            "bins": "int32", "value": "float64", "bin_weight_sum": "float64", "n_positions": "int64",
            "vocabulary_size": "int64",
        },
        "token_calibration_summary": {
            "model": "string", "corpus": "string", "metric": "string", "bins": "int32",
            "value": "float64", "rsd": "float64", "n_positions": "int64", "vocabulary_size": "int64",
            "accumulator_peak_bytes": "int64",
        },
    },
)
