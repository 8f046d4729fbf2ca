"""N full productions per input from a causal LM (prompt -> continuation) or a seq2seq model
(source -> target), under an explicit decoding.

Every generation parameter is passed to ``generate`` explicitly (sampling, temperature, top-k,
top-p, typical-p, one beam, no repetition penalty, no n-gram blocking, the token budget), so a
model's own generation config cannot change the decoding; ``generation_parameters`` returns what
was passed, to be stored beside the samples. The draws for an input come from a torch generator
state seeded by ``(seed, input_id)``, so they do not depend on job order or on the other inputs.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch

from varprobe.sampling.decoding import Decoding


@dataclass(frozen=True)
class GenerationSettings:
    """Samples per input, the token budget of each, the seed, and whether a prompt is wrapped in
    the tokenizer's chat template (instruction-tuned causal LMs)."""

    n_samples: int
    max_new_tokens: int
    seed: int
    chat: bool = False

    def __post_init__(self) -> None:
        if self.n_samples < 1 or self.max_new_tokens < 1:
            raise ValueError(f"n_samples and max_new_tokens must be >= 1, got {self}")


def render_prompt(template: str, source: str) -> str:
    """``template`` with ``{source}`` replaced by the input; KeyError names another placeholder."""
    try:
        return template.format(source=source)
    except KeyError as err:
        raise KeyError(f"prompt template {template!r} has placeholder {err}; only {{source}} exists") from err


def generation_parameters(decoding: Decoding, settings: GenerationSettings) -> dict:
    """The keyword arguments given to ``generate`` (besides token ids), as stored with samples."""
    return {
        "do_sample": True, **decoding.parameters(), "num_beams": 1,
        "repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
        "max_new_tokens": settings.max_new_tokens, "num_return_sequences": settings.n_samples,
    }


def encode_prompt(tokenizer, text: str, chat: bool) -> torch.Tensor:
    """The token ids (shape 1 x n) a model is given for a rendered prompt: with ``chat``, the
    prompt as the user turn of the tokenizer's chat template followed by the assistant's turn
    opening; without, the tokenizer's own encoding (its special tokens included)."""
    if chat:
        if not tokenizer.chat_template:
            raise ValueError("production.chat_template is true but the tokenizer has no chat template")
        text = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                             add_generation_prompt=True)
        return tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
    return tokenizer(text, return_tensors="pt").input_ids


def input_seed(seed: int, input_id: str) -> int:
    """The torch seed of one input's draws."""
    return zlib.crc32(f"{seed}:{input_id}".encode())


def generate(loaded, work: Iterable[tuple[str, str]], decoding: Decoding,
             settings: GenerationSettings) -> Iterator[list[str]]:
    """For each ``(input_id, prompt)``: ``n_samples`` decoded productions (special tokens and
    outer whitespace removed). For a causal LM the production is the continuation only."""
    tokenizer, model = loaded.tokenizer, loaded.model
    eos = model.generation_config.eos_token_id
    if eos is None:
        eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    if isinstance(pad, list):
        pad = pad[0]
    parameters = generation_parameters(decoding, settings)
    for input_id, prompt in work:
        ids = encode_prompt(tokenizer, prompt, settings.chat and not loaded.is_seq2seq).to(loaded.device)
        generator_state = torch.random.fork_rng(devices=[loaded.device] if loaded.device.type == "cuda" else [])
        with generator_state, torch.no_grad():
            torch.manual_seed(input_seed(settings.seed, input_id))
            output = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                    pad_token_id=pad, eos_token_id=eos, **parameters)
        new = output if loaded.is_seq2seq else output[:, ids.shape[1]:]
        yield [t.strip() for t in tokenizer.batch_decode(new, skip_special_tokens=True)]
