"""First-complete-word extraction (rules in ``varprobe.words``' module docstring) on tricky text.

A continuation follows a context encoded as words joined by single spaces with no trailing
space, so a new word starts after whitespace and text before the first whitespace is glue on
the context's last word.
"""

import unicodedata

import pytest

from varprobe.words import (
    COMPLETE,
    FAILURES,
    INCOMPLETE,
    Extraction,
    first_word,
    has_word_char,
    is_delimiter,
    normalise_word,
    read_word,
)

EXTENDS = "extends_context_word"
ENDED_BEFORE = "ended_before_word"

# (continuation, ended, status, word)
CASES = [
    # -- a plain word, delimited by whitespace
    (" the cat", False, COMPLETE, "the"),
    (" cat ", False, COMPLETE, "cat"),
    ("\tword next", False, COMPLETE, "word"),
    (" a b c", False, COMPLETE, "a"),
    # -- only whitespace ends a word: punctuation belongs to the run and is removed (rule 2)
    (" dog.", False, INCOMPLETE, ""),  # more letters could follow ("dog.com")
    (" dog.", True, COMPLETE, "dog"),
    (" dog. The", False, COMPLETE, "dog"),
    (" dog, and", False, COMPLETE, "dog"),
    (" dog!\n", False, COMPLETE, "dog"),
    (" (really) yes", False, COMPLETE, "really"),
    (" and/or more", False, COMPLETE, "andor"),
    (" tight-lipped smile", False, COMPLETE, "tightlipped"),
    (" touchscreen—just a", False, COMPLETE, "touchscreenjust"),  # no space: one run
    (" market...somehow.\n", False, COMPLETE, "marketsomehow"),
    # -- apostrophes join (straight, curly, modifier letter), then are removed
    (" don't go", False, COMPLETE, "dont"),
    (" don’t go", False, COMPLETE, "dont"),
    (" donʼt go", False, COMPLETE, "dont"),
    (" dogs' bowls", False, COMPLETE, "dogs"),
    (" don't", False, INCOMPLETE, ""),  # still open: more letters could follow
    (" don'", False, INCOMPLETE, ""),  # an apostrophe joins, so the run is still open
    # -- hyphens join
    (" well-known fact", False, COMPLETE, "wellknown"),
    (" e-mail. ", False, COMPLETE, "email"),
    (" well-", False, INCOMPLETE, ""),
    # -- digits are word characters; a number's "." and "," are removed like any punctuation
    (" 1990 was", False, COMPLETE, "1990"),
    (" 3.5 million", False, COMPLETE, "35"),
    (" 3.", False, INCOMPLETE, ""),  # the decimals may follow
    (" 3,000 people", False, COMPLETE, "3000"),
    (" 99.2 percent", False, COMPLETE, "992"),
    (" U.S. troops", False, COMPLETE, "us"),
    (" 42", True, COMPLETE, "42"),
    # -- end of text right after a word: complete only if the text has ended (rule 3)
    (" dog", True, COMPLETE, "dog"),
    (" dog", False, INCOMPLETE, ""),
    (" Dog's", True, COMPLETE, "dogs"),
    # -- end of text before any word
    ("", True, ENDED_BEFORE, ""),
    ("", False, INCOMPLETE, ""),
    (" ", True, ENDED_BEFORE, ""),
    (" ", False, INCOMPLETE, ""),
    (".", True, ENDED_BEFORE, ""),  # glue punctuation only
    (".", False, INCOMPLETE, ""),
    (". --", True, ENDED_BEFORE, ""),
    ("\n\n", True, ENDED_BEFORE, ""),
    # -- a letter or digit before the first whitespace rewrites the context's last word
    ("s are", False, EXTENDS, ""),
    ("s are", True, EXTENDS, ""),
    ("'s market", False, EXTENDS, ""),
    ("’s market", False, EXTENDS, ""),
    ("s", False, EXTENDS, ""),  # decided at once: no more text can undo it
    ("5 apples", False, EXTENDS, ""),
    ("-based model", False, EXTENDS, ""),
    # -- punctuation glued to the context's last word is skipped
    (", and then", False, COMPLETE, "and"),
    (". The", True, COMPLETE, "the"),
    (". The", False, INCOMPLETE, ""),
    (". The end", False, COMPLETE, "the"),
    ("?! Yes. ", False, COMPLETE, "yes"),
    ('." She', True, COMPLETE, "she"),
    # -- quotes are removed with the other punctuation
    (' "Hello," she', False, COMPLETE, "hello"),
    (" 'Hello' she", False, COMPLETE, "hello"),
    (' "Hello', False, INCOMPLETE, ""),
    (" “Quoted” word", False, COMPLETE, "quoted"),
    # -- newlines are whitespace
    ("\n\nThe end", False, COMPLETE, "the"),
    (".\nNext line", False, COMPLETE, "next"),
    # -- runs of punctuation only (hyphens/apostrophes included) are skipped
    (" -- word ", False, COMPLETE, "word"),
    (" ... ... word.", True, COMPLETE, "word"),
    (' "-- word', True, COMPLETE, "word"),
    (" ' word ", False, COMPLETE, "word"),
    (" ʼ word ", False, COMPLETE, "word"),  # U+02BC is a joiner, not a letter
    ("ʼs market", False, EXTENDS, ""),
    (" _ word ", False, COMPLETE, "word"),  # underscore is no letter
    (" --", False, INCOMPLETE, ""),
    # -- case and unicode
    (" THE END", False, COMPLETE, "the"),
    (" McDonald's", True, COMPLETE, "mcdonalds"),
    (" café ", False, COMPLETE, "café"),
    (" Über alles", False, COMPLETE, "über"),
    (" naïve. ", False, COMPLETE, "naïve"),
    (" Москва ", False, COMPLETE, "москва"),
    ("\u00a0word ", False, COMPLETE, "word"),  # a no-break space is whitespace
]


