"""The command line's JSON options: parsed once, by argparse, with errors that name the option."""

from __future__ import annotations

import argparse

import pytest

from varprobe.cli import build_parser
from varprobe.commands import json_value


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, by name."""
    return dict(build_parser()._subparsers._group_actions[0].choices)


def test_every_json_option_is_parsed_by_json_value():
    options = [(name, action) for name, parser in subcommands().items() for action in parser._actions
               if "JSON" in (action.help or "")]
    assert {"--model", "--decoding", "--settings", "--models", "--tables"} <= {
        a.option_strings[0] for _, a in options}
    unparsed = [f"{name} {a.option_strings[0]}" for name, a in options if a.type is not json_value]
    assert unparsed == []


def test_a_model_entry_arrives_parsed():
    args = build_parser().parse_args([
        "provo-sample", "--model", '{"name": "tiny", "pretrained": "x"}', "--decoding",
        '{"name": "ancestral"}', "--contexts", "c", "--n-samples", "1", "--max-tokens", "1",
        "--batch-size", "1", "--seed", "0", "--out", "o"])
    assert args.model == {"name": "tiny", "pretrained": "x"} and args.decoding == {"name": "ancestral"}


@pytest.mark.parametrize("option", ["--model", "--decoding"])
def test_bad_json_is_an_error_of_its_option(option, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["production-sample", option, "{name: tiny}"])
    assert stop.value.code == 2
    assert f"argument {option}: not valid JSON (Expecting property name" in capsys.readouterr().err


def test_the_provo_control_options_are_those_of_every_controlled_job(passage_one, tmp_path):
    """provo-oracle takes the control's options from ``commands.add_control`` and scores with
    ``commands.control_settings``, as the analysis families' controlled jobs do."""
    from varprobe import tables
    from varprobe.cli import main

    control = {"--contexts", "--responses", "--seed", "--resplits", "--ece-bins", "--bootstrap"}
    for name in ("provo-divergence", "provo-oracle", "token-level"):
        assert control <= set(subcommands()[name]._option_string_actions), name
    out = {k: tmp_path / f"{k}.parquet" for k in ("tvd", "system", "human")}
    main(["provo-oracle", "--contexts", str(passage_one["contexts"]), "--responses",
          str(passage_one["responses"]), "--seed", "0", "--resplits", "2", "--ece-bins", "5",
          "--bootstrap", "20", "--model", "oracle", "--decoding", "oracle2", "--tvd-out", str(out["tvd"]),
          "--system-out", str(out["system"]), "--human-out", str(out["human"])])
    system = tables.read(out["system"], "provo_system")
    assert system[["model", "decoding"]].values.tolist() == [["oracle", "oracle2"]]
    assert len(tables.read(out["tvd"], "provo_tvd")) == 4
