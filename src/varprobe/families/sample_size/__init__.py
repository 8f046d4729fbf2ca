"""Declaration of analysis family ``sample_size`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("sample_size",)

VALUE_LISTS = (("sample_size", "sizes"),)

TABLES = {
    # One row per context x size x repeat of a system.
    "sample_size_contexts": {
        "model": "string", "decoding": "string", "text_id": "int32", "word_number": "int32",
        "n_draws": "int64", "size": "int64", "repeat": "int32", "n_words": "Int64",
        "tvd_full": "float64", "tvd_subsample": "float64", "squared_error": "float64",
        "note": "string",
    },
    "sample_size_summary": {
        "model": "string", "decoding": "string", "size": "int64", "n_estimates": "int64",
        "n_too_large": "int64", "n_without_words": "int64", "n_contexts": "int64",
        "n_contexts_estimated": "int64", "n_contexts_too_large": "int64",
        "n_contexts_all_failed": "int64", "n_contexts_subsample_failed": "int64",
        "mse": "float64", "note": "string",
    },
    # The sample-size MSE's bootstrap interval over contexts, per system and subsample size.
    "sample_size_intervals": {
        "model": "string", "decoding": "string", "size": "int64", "ci_low": "float64",
        "ci_high": "float64",
    },
}
