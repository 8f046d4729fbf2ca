"""Responses cut to the generation budget before any probe (Giulianelli et al. 2023, reference
code: ``scorer.py`` run with ``--max_response_length 100``).

Model productions stop after ``max_new_tokens`` sub-word tokens, but a human reference can be a
700-word story: probed whole, H and C would measure length as much as variability. So every
text, reference and sample alike, is cut to its first ``max_tokens`` sub-word tokens.

Which tokenizer counts: one per output language, never the generating model's. With the model's
tokenizer a dataset's references would be cut differently for each model, so H (and the human
control) would no longer be one baseline shared by every system of the dataset. The default is
the tokenizer of the language's sentence encoder, which is what the reference code does (its
``Scorer`` truncates with the ``all-distilroberta-v1`` tokenizer for English and the
``distiluse-base-multilingual-cased-v1`` one for German). A sample the model already stopped
within its budget is cut again only where the probe tokenizer needs more tokens for it.

The cut keeps the text itself: the prefix ending where the ``max_tokens``-th token ends (the
tokenizer's character offsets), rather than the decoded tokens, which for an uncased WordPiece
tokenizer would lowercase the text and space out its punctuation.
"""

from __future__ import annotations

from collections.abc import Sequence

from varprobe.probes.semantic import encoder_location


def load_tokenizer(spec: str | dict):
    """The fast tokenizer of a hub id, a directory or ``{package: NAME}`` (a sentence encoder's
    folder holds its tokenizer).

    Parameters
    ----------
    spec : str or dict
        A hub id, a directory, or ``{"package": NAME}``.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        The tokenizer.

    Raises
    ------
    OSError
        Naming ``spec`` when it cannot be loaded or is not a fast tokenizer (only those report
        character offsets).
    """
    from transformers import AutoTokenizer

    location = encoder_location(spec)
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)  # never asks
    except (OSError, ValueError) as err:
        raise OSError(f"truncation tokenizer {location!r} could not be loaded ({err})") from err
    if not tokenizer.is_fast:
        raise OSError(f"truncation tokenizer {location!r} is not a fast tokenizer: it cannot "
                      "report where a token ends in the text")
    return tokenizer


def truncate(texts: Sequence[str], tokenizer, max_tokens: int) -> list[str]:
    """Each text cut after its first ``max_tokens`` sub-word tokens (no special tokens added);
    a text with no more tokens is returned unchanged.

    Parameters
    ----------
    texts : sequence of str
        The texts to cut.
    tokenizer : transformers.PreTrainedTokenizerFast
        The tokenizer whose tokens are counted (``load_tokenizer``).
    max_tokens : int
        The most tokens a text keeps.

    Returns
    -------
    list of str
        Each text up to the end of its ``max_tokens``-th token, in order.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if not texts:
        return []
    offsets = tokenizer(list(texts), add_special_tokens=False,
                        return_offsets_mapping=True)["offset_mapping"]
    return [text if len(spans) <= max_tokens else text[:spans[max_tokens - 1][1]]
            for text, spans in zip(texts, offsets, strict=True)]
