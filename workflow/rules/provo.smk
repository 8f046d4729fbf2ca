"""Next-word calibration on Provo (Ilia & Aziz 2024): data -> samples -> divergences -> figures."""

import json
import sys
from pathlib import Path


include: "provo_inputs.smk"


PC = config["provo"]
CONTROL_ARGS = (
    "--seed {params.seed:q} --resplits {params.resplits:q} --ece-bins {params.ece_bins:q} "
    "--bootstrap {params.bootstrap:q} --contexts {input.contexts:q} "
    "--responses {input.responses:q} --tvd-out {output.tvd:q} --system-out {output.system:q}"
)
CONTROL_PARAMS = dict(
    seed=config["seed"],
    resplits=PC["resplits"],
    ece_bins=PC["ece_bins"],
    bootstrap=PC["bootstrap_resamples"],
)


rule provo_data:
    """Provo norms, or the configured cloze corpus -> one row per context and the long table
    of human responses."""
    input:
        corpus_input(),
    output:
        contexts=f"{PROVO}/contexts.parquet",
        responses=f"{PROVO}/responses.parquet",
    params:
        **CORPUS_PARAMS,
        texts=PC["texts"],
        raw=raw_options("provo"),
    conda:
        CONDA_ENV
    threads: job_threads("provo_data")
    resources:
        **job_resources("provo_data", parses_input=True),
    log:
        log_path("provo_data", "provo"),
    benchmark:
        benchmark_path("provo_data", "provo")
    shell:
        f"varprobe provo-data {CORPUS_OPTION} --texts {{params.texts:q}} "
        "--contexts-out {output.contexts:q} --responses-out {output.responses:q} {params.raw:q} "
        "> {log:q} 2>&1"


