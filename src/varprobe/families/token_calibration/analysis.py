"""Token-level calibration of a causal LM over a text corpus (Liu et al. 2024): the corpus texts,
and the teacher-forced pass that streams every position's next-token distribution into a
``CalibrationAccumulator``, once with the corpus's labels and once with labels drawn from the
model itself (the estimators' floor: what a perfectly calibrated model scores on as many
positions). The family's declaration is ``varprobe.families.token_calibration``, its
subcommands ``varprobe.families.token_calibration.cli``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from varprobe.metrics.token_calibration import CalibrationAccumulator, relative_std
from varprobe.models.window import position_limit


def provo_passages(contexts: pd.DataFrame, max_texts: int | None = None) -> list[str]:
    """Each Provo passage's full text, rebuilt from the contexts table: for every text_id (in
    order), its last context + " " + that context's word. ``max_texts``: the first that many.

    Parameters
    ----------
    contexts : pandas.DataFrame
        The contexts (``provo_contexts``).
    max_texts : int or None
        Keep the first that many passages (None: all).

    Returns
    -------
    list of str
        The passages' texts.
    """
    if contexts.empty:
        raise ValueError("contexts table is empty: no Provo passages to score")
    last = contexts.sort_values(["text_id", "word_number"]).groupby("text_id").tail(1)
    texts = [f"{c} {w}" if c else w for c, w in zip(last["context"], last["word"], strict=True)]
    return texts[:max_texts] if max_texts else texts


def reference_texts(instances: pd.DataFrame, max_texts: int | None = None) -> list[str]:
    """The references of a production instances table, instance by instance, in order (empty ones
    skipped). ``max_texts``: the first that many texts.

    Parameters
    ----------
    instances : pandas.DataFrame
        A production instances table.
    max_texts : int or None
        Keep the first that many texts (None: all).

    Returns
    -------
    list of str
        The references.
    """
    texts = [str(r) for refs in instances["references"] for r in refs if str(r).strip()]
    if not texts:
        raise ValueError("instances table holds no references to score")
    return texts[:max_texts] if max_texts else texts


def max_length(model) -> int:
    """The longest input the model takes (``varprobe.models.window.position_limit``), or 1024
    if it does not say.

    Parameters
    ----------
    model
        A causal LM.

    Returns
    -------
    int
        Its longest input, in tokens.
    """
    return position_limit(model.config) or 1024


def token_sequences(tokenizer, texts: Iterable[str]) -> Iterator[list[int]]:
    """Each text's token ids, with the tokenizer's BOS prepended when it has one (then every
    token of the text is predicted; without one, prediction starts at the second token).

    Parameters
    ----------
    tokenizer
        The model's tokenizer.
    texts : iterable of str
        The texts.

    Returns
    -------
    iterator of list of int
        Each text's token ids.
    """
    bos = getattr(tokenizer, "bos_token_id", None)
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        yield ([bos] if bos is not None else []) + list(ids)


def windows(ids: list[int], length: int) -> Iterator[tuple[list[int], list[int]]]:
    """(inputs, targets) windows of at most ``length`` inputs covering ``ids``: every token after
    the first is a target exactly once; a long text restarts its context at each window.

    Parameters
    ----------
    ids : list of int
        A text's token ids.
    length : int
        The most inputs of a window.

    Returns
    -------
    iterator of (list of int, list of int)
        The windows' inputs and targets.
    """
    for start in range(0, len(ids) - 1, length):
        inputs = ids[start : start + length]
        targets = ids[start + 1 : start + 1 + length]
        yield inputs[: len(targets)], targets


def drawn_labels(probs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One label per row drawn from that row's own distribution by inverse CDF
    (``varprobe.sampling.decoding.inverse_cdf``, the samplers' own): row i's label is the first
    class k with p_i1 + ... + p_ik > u_i (p_i1 + ... + p_iK), for ``uniforms`` u_i in [0, 1). A
    class of probability 0 is never drawn. Labels drawn so make a perfectly calibrated model
    (P(y_i = k) = p_ik), whose metrics measure the binned estimators' finite-sample bias.

    Parameters
    ----------
    probs : numpy.ndarray
        Rows of probabilities, shape (n, K).
    uniforms : numpy.ndarray
        One uniform in [0, 1) per row.

    Returns
    -------
    numpy.ndarray
        One class index per row.
    """
    import torch

    from varprobe.sampling.decoding import inverse_cdf

    cdf = torch.from_numpy(np.cumsum(probs, axis=1))
    return inverse_cdf(cdf, torch.from_numpy(uniforms)[:, None])[:, 0].numpy()


