"""Production variability (Giulianelli et al. 2023): datasets -> samples -> probe distances ->
per-input divergences -> summary, figures and the most miscalibrated inputs. Its targets and
input functions: production_inputs.smk."""


include: "production_inputs.smk"


PROBES = PLAN.production["probes"]


PRODUCTION_DATA = (
    "varprobe production-data --dataset {wildcards.dataset:q} --raw-dir {params.raw_dir:q} "
    "{params.options:q} {params.raw:q} --out {output:q} > {log:q} 2>&1"
)
"""The instances table of a dataset's split (its inputs, or its few-shot examples)."""


rule production_data:
    """A dataset's raw files -> its canonical instances table (the configured inputs)."""
    input:
        raw_inputs,
    output:
        f"{PROD}/{{dataset}}/instances.parquet",
    params:
        options=data_options,
        raw=lambda w: raw_options(w.dataset),
        raw_dir=lambda w: f"{RESULTS}/raw/{w.dataset}",
    conda:
        CONDA_ENV
    threads: job_threads("production_data")
    resources:
        **job_resources("production_data", parses_input=True),
    log:
        log_path("production_data", "{dataset}"),
    benchmark:
        benchmark_path("production_data", "{dataset}")
    shell:
        PRODUCTION_DATA


rule production_examples:
    """A dataset's few-shot split -> the instances table its prompt examples are drawn from."""
    input:
        example_inputs,
    output:
        f"{PROD}/{{dataset}}/examples.parquet",
    params:
        options=example_options,
        raw=lambda w: raw_options(w.dataset),
        raw_dir=lambda w: f"{RESULTS}/raw/{w.dataset}",
    conda:
        CONDA_ENV
    threads: job_threads("production_examples")
    resources:
        **job_resources("production_examples", parses_input=True),
    log:
        log_path("production_examples", "{dataset}"),
    benchmark:
        benchmark_path("production_examples", "{dataset}")
    shell:
        PRODUCTION_DATA


rule production_sample:
    """n_samples productions per input from a model under a decoding (a network, a fine-tuned
    network with its checkpoint, or an API model)."""
    input:
        instances=rules.production_data.output,
        checkpoint=production_checkpoint,
        examples=few_shot_examples,
    output:
        f"{PROD_SYSTEM}/shards/{{shard}}.parquet",
    params:
        model=model_entry,
        decoding=production_decoding_entry,
        prompt=lambda w: PLAN.datasets[w.dataset]["prompt"],
        few_shot=few_shot_options,
        chat="--chat" if PLAN.production["chat_template"] else "--no-chat",
        system_prompt=(
            []
            if PLAN.production["system_prompt"] is None
            else ["--system-prompt", PLAN.production["system_prompt"]]
        ),
        reply=(
            []
            if PLAN.production["reply"] == "whole"
            else ["--reply", PLAN.production["reply"]]
        ),
        n_samples=PLAN.production["n_samples"],
        max_new_tokens=PLAN.production["max_new_tokens"],
        seed=config["seed"],
        shards=dataset_shards,
        checkpoint=lambda w, input: (
            ["--checkpoint", input.checkpoint] if input.checkpoint else []
        ),
        cpu_fallback=cpu_fallback,
    conda:
        CONDA_ENV
    threads: job_threads("production_sample")
    resources:
        **job_resources("production_sample"),
        **API_RESOURCES,
        gpu=uses_gpu,
        batch_size=PLAN.production["batch_size"],
    log:
        log_path("production_sample", "{dataset}", "{model}", "{decoding}", "{shard}"),
    benchmark:
        benchmark_path(
            "production_sample", "{dataset}", "{model}", "{decoding}", "{shard}"
        )
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe production-sample --model {params.model:q} "
        "--decoding {params.decoding:q} --instances {input.instances:q} "
        "--prompt {params.prompt:q} {params.few_shot:q} {params.chat:q} {params.system_prompt:q} "
        "{params.reply:q} --n-samples {params.n_samples:q} "
        "--max-new-tokens {params.max_new_tokens:q} --batch-size {resources.batch_size:q} "
        "--seed {params.seed:q} {params.checkpoint:q} "
        "--shard {wildcards.shard:q} --shards {params.shards:q} "
        f"--gpus {{resources.gpu:q}} {{params.cpu_fallback:q}} {API_OPTIONS} --out {{output:q}} "
        "> {log:q} 2>&1"


