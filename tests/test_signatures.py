"""A call reads without a map: no public function, method or dataclass constructor of the package
takes more than four positional parameters (``self`` and ``cls`` not counted); the rest are
keyword-only (``*``, ``KW_ONLY``, ``kw_only=True``)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "varprobe"
MOST_POSITIONAL = 4

# Offenders let through, by ``module:name``; an entry that no longer offends fails.
KNOWN: set[str] = set()


def positional(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    """The names of ``function``'s positional parameters, ``self``/``cls`` of a method left out."""
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    return names[1:] if method and names[:1] in (["self"], ["cls"]) else names


def public_functions(tree: ast.Module):
    """``(qualified name, function, is a method)`` of every public function and method (and
    ``__init__``) of ``tree``, nested in public classes."""
    def walk(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                yield from walk(child, f"{prefix}{child.name}.", True)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not child.name.startswith("_") or child.name == "__init__"):
                yield f"{prefix}{child.name}", child, in_class
    yield from walk(tree, "", False)


def dataclass_positional(node: ast.ClassDef) -> list[str] | None:
    """The fields a dataclass's constructor takes by position (those before a ``KW_ONLY``
    marker, none under ``kw_only=True``, ``init=False`` fields left out); None for a class that
    is no dataclass."""
    decorators = [ast.unparse(d) for d in node.decorator_list]
    if not any(d.split("(")[0].split(".")[-1] == "dataclass" for d in decorators):
        return None
    if any("kw_only=True" in d for d in decorators):
        return []
    names = []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotation = ast.unparse(statement.annotation)
            if annotation.endswith("KW_ONLY"):
                break
            no_init = statement.value is not None and "init=False" in ast.unparse(statement.value)
            if "ClassVar" in annotation or no_init:
                continue
            names.append(statement.target.id)
    return names


def offenders() -> dict[str, list[str]]:
    """Each public function, method or dataclass constructor of the package with more than
    ``MOST_POSITIONAL`` positional parameters, by ``module:name``, with their names."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        for name, function, method in public_functions(tree):
            names = positional(function, method)
            if len(names) > MOST_POSITIONAL:
                found[f"{module}:{name}"] = names
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                names = dataclass_positional(node) or []
                if len(names) > MOST_POSITIONAL:
                    found[f"{module}:{node.name}"] = names
    return found


def test_no_public_function_takes_more_than_four_positional_parameters():
    found = offenders()
    new = {name: params for name, params in found.items() if name not in KNOWN}
    assert not new, ("make all but the first parameters keyword-only (`*`): "
                     + "; ".join(f"{name}({', '.join(params)})" for name, params in new.items()))
    assert not KNOWN - set(found), f"no longer offending, drop from KNOWN: {sorted(KNOWN - set(found))}"


def test_the_count_leaves_out_self_and_sees_a_method():
    tree = ast.parse("class A:\n    def __init__(self, a, b, c, d, *, e): ...\n"
                     "    def f(self, a, b, c, d, e): ...\n    def _g(self, a, b, c, d, e): ...\n"
                     "def h(a, b, c, d, e=1): ...\n")
    counted = {name: len(positional(f, method)) for name, f, method in public_functions(tree)}
    assert counted == {"A.__init__": 4, "A.f": 5, "h": 5}


def test_a_dataclass_counts_the_fields_before_its_kw_only_marker():
    record = ast.parse("@dataclass(frozen=True)\nclass R:\n    a: int\n    b: int\n    n: ClassVar[int] = 0\n"
                       "    c: int = field(init=False)\n    _: KW_ONLY\n    d: int\n").body[0]
    assert dataclass_positional(record) == ["a", "b"]
    every = ast.parse("@dataclasses.dataclass\nclass R:\n    a: int\n    b: int\n").body[0]
    assert dataclass_positional(every) == ["a", "b"]
    assert dataclass_positional(ast.parse("@dataclass(kw_only=True)\nclass R:\n    a: int\n").body[0]) == []
    assert dataclass_positional(ast.parse("class R:\n    a: int\n").body[0]) is None
