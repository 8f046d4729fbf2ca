"""The analysis-family registry (``varprobe.families``): each family's declaration module declares
it once, and the command line, the table contracts, the workflow and the config checks read it."""

from __future__ import annotations

import ast
import importlib

import pytest
import yaml
from helpers import REPO

from varprobe import tables
from varprobe.families import families, family_tables
from varprobe.cli import build_parser
from varprobe.config_checks import ConfigError, check_config

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def test_every_family_is_a_folder_with_its_rules_schema_entry_and_subcommands():
    registered = families()
    analyses = SCHEMA["properties"]["analyses"]["properties"]
    assert set(registered) == set(analyses)  # every schema entry runs a family, and back
    parser_commands = set(build_parser()._subparsers._group_actions[0].choices)
    for key, family in registered.items():
        assert family.folder == REPO / "src/varprobe/families" / family.name, key
        assert family.rules.is_file(), key
        assert key in family.keys
        # Its science and its subcommands are modules of its folder.
        assert importlib.import_module(family.module("analysis")), key
        assert callable(importlib.import_module(family.module("cli")).register), key
    # The paper's analyses, each from its own module.
    assert {"sample-size", "regression", "token-calibration", "syntactic-tvd", "semantic-tvd",
            "biased-estimator", "token-level", "oracle-replacement"} <= parser_commands


def test_family_tables_are_declared_contracts():
    declared = family_tables()
    assert "sample_size_summary" in declared and "regression_coefficients" in declared
    assert not set(declared) & set(tables.SCHEMAS)
    assert tables.declared_columns("sample_size_summary")["mse"] == "float64"
    with pytest.raises(KeyError, match="no table schema 'sample_size_sumary'"):
        tables.declared_columns("sample_size_sumary")


def test_a_family_table_that_redeclares_a_study_table_is_named(monkeypatch):
    import varprobe.families as family_module

    clash = family_module.Family(name="clash", keys=("clash",), folder=REPO,
                                 tables={"provo_tvd": {"tvd": "float64"}})
    monkeypatch.setattr(family_module, "families", lambda: {"clash": clash})
    with pytest.raises(ValueError, match="table 'provo_tvd' of analysis family 'clash' is already "
                                         "declared by varprobe.tables.SCHEMAS"):
        tables.declared_columns("sample_size_summary")


def test_an_analysis_key_no_family_answers_to_is_named():
    with pytest.raises(ConfigError, match=r"analyses: 'sample_sizes' is not an analysis family "
                                          r"\(those are: biased_estimator, .*sample_size"):
        check_config({"models": [], "analyses": {"sample_sizes": {}}})


def test_a_familys_value_lists_are_checked():
    with pytest.raises(ConfigError, match=r"analyses\.sample_size\.sizes.*10"):
        check_config({"models": [], "analyses": {"sample_size": {"sizes": [10, 10]}}})


def test_a_family_on_the_provo_tables_needs_the_provo_study():
    on_provo = [key for key, family in families().items() if family.provo]
    assert "regression" in on_provo and "token_calibration" not in on_provo
    with pytest.raises(ConfigError) as err:
        check_config({"models": [], "analyses": {key: {} for key in on_provo}})
    assert str(err.value).splitlines()[1:] == [
        f"  analyses.{key}: it analyses the Provo study's tables, and the config has no `provo:` "
        f"section; add one, or remove analyses.{key}" for key in on_provo
    ]
    check_config({"models": [], "provo": {"texts": [1]}, "analyses": {key: {} for key in on_provo}})


def test_a_familys_declaration_imports_nothing():
    """The table contracts (the lowest layer) read the declarations, so they may not reach up."""
    for family in dict.fromkeys(families().values()):
        path = family.folder / "__init__.py"
        imports = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert imports == [], f"{path} imports {[ast.unparse(node) for node in imports]}"


def test_a_family_says_why_it_cannot_run_in_its_own_analysis_module():
    from varprobe.availability import reason_function

    says = {family.name for family in families().values() if reason_function(family.name)}
    assert says == {"oracle_replacement", "regression", "word_classes"}