rule production_merge:
    """Concatenate a system's sample shards, in order, into its samples table."""
    input:
        sample_shards,
    output:
        f"{PROD_SYSTEM}/samples.parquet",
    localrule: True
    conda:
        CONDA_ENV
    threads: job_threads("production_merge")
    resources:
        **job_resources("production_merge"),
    log:
        log_path("production_merge", "{dataset}", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("production_merge", "{dataset}", "{model}", "{decoding}")
    shell:
        "varprobe production-merge --shards {input:q} --out {output:q} > {log:q} 2>&1"


rule production_distances:
    """Lexical, syntactic and semantic distances of every H, M and C pair of a system."""
    input:
        instances=rules.production_data.output,
        samples=rules.production_merge.output,
    output:
        f"{PROD_SYSTEM}/distances.parquet",
    params:
        resources=probe_resources,
        orders=PROBES["ngram_orders"],
        batch_size=PROBES["batch_size"],
    conda:
        CONDA_ENV
    threads: job_threads("production_distances")
    resources:
        **job_resources("production_distances"),
    log:
        log_path("production_distances", "{dataset}", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("production_distances", "{dataset}", "{model}", "{decoding}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe production-distances --instances {input.instances:q} "
        "--samples {input.samples:q} {params.resources:q} --orders {params.orders:q} "
        "--batch-size {params.batch_size:q} --out {output:q} > {log:q} 2>&1"


rule production_divergence:
    """Per input and probe: means of H, M, C, their differences, W1 and the human control."""
    input:
        instances=rules.production_data.output,
        distances=rules.production_distances.output,
    output:
        f"{PROD_SYSTEM}/divergences.parquet",
    params:
        seed=config["seed"],
    conda:
        CONDA_ENV
    threads: job_threads("production_divergence")
    resources:
        **job_resources("production_divergence"),
    log:
        log_path("production_divergence", "{dataset}", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("production_divergence", "{dataset}", "{model}", "{decoding}")
    shell:
        "varprobe production-divergence --instances {input.instances:q} "
        "--distances {input.distances:q} --seed {params.seed:q} --out {output:q} > {log:q} 2>&1"


rule production_adequacy:
    """Per input: chrF and BLEU against the references (SARI on simplification), the shares of
    outputs in the task's language, empty and copying the input."""
    input:
        instances=rules.production_data.output,
        samples=rules.production_merge.output,
    output:
        f"{PROD_SYSTEM}/adequacy.parquet",
    params:
        language=lambda w: PLAN.dataset_setting(w.dataset, "language"),
        simplification=simplification_option,
    conda:
        CONDA_ENV
    threads: job_threads("production_adequacy")
    resources:
        **job_resources("production_adequacy"),
    log:
        log_path("production_adequacy", "{dataset}", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("production_adequacy", "{dataset}", "{model}", "{decoding}")
    shell:
        "varprobe production-adequacy --instances {input.instances:q} "
        "--samples {input.samples:q} --language {params.language:q} "
        "{params.simplification:q} --out {output:q} > {log:q} 2>&1"


rule production_copy_adequacy:
    """A dataset's copy baseline: the adequacy of each input's source as its one output."""
    input:
        instances=rules.production_data.output,
    output:
        COPY_ADEQUACY,
    params:
        language=lambda w: PLAN.dataset_setting(w.dataset, "language"),
        simplification=simplification_option,
    conda:
        CONDA_ENV
    threads: job_threads("production_adequacy")
    resources:
        **job_resources("production_adequacy"),
    log:
        log_path("production_copy_adequacy", "{dataset}"),
    benchmark:
        benchmark_path("production_copy_adequacy", "{dataset}")
    shell:
        "varprobe production-adequacy --instances {input.instances:q} --copy-source "
        "--language {params.language:q} {params.simplification:q} --out {output:q} "
        "> {log:q} 2>&1"


rule production_adequacy_summary:
    """Mean of every per-input adequacy statistic with a 95% bootstrap CI, per system and per
    dataset's copy baseline."""
    input:
        systems=production_path(f"{PROD_SYSTEM}/adequacy.parquet"),
        copies=[COPY_ADEQUACY.format(dataset=d) for d in PLAN.datasets],
    output:
        f"{PROD}/adequacy.parquet",
    params:
        seed=config["seed"],
        bootstrap=PLAN.production["bootstrap_resamples"],
    conda:
        CONDA_ENV
    threads: job_threads("production_adequacy_summary")
    resources:
        **job_resources("production_adequacy_summary"),
    log:
        log_path("production_adequacy_summary", "summary"),
    benchmark:
        benchmark_path("production_adequacy_summary", "summary")
    shell:
        "varprobe production-adequacy-summary --adequacy {input.systems:q} "
        "--copy-adequacy {input.copies:q} --seed {params.seed:q} "
        "--bootstrap {params.bootstrap:q} --out {output:q} > {log:q} 2>&1"


rule production_beats_copy:
    """Per system: whether its criterion's interval is above copying the source on its task."""
    input:
        rules.production_adequacy_summary.output,
    output:
        f"{PROD}/beats_copy.parquet",
    localrule: True
    conda:
        CONDA_ENV
    threads: job_threads("production_beats_copy")
    resources:
        **job_resources("production_beats_copy"),
    log:
        log_path("production_beats_copy", "summary"),
    benchmark:
        benchmark_path("production_beats_copy", "summary")
    shell:
        "varprobe production-beats-copy --summary {input:q} --out {output:q} > {log:q} 2>&1"


report_table(
    "production_adequacy",
    f"{PROD}/adequacy.parquet",
    "Production",
    "Production adequacy: does each generator do its task?",
    schema="production_adequacy_summary",
    caption=(
        "Adequacy of every production system on its task, the condition for reading its variability:\n"
        "the mean over inputs of each input's mean sentence chrF and BLEU (sacrebleu) of its outputs\n"
        "against its references (and SARI on a simplification task), and of the shares of its outputs\n"
        "identified (py3langid) as in the task's output language (``language``), empty, and copying the\n"
        "input (equal to it, or to one of its lines, up to case, spacing and NFKC), with 95%\n"
        "percentile-bootstrap intervals over inputs; the references' share in the task's language is the\n"
        "identifier's ceiling. Above each task's systems, *copying the source*: the same statistics of\n"
        "each input's source as its one output, the level a system must beat."
    ),
)


report_table(
    "production_beats_copy",
    f"{PROD}/beats_copy.parquet",
    "Production",
    "Production adequacy: which generator beats copying the source?",
    schema="production_beats_copy",
    caption=(
        "Per production system, whether it does its task better than copying the source: the lower\n"
        "bound of the 95% bootstrap interval of its mean chrF over inputs (SARI on a simplification task,\n"
        "where chrF rewards copying) above the copy baseline's mean. Its variability is read against the\n"
        "paper's claims only where it does."
    ),
)


rule production_miscalibrated:
    """The inputs whose W1 exceeds every configured threshold, with human and model outputs."""
    input:
        instances=rules.production_data.output,
        samples=rules.production_merge.output,
        divergences=rules.production_divergence.output,
    output:
        f"{PROD_SYSTEM}/miscalibrated.parquet",
    params:
        statistic=PLAN.production["miscalibration"]["statistic"],
        thresholds=dataset_thresholds,
        limit=PLAN.production["miscalibration"]["limit"],
    conda:
        CONDA_ENV
    threads: job_threads("production_miscalibrated")
    resources:
        **job_resources("production_miscalibrated"),
    log:
        log_path("production_miscalibrated", "{dataset}", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("production_miscalibrated", "{dataset}", "{model}", "{decoding}")
    shell:
        "varprobe production-miscalibrated --instances {input.instances:q} "
        "--samples {input.samples:q} --divergences {input.divergences:q} "
        "--statistic {params.statistic:q} --thresholds {params.thresholds:q} "
        "--limit {params.limit:q} --out {output:q} > {log:q} 2>&1"


rule production_summary:
    """Mean of every per-input statistic with a 95% bootstrap CI, per system and probe."""
    input:
        production_path(f"{PROD_SYSTEM}/divergences.parquet"),
    output:
        f"{PROD}/summary.parquet",
    params:
        orders=PROBES["ngram_orders"],
        seed=config["seed"],
        bootstrap=PLAN.production["bootstrap_resamples"],
    conda:
        CONDA_ENV
    threads: job_threads("production_summary")
    resources:
        **job_resources("production_summary"),
    log:
        log_path("production_summary", "summary"),
    benchmark:
        benchmark_path("production_summary", "summary")
    shell:
        "varprobe production-summary --divergences {input:q} --orders {params.orders:q} "
        "--seed {params.seed:q} --bootstrap {params.bootstrap:q} --out {output:q} > {log:q} 2>&1"


report_table(
    "production_summary",
    f"{PROD}/summary.parquet",
    "Production",
    "Production variability: bootstrap means over inputs",
    schema="production_summary",
    caption=(
        "Production variability (Giulianelli et al. 2023): for every dataset, model, decoding and probe,\n"
        "the mean over inputs of each per-input statistic (means of H, M, C; mean differences; W1(M, H),\n"
        "W1(C, H); the human control W1 between two disjoint halves of the references), with 95%\n"
        "percentile-bootstrap intervals over inputs. ``available`` is false for a probe that has no\n"
        "resource for the output language (e.g. no German tagger)."
    ),
)


rule production_figures:
    """Paper Figs. 2-5: human variability, mean differences, W1 densities, mean W1."""
    input:
        summary=rules.production_summary.output,
        divergences=production_path(f"{PROD_SYSTEM}/divergences.parquet"),
        human=first_system_distances(),
    output:
        [
            report(
                f"{PROD}/figures/{name}.png",
                caption=CAPTION,
                category="Production",
            )
            for name in PRODUCTION_FIGURES
        ],
    params:
        caption=(
            "Production variability figures (Giulianelli et al. 2023, Figs. 2-5): human variability per task\n"
            "and probe; mean M - mean H per input; per-input W1(C, H) beside the human control; mean W1(C, H)\n"
            "per decoding setting beside the human control, the paper's level for most decodings (0.1) dotted.\n"
            "A probe that could not be computed (no tagger or encoder for a task's output language) has no\n"
            "panel; the figure's title names it, and a panel's title names a task it lacks."
        ),
        probes=PLAN.figure_probes,
        decoding=PLAN.production["figures"]["decoding"],
    conda:
        CONDA_ENV
    threads: job_threads("production_figures")
    resources:
        **job_resources("production_figures"),
    log:
        log_path("production_figures", "figures"),
    benchmark:
        benchmark_path("production_figures", "figures")
    shell:
        "varprobe production-figures --summary {input.summary:q} "
        "--divergences {input.divergences:q} --human {input.human:q} --probes {params.probes:q} "
        "--decoding {params.decoding:q} --figures {output:q} > {log:q} 2>&1"
