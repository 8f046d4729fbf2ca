"""Semantic TVD (Ilia & Aziz 2024, Sec. 5, App. G): its rules are the word-class pattern shared
with the other level, defined once in word_classes.smk for each configured level."""


include: "word_classes.smk"
