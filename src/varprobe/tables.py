"""Column contracts of every Parquet table the workflow writes, declared once and checked on write
(``SCHEMAS``; an analysis family declares its own tables in ``varprobe.families``).

A table is written atomically (to a temporary file, then renamed): a failed job never leaves a
partial table that looks complete.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

SCHEMAS: dict[str, dict[str, str]] = {
    "provo_contexts": {
        "text_id": "int32", "word_number": "int32", "context": "string",
        "context_length": "int32", "word": "string", "corpus_word": "string",
    },
    "provo_responses": {
        "text_id": "int32", "word_number": "int32", "response": "string", "count": "int64",
    },
    "provo_samples": {
        "text_id": "int32", "word_number": "int32", "sample_index": "int32", "text": "string",
        "word": "string", "failed": "bool", "failure": "string", "n_tokens": "Int32",
        "count": "int64",
    },
    # How an API model's replies became draws (varprobe.api.provo): per context, the requests'
    # replies, the items they held and what was kept; kept + shortfall = requested,
    # valid = items - invalid = kept + extra.
    "provo_api_parse": {
        "text_id": "int32", "word_number": "int32", "mode": "string", "requested": "int64",
        "replies": "int64", "truncated": "int64", "preamble": "int64", "items": "int64",
        "invalid": "int64", "multiword": "int64", "valid": "int64", "kept": "int64",
        "extra": "int64", "shortfall": "int64", "failed": "int64",
    },
    # One row per API system: the sums of its provo_api_parse counts over the contexts.
    "provo_api_summary": {
        "model": "string", "decoding": "string", "mode": "string", "contexts": "int64",
        "requested": "int64", "replies": "int64", "truncated": "int64", "preamble": "int64",
        "items": "int64", "invalid": "int64", "multiword": "int64", "valid": "int64",
        "kept": "int64", "extra": "int64", "shortfall": "int64", "failed": "int64",
    },
    # An exact decoding's outcome masses: one row per resolved word (failure "") and per failure
    # reason (word ""), with the context's unresolved and failure mass and forward tokens.
    "provo_distribution": {
        "text_id": "int32", "word_number": "int32", "word": "string", "failure": "string",
        "probability": "float64", "unresolved_mass": "float64", "failure_mass": "float64",
        "forward_tokens": "int64",
    },
    "provo_tvd": {
        "text_id": "int32", "word_number": "int32", "context_length": "int32",
        "n_draws": "Int64", "n_words": "Int64", "n_humans": "int64", "tvd": "float64",
        "tvd_lower": "float64", "tvd_upper": "float64", "tvd_model_oracle1": "float64", "tvd_oracle2_oracle1": "float64",
        "entropy_human": "float64", "entropy_model": "float64", "entropy_oracle1": "float64",
        "model_mode": "string", "confidence": "float64", "corpus_word": "string",
        "human_majority": "string",
    },
    "provo_system": {
        "model": "string", "decoding": "string", "n_contexts": "int64",
        "n_contexts_not_sampled": "int64", "n_contexts_all_failed": "int64", "expected_tvd": "float64",
        "ci_low": "float64", "ci_high": "float64", "expected_tvd_lower": "float64", "expected_tvd_upper": "float64",
        "expected_tvd_oracle1": "float64", "oracle_expected_tvd": "float64", "ece_corpus": "float64",
        "n_contexts_without_corpus_word": "int64",
        "ece_human_majority": "float64", "ece_oracle_majority": "float64",
        "failure_rate": "float64", "mean_entropy_model": "float64",
        "mean_entropy_human": "float64",
    },
    # n_contexts: the contexts a series has a TVD for (an exact system's passages, a fine-tuned
    # model's held-out folds), as its legend states.
    "provo_kde": {"model": "string", "decoding": "string", "n_contexts": "int64", "tvd": "float64",
                  "density": "float64"},
    # Table 1's quantities against each model's stated size, beside the oracle's
    # (varprobe.analysis.model_size).
    "provo_model_size": {
        "model": "string", "decoding": "string", "parameters": "Int64", "quantity": "string",
        "value": "float64", "ci_low": "float64", "ci_high": "float64",
    },
    # Table 1's human and oracle values under ours, each of the authors' definitions alone, the
    # authors' protocol, it less each one, and the paper (varprobe.analysis.authors_protocol).
    "provo_authors": {
        "protocol": "string", "switch": "string", "human_ece_corpus": "float64",
        "human_ece_human_majority": "float64", "human_ece_oracle_majority": "float64",
        "oracle_ece_corpus": "float64", "oracle_ece_human_majority": "float64",
        "oracle_ece_oracle_majority": "float64", "oracle_expected_tvd": "float64",
    },
    # A published system's Table 1 values under ours, each of the authors' definitions switched
    # alone, the authors' protocol and as the paper prints them
    # (varprobe.analysis.published_samples.model_switch_table); n_contexts null for the paper's row.
    "provo_published": {
        "system": "string", "column": "string", "protocol": "string", "switch": "string", "ece_corpus": "float64",
        "ece_human_majority": "float64", "ece_oracle_majority": "float64", "expected_tvd": "float64",
        "n_contexts": "Int64",
    },
    # The results page's measures of the Provo study (varprobe.analysis.page_measures), one table
    # each; a family's own are declared in its folder.
    # Table 1's bootstrap intervals: per system and quantity (mean NaN where the summary has it).
    "provo_intervals": {
        "model": "string", "decoding": "string", "quantity": "string", "mean": "float64",
        "ci_low": "float64", "ci_high": "float64",
    },
    # Per sampled system and failure reason: its draws, how the paper's protocol reads them (a
    # system without a failed draw: one row of reason "" and 0 draws).
    "provo_failures": {
        "model": "string", "decoding": "string", "reason": "string", "draws": "int64",
        "share_of_draws": "float64", "draws_without_letter": "int64", "paper_protocol": "string",
        "total_draws": "int64",
    },
    # Per oracle resplit: the mean over contexts of TVD(O2, O1) and of TVD(O2, H).
    "provo_oracle_splits": {
        "resplit": "int64", "tvd_oracle2_oracle1": "float64", "tvd_oracle2_humans": "float64",
    },
    # One row: the human row's oracle-1-majority ECE under two tie-breakings of the modes.
    "provo_human_ties": {
        "ties_lexicographic": "float64", "ties_random": "float64",
        "accuracy_lexicographic": "float64", "accuracy_random": "float64",
        "mean_confidence": "float64", "share_tied": "float64",
    },
    "finetune_pairs": {
        "decoding": "string", "text_id": "int32", "word_number": "int32",
        "tvd_pretrained": "float64", "tvd_oracle2_oracle1": "float64", "tvd_finetuned": "float64",
    },
    "finetune_comparison": {
        "model": "string", "base": "string", "decoding": "string", "n_contexts": "int64",
        "expected_tvd_pretrained": "float64", "expected_tvd_finetuned": "float64",
        "expected_tvd_oracle": "float64", "mean_difference": "float64",
        "difference_ci_low": "float64", "difference_ci_high": "float64",
        "share_finetuned_closer": "float64", "share_finetuned_farther": "float64",
    },
    "production_instances": {
        "dataset": "string", "split": "string", "input_id": "string", "source": "string",
        "references": "object",
    },
    "production_samples": {"input_id": "string", "sample_index": "int32", "text": "string"},
    "production_distances": {
        "input_id": "string", "probe": "string", "kind": "string", "a": "int32", "b": "int32",
        "distance": "float64",
    },
    "production_divergences": {
        "input_id": "string", "probe": "string", "n_H": "int64", "n_M": "int64", "n_C": "int64",
        "mean_H": "float64", "mean_M": "float64", "mean_C": "float64",
        "mean_M_minus_H": "float64", "mean_C_minus_H": "float64", "w1_M_H": "float64",
        "w1_C_H": "float64", "w1_control": "float64",
    },
    "production_summary": {
        "dataset": "string", "model": "string", "decoding": "string", "probe": "string",
        "available": "bool", "statistic": "string", "n_inputs": "int64", "mean": "float64",
        "ci_low": "float64", "ci_high": "float64",
    },
    "production_adequacy": {
        "input_id": "string", "n_outputs": "int64", "chrf": "float64", "bleu": "float64",
        "language_share": "float64", "empty_share": "float64", "copy_share": "float64",
        "reference_language_share": "float64", "sari": "float64",  # sari: NaN but on simplification
    },
    # One row per system (and per dataset's copy baseline: model "copying the source", decoding
    # empty) and statistic; sari only where the task is simplification.
    "production_adequacy_summary": {
        "dataset": "string", "model": "string", "decoding": "string", "language": "string",
        "statistic": "string", "n_inputs": "int64", "n_outputs": "int64", "mean": "float64",
        "ci_low": "float64", "ci_high": "float64",
    },
    # varprobe.analysis.adequacy.beats_copy: per system, its criterion against copying the source.
    "production_beats_copy": {
        "dataset": "string", "model": "string", "decoding": "string", "statistic": "string",
        "mean": "float64", "ci_low": "float64", "ci_high": "float64", "copy": "float64",
        "beats_copy": "bool",
    },
    "production_miscalibrated": {
        "dataset": "string", "model": "string", "decoding": "string", "statistic": "string",
        "input_id": "string", "excess": "float64", "values": "string", "source": "string",
        "references": "object", "samples": "object",
    },
    # Giulianelli et al. read per task as the paper reads it (varprobe.analysis.production_readings):
    # the sign of mean M - H on the main probes, W1(M, H) against the footnotes' thresholds, and the
    # inputs each task's own selection rule (Sec. 7) selects.
    "production_signs": {
        "dataset": "string", "model": "string", "decoding": "string", "probe": "string",
        "n_inputs": "int64", "mean": "float64", "ci_low": "float64", "ci_high": "float64", "sign": "string",
    },
    "production_model_human_w1": {
        "dataset": "string", "model": "string", "decoding": "string", "probe": "string",
        "n_inputs": "int64", "mean": "float64", "ci_low": "float64", "ci_high": "float64",
        "threshold": "float64", "n_above": "int64", "footnote": "string",
    },
    "production_paper_miscalibrated": {
        "dataset": "string", "model": "string", "decoding": "string", "statistic": "string",
        "rule": "string", "footnote": "string", "missing_probes": "string", "n_inputs": "int64",
        "n_selected": "int64", "top_input": "string", "top_excess": "float64",
    },
    # Any histogram figure's numbers: one row per bin of a group (seed_index NA when pooled).
    "histogram": {
        "model": "string", "decoding": "string", "group": "string", "seed_index": "Int64",
        "bin_left": "float64", "bin_right": "float64", "count": "int64", "density": "float64",
    },
    "provo_bars": {
        "text_id": "int32", "word_number": "int32", "context": "string", "source": "string",
        "word": "string", "probability": "float64", "rank": "int32",
    },
    # A histogram figure's numbers: per series, bin edges, counts and density.
    "tvd_histogram": {
        "series": "string", "bin_lower": "float64", "bin_upper": "float64", "count": "int64",
        "density": "float64",
    },
    # Fine-tuning (App. F, Fig. 18): the mean cross-entropy per target token (nats) of a split
    # per epoch; epoch 0 is the validation loss before training; fold NA outside cross-validation.
    # kept: the rows of the epoch whose weights the checkpoint holds (keep_epoch: the lowest
    # validation loss, or the last); trainable_parts: what trained (norms or blocks).
    "finetune_losses": {
        "model": "string", "fold": "Int32", "epoch": "int32", "split": "string",
        "loss": "float64", "tokens": "int64", "examples": "int64", "kept": "boolean",
        "trainable_parts": "string",
    },
    # varprobe collect: the headline numbers of many runs' records (varprobe.run_comparison), one
    # row per run, system and quantity; dataset, probe and decoding "" where they do not apply.
    "run_headlines": {
        "run": "string", "commit": "string", "dirty": "boolean", "config_digest": "string",
        "study": "string", "table": "string", "dataset": "string", "probe": "string", "model": "string",
        "decoding": "string", "role": "string", "quantity": "string", "mean": "float64",
        "ci_low": "float64", "ci_high": "float64",
    },
}


PROVENANCE_ENV = "VARPROBE_PROVENANCE"
"""The environment variable through which the workflow hands its provenance (JSON: commit, dirty,
config digest, package versions; ``varprobe.run_record.provenance``) to every job: ``write``
stores it under ``provenance`` in the metadata of each summary table (``carries_provenance``).
The table's columns and numbers are the same with it or without it."""

