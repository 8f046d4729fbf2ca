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
}
