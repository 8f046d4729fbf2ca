"""The page's prose built from the run's tables: what was run, the findings (each pointing to its
table), the disagreements with the papers with their measured causes, the sections a run did
not make and the command that makes them, and where each table and figure of the three papers
is on the page."""

from __future__ import annotations

import re
from itertools import zip_longest
from pathlib import Path

import pandas as pd

from varprobe import tables
from varprobe.published import GIULIANELLI_SELECTIONS
from varprobe.run_plan import RunPlan
from varprobe.results_page import paper, sections, verdicts
from varprobe.results_page.markup import Markup, code, text
from varprobe.results_page.tables import (  # span, table_of and decoding_ranks: read here by name too
    decoding_ranks, markdown, miscalibrated, number, production_example, production_shown_probes, production_signs,
    span, table_of)

PAPER_DRAWS = 1000
"""The paper's draws per context for GPT-2 (Table 1's ancestral row, App. C.1)."""
DECODING_FAMILIES = {"ancestral": (), "temperature": ("temperature",), "top-k": ("top_k",),
                     "top-p": ("top_p",), "typical": ("typical_p",)}
"""Giulianelli et al.'s five decoding families (Sec. 4.2) and the setting that makes each."""


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


MODEL_CARD_PARAMETERS = {
    "smollm2-135m": "135M", "gemma-3-270m": "268M", "qwen2.5-coder-0.5b": "494M", "qwen2.5-coder-1.5b": "1.54B",
}
"""Parameter counts as the model cards state them, by a part of the model's GGUF file or hub id
(lowercased): SmolLM2-135M-Instruct, Gemma-3-270M, Qwen2.5-Coder-0.5B- and 1.5B-Instruct."""

QUANTIZATION = re.compile(r"(?<![A-Za-z0-9])(I?Q\d_(?:K_[SML]|K|\d)|Q\d|F16|BF16|F32)(?![A-Za-z0-9])", re.IGNORECASE)
"""A GGUF file's quantization type in its name (``SmolLM2-135M-Instruct.Q4_1.gguf``: Q4_1)."""


def describe_model(entry: dict) -> str:
    """A model entry of the config as "What was run" names it: its weights (a GGUF file with its
    quantization, a hub id, a local folder, an API model, a fine-tuning of another entry) and its
    parameter count: the entry's ``parameters``, else the model card's where the page knows it
    (``MODEL_CARD_PARAMETERS``)."""
    source = entry.get("gguf_file") or entry.get("pretrained") or entry.get("path") or ""
    if "finetune" in entry:
        tune = entry["finetune"]
        return f"fine-tuned from {tune['base']} on {tune['dataset']}"
    if "api" in entry:
        return f"API model {entry['api'].get('model', '')}".strip()
    parts = []
    if entry.get("gguf_file"):
        found = QUANTIZATION.search(Path(entry["gguf_file"]).stem.replace(".", "_").replace("-", "_"))
        parts.append(f"{found[1].upper()} GGUF" if found else "GGUF")
    stated = entry.get("parameters")  # the entry's card count, else the known cards'
    size = (f"{stated / 1e9:.3g}B" if stated >= 1e9 else f"{stated / 1e6:.3g}M") if stated else next(
        (n for key, n in MODEL_CARD_PARAMETERS.items() if key in str(source).lower()), None)
    parts.append(f"{size} parameters (model card)" if size else "parameter count not stated")
    return ", ".join(parts)


def what_was_run(config: dict, entries: list[dict]) -> list[tuple[str, str]]:
    """(what, how much) each: the models (each with its quantization and parameter count,
    ``describe_model``), the Provo data and draws, the production data and draws."""
    lines = []
    models = config.get("models", [])
    if models:
        lines.append(("models", Markup("; ".join(f"{code(m['name'])} ({text(describe_model(m))})" for m in models))))
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
        plan = RunPlan.from_config(config)
        inputs = {d: _inputs_run(plan, d) for d in plan.datasets}
        decodings = ", ".join(plan.production_decodings)
        if len(set(inputs.values())) == 1:
            ran = f"{', '.join(inputs)}, {next(iter(inputs.values()))} of each"
        else:
            ran = "; ".join(f"{d}: {how}" for d, how in inputs.items())
        lines.append(("production", f"{ran}, {production['n_samples']} outputs per input, decodings {decodings}"))
    return lines


def _inputs_run(plan: RunPlan, dataset: str) -> str:
    """Which inputs of a production dataset ran: every one, or the first or a seeded choice of
    its ``max_inputs`` (the dataset's own, else the study's: ``RunPlan.dataset_setting``)."""
    most = plan.dataset_setting(dataset, "max_inputs")
    if most is None:
        return "every input"
    chosen = "a seeded choice of" if plan.dataset_setting(dataset, "input_choice") == "seeded" else "the first"
    return f"{chosen} {most:,} inputs"


