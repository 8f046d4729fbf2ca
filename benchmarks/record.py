"""The benchmarks' shared record: each run appends one line (the machine, the options, the figures)
to ``benchmarks/records.jsonl``, from which ``docs/generate.py`` writes the performance page.

A line holds ``benchmark``, ``date`` (UTC), ``commit`` (``git describe --always --dirty`` of the
checkout), ``machine`` (CPU model, the vector flags that decide the speed of a CPU product, cores,
load average when recorded), ``options`` (the run's command-line options), ``figures`` (name ->
number or text) and an optional ``note``. ``VARPROBE_BENCHMARK_RECORD`` names another file (the
tests point it at a temporary one).

A measurement made by hand (the default job, the test suite) is recorded from the shell:
``python benchmarks/record.py test_suite seconds_in_all=834 tests=788 --note "fresh clone"``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import subprocess
from pathlib import Path

RECORD = Path(__file__).resolve().parent / "records.jsonl"
RECORD_ENV = "VARPROBE_BENCHMARK_RECORD"
# The CPU flags that decide how fast float32, bfloat16 and int8 products run.
VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16")


def machine() -> dict:
    """This machine as a record states it: CPU model, vector flags, cores, 1-minute load average."""
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    fields = dict(line.split(":", 1) for line in cpuinfo.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    flags = set(fields.get("flags", "").split())
    torch = sys.modules.get("torch")  # a benchmark that ran on a GPU has imported torch already
    gpu = torch.cuda.get_device_name() if torch is not None and torch.cuda.is_available() else None
    return {"cpu": fields.get("model name", "unknown"),
            "flags": " ".join(flag for flag in VECTOR_FLAGS if flag in flags),
            "cores": os.cpu_count(), "load": round(os.getloadavg()[0], 2), "gpu": gpu}


def commit() -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes), or ``unknown`` outside git."""
    done = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=RECORD.parent,
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def option(value) -> str:
    """An option as the record writes it: a path inside the checkout relative to it (the record
    is committed, and the same run in another clone writes the same line), anything else as text."""
    checkout = RECORD.parent.parent
    if isinstance(value, Path) and (path := value.resolve()).is_relative_to(checkout):
        return str(path.relative_to(checkout))
    return str(value)


def record(benchmark: str, options: argparse.Namespace | dict, note: str = "", **figures) -> Path:
    """Append one run of ``benchmark`` (its ``options`` and ``figures``) to the record; its path."""
    options = vars(options) if isinstance(options, argparse.Namespace) else options
    line = {"benchmark": benchmark, "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "commit": commit(), "machine": machine(),
            "options": {key: option(value) for key, value in options.items()},
            "figures": figures, "note": note}
    path = Path(os.environ.get(RECORD_ENV) or RECORD)
    with path.open("a") as out:
        out.write(json.dumps(line) + "\n")
    return path


def figure(text: str) -> tuple[str, float | str]:
    """``name=value`` as (name, number), or (name, text) where the value is no number."""
    name, _, value = text.partition("=")
    if not name or not _:
        raise argparse.ArgumentTypeError(f"{text!r}: expected name=value")
    try:
        return name, float(value)
    except ValueError:
        return name, value


def main() -> None:
    """Record a measurement made by hand: ``record.py BENCHMARK name=value ... [--note TEXT]``."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("benchmark")
    parser.add_argument("figures", nargs="+", type=figure)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    print(f"recorded in {record(args.benchmark, {}, args.note, **dict(args.figures))}")


if __name__ == "__main__":
    main()
