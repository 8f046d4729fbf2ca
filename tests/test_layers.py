"""The package's layers (docs/development.md, "Layers"): a module imports only modules of its own
layer or of lower ones, and neither modules nor folders import in a circle.

Imports are read with ``ast`` (nothing is imported): ``import`` and ``from ... import``, relative
ones too, at module level and inside functions. An import under ``if TYPE_CHECKING:`` counts as
well (the package has none; a type-only import is still a dependency of the reader).
``importlib.import_module`` calls are not followed. A folder is a subpackage of ``varprobe``
(``varprobe.analysis`` and all its modules); a top-level module is its own unit.
"""

from __future__ import annotations

import ast

import pytest
from helpers import REPO

PACKAGE = REPO / "src" / "varprobe"

LAYERS: tuple[tuple[str, ...], ...] = (
    # Lowest first. A unit imports only units of its own layer or of a layer above it in this
    # table; units of one layer may import each other, but not in a circle.
    ("words", "credentials", "published", "workflow_files", "profiles", "stage_times",
     "families", "tables", "model_strings"),                          # foundations: no package imports but tables'
    ("data",),                                       # datasets: fetch, check, read
    ("metrics", "models"),                           # distances and estimators; loading a model
    ("probes", "sampling"),                          # text features; decoding a model
    ("api", "finetune", "run_plan"),                 # API models; fine-tuning; the run plan
    ("analysis", "plots"),                           # the studies' science; figures of tables
    ("results_page", "explorer", "resume", "reporting", "config_checks",
     "availability"),                                # reading results; the config's checks
    ("run_record", "run_comparison", "plan_estimate", "evaluation", "config_loading"),  # a run's record,
                                                     # runs compared, a config's plan; one model's study
                                                     # without Snakemake; reading the config files
    ("commands",),                                   # what the subcommands share
    ("cli", "__main__", "varprobe"),                 # the command line; the package's own names (evaluate)
)
"""The package's units in layers, lowest first."""