PROVENANCE_SCHEMAS = frozenset({"provo_system", "provo_intervals", "finetune_comparison", "word_class_system"})
"""The summary tables whose names do not end in ``_summary``."""


def carries_provenance(schema: str) -> bool:
    """Whether a table of ``schema`` is a summary table, which ``write`` stamps with the run's
    provenance (``PROVENANCE_ENV``): a schema named ``*_summary`` or one of ``PROVENANCE_SCHEMAS``.

    Parameters
    ----------
    schema : str
        The table's schema name.

    Returns
    -------
    bool
    """
    return schema.endswith("_summary") or schema in PROVENANCE_SCHEMAS


def declared_columns(schema: str) -> dict[str, str]:
    """The declared columns of ``schema`` (name -> dtype): one of ``SCHEMAS`` or of an analysis
    family's tables (``varprobe.families``). KeyError naming it otherwise.

    Parameters
    ----------
    schema : str
        The table's schema name.

    Returns
    -------
    dict of str to str
        Each column's pandas dtype by its name, in order.

    Raises
    ------
    KeyError
        When no schema is declared as ``schema``.
    """
    if schema in SCHEMAS:
        return SCHEMAS[schema]
    from varprobe.families import family_tables

    declared = family_tables(SCHEMAS)
    if schema not in declared:
        raise KeyError(f"no table schema {schema!r} is declared")
    return dict(declared[schema])


