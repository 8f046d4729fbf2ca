"""Why can't models reproduce human variability? Bayesian ARD regression of per-context TVD
(Ilia & Aziz 2024, Sec. 5, Fig. 3 and Appendix B, Table 3).

Target: for each context c, y_c = TVD(model, oracle1), the TVD between the system's next-word
distribution and one half of the humans (the ``tvd_model_oracle1`` column of a ``provo_tvd``
table). Predictors: the entropy of the human distribution, the entropy of the model
distribution, the TVD between the two disjoint halves of the humans (``tvd_oracle2_oracle1``),
the context length in words, and the universal POS tag of the context's last word, one-hot with a
reference level.

Design matrix. Continuous predictors are standardised to z-scores, z = (x - m) / s with m the
mean and s the population standard deviation (ddof 0) over the rows used, so coefficients are
comparable across predictors ("TVD change per standard deviation"); m and s are returned so a
coefficient b reads in original units as b / s per unit of x. The target is not standardised
(TVD units). A tag gets a 0/1 column when it occurs in the data and is not the reference; tags
that never occur get no column (their coefficient is not identified). The reference tag is the
caller's, or the most frequent tag (ties: the first in ``TAG_ORDER``); the paper's Table 3 has
11 tag levels with X (other) as the reference. Rows whose target or any continuous predictor is
NaN (a system with no complete word at a context has no model entropy, no TVD) are dropped and
counted.

Model (automatic relevance determination, Neal 2012; MacKay 1994)::

    y_c     ~ Normal(alpha + x_c . beta, sigma)
    beta_j  ~ Normal(0, lambda_j^(-1/2))          one precision per coefficient
    lambda_j ~ Gamma(shape a0, rate b0)
    alpha   ~ Normal(0, intercept_sd)
    sigma   ~ HalfNormal(sigma_sd)

A coefficient whose data do not support it is pulled to 0 as its precision lambda_j grows; the
posterior mean of lambda_j is its (inverse) relevance. Integrating lambda_j out, beta_j is
Student-t with 2 a0 degrees of freedom and scale sqrt(b0 / a0): the defaults a0 = 1, b0 = 0.01
give t_2 with scale 0.1 TVD per standard deviation (the paper's largest coefficient is 0.117),
weakly informative on a target in [0, 1]. beta is sampled centred (as written above): with a
hundred or more contexts the likelihood pins the coefficients down, and on SmolLM2's Provo
passages 1-2 the centred form gave no divergent transition where the non-centred one
(beta_j = z_j lambda_j^(-1/2)) gave 2%.

Inference: NUTS (PyMC) with a fixed seed and one process (``cores=1``), so the draws do not
depend on parallelism; posterior means, standard deviations, 95% highest-density intervals,
R-hat and bulk/tail ESS from ArviZ.

The family's declaration: ``varprobe.families.regression``; its subcommands:
``varprobe.families.regression.cli``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, asdict, dataclass

import numpy as np
import pandas as pd


TARGET = "tvd_model_oracle1"
CONTINUOUS = ("entropy_human", "entropy_model", "tvd_oracle2_oracle1", "context_length")
"""The continuous predictors, in the paper's order (Fig. 3)."""
TAG_ORDER = (".", "ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRON", "PRT", "VERB", "X")
"""Universal tags in the order of the paper's Table 3 (punctuation first, X the reference)."""
LABELS = {
    "entropy_human": "human entropy", "entropy_model": "model entropy",
    "tvd_oracle2_oracle1": "TVD between oracles", "context_length": "context length",
    ".": "punctuation", "ADJ": "adjective", "ADP": "adposition", "ADV": "adverb",
    "CONJ": "conjunction", "DET": "determiner", "NOUN": "noun", "NUM": "numeral",
    "PRON": "pronoun", "PRT": "particle", "VERB": "verb", "X": "other (X)",
}
PREDICTOR_ORDER = (*CONTINUOUS, *TAG_ORDER)
"""The paper's order of the coefficient plot: human entropy, model entropy, TVD between oracles,
context length, punctuation, then the tags."""
R_HAT_MAX = 1.01
ESS_MIN = 400
"""Convergence thresholds (Vehtari et al. 2021): a row beyond them is flagged."""