@pytest.mark.parametrize("continuation, ended, status, word", CASES)
def test_first_word(continuation, ended, status, word):
    assert first_word(continuation, ended) == Extraction(status, word)


@pytest.mark.parametrize("continuation, ended, status, word", CASES)
def test_more_text_never_changes_a_decided_extraction(continuation, ended, status, word):
    """Once ``done`` without the end of text, appending text cannot change the outcome."""
    if ended or status == INCOMPLETE:
        return
    for extra in (" more words", "x", ".", "", "-y z"):
        assert first_word(continuation + extra, ended=False) == Extraction(status, word)
        assert first_word(continuation + extra, ended=True) == Extraction(status, word)


def test_ended_never_leaves_a_continuation_incomplete():
    for continuation, *_ in CASES:
        assert first_word(continuation, ended=True).done


def test_statuses_are_known():
    for continuation, ended, *_ in CASES:
        result = first_word(continuation, ended)
        assert result.status in (COMPLETE, INCOMPLETE, *FAILURES)
        assert bool(result.word) == (result.status == COMPLETE)


# ---- normalise_word --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Don't", "dont"),
        ("don’t", "dont"),
        ("donʼt", "dont"),  # U+02BC, a Unicode letter used as an apostrophe
        ("space,", "space"),
        ("Õhtul", "õhtul"),  # Estonian: a letter, not Provo's MacRoman apostrophe
        ("doesnÕt", "doesnõt"),  # which Provo's reader repairs in its own file alone
        ("---", ""),
        ("", ""),
        ("...!?", ""),
        ("well-known", "wellknown"),
        ("U.S.", "us"),
        ("foo_bar", "foobar"),
        ("Café", "café"),
        ("1990", "1990"),
        ("  The  ", "the"),
    ],
)
def test_normalise_word(text, expected):
    assert normalise_word(text) == expected


