"""An automatic batch size: a sampling job that runs out of memory halves its batch and goes on.

A model entry with ``batch_size: auto`` (``varprobe.models.spec.ModelSpec``) starts its sampling
jobs at the study's batch size; where a batch does not fit (``torch.cuda.OutOfMemoryError``, a
CPU allocation's ``RuntimeError`` saying "out of memory", or ``MemoryError``) the job frees what
it can, halves the batch size and draws again from the first context it had not finished. This
is safe because no draw depends on the batch size: the samplers seed each draw from the seed and
its context alone and cut their forward passes from the work, never from the batch
(``varprobe.sampling.complete_word``, ``varprobe.sampling.engine``), so a halved run gives the
samples a run at the smaller batch size gives, to the bit.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch

Result = TypeVar("Result")

AUTO = "auto"
"""The value of a model entry's ``batch_size`` that turns halving on."""


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says that an allocation did not fit: CUDA's ``OutOfMemoryError``, a
    ``MemoryError``, or a ``RuntimeError`` whose message says "out of memory" (a CPU or other
    device allocation).

    Parameters
    ----------
    error : BaseException
        The error raised.

    Returns
    -------
    bool
    """
    if isinstance(error, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def halving(run: Callable[[int, int], Iterator[Result]], batch_size: int, *, auto: bool,
            what: str) -> Iterator[Result]:
    """Yield the results of ``run(batch_size, done)``, where ``done`` is how many results were
    yielded before: with ``auto``, an out-of-memory error (``is_out_of_memory``) halves the
    batch size, says so on stderr and calls ``run`` again for the results not yet yielded;
    without it, or at batch size 1, the error is raised.

    ``run`` must give the same results for the same work whatever the batch size, and start at
    result ``done`` (the caller's samplers do; see the module's docstring).

    Parameters
    ----------
    run : callable
        ``run(batch_size, done)``: an iterator over the results from number ``done`` on.
    batch_size : int
        The batch size to start at.
    auto : bool
        Whether to halve on running out of memory.
    what : str
        The job, named in the message.

    Yields
    ------
    object
        Each result of ``run``, in order.

    Raises
    ------
    ValueError
        When ``batch_size`` is below 1.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    done = 0
    while True:
        try:
            for result in run(batch_size, done):
                yield result
                done += 1
            return
        except Exception as error:  # noqa: BLE001 (only an out-of-memory error is caught)
            if not (auto and batch_size > 1 and is_out_of_memory(error)):
                raise
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        _release()
        batch_size //= 2
        print(f"{what}: out of memory ({message}); batch_size auto: going on at batch size "
              f"{batch_size}, from result {done + 1}", file=sys.stderr)


def _release() -> None:
    """Give back what the failed batch held: its tensors (once the traceback is gone) and the
    CUDA allocator's cached blocks."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
