"""Syntactic and semantic TVD (Ilia & Aziz 2024, Sec. 5, App. G): one pattern of rules per
configured level, keyed by its entry of `analyses` (syntactic_tvd, semantic_tvd). The Snakefile
includes this file once for either or both keys (the family's folder,
varprobe.families.word_classes)."""

import json


WORD_CLASS_LEVELS = {"syntactic_tvd": "syntactic", "semantic_tvd": "semantic"}

WORD_CLASS_CAPTIONS = {
    "syntactic_tvd": {
        "summary": (
            "Syntactic TVD per system: each context's human, model and oracle next-word distributions are\n"
            "mapped to distributions over universal POS tags (NLTK perceptron tagger on the context followed\n"
            "by the word) and compared by TVD. ``expected_tvd`` is the mean over contexts of TVD_syn(model,\n"
            "humans) with a bootstrap 95% CI; ``expected_tvd_oracles`` is the mean TVD_syn between two\n"
            "disjoint halves of the humans on the same contexts, the yardstick a model should reach."
        ),
        "histogram": (
            "Histograms of per-context TVD_syn (distance between POS-tag distributions) for each system\n"
            "(solid) and between two disjoint halves of the humans (dashed), on the contexts where the model\n"
            "produced a word (paper Fig. 4, left). Mass further right than the dashed histogram means the\n"
            "model's word classes vary less like the humans' than a human sample of half the size does. The\n"
            "counts are in ``figures/histogram.parquet``."
        ),
    },
    "semantic_tvd": {
        "summary": (
            "Semantic TVD per system: per context, the distinct human and model words are clustered by\n"
            "k-means on their (standardised) word embeddings, k by the elbow of the SSE curve, words without\n"
            "an embedding pooled in one class; distributions over clusters are compared by TVD.\n"
            "``expected_tvd`` is the mean TVD_sem(model, humans) with a bootstrap 95% CI;\n"
            "``expected_tvd_oracles`` the mean TVD_sem between two halves of the humans on the same clusters."
        ),
        "histogram": (
            "Histograms of per-context TVD_sem (distance between distributions over word clusters) for each\n"
            "system (solid) and between two disjoint halves of the humans (dashed), both measured on the\n"
            "clusters of that system's and the humans' words (paper Fig. 4, right). Mass further right than\n"
            "the dashed histogram means the model's meanings vary less like the humans' than a human sample\n"
            "of half the size does. The counts are in ``figures/histogram.parquet``."
        ),
    },
}
"""The report captions of each level's summary table and histograms."""


def word_class_options(key):
    """The level's own CLI options, from its config entry, as a list of arguments (a param:
    changing it reruns its jobs)."""
    settings = ANALYSES[key]
    if key == "syntactic_tvd":
        return ["--nltk-data", *settings["nltk_data"]]
    return [
        "--embeddings",
        json.dumps(settings["embeddings"], sort_keys=True),
        "--n-init",
        settings["n_init"],
        "--max-iter",
        settings["max_iter"],
        "--k-rule",
        settings["k_rule"],
    ]


for KEY, LEVEL in WORD_CLASS_LEVELS.items():
    if KEY not in ANALYSES:
        continue
    WORD_CLASS = f"{RESULTS}/analyses/{KEY}"
    WORD_CLASS_SYSTEM = f"{WORD_CLASS}/{{model}}/{{decoding}}"

    rule:
        """Per-context class TVD of one system to the humans and the oracles."""
        name:
            KEY
        input:
            contexts=rules.provo_data.output.contexts,
            responses=rules.provo_data.output.responses,
            model=estimate_table,
        output:
            tvd=f"{WORD_CLASS_SYSTEM}/tvd.parquet",
            system=f"{WORD_CLASS_SYSTEM}/system.parquet",
        params:
            # The shell command is formatted when the job runs, after the loop has ended: what
            # differs between levels must be a param, fixed when the rule is defined.
            subcommand=f"{LEVEL}-tvd",
            options=word_class_options(KEY),
            seed=config["seed"],
            resplits=config["provo"]["resplits"],
            bootstrap=config["provo"]["bootstrap_resamples"],
            kind=estimate_kind,
        conda:
            CONDA_ENV
        threads: job_threads(KEY)
        resources:
            **job_resources(KEY),
        log:
            log_path(KEY, "{model}", "{decoding}"),
        benchmark:
            benchmark_path(KEY, "{model}", "{decoding}")
        shell:
            "OMP_NUM_THREADS={threads:q} varprobe {params.subcommand:q} {params.options:q} "
            "--model {wildcards.model:q} --decoding {wildcards.decoding:q} --seed {params.seed:q} "
            "--resplits {params.resplits:q} --bootstrap {params.bootstrap:q} "
            "--contexts {input.contexts:q} --responses {input.responses:q} "
            "--{params.kind:q} {input.model:q} --tvd-out {output.tvd:q} "
            "--system-out {output.system:q} > {log:q} 2>&1"

    rule:
        """One row per system: mean class TVD to the humans and between oracles, with CIs."""
        name:
            f"{KEY}_summary"
        input:
            system_path(f"{WORD_CLASS_SYSTEM}/system.parquet"),
        output:
            f"{WORD_CLASS}/summary.parquet",
        params:
            level=LEVEL,
        conda:
            CONDA_ENV
        threads: job_threads(f"{KEY}_summary")
        resources:
            **job_resources(f"{KEY}_summary"),
        log:
            log_path(f"{KEY}_summary", "summary"),
        benchmark:
            benchmark_path(f"{KEY}_summary", "summary")
        shell:
            "varprobe word-class-summary --level {params.level:q} --systems {input:q} "
            "--out {output:q} > {log:q} 2>&1"

    rule:
        """Histograms of per-context class TVD of every system and its oracles (paper Fig. 4)."""
        name:
            f"{KEY}_figure"
        input:
            system_path(f"{WORD_CLASS_SYSTEM}/tvd.parquet"),
        output:
            figure=report(
                f"{WORD_CLASS}/figures/histogram.png",
                caption=CAPTION,
                category="Provo beyond words",
            ),
            table=f"{WORD_CLASS}/figures/histogram.parquet",
        params:
            level=LEVEL,
            caption=WORD_CLASS_CAPTIONS[KEY]["histogram"],
        conda:
            CONDA_ENV
        threads: job_threads(f"{KEY}_figure")
        resources:
            **job_resources(f"{KEY}_figure"),
        log:
            log_path(f"{KEY}_figure", "figure"),
        benchmark:
            benchmark_path(f"{KEY}_figure", "figure")
        shell:
            "varprobe word-class-figure --level {params.level:q} --tvd {input:q} "
            "--figure {output.figure:q} --table {output.table:q} > {log:q} 2>&1"

    report_table(
        f"{KEY}_summary",
        f"{WORD_CLASS}/summary.parquet",
        "Provo beyond words",
        f"{LEVEL.capitalize()} TVD per system and the oracle control",
        caption=WORD_CLASS_CAPTIONS[KEY]["summary"],
    )
    ANALYSIS_TARGETS.extend(
        [f"{WORD_CLASS}/summary.parquet", f"{WORD_CLASS}/figures/histogram.png"]
    )