def test_has_word_char():
    assert has_word_char("a") and has_word_char("--1") and has_word_char("é")
    assert not has_word_char("") and not has_word_char("_-'.,") and not has_word_char("  ")
    assert not has_word_char("ʼ’'")


# ---- read_word: human responses and corpus words -----------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("tight-lipped", "tightlipped"),
        ("and/or", "andor"),
        ("mr.", "mr"),
        ("3.5", "35"),
        ("99.2", "992"),
        ("U.S.", "us"),
        ("TRUE", "true"),
        ("<NA>", "na"),
        ("null", "null"),
        ("Õun", "õun"),
        ("-----", ""),
        ("?", ""),
        (".", ""),
        ("", ""),
        ("00 puq", "00"),  # a response of two words reads as its first
    ],
)
def test_read_word(text, expected):
    assert read_word(text) == expected


@pytest.mark.parametrize("text", ["tight-lipped", "and/or", "3.5", "1,000", "U.S.", "Don't", "dog."])
def test_a_model_writing_a_word_gets_what_a_human_typing_it_gets(text):
    """One reading for the three sides: a model's continuation, a response, a corpus token."""
    model = first_word(f" {text} and", ended=False)
    assert model == Extraction(COMPLETE, read_word(text))
    assert model.word == normalise_word(text)


NFD = "cafe\u0301"  # e + U+0301 COMBINING ACUTE ACCENT


def test_one_word_in_two_unicode_forms_is_one_word():
    """NFC before the word rule: a model word, a response and a corpus word spelled with a
    combining accent (NFD) read as the precomposed word, not with the accent deleted."""
    assert normalise_word(NFD) == normalise_word("café") == "café"
    assert read_word(NFD) == read_word("Café") == "café"
    assert first_word(f" {NFD} au lait", ended=False) == Extraction(COMPLETE, "café")
    assert first_word(f" {NFD}", ended=True) == Extraction(COMPLETE, "café")
    assert first_word(" cafe", ended=False).status == INCOMPLETE  # an accent may still follow


def test_a_combining_accent_before_the_first_space_rewrites_the_context_word():
    assert first_word("\u0301 au lait", ended=False) == Extraction(EXTENDS)
    assert first_word(", au lait", ended=False) == Extraction(COMPLETE, "au")


def test_provo_responses_in_two_unicode_forms_are_one_word():
    """The human side: responses typed in NFC and in NFD are one response, their counts summed."""
    import pandas as pd

    from varprobe.data.provo import responses_table

    norms = pd.DataFrame({"Text_ID": [1, 1, 1], "Word_Number": [2, 2, 2],
                          "Response": ["café", NFD, "tea"], "Response_Count": [3, 2, 1]})
    table = responses_table(norms)
    assert dict(zip(table["response"], table["count"], strict=True)) == {"café": 5, "tea": 1}


def test_only_whitespace_delimits():
    assert is_delimiter(" ") and is_delimiter("\n") and is_delimiter("\u00a0")
    assert not any(is_delimiter(c) for c in ".,;:!?-'/\")(")


# ---- Extraction.done -------------------------------------------------------------------------


def test_done_is_false_only_while_incomplete():
    assert not Extraction(INCOMPLETE).done
    assert Extraction(COMPLETE, "dog").done
    for reason in FAILURES:
        assert Extraction(reason).done


def test_extraction_defaults_to_no_word():
    assert Extraction(INCOMPLETE).word == ""
    assert Extraction("token_budget") == Extraction("token_budget", "")


LATIN_LETTERS = [chr(c) for c in range(0xA0, 0x180) if chr(c).isalpha()]
"""Every letter of Latin-1 (U+00A0-U+00FF) and Latin Extended-A (U+0100-U+017F)."""


