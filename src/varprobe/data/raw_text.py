"""Decoding a raw text file a run reads (a dataset file, a user's CSV) so that a file in another
encoding, or an empty one, stops with a message naming the file and what is wrong, instead of a
parser error about fields or columns further on."""

from __future__ import annotations

import codecs
from pathlib import Path

# UTF-32 first: its little-endian mark begins with UTF-16's.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)


def decode(data: bytes, encoding: str, name: str) -> str:
    """The text of the file ``name`` whose bytes are ``data``, read as ``encoding`` (a UTF-8
    byte-order mark is dropped for UTF-8).

    Raises ValueError naming the file and saying "encoding" for a UTF-16/32 byte-order mark, NUL
    bytes (UTF-16/32 without a mark, or no text at all) or bytes invalid in ``encoding``.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    encoding : str
        The encoding to read them as.
    name : str
        The file, named in messages.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        See above.
    """
    fix = f"save it as {encoding} text"
    for mark, label in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            raise ValueError(f"{name}: wrong encoding: {label} (byte-order mark), the reader expects "
                             f"{encoding}; {fix}")
    if b"\x00" in data:
        raise ValueError(f"{name}: wrong encoding: the file holds NUL bytes (UTF-16/32 without a "
                         f"byte-order mark, or not text), the reader expects {encoding}; {fix}")
    if codecs.lookup(encoding).name == "utf-8":
        data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise ValueError(f"{name}: wrong encoding: byte {data[err.start]:#04x} at offset {err.start} "
                         f"is not {encoding}; {fix}") from err


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of the file at ``path`` (``decode``).

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    encoding : str
        Its text encoding.

    Returns
    -------
    str
        The decoded text.

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    ValueError
        Naming the file when it is empty (no bytes but whitespace) or not ``encoding`` text.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    data = path.read_bytes()
    if not data.strip():
        raise ValueError(f"{path} is empty ({len(data)} bytes)")
    return decode(data, encoding, str(path))