def score_texts(model, tokenizer, texts: Iterable[str], accumulator: CalibrationAccumulator, *,
                rows_per_update: int = 64, floor: CalibrationAccumulator | None = None,
                seed: int = 0) -> int:
    """Run ``model`` teacher-forced over each text and add the softmax of every position to
    ``accumulator``, ``rows_per_update`` positions at a time (float64 softmax, so rows sum to 1
    well within the accumulator's tolerance). With ``floor``, add every position to it as well
    with a label drawn from its own distribution (``drawn_labels``; position j of the corpus takes
    the j-th uniform of ``numpy.random.default_rng(seed)``, so the labels do not depend on
    ``rows_per_update``). Returns the number of texts that had a position.

    Parameters
    ----------
    model, tokenizer
        The causal LM and its tokenizer.
    texts : iterable of str
        The corpus texts.
    accumulator : CalibrationAccumulator
        Takes the positions with the corpus's labels.
    rows_per_update : int
        Positions added at a time.
    floor : CalibrationAccumulator or None
        Takes the positions with drawn labels (None: none drawn).
    seed : int
        The seed of the drawn labels.

    Returns
    -------
    int
        The number of texts that had a position.
    """
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
    vocabulary_size.

    Parameters
    ----------
    accumulator : CalibrationAccumulator
        The positions added.

    Returns
    -------
    pandas.DataFrame
        One row per metric and number of bins.
    """
    frame = pd.DataFrame(accumulator.results())
    frame["n_positions"] = accumulator.n_positions
    frame["vocabulary_size"] = accumulator.n_classes
    return frame


def rsd_table(metrics: pd.DataFrame, ddof: int = 1) -> pd.DataFrame:
    """Per metric, the mean, standard deviation (``ddof``) and relative standard deviation of its
    values over the bins in ``metrics`` (Liu et al. 2024, Table 1).

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``metric_table``'s rows.
    ddof : int
        The standard deviation's delta degrees of freedom.

    Returns
    -------
    pandas.DataFrame
        One row per metric.
    """
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

    ``metrics`` and ``rsd`` carry a ``model`` column (several models stacked).

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``metric_table``'s rows of several models.
    rsd : pandas.DataFrame
        ``rsd_table``'s rows of the same models.
    headline_bins : int
        The number of bins whose value is shown.

    Returns
    -------
    pandas.DataFrame
        One row per model and metric.
    """
    chosen = metrics[metrics["bins"] == headline_bins]
    if chosen.empty:
        raise ValueError(f"bins {headline_bins} is not among the computed bins {sorted(metrics['bins'].unique())}")
    merged = chosen.merge(rsd[["model", "metric", "rsd"]], on=["model", "metric"], how="left")
    return merged.sort_values(["model", "metric"], ignore_index=True)


def metric_by_bins(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each token-calibration metric's value at every bin count M (schema ``token_calibration``
    with a ``labels`` column: whose labels were scored), one column per M, with the ratio of its
    value at the largest M to its value at the smallest and its RSD over the Ms (ddof 1): what
    its RSD over M is made of.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``token_calibration`` tables with a ``labels`` column.

    Returns
    -------
    pandas.DataFrame
    """
    keys = ["model", "labels", "metric"]
    wide = metrics.pivot_table(index=keys, columns="bins", values="value").reset_index()
    ms = sorted(c for c in wide.columns if isinstance(c, (int, np.integer)))
    wide["largest / smallest M"] = wide[ms[-1]] / wide[ms[0]]
    wide["RSD over M"] = [relative_std(row) for row in wide[ms].to_numpy()]
    wide["positions"] = wide["model"].map(metrics.groupby("model")["n_positions"].first())
    wide.columns = [f"M={c}" if isinstance(c, (int, np.integer)) else c for c in wide.columns]
    return wide.sort_values(keys, ignore_index=True)


def bins_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """``metric_by_bins`` long (schema ``token_calibration_bins``): one row per model, labels,
    metric and bin count with the value there, and the metric's largest / smallest M ratio, RSD
    over M and positions repeated on its rows.

    Parameters
    ----------
    metrics : pandas.DataFrame
        As for ``metric_by_bins``.

    Returns
    -------
    pandas.DataFrame
        A ``token_calibration_bins`` table.
    """
    wide = metric_by_bins(metrics)
    keys = ["model", "labels", "metric"]
    ms = [c for c in wide.columns if c.startswith("M=")]
    long = wide.melt(id_vars=[*keys, "largest / smallest M", "RSD over M", "positions"], value_vars=ms,
                     var_name="bins", value_name="value")
    long["bins"] = long["bins"].str.removeprefix("M=").astype(int)
    return long.rename(columns={"largest / smallest M": "ratio", "RSD over M": "rsd",
                                "positions": "n_positions"}).sort_values([*keys, "bins"], ignore_index=True)