@pytest.mark.parametrize("letter", LATIN_LETTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_latin_letter_inside_a_word_stays_in_the_word(letter):
    """A letter is never removed as punctuation: it stays, as its NFKC form (``ĳ`` is ``ij``,
    ``ſ`` is ``s``, ``ª`` is ``a``; the others are their own)."""
    alone = read_word(letter)
    assert alone
    if unicodedata.normalize("NFKC", letter) == letter:
        assert alone == letter.lower()
    assert read_word(f"a{letter}b") == f"a{alone}b"
    assert normalise_word(f"{letter}x") == f"{alone}x"


# ---- compatibility forms (NFKC) --------------------------------------------------------------

FULL_WIDTH = "\uff4d\uff41\uff54"  # ｍａｔ, FULLWIDTH LATIN SMALL LETTERs


@pytest.mark.parametrize("text, expected", [(FULL_WIDTH, "mat"), ("\uff2d\uff21\uff34", "mat"),
                                            ("\ufb01ne", "fine"), ("x\u00b2", "x2"), ("\u2460", "1"),
                                            ("\u2122", "tm")])
def test_a_compatibility_form_reads_as_its_plain_letters(text, expected):
    """NFKC before the word rule, as the adequacy copy test folds: full-width letters, a
    ligature, a superscript, a circled digit are the letters and digits they stand for."""
    assert normalise_word(text) == read_word(text) == expected
    assert first_word(f" {text} on", ended=False) == Extraction(COMPLETE, expected)
    assert has_word_char(text)


def test_a_full_width_word_is_one_word_on_every_side(tmp_path):
    """The model's draw, an API model's list item, a published sample, a human response of a
    cloze corpus and of Provo's norms: ``ｍａｔ`` beside ``mat`` is one word everywhere."""
    import pandas as pd

    from varprobe.api.word_lists import parse_word_list
    from varprobe.data.cloze import read_corpus
    from varprobe.data.provo import responses_table
    from varprobe.sampling.external import read_external_samples

    assert first_word(f" {FULL_WIDTH} and", ended=False).word == "mat"
    assert [item.extraction.word for item in parse_word_list(f"1. {FULL_WIDTH}\n2. mat", False).items] == \
        ["mat", "mat"]
    contexts = pd.DataFrame({"text_id": [1], "word_number": [2], "context": ["The"], "context_length": [1],
                             "word": ["cat"], "corpus_word": ["cat"]})
    samples_file = tmp_path / "samples.csv"
    samples_file.write_text(f"text_id,word_number,sample\n1,2,{FULL_WIDTH}\n1,2,mat\n", encoding="utf-8")
    samples, _, _ = read_external_samples(samples_file, contexts, {(1, 2)})
    assert list(samples["word"]) == ["mat", "mat"]
    corpus_file = tmp_path / "c.csv"
    corpus_file.write_text(f"item,context,response\nq,The,{FULL_WIDTH}\nq,The,mat\n", encoding="utf-8")
    corpus = read_corpus({"name": "c", "file": str(corpus_file), "language": "en",
                          "columns": {"context_id": "item", "context": "context", "response": "response"}})
    assert corpus["responses"][["response", "count"]].values.tolist() == [["mat", 2]]
    norms = pd.DataFrame({"Text_ID": [1, 1], "Word_Number": [2, 2], "Response": [FULL_WIDTH, "mat"],
                          "Response_Count": [3, 2]})
    assert responses_table(norms)[["response", "count"]].values.tolist() == [["mat", 5]]


def test_the_word_rule_reads_provos_file_as_nfc_did(provo_norms):
    """NFKC leaves Provo's norms as they were read: its responses, words and texts are ASCII
    once the MacRoman apostrophes are repaired, so the default job's numbers do not move."""
    for column in ("Response", "Word", "Text"):
        values = provo_norms[column].unique()
        assert all(unicodedata.normalize("NFKC", v) == unicodedata.normalize("NFC", v) for v in values)
    assert all(v.isascii() for v in provo_norms["Response"].unique())
