"""The memory the jobs that parse a user's file ask for grows with the file
(``varprobe.data.parse_memory``, ``job_resources(..., parses_input=True)``): issue 70, item 17,
where a 100 MB corpus peaked at 1.08 GB in a job that asked for the default 1,000 MB."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
import yaml

from helpers import output, snakemake
from varprobe.data.parse_memory import (
    BASE_MB, PARQUET_PER_THOUSAND_ROWS, PER_MB, PER_THOUSAND_ROWS, file_rows, parse_mem_mb)

COLUMNS = {"passage": "passage", "position": "position", "text": "text", "response": "response"}


def _corpus(path, passages: int) -> None:
    """A cloze corpus of ``passages`` ten-word passages, one row per response, 4 per position."""
    text = " ".join(f"w{k}" for k in range(10))
    rows = [(p, k, text, r) for p in range(1, passages + 1) for k in range(2, 11) for r in ("a", "b", "a", "c")]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, sep="\t", index=False)


def test_the_estimate_counts_a_text_files_megabytes_and_rows_and_a_parquet_files_rows(tmp_path):
    tsv, parquet = tmp_path / "c.tsv", tmp_path / "c.parquet"
    _corpus(tsv, 500)
    _corpus(parquet, 500)
    assert file_rows(tsv) == 500 * 9 * 4 + 2  # the header and the last line's end
    assert file_rows(parquet) == 500 * 9 * 4
    megabytes = tsv.stat().st_size / 2**20
    assert parse_mem_mb([tsv]) == math.ceil(BASE_MB + PER_MB * megabytes + PER_THOUSAND_ROWS * 18.002)
    assert parse_mem_mb([parquet]) == math.ceil(BASE_MB + PARQUET_PER_THOUSAND_ROWS * 18)
    assert parse_mem_mb([tsv, tmp_path / "not-fetched-yet.csv"]) == parse_mem_mb([tsv])


@pytest.mark.slow  # a Snakemake run
def test_the_corpus_parsing_job_asks_for_the_memory_its_file_needs(tmp_path):
    """With provo_data's configured mem_mb below what parsing the corpus takes, the job asks for
    the estimate (on main: the configured mem_mb, whatever the file)."""
    _corpus(tmp_path / "corpus.tsv", 2000)
    config = {
        "models": [{"name": "chat", "api": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}],
        "provo": {"corpus": {"name": "mine", "file": "corpus.tsv", "language": "en", "columns": COLUMNS},
                  "texts": "all"},
        "resources": {"provo_data": {"mem_mb": 100}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "results/provo/contexts.parquet")
    assert run.returncode == 0, output(run)
    [asked] = re.findall(r"mem_mb=(\d+)", output(run).split("rule provo_data:", 1)[1].split("\n\n", 1)[0])
    digest = next((tmp_path / "results" / "digests").rglob("*.sha256"))
    assert int(asked) == parse_mem_mb([tmp_path / "corpus.tsv", digest]) > 100
