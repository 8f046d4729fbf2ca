"""The page's prose built from the run's tables: what was run, the findings (each pointing to its
table), the disagreements with the papers with their measured causes, the sections a run did
not make and the command that makes them, and where each table and figure of the three papers
is on the page."""

from __future__ import annotations

from itertools import zip_longest

import pandas as pd

from varprobe import tables
from varprobe.results_page import paper
from varprobe.results_page.markup import Markup, code
from varprobe.results_page.tables import (
    markdown, miscalibrated, number, production_example, production_shown_probes, production_signs)

PAPER_DRAWS = 1000
"""The paper's draws per context for GPT-2 (Table 1's ancestral row, App. C.1)."""
DECODING_FAMILIES = {"ancestral": (), "temperature": ("temperature",), "top-k": ("top_k",),
                     "top-p": ("top_p",), "typical": ("typical_p",)}
"""Giulianelli et al.'s five decoding families (Sec. 4.2) and the setting that makes each."""


def _entry(entries: list[dict], prefix: str) -> list[dict]:
    return [e for e in entries if e["name"].startswith(prefix)]


def table_of(entries: list[dict], prefix: str) -> pd.DataFrame | None:
    """The registered tables whose name starts with ``prefix``, as one frame (None without any)."""
    found = _entry(entries, prefix)
    return pd.concat([tables.read_frame(e["table"]) for e in found], ignore_index=True) if found else None


def draws_per_context(provo: dict) -> str:
    """The Provo draws per context of the run's sampled decodings: ``provo.n_samples``, and each
    decoding that sets its own (``n_samples`` of its entry)."""
    own = [f"{d['name']}: {d['n_samples']:,}" for d in provo["decodings"] if "n_samples" in d]
    return f"{provo['n_samples']}" + (f" ({', '.join(own)})" if own else "")


def most_draws(provo: dict) -> int:
    """The most draws per context of any of the run's sampled decodings (``provo.n_samples``, or
    a decoding's own)."""
    return max([provo["n_samples"], *(d["n_samples"] for d in provo["decodings"] if "n_samples" in d)])


def provo_positions_left_out(provo: dict, contexts: int) -> str:
    """For a run on all of the Provo norms, which of their positions its ``contexts`` leave out
    and which the paper's code does (``", the norms' 2,687 positions but ..."``); empty for a
    cloze corpus of one's own, some passages, or a count other than the norms' less the
    positions the loader drops (``varprobe.data.provo.AMBIGUOUS_POSITIONS``)."""
    from varprobe.data.provo import AMBIGUOUS_POSITIONS, N_POSITIONS

    if provo.get("corpus") or provo["texts"] != "all" or contexts != N_POSITIONS - len(AMBIGUOUS_POSITIONS):
        return ""
    ours = ", ".join(str(p) for p in sorted(AMBIGUOUS_POSITIONS))
    return (f": the norms' {N_POSITIONS:,} positions but {ours}, whose responses mix those for two words; "
            f"the paper's code keeps it and leaves out the corpus's last, {paper.AUTHORS_LEFT_OUT_POSITION}")


def what_was_run(config: dict, entries: list[dict]) -> list[tuple[str, str]]:
    """(what, how much) each: the models, the Provo data and draws, the production data and draws."""
    lines = []
    models = [m["name"] for m in config.get("models", [])]
    if models:
        lines.append(("models", Markup(", ".join(code(m) for m in models))))
    summary = table_of(entries, "provo_summary")
    provo = config.get("provo")
    if provo and summary is not None:
        contexts = int(summary["n_contexts"].max())
        texts = provo["texts"]
        passages = "all passages" if texts == "all" else f"passages {', '.join(map(str, texts))}"
        lines.append(("Provo", f"{passages} ({contexts:,} contexts{provo_positions_left_out(provo, contexts)}), "
                               f"{draws_per_context(provo)} draws per context and sampled "
                               f"system (the paper: 1,000 for GPT-2, 40 for the others)"))
    production = config.get("production")
    if production:
        names = ", ".join(d["name"] for d in production["datasets"])
        most = production["max_inputs"]
        decodings = ", ".join(d["name"] for d in production["decodings"])
        chosen = "a seeded choice of" if production["input_choice"] == "seeded" else "the first"
        lines.append(("production", f"{names}, {'every input' if most is None else f'{chosen} {most} inputs'} "
                                    f"of each, {production['n_samples']} outputs per input, decodings {decodings}"))
    return lines


