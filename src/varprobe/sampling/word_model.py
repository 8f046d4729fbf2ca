"""A causal LM as the complete-word samplers read it (``WordModel``): its network and tokenizer,
the one encoding of a context, the text of generated token ids (``Vocabulary``), its output size
and the tokens that close an open word run (``delimiter_tokens``), built once per job and shared
by the sampler (``complete_word``), the enumerator (``enumeration``) and the scorer
(``scoring``)."""

from __future__ import annotations

from functools import cached_property
from collections.abc import Iterable, Sequence

import numpy as np

from varprobe.models.window import check_window, model_name, sliding_window
from varprobe.words import INCOMPLETE, Extraction, first_word, is_delimiter


WINDOW_FIX = ("a context is never cut (the humans read it whole): shorten its passage, or leave the "
              "passage out (provo.texts), or run a model with more positions")
"""What the refusal of a context longer than the model's positions tells the user."""


def special_ids(tokenizer) -> set[int]:
    """The ids of every special (control) token: the tokenizer's ``all_special_ids``, its added
    tokens marked ``special`` (SmolLM2's ``<|im_start|>``, ``<|endoftext|>``, ...) and its
    end-of-sequence id(s).

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.

    Returns
    -------
    set of int
        Those token ids.
    """
    eos = tokenizer.eos_token_id
    added = getattr(tokenizer, "added_tokens_decoder", {})
    return ({eos} if isinstance(eos, int) else set(eos or ())) | set(tokenizer.all_special_ids) | {
        i for i, token in added.items() if getattr(token, "special", False)
    }


class Vocabulary:
    """Decoding of generated token ids into the text that follows the context.

    Every special token (``special_ids``) ends the text: it is no text itself, and the draw's
    word is read as of the end of text (``first_word`` with ``ended``). Continuations are
    decoded behind a fixed reference token and the reference's text is cut off, so tokenizers
    that drop a leading space when decoding a lone word piece (SentencePiece) still show the
    word boundary.
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.reference = tokenizer.encode("a", add_special_tokens=False)[-1:]
        self.prefix = tokenizer.decode(self.reference)
        self.special = special_ids(tokenizer)

    def text(self, ids: Sequence[int]) -> str:
        """The continuation text of generated ``ids`` (special tokens excluded).

        Parameters
        ----------
        ids : sequence of int
            The generated token ids.

        Returns
        -------
        str
            Their text after the context.
        """
        body = [i for i in ids if i not in self.special]
        return self.tokenizer.decode(self.reference + body)[len(self.prefix) :]

    def read(self, ids: Sequence[int]) -> Extraction:
        """The first-word status of a continuation after generated ``ids``; a special token
        ends it.

        Parameters
        ----------
        ids : sequence of int
            The generated token ids.

        Returns
        -------
        Extraction
            The first word when complete, else its status (``INCOMPLETE`` or a failure).
        """
        ended = bool(ids) and ids[-1] in self.special
        text = self.text(ids)
        if text.endswith("\ufffd") and not ended:
            return Extraction(INCOMPLETE)  # a multi-byte character still being spelled
        return first_word(text, ended)


def delimiter_tokens(vocabulary: Vocabulary, size: int) -> np.ndarray:
    """Per token id below ``size`` (the model's output size): whether the token is *regular*
    (see the module docstring) and its text starts with a delimiter, so that it closes an open
    word run. Tokenizers that clean up spaces have no regular tokens (all False).

    Parameters
    ----------
    vocabulary : Vocabulary
        The tokenizer's token texts.
    size : int
        The model's output size V (may exceed the tokenizer's vocabulary).

    Returns
    -------
    numpy.ndarray
        Boolean, shape ``(size,)``: True for a regular token that starts with a delimiter.
    """
    tokenizer = vocabulary.tokenizer
    mask = np.zeros(size, dtype=bool)
    if getattr(tokenizer, "clean_up_tokenization_spaces", False):
        return mask
    special = set(getattr(tokenizer, "added_tokens_decoder", {})) | vocabulary.special
    ids = [t for t in range(min(size, len(tokenizer))) if t not in special]
    texts = tokenizer.batch_decode([vocabulary.reference + [t] for t in ids])
    for t, text in zip(ids, texts, strict=True):
        piece = text[len(vocabulary.prefix) :]
        mask[t] = bool(piece) and "\ufffd" not in piece and is_delimiter(piece[0])
    return mask


class WordModel:
    """A causal LM and its tokenizer as the complete-word samplers read them.

    ``encode`` is the one encoding of a context (the tokenizer's default special tokens), so
    that the sampler, the enumerator and the scorer condition on the same ids; ``vocabulary``
    reads generated ids (``Vocabulary``); ``size`` is the output size V (it may exceed the
    tokenizer's vocabulary); ``closes_open_word`` (B) and ``window``
    (``varprobe.models.window.sliding_window``) are computed on first use; ``check_fits`` refuses
    a context longer than its positions.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The causal LM, on its device.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer.
    """

    def __init__(self, model, tokenizer) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.vocabulary = Vocabulary(tokenizer)
        self.device = next(model.parameters()).device
        self.size = model.get_output_embeddings().weight.shape[0]

    def encode(self, context: str) -> list[int]:
        """Token ids of a context, with the tokenizer's default special tokens.

        Parameters
        ----------
        context : str
            The context text.

        Returns
        -------
        list of int
            Its token ids.
        """
        return list(self.tokenizer(context)["input_ids"])

    def check_fits(self, lengths: Iterable[tuple[str, int]], new_tokens: int) -> None:
        """``varprobe.models.window.check_window`` for this model, with ``WINDOW_FIX``: each
        named context's tokens and ``new_tokens`` more within its positions.

        Parameters
        ----------
        lengths : iterable of (str, int)
            Each context's name and token count.
        new_tokens : int
            The tokens a job adds after a context.

        Returns
        -------
        None
            Every context fits.

        Raises
        ------
        ValueError
            Naming the first context that does not fit, the lengths and the fix.
        """
        check_window(lengths, new_tokens, config=self.model.config, model_name=model_name(self.model),
                     fix=WINDOW_FIX)

    @cached_property
    def closes_open_word(self) -> np.ndarray:
        """B: per token id below ``size``, whether it closes an open word run (``delimiter_tokens``)."""
        return delimiter_tokens(self.vocabulary, self.size)

    @cached_property
    def window(self) -> int | None:
        """The model's sliding attention window (``sliding_window``), or None."""
        return sliding_window(self.model.config)