def conform(frame: pd.DataFrame, schema: str) -> pd.DataFrame:
    """``frame`` with exactly the columns of ``schema``, in order, cast to their types.

    Raises ValueError naming the schema and the missing columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    schema : str
        The schema name.

    Returns
    -------
    pandas.DataFrame
        A new frame; ``frame`` is left as it is.

    Raises
    ------
    ValueError
        When columns are missing.
    """
    columns = declared_columns(schema)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"table {schema!r} lacks columns {missing}")
    return frame.loc[:, list(columns)].astype(columns).reset_index(drop=True)


def write(frame: pd.DataFrame, path: str | Path, schema: str, metadata: dict | None = None) -> None:
    """Check ``frame`` against ``schema`` and write it to ``path`` atomically.

    ``metadata`` (JSON-serialisable) is stored in the Parquet footer under ``varprobe``; a summary
    table (``carries_provenance``) also gets the run's provenance there, where the workflow set
    ``PROVENANCE_ENV``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    path : str or Path
        The Parquet file written.
    schema : str
        The schema name (``conform``).
    metadata : dict, optional
        Stored with the table.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        When ``frame`` lacks a column of ``schema``.
    """
    path = Path(path)
    table = pa.Table.from_pandas(conform(frame, schema), preserve_index=False)
    stamped = os.environ.get(PROVENANCE_ENV)
    if stamped and carries_provenance(schema):
        try:
            metadata = {**(metadata or {}), "provenance": json.loads(stamped)}
        except json.JSONDecodeError as err:
            raise ValueError(f"${PROVENANCE_ENV} is no JSON ({err}); unset it or let the workflow set it") from err
    if metadata is not None:
        extra = {b"varprobe": json.dumps(metadata, sort_keys=True).encode()}
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    with atomic(path) as partial:
        pq.write_table(table, partial)


