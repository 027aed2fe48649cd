"""A run's predicted values with the confidence its system gave each (grounding.parquet joined to
verdicts.parquet), read by `oeb report --calibration` and the leaderboard's `auto@99%` column."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from oeb import storage
from oeb.errors import StorageFormatError, StorageNotFoundError
from oeb.grounding import calibration as cal
from oeb.grounding.cite import SCHEMA, sound
from oeb.report.fields import fold, regraded_into
from oeb.report.runs import Run
from oeb.run.grade.results import SCORER

log = logging.getLogger("oeb.report")


@dataclass(frozen=True)
class Values:
    """A run's predicted values: document index, folded field, confidence (NaN: none) and right."""

    documents: list[str]
    document: np.ndarray[Any, np.dtype[np.intp]]
    field: list[str]
    confidence: np.ndarray[Any, np.dtype[np.float64]]
    right: np.ndarray[Any, np.dtype[np.bool_]]


_WARNED: set[str] = set()
"""grounding.parquet files already warned of in this process (the leaderboard and a report read one twice)."""


def read_grounding(run: Run, columns: list[str]) -> pa.Table | None:
    """The run's grounding.parquet (None: it has none: its system gave no citation nor confidence),
    with what grading never writes nulled (`oeb.grounding.cite.sound`) and warned of once."""
    url = storage.join(run.url, SCORER, "grounding.parquet")
    try:
        table = storage.read_parquet(url)  # whole (it is small), so each read counts the same
    except StorageNotFoundError:
        return None
    missing = [name for name in columns if name not in table.column_names]
    if missing:
        raise StorageFormatError(f"{url} has no column {', '.join(missing)}; oeb grade RUN rewrites it")
    try:
        known = [name for name in SCHEMA.names if name in table.column_names]
        table, citations, confidences = sound(table.select(known))
    except pa.ArrowException as error:
        reason = str(error).splitlines()[0]
        raise StorageFormatError(
            f"{url} has columns of the wrong type ({reason}); oeb grade RUN rewrites it"
        ) from error
    if (citations or confidences) and url not in _WARNED:
        _WARNED.add(url)
        log.warning(
            "%s: %d citations and %d confidences oeb never writes (a page under 1, a negative or inverted box, "
            "a confidence outside [0, 1]) are left out; oeb grade RUN rewrites the file",
            url,
            citations,
            confidences,
        )
    return table.select(columns)


INVALID = ("invalid_citations", "invalid_confidences")


def invalid(run: Run) -> dict[str, int]:
    """How many of the run's citations and confidences grading dropped (summary.json's `grounding`,
    docs/grounding.md); 0 where it recorded none or not a count."""
    try:
        summary = storage.read_json(storage.join(run.url, SCORER, "summary.json"))
    except (StorageNotFoundError, StorageFormatError):  # an older or broken summary: figures without counts
        summary = {}
    block = summary.get("grounding") if isinstance(summary, dict) else None
    block = block if isinstance(block, dict) else {}
    return {
        key: block[key]
        if isinstance(block.get(key), int) and not isinstance(block[key], bool) and block[key] >= 0
        else 0
        for key in INVALID
    }


def values(run: Run) -> Values | None:
    """Every predicted value of the run's scored documents with its confidence; None without any."""
    grounding = read_grounding(run, ["doc_id", "address", "confidence"])
    if grounding is None or grounding["confidence"].null_count == grounding.num_rows:
        return None
    sure = {
        (d, a): c
        for d, a, c in zip(*(grounding[k].to_pylist() for k in ("doc_id", "address", "confidence")), strict=True)
        if c is not None
    }
    verdicts = regraded_into(
        run,
        storage.read_parquet(
            storage.join(run.url, SCORER, "verdicts.parquet"), ["id", "address", "pred_raw", "result"]
        ),
    )  # under the gold the report reads the run under, as `--by field` counts it
    documents = [line["id"] for line in run.lines if line.get("status") == "scored"]
    at = {doc_id: n for n, doc_id in enumerate(documents)}
    doc, field, conf, right = [], [], [], []
    for doc_id, address, pred_raw, result in zip(
        *(verdicts[k].to_pylist() for k in ("id", "address", "pred_raw", "result")), strict=True
    ):
        if pred_raw == "null" or doc_id not in at or result not in _PREDICTED:
            continue
        doc.append(at[doc_id])
        field.append(fold(address))
        conf.append(sure.get((doc_id, address), np.nan))
        right.append(result == "matched")
    return Values(
        documents,
        np.asarray(doc, dtype=np.intp),
        field,
        np.asarray(conf, dtype=np.float64),
        np.asarray(right, dtype=np.bool_),
    )


_PREDICTED = frozenset(("matched", "misread", "fabricated", "invented_item", "invented_field"))


def auto_at(run: Run, precision: float) -> float | None:
    """The run's coverage at `precision` (no interval), None when it gave no confidence (its
    grounding.parquet is looked for, and its verdicts read, only then)."""
    found = values(run)
    if found is None:
        return None
    coverage, _ = cal.coverage_at(cal.rank(found.confidence), found.right, (precision,), np.ones((1, len(found.right))))
    return float(coverage[0, 0])
