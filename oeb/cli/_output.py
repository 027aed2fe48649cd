"""Reading the JSON files a command is given, and printing results as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from oeb import _json
from oeb.errors import InputFileError
from oeb.run.grade.results import verdict_json


def load_json_object(path: str, flag: str) -> dict[str, Any]:
    """The JSON object in a local file; a one-line error naming the flag, the path and the fix."""
    file = Path(path)
    if not file.exists():
        raise InputFileError(f"{flag} {path}: no such file; check the path")
    if file.is_dir():
        raise InputFileError(f"{flag} {path}: is a folder; name a JSON file")
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputFileError(f"{flag} {path}: not UTF-8 text ({error}); save the file as UTF-8 JSON") from None
    except OSError as error:
        raise InputFileError(f"{flag} {path}: cannot be read ({error.strerror})") from None
    try:
        value = _json.loads(text)
    except json.JSONDecodeError as error:
        raise InputFileError(f"{flag} {path}: not valid JSON ({error}); fix the file") from None
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise InputFileError(f"{flag} {path}: holds JSON {kind}; it must hold a JSON object ({{...}})")
    return value


def result_json(result: dict[str, Any]) -> dict[str, Any]:
    """A `score()` result as JSON: its verdicts as the objects `details/<id>.jsonl` holds."""
    if "verdicts" not in result:
        return result
    return {**result, "verdicts": [verdict_json(v) for v in result["verdicts"]]}


def print_json(value: Any) -> None:
    """Print a value as indented UTF-8 JSON on stdout (what every `--json` and `oeb score` print)."""
    json.dump(value, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
