"""Syntactic and semantic TVD (Ilia & Aziz 2024, Sec. 5, App. G): class distributions, the elbow
rule, clusters of word vectors, the per-context table, the CLI and the rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import output, scheduled, snakemake, write_config

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings, ModelEstimate, human_counts, oracle_splits
from varprobe.families.word_classes.analysis import Partition, class_table, semantic_classifier, syntactic_classifier
from varprobe.metrics.distributions import mle, tvd
from varprobe.metrics.word_classes import coarsen, elbow, first_small_change
from varprobe.probes.word_vectors import OOV, candidate_ks, cluster_words, load_word_vectors

SETTINGS = ControlSettings(seed=0, resplits=4, bootstrap_resamples=100)


def _one_context(humans: dict[str, int], context: str = "Yesterday I saw") -> tuple[pd.DataFrame, pd.DataFrame]:
    contexts = pd.DataFrame({"text_id": [1], "word_number": [4], "context": [context],
                             "context_length": [3], "word": ["x"], "corpus_word": ["x"]})
    responses = pd.DataFrame({"text_id": 1, "word_number": 4, "response": list(humans),
                              "count": list(humans.values())})
    return contexts, responses


def test_coarsen_sums_word_probabilities_per_class():
    assert coarsen({"the": 0.5, "a": 0.3, "dog": 0.2}, {"the": "DET", "a": "DET", "dog": "NOUN"}) == \
        pytest.approx({"DET": 0.8, "NOUN": 0.2})
    with pytest.raises(KeyError, match="'cat'"):
        coarsen({"cat": 1.0}, {"dog": "NOUN"})


@pytest.mark.parametrize(
    ("humans", "model", "expected"),
    [({"the": 1, "a": 1}, {"dog": 1.0}, 1.0),  # DET vs NOUN: disjoint tags
     ({"the": 2}, {"a": 1.0}, 0.0),             # different words, one tag
     ({"the": 1, "dog": 1}, {"a": 1.0}, 0.5)],  # {DET .5, NOUN .5} vs {DET 1}
)
def test_hand_worked_syntactic_tvd(tagger, humans, model, expected):
    contexts, responses = _one_context(humans)
    table = class_table(contexts, responses, {(1, 4): ModelEstimate(model, 1, 1)},
                        classify=syntactic_classifier(tagger), settings=SETTINGS)
    assert table.loc[0, "tvd"] == pytest.approx(expected)
    assert pd.isna(table.loc[0, "k"]) and table.loc[0, "n_types"] == len(set(humans) | set(model))


def test_oracle_control_uses_the_word_level_splits_on_classes():
    humans = {"the": 3, "a": 2, "dog": 2, "cat": 1}
    classes = {"the": "DET", "a": "DET", "dog": "NOUN", "cat": "NOUN"}
    contexts, responses = _one_context(humans)
    model = {"dog": 0.5, "the": 0.5}
    table = class_table(contexts, responses, {(1, 4): ModelEstimate(model, 2, 2)},
                        classify=lambda context, words: Partition(classes), settings=SETTINGS)
    splits = oracle_splits((1, 4), humans, SETTINGS)
    by_class = [(coarsen(o1, classes), coarsen(o2, classes)) for o1, o2 in splits]
    assert table.loc[0, "tvd_oracle2_oracle1"] == pytest.approx(np.mean([tvd(b, a) for a, b in by_class]))
    assert table.loc[0, "tvd_model_oracle1"] == pytest.approx(
        np.mean([tvd(coarsen(model, classes), a) for a, _ in by_class]))
    assert table.loc[0, "tvd"] == pytest.approx(tvd({"NOUN": 0.5, "DET": 0.5}, {"DET": 5 / 8, "NOUN": 3 / 8}))


def test_the_semantic_oracle_control_is_over_the_clusters_of_human_and_model_words():
    """App. G clusters "the set of human and model words" per context and maps the oracles onto
    those clusters: a model word far from two close human words merges them into one cluster, so
    the oracles' TVD_sem falls to 0; a model word among the humans' leaves their clusters apart."""
    vectors = {"cat": np.array([1.0, 0.0, 0.0]), "dog": np.array([1.1, 0.1, 0.0]),
               "car": np.array([-5.0, 5.0, 3.0])}
    humans = {"cat": 3, "dog": 1}
    contexts, responses = _one_context(humans)
    classify = semantic_classifier(vectors, seed=0, n_init=5, max_iter=100, k_rule="elbow")
    apart, merged = (class_table(contexts, responses, {(1, 4): ModelEstimate({word: 1.0}, 1, 1)},
                                 classify=classify, settings=SETTINGS).loc[0] for word in ("cat", "car"))
    words = np.mean([tvd(o2, o1) for o1, o2 in oracle_splits((1, 4), humans, SETTINGS)])
    assert apart["n_classes"] == 2 and apart["tvd_oracle2_oracle1"] == pytest.approx(words) and words > 0
    assert merged["n_classes"] == 2 and merged["tvd_oracle2_oracle1"] == 0.0


def test_a_context_without_model_words_has_no_model_tvd():
    contexts, responses = _one_context({"the": 1, "dog": 1})
    table = class_table(contexts, responses, {}, classify=lambda c, words: Partition({w: "X" for w in words}),
                        settings=SETTINGS)
    assert pd.isna(table.loc[0, "tvd"]) and table.loc[0, "tvd_oracle2_oracle1"] == 0.0


def test_class_tvd_never_exceeds_word_tvd_on_provo(provo_norms, tagger):
    """Merging outcomes into classes can only shrink TVD (data processing inequality)."""
    from varprobe.data.provo import contexts_table, responses_table

    contexts = contexts_table(provo_norms, [1]).iloc[3:9]
    responses = responses_table(provo_norms, [1])
    humans = {k: mle(c) for k, c in human_counts(responses).items()}
    keys = list(zip(contexts["text_id"], contexts["word_number"], strict=True))
    # Each context's "model" is the next context's human distribution: different words, often
    # other tags.
    estimates = {keys[i]: ModelEstimate(humans[keys[(i + 1) % len(keys)]], 1, 1) for i in range(len(keys))}
    table = class_table(contexts, responses, estimates, classify=syntactic_classifier(tagger),
                        settings=SETTINGS)
    word_level = [tvd(estimates[k].distribution, humans[k]) for k in keys]
    assert (table["tvd"].to_numpy() <= np.array(word_level) + 1e-12).all()
    assert (table["tvd"] < np.array(word_level)).any()


def test_elbow_is_the_point_farthest_below_the_chord():
    assert elbow([2, 5, 8, 11], [100.0, 20.0, 15.0, 12.0]) == 5
    assert elbow([2, 5, 8, 11], [100.0, 90.0, 20.0, 12.0]) == 8


@pytest.mark.parametrize(
    ("ks", "sse", "expected"),
    [([3], [7.0], 3),                        # a single candidate
     ([2, 3], [10.0, 1.0], 2),               # two points: both on the chord
     ([2, 4, 6], [30.0, 20.0, 10.0], 2),     # a straight line
     ([2, 4, 6], [30.0, 29.0, 10.0], 2),     # concave: nothing below the chord
     ([2, 4, 6], [5.0, 5.0, 5.0], 2)],       # flat
)
def test_elbow_edge_cases_take_the_fewest_clusters(ks, sse, expected):
    assert elbow(ks, sse) == expected


@pytest.mark.parametrize(
    ("ks", "sse", "message"),
    [([], [], "non-empty"), ([2, 3], [1.0], "one length"), ([3, 2], [1.0, 2.0], "increasing"),
     ([2, 3], [1.0, float("nan")], "finite")],
)
def test_elbow_rejects_bad_curves(ks, sse, message):
    with pytest.raises(ValueError, match=message):
        elbow(ks, sse)


def _three_groups(size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    centres = np.eye(3, 8) * 10
    return {f"g{g}w{i}": centres[g] + rng.normal(scale=0.1, size=8) for g in range(3) for i in range(size)}


def test_paper_grid_of_cluster_numbers():
    assert candidate_ks(2) == [] and candidate_ks(5) == [2, 3, 4] and candidate_ks(9) == [2, 5, 8]
    assert candidate_ks(40) == [2, 15, 28]


def test_three_obvious_groups_give_three_clusters():
    vectors = _three_groups(2)
    words = [*vectors][:5]  # 2 + 2 + 1 words: candidates 2, 3, 4
    found = cluster_words(words, vectors, seed=0)
    assert found.k == 3 and found.candidates == (2, 3, 4)
    groups = {}
    for word, cluster in found.classes.items():
        groups.setdefault(word[:2], set()).add(cluster)
    assert all(len(c) == 1 for c in groups.values()) and len(set.union(*groups.values())) == 3


def test_oov_words_are_pooled_and_the_partition_is_deterministic():
    vectors = _three_groups(2)
    words = [*[*vectors][:5], "zzz", "qqq"]
    first = cluster_words(words, vectors, seed=3)
    assert first.n_oov == 2 and first.classes["zzz"] == first.classes["qqq"] == OOV
    assert cluster_words(list(reversed(words)), vectors, seed=3) == first


def test_the_authors_rule_keeps_the_first_k_before_a_small_change_else_the_least():
    """``first_small_change`` as the authors' ``choose_k`` reads its curve: the change is relative
    to the previous candidate's value, a 0 passes no test, and without a small change the least
    value's k (the first of equal ones) is kept."""
    assert first_small_change([2, 5, 8], [10.0, 9.6, 9.0]) == 2  # 4% from 2 to 5
    assert first_small_change([2, 5, 8], [10.0, 5.0, 4.9]) == 5
    assert first_small_change([2, 5, 8], [10.0, 5.0, 2.0]) == 8
    assert first_small_change([2, 5, 8], [3.0, 1.0, 1.0 + 1e-12]) == 5
    assert first_small_change([2, 5, 8], [0.0, 0.0, 0.0]) == 2  # no ratio: the least, the first of them
    assert first_small_change([4], [7.0]) == 4
    with pytest.raises(ValueError, match="non-empty and of one length"):
        first_small_change([2, 3], [1.0])


