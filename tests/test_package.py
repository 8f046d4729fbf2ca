"""The package installs as a package: ``pyproject.toml`` declares every distribution that
``src/varprobe`` imports (read with ``ast``: imports inside functions count), the pins of
``envs/`` (the tested set: the lock, the development and the offline packages' lists) pin every
declared one at a version its bound admits, and a wheel built from the checkout works in a fresh
virtual environment that holds only what the wheel requires.

That environment is not filled from an index (torch and the rest would take many minutes and the
network): it gets, as links into this environment's site-packages (which ``scripts/bootstrap.sh``
filled from those pins), exactly the distributions that the wheel's declared requirements need,
followed through each one's own requirements and extras. A distribution the package imports but
does not declare is then absent there, as after ``pip install`` of the wheel with the pins as
constraints, and its module fails to import."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import runpy
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import REPO
from test_run_command import assert_same_tables, config_path_run, run_command, small_base
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

PACKAGE = REPO / "src" / "varprobe"
WORKFLOW_FILES = runpy.run_path(str(PACKAGE / "workflow_files.py"))["FILES"]
"""What ``setup.py`` copies into the wheel (``varprobe.workflow_files.FILES``)."""
PACKAGED = runpy.run_path(str(PACKAGE / "workflow_files.py"))["PACKAGED"]
LOCKS = tuple(REPO / "envs" / f"requirements-{name}.txt" for name in ("lock", "dev", "offline"))


def project() -> dict:
    """pyproject's ``[project]`` table."""
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def declared() -> dict[str, Requirement]:
    """pyproject's requirements, its ``dependencies`` and every optional extra's, by canonical name."""
    extras = project().get("optional-dependencies", {}).values()
    lines = project()["dependencies"] + [line for extra in extras for line in extra]
    return {canonicalize_name(Requirement(line).name): Requirement(line) for line in lines}


def lock_pins() -> dict[str, str]:
    """The ``name==version`` pins of the lock, the development list and the offline packages'
    list (``scripts/bootstrap.sh`` installs the three), by canonical name."""
    lines = [line.split("#")[0].strip() for lock in LOCKS for line in lock.read_text().splitlines()]
    return {canonicalize_name(name): version for name, _, version in
            (line.partition("==") for line in lines if line)}


def third_party_imports() -> dict[str, set[str]]:
    """{top-level module: the package's files importing it} for every absolute import of a module
    outside the standard library and the package itself (``importlib.import_module`` of a name a
    config gives, a model package, is not an import of the package)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in (m.split(".")[0] for m in modules):
                if module not in sys.stdlib_module_names and module != "varprobe":
                    found.setdefault(module, set()).add(str(path.relative_to(REPO)))
    return found


def distributions_of(module: str) -> set[str]:
    """The installed distributions that provide top-level ``module``; a module that none provides
    (an optional one, not installed) is taken to be named as its distribution."""
    return {canonicalize_name(d) for d in importlib.metadata.packages_distributions().get(module, [module])}


def test_the_scan_sees_imports_inside_functions():
    imports = third_party_imports()
    assert "src/varprobe/families/regression/analysis.py" in imports["pymc"]       # inside a function
    assert {"datasets", "selenium", "jinja2", "sklearn"} <= imports.keys()
    assert not {"os", "varprobe", "__future__"} & imports.keys()


def test_every_imported_distribution_is_declared():
    names = declared().keys()
    undeclared = {module: sorted(files) for module, files in third_party_imports().items()
                  if not distributions_of(module) & names}
    assert not undeclared, f"imported by the package, not declared in pyproject.toml: {undeclared}"


def test_the_lock_pins_every_bounded_requirement_within_its_bounds():
    """A requirement with a bound was tested: the lock pins it at a version the bound admits (a
    bare name, ``datasets``, has no tested version)."""
    pins = lock_pins()
    for name, requirement in declared().items():
        if requirement.specifier:
            assert name in pins, f"pyproject.toml requires {requirement}; the lock does not pin {name}"
            assert requirement.specifier.contains(pins[name], prereleases=True), (
                f"pyproject.toml requires {requirement}; the lock pins {name}=={pins[name]}")


def build_wheel(tmp_path: Path) -> Path:
    """A wheel of the checkout's package, built without network from a copy of what it is made
    of (``pyproject.toml``, ``setup.py``, the licence, ``src/`` and the workflow's files that
    ``setup.py`` copies in, ``varprobe.workflow_files.FILES``), with this environment's setuptools."""
    source = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "src", source / "src", ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "LICENSE", *WORKFLOW_FILES):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=ignore)
        else:
            shutil.copy(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "-w", str(tmp_path / "dist"), str(source)], check=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("varprobe-*.whl")
    return wheel


