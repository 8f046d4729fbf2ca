"""Split the contexts of a study into shards, so that one sampling job stays within its runtime.

A draw depends on (seed, model, decoding, context) alone (see ``complete_word``), so the
concatenation of the shards' samples, in shard order, is the unsharded table row for row.
Shards are contiguous runs of whole passages of near-equal size. Cuts fall on passage
boundaries only: the sampler encodes the contexts of a passage together (``CHAIN_DRAWS`` at a
time, counted from the passage's first context), so a cut inside a passage would change which
contexts share an encoding and, through floating-point reassociation, could flip a rare draw.
"""

from __future__ import annotations

from collections.abc import Sequence


def shard_bounds(passages: Sequence[int], shards: int) -> list[tuple[int, int]]:
    """The ``[start, stop)`` row ranges of ``shards`` contiguous shards of ``len(passages)`` rows.

    ``passages[i]`` is the passage (text id) of row i, rows of one passage being adjacent.
    Cut i is the passage boundary (or either end) nearest to ``i * n / shards``, the smaller
    one on a tie. A passage is never split, so with more shards than passages some shards are
    empty.

    Parameters
    ----------
    passages : sequence of int
        The passage of each row, adjacent rows of one passage.
    shards : int
        The number of shards, at least 1.

    Returns
    -------
    list of (int, int)
        ``shards`` row ranges ``[start, stop)``, in order, covering all rows.

    Raises
    ------
    ValueError
        When ``shards`` is below 1.
    """
    if shards < 1:
        raise ValueError(f"shards must be >= 1, got {shards}")
    n = len(passages)
    candidates = [0, *(i for i in range(1, n) if passages[i] != passages[i - 1]), n]
    cuts = [0]
    for i in range(1, shards):
        target = i * n / shards
        cuts.append(max(min(candidates, key=lambda c: (abs(c - target), c)), cuts[-1]))
    cuts.append(n)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def shard_rows(passages: Sequence[int], shard: int, shards: int) -> range:
    """The rows of shard ``shard`` (1-based) of ``shards``.

    Parameters
    ----------
    passages : sequence of int
        The passage of each row (``shard_bounds``).
    shard : int
        The shard, 1-based.
    shards : int
        The number of shards.

    Returns
    -------
    range
        The shard's row indices.

    Raises
    ------
    ValueError
        When ``shard`` is not in ``1..shards``.
    """
    if not 1 <= shard <= shards:
        raise ValueError(f"shard must be in 1..{shards}, got {shard}")
    start, stop = shard_bounds(passages, shards)[shard - 1]
    return range(start, stop)


PER_SHARD = ("shard", "device", "checkpoint", "texts")
"""Metadata that may differ between the shards of one table: where each ran, and for a
fine-tuned model the fold checkpoint and held-out passages each sampled."""


def merge_metadata(shards: Sequence[dict], names: Sequence[str]) -> dict:
    """The metadata of the merged table: the shards' own, less the shard number, with
    ``device`` listing the devices the shards ran on (comma-separated, sorted) and, where the
    shards were fold models, ``checkpoints`` and ``texts`` listing theirs in shard order.

    Raises ValueError naming the file when the shards were not drawn with the same settings or
    are not shards 1..K of K, in order.

    Parameters
    ----------
    shards : sequence of dict
        Each shard's table metadata, in shard order.
    names : sequence of str
        Each shard's file name, named in messages.

    Returns
    -------
    dict
        The merged table's metadata.

    Raises
    ------
    ValueError
        See above.
    """
    def settings(metadata: dict) -> dict:
        return {k: v for k, v in metadata.items() if k not in PER_SHARD}

    for index, (metadata, name) in enumerate(zip(shards, names, strict=True), start=1):
        if metadata.get("shard") != [index, len(shards)]:
            raise ValueError(f"{name} is shard {metadata.get('shard')}, expected [{index}, {len(shards)}]")
        if settings(metadata) != settings(shards[0]):
            raise ValueError(f"{name} was drawn with other settings than {names[0]}")
    devices = sorted({m["device"] for m in shards if "device" in m})
    merged = {**settings(shards[0]), "device": ",".join(devices)}
    if any(m.get("checkpoint") for m in shards):
        merged.update(checkpoints=[m.get("checkpoint") for m in shards],
                      texts=[m.get("texts") for m in shards])
    return merged
