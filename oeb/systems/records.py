"""The record of one document (docs/running.md): what came back or why it failed, how it went (cost,
time, attempts), the question's identity, every key redacted; and a record read again from its
stored answer (`reread`). `oeb.systems.asking` makes a record when an attempt ends.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import importlib.metadata
import json
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from oeb.systems.base import Adapter, Call, Cost, Question
from oeb.systems.errors import SystemFailed, Unreadable

CAP = 4000


def cap(text: str) -> str:
    if len(text) <= CAP:
        return text
    return f"{text[:CAP]}... [{len(text) - CAP} more characters]"


@functools.cache
def package_of(module: str) -> str | None:
    """`"<distribution> <version>"` of the installed package a module comes from."""
    top = module.split(".")[0]

    def candidates() -> Iterator[str]:
        yield top  # most distributions are named after their module; the scan below is slow
        yield from importlib.metadata.packages_distributions().get(top, [])

    for name in candidates():
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return f"{dist.metadata['Name']} {dist.version}"
    return None


MIN_SECRET = 8
"""Shorter values (a dummy `x`) would match ordinary text and corrupt records; real keys are longer."""


def redact(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret replaced, wherever it hides (messages, bodies, tracebacks)."""
    secrets = [s for s in secrets if len(s) >= MIN_SECRET]
    if not secrets:
        return value
    text = json.dumps(value, ensure_ascii=False)
    for secret in secrets:
        text = text.replace(json.dumps(secret, ensure_ascii=False)[1:-1], "[redacted]")
    return json.loads(text)


def error_json(failure: SystemFailed) -> dict[str, Any]:
    return {
        "type": type(failure).__name__,
        "status": failure.status,
        "transient": failure.transient,
        "message": cap(failure.message),
        "traceback": cap("".join(traceback.format_exception(failure))),
    }


def cost_json(cost: Cost, wall_s: float, attempts: int) -> dict[str, Any]:
    return {**dataclasses.asdict(cost), "wall_s": round(wall_s, 1), "attempts": attempts}


def _sha256_file(path: Path) -> str | None:
    """The document's digest, streamed; None when it cannot be read (then nothing can match it)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def question_identity(adapter: Adapter, question: Question) -> dict[str, Any]:
    """What makes two askings the same question, for reusing an answer: the PDF's bytes, the schema
    (after the conventions, as canonical JSON; the dialect follows from it and the adapter) and the
    adapter's package and version."""
    schema = json.dumps(question.schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {
        "pdf_sha256": _sha256_file(question.document),
        "schema_sha256": hashlib.sha256(schema.encode()).hexdigest(),
        "adapter": package_of(type(adapter).__module__),
    }


def make_record(
    adapter: Adapter,
    question: Question,
    answer: Call | None,
    failure: SystemFailed | None,
    output: dict[str, Any] | None,
    *,
    cost: Cost,
    wall_s: float,
    timeout: float,
    attempts: int,
    resubmitted: Any = None,
) -> dict[str, Any]:
    """The record: what came back (the answer, else the failure's body) and how it went, after
    `attempts` attempts (`resubmitted`: why a job was submitted again, if it was)."""
    origin: Call | SystemFailed | None = answer or failure
    assert origin is not None
    raw = answer.raw if answer is not None else failure.body if failure is not None else None
    record = {
        "system": adapter.name,
        "options": adapter.options(),
        "package": package_of(type(adapter).__module__),
        "question": question_identity(adapter, question),
        "output": output if failure is None else None,
        "raw": raw,
        "sent": origin.sent,
        "error": error_json(failure) if failure is not None else None,
        "cost": cost_json(cost, wall_s, attempts),
        "job_id": origin.job_id,
        "timeout_s": timeout,
        "captured_at": datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if resubmitted is not None:
        record["resubmitted"] = resubmitted
    return record


def reread(adapter: Adapter, record: dict[str, Any]) -> dict[str, Any]:
    """The record re-read from its stored `raw` with no new call (after a reader was fixed).

    Only answered records change: an unread one, a success, or an `Unreadable` failure.
    """
    error = record.get("error")
    if error is not None and error.get("type") != "Unreadable":
        return record
    updated = {k: v for k, v in record.items() if k != "unread"}
    try:
        updated["output"], updated["error"] = adapter.read(record["raw"]), None
    except SystemFailed as unreadable:
        failure = Unreadable(unreadable.message)
        updated["output"], updated["error"] = None, error_json(failure)
    return updated