@dataclass(frozen=True)
class PriorSettings:
    """Hyperparameters of the ARD prior (see the module docstring)."""

    precision_shape: float = 1.0
    precision_rate: float = 0.01
    intercept_sd: float = 1.0
    sigma_sd: float = 1.0

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not value > 0:
                raise ValueError(f"regression prior {name} must be > 0, got {value}")


@dataclass(frozen=True, kw_only=True)
class SamplerSettings:
    """NUTS settings; ``seed`` fixes the draws."""

    seed: int
    chains: int = 2
    draws: int = 1000
    tune: int = 1000
    target_accept: float = 0.9

    def __post_init__(self):
        if self.chains < 1 or self.draws < 1 or self.tune < 0:
            raise ValueError(f"regression needs chains >= 1, draws >= 1, tune >= 0, got {self}")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"regression target_accept must be in (0, 1), got {self.target_accept}")


@dataclass(frozen=True)
class Design:
    """A standardised design matrix with what is needed to read its coefficients back.

    ``x``: one column per predictor (continuous ones as z-scores, tags as 0/1), rows aligned with
    ``y``; ``center``/``scale``: the mean and standard deviation each column was standardised with
    (0 and 1 for tag columns); ``n_dropped``: rows dropped for a NaN target or predictor.
    """

    x: pd.DataFrame
    y: np.ndarray
    _: KW_ONLY
    center: dict[str, float]
    scale: dict[str, float]
    reference_tag: str
    tag_counts: dict[str, int]
    n_dropped: int


def design_matrix(frame: pd.DataFrame, tags, reference_tag: str | None = None) -> Design:
    """The design of a ``provo_tvd`` frame with its contexts' last-word tags (see module doc).

    ``tags``: one universal tag per row of ``frame``. Raises ValueError naming a missing column,
    an unknown tag, a reference tag absent from the data, or a constant continuous predictor.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ``provo_tvd`` table.
    tags : sequence of str
        One universal tag per row of ``frame``.
    reference_tag : str or None
        The tag left out as the reference (None: the most frequent one).

    Returns
    -------
    Design
        The standardised design.
    """
    missing = [c for c in (TARGET, *CONTINUOUS) if c not in frame.columns]
    if missing:
        raise ValueError(f"regression input lacks columns {missing}")
    tags = list(tags)
    if len(tags) != len(frame):
        raise ValueError(f"regression got {len(tags)} tags for {len(frame)} rows")
    tags = pd.Series(tags, index=frame.index, dtype=object)
    unknown = sorted(set(tags) - set(TAG_ORDER))
    if unknown:
        raise ValueError(f"unknown universal tags {unknown}; expected one of {list(TAG_ORDER)}")
    values = frame[[TARGET, *CONTINUOUS]].astype(float)
    keep = values.notna().all(axis=1).to_numpy()
    values, tags = values[keep], tags[keep]
    if len(values) == 0:
        raise ValueError("regression has no row with a target and every predictor")
    counts = {t: int((tags == t).sum()) for t in TAG_ORDER if (tags == t).any()}
    if reference_tag is None:
        reference_tag = max(counts, key=lambda t: (counts[t], -TAG_ORDER.index(t)))
    elif reference_tag not in counts:
        raise ValueError(
            f"regression reference_tag {reference_tag!r} does not occur in the data "
            f"(tags present: {sorted(counts)})"
        )
    columns, center, scale = {}, {}, {}
    for name in CONTINUOUS:
        x = values[name].to_numpy()
        m, s = float(x.mean()), float(x.std())
        if not s > 0:
            raise ValueError(f"regression predictor {name!r} is constant ({m}) over {len(x)} rows")
        columns[name], center[name], scale[name] = (x - m) / s, m, s
    for tag in counts:
        if tag != reference_tag:
            columns[tag] = (tags == tag).to_numpy(dtype=float)
            center[tag], scale[tag] = 0.0, 1.0
    return Design(
        x=pd.DataFrame(columns),
        y=values[TARGET].to_numpy(),
        center=center,
        scale=scale,
        reference_tag=reference_tag,
        tag_counts=counts,
        n_dropped=int((~keep).sum()),
    )


