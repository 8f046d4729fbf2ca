"""varprobe.stage_times: a run's benchmark files summed per stage (the last row of each)."""

from __future__ import annotations

from pathlib import Path

from varprobe.stage_times import Stage, stage_times, table

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path: Path, *rows: tuple[float, float, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(f"{s}\t0:00:01\t{m}\t1\t1\t1\t0\t0\t50\t{c}\n" for s, c, m in rows))


def test_jobs_are_summed_per_stage_from_their_last_row(tmp_path):
    _bench(tmp_path / "production_sample/asset/m/ancestral.tsv", (30.0, 50.0, 900.0))
    _bench(tmp_path / "production_sample/wmt14/m/ancestral.tsv", (99.0, 1.0, 5000.0), (12.5, 20.0, 700.0))
    _bench(tmp_path / "provo_data/provo.tsv", (2.0, 1.5, 100.0))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty/job.tsv").write_text("")
    times = stage_times(tmp_path)
    assert times == {"production_sample": Stage(jobs=2, wall_s=42.5, cpu_s=70.0, longest_s=30.0, peak_rss_mb=900.0),
                     "provo_data": Stage(jobs=1, wall_s=2.0, cpu_s=1.5, longest_s=2.0, peak_rss_mb=100.0)}
    assert list(times) == ["production_sample", "provo_data"]
    text = table(times)
    assert text.splitlines()[2] == "| production_sample | 2 | 42 | 70 | 30 | 900 |"
    assert text.splitlines()[-1] == "| total | 3 | 44 | 72 | 30 | 900 |"


def test_a_cell_snakemake_left_empty_counts_as_zero(tmp_path):
    path = tmp_path / "explorer/explorer.tsv"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + "3.0\t0:00:03\t-\t-\t-\t-\t-\t-\t-\t-\n")
    assert stage_times(tmp_path) == {
        "explorer": Stage(jobs=1, wall_s=3.0, cpu_s=0.0, longest_s=3.0, peak_rss_mb=0.0)}
