"""Declaration of analysis family ``regression`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("regression",)

TABLES = {
    # ARD regression of TVD(model, oracle1) on context predictors (Ilia & Aziz 2024, Table 3):
    # one row per coefficient, then intercept and sigma; center/scale standardised the predictor.
    "regression_coefficients": {
        "model": "string", "decoding": "string", "predictor": "string", "label": "string",
        "kind": "string", "mean": "float64", "sd": "float64", "hdi_2.5%": "float64",
        "hdi_97.5%": "float64", "r_hat": "float64", "ess_bulk": "float64", "ess_tail": "float64",
        "precision_mean": "float64", "center": "float64", "scale": "float64", "flagged": "bool",
        "reference_tag": "string",
    },
    "regression_figure": {
        "model": "string", "decoding": "string", "position": "int32", "predictor": "string",
        "label": "string", "mean": "float64", "hdi_2.5%": "float64", "hdi_97.5%": "float64",
        "reference_tag": "string",
    },
    # One system's ARDRegression() fit under each coding (varprobe.families.regression.codings.
    # REGRESSION_CODINGS, the page's text finding a row by its role, ROLES), ours and the
    # authors' protocol: the coefficients of TVD between oracles
    # (seed_min/_mean/_max: over the seeds of a one-split coding, NaN for resplit means)
    # and human entropy, per SD or per unit, the largest coefficient, the predictor's SD, the
    # contexts and the two predictors' correlation.
    "regression_codings": {
        "model": "string", "decoding": "string", "coding": "string", "role": "string", "reference": "string",
        "units": "string", "split": "string", "tvd_oracle2_oracle1": "float64", "seed_min": "float64",
        "seed_mean": "float64", "seed_max": "float64", "entropy_human": "float64", "largest": "string",
        "largest_coefficient": "float64", "sd_tvd_oracle2_oracle1": "float64", "n_contexts": "int64",
        "correlation": "float64",
    },
}
