"""The command line's JSON options: parsed once, by argparse, with errors that name the option."""

from __future__ import annotations

import argparse
import errno
import os
import sys

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


# ---- issue 70, item 12: a full disk is said on the console, naming the file ------------------

def _asset(raw_dir, out) -> list[str]:
    """``varprobe production-data`` of ASSET's test split from ``raw_dir`` into ``out``."""
    return ["production-data", "--dataset", "asset", "--raw-dir", str(raw_dir), "--split", "test",
            "--out", str(out)]


class _FullDisk:
    """A stream on a full disk: every write fails as the job's log would."""

    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self):
        pass


def _disk_full(*args, **kwargs):
    """pyarrow's failure on a full disk: an OSError with errno ENOSPC and no file name."""
    err = OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")
    err.errno = errno.ENOSPC
    raise err


@pytest.fixture
def asset_dir(data_mirror):
    return data_mirror / "asset"


def test_a_table_that_a_full_disk_stops_is_named_by_the_error(tmp_path, monkeypatch):
    import pandas as pd

    from varprobe import tables

    monkeypatch.setattr(tables.pq, "write_table", _disk_full)
    out = tmp_path / "t.parquet"
    frame = pd.DataFrame({"text_id": [1], "word_number": [2], "response": ["a"], "count": [1]})
    with pytest.raises(OSError) as raised:
        tables.write(frame, out, "provo_responses")
    assert str(raised.value) == f"[Errno 28] No space left on device: '{out}'"
    assert not any(tmp_path.iterdir())  # no partial file left


def test_a_full_disk_reaches_the_console_when_the_log_is_on_it(tmp_path, monkeypatch, asset_dir):
    """On main the error went to the job's log alone, which the full disk left empty."""
    from varprobe import cli, tables

    read, write = os.pipe()
    monkeypatch.setenv(cli.CONSOLE_FD, str(write))
    monkeypatch.setattr(tables.pq, "write_table", _disk_full)
    monkeypatch.setattr(sys, "stderr", _FullDisk())
    out = tmp_path / "instances.parquet"
    with pytest.raises(SystemExit) as stopped:
        cli.main(_asset(asset_dir, out))
    os.close(write)
    said = os.read(read, 4096).decode()
    os.close(read)
    assert stopped.value.code == 1
    assert said == f"varprobe: error: [Errno 28] No space left on device: '{out}'\n"


def test_a_full_disk_is_said_on_the_console_also_when_the_log_takes_it(tmp_path, monkeypatch, capsys, asset_dir):
    from varprobe import cli, tables

    read, write = os.pipe()
    monkeypatch.setenv(cli.CONSOLE_FD, str(write))
    monkeypatch.setattr(tables.pq, "write_table", _disk_full)
    with pytest.raises(SystemExit):
        cli.main(_asset(asset_dir, tmp_path / "x.parquet"))
    os.close(write)
    said = os.read(read, 4096).decode()
    os.close(read)
    assert said == capsys.readouterr().err and "No space left on device" in said


def test_other_errors_stay_in_the_log(tmp_path, monkeypatch, capsys):
    """A missing raw folder is no full disk: its error is the log's alone."""
    from varprobe import cli

    read, write = os.pipe()
    monkeypatch.setenv(cli.CONSOLE_FD, str(write))
    with pytest.raises(SystemExit):
        cli.main(_asset(tmp_path / "nothing here", tmp_path / "x.parquet"))
    os.close(write)
    assert os.read(read, 4096) == b""
    os.close(read)
    assert capsys.readouterr().err.startswith("varprobe: error: ")


def test_the_rules_shell_prefix_keeps_the_console_for_a_log_that_cannot_be_written(tmp_path):
    """The job's shell as the rules run it (varprobe.cli.CONSOLE_PREFIX, then the command with
    its output sent to its log), the log on a full device (/dev/full)."""
    import shlex
    import subprocess

    from varprobe.cli import CONSOLE_PREFIX

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    job = shlex.join([sys.executable, "-m", "varprobe", *_asset(tmp_path / "absent", tmp_path / "x.parquet")])
    command = f"{CONSOLE_PREFIX}{job} > /dev/full 2>&1"
    run = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.startswith("varprobe: error: ") and str(tmp_path / "absent") in run.stderr
