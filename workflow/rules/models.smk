"""The configured models: their kinds (as the package decides them), the entries their jobs
read, the API options and GPU requests of their jobs, and the check of every model before a
run."""

import json

from varprobe.api.endpoint import TUNING as API_TUNING, ApiEndpoint
from varprobe.models.backends import ENDPOINT, GIVEN, LOGITS, SAMPLER
from varprobe.run_plan import RunPlan

PLAN = RunPlan.from_config(config)
"""The run plan (varprobe.run_plan): models by capability, the systems of each study and the
production datasets' settings."""
MODELS = {n: m.entry for n, m in PLAN.models.items()}
NETWORKS = PLAN.with_capability(LOGITS)
API = PLAN.with_capability(ENDPOINT)
EXTERNAL = PLAN.with_capability(GIVEN)
PUBLISHED = {
    n: MODELS[n]["published"]["system"] for n in EXTERNAL if "published" in MODELS[n]
}
"""The models that are a published system's samples (varprobe.data.published_generations), by
the system they name: their samples file is converted from its files."""
FINETUNED = {n: m.entry["finetune"] for n, m in PLAN.models.items() if m.trained_on}
PROVO_FINETUNED = PLAN.trained_on("provo")
API_DEFAULTS = ApiEndpoint.tuning_defaults()
"""The `api` keys that tune speed and robustness only (job resources, not params)."""
FT_DIR = f"{RESULTS}/finetune"


def model_entry(wildcards):
    """The model's job entry as JSON, for the rule's params (only what changes results)."""
    return json.dumps(PLAN.job_entry(wildcards.model), sort_keys=True)


def api_setting(key):
    """A resource function: an API model's tuning value ``key``, the default for other models;
    floats as strings (a resource is an integer or a string)."""

    def value(wildcards):
        found = MODELS[wildcards.model].get("api", {}).get(key, API_DEFAULTS[key])
        return found if isinstance(found, int) else str(found)

    return value


API_RESOURCES = {
    **{f"api_{key}": api_setting(key) for key in API_TUNING},
    "api_cache": config["api_cache"],
}
"""Resources of a job that may query an API model: changing them reruns nothing."""
API_OPTIONS = " ".join(
    f"--api-{key.replace('_', '-')} {{resources.api_{key}:q}}"
    for key in [*API_TUNING, "cache"]
)
"""The CLI options passing ``API_RESOURCES`` on."""


def uses_gpu(wildcards):
    """The GPUs the model's jobs request (``ModelSpec.job_gpus``: its ``gpus``, else 1 on CUDA,
    0 on CPU): the ``gpu`` resource of its jobs.

    0 means no GPU request at all (the SLURM executor drops ``--gpus`` for 0).
    """
    return PLAN.models[wildcards.model].spec.job_gpus


def cpu_fallback(wildcards):
    """``--cpu-fallback`` for a CUDA model when config allows it, else nothing: a param only
    where it can matter, so changing it never reruns a CPU model's sampling."""
    return "--cpu-fallback" if uses_gpu(wildcards) and config["cpu_fallback"] else ""


onstart:
    shell(
        "varprobe check-models --models {models:q}",
        models=json.dumps(
            [PLAN.job_entry(m) for m in MODELS if m not in FINETUNED]
        ),
    )
