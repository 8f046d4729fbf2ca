"""Why can't models reproduce human variability? ARD regression of per-context TVD on context
predictors, per system, and the coefficient plot (Ilia & Aziz 2024, Sec. 5, Fig. 3)."""

import sys

from varprobe.families.regression.analysis import unfitted_systems
from varprobe.config_checks import decoding_contexts

RG = config["analyses"]["regression"]
RG_PRIOR = RG["prior"]
REGRESSION = f"{RESULTS}/analyses/regression"
RG_UNFITTED = unfitted_systems(PLAN.provo_systems(), decoding_contexts(config))
"""The systems whose contexts are too few for a fit, with the reason (said here and on the
results page)."""
RG_SYSTEMS = [s for s in PLAN.provo_systems() if s not in RG_UNFITTED]
"""The systems the regression is fitted on."""
for reason in RG_UNFITTED.values():
    print(
        f"varprobe: warning: analyses.regression is not fitted for {reason}",
        file=sys.stderr,
    )
if RG_UNFITTED:
    NOT_FITTED["regression"] = f"not fitted for {'; '.join(RG_UNFITTED.values())}" + (
        f" (fitted for the other {len(RG_SYSTEMS)} systems)" if RG_SYSTEMS else ""
    )

report_tables(
    "regression_coefficients",
    f"{REGRESSION}/{{model}}/{{decoding}}/coefficients.parquet",
    "Regression",
    "ARD regression coefficients of {model} / {decoding}",
    [{"model": m, "decoding": d} for m, d in RG_SYSTEMS],
    schema="regression_coefficients",
    caption=(
        "Posterior of the Bayesian ARD regression of this system's per-context TVD(model, oracle) on\n"
        "human entropy, model entropy, TVD between oracles, context length (all as z-scores) and the\n"
        "universal POS tag of the last context word (one-hot against the ``reference_tag`` column, by\n"
        "default the most frequent tag). Each row gives the posterior mean, sd and 95% HDI of a\n"
        "coefficient, its R-hat and bulk/tail ESS, and the posterior mean precision of its ARD prior\n"
        "(large: shrunk to 0, irrelevant); ``flagged`` rows have R-hat > 1.01 or ESS < 400 and need longer\n"
        "chains. ``center``/``scale`` undo the standardisation: a coefficient divided by ``scale`` is the\n"
        "TVD change per original unit."
    ),
)


rule regression:
    """NUTS posterior of one system's ARD regression: coefficients, 95% HDIs, R-hat, ESS."""
    input:
        tvd=f"{PROVO_SYSTEM}/tvd.parquet",
        contexts=f"{PROVO}/contexts.parquet",
    output:
        f"{REGRESSION}/{{model}}/{{decoding}}/coefficients.parquet",
    params:
        seed=config["seed"],
        chains=RG["chains"],
        draws=RG["draws"],
        tune=RG["tune"],
        target_accept=RG["target_accept"],
        reference=(
            ["--reference-tag", RG["reference_tag"]] if RG.get("reference_tag") else []
        ),
        precision_shape=RG_PRIOR["precision_shape"],
        precision_rate=RG_PRIOR["precision_rate"],
        intercept_sd=RG_PRIOR["intercept_sd"],
        sigma_sd=RG_PRIOR["sigma_sd"],
    conda:
        CONDA_ENV
    threads: job_threads("regression")
    resources:
        **job_resources("regression"),
    log:
        log_path("regression", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("regression", "{model}", "{decoding}")
    shell:
        "varprobe regression --tvd {input.tvd:q} --contexts {input.contexts:q} "
        "--model {wildcards.model:q} --decoding {wildcards.decoding:q} --seed {params.seed:q} "
        "--chains {params.chains:q} --draws {params.draws:q} --tune {params.tune:q} "
        "--target-accept {params.target_accept:q} {params.reference:q} "
        "--precision-shape {params.precision_shape:q} --precision-rate {params.precision_rate:q} "
        "--intercept-sd {params.intercept_sd:q} --sigma-sd {params.sigma_sd:q} "
        "--out {output:q} > {log:q} 2>&1"


rule regression_figure:
    """Coefficients with 95% HDIs of every system, in the paper's order (paper Fig. 3)."""
    input:
        [f"{REGRESSION}/{m}/{d}/coefficients.parquet" for m, d in RG_SYSTEMS],
    output:
        figure=report(
            f"{REGRESSION}/coefficients.png",
            caption=CAPTION,
            category="Regression",
        ),
        table=f"{REGRESSION}/coefficients.parquet",
    params:
        caption=(
            "Coefficients of the ARD regression of per-context TVD between each system and the human oracle\n"
            "(Ilia & Aziz 2024, Fig. 3): posterior means with 95% highest-density intervals, predictors in the\n"
            "paper's order (human entropy, model entropy, TVD between oracles, context length as z-scores;\n"
            "then the last context word's tag against the reference tag). An interval clear of the line at 0\n"
            "marks a predictor of where the model fails to reproduce human variability; positive means higher\n"
            "TVD. One panel per system; the open diamonds are the paper's coefficients for GPT-2 (its Table 3),\n"
            "drawn in every panel. The numbers are in ``regression/coefficients.parquet``."
        ),
    conda:
        CONDA_ENV
    threads: job_threads("regression_figure")
    resources:
        **job_resources("regression_figure"),
    log:
        log_path("regression_figure", "figure"),
    benchmark:
        benchmark_path("regression_figure", "figure")
    shell:
        "varprobe regression-figure --coefficients {input:q} --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


PAGE_TABLES["regression_codings"] = f"{REGRESSION}/codings.parquet"
CODED_MODEL, CODED_DECODING = PLAN.provo_systems()[0]
CODED_KIND = "distribution" if CODED_DECODING in PLAN.enumerated else "samples"


rule regression_codings:
    """The first system's ARD fit under each coding, ours and the authors' protocol (Table
    3's disagreement)."""
    input:
        tvd=f"{PROVO}/{CODED_MODEL}/{CODED_DECODING}/tvd.parquet",
        contexts=f"{PROVO}/contexts.parquet",
        responses=f"{PROVO}/responses.parquet",
        model=f"{PROVO}/{CODED_MODEL}/{CODED_DECODING}/{CODED_KIND}.parquet",
    output:
        PAGE_TABLES["regression_codings"],
    params:
        model=CODED_MODEL,
        decoding=CODED_DECODING,
        kind=CODED_KIND,
    conda:
        CONDA_ENV
    threads: job_threads("regression_codings")
    resources:
        **job_resources("regression_codings"),
    log:
        log_path("regression_codings", "page"),
    benchmark:
        benchmark_path("regression_codings", "page")
    shell:
        "varprobe regression-codings --tvd {input.tvd:q} --contexts {input.contexts:q} "
        "--responses {input.responses:q} --{params.kind:q} {input.model:q} "
        "--model {params.model:q} --decoding {params.decoding:q} --out {output:q} "
        "> {log:q} 2>&1"


if RG_SYSTEMS:

    ANALYSIS_TARGETS.extend(rules.regression_figure.output)
