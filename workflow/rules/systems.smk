"""The configured decodings and the systems of each study (model x decoding on Provo, dataset x
model x decoding in production), which the studies, the analysis families and the check of
API decodings read."""

from varprobe.api.endpoint import ApiEndpoint


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


def check_api_decodings():
    """Fail at parse time, naming model, decoding and parameter, where an API model would run
    a decoding its endpoint cannot apply (it would otherwise be silently changed)."""
    from varprobe.api.bodies import decoding_fields
    from varprobe.sampling.decoding import Decoding

    runs = [(m, PLAN.provo_decodings[d]) for m, d in PLAN.provo_systems() if m in API]
    runs += [
        (m, PLAN.production_decodings[d])
        for _, m, d in PLAN.production_systems()
        if m in API
    ]
    for model, decoding in runs:
        endpoint = ApiEndpoint.from_config(model, MODELS[model]["api"])
        try:
            decoding_fields(endpoint, Decoding.from_config(decoding))
        except ValueError as err:
            raise ValueError(
                f"{err}; leave the decoding out with the model's `decodings:` list"
            ) from None


if API:
    check_api_decodings()
