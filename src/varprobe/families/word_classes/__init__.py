"""Declaration of analysis family ``word_classes`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("syntactic_tvd", "semantic_tvd")

TABLES = {
    # Syntactic / semantic TVD (varprobe.families.word_classes.analysis): per context of one system.
    # k and n_oov: clusters and out-of-vocabulary words (semantic only, else NA); n_draws 0: a
    # context the system was never sampled at (NA for an enumeration).
    "word_class_tvd": {
        "text_id": "int32", "word_number": "int32", "context_length": "int32", "n_humans": "int64",
        "n_draws": "Int64", "n_words": "Int64", "n_types": "int64", "n_classes": "int64", "k": "Int64",
        "n_oov": "Int64",
        "tvd": "float64", "tvd_model_oracle1": "float64", "tvd_oracle2_oracle1": "float64",
        "human_class": "string", "model_class": "string",
    },
    "word_class_system": {
        "level": "string", "model": "string", "decoding": "string", "n_contexts": "int64",
        "n_contexts_not_sampled": "int64", "n_contexts_all_failed": "int64", "expected_tvd": "float64",
        "ci_low": "float64",
        "ci_high": "float64", "expected_tvd_oracle1": "float64", "expected_tvd_oracles": "float64",
        "oracle_ci_low": "float64", "oracle_ci_high": "float64", "mean_classes": "float64",
    },
    # The histograms of TVD_syn / TVD_sem (paper Fig. 4): counts, and the densities drawn
    # (area 1; NaN where nothing is counted).
    "word_class_histogram": {
        "level": "string", "model": "string", "decoding": "string", "series": "string",
        "bin_low": "float64", "bin_high": "float64", "count": "int64", "density": "float64",
    },
}
