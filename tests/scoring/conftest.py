"""Helpers shared by the scorer's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
