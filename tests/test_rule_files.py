"""Each Snakemake file reads on its own: it imports every module-level name it uses that a rules
file imports, and an alias of a config section (``PC = config["provo"]``) is read only where a
reader finds it bound: in its own file, a file that includes it, or after a file the Snakefile
always includes."""

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "workflow" / "rules"
FILES = [ROOT / "Snakefile", *sorted(RULES.glob("*.smk")),
         *sorted((ROOT / "src" / "varprobe" / "families").glob("*/rules.smk"))]


def imported(text: str) -> set[str]:
    """The names an ``import`` or ``from ... import`` line at the start of a line binds."""
    names = set()
    for match in re.finditer(r"^(?:from\s+\S+\s+)?import\s+(\([^)]*\)|.*)$", text, re.M):
        for part in match.group(1).strip("()").split(","):
            if part.strip():
                names.add(part.split(" as ")[-1].strip().split(".")[0])
    return names


def used(text: str) -> set[str]:
    """The names read in ``text`` outside strings and comments, attributes (``x.name``) excluded."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    return {t.string for i, t in enumerate(tokens)
            if t.type == tokenize.NAME and not (i and tokens[i - 1].string == ".")}


def config_aliases(text: str) -> set[str]:
    """The module-level names bound to a part of ``config``."""
    return set(re.findall(r"^([A-Za-z_]\w*) = config\b", text, re.M))


def includes(text: str) -> list[Path]:
    """The rules files ``text`` includes (a rules file names them relative to itself, the
    Snakefile relative to the repository; the one an f-string names is left out)."""
    return [RULES / Path(name).name for name in re.findall(r'^\s*include: "([^"{]+\.smk)"', text, re.M)]


TEXTS = {path: path.read_text() for path in FILES}
IMPORTED = {name for text in TEXTS.values() for name in imported(text)}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_rules_file_imports_every_imported_name_it_uses(path):
    text = TEXTS[path]
    missing = sorted((used(text) & IMPORTED) - imported(text))
    assert not missing, f"{path.relative_to(ROOT)} uses {missing} without importing them"


def test_a_config_alias_is_read_only_where_it_is_bound_or_included():
    always = [RULES / m for m in re.findall(r'^include: "workflow/rules/(\w+\.smk)"', TEXTS[ROOT / "Snakefile"],
                                            re.M)]
    everywhere = {name for path in always for name in config_aliases(TEXTS[path])}
    foreign = []
    for path, text in TEXTS.items():
        bound = config_aliases(text) | {n for p in includes(text) for n in config_aliases(TEXTS[p])}
        elsewhere = {n for p, t in TEXTS.items() if p != path for n in config_aliases(t)}
        foreign += [f"{path.relative_to(ROOT)}: {n}" for n in sorted(used(text) & (elsewhere - bound - everywhere))]
    assert not foreign, f"config aliases read outside their file: {foreign}"


def test_the_checks_see_a_name_used_without_its_import():
    text = 'rule a:\n    params:\n        x=json.dumps({"k": "json shlex"}),\n'
    assert used(text) & {"json", "shlex"} == {"json"}
    assert imported("import json\nfrom pathlib import Path\nfrom m import (\n    a,\n    b as c,\n)\n") == {
        "json", "Path", "a", "c"}


def test_the_environment_and_the_caption_are_found_from_every_rule_file():
    """Snakemake reads a relative ``conda:`` or caption path from the folder of the rule file
    using it, and the families' rule files live in the package: every rule names the one
    environment and the one caption by ``common.smk``'s names, which are absolute paths that
    exist."""
    for path, text in TEXTS.items():
        for value in re.findall(r"^\s+conda:\n\s+(.+)$", text, re.M):
            assert value.strip() == "CONDA_ENV", path
        for value in re.findall(r"\breport\(\s*[^()]*?\bcaption=([^,\s)]+)", text):
            assert value == "CAPTION", path
    common = TEXTS[RULES / "common.smk"]
    namespace = {"Path": Path, "workflow": type("Workflow", (), {"basedir": str(ROOT)})}
    for name in ("CONDA_ENV", "CAPTION"):
        exec(re.search(rf"^{name} = .+$", common, re.M).group(0), namespace)
        assert Path(namespace[name]).is_absolute() and Path(namespace[name]).is_file(), name
