"""Linear layers whose weights are held in oneDNN's packed layout, for inference on CPU.

``torch.nn.functional.linear`` hands each product ``y = x W^T + b`` to a general matrix
product that reorders ``W`` into the kernel's blocked layout on every call. With the few rows a
decoding pass has (16-256), that reordering can cost as much as the product itself. Here the
weights are reordered once (``mkldnn._reorder_linear_weight``) and multiplied by oneDNN
(``mkldnn._linear_pointwise``), the path ``torch.compile`` takes for a frozen CPU model (the
rates of both paths on each machine: the documentation's performance page).

A packed product is the same function of a row whatever the other rows of its pass: each
output row's bits depend on that input row alone, for any pass of 2 rows or more and wherever
the row sits in the pass (``tests/test_packing.py`` checks this on the machine that runs it),
so the engine's and the samplers' batch invariance holds. Its bits differ from the unpacked
product's in the last places (another summation order), so a packed model draws the same
distribution as an unpacked one, not the same samples.

Only float32 weights are packed: bfloat16 products already run through oneDNN and gained
nothing packed. A product runs packed only without autograd (under ``torch.no_grad`` or
``torch.inference_mode``, as every sampling and scoring pass does); with gradients enabled it
is the ordinary product of the module's ``weight``, so training is unchanged. A weight changed
in place (an optimiser step) is packed again before its next packed product, and one converted
to another dtype or device gets the ordinary product. So does every layer within
``unpacked()`` (oneDNN switched off), which gives the unpacked model's bits: the benchmarks time
the paths before packing that way.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import torch

ROWS_HINT = 64
"""The pass size oneDNN chooses its packed layout for (the engine's default batch size); the
packed product accepts any number of rows."""


class PackedLinear(torch.nn.Module):
    """``y = x W^T + b`` (``torch.nn.Linear``) with ``W`` also kept packed for oneDNN.

    ``weight`` and ``bias`` are the original module's parameters (tied embeddings stay tied,
    and readers of ``weight.shape`` see the same shape). The packed copy is made at the first
    packed product, not saved with the model, and dropped when the module is converted
    (``.to``): a weight that is no longer float32 on the CPU gets the ordinary product.
    """

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self._packed: tuple[torch.Tensor, int] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x W^T + b``: the packed product in inference (no gradient, oneDNN on, a float32 CPU
        weight), else ``torch.nn.functional.linear``.

        Parameters
        ----------
        x : torch.Tensor
            Inputs, shape ``(..., in_features)``.

        Returns
        -------
        torch.Tensor
            Shape ``(..., out_features)``, the dtype of ``x``.
        """
        if torch.is_grad_enabled() or not torch.backends.mkldnn.enabled or not _packable(self.weight):
            return torch.nn.functional.linear(x, self.weight, self.bias)
        if self._packed is None or self._packed[1] != self.weight._version:
            weight = torch.ops.mkldnn._reorder_linear_weight(self.weight.detach(), ROWS_HINT)
            self._packed = (weight, self.weight._version)
        bias = None if self.bias is None else self.bias.detach()
        return torch.ops.mkldnn._linear_pointwise(x, self._packed[0], bias, "none", [], "")

    def _apply(self, fn, recurse=True):
        self._packed = None
        return super()._apply(fn, recurse)

    def extra_repr(self) -> str:
        """The module's line in the model's printout.

        Returns
        -------
        str
        """
        return f"in_features={self.in_features}, out_features={self.out_features}, packed for oneDNN"


def unpacked() -> AbstractContextManager:
    """A context in which every ``PackedLinear`` computes the ordinary product: oneDNN switched
    off (its TF32 setting left as it is: setting it warns about Intel GPUs).

    Returns
    -------
    contextlib.AbstractContextManager
    """
    return torch.backends.mkldnn.flags(enabled=False, allow_tf32=torch.backends.mkldnn.allow_tf32)


def _packable(weight: torch.Tensor) -> bool:
    return weight.device.type == "cpu" and weight.dtype == torch.float32


def can_pack(model: torch.nn.Module) -> bool:
    """Whether ``pack_linears`` applies: oneDNN is available and every parameter is a float32
    tensor on the CPU.

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    bool
    """
    return torch.backends.mkldnn.is_available() and all(_packable(p) for p in model.parameters())


def pack_linears(model: torch.nn.Module) -> int:
    """Replace every ``torch.nn.Linear`` of ``model`` by a ``PackedLinear`` of the same
    parameters when ``can_pack(model)``; the number replaced.

    Parameters
    ----------
    model : torch.nn.Module
        The model; modified in place.

    Returns
    -------
    int
        The number of modules replaced (0 when it does not apply).
    """
    if not can_pack(model):
        return 0
    found = [(parent, name, child) for parent in model.modules()
             for name, child in parent.named_children() if type(child) is torch.nn.Linear]
    for parent, name, child in found:
        setattr(parent, name, PackedLinear(child))
    return len(found)


def multiplies_packed(model: torch.nn.Module) -> bool:
    """Whether every matrix product of ``model``'s weights runs packed now: oneDNN is on, every
    parameter is float32 on the CPU, and each module holding a matrix (2-D) parameter is a
    ``PackedLinear`` or an embedding (a lookup, no product). Then each row of a pass of two
    rows or more has bits that depend on that row alone (module docstring).

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    bool
    """
    if not (torch.backends.mkldnn.enabled and can_pack(model)):
        return False
    holders = [m for m in model.modules() if any(p.dim() == 2 for p in m.parameters(recurse=False))]
    return any(isinstance(m, PackedLinear) for m in holders) and all(
        isinstance(m, PackedLinear | torch.nn.Embedding) for m in holders)
