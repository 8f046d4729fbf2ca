"""Universal POS tags of words in context (NLTK perceptron tagger, offline data)."""

import pytest

from varprobe.probes.pos_tags import UNIVERSAL_TAGS


def test_word_is_tagged_in_its_context(tagger):
    # "watch" after "the smart" is a noun; "quickly" is an adverb after the same context.
    assert tagger.tag("Apple might soon invade the smart", "watch") == "NOUN"
    assert tagger.tag_words("He went to the", ["store", "quickly"]) == {"store": "NOUN", "quickly": "ADV"}


def test_a_split_word_takes_its_first_tokens_tag(tagger):
    # Treebank splits "don't" into "do" + "n't": the tag is that of "do".
    assert tagger.tag("I", "don't") == "VERB"


def test_last_context_word(tagger):
    assert tagger.last_word_tag("The cat sat on the") == "DET"
    assert tagger.last_word_tag("It ended.") == "."


def test_tags_are_universal(tagger):
    words = ["the", "of", "run", "blue", "seven", "and", "she", "to", "very", "!"]
    assert set(tagger.tag_words("We saw", words).values()) <= set(UNIVERSAL_TAGS)


def test_empty_inputs_are_errors(tagger):
    with pytest.raises(ValueError, match="word"):
        tagger.tag("The cat", "")
    with pytest.raises(ValueError, match="empty context"):
        tagger.last_word_tag("   ")
