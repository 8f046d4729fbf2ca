"""Size and load time of the explorer (``results/explorer``) in headless Chromium.

Builds the explorer (the folder and its one-file copy) from the tables of a finished run
(``--results``), or from the full Provo corpus with synthetic systems (``--synthetic-provo``:
every context of the 55 passages read from the norms as the workflow reads them, then a sampled
system with ``--draws`` draws per context and an exact system with ``--exact-words`` enumerated
words per context, scored by the package's own ``provo-divergence`` and summarised as a run would
be), then opens it ``--repeats`` times in a fresh headless Chromium and prints: the folder's
bytes, the bytes the first view loads, the build time, the page's ready time (navigation start to
the context table drawn, read from the page), the time to sort the contexts by a system's TVD and
the time to open a context.

Synthetic draws per context: 60% from the human responses, 30% uniform over every corpus word
(a long tail: many distinct words per context, as a weak model's), 10% failures of three reasons.
Synthetic enumerations: Zipf masses (s = 1.1) over the humans' words and corpus words, scaled to
0.9 resolved word mass, 0.03 failure mass and 0.07 unresolved. The page's size depends on the
number of contexts, systems and shown words (``--top``), not on the draws behind them.

With ``--synthetic-asset RAW_DIR`` the production view instead: every ASSET validation input
(2,000 x 10 references) and ``--systems`` synthetic systems with a distance for every H, M and C
pair of the seven probes (``synthetic_production``).

    python benchmarks/explorer_size.py --results results
    python benchmarks/explorer_size.py --synthetic-provo --norms ../shared/data/provo_cloze/Provo_Corpus-Predictability_Norms.csv
    python benchmarks/explorer_size.py --synthetic-asset results/raw/asset
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from record import record

from varprobe import tables
from varprobe.explorer.browser import headless_chromium, open_explorer

VARPROBE = [sys.executable, "-m", "varprobe"]


def cli(*args: str) -> None:
    subprocess.run([*VARPROBE, *map(str, args)], check=True)


def run_tables(results: Path) -> list[str]:
    """The ``varprobe explorer`` options for every table of a finished run under ``results``."""
    options: list[str] = []
    provo = results / "provo"
    if (provo / "contexts.parquet").is_file():
        tvds = sorted(p for p in provo.glob("*/*/tvd.parquet") if p.parent.parent.name != "oracle")
        estimates = [p.with_name("distribution.parquet") if (p.with_name("distribution.parquet")).is_file()
                     else p.with_name("samples.parquet") for p in tvds]
        options += ["--provo-contexts", provo / "contexts.parquet",
                    "--provo-responses", provo / "responses.parquet",
                    "--provo-oracle", provo / "oracle/control/tvd.parquet",
                    "--provo-tvd", *tvds, "--provo-estimates", *estimates]
        if (provo / "summary.parquet").is_file():
            options += ["--provo-summary", provo / "summary.parquet"]
    production = results / "production"
    divergences = sorted(production.glob("*/*/*/divergences.parquet"))
    if divergences:
        options += ["--production-instances", *sorted(production.glob("*/instances.parquet")),
                    "--production-divergences", *divergences,
                    "--production-samples", *(p.with_name("samples.parquet") for p in divergences),
                    "--production-distances", *(p.with_name("distances.parquet") for p in divergences)]
    return [str(o) for o in options]


def synthetic_provo(norms: Path, work: Path, draws: int, exact_words: int, seed: int) -> list[str]:
    """Full-corpus Provo tables with one synthetic sampled and one synthetic exact system."""
    provo = work / "provo"
    cli("provo-data", "--norms", norms, "--texts", "all", "--contexts-out", provo / "contexts.parquet",
        "--responses-out", provo / "responses.parquet", "--mirror", norms.parent.parent)
    contexts = tables.read(provo / "contexts.parquet", "provo_contexts")
    responses = tables.read(provo / "responses.parquet", "provo_responses")
    rng = np.random.default_rng(seed)
    vocabulary = np.array(sorted(set(contexts["corpus_word"])))
    said = {k: g for k, g in responses.groupby(["text_id", "word_number"])}
    sampled, enumerated = [], []
    reasons = np.array(["extends_context_word", "no_word", "token_budget"])
    for t, w in zip(contexts["text_id"], contexts["word_number"], strict=True):
        human = said[(t, w)]
        p = human["count"].to_numpy() / human["count"].sum()
        kind = rng.choice(3, size=draws, p=[0.6, 0.3, 0.1])
        words = np.where(kind == 0, rng.choice(human["response"].to_numpy(), size=draws, p=p),
                         rng.choice(vocabulary, size=draws))
        failed = kind == 2
        sampled.append(pd.DataFrame({
            "text_id": t, "word_number": w, "sample_index": np.arange(draws),
            "text": words, "word": np.where(failed, "", words), "failed": failed,
            "failure": np.where(failed, rng.choice(reasons, size=draws), ""), "n_tokens": 2,
            "count": 1,
        }))
        support = list(dict.fromkeys([*human["response"], *rng.choice(vocabulary, size=exact_words)]))
        support = support[:exact_words]
        mass = 1.0 / np.arange(1, len(support) + 1) ** 1.1
        mass = 0.9 * mass / mass.sum()
        enumerated.append(pd.DataFrame({
            "text_id": t, "word_number": w, "word": [*support, "", ""],
            "failure": [""] * len(support) + ["no_word", "token_budget"],
            "probability": [*mass, 0.02, 0.01], "unresolved_mass": 0.07, "failure_mass": 0.03,
            "forward_tokens": 2000,
        }))
    systems = {("synthetic", "ancestral"): ("samples", pd.concat(sampled, ignore_index=True)),
               ("synthetic", "exact"): ("distribution", pd.concat(enumerated, ignore_index=True))}
    control = ["--seed", 0, "--resplits", 20, "--ece-bins", 10, "--bootstrap", 1000,
               "--contexts", provo / "contexts.parquet", "--responses", provo / "responses.parquet"]
    for (model, decoding), (kind, table) in systems.items():
        folder = provo / model / decoding
        tables.write(table, folder / f"{kind}.parquet", f"provo_{kind}")
        cli("provo-divergence", *control, "--model", model, "--decoding", decoding,
            f"--{kind}", folder / f"{kind}.parquet", "--tvd-out", folder / "tvd.parquet",
            "--system-out", folder / "system.parquet")
    cli("provo-oracle", *control, "--model", "oracle", "--decoding", "control",
        "--tvd-out", provo / "oracle/control/tvd.parquet",
        "--system-out", provo / "oracle/control/system.parquet")
    cli("provo-summary", "--systems", *sorted(provo.glob("*/*/system.parquet")),
        "--out", provo / "summary.parquet")
    return run_tables(work)


PROBES = ("lexical-1", "lexical-2", "lexical-3", "syntactic-1", "syntactic-2", "syntactic-3",
          "semantic")


def synthetic_production(raw_dir: Path, work: Path, systems: int, seed: int) -> list[str]:
    """Every ASSET validation input (2,000, 10 references each) read by ``production-data`` from
    ``raw_dir``, with ``systems`` synthetic systems: 10 samples per input (its references with
    their words reversed), uniform random distances for every H, M and C pair of every probe,
    and the per-input statistics of those distances."""
    production = work / "production"
    cli("production-data", "--dataset", "asset", "--raw-dir", raw_dir, "--split", "valid",
        "--out", production / "asset/instances.parquet")
    instances = tables.read(production / "asset/instances.parquet", "production_instances")
    rng = np.random.default_rng(seed)
    for k in range(systems):
        folder = production / "asset/synthetic" / f"decoding-{k}"
        samples, pairs = [], []
        for input_id, references in zip(instances["input_id"], instances["references"], strict=True):
            texts = [" ".join(reversed(r.split())) for r in references][:10]
            samples.append(pd.DataFrame({"input_id": input_id, "sample_index": range(len(texts)),
                                         "text": texts}))
            n_h, n_m = len(references) * (len(references) - 1) // 2, len(texts) * (len(texts) - 1) // 2
            counts = {"H": n_h, "M": n_m, "C": len(texts) * len(references)}
            for probe in PROBES:
                for kind, n in counts.items():
                    pairs.append(pd.DataFrame({"input_id": input_id, "probe": probe, "kind": kind,
                                               "a": 0, "b": 1, "distance": rng.random(n)}))
        distances = pd.concat(pairs, ignore_index=True)
        means = distances.pivot_table(index=["input_id", "probe"], columns="kind",
                                      values="distance", aggfunc="mean").reset_index()
        sizes = distances.pivot_table(index=["input_id", "probe"], columns="kind",
                                      values="distance", aggfunc="size").reset_index()
        divergences = pd.DataFrame({
            "input_id": means["input_id"], "probe": means["probe"], "n_H": sizes["H"],
            "n_M": sizes["M"], "n_C": sizes["C"], "mean_H": means["H"], "mean_M": means["M"],
            "mean_C": means["C"], "mean_M_minus_H": means["M"] - means["H"],
            "mean_C_minus_H": means["C"] - means["H"], "w1_M_H": (means["M"] - means["H"]).abs(),
            "w1_C_H": (means["C"] - means["H"]).abs(), "w1_control": rng.random(len(means)) / 10,
        })
        tables.write(pd.concat(samples, ignore_index=True), folder / "samples.parquet",
                     "production_samples")
        tables.write(distances, folder / "distances.parquet", "production_distances")
        tables.write(divergences, folder / "divergences.parquet", "production_divergences")
    return run_tables(work)


VIEWS = {  # view: (its table, a header to sort by, its detail panel and the attribute it sets)
    "provo": ("#provo-table", 'th[data-key^="tvd:"]', "provo-detail", "data-context"),
    "production": ("#prod-table", 'th[data-key="w1_C_H"]', "prod-detail", "data-input"),
}


def measure(page: Path, view: str, repeats: int) -> dict:
    """Ready, sort and open times of ``view`` (ms, medians over ``repeats`` fresh browsers)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    table, sort_by, detail, marker = VIEWS[view]
    ready, sort, opened = [], [], []
    for _ in range(repeats):
        driver = headless_chromium()
        try:
            ready.append(open_explorer(driver, page, view))
            header = driver.find_elements(By.CSS_SELECTOR, f"{table} {sort_by}")
            if header:
                start = time.perf_counter()
                header[0].click()
                driver.find_element(By.CSS_SELECTOR, f"{table} th.sorted-asc")
                sort.append((time.perf_counter() - start) * 1000)
            row = driver.find_element(By.CSS_SELECTOR, f"{table} tbody tr")
            start = time.perf_counter()
            row.click()
            WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, detail).get_attribute(marker))
            opened.append((time.perf_counter() - start) * 1000)
        finally:
            driver.quit()
    return {"ready_ms": statistics.median(ready), "sort_ms": statistics.median(sort) if sort else None,
            "open_ms": statistics.median(opened)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--results", type=Path, help="a finished run's results folder")
    source.add_argument("--synthetic-provo", action="store_true",
                        help="the full Provo corpus with a synthetic sampled and exact system")
    source.add_argument("--synthetic-asset", type=Path, metavar="RAW_DIR",
                        help="ASSET validation's raw files: all 2,000 inputs, --systems synthetic "
                             "systems")
    parser.add_argument("--systems", type=int, default=2, help="synthetic production systems")
    parser.add_argument("--norms", type=Path, help="the Provo norms CSV (--synthetic-provo)")
    parser.add_argument("--draws", type=int, default=1000, help="synthetic draws per context")
    parser.add_argument("--exact-words", type=int, default=300,
                        help="synthetic enumerated words per context")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None, help="where tables and the page go")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="explorer-size-"))
    if args.synthetic_provo:
        if args.norms is None:
            parser.error("--synthetic-provo needs --norms")
        options = synthetic_provo(args.norms, work, args.draws, args.exact_words, seed=0)
    elif args.synthetic_asset:
        options = synthetic_production(args.synthetic_asset, work, args.systems, seed=0)
    else:
        options = run_tables(args.results)
    folder = work / "explorer"
    start = time.perf_counter()
    single = work / "explorer.html"
    cli("explorer", *options, "--top", args.top, "--out", folder, "--single", single)
    built = time.perf_counter() - start
    files = [f for f in folder.rglob("*") if f.is_file()]
    total = sum(f.stat().st_size for f in files)
    first = ["index.html", "assets/explorer.js", "assets/explorer.css", "data/manifest.js",
             "data/provo-table.js" if "--provo-contexts" in options else "data/prod-stats-0.js",
             *([] if "--provo-contexts" in options else ["data/prod-sources-0.js"])]
    initial = sum((folder / f).stat().st_size for f in first if (folder / f).is_file())
    largest = max(files, key=lambda f: f.stat().st_size)
    print(f"explorer {folder}: {total / 1e6:.2f} MB in {len(files)} files; first view loads "
          f"{initial / 1e6:.2f} MB; largest chunk {largest.name} {largest.stat().st_size / 1e6:.2f} MB; "
          f"one-file copy {single.stat().st_size / 1e6:.2f} MB; both built in {built:.1f} s")
    record("explorer_size", args, megabytes=round(total / 1e6, 2), first_view_megabytes=round(initial / 1e6, 2),
           built_s=round(built, 1))
    views = ["provo"] if "--provo-contexts" in options else []
    views += ["production"] if "--production-instances" in options else []
    for view in views:
        for name, page in (("folder", folder), ("one file", single)):
            timing = measure(page, view, args.repeats)
            print(f"{view} view, {name}, headless Chromium (median of {args.repeats}): ready "
                  f"{timing['ready_ms']:.0f} ms, sort {timing['sort_ms'] or float('nan'):.0f} ms, "
                  f"open a {'context' if view == 'provo' else 'input'} {timing['open_ms']:.0f} ms")


if __name__ == "__main__":
    main()