@contextmanager
def atomic(path: str | Path) -> Iterator[Path]:
    """A temporary file beside ``path`` (its folder created) that replaces ``path`` only when the
    block ends without error; it is removed either way, so no partial file is left behind. An
    ``OSError`` with an error number that names no file (a writer's "No space left on device")
    is raised naming ``path``; one without a number (a message of its own) is raised as it is.

    Parameters
    ----------
    path : str or Path
        The file the block writes.

    Yields
    ------
    Path
        The temporary file to write.

    Raises
    ------
    OSError
        When writing fails, naming the file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        yield partial
        partial.replace(path)
    except OSError as err:
        if err.filename is not None or err.errno is None:
            raise
        raise OSError(err.errno, os.strerror(err.errno), str(path)) from err
    finally:
        partial.unlink(missing_ok=True)


def read(path: str | Path, schema: str) -> pd.DataFrame:
    """Read a table written by ``write`` and check its contract (``read_frame``).

    Parameters
    ----------
    path : str or Path
        The Parquet file.
    schema : str
        The schema name the table must conform to.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    ValueError
        When it is no readable Parquet file or does not conform to ``schema``.
    """
    frame = read_frame(path)
    try:
        return conform(frame, schema)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def read_frame(path: str | Path) -> pd.DataFrame:
    """Any Parquet table at ``path``; FileNotFoundError or ValueError naming the file when it is
    missing or not a readable Parquet file (truncated, overwritten, not Parquet).

    Parameters
    ----------
    path : str or Path
        The Parquet file.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    ValueError
        When it is no readable Parquet file.
    """
    return _parquet(path, pd.read_parquet)


def read_metadata(path: str | Path) -> dict:
    """The ``varprobe`` metadata stored with a table (``{}`` if none).

    Parameters
    ----------
    path : str or Path
        A table written by ``write``.

    Returns
    -------
    dict
    """
    raw = (_parquet(path, pq.read_schema).metadata or {}).get(b"varprobe")
    return json.loads(raw) if raw else {}


def _parquet(path: str | Path, reader):
    """``reader(path)``, its errors naming the file and how to rebuild it."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"table {path} not found")
    try:
        return reader(path)
    except (pa.ArrowException, OSError) as err:
        raise ValueError(f"table {path} is not a readable Parquet file ({err}); delete it and "
                         f"rerun to rebuild it") from err
