"""The run plan: what a checked config asks the workflow to run, resolved once.

``RunPlan.from_config`` reads the models (each with its kind and capabilities,
``varprobe.models.backends``), the Provo decodings and systems (model x decoding) and
the production datasets and systems (dataset x model x decoding), with every per-dataset setting
resolved against its fallback. The rules, the config checks and the results page ask the plan
instead of resolving the config again, so each resolution has one definition, tested here
without Snakemake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from varprobe.models.backends import ENDPOINT, GIVEN, LOGITS, SAMPLER, weight_sources
from varprobe.models.spec import ModelSpec

PROVO = "provo"
"""The study name a Provo fine-tuning gives as its ``dataset``."""

GIVEN_DECODING = "given"
"""The one Provo decoding of a model whose draws are given (``GIVEN``)."""


@dataclass(frozen=True)
class PlannedModel:
    """A configured model as the plan reads it: its entry, its spec (kind and capabilities) and,
    for a fine-tuning, the dataset it is trained on (its only study)."""

    entry: dict = field(hash=False, compare=False)
    spec: ModelSpec

    @property
    def name(self) -> str:
        """The model's name (its entry's ``name``)."""
        return self.entry["name"]

    def can(self, capability: str) -> bool:
        """Whether the model has ``capability`` (``ModelSpec.can``)."""
        return self.spec.can(capability)

    @property
    def trained_on(self) -> str | None:
        """The dataset a fine-tuning trains on (``provo`` or a production dataset), else None."""
        return self.entry["finetune"]["dataset"] if "finetune" in self.entry else None

    def runs(self, decoding: str) -> bool:
        """Whether the model runs ``decoding``: its ``decodings`` list, by default every one."""
        return decoding in self.entry.get("decodings", [decoding])

    def studies(self, study: str) -> bool:
        """Whether the model is evaluated in ``study`` (``provo`` or a production dataset's
        name): a fine-tuning in the one it is trained on only, any other model in all."""
        return self.trained_on in (None, study)


PROTOCOL_KEYS = ("base", "dataset", "train_passages", "validation_passages", "folds", "split", "validation_split")
"""The keys of a ``finetune`` entry that choose the data; the others are training settings."""

LOADING_KEYS = ("sha256", "gguf_file", "model_args", "trust_remote_code")
"""Beside its weights' source key (``varprobe.models.backends.weight_sources``), the keys a
fine-tuned model's jobs take from its base's entry: how the weights load."""


@dataclass(frozen=True)
class RunPlan:
    """The models, decodings, datasets and systems of one run, from a checked config; each part
    is resolved on first use (a page that reads a decoding's draws builds no model spec).

    Attributes
    ----------
    config : dict
        The config the plan is read from.
    """

    config: dict = field(hash=False, repr=False)

    @classmethod
    def from_config(cls, config: dict) -> RunPlan:
        """The plan of a config that passed ``varprobe.config_loading.validate_config``.

        Parameters
        ----------
        config : dict
            The merged, checked config.

        Returns
        -------
        RunPlan
        """
        return cls(config)

    @cached_property
    def models(self) -> dict:
        """Every configured model by name (``PlannedModel``), in the config's order."""
        return {m["name"]: PlannedModel(m, ModelSpec.from_config(m)) for m in self.config.get("models", [])}

    @cached_property
    def provo_decodings(self) -> dict:
        """``provo.decodings`` by name (empty without a ``provo`` section)."""
        return {d["name"]: d for d in self.config.get("provo", {}).get("decodings", [])}

    @cached_property
    def production(self) -> dict:
        """The ``production`` section (empty without one)."""
        return self.config.get("production", {})

    @property
    def provo_draws(self) -> int | None:
        """``provo.n_samples``: the draws per context of a decoding that sets none."""
        return self.config.get("provo", {}).get("n_samples")

    def with_capability(self, capability: str) -> list[str]:
        """The models that have ``capability``, in the config's order."""
        return [n for n, m in self.models.items() if m.can(capability)]

    def trained_on(self, study: str) -> list[str]:
        """The fine-tunings trained on ``study`` (``provo`` or a production dataset)."""
        return [n for n, m in self.models.items() if m.trained_on == study]

    # Provo: model x decoding.

    @cached_property
    def enumerated(self) -> list[str]:
        """The Provo decodings that enumerate complete words (``method: enumerate``)."""
        return [n for n, d in self.provo_decodings.items() if d.get("method") == "enumerate"]

    @cached_property
    def sampled(self) -> list[str]:
        """The Provo decodings that draw samples."""
        return [n for n in self.provo_decodings if n not in self.enumerated]

    def draws(self, decoding: str) -> int:
        """A sampled Provo decoding's draws per context: its own ``n_samples``, else the
        study's ``provo.n_samples``."""
        return self.provo_decodings[decoding].get("n_samples", self.provo_draws)

    @property
    def provo_models(self) -> list[str]:
        """The models of the Provo study: all but the fine-tunings on a production dataset."""
        return [n for n, m in self.models.items() if m.studies(PROVO)]

    def model_decodings(self, model: str) -> list[str]:
        """The Provo decodings ``model`` runs: ``given`` where its draws are given; every one
        where it has logits (``LOGITS``: enumeration too); else the sampled ones (an endpoint's
        words, a fine-tuning's folds); always within the model's own ``decodings`` list."""
        planned = self.models[model]
        if planned.can(GIVEN):
            return [GIVEN_DECODING]
        names = self.provo_decodings if planned.can(LOGITS) else self.sampled
        return [d for d in names if planned.runs(d)]

    def provo_systems(self) -> list[tuple[str, str]]:
        """Every (model, decoding) of the Provo study."""
        return [(m, d) for m in self.provo_models for d in self.model_decodings(m)]

    @cached_property
    def provo_texts(self) -> list[int]:
        """The Provo passage ids of the study: ``provo.texts`` (``all``: every passage)."""
        from varprobe.data.provo import N_PASSAGES

        texts = self.config.get("provo", {}).get("texts", [])
        return list(range(1, N_PASSAGES + 1)) if texts == "all" else list(texts)

    def folds(self, model: str) -> list[list[int]]:
        """The cross-validation folds (passage ids) of a Provo fine-tuning: its
        ``train_passages`` in ``folds`` contiguous runs (``finetune.folds.contiguous_folds``)."""
        from varprobe.finetune.folds import contiguous_folds

        tune = self.models[model].entry["finetune"]
        return contiguous_folds(passage_span(tune["train_passages"]), tune["folds"])

    def fold_passages(self, model: str, fold: int) -> dict[str, list[int]]:
        """The passages fold ``fold`` of a Provo fine-tuning trains on (every fold but it,
        ``finetune.folds.training_ids``) and validates on (its ``validation_passages``)."""
        from varprobe.finetune.folds import training_ids

        tune = self.models[model].entry["finetune"]
        return {"train": training_ids(passage_span(tune["train_passages"]), tune["folds"], fold),
                "validation": passage_span(tune["validation_passages"])}

    def training_settings(self, model: str) -> dict:
        """A fine-tuning's training settings, every default filled in
        (``finetune.settings.FinetuneSettings``; so that spelling out a default changes no
        job): its ``finetune`` entry but the keys that choose the data (``PROTOCOL_KEYS``)."""
        from varprobe.finetune.settings import FinetuneSettings

        tune = self.models[model].entry["finetune"]
        return FinetuneSettings.from_config({k: v for k, v in tune.items() if k not in PROTOCOL_KEYS}).to_dict()

    def compared_decodings(self, model: str) -> list[str]:
        """The Provo decodings both a fine-tuning and its base run, in the fine-tuning's order."""
        base = self.models[model].entry["finetune"]["base"]
        return [d for d in self.model_decodings(model) if d in self.model_decodings(base)]

    def sampled_folds(self, model: str) -> list[tuple[int, list[int]]]:
        """``(fold, passages)`` for each fold of a Provo fine-tuning that holds out passages of
        the study, with those passages: the fold's model samples their contexts."""
        held = [(k, [t for t in fold if t in self.provo_texts])
                for k, fold in enumerate(self.folds(model), start=1)]
        return [(k, texts) for k, texts in held if texts]

    def sampling_shards(self, model: str) -> list[int]:
        """A Provo model's sampling jobs per decoding: one per sampled fold for a Provo
        fine-tuning (shard i is its i-th sampled fold), else ``provo_shards``."""
        count = len(self.sampled_folds(model)) if model in self.trained_on(PROVO) else self.provo_shards
        return list(range(1, count + 1))

    @cached_property
    def sized_models(self) -> dict[str, int]:
        """The Provo models whose entry states their parameter count (``parameters``: the
        model-size figure), by name."""
        return {n: self.models[n].entry["parameters"] for n in self.provo_models
                if self.models[n].entry.get("parameters")}

    # Production: dataset x model x decoding.

    @cached_property
    def production_decodings(self) -> dict:
        """``production.decodings`` by name."""
        return {d["name"]: d for d in self.production.get("decodings", [])}

    @cached_property
    def datasets(self) -> dict:
        """``production.datasets`` entries by name."""
        return {d["name"]: d for d in self.production.get("datasets", [])}

    @cached_property
    def dataset_records(self) -> dict:
        """The record of each production dataset (``varprobe.data.record_of``): the registered
        one, or the one built from an entry that brings its own file."""
        from varprobe.data import record_of

        return {name: record_of(entry) for name, entry in self.datasets.items()}

    def generators(self, dataset: str) -> list[str]:
        """The models that can produce texts for ``dataset``, the default of its ``models``:
        those with logits, then the endpoints (``ENDPOINT``), then the fine-tunings trained on it
        (the summaries' row order)."""
        return [*self.with_capability(LOGITS), *self.with_capability(ENDPOINT), *self.trained_on(dataset)]

    def dataset_setting(self, dataset: str, key: str):
        """A production dataset entry's setting ``key``, else its fallback: the dataset record's
        split, output language, reference cap, simplification flag and own options
        (``Dataset.options``); the study's ``max_inputs`` and ``input_choice``; ``generators``
        for ``models``."""
        entry = self.datasets[dataset]
        if key in entry:
            return entry[key]
        record = self.dataset_records[dataset]
        defaults = {
            **record.options,
            "split": record.default_split,
            "language": record.output_language,
            "max_references": record.max_references,
            "simplification": record.simplification,
            "max_inputs": self.production.get("max_inputs"),
            "input_choice": self.production.get("input_choice"),
        }
        return self.generators(dataset) if key == "models" else defaults[key]

    def job_entry(self, name: str) -> dict:
        """Model ``name``'s entry as its jobs read it: only what changes their results, so that
        an edit of anything else reruns no job. Without its ``decodings`` list, its stated
        ``parameters`` and its API block's tuning (``varprobe.api.endpoint.TUNING``: speed and
        robustness); a fine-tuned model is its base's weights (its source key and ``LOADING_KEYS``) under its own name,
        device and dtype (its checkpoint reaches the job as an input).

        Parameters
        ----------
        name : str
            A configured model's name.

        Returns
        -------
        dict
            The entry its jobs are given (as JSON).
        """
        from varprobe.api.endpoint import TUNING

        model = self.models[name]
        entry = {k: v for k, v in model.entry.items() if k not in ("decodings", "parameters")}
        if model.can(ENDPOINT):
            entry["api"] = {k: v for k, v in entry["api"].items() if k not in TUNING}
        if model.trained_on:
            base = self.models[entry.pop("finetune")["base"]].entry
            keys = (*weight_sources(), *LOADING_KEYS)
            entry = {**{k: base[k] for k in keys if k in base}, **entry}
        return entry

    def few_shot_split(self, dataset: str) -> str:
        """The split ``dataset``'s few-shot examples are drawn from: its ``few_shot_split``, else
        the split it is evaluated on."""
        return self.datasets[dataset].get("few_shot_split", self.dataset_setting(dataset, "split"))

    def instances_arguments(self, dataset: str, *, examples: bool = False) -> list[str]:
        """The options of ``varprobe production-data`` for an instances table of ``dataset``:
        its entry (a user's task, ``varprobe.data.user_task.reader_entry``), its split, its own
        options (``Dataset.options``) and the run's seed; for its evaluated inputs also the cap
        and choice of inputs and references (the choice ``first``, the CLI's default, left out,
        so that a run that chose nothing keeps its command); for its few-shot examples
        (``examples``), every input and reference of its few-shot split (``few_shot_split``).

        Parameters
        ----------
        dataset : str
            A production dataset's name.
        examples : bool, default False
            The table the few-shot examples are drawn from, not the evaluated inputs.

        Returns
        -------
        list of str
            Option and value, in turn, each option with a value.
        """
        import json

        from varprobe.data.user_task import is_user_task, reader_entry

        entry = self.datasets[dataset]
        choice = self.dataset_setting(dataset, "input_choice")
        chosen = {} if examples else {
            "max_inputs": self.dataset_setting(dataset, "max_inputs"),
            "input_choice": None if choice == "first" else choice,
            "max_references": self.dataset_setting(dataset, "max_references"),
        }
        options = {
            "entry": json.dumps(reader_entry(entry), sort_keys=True) if is_user_task(entry) else None,
            "split": self.few_shot_split(dataset) if examples else self.dataset_setting(dataset, "split"),
            **{option: self.dataset_setting(dataset, option) for option in self.dataset_records[dataset].options},
            "seed": self.config["seed"],
            **chosen,
        }
        return [argument for key, value in options.items() if value is not None
                for argument in (f"--{key.replace('_', '-')}", str(value))]

    def _truncation(self, language: str) -> tuple[int | None, object]:
        """The token budget of a probed text (``max_response_tokens``, else ``max_new_tokens``;
        None: texts are probed whole) and the tokenizer that counts it in ``language`` (its
        ``truncation_tokenizers`` entry, else its sentence encoder, else None)."""
        probes = self.production["probes"]
        return (probes.get("max_response_tokens", self.production["max_new_tokens"]),
                probes.get("truncation_tokenizers", {}).get(language, probes["sentence_encoders"].get(language)))

    def truncation_problem(self, language: str) -> str | None:
        """Why no tokenizer counts the token budget of a probed text in ``language`` (its
        ``truncation_tokenizers`` entry, else its sentence encoder), or None: there is one, or
        texts are probed whole (``max_response_tokens: null``)."""
        budget, tokenizer = self._truncation(language)
        if budget is None or tokenizer is not None:
            return None
        return (f"production.probes: no tokenizer counts max_response_tokens for language {language!r} (it has "
                f"no sentence encoder): set production.probes.truncation_tokenizers.{language} to a hub id, path "
                "or {package: NAME}, or max_response_tokens: null to probe whole texts")

    def probe_arguments(self, dataset: str) -> list[str]:
        """The options of ``varprobe production-distances`` for ``dataset``: its output language;
        for each need of the registered probes (``varprobe.probes.PROBES``) the resource
        configured for that language (null for none, or for a need no registered probe has: a
        job loads only what its probes need); the token budget of a probed text with the
        tokenizer that counts it, unless texts are probed whole.

        Parameters
        ----------
        dataset : str
            A production dataset's name.

        Returns
        -------
        list of str
            Option and value, in turn.

        Raises
        ------
        ValueError
            ``truncation_problem``'s, which the config checks report first.
        """
        import json

        from varprobe.probes import PROBES

        language = self.dataset_setting(dataset, "language")
        probes = self.production["probes"]
        needs = {probe.needs for probe in PROBES.values()}
        options = ["--language", language]
        for need, key in PROBE_RESOURCE_KEYS.items():
            options += [PROBE_OPTIONS[need], json.dumps(probes[key].get(language) if need in needs else None)]
        budget, tokenizer = self._truncation(language)
        if budget is None:
            return options
        if tokenizer is None:
            raise ValueError(self.truncation_problem(language))
        return [*options, "--max-response-tokens", str(budget), "--truncation-tokenizer", json.dumps(tokenizer)]

    def production_systems(self) -> list[tuple[str, str, str]]:
        """Every (dataset, model, decoding) of the production study."""
        return [
            (d, m, dec)
            for d in self.datasets
            for m in self.dataset_setting(d, "models")
            for dec in self.production_decodings
            if self.models[m].runs(dec)
        ]

    def production_shards(self, dataset: str) -> int:
        """A production dataset's generation jobs per model x decoding (``production_shards``)."""
        return production_shards(self.config, self.datasets[dataset])

    def thresholds(self, dataset: str) -> dict[str, float]:
        """The miscalibration thresholds of a production dataset's probes
        (``miscalibration_thresholds``)."""
        return miscalibration_thresholds(self.config, self.datasets[dataset])

    @cached_property
    def figure_probes(self) -> list[str]:
        """The probes of the production figures (``figure_probes``); none without a production
        study."""
        return figure_probes(self.config) if self.production else []

    @cached_property
    def provo_shards(self) -> int:
        """The Provo sampling jobs per model x decoding (``provo_shards``)."""
        return provo_shards(self.config)

    def runnable_on(self, dataset: str) -> list[str]:
        """The models a production dataset's ``models`` may name: those that produce texts
        (``SAMPLER`` or ``ENDPOINT``) and are evaluated on it."""
        return [n for n, m in self.models.items()
                if (m.can(SAMPLER) or m.can(ENDPOINT)) and m.studies(dataset)]


# The resolutions the checks make on entries before a plan exists (a dataset entry, not a name).


def passage_span(span: dict) -> list[int]:
    """The passage ids of a ``{first, last}`` span of a fine-tuning entry."""
    return list(range(span["first"], span["last"] + 1))

PROBE_RESOURCE_KEYS = {"tagger": "spacy_pipelines", "encoder": "sentence_encoders"}
"""The ``production.probes`` key that names, per language, what a probe needs
(``varprobe.probes.NEEDS``; the tokenizer is always there)."""

PROBE_OPTIONS = {"tagger": "--spacy-pipeline", "encoder": "--encoder"}
"""The option of ``varprobe production-distances`` that passes each need's resource on."""


def evaluated_inputs(config: dict, entry: dict, size: int | None) -> int | None:
    """The inputs a production dataset entry evaluates out of its split's ``size`` (None:
    unknown): its ``max_inputs`` (the entry's, else ``production.max_inputs``; null: all) at
    most ``size``; None where neither bounds them."""
    cap = entry["max_inputs"] if "max_inputs" in entry else config["production"].get("max_inputs")
    known = [n for n in (cap, size) if n is not None]
    return min(known) if known else None


def computed_probes(config: dict, dataset: dict) -> list[str]:
    """The probes the production study computes for a dataset entry: every probe of
    ``production.probes.ngram_orders`` whose need is configured (not null) for the dataset's
    output language."""
    from varprobe.data import DATASETS
    from varprobe.probes import PROBES

    probes = config["production"]["probes"]
    language = dataset.get("language") or DATASETS[dataset["name"]].output_language
    return [
        name
        for probe in PROBES.values()
        if probe.needs not in PROBE_RESOURCE_KEYS
        or probes[PROBE_RESOURCE_KEYS[probe.needs]].get(language) is not None
        for name, _ in probe.instances(probes["ngram_orders"])
    ]


def miscalibration_thresholds(config: dict, dataset: dict) -> dict[str, float]:
    """The thresholds the miscalibration table of a dataset entry applies: those of
    ``production.miscalibration.thresholds`` whose probe the dataset computes
    (``computed_probes``; ``threshold_problems`` refuses a given one that no dataset computes)."""
    computed = computed_probes(config, dataset)
    thresholds = config["production"]["miscalibration"]["thresholds"]
    return {probe: value for probe, value in thresholds.items() if probe in computed}


def figure_probes(config: dict) -> list[str]:
    """The probes of the production figures: those of ``production.figures.probes`` that the
    study computes for some n-gram order (``production.probes.ngram_orders``; a probe whose
    tagger or encoder a language lacks is drawn as unavailable)."""
    from varprobe.probes import probe_names

    study = probe_names(config["production"]["probes"]["ngram_orders"])
    return [p for p in config["production"]["figures"]["probes"] if p in study]


def provo_shards(config: dict) -> int:
    """The Provo sampling jobs per model x decoding: ``provo.shards``, at most one per
    configured passage (a shard holds whole passages; more would be empty jobs)."""
    from varprobe.data.provo import N_PASSAGES

    texts = config["provo"]["texts"]
    return min(config["provo"]["shards"], N_PASSAGES if texts == "all" else len(texts))


def production_shards(config: dict, dataset: dict) -> int:
    """The generation jobs per model x decoding of a dataset entry: ``production.shards``, at
    most one per input where the number of inputs is known (``evaluated_inputs``: ``max_inputs``,
    at most the inputs of a registered dataset's split)."""
    from varprobe.data import DATASETS
    from varprobe.data.user_task import is_user_task

    shards = config["production"]["shards"]
    record = None if is_user_task(dataset) else DATASETS.get(dataset.get("name"))
    size = None if record is None else record.splits.get(dataset.get("split", record.default_split))
    inputs = evaluated_inputs(config, dataset, size)
    return shards if inputs is None else min(shards, inputs)