def _table_one_finding(found: tuple[pd.DataFrame, pd.Series, str] | None) -> list[str]:
    """IA-1's and IA-2's sentences on the systems their verdicts are decided on
    (``verdicts.table_one_systems``: the paper's own systems where the run has them, else the
    run's models), named in each sentence."""
    if found is None:
        return []
    models, o, source = found
    low, high = models["expected_tvd"].min(), models["expected_tvd"].max()
    above = int((models["ci_low"] > o["ci_high"]).sum())
    ece_models = models["ece_human_majority"]
    return [
        f"No model reproduces human variability as well as half of the humans do: on {source}, every "
        f"system's E TVD(M, H) is {span(low, high)} ({above} of {len(models)} with a 95% interval "
        f"above the oracles'), against E TVD(O2, O1) = {number(o['expected_tvd'])} between two halves of "
        f"the humans (Table 1; the paper: GPT-2 0.64 against 0.42).",
        f"ECE says the opposite: on {source}, against the human majority the models' ECE is "
        f"{span(ece_models.min(), ece_models.max())}, the oracle's {number(o['ece_human_majority'])} "
        f"(Table 1; the paper: 0.20 against 0.57), so ECE ranks models as better calibrated than humans.",
    ]


def _production_finding(summary: pd.DataFrame, decided: dict | None = None) -> list[str]:
    """The span of mean W1(C, H) over the probes the page's production table shows
    (``production_shown_probes``: the paper's main probes) and of the human control where the
    paper has one (not dialogue: ``verdicts.NO_CONTROL``), of the systems that beat copying the
    source (``summary`` holds those alone), with the verdicts of the level (G-1) and sign (G-2)
    claims; where those are not testable (no system beats copying), that alone, with why."""
    decided = decided or {}
    levels, signs = decided.get("G-1"), decided.get("G-2")
    if levels is not None and levels.verdict == verdicts.NOT_TESTABLE:
        return [f"Production: Giulianelli et al.'s levels and signs are not read from this run. "
                f"{verdicts.stated('G-1', levels)}" + (f" {verdicts.stated('G-2', signs)}" if signs else "")]
    shown = summary[summary["available"] & summary["probe"].isin(production_shown_probes(summary))]
    w1 = shown[shown["statistic"] == "w1_C_H"]
    control = shown[(shown["statistic"] == "w1_control") & ~shown["dataset"].isin(verdicts.NO_CONTROL)]
    if w1.empty:
        return []
    against = (f" against a human control of {span(control['mean'].min(), control['mean'].max())} (translation and "
               "simplification; dialogue has none in the paper)") if len(control) else ""
    out = [f"Production: the mean W1(C, H) over inputs is {span(w1['mean'].min(), w1['mean'].max())}{against} "
           f"(the paper: unbiased sampling \"always lower than {paper.GIULIANELLI_LEVELS['w1_decoding']}\"; "
           f"production tables)." + (f" {verdicts.stated('G-1', levels)}" if levels else "")]
    if signs is not None:
        out.append(f"The sign of mean M - H on the paper's probes ({', '.join(verdicts.PAPER_PROBES)}): {signs.ours} "
                   f"(production tables; see Disagreements). {verdicts.stated('G-2', signs)}")
    return out


def _decoding_finding(summary: pd.DataFrame, decided: dict | None = None) -> list[str]:
    """Where ancestral sampling has the lowest mean W1(C, H), over the task x probe cells of the
    page's production table (the probes ``production_shown_probes``: the paper's main probes)
    of the systems that beat copying (``summary`` holds those alone), with the verdict of the
    decoding claim (G-3)."""
    ranks = decoding_ranks(summary[summary["probe"].isin(production_shown_probes(summary))])
    verdict = (decided or {}).get("G-3")
    if ranks.empty:
        return []
    first = ranks.groupby("dataset", sort=False)["lowest"].agg(lambda d: int((d == "ancestral").sum()))
    per_task = ", ".join(f"{d} {n} of {int((ranks['dataset'] == d).sum())}" for d, n in first.items())
    other = ranks[ranks["lowest"] != "ancestral"]
    return [f"Decoding: ancestral sampling has the lowest mean W1(C, H) of the run's "
            f"{summary['decoding'].nunique()} decodings in {int(first.sum())} of the {len(ranks)} task x probe cells "
            f"of the production table ({per_task}); where another decoding is lowest, its interval overlaps ancestral's in "
            f"{int(other['overlaps ancestral'].sum())} of {len(other)} cells (the paper: unbiased samples match "
            f"best on every task but dialogue; production tables, Fig. 5)."
            + (f" {verdicts.stated('G-3', verdict)}" if verdict else "")]


