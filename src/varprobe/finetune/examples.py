"""Training examples as token ids and labels (-100: no loss at that position).

Two kinds:

* plain texts for a causal LM (Provo passages): the text encoded as the complete-word sampler
  encodes a context (``tokenizer(text)``), so the model trains on the token sequences it is later
  conditioned on; every token after the first is a target.
* prompt -> target pairs (a production dataset's source and one of its references). A causal LM
  sees the rendered prompt encoded as ``production-sample`` encodes it
  (``varprobe.sampling.generate.encode_prompt``, with or without the chat template) followed by
  the target's tokens and the token that ends a production; only those target tokens carry loss.
  A seq2seq model reads the rendered prompt and predicts the target (``text_target``) encoded by
  its tokenizer.

An example longer than ``max_length`` tokens is cut on the right; one left without targets is an
error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from varprobe.models.window import position_limit
from varprobe.sampling.generate import encode_prompt

IGNORE = -100
"""The label of a position without loss (``torch.nn.functional.cross_entropy``'s ignore index)."""


@dataclass(frozen=True)
class Example:
    """Token ids a model reads and its labels. For a causal LM the labels align with
    ``input_ids`` (position t's label is predicted from positions < t); for a seq2seq model they
    are the decoder's targets."""

    input_ids: tuple[int, ...]
    labels: tuple[int, ...]


def text_examples(tokenizer, texts: Sequence[str], max_length: int) -> list[Example]:
    """One causal-LM example per text, every token but the first a target.

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.
    texts : sequence of str
        The texts.
    max_length : int
        The most tokens of an example (longer texts are cut).

    Returns
    -------
    list of Example

    Raises
    ------
    ValueError
        When a text encodes to fewer than two tokens (no target).
    """
    examples = []
    for i, text in enumerate(texts):
        ids = tuple(tokenizer(text)["input_ids"][:max_length])
        if len(ids) < 2:
            raise ValueError(f"text {i} ({text[:40]!r}) encodes to {len(ids)} token(s); a "
                             "training text needs at least 2")
        examples.append(Example(ids, ids))
    return examples


def length_limit(model, max_length: int) -> int:
    """``max_length``, or the model's number of positions where that is smaller
    (``varprobe.models.window.position_limit``; none for relative positions as in T5).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model.
    max_length : int
        The configured ``max_length``, in tokens.

    Returns
    -------
    int
        The limit in tokens.
    """
    positions = position_limit(model.config)
    return min(max_length, positions) if positions else max_length


def end_token(model, tokenizer) -> int:
    """The token that ends a production: the model's generation-config eos (the first of a list),
    else the tokenizer's, as ``generate`` stops on.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer.

    Returns
    -------
    int
        The token id.

    Raises
    ------
    ValueError
        When neither the generation config nor the tokenizer has an end token.
    """
    eos = model.generation_config.eos_token_id
    if eos is None:
        eos = tokenizer.eos_token_id
    if isinstance(eos, list):
        eos = eos[0]
    if eos is None:
        raise ValueError(f"{type(model).__name__}: neither its generation config nor its "
                         "tokenizer names an end-of-sequence token")
    return int(eos)


def pair_examples(tokenizer, pairs: Sequence[tuple[str, str, str]], *, seq2seq: bool, chat: bool,
                  end: int, max_length: int) -> list[Example]:
    """One example per ``(name, rendered prompt, target)``; ``end`` is the token that closes a
    causal LM's target (``end_token``). ``chat`` applies to causal LMs only. ``name`` identifies
    the pair in errors.

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.
    pairs : sequence of (str, str, str)
        ``(name, rendered prompt, target)`` per example.
    seq2seq : bool
        Whether the model is an encoder-decoder (prompt to the encoder, target to the decoder).
    chat : bool
        Whether a causal LM's prompt is wrapped in the chat template.
    end : int
        The token id appended to a causal LM's target.
    max_length : int
        The most tokens of an example.

    Returns
    -------
    list of Example
        One per pair, in order.

    Raises
    ------
    ValueError
        When a pair keeps no target token within ``max_length``; the message names it.
    """
    examples = []
    for name, prompt, target in pairs:
        if seq2seq:
            ids = tokenizer(prompt)["input_ids"][:max_length]
            labels = tokenizer(text_target=target)["input_ids"][:max_length]
        else:
            prompt_ids = encode_prompt(tokenizer, prompt, chat)[0].tolist()
            target_ids = tokenizer(target, add_special_tokens=False)["input_ids"] + [end]
            ids = (prompt_ids + target_ids)[:max_length]
            labels = ([IGNORE] * len(prompt_ids) + target_ids)[:max_length]
        if all(label == IGNORE for label in labels):
            raise ValueError(f"training pair {name!r}: no target token within max_length = "
                             f"{max_length} tokens (prompt {len(ids)} tokens)")
        examples.append(Example(tuple(ids), tuple(labels)))
    return examples


def n_targets(example: Example, seq2seq: bool) -> int:
    """The number of tokens that carry loss in ``example``.

    Parameters
    ----------
    example : Example
        The example.
    seq2seq : bool
        Whether it is a seq2seq example (every label a target) or a causal LM's (labels of -100
        carry none, nor does the first position).

    Returns
    -------
    int
    """
    labels = example.labels if seq2seq else example.labels[1:]
    return sum(label != IGNORE for label in labels)


def collate(examples: Sequence[Example], pad_id: int) -> dict[str, torch.Tensor]:
    """A right-padded batch: ``input_ids`` (padded with ``pad_id``), ``attention_mask`` and
    ``labels`` (padded with -100, so padding never carries loss).

    Parameters
    ----------
    examples : sequence of Example
        The batch's examples.
    pad_id : int
        The token id that pads the inputs.

    Returns
    -------
    dict of str to torch.Tensor
        int64 tensors of shape ``(batch, longest)``.
    """
    width = max(len(e.input_ids) for e in examples)
    label_width = max(len(e.labels) for e in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), label_width), IGNORE, dtype=torch.long)
    for row, example in enumerate(examples):
        input_ids[row, : len(example.input_ids)] = torch.tensor(example.input_ids)
        mask[row, : len(example.input_ids)] = 1
        labels[row, : len(example.labels)] = torch.tensor(example.labels)
    return {"input_ids": input_ids, "attention_mask": mask, "labels": labels}
