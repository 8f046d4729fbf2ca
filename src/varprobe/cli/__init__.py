"""Command line: a user's commands (varprobe run, varprobe list), then one per workflow stage.

The user's commands are ``USER_COMMANDS``; the help lists the stage commands, which the
Snakemake rules call, under a heading of their own. Every stage subcommand reads tables, calls
the package and writes tables atomically; errors end the process with a one-line message that
names the culprit (``varprobe: error: ...``). Each study's subcommands live in a module of this
package with a ``register(sub)`` function; so do each analysis family's, in its folder's ``cli``
module (``varprobe.families.<name>.cli``).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import textwrap

from varprobe.families import families
from varprobe.cli import plan, runs
from varprobe.cli import (
    api, explorer, finetune, page_measures, production, production_readings, provo, report, run, setup)

STUDIES = (run, setup, provo, api, production, finetune, page_measures, production_readings, report, explorer)
STUDIES += (runs, plan)  # run records, comparisons and plans

USER_COMMANDS = ("run", "list", "evaluate", "plan", "compare", "collect", "install-profile", "stage-times")
"""The commands a user calls (those registered are listed first in the help); every other one is a
workflow stage that the rules call."""


def build_parser() -> argparse.ArgumentParser:
    """The ``varprobe`` argument parser with one subcommand per stage."""
    parser = argparse.ArgumentParser(prog="varprobe", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(required=True, metavar="COMMAND", title="commands")
    for study in STUDIES:
        study.register(sub)
    for family in dict.fromkeys(families().values()):
        importlib.import_module(family.module("cli")).register(sub)
    _stages_apart(parser, sub)
    return parser


def _stages_apart(parser: argparse.ArgumentParser, sub) -> None:
    """List only ``USER_COMMANDS`` under the help's commands, and the stage commands (still
    callable, each with its own ``--help``) by name under a heading of their own."""
    entries = sub._choices_actions  # argparse keeps the help's lines of subcommands here
    stages = [e.dest for e in entries if e.dest not in USER_COMMANDS]
    entries[:] = [e for e in entries if e.dest in USER_COMMANDS]
    parser.epilog = ("workflow stages (the Snakemake rules call these; `varprobe STAGE --help`):\n"
                     + textwrap.fill(", ".join(stages), width=88, initial_indent="  ", subsequent_indent="  ",
                                   break_on_hyphens=False))


CONSOLE_FD = "VARPROBE_CONSOLE_FD"
"""The environment variable that names a file descriptor of the console: the workflow's stderr,
which the rules' shell prefix keeps before a job's output goes to its log (``CONSOLE_PREFIX``)."""

CONSOLE_PREFIX = f"exec {{{CONSOLE_FD}}}>&2; export {CONSOLE_FD}; "
"""The bash that keeps the console for ``CONSOLE_FD`` (the start of every rule's command)."""

FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT})
"""The errors of a full disk (or quota), where the log may be on that disk too."""


def report_error(message: str, err: BaseException) -> None:
    """Write ``message`` to stderr (a job's log) and, where it is an error of a full disk or
    stderr cannot take it, to the console too (``CONSOLE_FD``, when it names another file):
    a log on the full disk would be left empty, the failure said nowhere.

    Parameters
    ----------
    message : str
        The line, with its newline.
    err : BaseException
        What failed.

    Returns
    -------
    None
    """
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
        logged = True
    except (OSError, ValueError):
        logged = False
    console = os.environ.get(CONSOLE_FD, "")
    if (logged and getattr(err, "errno", None) not in FULL_DISK) or not console.isdigit():
        return
    if logged and _same_file(int(console), sys.stderr):
        return
    try:
        os.write(int(console), message.encode(errors="replace"))
    except OSError:
        pass  # no console either: nothing more can be said


def _same_file(fd: int, stream) -> bool:
    """Whether the file descriptor ``fd`` is the file ``stream`` writes to."""
    try:
        return os.path.sameopenfile(fd, stream.fileno())
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``varprobe`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError, RuntimeError, KeyError) as err:
        report_error(f"varprobe: error: {err}\n", err)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