def span(low: float, high: float, show=number) -> str:
    """``low-high`` (``low to high`` where one is negative), or one value when they are equal as
    shown."""
    if show(low) == show(high):
        return show(low)
    return f"{show(low)} to {show(high)}" if min(low, high) < 0 else f"{show(low)}-{show(high)}"


def _table_one_finding(summary: pd.DataFrame) -> list[str]:
    models = summary[~summary["model"].isin(["human", "oracle"])]
    oracle = summary[summary["model"] == "oracle"]
    if models.empty or oracle.empty:
        return []
    o = oracle.iloc[0]
    low, high = models["expected_tvd"].min(), models["expected_tvd"].max()
    above = int((models["ci_low"] > o["ci_high"]).sum())
    ece_models = models["ece_human_majority"]
    return [
        f"No model reproduces human variability as well as half of the humans do: every system's "
        f"E TVD(M, H) is {span(low, high)} ({above} of {len(models)} with a 95% interval "
        f"above the oracles'), against E TVD(O2, O1) = {number(o['expected_tvd'])} between two halves of "
        f"the humans (Table 1; the paper: GPT-2 0.64 against 0.42).",
        f"ECE says the opposite: against the human majority the models' ECE is "
        f"{span(ece_models.min(), ece_models.max())}, the oracle's {number(o['ece_human_majority'])} "
        f"(Table 1; the paper: 0.20 against 0.57), so ECE ranks models as better calibrated than humans.",
    ]


def _regression_finding(coefficients: pd.DataFrame) -> list[str]:
    first = coefficients[(coefficients["kind"] != "intercept") & (coefficients["kind"] != "noise")]
    first = first[(first["model"] == first["model"].iloc[0]) & (first["decoding"] == first["decoding"].iloc[0])]
    top = first.loc[first["mean"].abs().idxmax()]
    oracle = first[first["predictor"] == "tvd_oracle2_oracle1"]
    said = (f"; TVD between oracles {number(oracle['mean'].iloc[0])} "
            f"[{number(oracle['hdi_2.5%'].iloc[0])}, {number(oracle['hdi_97.5%'].iloc[0])}], the paper's "
            f"largest ({paper.TABLE_3['tvd_oracle2_oracle1']})") if len(oracle) else ""
    return [f"The largest ARD coefficient of {top['model']} / {top['decoding']} is {top['label']} "
            f"({number(top['mean'])}){said} (Table 3)."]


def _production_finding(summary: pd.DataFrame, probes: list[str] | None = None) -> list[str]:
    """The span of mean W1(C, H) and of the human control over the probes the page's production
    table shows (``production_shown_probes`` of the figure's ``probes``), and the sign count of
    mean M - H."""
    shown = summary[summary["available"] & summary["probe"].isin(production_shown_probes(summary, probes))]
    w1 = shown[shown["statistic"] == "w1_C_H"]
    control = shown[shown["statistic"] == "w1_control"]
    signs = production_signs(summary)
    if w1.empty:
        return []
    agree = int((signs["agrees"] == "yes").sum())
    return [f"Production: the mean W1(C, H) over inputs is {span(w1['mean'].min(), w1['mean'].max())} against a "
            f"human control of {span(control['mean'].min(), control['mean'].max())} (the paper: below {paper.GIULIANELLI_LEVELS['w1_decoding']} for most "
            f"decodings); the sign of mean M - H agrees with the paper's for {agree} of {len(signs)} "
            f"task x probe rows (production tables; see Disagreements)."]