def module_name(path) -> str:
    """The dotted name of the module in ``path`` (a package by its ``__init__``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(node: ast.AST, package: str) -> list[str]:
    """The dotted names an import statement ``node`` in package ``package`` reads: ``import M``
    reads ``M``; ``from P import N`` reads ``P.N`` and ``P`` (the caller keeps those that are
    modules); a relative ``from`` is resolved against ``package``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        parent = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(parent + ([node.module] if node.module else []))
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_graph() -> dict[str, set[str]]:
    """{module: the package's modules it imports}; ``from P import N`` counts as importing
    ``P.N`` where that is a module, else ``P``."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = imported_names(node, package)
            if isinstance(node, ast.ImportFrom):
                base, members = names[0], names[1:]
                imported.update(m if m in paths else base for m in members)
            else:
                imported.update(names)
        graph[name] = {m for m in imported if m in paths and m != name}
    return graph


FAMILY_ROLES = {"analysis": "analysis", "authors": "analysis", "codings": "analysis", "plots": "plots", "cli": "cli",
                "page": "results_page"}
"""The unit of each module of an analysis family's folder (``varprobe.families.<name>.<role>``):
its science is in the analyses' layer, its figures in the plots', its subcommands in the command
line's and its page section in the results page's; its declaration (the folder's ``__init__``)
is in ``families``."""


def unit(module: str) -> str:
    """The folder or top-level module that ``module`` belongs to: ``varprobe.analysis.next_word``
    is in ``analysis``, ``varprobe.tables`` is ``tables``, ``varprobe`` itself is ``varprobe``; a
    family's module by its role (``FAMILY_ROLES``): ``varprobe.families.regression.plots`` is in
    ``plots``."""
    parts = module.split(".")
    if parts[1:2] == ["families"] and len(parts) == 4:
        return FAMILY_ROLES[parts[3]]
    return parts[1] if len(parts) > 1 else parts[0]


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """{unit: the other units its modules import}."""
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        units.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    return units


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one node
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


def layer_of() -> dict[str, int]:
    """{unit: its layer's position in ``LAYERS``, 0 lowest}."""
    return {name: depth for depth, layer in enumerate(LAYERS) for name in layer}


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """Every import of ``graph`` from a module to one of a higher layer, as
    ``"importer -> imported (layer a < layer b)"``."""
    return sorted(f"{module} -> {target} ({unit(module)}: layer {layers[unit(module)]} < "
                  f"{unit(target)}: layer {layers[unit(target)]})"
                  for module, targets in graph.items() for target in targets
                  if layers[unit(module)] < layers[unit(target)])


def test_the_check_finds_modules_that_import_each_other_and_longer_circles():
    graph = {"a": {"b", "c"}, "b": {"a"}, "c": set(), "d": {"a"}}
    assert import_circles(graph) == [["a", "b"]]
    assert import_circles({"p": {"q"}, "q": {"r"}, "r": {"p"}, "s": {"p"}}) == [["p", "q", "r"]]


def test_a_folder_circle_is_found_where_its_modules_make_none():
    graph = {"varprobe.x.a": {"varprobe.y.b"}, "varprobe.y.b": set(),
             "varprobe.y.c": {"varprobe.x.d"}, "varprobe.x.d": set()}
    assert import_circles(graph) == []
    assert import_circles(unit_graph(graph)) == [["x", "y"]]


def test_relative_and_function_level_imports_are_read():
    source = "from . import b\nfrom ..c import d\ndef f():\n    import varprobe.e\n"
    names = [n for node in ast.walk(ast.parse(source)) for n in imported_names(node, "varprobe.x")]
    assert {"varprobe.x.b", "varprobe.c.d", "varprobe.e"} <= set(names)
    assert "varprobe.families.regression.plots" in import_graph()["varprobe.families.regression.cli"]


def test_an_upward_import_is_named():
    assert upward_imports({"varprobe.tables": {"varprobe.analysis.family"}},
                          {"tables": 0, "analysis": 5}) == [
        "varprobe.tables -> varprobe.analysis.family (tables: layer 0 < analysis: layer 5)"]


def test_every_unit_of_the_package_has_a_layer():
    named = [name for layer in LAYERS for name in layer]
    assert len(named) == len(set(named)), "a unit is in two layers"
    assert set(unit_graph(import_graph())) == set(named)


def test_no_module_imports_one_that_imports_it_back():
    assert import_circles(import_graph()) == []


def test_no_folder_imports_one_that_imports_it_back():
    assert import_circles(unit_graph(import_graph())) == []


def test_no_module_imports_from_a_higher_layer():
    upward = upward_imports(import_graph(), layer_of())
    if upward:
        pytest.fail("imports from a lower layer to a higher one (tests/test_layers.py LAYERS):\n"
                    + "\n".join(upward))


def test_the_analyses_read_no_command_line():
    """``varprobe.analysis`` and the families' analysis modules are the science: their command-line
    handlers live in ``varprobe.cli`` and the families' ``cli`` modules."""
    graph_imports = {
        module_name(path): [ast.unparse(node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                            if isinstance(node, (ast.Import, ast.ImportFrom))
                            and "argparse" in imported_names(node, "varprobe.analysis")]
        for path in [*(PACKAGE / "analysis").glob("*.py"), *(PACKAGE / "families").glob("*/analysis.py"),
                     *(PACKAGE / "families").glob("*/authors.py")]
    }
    assert {module: found for module, found in graph_imports.items() if found} == {}


APART = {"metrics": {"models", "sampling"}, "probes": {"models", "sampling"},
         "plots": {"models", "sampling", "api", "finetune"}}
"""Units of one layer or below that must still not read each other: metrics and probes take
texts and numbers, never a model; plots draw tables only."""


def test_metrics_and_probes_import_no_model_and_plots_only_tables():
    units = unit_graph(import_graph())
    assert {name: sorted(units[name] & apart) for name, apart in APART.items() if units[name] & apart} == {}
