"""Declaration of analysis family ``oracle_replacement`` (``varprobe.families``): its config keys and
tables (its folder holds the rest). It imports nothing."""

KEYS = ("oracle_replacement",)

VALUE_LISTS = (("oracle_replacement", "oracle_sizes"), ("oracle_replacement", "k_percent"),
             ("oracle_replacement", "figure_k"))

TABLES = {
    # The k%-oracle replacement (Sec. 5, App. E): M_k per system x oracle size x seed x k;
    # oracle_size "half" (the half split, Fig. 14) or a number of responses ("10").
    "oracle_replacement": {
        "model": "string", "decoding": "string", "oracle_size": "string", "seed_index": "int64",
        "k": "float64", "n_contexts": "int64", "n_replaced": "int64", "n_too_few_humans": "int64",
        "n_without_words": "int64", "mean_tvd": "float64", "model_mean_tvd": "float64",
        "oracle_mean_tvd": "float64",
    },
    # Per system x oracle size x k: M_k over seeds, and overlap_k, the overlap of the replaced
    # TVDs' histogram (pooled over seeds) with the oracles' (k = 100); matches_oracle:
    # overlap >= overlap_threshold; k_match: the smallest such k (NaN: none in the grid).
    "oracle_replacement_summary": {
        "model": "string", "decoding": "string", "oracle_size": "string", "k": "float64",
        "n_seeds": "int64", "n_contexts": "int64", "mean_tvd": "float64", "sd_tvd": "float64",
        "min_tvd": "float64", "max_tvd": "float64", "oracle_mean_tvd": "float64",
        "oracle_sd_tvd": "float64", "model_mean_tvd": "float64", "overlap": "float64",
        "overlap_threshold": "float64", "matches_oracle": "bool", "k_match": "float64",
    },
    # TVD(model, humans) - mean_r TVD(o2_r, humans) per context (App. C.4).
    "tvd_differences": {
        "model": "string", "decoding": "string", "text_id": "int32", "word_number": "int32",
        "tvd_model": "float64", "tvd_oracle": "float64", "difference": "float64",
    },
}