def _production_findings(summary: pd.DataFrame, decided: dict) -> list[str]:
    findings = _production_finding(summary, decided)
    return findings + (_decoding_finding(summary, decided) if decided.get("G-1") is None
                       or decided["G-1"].verdict != "not testable" else [])


STUDY_FINDINGS = {
    "provo": {"provo_summary": (_table_one_finding, ("IA-1", "IA-2"))},
    "production": {"production_summary": (_production_findings, ())},
}
"""The studies' findings by section: the finding each registered table (by name prefix) gives,
and the claims (``verdicts.CLAIMS``) whose verdicts its sentences state, one per sentence; the
production finding states its own (it takes the verdicts). An analysis family's are its page
module's ``FINDINGS``."""


def registered_findings() -> dict[str, tuple]:
    """Every finding by table prefix, in page order: ``STUDY_FINDINGS`` and each family's
    ``FINDINGS`` (its page module's, ``varprobe.families.<name>.page``)."""
    return {prefix: finding for part in sections.by_section(STUDY_FINDINGS, "FINDINGS")
            for prefix, finding in part.items()}


def disputed_by() -> dict[str, str]:
    """The start of the Disagreements headings that dispute a table's finding, by the table's
    prefix: each family's ``DISPUTED_BY``."""
    return {prefix: start for part in sections.by_section({}, "DISPUTED_BY") for prefix, start in part.items()}

OWN_FINDINGS = ("IA-5", "IA-6")
"""Claims with no finding of a table of their own: their finding is the claim's record
(``verdicts.finding``), where the run can test it."""



def findings(entries: list[dict], disputed: list[str] = (), decided: dict | None = None,
             config: dict | None = None) -> list[str]:
    """A handful of sentences, each naming the table it comes from, pointing to Disagreements
    where an entry's heading (``disputed``) is on its table, and stating the verdict of its claim
    as the claim's record gives it (``decided``: ``verdicts.decide``). The production findings read only the systems that beat copying
    the source (``verdicts.adequate_systems``); Table 1's, the systems its claims are decided on
    (``verdicts.table_one_systems``, which reads the run's ``config``)."""
    decided = decided or {}
    run = verdicts.Run(entries, {}, config or {})
    out = []
    disputes = disputed_by()
    for prefix, (finding, claims) in registered_findings().items():
        frame = table_of(entries, prefix)
        if frame is None or not len(frame):
            continue
        if prefix == "production_summary":
            keep = verdicts.adequate_systems(verdicts.Run(entries, {}, {}))
            frame = frame[[k in keep for k in zip(frame["dataset"], frame["model"], frame["decoding"], strict=True)]]
            out.extend(finding(frame, decided))
            continue
        said = finding(verdicts.table_one_systems(run)) if prefix == "provo_summary" else finding(frame)
        if prefix in disputes and any(t.startswith(disputes[prefix]) for t in disputed):
            said = [f"{text[:-2]}; see Disagreements)." for text in said]
        out.extend(f"{text} {verdicts.stated(key, decided[key])}" if key in decided else text
                   for text, key in zip_longest(said, claims[:len(said)]))
    out.extend(verdicts.finding(key, decided) for key in OWN_FINDINGS
               if key in decided and decided[key].verdict != verdicts.NOT_TESTABLE)
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


PAPER_THRESHOLDS = {task: thresholds for task, (_, thresholds, _) in GIULIANELLI_SELECTIONS.items()}
"""Giulianelli et al. 2023, Sec. 7: per task, the W1 above which an input is miscalibrated, per
probe (fns. 12-15; ``varprobe.published.GIULIANELLI_SELECTIONS``)."""


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
    threshold) beside the paper's for that task and probe (``PAPER_THRESHOLDS``; "–" where the
    paper states none), and whose the run's is: the paper's where the two are equal, else the
    run's own."""
    rows = []
    for dataset, thresholds in used.items():
        papers = PAPER_THRESHOLDS.get(dataset, {})
        rows.extend({"dataset": dataset, "probe": probe, "threshold on W1 (this run)": f"> {value:g}",
                     "the paper's": f"> {papers[probe]:g}" if probe in papers else "–",
                     "whose": "the paper's" if papers.get(probe) == value else "the run's own"}
                    for probe, value in thresholds.items())
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


