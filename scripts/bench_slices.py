"""Benchmark of document traits and slices (`make bench-slices`, docs/slices.md).

Builds a 620-document sample (`scripts/make_slices_sample.py`: German, English and French invoices,
digital, scanned or mixed, 1 to 14 pages) with ten simulated systems' answers, runs them as ten
systems of one `oeb run` (the `replay` system answering with their records), then times, each in a
fresh process:

- the traits of the 620 documents computed with an empty cache (PDFium reading every page's text,
  lingua the language, every gold read), and read from the cache on a second call;
- `oeb report RUN x10 --by pages --format json` (the traits cached), the whole command.

Targets (issue #41): traits under 30 s, cached under 1 s, the report under 5 s.

Usage: uv run python scripts/bench_slices.py [--documents 620] [--systems 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TRAITS_TARGET, CACHED_TARGET, REPORT_TARGET = 30.0, 1.0, 5.0
_TIMED_TRAITS = """
import sys, time
start = time.perf_counter()
from oeb.dataset import open_dataset
from oeb.traits import document_traits
dataset = open_dataset(sys.argv[1])
begun = time.perf_counter()
document_traits(dataset)
print(time.perf_counter() - begun, time.perf_counter() - start)
"""


def _runs(folder: Path, documents: int, systems: int) -> list[Path]:
    """The sample and its graded runs in `folder` (made once: a kept folder's runs are reused)."""
    sample, runs = folder / "sample", folder / "runs"
    if runs.is_dir():
        return sorted(path for path in runs.iterdir() if path.is_dir())
    make = [sys.executable, str(ROOT / "scripts" / "make_slices_sample.py"), "--out", str(sample), "--records"]
    subprocess.run([*make, "--documents", str(documents), "--systems", str(systems)], check=True)
    base = yaml.safe_load((ROOT / "oeb" / "examples" / "mock.yaml").read_text())
    command = [sys.executable, "-m", "oeb", "run", "-y", "--out", str(runs)]
    for system in sorted((sample / "systems").iterdir()):
        config = {
            **base,
            "dataset": str(sample / "data"),
            "system": {"replay": {"source": str(system)}},
            "ray": {"address": None, "actors": 2, "rate_limit": {"requests_per_second": 1000.0, "max_in_flight": 50}},
        }
        path = folder / f"{system.name}.yaml"
        path.write_text(yaml.safe_dump(config))
        command += ["--config", str(path)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return sorted(path for path in runs.iterdir() if path.is_dir())


def _traits(dataset: Path, cache: Path) -> tuple[float, float]:
    """(seconds computing, seconds of the whole process) of the traits in a fresh process."""
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _TIMED_TRAITS, str(dataset)], check=True, capture_output=True, text=True, env=environment
    )
    inner, whole = map(float, done.stdout.split())
    return inner, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=620)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="build the runs in DIR and keep them, or reuse those there")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-slices-"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = _runs(folder, args.documents, args.systems)
    dataset = folder / "sample" / "data"
    cache = Path(tempfile.mkdtemp(prefix="traits-cache-", dir=folder))
    load = os.getloadavg()
    computed, computed_whole = _traits(dataset, cache)
    cached, cached_whole = _traits(dataset, cache)
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "oeb", "report", *map(str, runs), "--by", "pages", "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
        env=environment,
    )
    report = time.perf_counter() - start
    answer = json.loads(done.stdout)
    result = {
        "documents": args.documents,
        "runs": len(runs),
        "cpus": os.cpu_count(),
        "load_before": [round(value, 2) for value in load],
        "traits_s": round(computed, 2),
        "traits_process_s": round(computed_whole, 2),
        "traits_cached_s": round(cached, 3),
        "traits_cached_process_s": round(cached_whole, 2),
        "report_by_pages_s": round(report, 2),
        "slices": [f"{item['name']} ({item['documents']})" for item in answer["slices"]],
        "flips": [flip["name"] for flip in answer["flips"]],
        "load_after": [round(value, 2) for value in os.getloadavg()],
        "traits_target_met": computed < TRAITS_TARGET,
        "cached_target_met": cached < CACHED_TARGET,
        "report_target_met": report < REPORT_TARGET,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
