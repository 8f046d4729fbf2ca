"""The package's imports run one way: no module imports one that imports it back, directly or
through others (no import circle). Every
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


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm), each sorted, in sorted order."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_the_check_finds_modules_that_import_each_other_and_longer_circles():
    graph = {"a": {"b", "c"}, "b": {"a"}, "c": set(), "d": {"a"}}
    assert import_circles(graph) == [["a", "b"]]
    assert import_circles({"p": {"q"}, "q": {"r"}, "r": {"p"}, "s": {"p"}}) == [["p", "q", "r"]]


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "varprobe.plots.regression" in graph["varprobe.analysis.regression"]
    assert "varprobe.analysis.family" in graph["varprobe.tables"]


def test_no_module_imports_one_that_imports_it_back():
    assert import_circles(import_graph()) == []