def wheel_requirements(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of ``wheel``'s metadata."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode()
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]


def needed(lines: list[str] | None, extras: set[str]) -> list[Requirement]:
    """The requirements among ``lines`` that apply here to a distribution asked for with ``extras``."""
    requirements = [Requirement(line) for line in lines or []]
    return [r for r in requirements
            if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in {"", *extras})]


def requirement_closure(lines: list[str]) -> dict[str, importlib.metadata.Distribution]:
    """{canonical name: this environment's distribution} for everything that ``lines`` need, each
    distribution's own requirements (with the extras asked of it) followed in turn; an
    AssertionError names a requirement that no installed version meets."""
    found: dict[str, importlib.metadata.Distribution] = {}
    extras: dict[str, set[str]] = {}
    todo = needed(lines, set())
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        try:
            distribution = found.get(name) or importlib.metadata.distribution(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            raise AssertionError(f"{requirement} is required and not installed") from None
        assert requirement.specifier.contains(distribution.version, prereleases=True), (
            f"{requirement} is required; installed: {distribution.version}")
        if name in found and set(requirement.extras) <= extras[name]:
            continue
        found[name] = distribution
        extras.setdefault(name, set()).update(requirement.extras)
        todo.extend(needed(distribution.requires, extras[name]))
    return found


def link_distributions(distributions: dict[str, importlib.metadata.Distribution], site: Path) -> None:
    """Make ``distributions`` (installed here) importable in ``site``: a link for each top-level
    file or folder only they hold, a link per file where another distribution shares the folder
    (a namespace package, ``__pycache__``), so nothing outside them comes along."""
    owners: dict[str, set[str]] = {}
    for distribution in importlib.metadata.distributions():
        for top in {f.parts[0] for f in distribution.files or [] if f.parts[0] != ".."}:
            owners.setdefault(top, set()).add(canonicalize_name(distribution.metadata["Name"]))
    for name, distribution in distributions.items():
        assert distribution.files is not None, f"{name} has no RECORD: its files are unknown"
        for file in distribution.files:
            if file.parts[0] == "..":                         # its scripts, in bin/
                continue
            whole = owners[file.parts[0]] == {name}
            relative = Path(file.parts[0]) if whole else Path(*file.parts)
            target = site / relative
            if target.exists() or target.is_symlink() or not distribution.locate_file(relative).exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(distribution.locate_file(relative))


def run(command: list, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """``command`` run in ``cwd`` without this checkout on the path (no ``PYTHONPATH``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def modules_of(files: set[str]) -> list[str]:
    """The package's module names for its ``files`` (paths inside ``varprobe/``), a package by its
    ``__init__``; ``__main__`` (it runs the command line) left out."""
    parts = [Path(f).with_suffix("").parts for f in sorted(files) if f.endswith(".py")]
    names = ["varprobe" + "".join("." + p for p in (m[:-1] if m[-1] == "__init__" else m)) for m in parts]
    return [name for name in names if name != "varprobe.__main__"]


def required_imports() -> list[str]:
    """The third-party modules the package imports, but an optional feature's (an extra's); the
    test imports them itself, since importing the package's modules skips imports inside functions."""
    extras = project().get("optional-dependencies", {}).values()
    optional = {canonicalize_name(Requirement(line).name) for extra in extras for line in extra}
    return sorted(m for m in third_party_imports() if not distributions_of(m) & optional)


@pytest.mark.slow
def test_a_wheel_of_the_checkout_works_with_only_its_declared_requirements(tmp_path):
    """The wheel holds every file of ``src/varprobe`` and of the workflow; a fresh environment of
    the wheel and what its requirements need (each at the lock's version) passes ``pip check``,
    imports every module of the package and every third-party module it imports, and runs
    ``varprobe --help`` (``wheel_environment``)."""
    wheel_environment(tmp_path)


def wheel_environment(tmp_path: Path) -> Path:
    """A fresh virtual environment of the checkout's wheel, checked as
    ``test_a_wheel_of_the_checkout_works_with_only_its_declared_requirements`` says: its folder."""
    wheel = build_wheel(tmp_path)
    files = {n.removeprefix("varprobe/") for n in zipfile.ZipFile(wheel).namelist() if n.startswith("varprobe/")}
    sources = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    sources |= {f"{PACKAGED}/{p.relative_to(REPO)}" for name in WORKFLOW_FILES
                for p in ([REPO / name] if (REPO / name).is_file() else (REPO / name).rglob("*"))
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert files == sources, f"the wheel lacks {sorted(sources - files)}, adds {sorted(files - sources)}"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
                     "--no-index", wheel], tmp_path)
    assert installed.returncode == 0, installed.stderr
    closure = requirement_closure(wheel_requirements(wheel))
    pins = lock_pins()
    unpinned = sorted(name for name in closure if name not in pins)
    assert not unpinned, f"the wheel's requirements need distributions the lock does not pin: {unpinned}"
    off_lock = {name: d.version for name, d in closure.items()
                if not SpecifierSet(f"=={pins[name]}").contains(d.version)}
    assert not off_lock, f"installed here at other versions than the lock's: {off_lock}"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path).stdout.strip())
    link_distributions(closure, site)

    checked = run([sys.executable, "-m", "pip", "--python", python, "check"], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    code = ("import importlib, varprobe\n"
            f"for name in {modules_of(files) + required_imports()!r}: importlib.import_module(name)\n"
            "print(varprobe.__file__)")
    imported = run([python, "-c", code], tmp_path)
    assert imported.returncode == 0, imported.stderr[-4000:]
    assert Path(imported.stdout.strip()).is_relative_to(site)
    helped = run([venv / "bin" / "varprobe", "--help"], tmp_path)
    assert helped.returncode == 0 and "usage: varprobe" in helped.stdout, helped.stderr[-4000:]
    return venv


@pytest.mark.slow
def test_varprobe_run_from_a_wheel_outside_the_checkout_gives_the_config_paths_tables(
        tmp_path, tiny_model_dir, data_mirror):
    """``pip install`` of the wheel into a fresh environment, then ``varprobe run`` there, in a
    folder outside the checkout, runs the workflow the wheel carries (no file of the checkout on
    the path) and writes the same tables as the checkout's ``snakemake --configfile`` path."""
    venv = wheel_environment(tmp_path / "wheel")
    located = run([venv / "bin" / "python", "-c", "from varprobe.workflow_files import root; print(root())"], tmp_path)
    assert Path(located.stdout.strip()).is_relative_to(venv) and PACKAGED in located.stdout, located.stderr
    base = small_base(tmp_path / "base", data_mirror)
    folder = tmp_path / "runs" / "tiny"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    command = run_command(tiny_model_dir, base, folder, [str(venv / "bin" / "varprobe")])
    ran = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-6000:]
    reference = config_path_run(tmp_path / "config-path", base, tiny_model_dir)
    assert reference.returncode == 0, (reference.stdout + reference.stderr)[-6000:]
    assert_same_tables(folder / "results", tmp_path / "config-path" / "results")


def test_the_licence_and_the_citation_are_those_the_package_declares():
    """LICENSE is the MIT text that pyproject.toml names; CITATION.cff is valid CFF 1.2 for this
    version, and it cites the three papers whose studies the package runs."""
    import yaml

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == project["version"]
    assert citation["license"] == "MIT" and citation["authors"]
    cited = {r["authors"][0]["family-names"]: r["year"] for r in citation["references"]}
    assert cited == {"Ilia": 2024, "Giulianelli": 2023, "Liu": 2024}
