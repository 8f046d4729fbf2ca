"""docs/development.md's Layout section is the map of the package: it names every folder and
every top-level module of src/varprobe, so a newcomer finds each one there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "varprobe"


def layout_section() -> str:
    """The text of the ``## Layout`` section of docs/development.md."""
    text = (ROOT / "docs" / "development.md").read_text()
    match = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "docs/development.md has no '## Layout' section"
    return match.group(1)


def package_entries() -> list[str]:
    """Each folder (``name/``) and top-level module (``name.py``) of the package; ``__init__.py``
    is the package itself."""
    folders = [f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    return sorted(folders + modules)


def test_the_layout_names_every_folder_and_module_of_the_package():
    named = set(re.findall(r"[\w.]+/?", layout_section()))
    missing = [entry for entry in package_entries() if entry not in named]
    assert not missing, f"docs/development.md's Layout does not name {missing}"
