"""Benchmark of grounding and calibration (`make bench-grounding`, docs/grounding.md).

Builds a 620-document sample (`scripts/make_slices_sample.py`: invoices of 1 to 14 pages, digital,
scanned or mixed), runs the offline `mock` on it as ten systems (seeds 0-9, each citing every value
where oeb's locator finds its gold, `cite_wrong: 0.1`, calibrated confidences) in one `oeb run`,
then times, each in a fresh process, over the ten graded runs:

- `oeb report RUN x10 --grounding --format json` cold: with an empty cache folder
  (`XDG_CACHE_HOME`), so the gold of every document is located in its text layer (no OCR), with a
  process per core; then again warm, the located evidence read from the cache;
- `oeb report RUN x10 --calibration --format json`.

Target (issue #42): the cold grounding and the calibration together under 20 s on 2 cores beyond
grading. Also prints each run's box precision with its interval (the mock was asked for 90%) and
the machine's load average before and after.

Usage: uv run python scripts/bench_grounding.py [--documents 620] [--systems 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from oeb.grounding.located import processes

ROOT = Path(__file__).resolve().parents[1]
TARGET = 20.0


def _runs(folder: Path, documents: int, systems: int) -> list[Path]:
    """The sample and its graded runs in `folder` (made once: a kept folder's runs are reused)."""
    sample, runs = folder / "sample", folder / "runs"
    if runs.is_dir():
        return sorted(path for path in runs.iterdir() if path.is_dir())
    make = [sys.executable, str(ROOT / "scripts" / "make_slices_sample.py"), "--out", str(sample)]
    subprocess.run([*make, "--documents", str(documents), "--systems", "1"], check=True, stdout=subprocess.DEVNULL)
    base = yaml.safe_load((ROOT / "oeb" / "examples" / "mock-cited.yaml").read_text())
    base["system"]["mock"]["latency"] = 0.0
    command = [sys.executable, "-m", "oeb", "run", "-y", "--out", str(runs)]
    for seed in range(systems):
        config = {
            **base,
            "dataset": str(sample / "data"),
            "system": {"mock": {**base["system"]["mock"], "seed": seed}},
            "ray": {"address": None, "actors": 2, "rate_limit": {"requests_per_second": 1000.0, "max_in_flight": 50}},
        }
        path = folder / f"mock-{seed}.yaml"
        path.write_text(yaml.safe_dump(config))
        command += ["--config", str(path)]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print(f"{systems} runs of {documents} documents asked and graded in {time.perf_counter() - started:.1f} s")
    return sorted(path for path in runs.iterdir() if path.is_dir())


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(runs: list[Path], flag: str, cache: Path) -> tuple[float, float, dict[str, object]]:
    """The report's wall time, its CPU time (its processes' too) and its JSON."""
    command = [sys.executable, "-m", "oeb", "report", *map(str, runs), flag, "--format", "json"]
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": str(cache)}
    )
    return time.perf_counter() - started, _cpu() - cpu, json.loads(done.stdout)


def _load() -> str:
    return "load average " + " ".join(f"{load:.1f}" for load in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=620)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--keep", metavar="DIR", help="build the sample and runs here once and reuse them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        runs = _runs(folder, args.documents, args.systems)
        cache = Path(scratch) / "cache"  # empty: the first report locates every document
        print(f"{len(runs)} runs, {processes(args.documents)} processes locating; {_load()}")
        grounding_s, grounding_cpu, grounding = _timed(runs, "--grounding", cache)
        warm_s, _, warm = _timed(runs, "--grounding", cache)
        calibration_s, calibration_cpu, calibration = _timed(runs, "--calibration", cache)
    if warm != grounding:
        raise SystemExit("the warm --grounding differs from the cold one")
    for run in grounding["runs"]:  # type: ignore[union-attr]
        block = run["box"]["precision"]
        low, high = block["ci95"]
        print(
            f"{run['label']}: box precision {block['value']:.3f} [{low:.3f}, {high:.3f}] (asked 0.900), "
            f"{run['unverifiable']} unverifiable of {run['verifiable'] + run['unverifiable']}"
        )
    for run in calibration["runs"]:  # type: ignore[union-attr]
        print(f"{run['label']}: ECE {run['ece']:.4f}, auto@99% {run['coverage']['99']['coverage']:.3f}")
    total = grounding_s + calibration_s
    verdict = "within" if total < TARGET else "OVER"
    cpu = f"CPU {grounding_cpu:.1f} s and {calibration_cpu:.1f} s"
    shown = f"--grounding {grounding_s:.1f} s cold, --calibration {calibration_s:.1f} s: {total:.1f} s ({cpu})"
    print(f"{shown}, {verdict} the {TARGET:.0f} s target; --grounding warm {warm_s:.1f} s; {_load()}")


if __name__ == "__main__":
    main()