def last_word_tags(tvd: pd.DataFrame, contexts: pd.DataFrame, tagger) -> list[str]:
    """The universal tag of the last word of each ``tvd`` row's context (``tagger``: a
    ``UniversalTagger``), contexts matched on (text_id, word_number).

    Raises ValueError naming the first row whose context is not in ``contexts``.

    Parameters
    ----------
    tvd : pandas.DataFrame
        A ``provo_tvd`` table.
    contexts : pandas.DataFrame
        The contexts (``provo_contexts``).
    tagger : UniversalTagger
        The tagger.

    Returns
    -------
    list of str
        One tag per row of ``tvd``.
    """
    texts = dict(zip(zip(contexts["text_id"], contexts["word_number"], strict=True),
                     contexts["context"], strict=True))
    tags = []
    for key in zip(tvd["text_id"], tvd["word_number"], strict=True):
        if key not in texts:
            raise ValueError(f"TVD row for context {key[0]}:{key[1]} has no row in the contexts table")
        tags.append(tagger.last_word_tag(texts[key]))
    return tags


@dataclass(frozen=True)
class Fit:
    """Posterior summary of one ARD regression.

    ``table``: one row per coefficient (in design order), then ``intercept`` and ``sigma``, with
    columns predictor, label, kind, mean, sd, hdi_2.5%, hdi_97.5%, r_hat, ess_bulk, ess_tail,
    precision_mean (the posterior mean of lambda_j; NaN for intercept and sigma), center, scale,
    flagged (R-hat or ESS beyond ``R_HAT_MAX``/``ESS_MIN``). ``diagnostics``: max R-hat, min ESS,
    divergent transitions and seconds spent compiling + sampling.
    """

    table: pd.DataFrame
    diagnostics: dict


def ard_model(design: Design, prior: PriorSettings):
    """The PyMC model of the module docstring on ``design``.

    Parameters
    ----------
    design : Design
        The design.
    prior : PriorSettings
        The priors' settings.

    Returns
    -------
    pymc.Model
        The unsampled model.
    """
    import pymc as pm

    names = list(design.x.columns)
    with pm.Model(coords={"predictor": names}) as model:
        x = design.x.to_numpy(dtype=float)
        precision = pm.Gamma(
            "precision", alpha=prior.precision_shape, beta=prior.precision_rate, dims="predictor"
        )
        beta = pm.Normal("beta", 0.0, 1.0 / pm.math.sqrt(precision), dims="predictor")
        intercept = pm.Normal("intercept", 0.0, prior.intercept_sd)
        sigma = pm.HalfNormal("sigma", prior.sigma_sd)
        pm.Normal("y", intercept + pm.math.dot(x, beta), sigma, observed=design.y)
    return model


