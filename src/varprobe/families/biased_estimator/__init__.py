"""Declaration of analysis family ``biased_estimator`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("biased_estimator",)

VALUE_LISTS = (("biased_estimator", "nucleus"),)

TABLES = {
    # The biased model estimate (Ilia & Aziz 2024, App. A): one row per word of a context's
    # support, its sources, log P(w|c) with the beginning-of-word correction and the
    # probability renormalised over the support.
    "biased_support": {
        "text_id": "int32", "word_number": "int32", "word": "string", "sources": "string",
        "log_probability": "float64", "probability": "float64", "n_draws": "int32",
        "n_words": "int32",
    },
}
