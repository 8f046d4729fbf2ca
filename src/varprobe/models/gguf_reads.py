"""One parse of a GGUF file per model load.

transformers reads a GGUF file's metadata anew for the tokenizer, for the config (once on its
own, once more inside the model's loading) and for the weights: four parses per load, each a
pure-Python walk over every field. For Gemma-3's 262,144-token vocabulary (three arrays of that
length) one parse is most of a load's CPU time (the performance page, model_cache). Inside ``parsed_once()`` each file is
parsed once and its reader, which only reads the memory-mapped file, serves every later read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def parsed_once() -> Iterator[None]:
    """Within the block, ``gguf.GGUFReader(path, mode)`` returns one reader per ``(path, mode)``.

    transformers imports ``GGUFReader`` from ``gguf`` at each call (``load_gguf_checkpoint``), so
    the module attribute is the one place to share it. The readers are dropped at the end.

    Yields
    ------
    None
    """
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], object] = {}

    def shared(path, mode="r"):
        key = (os.path.realpath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared
    try:
        yield
    finally:
        gguf.GGUFReader = original