rule provo_sample:
    """Draw n_samples complete next words per context of one shard of the contexts (of one
    fold's held-out passages, with that fold's checkpoint, for a fine-tuned model)."""
    input:
        contexts=rules.provo_data.output.contexts,
        checkpoint=sample_checkpoint,
    output:
        f"{PROVO_SYSTEM}/shards/{{shard}}.parquet",
    wildcard_constraints:
        model=_alternatives(SAMPLERS),
        decoding=_alternatives(PLAN.sampled),
    params:
        model=model_entry,
        decoding=decoding_entry,
        n_samples=decoding_draws,
        max_tokens=PC["max_tokens"],
        seed=config["seed"],
        shards=lambda w: len(PLAN.sampling_shards(w.model)),
        scope=sample_scope,
        cpu_fallback=cpu_fallback,
    threads: job_threads("provo_sample")
    resources:
        **job_resources("provo_sample"),
        gpu=uses_gpu,
        # Tunes memory and speed only (draws do not depend on it): a resource, not a param,
        # so changing it reruns nothing.
        batch_size=PC["batch_size"],
    conda:
        CONDA_ENV
    log:
        log_path("provo_sample", "{model}", "{decoding}", "{shard}"),
    benchmark:
        benchmark_path("provo_sample", "{model}", "{decoding}", "{shard}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe provo-sample --model {params.model:q} "
        "--decoding {params.decoding:q} --contexts {input.contexts:q} --n-samples {params.n_samples:q} "
        "--max-tokens {params.max_tokens:q} --batch-size {resources.batch_size:q} --seed {params.seed:q} "
        "--shard {wildcards.shard:q} --shards {params.shards:q} {params.scope:q} "
        "--gpus {resources.gpu:q} {params.cpu_fallback:q} --out {output:q} > {log:q} 2>&1"


rule provo_enumerate:
    """Enumerate each context's complete next words until the decoding's target mass."""
    input:
        contexts=rules.provo_data.output.contexts,
    output:
        f"{PROVO_SYSTEM}/distribution.parquet",
    wildcard_constraints:
        model=_alternatives(NETWORKS),
        decoding=_alternatives(PLAN.enumerated),
    params:
        model=model_entry,
        decoding=decoding_entry,
        max_tokens=PC["max_tokens"],
        cpu_fallback=cpu_fallback,
    # The longest one-thread job of a small run: started as soon as its input exists, beside
    # the others, not left to the end where it alone would set the run's length.
    priority: 50
    threads: job_threads("provo_enumerate")
    resources:
        **job_resources("provo_enumerate"),
        gpu=uses_gpu,
        # Open prefixes per round: speed and memory only, as for provo_sample.
        batch_size=PC["enumeration_batch_size"],
    conda:
        CONDA_ENV
    log:
        log_path("provo_enumerate", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("provo_enumerate", "{model}", "{decoding}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe provo-enumerate --model {params.model:q} "
        "--decoding {params.decoding:q} --contexts {input.contexts:q} "
        "--max-tokens {params.max_tokens:q} --batch-size {resources.batch_size:q} "
        "--gpus {resources.gpu:q} {params.cpu_fallback:q} --out {output:q} > {log:q} 2>&1"


rule provo_merge:
    """Concatenate a model's sample shards, in order, into its samples table."""
    input:
        lambda w: expand(
            f"{PROVO_SYSTEM}/shards/{{shard}}.parquet",
            shard=PLAN.sampling_shards(w.model),
            allow_missing=True,
        ),
    output:
        f"{PROVO_SYSTEM}/samples.parquet",
    wildcard_constraints:
        model=_alternatives(SAMPLERS),
        decoding=_alternatives(PLAN.sampled),
    localrule: True
    threads: job_threads("provo_merge")
    resources:
        **job_resources("provo_merge"),
    conda:
        CONDA_ENV
    log:
        log_path("provo_merge", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("provo_merge", "{model}", "{decoding}")
    shell:
        "varprobe provo-merge --shards {input:q} --out {output:q} > {log:q} 2>&1"


rule provo_api_sample:
    """Ask an API model for n_samples next words per context: n one-word requests, or one
    request for a list of n words (its api.provo.mode)."""
    input:
        contexts=rules.provo_data.output.contexts,
    output:
        samples=f"{PROVO_SYSTEM}/samples.parquet",
        replies=f"{PROVO_SYSTEM}/replies.parquet",
    wildcard_constraints:
        model=_alternatives(API),
        decoding=_alternatives(PLAN.sampled),
    params:
        model=model_entry,
        decoding=decoding_entry,
        n_samples=decoding_draws,
        seed=config["seed"],
    threads: job_threads("provo_api_sample")
    resources:
        **job_resources("provo_api_sample"),
        **API_RESOURCES,
    conda:
        CONDA_ENV
    log:
        log_path("provo_api_sample", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("provo_api_sample", "{model}", "{decoding}")
    shell:
        "varprobe provo-api-sample --model {params.model:q} --decoding {params.decoding:q} "
        "--contexts {input.contexts:q} --n-samples {params.n_samples:q} --seed {params.seed:q} "
        f"{API_OPTIONS} --out {{output.samples:q}} --replies-out {{output.replies:q}} > {{log:q}} 2>&1"


rule provo_api_summary:
    """Reply and parse counts of every API system, summed over the contexts."""
    input:
        [
            f"{PROVO}/{m}/{d}/replies.parquet"
            for m, d in PLAN.provo_systems()
            if m in API
        ],
    output:
        f"{PROVO}/api_replies.parquet",
    threads: job_threads("provo_api_summary")
    resources:
        **job_resources("provo_api_summary"),
    conda:
        CONDA_ENV
    log:
        log_path("provo_api_summary", "summary"),
    benchmark:
        benchmark_path("provo_api_summary", "summary")
    shell:
        "varprobe provo-api-summary --replies {input:q} --out {output:q} > {log:q} 2>&1"


if API:
    report_table(
        "provo_api_replies",
        f"{PROVO}/api_replies.parquet",
        "Provo",
        "Replies of the API models: requested, parsed and kept words",
        caption=(
            "What the API models answered, per system, summed over the Provo contexts. ``requested``: words\n"
            "asked for (n per context); ``replies``: replies received; ``truncated``: replies cut by the token\n"
            'budget; ``preamble``: list replies that opened with a sentence ("Here are ..."), dropped;\n'
            "``items``: list items (single mode: one per reply); ``invalid``: items without a complete word;\n"
            "``multiword``: items of several words (the first is kept); ``kept``: words that enter the model's\n"
            "distribution; ``extra``: valid words beyond the n asked for (dropped); ``shortfall``: words\n"
            "missing to n (list mode; the distribution is then over fewer words); ``failed``: failed rows of\n"
            "the samples table (single mode)."
        ),
    )


rule provo_published:
    """A published system's samples (Ilia & Aziz 2024) -> a samples CSV, and its Table 1 values
    under the authors' protocol beside the paper's."""
    input:
        norms=PROVO_NORMS,
        files=published_files,
    output:
        samples=f"{PROVO}/{{model}}/given/published.csv",
        authors=f"{PROVO}/{{model}}/given/authors.parquet",
    wildcard_constraints:
        model=_alternatives(PUBLISHED),
    params:
        system=lambda w: PUBLISHED[w.model],
        raw=raw_options("provo"),
        seed=config["seed"],
    conda:
        CONDA_ENV
    threads: job_threads("provo_published")
    resources:
        **job_resources("provo_published"),
    log:
        log_path("provo_published", "{model}"),
    benchmark:
        benchmark_path("provo_published", "{model}")
    shell:
        "varprobe provo-published --system {params.system:q} --files {input.files:q} "
        "--norms {input.norms:q} {params.raw:q} --seed {params.seed:q} --out {output.samples:q} "
        "--authors-out {output.authors:q} > {log:q} 2>&1"


rule provo_ingest:
    """Read an external samples CSV (API models, published samples) into a samples table."""
    input:
        contexts=rules.provo_data.output.contexts,
        norms=PROVO_NORMS,
        csv=samples_file,
        digest=samples_digest,
    output:
        f"{PROVO}/{{model}}/given/samples.parquet",
    wildcard_constraints:
        model=_alternatives(EXTERNAL),
    params:
        raw=raw_options("provo"),
    conda:
        CONDA_ENV
    threads: job_threads("provo_ingest")
    resources:
        **job_resources("provo_ingest"),
    log:
        log_path("provo_ingest", "{model}"),
    benchmark:
        benchmark_path("provo_ingest", "{model}")
    shell:
        "varprobe provo-ingest --samples-csv {input.csv:q} --contexts {input.contexts:q} "
        "--norms {input.norms:q} {params.raw:q} --out {output:q} > {log:q} 2>&1"


rule provo_divergence:
    """Per-context TVD to the humans and to the oracles, entropies, ECE of one system."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
        model=estimate_table,
    output:
        tvd=f"{PROVO_SYSTEM}/tvd.parquet",
        system=f"{PROVO_SYSTEM}/system.parquet",
    params:
        **CONTROL_PARAMS,
        kind=estimate_kind,
    conda:
        CONDA_ENV
    threads: job_threads("provo_divergence")
    resources:
        **job_resources("provo_divergence"),
    log:
        log_path("provo_divergence", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("provo_divergence", "{model}", "{decoding}")
    shell:
        "varprobe provo-divergence --model {wildcards.model:q} --decoding {wildcards.decoding:q} "
        f"{CONTROL_ARGS} --{{params.kind:q}} {{input.model:q}} > {{log:q}} 2>&1"


rule provo_oracle:
    """The oracle control: two disjoint halves of the humans, compared as if one were a model;
    and the full human MLE as a predictor (the paper's "Human" column)."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
    output:
        tvd=f"{PROVO}/oracle/control/tvd.parquet",
        system=f"{PROVO}/oracle/control/system.parquet",
        human=f"{PROVO}/human/mle/system.parquet",
    params:
        **CONTROL_PARAMS,
    conda:
        CONDA_ENV
    threads: job_threads("provo_oracle")
    resources:
        **job_resources("provo_oracle"),
    log:
        log_path("provo_oracle", "oracle"),
    benchmark:
        benchmark_path("provo_oracle", "oracle")
    shell:
        f"varprobe provo-oracle --model oracle --decoding control {CONTROL_ARGS} "
        "--human-out {output.human:q} > {log:q} 2>&1"


rule provo_authors:
    """Table 1's human and oracle values under ours, each of Ilia & Aziz's definitions alone,
    theirs, theirs less each one, and the paper (read from the norms: raw responses, every
    position)."""
    input:
        PROVO_NORMS,
    output:
        f"{PROVO}/authors_protocol.parquet",
    params:
        seed=config["seed"],
        resplits=PC["resplits"],
        ece_bins=PC["ece_bins"],
        texts=PC["texts"] if PC["texts"] != "all" else ["all"],
        raw=raw_options("provo"),
    conda:
        CONDA_ENV
    threads: job_threads("provo_authors")
    resources:
        **job_resources("provo_authors"),
    log:
        log_path("provo_authors", "authors"),
    benchmark:
        benchmark_path("provo_authors", "authors")
    shell:
        "varprobe provo-authors --norms {input:q} --texts {params.texts:q} --seed {params.seed:q} "
        "--resplits {params.resplits:q} --ece-bins {params.ece_bins:q} {params.raw:q} "
        "--out {output:q} > {log:q} 2>&1"


rule provo_summary:
    """One row per model x decoding, the oracle row and the human row."""
    input:
        rules.provo_oracle.output.system,
        rules.provo_oracle.output.human,
        system_path(f"{PROVO_SYSTEM}/system.parquet"),
    output:
        f"{PROVO}/summary.parquet",
    conda:
        CONDA_ENV
    threads: job_threads("provo_summary")
    resources:
        **job_resources("provo_summary"),
    log:
        log_path("provo_summary", "summary"),
    benchmark:
        benchmark_path("provo_summary", "summary")
    shell:
        "varprobe provo-summary --systems {input:q} --out {output:q} > {log:q} 2>&1"


onsuccess:
    # A system that covers fewer contexts than the configured ones (a partial samples file) is
    # said on the console, not only in its jobs' logs.
    import pandas as pd

    from varprobe.analysis.next_word import coverage_notes

    if Path(f"{PROVO}/summary.parquet").is_file():
        for note in coverage_notes(pd.read_parquet(f"{PROVO}/summary.parquet")):
            print(f"varprobe: note: {note}", file=sys.stderr)


report_table(
    "provo_summary",
    f"{PROVO}/summary.parquet",
    "Provo",
    "Expected TVD and ECE per system",
    schema="provo_system",
    caption=(
        "One row per model x decoding and one for the oracle control. ``expected_tvd`` is the mean over\n"
        "contexts of the TVD between the model's complete-word distribution and the human one (95% CI by\n"
        "bootstrap over contexts); for the oracle row it is the mean TVD between two disjoint halves of the\n"
        "humans, the value a model would reach if it were as good as half the participants. Lower is\n"
        "better. The ECE columns use the corpus word, the human majority and the oracle-1 majority as\n"
        "targets: compare them with the oracle row to see why ECE misleads here. A system with words in\n"
        "fewer contexts (``n_contexts``) than the oracle row is compared with ``oracle_expected_tvd``, the\n"
        "oracle's expected TVD over the same contexts."
    ),
)


rule provo_figure_tvd:
    """KDE of per-context TVD for every system beside the oracle control (paper Fig. 2)."""
    input:
        rules.provo_oracle.output.tvd,
        system_path(f"{PROVO_SYSTEM}/tvd.parquet"),
    output:
        figure=report(
            f"{PROVO}/figures/tvd_density.png",
            caption=CAPTION,
            category="Provo",
        ),
        table=f"{PROVO}/figures/tvd_density.parquet",
    params:
        caption=(
            "Density of per-context TVD between each model's next-word distribution and the human one, with\n"
            "the TVD between two disjoint halves of the humans (dashed) as the reference. Mass further right\n"
            "than the dashed curve means the model reproduces human variability less well than a human\n"
            "sample of half the size. The numbers are in ``figures/tvd_density.parquet``."
        ),
    conda:
        CONDA_ENV
    threads: job_threads("provo_figure_tvd")
    resources:
        **job_resources("provo_figure_tvd"),
    log:
        log_path("provo_figure_tvd", "figure"),
    benchmark:
        benchmark_path("provo_figure_tvd", "figure")
    shell:
        "varprobe provo-figure-tvd --tvd {input:q} --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


rule provo_figure_size:
    """Table 1's quantities against the stated size of each Provo model, beside the oracle."""
    input:
        rules.provo_summary.output,
    output:
        figure=report(
            f"{PROVO}/figures/model_size.png",
            caption=CAPTION,
            category="Provo",
        ),
        table=f"{PROVO}/figures/model_size.parquet",
    params:
        parameters=json.dumps(PLAN.sized_models, sort_keys=True),
        caption=(
            "Expected TVD to the humans and ECE against each of Table 1's targets, for each Provo model\n"
            "at the parameter count its model card states (log axis), one line per decoding, with the\n"
            "oracle control's value (dashed; its 95% interval shaded for E TVD). The numbers are in\n"
            "``figures/model_size.parquet``."
        ),
    conda:
        CONDA_ENV
    threads: job_threads("provo_figure_size")
    resources:
        **job_resources("provo_figure_size"),
    log:
        log_path("provo_figure_size", "figure"),
    benchmark:
        benchmark_path("provo_figure_size", "figure")
    shell:
        "varprobe provo-figure-size --summary {input:q} --parameters {params.parameters:q} "
        "--figure {output.figure:q} --table {output.table:q} > {log:q} 2>&1"


rule provo_figure_bars:
    """Top-15 words of the human and model distributions for chosen contexts (paper Fig. 1)."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
        model=estimate_table,
    output:
        figure=report(
            f"{PROVO_SYSTEM}/bars.png",
            caption=CAPTION,
            category="Provo",
            subcategory="{model} / {decoding}",
        ),
        table=f"{PROVO_SYSTEM}/bars.parquet",
    params:
        caption=(
            "The 15 most probable next words of the human responses (left) and of the model's complete-word\n"
            "samples (right) for the contexts chosen in ``provo.figure_contexts``. The numbers are in\n"
            "``bars.parquet`` beside the figure."
        ),
        select=FIGURE_CONTEXTS,
        kind=estimate_kind,
        label=lambda w: f"{w.model} / {w.decoding}",
    conda:
        CONDA_ENV
    threads: job_threads("provo_figure_bars")
    resources:
        **job_resources("provo_figure_bars"),
    log:
        log_path("provo_figure_bars", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("provo_figure_bars", "{model}", "{decoding}")
    shell:
        "varprobe provo-figure-bars --contexts {input.contexts:q} --responses {input.responses:q} "
        "--{params.kind:q} {input.model:q} --label {params.label:q} "
        "--select {params.select:q} --figure {output.figure:q} --table {output.table:q} > {log:q} 2>&1"