def test_under_the_authors_rule_k_is_chosen_on_their_summed_unsquared_distances():
    """Three groups of 2, 2 and 1 words: the elbow of the SSE keeps 3 clusters; the authors' curve
    (each point's distance to its centroid, not squared, summed) never changes by less than 5%,
    so their rule keeps the least, at k = 4."""
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import StandardScaler

    vectors = _three_groups(2)
    words = sorted([*vectors][:5])
    assert cluster_words(words, vectors, seed=0).k == 3
    found = cluster_words(words, vectors, seed=0, k_rule="authors")
    assert found.k == 4 and found.candidates == (2, 3, 4)
    matrix = StandardScaler().fit_transform(np.stack([vectors[w] for w in words]))
    fit = KMeans(n_clusters=2, random_state=0, n_init=20, max_iter=400).fit(matrix)
    assert found.sse[0] == pytest.approx(np.linalg.norm(matrix - fit.cluster_centers_[fit.labels_], axis=1).sum())
    with pytest.raises(ValueError, match="k_rule must be one of elbow, authors"):
        cluster_words(words, vectors, seed=0, k_rule="silhouette")


def test_cluster_edge_cases():
    same = {w: np.ones(4) for w in "abcde"}
    assert cluster_words("abcde", same, seed=0).k == 1  # identical vectors: one cluster
    two = {"a": np.zeros(4), "b": np.ones(4)}
    assert cluster_words(["a", "b"], two, seed=0).k == 2  # no candidate: one cluster per vector
    assert cluster_words(["x", "y"], two, seed=0) == cluster_words(["y", "x"], two, seed=0)
    nothing = cluster_words(["x", "y"], two, seed=0)
    assert nothing.k == 0 and nothing.n_oov == 2 and set(nothing.classes.values()) == {OOV}


