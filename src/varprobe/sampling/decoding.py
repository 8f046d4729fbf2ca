"""Decoding algorithms as transformations of next-token logits into a sampling distribution.

Every parameter is explicit: a ``Decoding`` with the defaults below is ancestral sampling
(temperature 1, no top-k, no nucleus, no typical filtering), whatever a model's own
generation config says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, asdict, dataclass, fields

import torch

from varprobe.sampling.nucleus import zero_outside_nucleus

ENUMERATION_KEYS = ("method", "target_mass", "max_forward_tokens", "min_mass", "texts")
"""Keys of a decoding's config entry that configure enumeration, not the decoding algorithm."""
SAMPLING_KEYS = ("n_samples",)
"""Keys of a Provo decoding's config entry that configure its sampling jobs (draws per
context), not the decoding algorithm."""


@dataclass(frozen=True)
class Decoding:
    """A named decoding algorithm.

    ``temperature`` divides the logits; ``top_k`` keeps the k most probable tokens (0: all);
    ``top_p`` keeps the smallest set whose mass reaches p (nucleus; 1.0: all); ``typical_p``
    keeps the tokens whose surprisal is closest to the entropy until their mass reaches p
    (locally typical sampling; 1.0: all). They apply in that order, as in transformers.
    """

    name: str
    _: KW_ONLY
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    typical_p: float = 1.0

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError(f"decoding {self.name!r}: temperature must be > 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"decoding {self.name!r}: top_k must be >= 0, got {self.top_k}")
        for key in ("top_p", "typical_p"):
            value = getattr(self, key)
            if not 0 < value <= 1:
                raise ValueError(f"decoding {self.name!r}: {key} must be in (0, 1], got {value}")

    @classmethod
    def from_config(cls, entry: Mapping) -> Decoding:
        """The decoding algorithm of a decoding's config entry (``provo.decodings`` or
        ``production.decodings``): its name and parameters, the ``ENUMERATION_KEYS`` left to the
        enumerator and the ``SAMPLING_KEYS`` to the sampling jobs. The one place a ``Decoding`` is
        built from a config, for the CLI, the API code and the workflow alike. ValueError naming
        any other key.

        Parameters
        ----------
        entry : mapping
            A decoding's config entry.

        Returns
        -------
        Decoding
            The decoding it names.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(entry) - known - set(ENUMERATION_KEYS) - set(SAMPLING_KEYS))
        if unknown:
            raise ValueError(f"decoding {entry.get('name')!r}: unknown keys {unknown}; "
                             f"expected {sorted(known)} or {list(ENUMERATION_KEYS + SAMPLING_KEYS)}")
        return cls(**{k: v for k, v in entry.items() if k in known})

    def parameters(self) -> dict[str, float | int]:
        """The effective generation parameters, for storing beside the samples.

        Returns
        -------
        dict of str to float or int
            Every field but ``name``.
        """
        return {k: v for k, v in asdict(self).items() if k != "name"}

    def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        """Map logits ``(n, V)`` to the float64 sampling distribution ``(n, V)`` of this decoding.

        Every step computes in float64. Ancestral sampling and top-k alone leave the logits as
        they are until the softmax, which casts them (``dtype``): the same bits as casting first,
        without a float64 copy of the logits (at the engine's pass sizes the copies cost more
        than the softmax).

        Parameters
        ----------
        logits : torch.Tensor
            Next-token logits, shape ``(n, V)``.

        Returns
        -------
        torch.Tensor
            float64 probabilities, shape ``(n, V)``, each row summing to 1.
        """
        cast_late = self.temperature == 1.0 and self.top_p == 1.0 and self.typical_p == 1.0
        scores = self._fixed_set(logits if cast_late else logits.double())
        if self.top_p < 1.0:
            scores = _nucleus(scores, self.top_p)
        if self.typical_p < 1.0:
            logp = torch.log_softmax(scores, dim=-1)
            entropy = -(logp.exp() * logp.nan_to_num(neginf=0.0)).sum(-1, keepdim=True)
            closeness = -(-logp - entropy).abs()
            scores = _keep_mass(scores, closeness, self.typical_p)
        return torch.softmax(scores, dim=-1, dtype=torch.float64)

    def weights(self, logits: torch.Tensor, overwrite: bool = False) -> torch.Tensor:
        """Weights ``(n, V)`` proportional to this decoding's distribution, for ``draw``: unless
        the decoding filters by typicality (or by nucleus off the CPU), ``exp(s - max s)`` of
        each row's scores s (the logits over the temperature, top-k applied: the softmax
        without its division) in the logits' precision, at least float32, with the tokens
        outside the nucleus set to zero (``nucleus``); otherwise ``probabilities``. A float32
        exponential has the relative precision (6e-8) the float32 logits themselves have, and
        takes a third of the time of a float64 one over a vocabulary; the nucleus is the one of
        ``probabilities`` except where a token's preceding mass lies within that precision of
        ``top_p``. ``overwrite``: the caller's logits may hold the weights (no copy of them).

        Parameters
        ----------
        logits : torch.Tensor
            Next-token logits, shape ``(n, V)``.
        overwrite : bool
            Whether the weights may be written over ``logits``.

        Returns
        -------
        torch.Tensor
            Non-negative unnormalised weights, shape ``(n, V)``.
        """
        if self.typical_p < 1.0 or (self.top_p < 1.0 and logits.device.type != "cpu"):
            return self.probabilities(logits)
        scores = self._fixed_set(logits.to(torch.promote_types(logits.dtype, torch.float32)))
        if scores is logits and not overwrite:
            scores = scores.clone()
        weights = scores.sub_(scores.amax(-1, keepdim=True)).exp_()
        return zero_outside_nucleus(weights, self.top_p) if self.top_p < 1.0 else weights

    def _fixed_set(self, scores: torch.Tensor) -> torch.Tensor:
        """``scores`` over the temperature, with the tokens outside the top k at minus infinity
        (in their own dtype; x / 1 is x, so temperature 1 skips a pass over (n, V))."""
        if self.temperature != 1.0:
            scores = scores / self.temperature
        if self.top_k > 0 and self.top_k < scores.shape[-1]:
            kth = torch.topk(scores, self.top_k, dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, -torch.inf)
        return scores


def _nucleus(scores: torch.Tensor, mass: float) -> torch.Tensor:
    """``scores`` with the tokens outside the nucleus of ``mass`` of their float64 softmax at
    minus infinity: found by ``zero_outside_nucleus`` on the CPU, by ranking (``_keep_mass``)
    elsewhere."""
    if scores.device.type != "cpu":
        return _keep_mass(scores, scores, mass)
    kept = zero_outside_nucleus(torch.softmax(scores, dim=-1, dtype=torch.float64), mass)
    return scores.masked_fill(kept == 0, -torch.inf)


KEEP_MASS_FIRST = 1024
"""Tokens ``_keep_mass`` ranks first; it ranks four times as many while a row's kept tokens may
lie beyond them (a flat distribution), so a 262k vocabulary is not sorted whole per row."""


def _keep_mass(scores: torch.Tensor, priority: torch.Tensor, mass: float) -> torch.Tensor:
    """Keep the highest-``priority`` tokens until their probability reaches ``mass`` (at least one).

    In descending priority order, token j is kept when the probability of the tokens before it
    is below ``mass``. Only the top k are ranked (``torch.topk``): once every row's k-th token
    is dropped, every token after it is too.
    """
    probs = torch.softmax(scores, dim=-1)
    size, k = priority.shape[-1], min(KEEP_MASS_FIRST, priority.shape[-1])
    while True:
        order = torch.topk(priority, k, dim=-1).indices
        ranked = probs.gather(-1, order)
        before = ranked.cumsum(-1) - ranked
        if k == size or bool((before[..., -1] >= mass).all()):
            break
        k = min(4 * k, size)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < mass)
    return scores.masked_fill(~keep, -torch.inf)


class UnusableWeights(ValueError):
    """Rows of next-token weights whose total is not finite and positive (``rows``: their
    indices), so that no token can be drawn from them: the model's logits held NaN or infinity."""

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows
        super().__init__(f"the model's next-token logits hold NaN or infinity (an overflow in float16?), "
                         f"so no token can be drawn: row(s) {rows} of a pass")


