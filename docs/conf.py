"""Sphinx configuration of the varprobe documentation (built by scripts/test.sh, strictly:
``sphinx-build -W --keep-going -n -b html docs docs/_build/html``). Offline: no intersphinx, no
external link check."""

from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

project = "varprobe"
author = "the varprobe authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "numpydoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "generate.py"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
html_theme = "pydata_sphinx_theme"
html_title = "varprobe"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
# MathJax is loaded by the reader's browser; the build itself fetches nothing.
nitpicky = True
# Types from other projects are named in the API's signatures; without intersphinx (offline
# build) they cannot link, so only references to this project's own objects are checked.
nitpick_ignore_regex = [(r"py:.*", r"(?!varprobe\.).*")]
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_typehints = "none"
suppress_warnings = ["myst.header"]


def escape_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values and set sizes as ``|x|``, which reST would read as
    substitutions: escape each ``|`` outside literal text (``::`` blocks, doctests, ````x````)."""
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None and stripped and indent <= literal_indent:
            literal_indent = None
        if literal_indent is None and not stripped.startswith(">>>") and not stripped.startswith("..."):
            parts = line.split("``")
            lines[i] = "``".join(part if k % 2 else part.replace("|", "\\|") for k, part in enumerate(parts))
        if literal_indent is None and stripped.endswith("::"):
            literal_indent = indent


def setup(app):
    app.connect("autodoc-process-docstring", escape_bars, priority=100)
