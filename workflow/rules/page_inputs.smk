"""The tables of the results page measured from the studies' per-context tables, by name
(PAGE_TABLES, of common.smk: an analysis family adds its own in its rules.smk), the systems each
is measured on, and the production tables the page shows beside them; the rules that write them:
page_measures.smk."""

import json

if "provo" in config:
    PAGE_SYSTEMS = [*PLAN.provo_systems(), ("oracle", "control")]
    SAMPLED_SYSTEMS = [
        (m, d) for m, d in PLAN.provo_systems() if d not in PLAN.enumerated
    ]
    PAGE_TABLES.update(
        provo_intervals=f"{PROVO}/page/intervals.parquet",
        provo_failures=f"{PROVO}/page/failures.parquet",
        provo_oracle_splits=f"{PROVO}/page/oracle_splits.parquet",
        provo_human_ties=f"{PROVO}/page/human_ties.parquet",
    )
    # the authors' protocol reads the Provo norms alone (rule provo_authors)
    if config["provo"].get("corpus") is None:
        PAGE_TABLES["provo_authors"] = f"{PROVO}/authors_protocol.parquet"
    # the paper's own systems under the authors' protocol, by model (rule provo_published)
    if PUBLISHED:
        PAGE_TABLES["provo_published"] = {
            model: f"{PROVO}/{model}/given/authors.parquet" for model in PUBLISHED
        }
if "production" in config:
    PAGE_TABLES["production_miscalibrated"] = production_path(
        f"{PROD_SYSTEM}/miscalibrated.parquet"
    )
    # Giulianelli et al. read per task (varprobe.analysis.production_readings), by schema name.
    PRODUCTION_READINGS = {
        "signs": "production_signs",
        "model-human-w1": "production_model_human_w1",
        "paper-miscalibrated": "production_paper_miscalibrated",
    }
    PAGE_TABLES.update(
        {
            schema: f"{PROD}/page/{reading}.parquet"
            for reading, schema in PRODUCTION_READINGS.items()
        }
    )
    # One input per task with its references and the outputs of its first model's ancestral draws.
    PAGE_TABLES["production_examples"] = {
        d: {
            "instances": f"{PROD}/{d}/instances.parquet",
            "samples": f"{PROD}/{d}/{min(models)}/ancestral/samples.parquet",
        }
        for d in PLAN.datasets
        for models in [
            [
                m
                for d2, m, dec in PLAN.production_systems()
                if d2 == d and dec == "ancestral"
            ]
        ]
        if models
    }


def system_tables(pairs, pattern):
    """JSON list of {model, decoding, table}: ``pattern`` (with {model}, {decoding}) per pair."""
    return json.dumps(
        [
            {"model": m, "decoding": d, "table": pattern.format(model=m, decoding=d)}
            for m, d in pairs
        ]
    )


def page_table_paths():
    """Every path of PAGE_TABLES (a production entry or the published systems' hold several)."""
    paths = []
    for value in PAGE_TABLES.values():
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, list):
            paths.extend(value)
        else:
            for entry in value.values():
                paths.extend([entry] if isinstance(entry, str) else entry.values())
    return paths