def fit_ard(design: Design, prior: PriorSettings, sampler: SamplerSettings) -> Fit:
    """Sample the ARD regression with NUTS and summarise it (see ``Fit``).

    Warns on stderr when the chains have not converged (max R-hat > 1.01 or min ESS < 400).

    Parameters
    ----------
    design : Design
        The design.
    prior : PriorSettings
        The priors' settings.
    sampler : SamplerSettings
        NUTS's chains, draws, tuning steps, target acceptance and seed.

    Returns
    -------
    Fit
        The summary of the posterior.
    """
    import arviz as az
    import pymc as pm

    if design.x.shape[1] == 0:
        raise ValueError("regression design has no predictor column")
    started = time.perf_counter()
    with ard_model(design, prior):
        trace = pm.sample(
            draws=sampler.draws, tune=sampler.tune, chains=sampler.chains, cores=1,
            target_accept=sampler.target_accept, random_seed=sampler.seed,
            progressbar=False, compute_convergence_checks=False,
        )
    seconds = time.perf_counter() - started
    summary = az.summary(trace, var_names=["beta", "intercept", "sigma"], hdi_prob=0.95)
    precision = trace.posterior["precision"].mean(("chain", "draw")).to_numpy()
    names = list(design.x.columns)
    kinds = ["continuous" if n in CONTINUOUS else "tag" for n in names] + ["intercept", "noise"]
    table = pd.DataFrame({
        "predictor": [*names, "intercept", "sigma"],
        "label": [LABELS[n] for n in names] + ["intercept", "sigma"],
        "kind": kinds,
        **{c: summary[c].to_numpy(dtype=float) for c in
           ("mean", "sd", "hdi_2.5%", "hdi_97.5%", "r_hat", "ess_bulk", "ess_tail")},
        "precision_mean": [*precision, np.nan, np.nan],
        "center": [design.center[n] for n in names] + [np.nan, np.nan],
        "scale": [design.scale[n] for n in names] + [np.nan, np.nan],
    })
    # With one chain ArviZ has no R-hat (NaN): not a convergence failure by itself.
    table["flagged"] = (table["r_hat"] > R_HAT_MAX) | (table[["ess_bulk", "ess_tail"]].min(axis=1) < ESS_MIN)
    diagnostics = {
        "max_r_hat": float(table["r_hat"].max()),
        "min_ess_bulk": float(table["ess_bulk"].min()),
        "min_ess_tail": float(table["ess_tail"].min()),
        "divergences": int(trace.sample_stats["diverging"].sum()),
        "seconds": round(seconds, 2),
        "converged": not bool(table["flagged"].any()),
    }
    if diagnostics["divergences"]:
        print(
            f"varprobe: warning: ARD regression had {diagnostics['divergences']} divergent "
            f"transitions: raise target_accept in config",
            file=sys.stderr,
        )
    if not diagnostics["converged"]:
        bad = table.loc[table["flagged"], "predictor"].tolist()
        print(
            f"varprobe: warning: ARD regression not converged (max R-hat "
            f"{diagnostics['max_r_hat']:.3f} > {R_HAT_MAX} or min ESS "
            f"{min(diagnostics['min_ess_bulk'], diagnostics['min_ess_tail']):.0f} < {ESS_MIN}) "
            f"for {bad}: raise draws/tune in config",
            file=sys.stderr,
        )
    return Fit(table=table, diagnostics=diagnostics)


MIN_CONTEXTS = len(CONTINUOUS) + 2
"""The contexts a system's fit needs at the least: more than its continuous coefficients and the
intercept. With fewer the fit is not identified, and with one every predictor is constant."""


def unfitted_systems(systems: Iterable[tuple[str, str]], contexts: Mapping[str, int]) -> dict[tuple[str, str], str]:
    """The ``(model, decoding)`` systems that are not fitted, each with the reason: those whose
    decoding covers fewer than ``MIN_CONTEXTS`` contexts (``contexts``: decoding -> the contexts
    it covers, where the corpus tells at parse time; a decoding absent from it is fitted).

    Parameters
    ----------
    systems : iterable of (str, str)
        ``(model, decoding)`` pairs.
    contexts : Mapping of str to int
        Per decoding, the contexts it covers.

    Returns
    -------
    dict of (str, str) to str
        Each unfitted system with the reason.
    """
    return {
        (model, decoding): (f"{model} / {decoding} covers {contexts[decoding]} context"
                            f"{'' if contexts[decoding] == 1 else 's'}, and a fit needs {MIN_CONTEXTS} at "
                            "least (more than its continuous predictors and intercept)")
        for model, decoding in systems if contexts.get(decoding, MIN_CONTEXTS) < MIN_CONTEXTS
    }


def unavailable(key: str, corpus: Mapping, settings: Mapping) -> str | None:
    """Why the regression cannot run on a cloze corpus: its tag predictor comes from NLTK's
    English tagger.

    Parameters
    ----------
    key : str
        ``regression``.
    corpus : Mapping
        The cloze corpus entry (``varprobe.data.cloze``).
    settings : Mapping
        The key's config entry.

    Returns
    -------
    str or None
        The reason, or None where the regression can run.
    """
    if corpus["language"] == "en":
        return None
    return (f"its word-class predictor is the universal POS tag of NLTK's English tagger, and corpus "
            f"{corpus['name']!r} is in {corpus['language']!r}")
