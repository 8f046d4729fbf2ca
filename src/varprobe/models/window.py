"""How many token positions a model takes (and how many its sliding-attention layers see,
``sliding_window``), and the check that a job's inputs fit them.

A context or prompt longer than a model's positions is not read as a shorter one by the
network: learned position embeddings run out, rotary ones run past the lengths the model was
trained on, and the draws come out wordless or wrong while the job ends with exit 0. So every
job that feeds a model whole texts (the next-word sampler and enumerator, production
generation) checks them first with ``check_window`` and refuses, naming the first text that
does not fit and the lengths; token calibration and fine-tuning cut their texts to the same
``position_limit``.
"""

from __future__ import annotations

from collections.abc import Iterable

POSITION_KEYS = ("max_position_embeddings", "n_positions", "n_ctx")
"""The config keys that give a model's number of positions (Llama/Qwen/Gemma, GPT-2, GPT-J)."""


def position_limit(config) -> int | None:
    """The number of token positions a model with transformers ``config`` takes: the first of
    ``POSITION_KEYS`` that is an integer above 1, None where none is (relative positions, as in
    T5, have no limit).

    Parameters
    ----------
    config : transformers.PretrainedConfig
        The model's configuration.

    Returns
    -------
    int or None
        The limit in tokens.
    """
    for name in POSITION_KEYS:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 1:
            return value
    return None


def sliding_window(config) -> int | None:
    """The attention window of a model's sliding-window layers; None when every layer attends
    to the whole sequence (``sliding_window`` unset, or no ``"sliding_attention"`` among the
    declared ``layer_types``).

    Parameters
    ----------
    config : transformers.PretrainedConfig
        The model's configuration.

    Returns
    -------
    int or None
        The window in tokens, or None.
    """
    window, types = getattr(config, "sliding_window", None), getattr(config, "layer_types", None)
    return None if window is None or (types is not None and "sliding_attention" not in types) else window


def model_name(model) -> str:
    """A model's hub id or path as loaded (``name_or_path``), else its class name.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model.

    Returns
    -------
    str
    """
    return getattr(model, "name_or_path", "") or type(model).__name__


def check_window(lengths: Iterable[tuple[str, int]], new_tokens: int, *, config, model_name: str,
                 fix: str) -> None:
    """ValueError unless every ``(name, tokens)`` of ``lengths`` fits the model's
    ``position_limit`` with ``new_tokens`` more: tokens + new_tokens <= limit. The message names
    the first text that does not fit, its length, what it needs and the limit, how many do not
    fit, and ``fix`` (what the user can do). No limit: nothing to check.

    Parameters
    ----------
    lengths : iterable of (str, int)
        Each text's name and its length in tokens.
    new_tokens : int
        The tokens generated after it.
    config : transformers.PretrainedConfig
        The model's configuration.
    model_name : str
        The model, named in the message.
    fix : str
        What the user can do, appended to the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        See above.
    """
    limit = position_limit(config)
    if limit is None:
        return
    over = [(name, tokens) for name, tokens in lengths if tokens + new_tokens > limit]
    if over:
        name, tokens = over[0]
        raise ValueError(
            f"{name} encodes to {tokens:,} tokens; with up to {new_tokens} new tokens it needs "
            f"{tokens + new_tokens:,} positions, and model {model_name!r} has {limit:,} "
            f"({len(over)} text(s) too long in all); {fix}")