def _word2vec_file(path, vectors):
    lines = [f"{len(vectors)} {len(next(iter(vectors.values())))}"]
    lines += [" ".join([w, *(f"{x:.6f}" for x in v)]) for w, v in vectors.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_embeddings_load_from_a_file_and_bad_entries_are_named(tmp_path):
    vectors = load_word_vectors({"path": str(_word2vec_file(tmp_path / "v.txt", _three_groups(2)))})
    assert "g1w0" in vectors and vectors["g1w0"].shape == (8,)
    with pytest.raises(OSError, match="no-such.txt"):
        load_word_vectors({"path": str(tmp_path / "no-such.txt")})
    with pytest.raises(OSError, match="'no_such_package'"):
        load_word_vectors({"package": "no_such_package"})
    with pytest.raises(ValueError, match="exactly one key"):
        load_word_vectors({"path": "a", "package": "b"})


def test_cli_writes_tables_summary_and_histograms(tmp_path, provo_norms):
    from varprobe.cli import main
    from varprobe.data.provo import contexts_table, responses_table

    contexts = contexts_table(provo_norms, [1]).iloc[:4]
    tables.write(contexts, tmp_path / "contexts.parquet", "provo_contexts")
    tables.write(responses_table(provo_norms, [1]), tmp_path / "responses.parquet", "provo_responses")
    words = ["the", "a", "dog", "xyzzy"]
    samples = pd.DataFrame([
        {"text_id": t, "word_number": w, "sample_index": i, "text": f" {word}", "word": word,
         "failed": False, "failure": "", "n_tokens": 1, "count": 1}
        for t, w in zip(contexts["text_id"].iloc[:3], contexts["word_number"].iloc[:3], strict=True)
        for i, word in enumerate(words)
    ])
    tables.write(samples, tmp_path / "samples.parquet", "provo_samples")
    vocabulary = set(responses_table(provo_norms, [1])["response"]) | set(words[:3])
    rng = np.random.default_rng(0)
    embeddings = _word2vec_file(tmp_path / "v.txt", {w: rng.normal(size=6) for w in sorted(vocabulary)})
    common = ["--model", "m", "--decoding", "d", "--seed", "0", "--resplits", "3", "--bootstrap", "50",
              "--contexts", str(tmp_path / "contexts.parquet"),
              "--responses", str(tmp_path / "responses.parquet"),
              "--samples", str(tmp_path / "samples.parquet")]
    for level, extra in (("syntactic", []),
                         ("semantic", ["--embeddings", f'{{"path": "{embeddings}"}}', "--n-init", "2"])):
        main([f"{level}-tvd", *common, *extra, "--tvd-out", str(tmp_path / f"{level}.parquet"),
              "--system-out", str(tmp_path / f"{level}_system.parquet")])
        table = tables.read(tmp_path / f"{level}.parquet", "word_class_tvd")
        assert len(table) == 4 and table["tvd"].isna().tolist() == [False, False, False, True]
        assert ((table["tvd"].dropna() >= 0) & (table["tvd"].dropna() <= 1)).all()
        main(["word-class-summary", "--level", level, "--systems", str(tmp_path / f"{level}_system.parquet"),
              "--out", str(tmp_path / f"{level}_summary.parquet")])
        row = tables.read(tmp_path / f"{level}_summary.parquet", "word_class_system").iloc[0]
        assert row["n_contexts"] == 3 and row["n_contexts_all_failed"] + row["n_contexts_not_sampled"] == 1
        assert row["expected_tvd"] == pytest.approx(table["tvd"].mean())
        main(["word-class-figure", "--level", level, "--tvd", str(tmp_path / f"{level}.parquet"),
              "--figure", str(tmp_path / f"{level}.png"), "--table", str(tmp_path / f"{level}_hist.parquet")])
        counts = tables.read(tmp_path / f"{level}_hist.parquet", "word_class_histogram")
        assert counts.groupby("series")["count"].sum().tolist() == [3, 3]
    semantic = tables.read(tmp_path / "semantic.parquet", "word_class_tvd")
    assert (semantic.loc[:2, "n_oov"] >= 1).all()  # "xyzzy" has no vector
    with pytest.raises(SystemExit):
        main(["word-class-summary", "--level", "semantic", "--systems",
              str(tmp_path / "syntactic_system.parquet"), "--out", str(tmp_path / "x.parquet")])


@pytest.mark.slow
def test_rules_are_scheduled_from_config_and_run(tmp_path, data_mirror):

    csv = tmp_path / "given.csv"
    csv.write_text("text_id,word_number,sample,count\n1,2,are,3\n1,2,is,1\n1,3,now,2\n")
    embeddings = _word2vec_file(tmp_path / "v.txt", {"are": np.ones(3), "is": np.arange(3.0)})
    write_config(tmp_path, data_mirror, [{"name": "published", "samples": str(csv)}])
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    config["analyses"] = {"syntactic_tvd": {}, "semantic_tvd": {"embeddings": {"path": str(embeddings)}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = scheduled(tmp_path)
    for rule in ("syntactic_tvd", "syntactic_tvd_summary", "syntactic_tvd_figure",
                 "semantic_tvd", "semantic_tvd_summary", "semantic_tvd_figure"):
        assert jobs[rule] == 1, jobs
    # The rules come from a loop: each level's job must run its own subcommand and options.
    run = snakemake(tmp_path, "syntactic_tvd_summary", "semantic_tvd_summary")
    assert run.returncode == 0, output(run)
    for key in ("syntactic_tvd", "semantic_tvd"):
        summary = tables.read(tmp_path / f"results/analyses/{key}/summary.parquet", "word_class_system")
        assert summary["level"].tolist() == [key.split("_")[0]] and summary["n_contexts"].tolist() == [2]
    config["analyses"] = {"semantic_tvd": {"embeddings": {"hub": "x"}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0 and "hub" in output(run)
