"""Contexts/s of WordScorer over a passage's contexts vs scoring each context on its own.

The two exact scoring stages of the Provo study read the model at every context: the
token-level study its next-token distribution (``WordScorer.next_token_log_probs``), the
biased estimator the probability of each word of a support (``word_log_probs_many``). Both
methods run on the same model and the same Provo contexts in one process:

* per context (the path before chains): each context is run through the network on its own,
  with the output layer at every position, and its words are scored on that cache;
* chains: the scorer's path, where the contexts of a passage share one encoding of the
  longest and the output layer runs at each context's last position only.

The support words are also scored a third way, ``chains, two logsumexp``: the chains with the
scorer's word normaliser as it was before (``TwoLogsumexpScorer``: a float64 log-sum-exp over
the vocabulary for the normaliser and a second over the copied columns of the closing tokens B),
against the one block exp(logits - top) that serves both now.

The support of a context here is its human responses and its corpus word (the biased
estimator adds the model's draws). Every method is warmed up on one context first, then timed in
mirrored order (per context, chains[, chains two logsumexp, chains two logsumexp], chains, per
context). Also printed: the token positions each method ran, and the largest difference between
a method's log-probabilities and the chains'.

    .venv/bin/python benchmarks/scoring_speed.py [--texts 1] [--max-contexts 60]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sampler_speed import NORMS, OUT, ForwardCounter, add_model_arguments, load_model
from record import record

from varprobe.data.provo import contexts_table, read_norms, responses_table
from varprobe.sampling.scoring import WordScorer
from varprobe.sampling.word_model import WordModel


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--texts", type=int, nargs="+", default=[1], help="Provo Text_IDs (default: 1)")
    p.add_argument("--max-contexts", type=int, default=60)
    add_model_arguments(p)
    p.add_argument("--norms", type=Path, default=NORMS)
    p.add_argument("--out", type=Path, default=OUT / "scoring_speed")
    return p.parse_args()


@torch.inference_mode()
def alone(scorer: WordScorer, context: str, words: list[str] | None):
    """One context on its own: its log pi(. | c) when ``words`` is None, else its words' log P."""
    ids = scorer.lm.encode(context)
    out = scorer.model(input_ids=torch.tensor([ids], device=scorer.device), use_cache=True)
    first = torch.log_softmax(out.logits[0, -1].double(), -1)
    if words is None:
        return first
    cache = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
    return scorer._score_words(cache, len(ids), first, words)


class TwoLogsumexpScorer(WordScorer):
    """The scorer with its word normaliser as it was before the one exp block (kept here to be
    timed against): two float64 log-sum-exps per position, the second over B's copied columns."""

    def __init__(self, lm: WordModel) -> None:
        super().__init__(lm)
        self.closing_ids = torch.nonzero(self.closing)[:, 0]

    def _word_scores(self, logits: torch.Tensor, tokens: torch.Tensor, first: torch.Tensor) -> np.ndarray:
        logits = logits.double()
        norm = torch.logsumexp(logits, -1)
        closing = torch.logsumexp(logits.index_select(-1, self.closing_ids), -1) - norm
        inner = logits[:, :-1].gather(-1, tokens[:, 1:, None])[..., 0] - norm[:, :-1]
        return (first[tokens[:, 0]] + inner.sum(-1) + closing[:, -1]).cpu().numpy()


def run(method: str, stage: str, scorers: dict[str, WordScorer], items: list[tuple[str, list[str]]]) -> list:
    """The results of ``stage`` (``next-token`` or ``words``) over ``items`` by ``method``."""
    scorer = scorers[method]
    if method == "per context":
        return [alone(scorer, c, None if stage == "next-token" else words) for c, words in items]
    if stage == "next-token":
        return list(scorer.next_token_log_probs(c for c, _ in items))
    return list(scorer.word_log_probs_many(items))


def largest_difference(a: list, b: list) -> float:
    """The largest absolute difference between two methods' log-probabilities (finite ones)."""
    diffs = []
    for x, y in zip(a, b, strict=True):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        finite = np.isfinite(x) & np.isfinite(y)
        diffs.append(np.abs(x[finite] - y[finite]).max(initial=0.0))
    return float(max(diffs))


def main() -> None:
    args = parse_args()
    load = os.getloadavg()
    lm = load_model(args)
    scorer = WordScorer(WordModel(lm.model, lm.tokenizer))
    scorers = {"per context": scorer, "chains": scorer,
               "chains, two logsumexp": TwoLogsumexpScorer(scorer.lm)}
    norms = read_norms(args.norms)
    table = contexts_table(norms, args.texts).head(args.max_contexts)
    responses = responses_table(norms, args.texts).groupby(["text_id", "word_number"])["response"].apply(list)
    items = [(r.context, sorted(set(responses.get((r.text_id, r.word_number), [])) | {r.corpus_word}))
             for r in table.itertuples()]
    counter = ForwardCounter(lm.model)
    print(f"{len(items)} contexts of texts {args.texts}, {sum(len(w) for _, w in items)} support words")

    records = []
    for stage in ("next-token", "words"):
        methods = ["per context", "chains"] + (["chains, two logsumexp"] if stage == "words" else [])
        for method in methods:
            run(method, stage, scorers, items[:1])
        times: dict[str, list] = {method: [] for method in methods}
        for method in methods + methods[::-1]:
            counter.reset()
            start = time.perf_counter()
            result = run(method, stage, scorers, items)
            times[method].append((time.perf_counter() - start, counter.counts()["forward_tokens"], result))
        for method, done in times.items():
            seconds = sum(t for t, _, _ in done)
            records.append({"stage": stage, "method": method, "contexts": len(items) * len(done),
                            "seconds": seconds, "contexts_per_s": len(items) * len(done) / seconds,
                            "forward_tokens": sum(n for _, n, _ in done),
                            "max_abs_difference": largest_difference(done[0][2], times["chains"][0][2])})
    frame = pd.DataFrame(records)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    print(f"load average (1 min) before loading {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}")
    rate = frame.set_index(["stage", "method"])["contexts_per_s"]
    print("speedup (support words, one exp block vs two logsumexp): "
          f"{rate['words', 'chains'] / rate['words', 'chains, two logsumexp']:.2f}x")
    for stage, label in (("next-token", "next-token distributions"), ("words", "support words")):
        print(f"speedup ({label}, chains vs per context): {rate[stage, 'chains'] / rate[stage, 'per context']:.2f}x")
    record("scoring_speed", args, **{f"speedup_{stage}": round(rate[stage, "chains"] / rate[stage, "per context"], 2)
                                     for stage in ("next-token", "words")})


if __name__ == "__main__":
    main()
