"""Tokens per second of the generation engine vs one ``generate`` per input (the old path).

Both methods draw the full productions of the default config's production study (its prompts
and chat template) for the first inputs of each of ``--datasets``, ``--samples`` per input, at
most ``--max-new-tokens`` each, ancestral sampling (``--top-p P``: nucleus sampling), on the
same model in one process. The engine runs as many inputs per dataset as a production job of
``configs/paper-scale.yaml`` has (its inputs over ``production.shards``: ASSET 250, DailyDialog++
129, WMT14 63; ``--inputs N``: the first N of each), with each dataset's prompts' shared prefix
as production jobs give it, so its passes are full but for the job's last samples; the old path,
whose rate does not depend on the count, runs the first ``--baseline-inputs`` (4) of each dataset:

* generate per input: one ``model.generate`` per input with ``num_return_sequences`` (every
  sampling parameter explicit), torch seeded per input, unpacked linear layers (oneDNN switched
  off, ``varprobe.models.packing``): the production path before the engine;
* engine: ``varprobe.sampling.engine.Engine`` over each dataset's inputs (one job's work),
  ``--batch-size`` rows in flight, with the loaded model's packed linear layers; with
  ``--variants``, once more with unpacked ones, to show what packing adds to the scheduling,
  and once more with every pass over every column of the job's capacity (``over_every_column``:
  the engine before its CPU passes attended over the columns their longest row needs), to show
  what that adds and that it gives the same productions; with ``--top-p``, once more with
  each nucleus found by sorting the vocabulary in float64 (``sorted_nucleus``: the engine's
  top-p weights before ``nucleus.py``), to show what that adds.

Tokens are those each method returns, up to the end of sequence: work spent on finished rows
and re-encoded prompts counts against a method. Both are warmed up on one input (not timed),
then timed in ABBA order (generate, engine, engine, generate). The engine's achieved GFLOP/s
counts 2 x parameters FLOPs per token position it ran through the network (prefill included).
The distribution check compares the methods' mean production length and mean lexical
self-variability M (unigram distance between an input's samples, averaged over pairs) with the
difference between two engine seeds. ``--bfloat16`` also times the engine with bfloat16 weights
(the CPU's vector capability is printed beside it: without native bfloat16 arithmetic the cast
weights run slower, not faster).

The ceiling: the engine's decoding passes are also timed at full width (``--batch-size`` rows,
samples that never end, so no pass is padded and no row idles) on the first input's prompt,
first, between the two engine runs and last (ceiling, generate, engine, ceiling, engine,
generate, ceiling), ``--ceiling-repeats`` (3) runs of the passes each time, their positions
over their seconds.
Its rows per second are what the engine would return as tokens per second if every position it
ran returned a token at that rate; divided by the old path's tokens/s, this bounds the speedup
any scheduling of this model's forward could reach on this machine. The engine's share of the
ceiling (its tokens/s over those rows/s, same run) is the figure that does not depend on the CPU.
Where the engine's time goes (``Phases``): prefill, decoding passes (of which attention and the
output layer), sampling, and the rest (scheduling), summed over its timed runs.

    .venv/bin/python benchmarks/generation_speed.py [--inputs N] [--samples 10] [--max-new-tokens 100]
    .venv/bin/python benchmarks/generation_speed.py --device cuda [--dtype bfloat16]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import time
import zlib
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import torch
import yaml
from sampler_speed import ForwardCounter, add_model_arguments, load_model, synchronize
from record import record
from transformers.modeling_utils import AttentionInterface

from varprobe.data import DATASETS
from varprobe.data.instances import first_inputs
from varprobe.data.production import raw_files, read_instances
from varprobe.data.fetching import source_of
from varprobe.data.sources import MIRROR_ENV
from varprobe.models.packing import unpacked
from varprobe.probes.lexical import ngram_counts, ngram_distance
from varprobe.sampling.decoding import Decoding, _keep_mass
from varprobe.sampling import engine as engine_module
from varprobe.sampling.engine import Engine
from varprobe.sampling.generate import DEFAULT_BATCH_SIZE, encode_prompt, end_and_pad, render_prompt, shared_prefix

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get(MIRROR_ENV) or ROOT.parent / "shared" / "data")
OUT = Path(__file__).resolve().parent / "out"
SPLITS = {d: DATASETS[d].default_split for d in ("asset", "dailydialog", "wmt14")}
PREPARE = engine_module._Lane.prepare


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["asset", "dailydialog", "wmt14"], choices=list(SPLITS))
    p.add_argument("--inputs", type=int, default=None,
                   help="first inputs per dataset (the engine); default: a paper-scale shard's width")
    p.add_argument("--paper-config", type=Path, default=ROOT / "configs" / "paper-scale.yaml",
                   help="the config whose production.shards sets the default --inputs")
    p.add_argument("--baseline-inputs", type=int, default=None,
                   help="first inputs per dataset of the old generate path (default: 4, at most --inputs)")
    p.add_argument("--samples", type=int, default=10, help="productions per input")
    p.add_argument("--max-new-tokens", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="engine rows in flight")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling's p (1: ancestral sampling)")
    p.add_argument("--ceiling-repeats", type=int, default=3,
                   help="full-width runs per timing of the ceiling (a short spell of a slow machine moves it less)")
    p.add_argument("--bfloat16", action="store_true", help="also time the engine with bfloat16 weights")
    p.add_argument("--variants", action="store_true",
                   help="also time the engine with unpacked weights, over every column and (with "
                        "--top-p) with each nucleus found by sorting")
    p.add_argument("--config", type=Path, default=ROOT / "config.yaml", help="prompts and chat template")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="wrap prompts in the chat template (default: the config's chat_template)")
    add_model_arguments(p)
    p.add_argument("--mirror", type=Path, default=MIRROR)
    p.add_argument("--out", type=Path, default=OUT / "generation_speed")
    return p.parse_args(argv)


def work_of(args: argparse.Namespace, tokenizer) -> tuple[dict[str, list[tuple[str, list[int]]]], dict[str, list[int]]]:
    """Per dataset, ``(input_id, prompt token ids)`` of its first inputs, as production jobs
    encode them, and the prompts' shared prefix (``shared_prefix``)."""
    production = yaml.safe_load(args.config.read_text())["production"]
    prompts = {d["name"]: d["prompt"] for d in production["datasets"]}
    chat = production["chat_template"] if args.chat is None else args.chat
    work = {}
    prefixes = {dataset: shared_prefix(tokenizer, prompts[dataset], chat) for dataset in args.datasets}
    shards = paper_shards(args)
    for dataset in args.datasets:
        source = source_of(dataset, raw_files(dataset, SPLITS[dataset])[0])
        raw_dir = args.mirror / Path(source.mirror_path).parent
        instances = read_instances(dataset, raw_dir, SPLITS[dataset])
        table = first_inputs(instances, args.inputs or -(-len(instances) // shards))
        work[dataset] = [
            (f"{dataset}/{i}", encode_prompt(tokenizer, render_prompt(prompts[dataset], s),
                                             chat)[0].tolist())
            for i, s in zip(table["input_id"], table["source"], strict=True)]
    return work, prefixes


def paper_shards(args: argparse.Namespace) -> int:
    """Production jobs per dataset x decoding at paper scale (``production.shards`` of
    ``--paper-config``)."""
    return int(yaml.safe_load(args.paper_config.read_text())["production"]["shards"])


def generate_per_input(model, ids: list[int], eos: list[int], pad: int, key: str, args) -> list[list[int]]:
    """The old path: one ``generate`` with ``num_return_sequences``, torch seeded per input; the
    productions up to their end of sequence."""
    prompt = torch.tensor([ids], device=model.device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(zlib.crc32(f"{args.seed}:{key}".encode()))
        output = model.generate(
            input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True, temperature=1.0,
            top_k=0, top_p=args.top_p, typical_p=1.0, num_beams=1, repetition_penalty=1.0,
            no_repeat_ngram_size=0, max_new_tokens=args.max_new_tokens,
            num_return_sequences=args.samples, pad_token_id=pad, eos_token_id=eos)
    return [_until_eos(row, eos) for row in output[:, len(ids):].tolist()]


def _until_eos(tokens: list[int], eos: list[int]) -> list[int]:
    return list(itertools.takewhile(lambda t: t not in eos, tokens))


def engine_run(model, work, prefixes, eos, pad, args, seed) -> dict[str, list[list[int]]]:
    """The engine over each dataset's inputs with its prompts' shared prefix (one production
    job each)."""
    result = {}
    for dataset, items in work.items():
        engine = Engine(model, decoding_of(args), eos=eos, pad=pad, n_samples=args.samples,
                        max_new_tokens=args.max_new_tokens, seed=seed, batch_size=args.batch_size,
                        prefix=prefixes[dataset])
        result.update(engine.run(items))
    return result


def over_every_column(lane: engine_module._Lane) -> engine_module._Pass:
    """``_Lane.prepare`` with every column of the lane's capacity in the pass (its span)."""
    step = PREPARE(lane)
    step.span = len(lane.columns)
    return step


def decoding_of(args: argparse.Namespace) -> Decoding:
    """The benchmarked decoding: ancestral sampling, or its nucleus of ``--top-p``."""
    return Decoding(f"top-p-{args.top_p}", top_p=args.top_p) if args.top_p < 1.0 else Decoding("ancestral")


def sorted_nucleus(decoding: Decoding, logits: torch.Tensor, overwrite: bool = False) -> torch.Tensor:
    """``Decoding.weights`` of top-p as they were before ``nucleus.py`` (and still are off the
    CPU): the float64 softmax of the scores, each nucleus found by ranking the vocabulary
    (``torch.topk`` of 1,024 tokens, more while a row's nucleus may lie beyond them)."""
    scores = decoding._fixed_set(logits.double())
    return torch.softmax(_keep_mass(scores, scores, decoding.top_p), dim=-1)


class PromptCounter(ForwardCounter):
    """``ForwardCounter`` whose prefill is every call that runs several positions per row: the
    engine's prompts, whole or on top of their shared prefix (its decoding passes run one)."""

    def is_prefill(self, ids, cache) -> bool:
        return ids is not None and ids.shape[1] > 1


class Phases:
    """Wall seconds inside the engine's phases, from timers around them (the device synchronised
    at both ends): each decoding's weights and inverse-CDF draws (``Decoding.weights`` and the
    engine's ``draw``: sampling), the model's attention function and its output layer. The
    forward's prefill and decoding passes come from ``ForwardCounter``; what no timer covers is
    scheduling."""

    def __init__(self, model) -> None:
        self.device = next(model.parameters()).device
        self.attention_key = model.config._attn_implementation
        self.seconds = dict.fromkeys(("sampling", "attention", "output layer"), 0.0)
        output = model.get_output_embeddings()
        output.register_forward_pre_hook(lambda *_: self._start("output layer"))
        output.register_forward_hook(lambda *_: self._stop("output layer"))
        self._open: dict[str, float] = {}

    def _start(self, phase: str) -> None:
        synchronize(self.device)
        self._open[phase] = time.perf_counter()

    def _stop(self, phase: str) -> None:
        synchronize(self.device)
        self.seconds[phase] += time.perf_counter() - self._open.pop(phase)

    def _timed(self, phase: str, function):
        def timed(*args, **kwargs):
            self._start(phase)
            result = function(*args, **kwargs)
            self._stop(phase)
            return result
        return timed

    @contextlib.contextmanager
    def timing(self):
        """Within it: the seconds of every phase, counted from zero."""
        self.seconds = dict.fromkeys(self.seconds, 0.0)
        mapping = AttentionInterface._global_mapping
        attention = ({self.attention_key: self._timed("attention", mapping[self.attention_key])}
                     if self.attention_key in mapping else {})
        with mock.patch.object(Decoding, "weights", self._timed("sampling", Decoding.weights)), \
                mock.patch.object(engine_module, "draw", self._timed("sampling", engine_module.draw)), \
                mock.patch.dict(mapping, attention):
            yield self.seconds


def phase_line(runs: list[dict]) -> str:
    """Seconds and share of each engine phase over ``runs`` (``Phases`` seconds with the
    ``ForwardCounter`` counts of the same run)."""
    total = {k: sum(run[k] for run in runs) for k in runs[0]}
    parts = {"prefill": total["prefill_s"], "decoding passes": total["forward_s"] - total["prefill_s"],
             "attention (in both)": total["attention"], "output layer (in both)": total["output layer"],
             "sampling": total["sampling"]}
    parts["other (scheduling)"] = total["seconds"] - total["forward_s"] - total["sampling"]
    return ", ".join(f"{name} {value:.1f} s ({100 * value / total['seconds']:.0f}%)" for name, value in parts.items())


def timed_run(run, counter: ForwardCounter) -> tuple[float, dict, dict]:
    """``run()`` timed: its seconds, the forward passes it made and its productions."""
    counter.reset()
    start = time.perf_counter()
    productions = run()
    return time.perf_counter() - start, counter.counts(), productions


def table_row(name: str, runs: list[tuple[float, dict, dict]], model) -> dict:
    """The table's row of a method from its ``timed_run`` results, with the model as it is now
    (its dtype; GFLOP/s count 2 x parameters per token position)."""
    seconds = sum(t for t, _, _ in runs)
    tokens = sum(len(p) for _, _, productions in runs for samples in productions.values() for p in samples)
    positions = sum(c["forward_tokens"] for _, c, _ in runs)
    parameters = sum(p.numel() for p in model.parameters())
    return {"method": name, "runs": len(runs), "seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds,
            "forward_positions": positions, "forward_s": sum(c["forward_s"] for _, c, _ in runs),
            "gflop_per_s": 2 * parameters * positions / seconds / 1e9,
            "dtype": str(next(model.parameters()).dtype).removeprefix("torch.")}


def full_lane_passes(model, work, pad, counter: ForwardCounter, args) -> tuple[float, int]:
    """Seconds and positions of decoding passes of exactly ``--batch-size`` rows: as many samples
    of the first input, with no end of sequence, so every row runs ``--max-new-tokens`` steps;
    ``--ceiling-repeats`` such runs, one after the other."""
    key, ids = next(iter(work.values()))[0]
    engine = Engine(model, Decoding("ancestral"), eos=[], pad=pad, n_samples=args.batch_size,
                    max_new_tokens=args.max_new_tokens, seed=args.seed, batch_size=args.batch_size)
    counter.reset()
    for _ in range(args.ceiling_repeats):
        list(engine.run([(key, ids)]))
    counts = counter.counts()
    return counts["forward_s"] - counts["prefill_s"], counts["forward_tokens"] - args.ceiling_repeats * len(ids)


def nucleus_comparison(frame: pd.DataFrame, engine: dict[str, list[list[int]]],
                       by_sorting: dict[str, list[list[int]]]) -> dict[str, float]:
    """Print and return the engine's tokens/s over the engine's with each nucleus found by
    sorting (same run), and how many of their productions are the same tokens."""
    rates = frame.set_index("method")["tokens_per_s"]
    ratio = round(float(rates["engine"] / rates["engine, nucleus by sorting"]), 2)
    pairs = [(a, b) for key in by_sorting for a, b in zip(engine[key], by_sorting[key], strict=True)]
    print(f"nucleus: engine {ratio:.2f}x the engine with each nucleus found by sorting; the same productions: "
          f"{sum(a == b for a, b in pairs)} of {len(pairs)}")
    return {"sorted_nucleus_ratio": ratio}


def self_variability(texts: list[str]) -> float:
    """Mean unigram distance over the pairs of an input's productions (lexical M)."""
    counts = [ngram_counts(t.split(), 1) for t in texts]
    return float(np.mean([ngram_distance(a, b) for a, b in itertools.combinations(counts, 2)]))


def summary(productions: dict[str, list[list[int]]], tokenizer) -> tuple[float, dict[str, float]]:
    """Mean production length (tokens) and each input's lexical M."""
    lengths = [len(p) for samples in productions.values() for p in samples]
    variability = {k: self_variability(tokenizer.batch_decode(samples, skip_special_tokens=True))
                   for k, samples in productions.items()}
    return float(np.mean(lengths)), variability


def main() -> None:
    args = parse_args()
    load = os.getloadavg()
    lm = load_model(args)
    model, tokenizer = lm.model, lm.tokenizer
    eos, pad = end_and_pad(model, tokenizer)
    work, prefixes = work_of(args, tokenizer)
    narrowest = min(len(items) for items in work.values())
    args.baseline_inputs = min(4, narrowest) if args.baseline_inputs is None else args.baseline_inputs
    if not 1 <= args.baseline_inputs <= narrowest:
        raise SystemExit(f"--baseline-inputs must be in 1..{narrowest} (the fewest inputs of a dataset), "
                         f"got {args.baseline_inputs}")
    flat = [item for items in work.values() for item in items]
    baseline_work = {dataset: items[: args.baseline_inputs] for dataset, items in work.items()}
    baseline_flat = [item for items in baseline_work.values() for item in items]
    prompt_lengths = [len(ids) for _, ids in flat]
    args.inputs_per_dataset = ", ".join(f"{dataset} {len(items)}" for dataset, items in work.items())
    print(f"{len(flat)} inputs ({args.inputs_per_dataset}; the generate path the first {len(baseline_flat)}), prompts of "
          f"{min(prompt_lengths)}-{max(prompt_lengths)} tokens, {args.samples} samples x <= {args.max_new_tokens} "
          f"new tokens, batch size {args.batch_size}, device {args.device}")
    counter = PromptCounter(model)
    phases = Phases(model)
    parameters = sum(p.numel() for p in model.parameters())

    methods = {
        "generate per input": lambda: {k: generate_per_input(model, ids, eos, pad, k, args)
                                       for k, ids in baseline_flat},
        "engine": lambda: engine_run(model, work, prefixes, eos, pad, args, args.seed),
    }
    first = {dataset: items[:1] for dataset, items in itertools.islice(work.items(), 1)}

    def warm_up_engine() -> None:
        engine_run(model, first, prefixes, eos, pad, args, args.seed)

    with unpacked():
        generate_per_input(model, flat[0][1], eos, pad, flat[0][0], args)
    warm_up_engine()

    timed: dict[str, list] = {name: [] for name in methods}
    breakdown, lanes = [], []
    # The ceiling first, last and between the engine's two runs, the two methods in ABBA order:
    # a machine whose speed drifts during the run moves the ceiling and the engine alike.
    for name in ("ceiling", "generate per input", "engine", "ceiling", "engine", "generate per input", "ceiling"):
        if name == "ceiling":
            lanes.append(full_lane_passes(model, work, pad, counter, args))
            print(f"timed full-width passes: {lanes[-1][0]:.1f} s, {lanes[-1][1] / lanes[-1][0]:.1f} rows/s", flush=True)
            continue
        with unpacked() if name == "generate per input" else phases.timing() as seconds:
            timed[name].append(timed_run(methods[name], counter))
        if name == "engine":
            breakdown.append({**seconds, **timed[name][-1][1], "seconds": timed[name][-1][0]})
        print(f"timed {name}: {timed[name][-1][0]:.1f} s", flush=True)
    other_seed = engine_run(model, baseline_work, prefixes, eos, pad, args, args.seed + 1)

    rows = [table_row(name, runs, model) for name, runs in timed.items()]
    lane_positions = sum(positions for _, positions in lanes)
    lane_rate = lane_positions / sum(seconds for seconds, _ in lanes)
    every_column = by_sorting = None
    if args.variants:
        # One more warmed-up engine run each: unpacked, over every column, with each nucleus found by sorting.
        with unpacked():
            warm_up_engine()
            rows.append(table_row("engine, unpacked weights", [timed_run(methods["engine"], counter)], model))
        with mock.patch.object(engine_module._Lane, "prepare", over_every_column):
            warm_up_engine()
            every_column = timed_run(methods["engine"], counter)
            rows.append(table_row("engine, every column", [every_column], model))
        if args.top_p < 1.0:
            with mock.patch.object(Decoding, "weights", sorted_nucleus):
                warm_up_engine()
                by_sorting = timed_run(methods["engine"], counter)
                rows.append(table_row("engine, nucleus by sorting", [by_sorting], model))
    if args.bfloat16:
        model.to(torch.bfloat16)
        warm_up_engine()
        rows.append(table_row("engine bfloat16", [timed_run(methods["engine"], counter)], model))
    frame = pd.DataFrame(rows)
    frame["speedup"] = frame["tokens_per_s"] / frame.loc[0, "tokens_per_s"]
    frame["positions_per_token"] = frame["forward_positions"] / frame["tokens"]
    frame["share_of_ceiling"] = frame["tokens_per_s"] / lane_rate

    length_generate, m_generate = summary(timed["generate per input"][0][2], tokenizer)
    length_engine, m_engine = summary({k: timed["engine"][0][2][k] for k in other_seed}, tokenizer)
    length_other, m_other = summary(other_seed, tokenizer)
    method_m = float(np.mean([abs(m_engine[k] - m_generate[k]) for k in m_engine]))
    seed_m = float(np.mean([abs(m_engine[k] - m_other[k]) for k in m_engine]))

    fmt = {c: "{:.2f}".format for c in ("seconds", "tokens_per_s", "forward_s", "gflop_per_s", "speedup",
                                        "positions_per_token", "share_of_ceiling")}
    print()
    print(frame.to_string(index=False, formatters=fmt))
    print()
    print(f"mean length (tokens): generate per input {length_generate:.2f}, engine {length_engine:.2f}, "
          f"engine seed {args.seed + 1} {length_other:.2f}")
    print(f"mean lexical M: generate per input {np.mean(list(m_generate.values())):.4f}, engine "
          f"{np.mean(list(m_engine.values())):.4f}, engine seed {args.seed + 1} {np.mean(list(m_other.values())):.4f}")
    print(f"mean |difference| per input of lexical M: engine vs generate {method_m:.4f}, engine seed "
          f"{args.seed} vs {args.seed + 1} {seed_m:.4f}")
    if every_column is not None:
        print(f"engine over every column: {'the same' if every_column[2] == timed['engine'][0][2] else 'OTHER'} "
              f"productions as over its spans")
    nucleus_figures = {} if by_sorting is None else nucleus_comparison(frame, timed["engine"][0][2], by_sorting[2])
    same = (abs(length_engine - length_generate) <= 2 * abs(length_engine - length_other) + 1.0
            and method_m <= 2 * seed_m)
    print(f"same distribution (method differences within twice the seed spread, lengths +- 1 token): "
          f"{'yes' if same else 'NO'}")
    baseline = frame.loc[0, "tokens_per_s"]
    print(f"full-width passes ({args.batch_size} rows): {lane_positions} positions at {lane_rate:.1f} rows/s "
          f"({1000 / lane_rate:.2f} ms per row, {2 * parameters * lane_rate / 1e9:.1f} GFLOP/s); ceiling at one "
          f"position per returned token: {lane_rate / baseline:.2f}x the generate path")
    engine = frame.loc[1]
    print(f"engine: {engine['positions_per_token']:.3f} positions per returned token, {engine['gflop_per_s']:.1f} "
          f"GFLOP/s; {100 * engine['share_of_ceiling']:.1f}% of the ceiling's rows/s")
    print("engine time (both timed runs): " + phase_line(breakdown))
    if args.bfloat16:
        print(f"CPU vector capability: {torch.backends.cpu.get_cpu_capability()} (bfloat16 is native only with "
              f"AVX512_BF16 or AMX)")
    print(f"load average (1 min) before loading {load[0]:.2f}, at end {os.getloadavg()[0]:.2f} "
          f"(this run included) on {os.cpu_count()} CPUs: other processes distort the timings")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    print(f"wrote {args.out.with_suffix('.csv')}")
    print(f"speedup (tokens/s, engine vs generate per input): {frame.loc[1, 'speedup']:.2f}x")
    record("generation_speed", args, speedup=round(frame.loc[1, "speedup"], 2),
           tokens_per_s=round(frame.loc[1, "tokens_per_s"], 2), reference_tokens_per_s=round(baseline, 2),
           ceiling=round(lane_rate / baseline, 2), share_of_ceiling=round(float(engine["share_of_ceiling"]), 3),
           positions_per_token=round(float(engine["positions_per_token"]), 3), **nucleus_figures)


if __name__ == "__main__":
    main()
