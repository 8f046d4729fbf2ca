"""Write the explorer: a static folder that opens from disk in a browser, no server, no network.

``index.html`` loads ``assets/explorer.js`` and ``assets/explorer.css`` (plain JavaScript and
CSS shipped with the package, no library) and ``data/manifest.js``; every other data chunk
(``data/<name>.js``, one call ``VP.chunk(name, data)``) is loaded by a script tag when a view
needs it: the Provo context table first, a passage's word distributions when one of its contexts
is opened, a production system's statistics when it is chosen and its texts and distances a
block of inputs at a time. Script tags, not ``fetch``, because browsers refuse ``fetch`` of
``file://`` URLs.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pandas as pd

from varprobe import tables
from varprobe.explorer.data import (
    INPUT_BLOCK,
    TOP_WORDS,
    ProductionSystem,
    ProvoSystem,
    production_outputs,
    production_sources,
    production_adequacy,
    production_statistics,
    production_texts,
    provo_table,
    provo_words,
)

ASSETS = ("explorer.js", "explorer.css", "index.html")


def chunk_script(name: str, data) -> str:
    """The JavaScript of one data chunk: ``VP.chunk(name, data);``."""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return f"VP.chunk({json.dumps(name)},{body});\n"


class _Chunks:
    """Writes data chunks under ``folder`` and keeps their JSON (for the single file)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.json: dict[str, str] = {}
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, data) -> str:
        script = chunk_script(name, data)
        (self.folder / f"{name}.js").write_text(script, encoding="utf-8")
        self.json[name] = json.dumps(data, separators=(",", ":"), ensure_ascii=False,
                                     allow_nan=False)
        return name


def single_page(template: str, css: str, script: str, chunks: dict[str, str]) -> str:
    """The explorer as one HTML file: assets inline, each chunk an inline JSON script element
    (``<script type="application/json" id="vp-chunk-NAME">``) parsed only when a view needs it.
    Every ``<`` inside JSON (only strings hold one) is written ``\\u003c``, the same string to
    JSON, so no chunk can close its script element."""
    blocks = "".join(
        f'<script type="application/json" id="vp-chunk-{name}">{_inline(text)}</script>\n'
        for name, text in chunks.items()
    )
    page = template.replace('<link rel="stylesheet" href="assets/explorer.css">',
                            f"<style>\n{css}</style>")
    page = page.replace('<script src="assets/explorer.js"></script>',
                        f"{blocks}<script>\n{script}</script>")
    return page.replace('<script src="data/manifest.js"></script>',
                        '<script>VP.load("manifest");</script>')


def write_explorer(out: str | Path, title: str, provo: dict | None,
                   production: dict | None, *, top: int = TOP_WORDS,
                   block: int = INPUT_BLOCK, single: str | Path | None = None) -> dict:
    """Write the explorer folder ``out`` (replaced if present) and return its manifest; with
    ``single``, also the whole explorer as that one HTML file (``single_page``: the report's
    copy, which a pure HTML report can embed; the folder is the one to open at paper scale).

    ``provo``: None, or ``{"contexts", "responses", "oracle": DataFrames, "systems":
    [ProvoSystem]}``. ``production``: None, or ``{"instances": {dataset: DataFrame},
    "systems": [ProductionSystem]}``.
    """
    out = Path(out)
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    chunks = _Chunks(staging / "data")
    manifest = {"title": title, "provo": None, "production": None}
    if provo is not None:
        manifest["provo"] = _write_provo(chunks, provo, top)
    if production is not None:
        manifest["production"] = _write_production(chunks, production, block)
    chunks.write("manifest", manifest)
    assets = staging / "assets"
    assets.mkdir()
    package = resources.files("varprobe.explorer") / "assets"
    for name in ASSETS:
        target = staging / name if name == "index.html" else assets / name
        target.write_text(
            (package / name).read_text(encoding="utf-8").replace("{{TITLE}}", _escape(title)),
            encoding="utf-8",
        )
    if single is not None:
        page = single_page(*((staging / n if n == "index.html" else assets / n)
                             .read_text(encoding="utf-8")
                             for n in ("index.html", "explorer.css", "explorer.js")),
                           chunks.json)
        with tables.atomic(single) as partial:
            partial.write_text(page, encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.replace(out)
    return manifest


def _inline(text: str) -> str:
    """JSON text safe inside a script element: ``<`` as ``\\u003c``."""
    return text.replace("<", "\\u003c")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _write_provo(chunks: _Chunks, provo: dict, top: int) -> dict:
    systems: list[ProvoSystem] = provo["systems"]
    contexts: pd.DataFrame = provo["contexts"]
    table = provo_table(contexts, provo["oracle"], systems)
    words = provo_words(contexts, provo["responses"], systems, top)
    passages = {str(t): chunks.write(f"provo-words-{t}", rows) for t, rows in words.items()}
    return {"table": chunks.write("provo-table", table), "passages": passages,
            "contexts": len(contexts), "systems": [s.name for s in systems], "top": top}


def _write_production(chunks: _Chunks, production: dict, block: int) -> dict:
    instances: dict[str, pd.DataFrame] = production["instances"]
    systems: list[ProductionSystem] = production["systems"]
    datasets = {}
    for d, (name, table) in enumerate(instances.items()):
        blocks = [chunks.write(f"prod-texts-{d}-{j}", part)
                  for j, part in enumerate(production_texts(table, block))]
        datasets[name] = {"inputs": len(table), "blocks": blocks,
                          "sources": chunks.write(f"prod-sources-{d}", production_sources(table))}
    listed = []
    for k, system in enumerate(systems):
        if system.dataset not in instances:
            raise ValueError(f"production system {system.name!r}: no instances table for "
                             f"dataset {system.dataset!r}")
        table = instances[system.dataset]
        stats = production_statistics(table, system)
        listed.append({
            "name": system.name, "dataset": system.dataset, "model": system.model,
            "decoding": system.decoding, "probes": stats["probes"],
            "statistics": chunks.write(f"prod-stats-{k}", stats["statistics"]),
            "adequacy": chunks.write(f"prod-adequacy-{k}", production_adequacy(table, system)),
            "blocks": [chunks.write(f"prod-out-{k}-{j}", part)
                       for j, part in enumerate(production_outputs(table, system, block))],
        })
    return {"datasets": datasets, "systems": listed, "block": block}
