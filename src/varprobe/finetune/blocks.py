"""Which parameters of a model train: the normalisation layers of its last transformer blocks and
the stack's final one (the authors' script: GPT-2's ``ln_1``/``ln_2`` of blocks 10-11 and ``ln_f``;
SmolLM2/Llama's ``input_layernorm``/``post_attention_layernorm`` and ``model.norm``, RMSNorm), or
every parameter of those blocks.

The block list is found by structure, not by model name: the one ``ModuleList`` among the
children of the decoder stack, where the stack is the base model of a causal LM (GPT-2
``transformer`` -> ``h``; Llama, SmolLM2, Gemma ``model`` -> ``layers``) and the decoder of an
encoder-decoder (T5 ``decoder`` -> ``block``; Marian ``model.decoder`` -> ``layers``): for a
seq2seq model the last blocks are the decoder's, next to the output, as in a causal LM.
"""

from __future__ import annotations

import torch


def decoder_stack(model: torch.nn.Module) -> torch.nn.Module:
    """The module that holds the model's (decoder) block list and final normalisation.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model.

    Returns
    -------
    torch.nn.Module
        The base model, or its decoder for an encoder-decoder.

    Raises
    ------
    ValueError
        When an encoder-decoder has no decoder module.
    """
    base = model.base_model
    if getattr(model.config, "is_encoder_decoder", False):
        if not hasattr(base, "decoder"):
            raise ValueError(f"encoder-decoder {type(model).__name__} has no decoder module")
        return base.decoder
    return base


def transformer_blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The model's transformer blocks, first to last (the decoder's for an encoder-decoder).

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model.

    Returns
    -------
    torch.nn.ModuleList

    Raises
    ------
    ValueError
        When the stack holds no block list or more than one.
    """
    stack = decoder_stack(model)
    lists = [m for m in stack.children() if isinstance(m, torch.nn.ModuleList)]
    if len(lists) != 1:
        raise ValueError(
            f"{type(model).__name__}: expected one block list (ModuleList) in "
            f"{type(stack).__name__}, found {len(lists)}"
        )
    return lists[0]


def _is_norm(module: torch.nn.Module) -> bool:
    return "norm" in type(module).__name__.lower()


def freeze_all_but_last(model: torch.nn.Module, n_blocks: int, parts: str = "blocks") -> list[str]:
    """Freeze every parameter except those of the last ``n_blocks`` transformer blocks and
    return the names of the trainable ones, in the model's order.

    ``parts`` ``"blocks"``: every parameter of those blocks; ``"norms"``: only their
    normalisation layers (LayerNorm, RMSNorm, T5LayerNorm) and the stack's final one.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model; its parameters' ``requires_grad`` are set in place.
    n_blocks : int
        The blocks trained, 1 to the model's number of blocks.
    parts : str, optional
        ``"blocks"`` or ``"norms"``.

    Returns
    -------
    list of str
        The names of the trainable parameters.

    Raises
    ------
    ValueError
        When ``n_blocks`` is out of range or ``parts`` is neither value.
    """
    blocks = transformer_blocks(model)
    if not 1 <= n_blocks <= len(blocks):
        raise ValueError(
            f"trainable_blocks = {n_blocks}, but {type(model).__name__} has {len(blocks)} blocks"
        )
    chosen = list(blocks)[-n_blocks:]
    if parts == "norms":
        chosen = [m for block in chosen for m in block.modules() if _is_norm(m)]
        chosen += [m for m in decoder_stack(model).children() if _is_norm(m)]
    elif parts != "blocks":
        raise ValueError(f"trainable parts {parts!r} is neither 'blocks' nor 'norms'")
    trainable = {id(p) for module in chosen for p in module.parameters()}
    for parameter in model.parameters():
        parameter.requires_grad_(id(parameter) in trainable)
    return [name for name, p in model.named_parameters() if id(p) in trainable]
