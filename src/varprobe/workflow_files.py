"""Where the workflow's files are: the Snakefile, ``workflow/`` (rules, schemas, report),
``profiles/``, the default ``config.yaml``, the conda environment and the small ``resources/``
that the default config names.

In a checkout (an editable install) they are the checkout's own files, beside ``src/``. A wheel
carries a copy of them inside the package, ``varprobe/_workflow/``, laid out as in the checkout
(``setup.py`` copies ``FILES`` in when it builds the package), so that ``varprobe run`` works
outside a clone. Git holds them once, in the checkout's layout.
"""

from __future__ import annotations

from pathlib import Path

FILES = ("Snakefile", "config.yaml", "workflow", "profiles", "envs/varprobe.yaml", "resources")
"""The checkout's files and folders (relative to its root) that the workflow needs to run."""

PACKAGED = "_workflow"
"""The folder inside the installed package that holds the copy of ``FILES``."""

SCHEMA = "workflow/schemas/config.schema.yaml"
"""The config schema, relative to ``root()``."""

_HERE = Path(__file__).resolve().parent


def root() -> Path:
    """The folder holding the workflow's ``FILES``: the installed package's copy
    (``varprobe/_workflow``) where there is one, else the checkout the package is imported from.

    Returns
    -------
    Path
        The folder whose ``Snakefile`` runs the workflow.

    Raises
    ------
    RuntimeError
        When neither holds a Snakefile (a wheel built without ``setup.py``'s copy).
    """
    for candidate in (_HERE / PACKAGED, _HERE.parents[1]):
        if (candidate / "Snakefile").is_file() and (candidate / "workflow").is_dir():
            return candidate
    raise RuntimeError(f"the workflow's files are neither in {_HERE / PACKAGED} (an installed wheel) nor "
                       f"in {_HERE.parents[1]} (a checkout): build the package with its setup.py, "
                       "which copies them in")


def config_schema() -> dict:
    """The config schema (``SCHEMA`` in ``root()``): every key of the config, its type and its
    default.

    Returns
    -------
    dict
        The parsed schema.
    """
    import yaml   # here: setup.py runs this module where only the build's own packages are

    return yaml.safe_load((root() / SCHEMA).read_text())
