"""Contiguous k-fold splits of passages (Ilia & Aziz 2024, App. F: passages 1-40 in 4 folds of 10).

Folds are numbered 1..k. Fold j holds out its passages: the model trained on the other k-1 folds
is the one evaluated on them.
"""

from __future__ import annotations

from collections.abc import Sequence


def contiguous_folds(ids: Sequence[int], k: int) -> list[list[int]]:
    """``ids`` cut, in the given order, into ``k`` contiguous folds.

    With ``n = len(ids)``, every fold holds ``n // k`` ids and the first ``n % k`` folds one more
    (equal sizes when ``k`` divides ``n``; otherwise sizes differ by at most one, the larger ones
    first). ``k`` must be between 1 and ``n`` (a fold is never empty) and ids must be distinct.

    Parameters
    ----------
    ids : sequence of int
        Distinct ids (passages), in order.
    k : int
        The number of folds.

    Returns
    -------
    list of list of int
        The folds, in order.

    Raises
    ------
    ValueError
        When ``k`` is outside ``1..n`` or ids repeat.
    """
    ids = list(ids)
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"fold ids must be distinct, {repeated} repeat")
    if not 1 <= k <= len(ids):
        raise ValueError(f"k = {k} folds need 1 <= k <= {len(ids)} (the number of ids)")
    size, extra = divmod(len(ids), k)
    folds, start = [], 0
    for j in range(k):
        stop = start + size + (j < extra)
        folds.append(ids[start:stop])
        start = stop
    return folds


def training_ids(ids: Sequence[int], k: int, fold: int) -> list[int]:
    """The ids of every fold but ``fold`` (1..k), in the given order: fold ``fold``'s training set.

    Parameters
    ----------
    ids : sequence of int
        Distinct ids, in order.
    k : int
        The number of folds.
    fold : int
        The held-out fold, 1-based.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        When ``fold`` is not in ``1..k`` (or ``contiguous_folds`` refuses ``k``).
    """
    folds = contiguous_folds(ids, k)
    if not 1 <= fold <= k:
        raise ValueError(f"fold {fold} is not one of 1..{k}")
    return [i for j, f in enumerate(folds, start=1) if j != fold for i in f]
