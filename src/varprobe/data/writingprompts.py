"""WritingPrompts (Fan et al. 2018): prompts from r/WritingPrompts with several stories each.

The original files ``{split}.wp_source`` and ``{split}.wp_target`` are line-aligned: line i
holds a prompt and one story written for it. Prompts start with a tag such as ``[ WP ]``,
stories mark line breaks with `` <newline> ``. A prompt with several stories occurs on several
lines. Stories of a prompt are grouped by the prompt's exact text, an exact repeat of a story
is kept once (as in the paper's reference code), and only prompts with at least
``min_stories`` distinct stories are kept (5 in the paper: 759 test prompts).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from varprobe.data.instances import instances_table
from varprobe.data.dataset import Dataset
from varprobe.data.raw_text import read_text
from varprobe.data.sources import Source

_TAG = re.compile(r"^\s*\[\s*\w+\s*\]\s*")
_NEWLINE = re.compile(r"\s*<newline>\s*")


def clean_prompt(line: str) -> str:
    """The prompt without its leading tag (``[ WP ]``, ``[ IP ]``, ...) and outer whitespace.

    Parameters
    ----------
    line : str
        A line of a ``*.wp_source`` file.

    Returns
    -------
    str
    """
    return _TAG.sub("", line).strip()


def clean_story(line: str) -> str:
    """The story with each ``<newline>`` marker turned into a line break, runs of spaces
    within a line collapsed, and empty lines dropped.

    Parameters
    ----------
    line : str
        A line of a ``*.wp_target`` file.

    Returns
    -------
    str
    """
    paragraphs = (" ".join(p.split()) for p in _NEWLINE.split(line))
    return "\n".join(p for p in paragraphs if p)


def read_writingprompts(source: Path, target: Path, split: str = "test",
                        min_stories: int = 5) -> pd.DataFrame:
    """The canonical instances table of prompts with at least ``min_stories`` distinct stories.

    ``input_id`` is the 0-based line number of the prompt's first occurrence. No count is
    checked: no copy of the corpus could be examined here (``data/sources.py``).

    Parameters
    ----------
    source : pathlib.Path
        The prompts file (``<split>.wp_source``), one prompt a line.
    target : pathlib.Path
        The stories file (``<split>.wp_target``), line i the story of prompt line i.
    split : str
        The split the table is labelled with.
    min_stories : int
        The fewest distinct stories a prompt keeps.

    Returns
    -------
    pandas.DataFrame
        The instances table: one row per kept prompt, its distinct stories the references.

    Raises
    ------
    ValueError
        Naming the file when one is empty or not UTF-8, or when the two differ in length.
    """
    prompts = read_text(source).splitlines()
    stories = read_text(target).splitlines()
    if len(prompts) != len(stories):
        raise ValueError(f"{source} has {len(prompts)} lines but {target} has {len(stories)}")
    grouped: dict[str, tuple[int, list[str]]] = {}
    for line, (raw_prompt, raw_story) in enumerate(zip(prompts, stories, strict=True)):
        prompt, story = clean_prompt(raw_prompt), clean_story(raw_story)
        first, kept = grouped.setdefault(prompt, (line, []))
        if story and story not in kept:
            kept.append(story)
    rows = [
        (str(first), prompt, kept)
        for prompt, (first, kept) in grouped.items()
        if len(kept) >= min_stories
    ]
    return instances_table("writingprompts", split, rows)


_WRITING_PROMPTS = "https://dl.fbaipublicfiles.com/fairseq/data/writingPrompts.tar.gz"
SPLITS = ("valid", "test")

DATASET = Dataset(
    name="writingprompts",
    # No copy of the corpus could be examined here: unverified by digest, checked by its loader.
    sources=tuple(Source(url=_WRITING_PROMPTS, mirror_path=f"writingprompts/{split}.wp_{side}",
                         member=f"writingPrompts/{split}.wp_{side}")
                  for split in SPLITS for side in ("source", "target")),
    default_split="test",
    output_language="en",
    raw_files=lambda split: [f"{split}.wp_source", f"{split}.wp_target"],
    read=lambda raw_dir, split, verify, min_stories: read_writingprompts(
        raw_dir / f"{split}.wp_source", raw_dir / f"{split}.wp_target", split, min_stories),
    options={"min_stories": 5},
    max_references=10,
    splits=dict.fromkeys(SPLITS),  # the prompts kept depend on min_stories
)
