"""Declaration of analysis family ``token_calibration`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("token_calibration",)

PROVO = False

TABLES = {
    # Token-level calibration (Liu et al. 2024): one row per metric x number of bins of a model
    # (metrics.parquet: the corpus's labels; floor.parquet: labels drawn from the model).
    "token_calibration": {
        "model": "string", "corpus": "string", "metric": "string", "bins": "int32",
        "value": "float64", "bin_weight_sum": "float64", "n_positions": "int64",
        "vocabulary_size": "int64",
    },
    # The relative standard deviation of each metric over the numbers of bins (paper Table 1).
    "token_calibration_rsd": {
        "model": "string", "corpus": "string", "metric": "string", "bins": "string",
        "n_bins_values": "int32", "mean": "float64", "std": "float64", "rsd": "float64",
        "ddof": "int32",
    },
    # The figure's numbers: the metrics (labels "corpus") and their floors (labels "drawn").
    "token_calibration_figure": {
        "model": "string", "corpus": "string", "labels": "string", "metric": "string",
        "bins": "int32", "value": "float64", "bin_weight_sum": "float64", "n_positions": "int64",
        "vocabulary_size": "int64",
    },
    "token_calibration_summary": {
        "model": "string", "corpus": "string", "metric": "string", "bins": "int32",
        "value": "float64", "rsd": "float64", "n_positions": "int64", "vocabulary_size": "int64",
        "accumulator_peak_bytes": "int64",
    },
    # Each token-calibration metric at every bin count M, scored on the corpus's labels or on
    # labels drawn from the model; its largest / smallest M ratio and RSD over M on every row.
    "token_calibration_bins": {
        "model": "string", "labels": "string", "metric": "string", "bins": "int64",
        "value": "float64", "ratio": "float64", "rsd": "float64", "n_positions": "int64",
    },
}
