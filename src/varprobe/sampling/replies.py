"""How a decoded production is cut into the reply that is analysed.

An instruction-tuned model asked for one sentence may add a note after it, or a preamble before
it. ``production.reply`` chooses what is kept (``docs/configuration.md``); the draws are the same
either way. Kept free of torch so the command line can offer the choices without loading it.
"""

from __future__ import annotations

REPLIES = ("whole", "first_line")
"""How a decoded production is cut into the reply that is analysed (``cut_reply``)."""


def cut_reply(text: str, reply: str) -> str:
    """The reply analysed from a decoded production ``text``: with ``whole``, the text without
    its outer whitespace; with ``first_line``, its first line that holds more than whitespace
    (the rest, a model's explanation or a second attempt, is dropped), stripped. The draws are
    the same either way: only what is kept of them differs.

    Parameters
    ----------
    text : str
        A decoded production (special tokens removed).
    reply : str
        One of ``REPLIES``.

    Returns
    -------
    str

    Examples
    --------
    >>> cut_reply("  Die Katze sitzt.\nNote: I translated it. ", "first_line")
    'Die Katze sitzt.'
    >>> cut_reply("\n\nHallo\nWelt", "whole")
    'Hallo\nWelt'
    """
    text = text.strip()
    return text.split("\n", 1)[0].strip() if reply == "first_line" else text
