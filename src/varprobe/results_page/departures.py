"""Each place where varprobe computes something other than what a paper printed or its authors'
code did, and what it changes: one record each, read by the results page (the section
"Departures from the papers", the rows of the studies the page shows) and by the documentation
(``docs/departures.md``, written by ``docs/generate.py``), so that the two never differ.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import pandas as pd

from varprobe.results_page.tables import MARKUP

AUTHORS = "github.com/evgeniael/predict_next_word"
"""Ilia & Aziz's code, where the records cite it by file and line."""


@dataclass(frozen=True)
class Departure:
    """One departure: ``where`` (the quantity), ``section`` (the page section it belongs to,
    ``varprobe.results_page.sections.sections``), ``paper`` (what the paper printed, or its authors'
    code did, cited), ``here`` (what varprobe does) and ``effect`` (what it changes, measured or
    said not to be)."""

    where: str
    _: KW_ONLY
    section: str
    paper: str
    here: str
    effect: str


DEPARTURES = (
    Departure("Provo position (18, 3)",
              section="provo",
              paper="kept",
              here="dropped: its responses are for two different words",
              effect="2,686 contexts instead of 2,687"),
    Departure("responses with no word (`?`, `-----`)",
              section="provo",
              paper="not stated",
              here="dropped by the word rule, counted in the metadata",
              effect="75 responses in 62 contexts"),
    Departure("models",
              section="provo",
              paper="GPT-2 (124M), Bloom and ChatGPT, at the hub's or the API's precision",
              here="the run's models, with their weights' quantization and parameter count as \"What was run\" "
              "names them (a GGUF file's type from its name)",
              effect="a model's rows are findings about that model, not about GPT-2"),
    Departure("ARD regression: units and split",
              section="regression",
              paper="`ARDRegression()` with its defaults on raw predictors (a coefficient per TVD unit, nat, word or "
              "tag), the target TVD(M, O1) and the predictor TVD(O2, O1) from one split, `random.seed(0)` in every "
              f"context (`Additional_Experiments/Appendix_B/analysis_predictors.ipynb`, cells 1-2 and 11-16, {AUTHORS})",
              here="a NUTS posterior on z-scored predictors (per standard deviation), the target and the predictor "
              "each the mean over the resplits",
              effect="the authors' protocol is measured beside ours (Table 3's disagreement, rule `regression_codings`); "
              "on the authors' GPT-2 samples their 0.117 per unit is 0.021 per SD, ours 0.014-0.023 "
              "(docs/methods.md)"),
    Departure("number of semantic clusters",
              section="word_classes",
              paper=f"\"a selection of k using SSE\" over k in range(2, k_max, k_max//3); the authors' `choose_k` "
              f"(`TVD_semantic/GPT2/semantic_TVD.py`, lines 170-229, {AUTHORS}) takes the first k whose SSE falls "
              "by less than 5% to the next candidate, else the k of least SSE",
              here="the elbow of the SSE curve over the same candidates (the kneedle rule, "
              "`varprobe.metrics.word_classes.elbow`); `analyses.semantic_tvd.k_rule: authors` applies theirs, "
              "on their criterion, the sum of the unsquared distances to the centroids "
              "(`varprobe.metrics.word_classes.first_small_change`)",
              effect="not measured against the authors' rule in a run that keeps the default `k_rule: elbow`"),
    Departure("semantic TVD embeddings",
              section="word_classes",
              paper="word2vec Google News 300 (gensim, online)",
              here="configurable; the default config uses GloVe 6B 50d (offline)",
              effect="not compared: the paper's needs the internet"),
    Departure("k% replacement: reading the histograms",
              section="oracle_replacement",
              paper="\"about 60%\", read by eye off GPT-2's histograms; no threshold printed",
              here="k needed is the first k whose histogram overlaps the oracles' by at least `overlap_threshold` "
              "(0.8 over 20 bins): the threshold chosen so that normal densities with the moments of the authors' "
              "notebook match at the paper's 60%",
              effect="an agreement with the 60% is partly by construction; a model's k needed is read at that threshold"),
    Departure("biased estimator: a word's probability",
              section="biased_estimator",
              paper="eq. (1): log f(c, w) - log f(c), the joint probability of the word's tokens",
              here="times the beginning-of-word correction, the mass of the tokens that close the word "
              "(`varprobe.sampling.scoring`; Pimentel & Meister 2024): the probability of the complete word",
              effect="\"the\" does not take the mass of \"there\"; not measured without the correction"),
    Departure("biased estimator: spellings",
              section="biased_estimator",
              paper="word probabilities over spellings",
              here="words scored in their normalised lowercase form (other spellings not summed)",
              effect="a limitation, not measured"),
    Departure("biased estimator: support",
              section="biased_estimator",
              paper="1,000 samples, greedy and 3 x 100 nucleus draws",
              here="the configured samples (40 by default), greedy and 3 x `nucleus_samples` (20) nucleus draws",
              effect="a smaller support: less of the model's mass is renormalised over"),
    Departure("fine-tuning",
              section="finetune",
              paper="the paper's text: the last two blocks; the authors' script (`TVD/GPT2_FT/fine_tuning/fine_tuning.py`, "
              "line 245): only the LayerNorms of blocks 10-11 and `ln_f`, saving the last epoch",
              here="the script's mode by default (`trainable_parts: norms`: the norms of the last two blocks and the final "
              "norm), the paper's settings, where silent the script's (`weight_decay` 0, warm-up 10, linear decay); "
              "the epoch of lowest validation loss is kept (`keep_epoch: best`), marked `kept` in the losses table",
              effect="`trainable_parts: blocks` (the paper's text) and `keep_epoch: last` (the script's checkpoint) available"),
    Departure("Full-ECE (Liu et al., eqs. 11-13)",
              section="token_calibration",
              paper="as printed, bin weights sum to K",
              here="both: as printed, and `full_ece_weighted` (weights sum to 1)",
              effect="reported side by side"),
    Departure("production human control",
              section="production",
              paper="\"two disjoint samples\" of the references (Sec. 6); the reference code draws the two groups with overlap",
              here="two disjoint halves of the references, as the paper's text says",
              effect="needs R >= 4; DailyDialog++'s 5 references give a weak control (1 and 3 distances), which the paper "
              "does not report for dialogue"),
    Departure("syntactic probe's parser",
              section="production",
              paper="spaCy `en_core_web_md`",
              here="spaCy `en_core_web_sm` (the offline package); no German tagger offline",
              effect="not compared: the medium pipeline needs the internet"),
    Departure("semantic probe's encoder",
              section="production",
              paper="sentence-transformers `all-distilroberta-v1`",
              here="`all-MiniLM-L6-v2` (the offline package)",
              effect="not compared: the paper's encoder needs the internet"),
    Departure("truncation before the probes",
              section="production",
              paper="each model's own tokenizer in the reference code's setting",
              here="one tokenizer per output language (the sentence encoder's), so H is one baseline shared by every system",
              effect="German here counted by MiniLM's English WordPiece: 135 of WMT14's 5,000 references cut; mean "
              "lexical-1 H over the 500 inputs 0.3179 -> 0.3188"),
    Departure("CPU products (packed weights)",
              section="production",
              paper="-",
              here="the last bits of the logits differ from unpacked products",
              effect="the same distributions; redrawn productions differ in text where one token differs"),
)
"""Every departure, by study section in the page's order."""

COLUMNS = {"where": "where", "paper": "the paper (or its authors' code)", "here": "here", "effect": "effect"}
"""The table's columns: a record's field and its heading."""


def departure_table(sections: set[str] | None = None) -> pd.DataFrame:
    """The departures as a table, those of ``sections`` alone where given.

    Parameters
    ----------
    sections : set of str, optional
        The page's sections (``sections.sections()`` keys) whose departures are kept.

    Returns
    -------
    pandas.DataFrame
        One row per departure, columns ``COLUMNS``' headings, all of them the package's own
        Markdown (``attrs[MARKUP]``).
    """
    kept = [d for d in DEPARTURES if sections is None or d.section in sections]
    table = pd.DataFrame([{heading: getattr(d, field) for field, heading in COLUMNS.items()} for d in kept],
                         columns=list(COLUMNS.values()))
    table.attrs[MARKUP] = list(COLUMNS.values())  # the records are the package's own Markdown
    return table
