"""The science modules' public functions document their parameters and results as numpydoc
sections, so the API reference states each argument once, next to its definition."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "varprobe"

# Every public function and method of these folders and modules.
SCIENCE = ["metrics", "probes", "sampling", "data", "analysis", "models", "api", "finetune", "words.py",
           "tables.py"]


def sections(doc: str) -> set[str]:
    """The numpydoc section headers of ``doc`` (a title line underlined by dashes)."""
    lines = [line.strip() for line in doc.splitlines()]
    return {title for title, rule in zip(lines, lines[1:]) if title and rule and set(rule) == {"-"}}


def public_functions(path: Path, methods: bool = False):
    """``(name, function)`` of each public top-level function of the module at ``path`` and,
    with ``methods``, of each public method of its public classes (properties left out: a
    property documents a value, not a call)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node
        elif methods and isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for child in node.body:
                if (isinstance(child, ast.FunctionDef) and not child.name.startswith("_")
                        and not any("property" in ast.unparse(d) for d in child.decorator_list)):
                    yield f"{node.name}.{child.name}", child


def documented():
    """``(module:function, function)`` of every function this file holds to the rule."""
    for entry in SCIENCE:
        target = PACKAGE / entry
        for path in [target] if target.is_file() else sorted(target.rglob("*.py")):
            for name, node in public_functions(path, methods=True):
                yield f"{path.relative_to(PACKAGE).as_posix()}:{name}", node


def test_science_functions_have_parameters_and_returns_sections():
    missing = []
    for name, node in documented():
        found = sections(ast.get_docstring(node) or "")
        named = [a.arg for a in node.args.posonlyargs + node.args.args if a.arg not in ("self", "cls")]
        takes = bool(named or node.args.kwonlyargs or node.args.vararg or node.args.kwarg)
        lacks = [*(["Parameters"] if takes and "Parameters" not in found else []),
                 *(["Returns"] if not found & {"Returns", "Yields"} else [])]
        if lacks:
            missing.append(f"{name} ({', '.join(lacks)})")
    assert not missing, f"numpydoc sections missing: {missing}"


def test_a_section_is_a_title_over_dashes():
    doc = "Sum.\n\n    Parameters\n    ----------\n    x : int\n\n    Returns\n    -------\n    int\n"
    assert sections(doc) == {"Parameters", "Returns"}
    assert sections("The Parameters of a run.\nReturns nothing.") == set()
