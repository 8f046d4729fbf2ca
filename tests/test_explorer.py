"""The explorer's data assembly (pure functions on tables) and the folder it writes."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.cli import main
from varprobe.explorer.data import (
    ProductionSystem,
    ProvoSystem,
    production_adequacy,
    production_outputs,
    production_sources,
    production_statistics,
    production_texts,
    provo_table,
    provo_words,
)
from varprobe.explorer.page import chunk_script, write_explorer

NAN = float("nan")


def provo_tables():
    """Two contexts of passage 1, humans, a sampled and an exact system."""
    contexts = tables.conform(pd.DataFrame({
        "text_id": [1, 1], "word_number": [2, 3], "context": ["There", "There are"],
        "context_length": [1, 2], "word": ["are", "now"], "corpus_word": ["are", "now"],
    }), "provo_contexts")
    responses = tables.conform(pd.DataFrame({
        "text_id": [1, 1, 1, 1], "word_number": [2, 2, 3, 3],
        "response": ["are", "is", "many", "now"], "count": [3, 1, 2, 2],
    }), "provo_responses")
    samples = tables.conform(pd.DataFrame({
        "text_id": [1, 1, 1, 1, 1, 1], "word_number": [2, 2, 2, 2, 3, 3],
        "sample_index": [0, 1, 2, 3, 0, 1], "text": ["is", "was", "-", "are", "now", "s"],
        "word": ["is", "was", "", "are", "now", ""],
        "failed": [False, False, True, False, False, True],
        "failure": ["", "", "no_word", "", "", "extends_context_word"],
        "n_tokens": [1, 1, 1, 1, 1, 1], "count": [3, 1, 2, 1, 1, 1],
    }), "provo_samples")
    distribution = tables.conform(pd.DataFrame({
        "text_id": [1, 1, 1, 1, 1], "word_number": [2, 2, 2, 3, 3],
        "word": ["is", "are", "", "many", "so"], "failure": ["", "", "no_word", "", ""],
        "probability": [0.5, 0.2, 0.1, 0.6, 0.3], "unresolved_mass": [0.2, 0.2, 0.2, 0.1, 0.1],
        "failure_mass": [0.1, 0.1, 0.1, 0.0, 0.0], "forward_tokens": [9, 9, 9, 9, 9],
    }), "provo_distribution")

    def tvd_table(tvd, lower, upper, oracle, order=(0, 1)):
        frame = pd.DataFrame({
            "text_id": [1, 1], "word_number": [2, 3], "context_length": [1, 2],
            "n_draws": [7, 2], "n_words": [5, 1], "n_humans": [4, 4], "tvd": tvd,
            "tvd_lower": lower, "tvd_upper": upper, "tvd_model_oracle1": [0.5, 0.5],
            "tvd_oracle2_oracle1": oracle, "entropy_human": [0.562335, 0.693147],
            "entropy_model": [1.0, 0.0], "entropy_oracle1": [0.5, 0.5],
            "model_mode": ["is", "now"], "confidence": [0.6, 1.0], "corpus_word": ["are", "now"],
            "human_majority": ["are", "many"],
        })
        return tables.conform(frame.iloc[list(order)], "provo_tvd")

    sampled = ProvoSystem("m", "ancestral", tvd=tvd_table([0.35, 0.5], [NAN, NAN], [NAN, NAN],
                                                      [0.25, 0.5], order=(1, 0)),
                          estimate=samples, exact=False,
                          summary={"expected_tvd": np.float64(0.425), "n_contexts": np.int64(2),
                                   "ci_low": np.nan})
    exact = ProvoSystem("m", "exact", tvd=tvd_table([0.3, 0.4], [0.2, 0.3], [0.42, 0.4], [0.25, 0.5]),
                        estimate=distribution, exact=True, summary={})
    oracle = tvd_table([0.1, 0.2], [NAN, NAN], [NAN, NAN], [0.25, 0.5])
    return contexts, responses, oracle, [sampled, exact]


def test_provo_table_aligns_every_system_to_the_contexts():
    contexts, _, oracle, systems = provo_tables()
    found = provo_table(contexts, oracle, systems)
    assert found["contexts"]["corpus_word"] == ["are", "now"]
    assert found["contexts"]["tvd_oracle"] == [0.25, 0.5]
    sampled, exact = found["systems"]
    assert sampled["tvd"] == [0.35, 0.5]  # its tvd table lists the contexts the other way round
    assert sampled["tvd_lower"] is None and sampled["certified"] is None
    # failures weighted by count: (1, 2) 2 of 7 draws, (1, 3) 1 of 2
    assert sampled["failure_rate"] == [round(2 / 7, 6), 0.5]
    assert exact["tvd_lower"] == [0.2, 0.3] and exact["tvd_upper"] == [0.42, 0.4]
    assert exact["failure_rate"] == [0.1, 0.0] and exact["certified"] == [0.8, 0.9]
    assert sampled["summary"] == {"expected_tvd": 0.425, "n_contexts": 2, "ci_low": None}
    json.dumps(found, allow_nan=False)  # numpy scalars and NaN never reach the page


def test_two_systems_of_one_name_are_refused():
    contexts, _, oracle, systems = provo_tables()
    with pytest.raises(ValueError, match=re.escape("systems given more than once: ['m/ancestral']")):
        provo_table(contexts, oracle, [systems[0], systems[0]])


def test_sampled_bars_are_the_mle_of_the_words_with_failures_by_reason():
    contexts, responses, _, systems = provo_tables()
    words = provo_words(contexts, responses, systems, top=1)
    first = words[1][0]
    assert first["human"] == [["are", 3], ["is", 1]]
    sampled = first["systems"][0]
    # 5 draws gave a word: is 3, are 1, was 1. Top 1 is "is"; the corpus word "are" is kept.
    assert sampled["words"] == [["is", 0.6], ["are", 0.2]]
    assert sampled["other"] == 0.2 and sampled["unresolved"] is None
    assert (sampled["draws"], sampled["kept"]) == (7, 5)
    assert sampled["failures"] == [["no_word", 2]]


def test_exact_bars_are_the_enumerated_masses_and_account_for_all_of_it():
    contexts, responses, _, systems = provo_tables()
    words = provo_words(contexts, responses, systems, top=1)
    for context in words[1]:
        exact = context["systems"][1]
        total = (sum(p for _, p in exact["words"]) + exact["other"] + exact["unresolved"]
                 + sum(m for _, m in exact["failures"]))
        assert total == pytest.approx(1.0)
    first = words[1][0]["systems"][1]
    assert first["words"] == [["is", 0.5], ["are", 0.2]]
    assert first["failures"] == [["no_word", 0.1]] and first["unresolved"] == 0.2
    second = words[1][1]["systems"][1]
    assert second["words"] == [["many", 0.6]] and second["other"] == 0.3  # corpus word: no mass
    assert second["failures"] == []


def test_a_context_without_rows_of_a_system_is_none():
    contexts, responses, _, systems = provo_tables()
    partial = ProvoSystem("m", "ancestral", tvd=systems[0].tvd,
                          estimate=systems[0].estimate[systems[0].estimate["word_number"] == 2],
                          exact=False, summary={})
    words = provo_words(contexts, responses, [partial])
    assert words[1][0]["systems"][0] is not None and words[1][1]["systems"][0] is None
    with pytest.raises(ValueError, match="top = 0"):
        provo_words(contexts, responses, [partial], top=0)


def production_tables():
    instances = tables.conform(pd.DataFrame({
        "dataset": ["asset"] * 3, "split": ["valid"] * 3, "input_id": ["a", "b", "c"],
        "source": ["Source A.", "Source B.", "Source C."],
        "references": [["r1", "r2"], ["r3"], ["r4", "r5", "r6"]],
    }), "production_instances")
    samples = tables.conform(pd.DataFrame({
        "input_id": ["a", "a", "b", "c"], "sample_index": [1, 0, 0, 0],
        "text": ["second", "first", "b0", "c0"],
    }), "production_samples")
    distances = tables.conform(pd.DataFrame({
        "input_id": ["a", "a", "a", "a", "c"], "probe": ["lexical-1", "lexical-1", "semantic", "lexical-1", "lexical-1"],
        "kind": ["H", "C", "H", "C", "M"], "a": [0, 0, 0, 1, 0], "b": [1, 0, 1, 1, 1],
        "distance": [0.25, 0.5, 0.125, NAN, 0.75],
    }), "production_distances")
    stats = {s: [0.1, 0.2] for s in ("mean_H", "mean_M", "mean_C", "mean_M_minus_H",
                                     "mean_C_minus_H", "w1_M_H", "w1_C_H", "w1_control")}
    divergences = tables.conform(pd.DataFrame({
        "input_id": ["c", "a"], "probe": ["lexical-1", "lexical-1"], "n_H": [1, 1], "n_M": [1, 1],
        "n_C": [1, 1], **stats,
    }).assign(w1_control=[0.3, NAN]), "production_divergences")
    return instances, ProductionSystem("asset", "m", "top-k-30", samples=samples, distances=distances,
                                       divergences=divergences)


def test_production_statistics_follow_the_inputs_order():
    instances, system = production_tables()
    found = production_statistics(instances, system)
    assert found["probes"] == ["lexical-1"]
    # divergences list c then a; b has no row
    assert found["statistics"]["lexical-1"]["mean_H"] == [0.2, None, 0.1]
    assert found["statistics"]["lexical-1"]["w1_control"] == [None, None, 0.3]


def test_production_adequacy_follows_the_inputs_order_and_is_empty_without_a_table():
    instances, system = production_tables()
    assert production_adequacy(instances, system) == {}
    adequacy = tables.conform(pd.DataFrame({
        "input_id": ["c", "a"], "n_outputs": [1, 2], "chrf": [10.0, 55.5], "bleu": [0.0, 20.0],
        "language_share": [1.0, 0.5], "empty_share": [0.0, 0.5], "copy_share": [0.0, 0.0],
        "reference_language_share": [1.0, 1.0], "sari": [float("nan")] * 2}),
        "production_adequacy")
    found = production_adequacy(instances, dataclasses.replace(system, adequacy=adequacy))
    assert found["chrf"] == [55.5, None, 10.0] and found["empty_share"] == [0.5, None, 0.0]
    # SARI, NaN for every input of a task that is not simplification, is left out
    assert set(found) == {"chrf", "bleu", "language_share", "empty_share", "copy_share",
                          "reference_language_share"}
    simplification = adequacy.assign(sari=[30.0, 45.5])
    assert production_adequacy(instances, dataclasses.replace(system, adequacy=simplification))["sari"] == [
        45.5, None, 30.0]


def test_production_texts_and_outputs_come_in_blocks():
    instances, system = production_tables()
    assert production_sources(instances)["source"] == ["Source A.", "Source B.", "Source C."]
    texts = production_texts(instances, block=2)
    assert texts == [{"references": [["r1", "r2"], ["r3"]]}, {"references": [["r4", "r5", "r6"]]}]
    outputs = production_outputs(instances, system, block=2)
    assert len(outputs) == 2
    assert outputs[0]["samples"] == [["first", "second"], ["b0"]]
    # the NaN distance (undefined pair) is left out; semantic is not a divergences probe here
    assert outputs[0]["distances"][0] == {"lexical-1": {"H": [0.25], "M": [], "C": [0.5]}}
    assert outputs[0]["distances"][1] == {"lexical-1": {"H": [], "M": [], "C": []}}
    assert outputs[1]["distances"][0]["lexical-1"]["M"] == [0.75]
    with pytest.raises(ValueError, match="block = 0"):
        production_texts(instances, block=0)


def _chunk(path):
    text = path.read_text(encoding="utf-8")
    found = re.fullmatch(r'VP\.chunk\(("[^"]*"),(.*)\);\n', text, flags=re.S)
    assert found, text[:200]
    return json.loads(found.group(1)), json.loads(found.group(2))


def test_the_folder_holds_the_page_its_assets_and_every_chunk_it_names(tmp_path):
    contexts, responses, oracle, systems = provo_tables()
    instances, system = production_tables()
    out = tmp_path / "explorer"
    manifest = write_explorer(out, "a <run>", {"contexts": contexts, "responses": responses,
                                               "oracle": oracle, "systems": systems},
                              {"instances": {"asset": instances}, "systems": [system]}, block=2)
    page = (out / "index.html").read_text()
    assert "<title>a &lt;run&gt;</title>" in page and "data/manifest.js" in page
    assert not re.search(r"(src|href)=\"https?:", page)  # nothing from the network
    assert (out / "assets/explorer.js").stat().st_size > 1000
    name, written = _chunk(out / "data/manifest.js")
    assert name == "manifest" and written == json.loads(json.dumps(manifest))
    named = [manifest["provo"]["table"], *manifest["provo"]["passages"].values(),
             *manifest["production"]["datasets"]["asset"]["blocks"],
             manifest["production"]["datasets"]["asset"]["sources"],
             *(c for s in manifest["production"]["systems"]
               for c in [s["statistics"], s["adequacy"], *s["blocks"]])]
    assert sorted(f"{n}.js" for n in [*named, "manifest"]) == sorted(p.name for p in (out / "data").iterdir())
    for chunk in named:
        assert _chunk(out / "data" / f"{chunk}.js")[0] == chunk
    # a second write replaces the folder: no stale chunk of the first survives
    write_explorer(out, "again", None, {"instances": {"asset": instances}, "systems": [system]},
                   block=5)
    assert not (out / "data/provo-table.js").exists() and (out / "data/prod-out-0-0.js").exists()


def test_nan_never_reaches_the_page():
    assert chunk_script("x", {"v": None}) == 'VP.chunk("x",{"v":null});\n'
    with pytest.raises(ValueError):
        chunk_script("x", {"v": math.nan})
    assert chunk_script("x", ["</script>"]).count("</script>") == 1  # plain JS file, not inline


def test_cli_writes_the_explorer_from_table_files(tmp_path, capsys):
    contexts, responses, oracle, systems = provo_tables()
    paths = {}
    for name, frame, schema in [("contexts", contexts, "provo_contexts"),
                                ("responses", responses, "provo_responses"),
                                ("oracle", oracle, "provo_tvd")]:
        paths[name] = tmp_path / f"{name}.parquet"
        tables.write(frame, paths[name], schema)
    sampled = systems[0]
    tables.write(sampled.tvd, tmp_path / "m/ancestral/tvd.parquet", "provo_tvd",
                 {"model": "m", "decoding": "ancestral"})
    tables.write(sampled.estimate, tmp_path / "m/ancestral/samples.parquet", "provo_samples")
    main(["explorer", "--out", str(tmp_path / "explorer"), "--provo-contexts", str(paths["contexts"]),
          "--provo-responses", str(paths["responses"]), "--provo-oracle", str(paths["oracle"]),
          "--provo-tvd", str(tmp_path / "m/ancestral/tvd.parquet"),
          "--provo-estimates", str(tmp_path / "m/ancestral/samples.parquet")])
    assert "Provo systems ['m/ancestral']" in capsys.readouterr().out
    _, table = _chunk(tmp_path / "explorer/data/provo-table.js")
    assert table["systems"][0]["tvd"] == [0.35, 0.5]
    with pytest.raises(SystemExit):
        main(["explorer", "--out", str(tmp_path / "none")])
    assert "nothing to explore" in capsys.readouterr().err
    assert np.isclose(table["contexts"]["entropy_human"][0], 0.562335)


def test_the_single_file_holds_every_chunk_inline_and_no_text_can_close_its_script(tmp_path):
    contexts, responses, oracle, systems = provo_tables()
    contexts.loc[0, "context"] = "There </script><script>alert(1)</script>"
    single = tmp_path / "explorer.html"
    manifest = write_explorer(tmp_path / "explorer", "run", {
        "contexts": contexts, "responses": responses, "oracle": oracle, "systems": systems},
        None, single=single)
    page = single.read_text(encoding="utf-8")
    assert "src=" not in page and "href=" not in page  # nothing loaded from elsewhere
    inline = dict(re.findall(r'<script type="application/json" id="vp-chunk-([^"]+)">(.*?)</script>',
                             page, flags=re.S))
    assert set(inline) == {"manifest", manifest["provo"]["table"], *manifest["provo"]["passages"].values()}
    table = json.loads(inline[manifest["provo"]["table"]])
    assert table["contexts"]["context"][0] == "There </script><script>alert(1)</script>"
    assert page.count("<script") == page.count("</script>") == len(inline) + 2


def test_the_explorer_names_each_quantity_as_the_results_page_does():
    """Issue 39 item 1: one name per quantity in the tables, the figures and the explorer."""
    from pathlib import Path

    from varprobe.explorer import page
    from varprobe.results_page.tables import ADEQUACY_STATISTICS, PRODUCTION_STATISTICS

    script = (Path(page.__file__).parent / "assets" / "explorer.js").read_text()
    labels = dict(re.findall(r'\["(\w+)", "([^"]+)", "[^"]*"\]', script))
    assert {k: labels[k] for k in PRODUCTION_STATISTICS} == PRODUCTION_STATISTICS
    assert {k: labels[k] for k in ADEQUACY_STATISTICS} == ADEQUACY_STATISTICS
    assert '"TVD(O2, O1)"' in script and '" TVD(M, H)"' in script
    assert "oracle TVD" not in script and "W1(C,H)" not in script


def test_cli_reads_each_systems_adequacy_beside_its_divergences(tmp_path, capsys):
    instances, system = production_tables()
    folder = tmp_path / "asset/m/top-k-30"
    tables.write(instances, tmp_path / "asset/instances.parquet", "production_instances")
    for name, frame, schema in [("samples", system.samples, "production_samples"),
                                ("distances", system.distances, "production_distances"),
                                ("divergences", system.divergences, "production_divergences"),
                                ("adequacy", pd.DataFrame({
                                    "input_id": ["b"], "n_outputs": [1], "chrf": [42.0], "bleu": [7.0],
                                    "language_share": [1.0], "empty_share": [0.0], "copy_share": [1.0],
                                    "reference_language_share": [1.0], "sari": [12.5]}),
                                 "production_adequacy")]:
        tables.write(frame, folder / f"{name}.parquet", schema)
    options = ["explorer", "--out", str(tmp_path / "explorer"),
               "--production-instances", str(tmp_path / "asset/instances.parquet"),
               *(x for name in ("samples", "distances", "divergences")
                 for x in (f"--production-{name}", str(folder / f"{name}.parquet")))]
    main([*options, "--production-adequacy", str(folder / "adequacy.parquet")])
    _, manifest = _chunk(tmp_path / "explorer/data/manifest.js")
    _, adequacy = _chunk(tmp_path / "explorer/data" / f"{manifest['production']['systems'][0]['adequacy']}.js")
    assert adequacy["chrf"] == [None, 42.0, None] and adequacy["copy_share"] == [None, 1.0, None]
    assert adequacy["sari"] == [None, 12.5, None]
    with pytest.raises(SystemExit):
        main([*options, "--production-adequacy", str(folder / "adequacy.parquet"), str(folder / "adequacy.parquet")])
    assert "--production-adequacy needs one path per system (1), got 2" in capsys.readouterr().err
