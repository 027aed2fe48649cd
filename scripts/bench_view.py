"""Benchmark of `oeb view` on a 620-document graded run (`make bench-view`).

Builds the synthetic 620-document corpus (`scripts/make_corpus.py`, its four suites and id shapes,
text-layer PDFs; --values gold values in all), runs the offline `mock` system over it with `oeb run`
(a local Ray), then starts `oeb view RUN --port 0` in a fresh process and times, as a browser would
ask for them:

- opening: from starting the process to the leaderboard's page, its script and style and
  `/api/runs` all answered (the interpreter, the imports and the run's loading included);
- the fields page: `/api/fields?run=LABEL` (the run's verdicts.parquet read once);
- a document page, for the first one opened (it opens the dataset) and for `--documents` more, the
  largest by verdicts among them: `/api/documents/DOC_ID?run=LABEL` and its first page's PNG.

Targets (issue #28): opening under 2 s, a document page under 1 s.

Usage: uv run python scripts/bench_view.py [--values 200000] [--documents 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
OPEN_TARGET, DOCUMENT_TARGET = 2.0, 1.0


def _graded_run(folder: Path, values: int) -> Path:
    """The corpus and its graded mock run in `folder` (made once: a kept folder's run is reused)."""
    dataset, runs = folder / "corpus", folder / "runs"
    if runs.is_dir():
        (run,) = list(runs.iterdir())
        return run
    largest = max(20, values // 10)
    make = [sys.executable, str(ROOT / "scripts" / "make_corpus.py"), "--out", str(dataset), "--documents", "620"]
    subprocess.run([*make, "--values", str(values), "--largest", str(largest)], check=True)
    sets = [f"dataset={dataset}", "system.mock.latency=0", "ray.rate_limit.requests_per_second=1000"]
    command = [sys.executable, "-m", "oeb", "run", "--config", str(ROOT / "oeb" / "examples" / "mock.yaml"), "-y"]
    for change in sets:
        command += ["--set", change]
    subprocess.run([*command, "--out", str(runs)], check=True, stdout=subprocess.DEVNULL)
    (run,) = list(runs.iterdir())
    return run


def _timed(client: httpx.Client, *paths: str) -> float:
    start = time.perf_counter()
    for path in paths:
        response = client.get(path)
        response.raise_for_status()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=200_000, help="gold values in the corpus, in all")
    parser.add_argument("--documents", type=int, default=20, help="document pages timed after the first")
    parser.add_argument(
        "--keep",
        type=Path,
        help="build the run in DIR and keep it, or reuse the one there (default: a temporary folder)",
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-view-"))
    folder.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    run = _graded_run(folder, args.values)
    verdicts = pq.read_table(run / "field_matching" / "verdicts.parquet", columns=["id"]).column("id").to_pylist()
    sizes = {doc_id: verdicts.count(doc_id) for doc_id in dict.fromkeys(verdicts)}
    by_size = sorted(sizes, key=lambda doc_id: -sizes[doc_id])
    chosen = by_size[1 : args.documents + 1]

    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "oeb", "view", str(run), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = line.rsplit(" ", 1)[-1].strip()
        with httpx.Client(base_url=url, timeout=60) as client:
            _timed(client, "", "static/app.js", "static/app.css", "api/runs")
            opening = time.perf_counter() - start
            label = quote(client.get("api/runs").json()[0]["label"])
            fields = _timed(client, f"api/fields?run={label}")

            def document(doc_id: str) -> float:
                return _timed(
                    client,
                    f"documents/{quote(doc_id)}?run={label}",
                    f"api/documents/{quote(doc_id)}?run={label}",
                    f"pages/{quote(doc_id)}/1.png",
                )

            first = document(by_size[0])
            times = {doc_id: document(doc_id) for doc_id in chosen}
    finally:
        process.terminate()
        process.wait(timeout=30)
    result = {
        "documents": len(sizes),
        "verdicts": len(verdicts),
        "load_before": [round(value, 2) for value in load],
        "open_s": round(opening, 3),
        "fields_s": round(fields, 3),
        "first_document_s": round(first, 3),
        "first_document_verdicts": sizes[by_size[0]],
        "document_median_s": round(statistics.median(times.values()), 3),
        "document_max_s": round(max(times.values()), 3),
        "documents_timed": len(times),
        "open_target_met": opening < OPEN_TARGET,
        "document_target_met": max(first, *times.values()) < DOCUMENT_TARGET,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