def usable(totals: torch.Tensor) -> torch.Tensor:
    """``totals`` (one per row of weights) when each is finite and positive.

    Parameters
    ----------
    totals : torch.Tensor
        Each row's total weight, shape ``(rows,)``.

    Returns
    -------
    torch.Tensor
        ``totals`` itself.

    Raises
    ------
    UnusableWeights
        Naming the rows whose total is not finite and positive.
    """
    bad = ~(torch.isfinite(totals) & (totals > 0))
    if bool(bad.any()):
        raise UnusableWeights(bad.nonzero()[:, 0].tolist())
    return totals


def inverse_cdf(cdf: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF sampling: per row of ``cdf`` and each of its uniforms ``u``, the token id
    ``F^{-1}(u)``: the first index whose cumulative probability exceeds ``u`` times the row's total.

    Parameters
    ----------
    cdf : torch.Tensor
        Unnormalised cumulative sums of each row's weights, shape ``(rows, V)``.
    u : torch.Tensor
        Uniforms in [0, 1), shape ``(rows, k)``.

    Returns
    -------
    torch.Tensor
        Token ids, shape ``(rows, k)``.

    Raises
    ------
    UnusableWeights
        When a row's total is not finite and positive.
    """
    target = u.to(cdf) * usable(cdf[:, -1])[:, None]
    return torch.searchsorted(cdf, target, right=True).clamp_(max=cdf.shape[1] - 1)


DRAW_BLOCK = 256
"""Tokens per block of ``draw``'s two-level cumulative sums."""


def draw(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One token per row by inverse-CDF sampling: for row weights ``w`` and its uniform ``u``, the
    first index j whose cumulative weight ``W_j = sum_{i <= j} w_i`` exceeds ``u * W_V``.

    The sums run on two levels, so a row costs one pass over its V weights rather than a
    sequential float64 cumulative sum of V terms: the weights of each block of ``DRAW_BLOCK``
    tokens are summed in their own precision (no float64 copy of the weights is made), the
    blocks' cumulative sums run in float64, the block whose cumulative sum first exceeds the
    target is found, and the float64 cumulative sums run inside that block only. A row's token
    depends on its own weights and uniform alone (not on the other rows). A float32 sum of 256
    non-negative terms is within 1.5e-5 of its exact value relatively (256 roundings; over the
    blocks of the softmax of random logits of standard deviation 4 over 49,152 tokens, 5e-8 on
    average and 3e-7 at most); the difference goes to the block's last tokens (where the
    block's float64 sum falls short of the rounded one, the target past it picks the last token
    of positive weight), so a token of weight zero is never drawn and the drawn distribution is
    within that relative error, in total variation, of the weights' own.

    Parameters
    ----------
    weights : torch.Tensor
        Non-negative, unnormalised weights, shape ``(rows, V)``.
    u : torch.Tensor
        One uniform in [0, 1) per row, shape ``(rows,)``.

    Returns
    -------
    torch.Tensor
        The drawn token id of each row, shape ``(rows,)``.

    Raises
    ------
    UnusableWeights
        When a row's total is not finite and positive.
    """
    rows, size = weights.shape
    pad = -size % DRAW_BLOCK
    blocks = torch.nn.functional.pad(weights, (0, pad)) if pad else weights.contiguous()
    blocks = blocks.view(rows, -1, DRAW_BLOCK)
    cumulative = blocks.sum(-1).double().cumsum_(-1)
    target = u.to(cumulative) * usable(cumulative[:, -1])
    block = torch.searchsorted(cumulative, target[:, None], right=True)[:, 0].clamp_(max=cumulative.shape[1] - 1)
    before = cumulative.gather(1, (block - 1).clamp(min=0)[:, None])[:, 0].masked_fill_(block == 0, 0.0)
    chosen = blocks[torch.arange(rows, device=weights.device), block]
    inside = chosen.cumsum(-1, dtype=torch.float64).add_(before[:, None])
    offset = torch.searchsorted(inside, target[:, None], right=True)[:, 0]
    last = DRAW_BLOCK - 1 - (chosen.flip(-1) > 0).to(torch.uint8).argmax(-1)
    return block * DRAW_BLOCK + torch.minimum(offset, last)
