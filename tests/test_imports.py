"""The package's imports run one way: no module imports one that imports it back. Every
``import`` counts, those inside functions too (read with ``ast``, nothing is imported);
``importlib.import_module`` calls (the analysis-family registry) are not followed."""

from __future__ import annotations

import ast

from helpers import REPO

PACKAGE = REPO / "src" / "varprobe"


def module_name(path) -> str:
    """The dotted name of the module in ``path`` (a package by its ``__init__``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the package's modules it imports}; ``from P import N`` counts as importing
    ``P.N`` where that is a module, else ``P``."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                                else node.module for a in node.names)
        graph[name] = {m for m in imported if m in modules and m != name}
    return graph


def mutual_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The pairs of modules in ``graph`` that import each other."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ()))


def test_the_check_finds_modules_that_import_each_other():
    graph = {"a": {"b", "c"}, "b": {"a"}, "c": set(), "d": {"a"}}
    assert mutual_imports(graph) == [("a", "b")]


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "varprobe.plots.regression" in graph["varprobe.analysis.regression"]
    assert "varprobe.analysis.family" in graph["varprobe.tables"]


def test_no_module_imports_one_that_imports_it_back():
    assert mutual_imports(import_graph()) == []
