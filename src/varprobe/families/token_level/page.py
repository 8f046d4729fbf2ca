"""The token-level section of the results page (``varprobe.results_page.sections``): Table 4
beside ours."""

from __future__ import annotations

import math

import pandas as pd

from varprobe.results_page import authors_measures, paper
from varprobe.results_page.disagreements import Group, Pair, moved, other_models
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.markup import code
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import MARKUP, authors_row, markdown, number, printed, with_interval

SECTION = Section("Token level",
                  paper="Ilia & Aziz 2024, App. D, Table 4, Fig. 13",
                  entries=("token_level_summary",),
                  figures=("token_level",), position=60)

FIGURES = {"token_level": "Ilia & Aziz 2024, Fig. 13"}

def table_four(summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 4 (App. D) beside ours: token-level ECE against the human-majority
    first token of each model and of oracles 1 and 2, with the expected TVD to H and to O1; the
    paper's GPT-2 and oracles on rows of their own; the title names every model."""
    frame = pd.concat(summaries, ignore_index=True)
    rows = [{"model": r.model, "system": r.system,
             "E TVD(·, H) [95% CI]": with_interval(r.expected_tvd, r.ci_low, r.ci_high),
             "E TVD(·, O1)": r.expected_tvd_oracle1, "ECE human majority": r.ece_human_majority}
            for r in frame.itertuples(index=False)]
    rows += [{"model": "paper", "system": "GPT-2" if system == "model" else system,
              "ECE human majority": printed(value)} for system, value in paper.TABLE_4["human majority"].items()]
    table = pd.DataFrame(rows, columns=["model", "system", "E TVD(·, H) [95% CI]", "E TVD(·, O1)",
                                        "ECE human majority"])
    table.attrs["title"] = (f"Table 4: token-level ECE of {', '.join(dict.fromkeys(frame['model']))} and of "
                            f"its oracles 1 and 2, beside the paper's GPT-2 and oracles")
    return table


VIEWS = {"token_level_summary": lambda frames, measured: [table_four(frames)]}


def table_four_pairs(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
    """Table 4's token-level ECE of each model and of the oracles beside the paper's."""
    frame = table_of(entries, "token_level_summary")
    if frame is None:
        return []
    values = paper.TABLE_4["human majority"]
    return [Pair("table4_model" if r.system == "model" else "table4_oracle", f"{r.model}, {r.system}",
                 ours=r.ece_human_majority, low=math.nan, high=math.nan, paper=values[r.system], decimals=3)
            for r in frame.itertuples(index=False) if r.system in values]


def _exact_softmax(entries, measured, config) -> str:
    """Table 4's model row against GPT-2's: both are exact next-token distributions (the softmax,
    no draws), so only the models differ (``_other_models``)."""
    return ("Both are exact: Table 4 scores the model's softmax over its vocabulary, as the run does, so no "
            "draw enters either value (and each model's own tokenizer makes the first tokens). What remains is "
            + other_models(entries, measured, config))


def _token_oracles(_entries, _measured, _config) -> dict:
    """The oracles' Table 4 ECE under the authors' protocol and each of its definitions alone, as
    ``varprobe.families.token_level.authors`` measured it (``authors_measures.TABLE4_ORACLES``, which
    a test recomputes from the Provo norms), with the table of every number it cites."""
    m, lines = authors_measures.TABLE4_ORACLES, authors_measures.TOKEN_SWITCH_CODE
    oracles = list(authors_measures.ORACLES)
    found = pd.DataFrame(m.switches, columns=["protocol", "switch", *oracles])
    ours, authors = authors_row(found, "ours"), authors_row(found, "authors")
    seed, resplits, bins = (m.settings[k] for k in ("seed", "resplits", "ece_bins"))
    seeds = f"seeds 0-{resplits - 1}"
    (low1, mean1, high1), (low2, mean2, high2) = m.splits["authors"]
    (ours_low1, _, ours_high1), (ours_low2, _, ours_high2) = m.splits["ours"]
    shares = [f"{a:.1%}" for a in m.accuracy]
    extra = pd.DataFrame([
        ("authors, the mirror's response order", "", *m.mirror),
        (f"authors' one split over {seeds}: lowest", "", low1, low2),
        (f"authors' one split over {seeds}: highest", "", high1, high2),
        (f"ours, one resplit of {resplits}: lowest", "", ours_low1, ours_low2),
        (f"ours, one resplit of {resplits}: highest", "", ours_high1, ours_high2),
        ("authors' split: contexts whose human-majority token it names", "", *shares),
        ("authors' split: mean confidence", "", *m.confidence),
    ], columns=found.columns)
    folder = authors_measures.TOKEN_CODE_FOLDER
    cause = (
        f"Measured (`varprobe.families.token_level.authors` on the Provo norms with GPT-2's tokenizer, seed {seed}, "
        f"{resplits} resplits, {bins} bins; `tests/test_authors_token_level.py` recomputes every number here; its "
        f"table): the authors' protocol gives oracle 1 {number(authors['oracle 1'])} and oracle 2 "
        f"{number(authors['oracle 2'])} on the norms in their response order (that of their per-context lists, "
        f"`tests/data/authors_response_order.json`), the values their `{folder}/GPT2_processing_BPE.py` writes to "
        f"`cal_metrics_bpe.json` (line 356) to every digit ({number(m.mirror[0])} and {number(m.mirror[1])} on the "
        f"data mirror's rebuild of the norms, whose responses are sorted by their summed count, not in the OSF file's "
        f"order); ours {number(ours['oracle 1'])} and {number(ours['oracle 2'])} (the rows above use each model's own "
        f"tokenizer). The paper's values are one split, drawn from a random state every context shares: "
        f"`oracle(data_per_context, seed=0)` and `sample_oracle_without_replacement_disjoint_groups(20)` "
        f"({lines['single_split']}) call `random.seed(0)` (line 103) in every context, so each context with as many "
        f"responses sends the same positions of its response list, most frequent first, to oracle 1, and one split's "
        f"luck does not average out over the contexts. Over {seeds} that one split's ECE is {span(low1, high1)} for "
        f"oracle 1 and {span(low2, high2)} for oracle 2 (mean {number(mean1)} and {number(mean2)}); seeded per context, "
        f"ours is {span(ours_low1, ours_high1)} and {span(ours_low2, ours_high2)}. In seed 0's split oracle 1 names "
        f"the human-majority first token in {shares[0]} of the contexts at a mean confidence of "
        f"{number(m.confidence[0])}, oracle 2 in {shares[1]} at {number(m.confidence[1])}: every bin's accuracy is "
        f"above its confidence, so each ECE is accuracy less confidence. Oracle 1: "
        f"{moved(found, 'oracle 1', lines)}. Oracle 2: {moved(found, 'oracle 2', lines)}."
    )
    table = pd.concat([found, extra], ignore_index=True)
    table = table.assign(**{"authors' code": table["switch"].map(lines).fillna("")},
                         switch=table["switch"].map(lambda s: code(s) if s else ""))
    table.attrs[MARKUP] = ["switch", "authors' code"]  # inline code: switch names and file paths
    return {"cause": cause, "table": markdown(table)}


GROUPS = {
    "table4_model": Group("Table 4: the model's token-level ECE", "Ilia & Aziz 2024, Table 4, GPT-2"),
    "table4_oracle": Group("Table 4: the oracles' token-level ECE", "Ilia & Aziz 2024, Table 4, oracles 1 and 2",
                           appendix_table="the authors' definitions switched one at a time"),
}
"""Its groups of the Disagreements section (``varprobe.results_page.disagreements``)."""

PAIRS = table_four_pairs

CAUSES = {"table4_model": _exact_softmax, "table4_oracle": _token_oracles}
