"""The settings of a fine-tuning run, with the paper's protocol as defaults (Ilia & Aziz 2024,
App. F) and, where the paper is silent or its text and code differ, the authors' released script
(``TVD/GPT2_FT/fine_tuning/fine_tuning.py`` of github.com/evgeniael/predict_next_word): only the
normalisation layers of the last two blocks and the final one train, 10 warm-up steps, then a
linear decay to 0, no weight decay. One departure from both: the run keeps the epoch of lowest
validation loss (``keep_epoch``), where the script saves the last."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

SCHEDULES = ("linear", "constant")
PARTS = ("norms", "blocks")
KEEP = ("best", "last")


@dataclass(frozen=True, kw_only=True)
class FinetuneSettings:
    """One fine-tuning run.

    * ``epochs``, ``batch_size`` (examples per optimiser step), ``seed`` (shuffling and dropout).
    * AdamW: ``learning_rate``, ``adam_epsilon``, ``weight_decay``; betas (0.9, 0.999).
    * ``warmup_steps``: the learning rate rises linearly from 0 over this many optimiser steps;
      then ``lr_schedule`` ``"linear"`` decays it linearly to 0 at the last step, ``"constant"``
      keeps it (the schedules of ``transformers.get_{linear,constant}_schedule_with_warmup``).
    * ``trainable_blocks``: how many of the last transformer blocks train; ``trainable_parts``
      ``"norms"`` (the default) trains only their normalisation layers and the stack's final one,
      as the authors' released script does (``TVD/GPT2_FT/fine_tuning/fine_tuning.py``, lines
      241-249: GPT-2's ``h[10].ln_1``, ``ln_2``, ``h[11].ln_1``, ``ln_2`` and ``ln_f``);
      ``"blocks"`` trains every parameter of those blocks, as the paper's text reads (App. F:
      "we freeze all parameters except those of the last two layers").
    * ``keep_epoch``: which epoch's weights the run ends with (and its checkpoint holds):
      ``"best"`` (the default) the epoch >= 1 with the lowest validation loss, the earliest on a
      tie, or the last epoch when there is no validation example; ``"last"`` the last epoch, as
      the authors' script saves.
    * ``max_length``: tokens per example; longer examples are cut on the right.
    """

    epochs: int = 10
    learning_rate: float = 5e-4
    adam_epsilon: float = 1e-8
    weight_decay: float = 0.0
    batch_size: int = 5
    warmup_steps: int = 10
    lr_schedule: str = "linear"
    trainable_blocks: int = 2
    trainable_parts: str = "norms"
    keep_epoch: str = "best"
    max_length: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "trainable_blocks", "max_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"fine-tuning setting {name} must be >= 1, got {getattr(self, name)}")
        for name in ("learning_rate", "adam_epsilon"):
            if not getattr(self, name) > 0:
                raise ValueError(f"fine-tuning setting {name} must be > 0, got {getattr(self, name)}")
        if self.weight_decay < 0 or self.warmup_steps < 0:
            raise ValueError(
                f"fine-tuning settings weight_decay and warmup_steps must be >= 0, got "
                f"{self.weight_decay} and {self.warmup_steps}"
            )
        if self.lr_schedule not in SCHEDULES:
            raise ValueError(f"fine-tuning setting lr_schedule must be one of {SCHEDULES}, "
                             f"got {self.lr_schedule!r}")
        if self.trainable_parts not in PARTS:
            raise ValueError(f"fine-tuning setting trainable_parts must be one of {PARTS}, "
                             f"got {self.trainable_parts!r}")
        if self.keep_epoch not in KEEP:
            raise ValueError(f"fine-tuning setting keep_epoch must be one of {KEEP}, "
                             f"got {self.keep_epoch!r}")

    @classmethod
    def from_config(cls, entry: dict) -> FinetuneSettings:
        """Settings from a config block; keys left out take the defaults, unknown keys are errors.

        Parameters
        ----------
        entry : dict
            The config's fine-tuning block.

        Returns
        -------
        FinetuneSettings

        Raises
        ------
        ValueError
            For an unknown key, or a value out of range.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(f"unknown fine-tuning settings {unknown}; known: {sorted(known)}")
        return cls(**entry)

    def to_dict(self) -> dict:
        """Every setting by name (as stored in a checkpoint's manifest).

        Returns
        -------
        dict
        """
        return asdict(self)
