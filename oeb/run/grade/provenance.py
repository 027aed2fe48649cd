"""What stands behind a grading: `provenance` in `field_matching/summary.json` (docs/grading.md).

A score is worth what can be said about how it was made: which oeb and which scorer (the digest the
grading cache keys on, so two summaries with the same `scorer` scored alike), the checkout oeb ran
from, the libraries that can change a number or a call, the machine, and the exact dataset and
manifest the gold came from. A brought folder has no settings.json, so this is where the dataset it
was graded against is kept for the reports.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import oeb
from oeb import storage
from oeb.errors import StorageError
from oeb.formats import GitState, Provenance

if TYPE_CHECKING:
    from oeb.dataset import Dataset

PACKAGES = ("numpy", "scipy", "pyarrow", "ray", "httpx", "openai", "fsspec", "s3fs", "huggingface_hub", "pypdf")
"""The libraries whose versions are recorded: the scorer's, the storage's and the vendor clients'
(every vendor adapter speaks through httpx or openai); plugin adapters' packages are added."""
_GIT_SECONDS = 5.0
_PLUGINS = "oeb.systems"
"""`oeb.systems.registry.ENTRY_POINT_GROUP`, named here: importing the registry loads every adapter."""


def provenance(dataset: Dataset, scorer: str) -> Provenance:
    """The provenance of a grading against `dataset` by the scorer of digest `scorer`, made now."""
    named = dataset.settings()
    return {
        "oeb": oeb.__version__,
        "scorer": scorer,
        "git": git_state(),
        "python": platform.python_version(),
        "packages": packages(),
        "platform": platform.platform(),
        "dataset": named["dataset"],
        "dataset_commit": dataset.commit,
        "manifest": named["manifest"],
        "manifest_sha256": manifest_sha256(dataset),
        "graded_at": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
    }


@functools.cache
def git_state() -> GitState | None:
    """The commit of the oeb checkout this code runs from and whether its tracked files differ from
    it; None when oeb is not run from a checkout (installed from a wheel) or git cannot tell."""
    root = Path(oeb.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = _git(root, "rev-parse", "HEAD").strip()
        dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no").strip())
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": dirty}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=_GIT_SECONDS
    )
    return done.stdout


@functools.cache
def packages() -> dict[str, str]:
    """Installed versions of `PACKAGES` and of the packages that provide plugin adapters."""
    names = list(PACKAGES)
    for entry in importlib.metadata.entry_points(group=_PLUGINS):
        if entry.dist is not None and entry.dist.name not in names:
            names.append(entry.dist.name)
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def manifest_sha256(dataset: Dataset) -> str | None:
    """SHA-256 of the manifest file's bytes, or None when it cannot be read again."""
    try:
        data = storage.read_bytes(storage.join(dataset.location, dataset.manifest))
    except StorageError:
        return None
    return hashlib.sha256(data).hexdigest()
