"""The training loop: cross-entropy on the examples' targets, AdamW on the trainable parameters
only (by default the normalisation layers of the last two blocks and the final one, as the
authors' script; ``FinetuneSettings.trainable_parts``), with the training and validation loss of
every epoch, ending with the weights of the epoch of lowest validation loss
(``FinetuneSettings.keep_epoch``).

A run depends on its settings, its examples and its seed only: the examples' order in epoch e is
the e-th permutation drawn by ``numpy.random.default_rng(seed)``, and dropout draws from the torch
generator seeded with ``seed`` inside a forked RNG state (the caller's torch RNG is untouched).
The model trains in train mode (dropout on) and is left in eval mode, holding the kept epoch's
weights: under ``keep_epoch = "best"`` a copy of the trainable parameters is taken after each
epoch whose validation loss is below every earlier epoch's (epochs >= 1; epoch 0, the untrained
model, is not a candidate: a fine-tuned model has trained) and put back at the end, so the
model's validation loss is exactly the one recorded for that epoch.

Losses are mean cross-entropies per target token (nats): an epoch's training loss weights each
batch by its target tokens (the running loss while the weights change, as in the authors'
script); the validation loss is taken in eval mode over all validation targets before training
(epoch 0) and after every epoch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from varprobe.finetune.blocks import freeze_all_but_last
from varprobe.finetune.examples import IGNORE, Example, collate
from varprobe.finetune.settings import FinetuneSettings


@dataclass(frozen=True)
class EpochLoss:
    """The loss of one split after (validation) or during (train) one epoch; epoch 0 is before
    training. ``tokens``: target tokens the mean is over; ``examples``: examples in the split."""

    epoch: int
    split: str
    _: KW_ONLY
    loss: float
    tokens: int
    examples: int


@dataclass(frozen=True)
class Training:
    """A finished run: the names of the parameters it trained, its losses in order, and the epoch
    whose weights the model holds (``kept_epoch``, 1 to the number of epochs)."""

    trainable: list[str]
    losses: list[EpochLoss]
    kept_epoch: int


def learning_rate_factor(step: int, warmup: int, total: int, schedule: str) -> float:
    """The factor on the learning rate for optimiser step ``step`` (0-based) of ``total``:
    ``step / warmup`` during warm-up, then 1 (``"constant"``) or ``(total - step) / (total -
    warmup)`` (``"linear"``, reaching 0 at ``total``); as transformers'
    ``get_{constant,linear}_schedule_with_warmup``, so step 0 has factor 0 when ``warmup`` > 0.

    Parameters
    ----------
    step : int
        The optimiser step, 0-based.
    warmup : int
        The warm-up steps.
    total : int
        The steps of the run.
    schedule : str
        ``"constant"`` or ``"linear"``.

    Returns
    -------
    float
        In [0, 1].
    """
    if step < warmup:
        return step / warmup
    if schedule == "constant":
        return 1.0
    return max(0.0, (total - step) / max(1, total - warmup))


def train(model: torch.nn.Module, train_examples: Sequence[Example],
          validation_examples: Sequence[Example], settings: FinetuneSettings, *, pad_id: int,
          on_loss: Callable[[EpochLoss], None] | None = None) -> Training:
    """Fine-tune ``model`` in place: freeze all but the ``settings.trainable_parts`` of its last
    ``settings.trainable_blocks`` blocks, then ``settings.epochs`` epochs of AdamW steps on
    batches of ``settings.batch_size`` shuffled training examples, and end with the weights of
    the ``settings.keep_epoch`` epoch (the best by validation loss, or the last). ``pad_id``
    fills the inputs' padding (masked, never a target); ``on_loss`` is called with each loss as
    soon as it is known (progress logs).

    Parameters
    ----------
    model : torch.nn.Module
        The model; trained in place.
    train_examples : sequence of Example
        The training examples.
    validation_examples : sequence of Example
        The validation examples (loss only).
    settings : FinetuneSettings
        The run's settings.
    pad_id : int
        The token id that pads the inputs.
    on_loss : callable, optional
        Called with each ``EpochLoss``.

    Returns
    -------
    Training
        The trained parameters' names, the losses and the kept epoch.

    Raises
    ------
    ValueError
        When there is no training example.
    """
    if not train_examples:
        raise ValueError("fine-tuning needs at least one training example")
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    trainable = freeze_all_but_last(model, settings.trainable_blocks, settings.trainable_parts)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate,
        betas=(0.9, 0.999), eps=settings.adam_epsilon, weight_decay=settings.weight_decay,
    )
    total_steps = settings.epochs * math.ceil(len(train_examples) / settings.batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, partial(
        learning_rate_factor, warmup=settings.warmup_steps, total=total_steps,
        schedule=settings.lr_schedule))
    order_rng = np.random.default_rng(settings.seed)
    device = next(model.parameters()).device
    losses = []
    keep_best = settings.keep_epoch == "best" and bool(validation_examples)
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    best: dict = {"epoch": settings.epochs, "loss": math.inf, "weights": None}

    def record(loss: EpochLoss) -> None:
        losses.append(loss)
        if on_loss is not None:
            on_loss(loss)
        if keep_best and loss.split == "validation" and loss.epoch >= 1 and loss.loss < best["loss"]:
            best.update(epoch=loss.epoch, loss=loss.loss,
                        weights=None if loss.epoch == settings.epochs else
                        [p.detach().clone() for _, p in named])

    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(settings.seed)
        if validation_examples:
            record(_evaluate(model, validation_examples, 0, settings.batch_size, pad_id, seq2seq))
        for epoch in range(1, settings.epochs + 1):
            order = order_rng.permutation(len(train_examples))
            model.train()
            loss_sum, tokens = 0.0, 0
            for start in range(0, len(order), settings.batch_size):
                batch = [train_examples[i] for i in order[start : start + settings.batch_size]]
                batch_sum, batch_tokens = _loss_sum(model, collate(batch, pad_id), seq2seq)
                optimizer.zero_grad(set_to_none=True)
                (batch_sum / batch_tokens).backward()
                optimizer.step()
                scheduler.step()
                loss_sum += batch_sum.item()
                tokens += batch_tokens
            record(EpochLoss(epoch, "train", loss=loss_sum / tokens, tokens=tokens, examples=len(train_examples)))
            if validation_examples:
                record(_evaluate(model, validation_examples, epoch, settings.batch_size, pad_id,
                                 seq2seq))
    if best["weights"] is not None and best["epoch"] != settings.epochs:
        with torch.no_grad():
            for (_, parameter), kept in zip(named, best["weights"], strict=True):
                parameter.copy_(kept)
    model.eval()
    return Training(trainable, losses, best["epoch"])


def _loss_sum(model: torch.nn.Module, batch: dict[str, torch.Tensor],
              seq2seq: bool) -> tuple[torch.Tensor, int]:
    """The summed cross-entropy of a batch's targets and their number."""
    device = next(model.parameters()).device
    batch = {k: v.to(device) for k, v in batch.items()}
    labels = batch["labels"]
    if seq2seq:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       decoder_input_ids=model.prepare_decoder_input_ids_from_labels(labels=labels),
                       use_cache=False).logits
    else:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       use_cache=False).logits[:, :-1]
        labels = labels[:, 1:]
    loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=IGNORE, reduction="sum")
    return loss, int((labels != IGNORE).sum())


def _evaluate(model: torch.nn.Module, examples: Sequence[Example], epoch: int, batch_size: int,
              pad_id: int, seq2seq: bool) -> EpochLoss:
    model.eval()
    loss_sum, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            batch_sum, batch_tokens = _loss_sum(
                model, collate(examples[start : start + batch_size], pad_id), seq2seq)
            loss_sum += batch_sum.item()
            tokens += batch_tokens
    return EpochLoss(epoch, "validation", loss=loss_sum / tokens, tokens=tokens, examples=len(examples))