def decoding_ranks(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, model and available probe of a run with several decodings: the decoding with
    the lowest mean W1(C, H) over inputs, ancestral sampling's mean and interval, and whether the
    lowest decoding's interval overlaps ancestral's (the order is then not resolved by the run's
    inputs). Empty when the run has fewer than three decodings or no ancestral one."""
    w1 = summary[summary["available"] & (summary["statistic"] == "w1_C_H")]
    if w1["decoding"].nunique() < 3 or "ancestral" not in set(w1["decoding"]):
        return pd.DataFrame()
    rows = []
    for (dataset, model, probe), cell in w1.groupby(["dataset", "model", "probe"], sort=False):
        best, ancestral = cell.loc[cell["mean"].idxmin()], cell[cell["decoding"] == "ancestral"]
        if ancestral.empty:
            continue
        a = ancestral.iloc[0]
        rows.append({"dataset": dataset, "model": model, "probe": probe, "lowest": best["decoding"],
                     "lowest W1(C, H)": best["mean"], "ancestral W1(C, H)": a["mean"],
                     "overlaps ancestral": best["ci_low"] <= a["ci_high"] and a["ci_low"] <= best["ci_high"]})
    return pd.DataFrame(rows)


def _decoding_finding(summary: pd.DataFrame, probes: list[str] | None = None) -> list[str]:
    """Where ancestral sampling has the lowest mean W1(C, H), over the task x probe cells of the
    page's production table (the probes ``production_shown_probes`` of the figure's ``probes``)."""
    ranks = decoding_ranks(summary[summary["probe"].isin(production_shown_probes(summary, probes))])
    if ranks.empty:
        return []
    first = ranks.groupby("dataset", sort=False)["lowest"].agg(lambda d: int((d == "ancestral").sum()))
    per_task = ", ".join(f"{d} {n} of {int((ranks['dataset'] == d).sum())}" for d, n in first.items())
    other = ranks[ranks["lowest"] != "ancestral"]
    return [f"Decoding: ancestral sampling has the lowest mean W1(C, H) of the run's "
            f"{summary['decoding'].nunique()} decodings in {int(first.sum())} of the {len(ranks)} task x probe cells "
            f"of the production table ({per_task}); where another decoding is lowest, its interval overlaps ancestral's in "
            f"{int(other['overlaps ancestral'].sum())} of {len(other)} cells (the paper: unbiased samples match "
            f"best on every task but dialogue; production tables, Fig. 5)."]


def _token_finding(summary: pd.DataFrame) -> list[str]:
    rsd = summary.groupby("metric")["rsd"].agg(["min", "max"])
    if not {"classwise_ece", "full_ece"} <= set(rsd.index):
        return []
    cw, full = rsd.loc["classwise_ece"], rsd.loc["full_ece"]
    ours, theirs = "{:.1%}".format, "{:.2%}".format  # as the token-calibration table prints them

    def liu(metric: str) -> str:
        values = paper.LIU_TABLE_1[metric].values()
        return span(min(values), max(values), theirs)

    return [f"Token calibration: over bin counts the RSD of cw-ECE is {span(cw['min'], cw['max'], ours)} and of "
            f"Full-ECE {span(full['min'], full['max'], ours)}; Liu et al.: {liu('classwise_ece')} and "
            f"{liu('full_ece')} (Liu et al. Table 1)."]


def _replacement_finding(summary: pd.DataFrame) -> list[str]:
    k = summary.groupby(["model", "decoding", "oracle_size"])["k_match"].first().dropna()
    if k.empty:
        return []
    return [f"A model's TVDs are distributed like the oracles' (their histograms overlap by the threshold) once "
            f"{span(k.min(), k.max(), '{:.0f}'.format)}% of its contexts are replaced by the oracle's TVD, over "
            f"every oracle size (the paper: about {paper.REPLACEMENT_SHARE:.0%} for GPT-2; k%-oracle replacement "
            f"table)."]


FINDINGS = {
    "provo_summary": _table_one_finding,
    "regression_coefficients": _regression_finding,
    "oracle_replacement_summary": _replacement_finding,
    "token_calibration_summary": _token_finding,
    "production_summary": lambda summary, probes: _production_finding(summary, probes) + _decoding_finding(summary, probes),
}
"""The finding each registered table (by name prefix) gives, in the page's order; the production
finding also takes the probes of the production figures (the page's table shows those)."""

DISPUTED_BY = {"regression_coefficients": "Table 3", "oracle_replacement_summary": "k%-oracle replacement",
               "token_calibration_summary": "RSD of cw-ECE"}
"""The start of the Disagreements headings that dispute a table's finding."""


def findings(entries: list[dict], disputed: list[str] = (), figure_probes: list[str] | None = None) -> list[str]:
    """A handful of sentences, each naming the table it comes from, and pointing to
    Disagreements where an entry's heading (``disputed``) is on its table; ``figure_probes``:
    those of the production figures."""
    out = []
    for prefix, finding in FINDINGS.items():
        frame = table_of(entries, prefix)
        if frame is not None and len(frame):
            said = finding(frame, figure_probes) if prefix == "production_summary" else finding(frame)
            if prefix in DISPUTED_BY and any(t.startswith(DISPUTED_BY[prefix]) for t in disputed):
                said = [f"{text[:-2]}; see Disagreements)." for text in said]
            out.extend(said)
    return out


def absent_sections(config: dict, present: set[str]) -> list[dict]:
    """The sections that need more compute than this run had, with the command that makes them."""
    out = []
    draws = most_draws(config["provo"]) if "provo" in config else PAPER_DRAWS
    if draws < PAPER_DRAWS:
        out.append({"heading": "The paper's draw count (1,000 draws per context)", "text": Markup(
            f"Not run: this run draws at most {draws} per context, so its sample-size figure subsamples "
            f"those {draws} (sizes at or above {draws} cannot be drawn), not the paper's 1,000, and Table 1's "
            "model rows carry the upward bias of a small-sample TVD. A decoding with `n_samples: 1000` "
            "(`configs/paper-scale.yaml` has `ancestral-1000`; `configs/paper-draws.yaml` runs it alone) "
            "puts Table 1 at 1,000 draws beside the others and draws the sample-size figure as the paper "
            "does (subsamples of 10, 20, 40 and 100 of the 1,000).")})
    decodings = config["production"]["decodings"] if "production" in config else []
    families = {f for f, keys in DECODING_FAMILIES.items() for d in decodings
                if (keys and any(k in d for k in keys)) or (not keys and set(d) == {"name"})}
    if "production" in config and len(families) < len(DECODING_FAMILIES):
        out.append({"heading": "Decoding families", "text": Markup(
            f"Not run: this run's decodings cover {', '.join(sorted(families)) or 'none'} of the paper's five "
            "families (ancestral, temperature, top-k, top-p, typical). `scripts/run.sh --configfile "
            "configs/decoding-families.yaml`, in a checkout of its own, runs the paper's nine "
            "settings on a seeded subset of each task's inputs; its production tables and the mean-W1 figure "
            "(Giulianelli et al. Fig. 5) then hold every family. The documentation has the page of such a run: "
            "[Decoding families](decoding-families/results.md) (`docs/decoding-families/results.md` in the "
            "repository).")})
    return out


PAPER_THRESHOLDS = {k.split("_", 1)[1]: v for k, v in paper.GIULIANELLI_LEVELS.items() if k.startswith("miscalibrated_")}
"""Giulianelli et al. 2023, Sec. 7: the W1 above which an input is miscalibrated, per probe."""


def used_thresholds(path: str) -> dict[str, float]:
    """The thresholds a ``production_miscalibrated`` table was selected with (its metadata's
    ``thresholds``, as ``varprobe production-miscalibrated`` writes it); ValueError naming the
    file when it has none."""
    thresholds = tables.read_metadata(path).get("thresholds")
    if not isinstance(thresholds, dict):
        raise ValueError(f"{path}: production_miscalibrated table without its thresholds in its metadata "
                         "(written by varprobe production-miscalibrated); rerun rule production_miscalibrated")
    return {probe: float(value) for probe, value in thresholds.items()}


def threshold_table(used: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Per dataset and probe, the threshold the run selected with (``used``: dataset -> probe ->
    threshold) beside the paper's (``PAPER_THRESHOLDS``; "–" for a probe it has none for), and
    whose the run's is: the paper's where the two are equal, else the run's own."""
    rows = [{"dataset": dataset, "probe": probe, "threshold on W1 (this run)": f"> {value:g}",
             "the paper's": f"> {PAPER_THRESHOLDS[probe]:g}" if probe in PAPER_THRESHOLDS else "–",
             "whose": "the paper's" if PAPER_THRESHOLDS.get(probe) == value else "the run's own"}
            for dataset, thresholds in used.items() for probe, value in thresholds.items()]
    return pd.DataFrame(rows, columns=["dataset", "probe", "threshold on W1 (this run)", "the paper's", "whose"])


def miscalibrated_block(measured: dict) -> dict | None:
    """Giulianelli et al. Sec. 7: the most miscalibrated inputs of every production system of the
    run (its ``production_miscalibrated`` tables), as a page table block, with the thresholds
    each table was selected with (``used_thresholds``) beside the paper's: the title says "the
    paper's thresholds" only where every one of them is the paper's."""
    read = [(tables.read(p, "production_miscalibrated"), p) for p in measured.get("production_miscalibrated", [])]
    read = [(frame, path) for frame, path in read if len(frame)]
    if not read:
        return None
    used: dict[str, dict[str, float]] = {}
    for frame, path in read:
        used.setdefault(str(frame["dataset"].iloc[0]), {}).update(used_thresholds(path))
    levels = threshold_table(used)
    papers = (levels["whose"] == "the paper's").all()
    whose = "the paper's thresholds" if papers else "the run's thresholds, not the paper's"
    return {"title": f"The most miscalibrated inputs (above {whose})",
            "prefix": "production_miscalibrated",
            "body": markdown(miscalibrated(pd.concat([f for f, _ in read], ignore_index=True))),
            "note": Markup("The thresholds this run selected with (`production.miscalibration.thresholds`), beside "
                           f"the paper's (Giulianelli et al. 2023, Sec. 7):\n\n{markdown(levels)}")}


FAILURE_COLUMNS = {"reason": "reason", "draws": "draws", "share_of_draws": "share of draws",
                   "draws_without_letter": "draws without any letter",
                   "paper_protocol": "the paper's protocol"}
"""The columns of a ``provo_failures`` table that the failure-rate disagreement shows, and their
names there."""


def failures(entries, measured: dict) -> dict | None:
    summary = table_of(entries, "provo_summary")
    if summary is None or "provo_failures" not in measured:
        return None
    failures = tables.read(measured["provo_failures"], "provo_failures")
    rows, notes = [], []
    for r in summary.itertuples(index=False):
        table = failures[(failures["model"] == r.model) & (failures["decoding"] == r.decoding)]
        if table.empty:
            continue
        system = f"{r.model} / {r.decoding}"
        notes.append(f"{code(system)}: {r.failure_rate:.2%} of draws fail (Table 1's failure rate, its row `all`); "
                     f"under the paper's reading only the draws without any letter would")
        failed = table.loc[table["reason"] != "", list(FAILURE_COLUMNS)]
        shown = failed.rename(columns=FAILURE_COLUMNS).assign(
            **{"share of draws": failed["share_of_draws"].map("{:.2%}".format)})
        rows.extend({"system": system, **row} for row in shown.to_dict("records"))
        rows.append({"system": system, "reason": "all", "draws": int(failed["draws"].sum()),
                     "share of draws": f"{r.failure_rate:.2%}",
                     "draws without any letter": int(failed["draws_without_letter"].sum()),
                     "the paper's protocol": ""})
    if not rows:
        return None
    rows.extend({"system": f"paper: {model}", "reason": "all", "draws": draws, "share of draws": share,
                 "draws without any letter": "", "the paper's protocol": ""}
                for model, (share, draws) in paper.FAILURE_RATES.items())
    return {"title": "Failure rate", "paper": Markup("Ilia & Aziz 2024, App. C.3 (the rows `paper:` of the table below)"),
            "ours": Markup("; ".join(notes)),
            "cause": Markup("Measured: our sampler reads up to 20 tokens and rejects a draw whose word is still "
                      "open then (`token_budget`), that glues letters onto the context's last word "
                      "(`extends_context_word`) or that ends before a word (`ended_before_word`). The "
                      "authors' sampler reads 5 tokens, removes punctuation and takes the first non-empty "
                      "run, so it keeps a truncated or glued word and fails only a draw with no letter at "
                      "all. The column of draws without any letter counts those: the failures both "
                      "protocols share."),
            "table": markdown(pd.DataFrame(rows))}


def production(entries, measured: dict) -> dict | None:
    summary = table_of(entries, "production_summary")
    if summary is None:
        return None
    signs = production_signs(summary)
    examples = []
    for dataset in dict.fromkeys(signs["dataset"]):
        paths = measured.get("production_examples", {}).get(dataset)
        if paths:
            ex = production_example(tables.read(paths["instances"], "production_instances"),
                                    tables.read(paths["samples"], "production_samples"))
            rows = list(zip_longest(map(_short, ex["references"]), map(_short, ex["outputs"]), fillvalue=""))
            examples.append({"dataset": dataset, "input_id": ex["input_id"], "source": _short(ex["source"]),
                             "rows": rows})
    return {"title": "Production: the sign of mean M - H",
            "paper": "; ".join(f"{d}: {s} ({m}, {w})" for d, (s, m, w) in paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.items()),
            "ours": "; ".join(f"{r.dataset} {r.probe}: {r.sign}" for r in signs.itertuples(index=False)
                              if r.probe in ("lexical-1", "semantic")),
            "cause": Markup("What differs: one 135M instruct model, prompted with an instruction for every task, "
                      "against the paper's task-trained OpusMT (translation), Flan-T5 (simplification) and "
                      "DialoGPT (dialogue); below, one input per task with its references and the model's "
                      "outputs. Which difference turns the sign is unexplained: the paper's models are not "
                      "available offline (`configs/production-full.yaml` runs them by hub id)."),
            "table": markdown(signs), "examples": examples}


def decodings(entries) -> dict | None:
    summary = table_of(entries, "production_summary")
    ranks = decoding_ranks(summary) if summary is not None else pd.DataFrame()
    if ranks.empty:
        return None
    claimed = ranks[ranks["dataset"].isin(paper.GIULIANELLI_ANCESTRAL_BEST)]
    other = claimed[claimed["lowest"] != "ancestral"]
    if other.empty:
        return None
    return {"title": "Production: the decoding that matches human variability best",
            "paper": (f"unbiased (ancestral) samples have the lowest mean W1(C, H) for every task except "
                      f"open-domain dialogue ({', '.join(paper.GIULIANELLI_ANCESTRAL_BEST)}; Sec. 6.2, Fig. 5)"),
            "ours": (f"another decoding is lowest in {len(other)} of the {len(claimed)} task x probe cells of "
                     f"those tasks, every probe the run computed (the table below; the findings count the "
                     f"production table's probes alone)"),
            "cause": (f"Measured: in {int(other['overlaps ancestral'].sum())} of those {len(other)} cells the lowest "
                      f"decoding's 95% interval overlaps ancestral's (there the run's inputs do not order the two). "
                      f"Why the others differ is unexplained: the paper's generators are task-trained models "
                      f"(OpusMT, Flan-T5, GPT-2), ours one instruct model prompted for every task."),
            "table": markdown(other.assign(**{"overlaps ancestral": other["overlaps ancestral"].map(
                {True: "yes", False: "no"})}))}


def _short(value) -> str:
    """A text of a production example shortened for the page: one line of at most 160 characters
    (the template prints it as text, ``varprobe.results_page.markup``)."""
    line = " ".join(str(value).split())
    return line if len(line) <= 160 else line[:157] + "..."


PAPER_ITEMS = (
    ("Ilia & Aziz 2024", "Table 1 (ECE and expected TVD)", "provo", ""),
    ("Ilia & Aziz 2024", "Table 1, GPT-2, Bloom and ChatGPT columns", "provo",
     "models not shipped offline (GPT-2, Bloom) or behind a paid API (ChatGPT); the paper's values are "
     "printed beside ours, and an OpenAI-compatible model runs in both of the paper's modes by config"),
    ("Ilia & Aziz 2024", "Fig. 1 (word distributions of two contexts)", "provo", ""),
    ("Ilia & Aziz 2024", "Fig. 2 (TVD densities)", "provo", ""),
    ("Ilia & Aziz 2024", "Fig. 3 and Table 3 (ARD regression)", "regression", ""),
    ("Ilia & Aziz 2024", "Fig. 4 (syntactic and semantic TVD)", "word_classes", ""),
    ("Ilia & Aziz 2024", "Table 2 and Fig. 5 (biased estimator, App. A)", "biased", ""),
    ("Ilia & Aziz 2024", "Figs. 6-10 (TVD against each predictor, App. B)", "regression",
     "the regression's coefficients summarise them, and the per-context table "
     "(`provo/MODEL/DECODING/tvd.parquet`, the explorer) holds every point"),
    ("Ilia & Aziz 2024", "Fig. 11 (sample size, App. C.1)", "sample_size", ""),
    ("Ilia & Aziz 2024", "Fig. 12 (TVD differences, App. C.4)", "replacement", ""),
    ("Ilia & Aziz 2024", "Table 4 and Fig. 13 (token level, App. D)", "token_level", ""),
    ("Ilia & Aziz 2024", "Figs. 14-16 (k%-oracle replacement, App. E)", "replacement", ""),
    ("Ilia & Aziz 2024", "Figs. 17-18 (fine-tuning, App. F)", "finetune", ""),
    ("Liu et al. 2024", "Table 1 (RSD over bin counts)", "token_calibration", ""),
    ("Liu et al. 2024", "Fig. 1 (how the metrics bin)", None, "a diagram, no result"),
    ("Liu et al. 2024", "Fig. 2 (Full-ECE during training of Baichuan-2 7B)", None,
     "needs the model's training checkpoints, not available offline"),
    ("Giulianelli et al. 2023", "Fig. 2 (human variability per task)", "production", ""),
    ("Giulianelli et al. 2023", "Fig. 3 (mean M - H)", "production", ""),
    ("Giulianelli et al. 2023", "Fig. 4 (W1 densities with the human control)", "production", ""),
    ("Giulianelli et al. 2023", "Fig. 5 (mean W1 across decoding settings)", "production", ""),
    ("Giulianelli et al. 2023", "Story generation (WritingPrompts) everywhere", None,
     "data unobtainable offline: a hand-written stand-in tests the loader; GPT-2-large is not shipped"),
    ("Giulianelli et al. 2023", "Sec. 7 and App. E (miscalibrated inputs)", "production", ""),
    ("Giulianelli et al. 2023", "Table 1 (generation settings, App. C)", None,
     "the run's configuration (last section) holds ours"),
)
"""Every table and figure of the three papers: (paper, item, section, why). With no ``why``, the
page section that shows it; with one, the section it would belong to (None: any run) and why the
page does not show it."""

PAPERS = {"Ilia & Aziz 2024": "next-word prediction on Provo", "Liu et al. 2024": "token-level calibration, Full-ECE",
          "Giulianelli et al. 2023": "production variability"}
"""The three papers and what the page reads of each."""


def papers_read(present: set[str]) -> list[str]:
    """The papers a run's sections (``present``: section keys) answer, each with what of it."""
    return [f"{source} ({what})" for source, what in PAPERS.items()
            if any(source == s and section in present for s, _, section, why in PAPER_ITEMS if not why)]


def paper_index(present: dict[str, str]) -> list[dict]:
    """``PAPER_ITEMS`` with where each is: the heading of its section (``present``: section key ->
    heading) when this run made it, why not where the run made its section but not the item, and
    one row per paper none of whose sections the run made (it says nothing of the paper's tables
    and figures: the run made none)."""
    out = []
    for source in PAPERS:
        items = [i for i in PAPER_ITEMS if i[0] == source]
        if not any(section in present for _, _, section, why in items if not why):
            out.append({"paper": source, "item": "every table and figure",
                        "where": "not in this run (its studies were not configured)"})
            continue
        for _, item, section, why in items:
            where = (f"not shown: {why}" if why and (section is None or section in present) else
                     f"section \"{present[section]}\"" if section in present else
                     "not in this run (its study was not configured)")
            out.append({"paper": source, "item": item, "where": Markup(where)})
    return out
