"""Paths and loaders shared by the container and cluster config tests (no Ray cluster, no network)."""

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "cluster"
KUBERAY = CLUSTER / "kuberay"
IMAGE = "ghcr.io/YOUR_ORG/oeb:0.1.0"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))
