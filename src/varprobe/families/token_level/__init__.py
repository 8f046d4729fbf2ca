"""Declaration of analysis family ``token_level`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("token_level",)

TABLES = {
    # The token-level study (App. D): per context, the model's exact next-token distribution
    # against the humans' first tokens.
    "token_level_tvd": {
        "text_id": "int32", "word_number": "int32", "context_length": "int32", "n_humans": "int64",
        "n_first_tokens": "int64", "tvd": "float64", "tvd_model_oracle1": "float64",
        "tvd_oracle2_oracle1": "float64", "tvd_oracle1_human": "float64",
        "tvd_oracle2_human": "float64", "entropy_model": "float64", "entropy_human": "float64",
        "entropy_oracle1": "float64", "entropy_oracle2": "float64", "model_mode_id": "int64",
        "model_mode": "string", "confidence": "float64", "human_majority_id": "int64",
        "human_majority": "string", "model_probability_majority": "float64",
    },
    "token_level_summary": {
        "model": "string", "system": "string", "n_contexts": "int64", "expected_tvd": "float64",
        "ci_low": "float64", "ci_high": "float64", "expected_tvd_oracle1": "float64",
        "ece_human_majority": "float64", "mean_entropy": "float64",
    },
}
