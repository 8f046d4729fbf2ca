"""scripts/stage_times.py: a run's benchmark files summed per stage (the last row of each)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "stage_times.py"
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _module():
    spec = importlib.util.spec_from_file_location("stage_times", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bench(path: Path, *rows: tuple[float, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(f"{s}\t0:00:01\t1\t1\t1\t1\t0\t0\t50\t{c}\n" for s, c in rows))


def test_jobs_are_summed_per_stage_from_their_last_row(tmp_path):
    stage_times = _module()
    _bench(tmp_path / "production_sample/asset/m/ancestral.tsv", (30.0, 50.0))
    _bench(tmp_path / "production_sample/wmt14/m/ancestral.tsv", (99.0, 1.0), (12.5, 20.0))
    _bench(tmp_path / "provo_data/provo.tsv", (2.0, 1.5))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty/job.tsv").write_text("")
    times = stage_times.stage_times(tmp_path)
    assert times == {"production_sample": (2, 42.5, 70.0), "provo_data": (1, 2.0, 1.5)}
    assert list(times) == ["production_sample", "provo_data"]
    text = stage_times.table(times)
    assert text.splitlines()[2] == "| production_sample | 2 | 42 | 70 |"
    assert text.splitlines()[-1] == "| total | 3 | 44 | 72 |"
