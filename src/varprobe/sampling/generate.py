"""N full productions per input from a causal LM (prompt -> continuation) or a seq2seq model
(source -> target), under an explicit decoding.

The prompts are rendered and encoded here and the productions drawn by the generation engine
(``varprobe.sampling.engine``): each prompt encoded once, many inputs per forward pass, and each
sample from its own random stream seeded by ``(seed, input_id, sample index)``, so the
productions do not depend on the batch size, the other inputs or the job order. Only the
decoding's own parameters shape the distribution (a model's generation config is not read,
except for its end-of-sequence token); ``generation_parameters`` returns them, to be stored
beside the samples.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass

import torch

from varprobe.models.window import check_window, model_name
from varprobe.sampling.decoding import Decoding
from varprobe.sampling.engine import Engine, prompt_capacity
from varprobe.sampling.replies import REPLIES, cut_reply

DEFAULT_BATCH_SIZE = 64
"""Rows (samples) in flight; speed and memory only, never the productions."""


@dataclass(frozen=True)
class GenerationSettings:
    """Samples per input, the token budget of each, the seed, whether a prompt is wrapped in
    the tokenizer's chat template (instruction-tuned causal LMs) and with which system turn
    (``system``: None leaves the template's own default), and how a reply is cut (``reply``, one
    of ``REPLIES``)."""

    n_samples: int
    max_new_tokens: int
    seed: int
    chat: bool = False
    _: KW_ONLY
    system: str | None = None
    reply: str = "whole"

    def __post_init__(self) -> None:
        if self.n_samples < 1 or self.max_new_tokens < 1:
            raise ValueError(f"n_samples and max_new_tokens must be >= 1, got {self}")
        if self.reply not in REPLIES:
            raise ValueError(f"reply must be one of {', '.join(REPLIES)}, got {self.reply!r}")


def render_prompt(template: str, source: str) -> str:
    """``template`` with ``{source}`` replaced by the input; KeyError names another placeholder.

    Parameters
    ----------
    template : str
        The prompt template, with one placeholder ``{source}``.
    source : str
        The input text.

    Returns
    -------
    str
        The rendered prompt.

    Raises
    ------
    KeyError
        When ``template`` holds a placeholder other than ``{source}``.
    """
    try:
        return template.format(source=source)
    except KeyError as err:
        raise KeyError(f"prompt template {template!r} has placeholder {err}; only {{source}} exists") from err


def generation_parameters(decoding: Decoding, settings: GenerationSettings) -> dict:
    """What shapes the productions besides the model, prompt and seed, as stored with samples:
    ancestral sampling under the decoding's transforms (one beam, no repetition penalty, no
    n-gram blocking), ``n_samples`` per input, at most ``max_new_tokens`` each.

    Parameters
    ----------
    decoding : Decoding
        The decoding's transforms.
    settings : GenerationSettings
        The number of samples per input and the token budget.

    Returns
    -------
    dict
        The JSON-ready parameters, stored in the samples table's metadata.
    """
    return {
        "do_sample": True, **decoding.parameters(), "num_beams": 1,
        "repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
        "max_new_tokens": settings.max_new_tokens, "n_samples": settings.n_samples,
    }


def encode_prompt(tokenizer, text: str, chat: bool, system: str | None = None) -> torch.Tensor:
    """The token ids (shape 1 x n) a model is given for a rendered prompt: with ``chat``, the
    prompt as the user turn of the tokenizer's chat template followed by the assistant's turn
    opening, after a system turn holding ``system`` where it is given (None: the template's own
    default, which for some models, Qwen2.5's, is a system prompt of its own); without, the
    tokenizer's own encoding (its special tokens included).

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.
    text : str
        The rendered prompt.
    chat : bool
        Whether to wrap the prompt in the tokenizer's chat template.
    system : str, optional
        The system turn's text (with ``chat``).

    Returns
    -------
    torch.Tensor
        int64 token ids, shape ``(1, n)``.

    Raises
    ------
    ValueError
        When ``chat`` is set and the tokenizer has no chat template.
    """
    if chat:
        if not tokenizer.chat_template:
            raise ValueError("production.chat_template is true but the tokenizer has no chat template")
        turns = [] if system is None else [{"role": "system", "content": system}]
        text = tokenizer.apply_chat_template([*turns, {"role": "user", "content": text}],
                                             tokenize=False, add_generation_prompt=True)
        return tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
    return tokenizer(text, return_tensors="pt").input_ids


def shared_prefix(tokenizer, template: str, chat: bool, system: str | None = None) -> list[int]:
    """The token ids that every prompt rendered from ``template`` starts with, whatever its input
    (the chat template's opening and the instruction before ``{source}``): the longest common
    start of the encodings of two renderings with different inputs. It depends on the template
    and the tokenizer alone, so every job of a dataset shares it; the engine encodes it once per
    job (a prompt whose tokens start otherwise is encoded whole).

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.
    template : str
        The prompt template, with the placeholder ``{source}``.
    chat : bool
        Whether prompts are wrapped in the chat template (``encode_prompt``).
    system : str, optional
        The chat template's system turn (``encode_prompt``).

    Returns
    -------
    list of int
        The shared token ids (possibly empty).
    """
    first, second = (encode_prompt(tokenizer, render_prompt(template, source), chat, system)[0].tolist()
                     for source in ("A", "B"))
    common = next((i for i, (x, y) in enumerate(zip(first, second)) if x != y), min(len(first), len(second)))
    return first[:common]


def end_and_pad(model, tokenizer) -> tuple[list[int], int]:
    """The token ids that end a production (the model's generation config, else the
    tokenizer's end of sequence) and the id that pads a pass (the tokenizer's, else the first
    end id).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model, whose generation config may name end ids.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer.

    Returns
    -------
    end_ids : list of int
        The token ids that end a production.
    pad_id : int
        The token id that pads a pass.
    """
    eos = model.generation_config.eos_token_id
    if eos is None:
        eos = tokenizer.eos_token_id
    eos = [eos] if isinstance(eos, int) else list(eos)
    return eos, tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]


def generate(loaded, work: Sequence[tuple[str, str]], decoding: Decoding, settings: GenerationSettings, *,
             batch_size: int = DEFAULT_BATCH_SIZE, skip: Collection[str] = (),
             template: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """For each ``(input_id, prompt)`` whose id is not in ``skip``, in the order the inputs
    finish: ``(input_id, its n_samples decoded productions)`` (special tokens removed, cut by
    ``cut_reply``), drawn by the generation engine (``varprobe.sampling.engine``) with
    ``batch_size`` rows in flight. For a causal LM the production is the continuation only.
    A prompt that does not fit the model's positions with ``max_new_tokens`` more (a causal LM;
    a seq2seq model's source alone) is refused before any draw (``check_window``).
    The skipped inputs (those a resumed job finished before) still size the cache, so every
    production is the one a whole run of ``work`` gives. ``template``: the prompt template the
    prompts were rendered from; a causal LM then encodes its ``shared_prefix`` once for the job.

    Parameters
    ----------
    loaded : LoadedModel
        The model and its tokenizer (``varprobe.models.loading``).
    work : sequence of (str, str)
        ``(input_id, rendered prompt)`` pairs.
    decoding : Decoding
        The decoding's transforms of the next-token distribution.
    settings : GenerationSettings
        ``n_samples`` per input and ``max_new_tokens`` per production.
    batch_size : int, optional
        Rows (productions) in flight at once.
    skip : collection of str, optional
        Input ids already finished; none of their productions is yielded.
    template : str, optional
        The prompt template of the prompts.

    Yields
    ------
    (str, list of str)
        An input id and its ``n_samples`` productions.

    Raises
    ------
    ValueError
        When a prompt does not fit the model's positions (``check_window``).
    """
    tokenizer, model = loaded.tokenizer, loaded.model
    eos, pad = end_and_pad(model, tokenizer)
    chat = settings.chat and not loaded.is_seq2seq
    encoded = [(input_id, encode_prompt(tokenizer, prompt, chat, settings.system)[0].tolist())
               for input_id, prompt in work]
    check_window(((f"the prompt of input {input_id!r}", len(ids)) for input_id, ids in encoded),
                 0 if loaded.is_seq2seq else settings.max_new_tokens, config=model.config,
                 model_name=model_name(model),
                 fix="a prompt is never cut: shorten the input's source or the prompt template, lower "
                     "max_new_tokens, or run a model with more positions")
    prefix = shared_prefix(tokenizer, template, chat, settings.system) if template and not loaded.is_seq2seq else ()
    engine = Engine(model, decoding, eos=eos, pad=pad, n_samples=settings.n_samples,
                    max_new_tokens=settings.max_new_tokens, seed=settings.seed, batch_size=batch_size,
                    prefix=prefix)
    todo = [(input_id, ids) for input_id, ids in encoded if input_id not in skip]
    if not todo:
        return
    for input_id, samples in engine.run(todo, capacity=prompt_capacity(ids for _, ids in encoded)):
        yield input_id, [cut_reply(t, settings.reply)
                         for t in tokenizer.batch_decode(samples, skip_special_tokens=True)]