FAILURE_HEADING = "Failure rate"
"""The heading of the failure-rate disagreement (``failures``)."""


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
        notes.append(f"{code(system)} {r.failure_rate:.2%}")
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
    return {"title": FAILURE_HEADING, "paper": Markup("Ilia & Aziz 2024, App. C.3 (the rows `paper:` of its table)"),
            "ours": Markup(", ".join(notes) + " of draws fail (Table 1's failure rate, each system's row `all` "
                           "of its table); under the paper's reading only the draws without any letter would"),
            "cause": Markup("Measured: our sampler reads up to 20 tokens and rejects a draw whose word is still "
                      "open then (`token_budget`), that glues letters onto the context's last word "
                      "(`extends_context_word`) or that ends before a word (`ended_before_word`). The "
                      "authors' sampler reads 5 tokens, removes punctuation and takes the first non-empty "
                      "run, so it keeps a truncated or glued word and fails only a draw with no letter at "
                      "all. The column of draws without any letter counts those: the failures both "
                      "protocols share."),
            "table": markdown(pd.DataFrame(rows))}


def _tested(entries, summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of the production ``summary`` on the paper's probes (``verdicts.PAPER_PROBES``)
    of the systems that beat copying the source (``verdicts.adequate_systems``)."""
    keep = verdicts.adequate_systems(verdicts.Run(entries, {}, {}))
    part = summary[summary["probe"].isin(verdicts.PAPER_PROBES)]
    return part[[k in keep for k in zip(part["dataset"], part["model"], part["decoding"], strict=True)]]


def production(entries, measured: dict) -> dict | None:
    """The signs of mean M - H of the systems that beat copying, on the paper's probes, where one
    differs from the paper's (none where the signs are not testable: the verdict table says why)."""
    summary = table_of(entries, "production_summary")
    if summary is None:
        return None
    signs = production_signs(_tested(entries, summary))
    if signs.empty or (signs["agrees"] == "yes").all():
        return None
    examples = []
    for dataset in dict.fromkeys(signs["dataset"]):
        paths = measured.get("production_examples", {}).get(dataset)
        if paths:
            ex = production_example(tables.read(paths["instances"], "production_instances"),
                                    tables.read(paths["samples"], "production_samples"))
            rows = list(zip_longest(map(_short, ex["references"]), map(_short, ex["outputs"]), fillvalue=""))
            examples.append({"dataset": dataset, "input_id": ex["input_id"], "source": _short(ex["source"]),
                             "rows": rows})
    models = ", ".join(code(m) for m in dict.fromkeys(signs["model"]))
    return {"title": "Production: the sign of mean M - H",
            "paper": "; ".join(f"{d}: {s} ({m}, {w})" for d, (s, m, w) in paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.items()),
            "ours": "; ".join(f"{r.dataset} {r.probe}: {r.sign}" for r in signs.itertuples(index=False)),
            "cause": Markup(f"What differs: the run's generators ({models}), prompted with an instruction for every "
                      "task, against the paper's task-trained OpusMT (translation), Flan-T5 (simplification) and "
                      "DialoGPT (dialogue); below, one input per task with its references and the model's "
                      "outputs. Which difference turns the sign is unexplained: the paper's models are not "
                      "available offline (`configs/production-full.yaml` runs them by hub id)."),
            "table": markdown(signs), "examples": examples}


def decodings(entries) -> dict | None:
    """The cells of the paper's probes and tasks where a decoding other than ancestral has the
    lowest mean W1(C, H), of the systems that beat copying."""
    summary = table_of(entries, "production_summary")
    ranks = decoding_ranks(_tested(entries, summary)) if summary is not None else pd.DataFrame()
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
                     f"those tasks on the paper's probes (the table below)"),
            "cause": (f"Measured: in {int(other['overlaps ancestral'].sum())} of those {len(other)} cells the lowest "
                      f"decoding's 95% interval overlaps ancestral's (there the run's inputs do not order the two). "
                      f"Why the others differ is unexplained: the paper's generators are task-trained models "
                      f"(OpusMT, Flan-T5, GPT-2), ours instruct models prompted for every task."),
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
    ("Ilia & Aziz 2024", "Table 2 and Fig. 5 (biased estimator, App. A)", "biased_estimator", ""),
    ("Ilia & Aziz 2024", "Figs. 6-10 (TVD against each predictor, App. B)", "regression",
     "the regression's coefficients summarise them, and the per-context table "
     "(`provo/MODEL/DECODING/tvd.parquet`, the explorer) holds every point"),
    ("Ilia & Aziz 2024", "Fig. 11 (sample size, App. C.1)", "sample_size", ""),
    ("Ilia & Aziz 2024", "Fig. 12 (TVD differences, App. C.4)", "oracle_replacement", ""),
    ("Ilia & Aziz 2024", "Table 4 and Fig. 13 (token level, App. D)", "token_level", ""),
    ("Ilia & Aziz 2024", "Figs. 14-16 (k%-oracle replacement, App. E)", "oracle_replacement", ""),
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
