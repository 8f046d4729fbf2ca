"""Chains: consecutive contexts that one encoding serves.

The contexts of a Provo passage are its prefixes, so the token ids of each extend the ids of
the one before. A chain is a run of such contexts; its longest member is run through the
network once, and every member reads the keys/values of its own first positions and the
next-token distribution at its own last position. The sampler, the enumeration and the word
scorer form their chains here, so a context shares an encoding with the same neighbours
whichever of them reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")


def prefix_chains(items: Iterable[Item], encode: Callable[[Item], list[int]],
                  limit: int) -> Iterator[list[tuple[Item, list[int]]]]:
    """Yield ``items`` in order, grouped into chains of ``(item, ids)``: an item joins the
    current chain when its ids ``encode(item)`` start with the ids of the chain's last member
    and the chain has fewer than ``limit`` members; otherwise it starts the next chain.

    Parameters
    ----------
    items : iterable
        The items (contexts, or context and words) in their order.
    encode : callable
        Maps an item to its token ids (list of int).
    limit : int
        The most members of a chain, at least 1.

    Yields
    ------
    list of (item, list of int)
        One chain: its items with their token ids, in order.

    Raises
    ------
    ValueError
        When ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"a chain holds at least one context, got limit {limit}")
    chain: list[tuple[Item, list[int]]] = []
    for item in items:
        ids = encode(item)
        if chain and (len(chain) == limit or ids[: len(chain[-1][1])] != chain[-1][1]):
            yield chain
            chain = []
        chain.append((item, ids))
    if chain:
        yield chain
