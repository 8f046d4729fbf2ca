"""Few-shot prompts: a dataset's prompt template with k solved examples of the task before the
input, the examples drawn from a split of the same dataset.

A prompt template holds ``{source}`` (``sampling.generate.render_prompt``). Its few-shot form
repeats the template, filled in with each example's source and followed by one of the
example's references, then the template itself:

    render(template, s_1) "\\n" r_1 "\\n\\n" ... render(template, s_k) "\\n" r_k "\\n\\n" template

It is again a template with ``{source}`` alone, so the generation engine shares its prefix (the
examples and the instruction) across the inputs as for the zero-shot template.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SEPARATOR = "\n\n"
"""Between two examples, and between the last example and the input."""


def choose_examples(examples: pd.DataFrame, k: int, seed: int,
                    exclude_sources: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """A seeded choice of ``k`` rows of an instances table, none of whose source is in
    ``exclude_sources`` (the evaluated inputs', so that no input is its own example), in the
    table's order.

    The choice is ``numpy.random.default_rng(seed).choice`` of k of the eligible rows without
    replacement; each row's example answer is its first reference.

    Parameters
    ----------
    examples : pandas.DataFrame
        An instances table.
    k : int
        The number of examples.
    seed : int
        The seed of the choice.
    exclude_sources : set of str, optional
        Sources no example may have.

    Returns
    -------
    pandas.DataFrame
        The ``k`` rows chosen, in the table's order.

    Raises
    ------
    ValueError
        When ``k`` < 1 or fewer than ``k`` rows are eligible (naming how many are).
    """
    if k < 1:
        raise ValueError(f"few_shot must be at least 1, got {k}")
    eligible = examples[~examples["source"].isin(exclude_sources)]
    eligible = eligible[eligible["references"].map(len) > 0]
    if len(eligible) < k:
        raise ValueError(f"few_shot: {k} examples asked, but the examples split "
                         f"({', '.join(map(str, examples['split'].unique()))}) has only {len(eligible)} "
                         "with a reference that are not evaluated inputs")
    rows = np.sort(np.random.default_rng(seed).choice(len(eligible), size=k, replace=False))
    return eligible.iloc[rows]


def _literal(text: str) -> str:
    """``text`` as a literal part of a ``str.format`` template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def few_shot_template(template: str, examples: pd.DataFrame) -> str:
    """``template`` preceded by each example of ``examples`` (an instances table) solved: the
    template filled in with its source, a newline and its first reference (the module's
    equation).

    Parameters
    ----------
    template : str
        The prompt template, with the placeholder ``{source}``.
    examples : pandas.DataFrame
        An instances table of the examples.

    Returns
    -------
    str
        The few-shot template, still with the placeholder ``{source}`` (the examples' braces
        doubled).

    Examples
    --------
    >>> table = pd.DataFrame({"source": ["a {b}"], "references": [["x", "y"]]})
    >>> few_shot_template("Copy: {source}", table)
    'Copy: a {{b}}\\nx\\n\\nCopy: {source}'
    """
    solved = [_literal(template.format(source=source)) + "\n" + _literal(references[0])
              for source, references in zip(examples["source"], examples["references"], strict=True)]
    return SEPARATOR.join([*solved, template])
