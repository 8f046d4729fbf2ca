"""The configured decodings and the systems of each study (model x decoding on Provo, dataset x
model x decoding in production), which the studies and the analysis families read."""


wildcard_constraints:
    model=_alternatives(MODELS),
    decoding=_alternatives([*PLAN.provo_decodings, "given", *PLAN.production_decodings]),
    shard=r"[1-9][0-9]*",
    dataset="[A-Za-z0-9_-]+",


def system_path(pattern):
    """``pattern`` (with {model} and {decoding}) for every system."""
    return [pattern.format(model=m, decoding=d) for m, d in PLAN.provo_systems()]


PROVO = f"{RESULTS}/provo"
PROVO_SYSTEM = f"{PROVO}/{{model}}/{{decoding}}"


def estimate_kind(wildcards):
    """``distribution`` for an enumerated decoding, else ``samples``: the model table a system
    is scored from (and the CLI flag naming it)."""
    return "distribution" if wildcards.decoding in PLAN.enumerated else "samples"


def estimate_table(wildcards):
    """The system's model table: its samples or its enumerated distribution."""
    return f"{PROVO}/{wildcards.model}/{wildcards.decoding}/{estimate_kind(wildcards)}.parquet"
