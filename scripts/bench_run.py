"""Benchmark of the run engine on a local Ray (`make bench-run`).

(a) Predict: 500 documents against `mock` with 200 ms latency, limited to 20 starts/s and 16 calls
    in flight: the sustained rate (must reach 95% of the limit, never exceed it), and the engine's
    own cost per document (the same 500 documents with no latency and no limit).
(b) Grade: the 620-document synthetic corpus (`scripts/make_corpus.py`), its gold used as the
    predictions, graded from scratch on a local Ray with 1 and then 2 CPUs; the wall time against
    the bound max(largest document's CPU time, total CPU time / CPUs).

Usage: uv run python scripts/bench_run.py [--corpus DIR] [--skip-predict] [--skip-grade]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import oeb.run  # noqa: F401  (sets Ray's environment defaults before Ray is imported)
from oeb.dataset import open_dataset
from oeb.run.config import check_tree, init_tree
from oeb.run.engine import grade_folder
from oeb.run.folder import RunFolder
from oeb.run.predict import predict_rows

DOCUMENTS = 500
LATENCY = 0.2
PER_SECOND = 20.0
IN_FLIGHT = 16


def _tiny_dataset(folder: Path, count: int) -> Path:
    schema = {"type": "object", "properties": {"number": {"type": "string"}, "total": {"type": "number"}}}
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    ids = [f"doc_{n:04d}" for n in range(count)]
    for n, doc_id in enumerate(ids):
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps({"number": f"N-{n}", "total": n}))
    table = pa.table(
        {
            "doc_id": ids,
            "doc_path": [f"pdfs/{i}.pdf" for i in ids],
            "gt_path": [f"gold/{i}.json" for i in ids],
            "schema": [json.dumps(schema)] * count,
        }
    )
    pq.write_table(table, folder / "manifest.parquet")
    return folder


def _predict(dataset: Path, out: Path, latency: float, per_second: float | None, in_flight: int) -> tuple[float, dict]:
    tree = init_tree("mock", str(dataset))
    tree["workers"] = in_flight
    tree["system"]["mock"]["latency"] = latency
    rate = {"requests_per_second": per_second, "max_in_flight": in_flight}
    tree["ray"] = {"address": None, "actors": 2, "rate_limit": rate}
    config = check_tree(tree, where="bench")
    opened = open_dataset(str(dataset))
    folder = RunFolder(str(out))
    started = time.perf_counter()
    stats = predict_rows(config, opened, opened.rows, folder)
    return time.perf_counter() - started, stats


def bench_predict(work: Path) -> None:
    import ray  # after oeb.run, which sets Ray's environment defaults

    dataset = _tiny_dataset(work / "tiny", DOCUMENTS)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        _predict(dataset, work / "warm", 0.0, None, IN_FLIGHT)  # worker processes started once
        wall, stats = _predict(dataset, work / "limited", LATENCY, PER_SECOND, IN_FLIGHT)
        starts = sorted(stats["starts"])
        sustained = (len(starts) - 1) / (starts[-1] - starts[0])
        busiest = max(sum(s <= t < s + 1 for t in starts) for s in starts)
        free_wall, _ = _predict(dataset, work / "free", 0.0, None, IN_FLIGHT)
    finally:
        ray.shutdown()
    print(f"(a) predict {DOCUMENTS} documents, mock latency {LATENCY * 1000:.0f} ms, limit {PER_SECOND:g}/s, "
          f"{IN_FLIGHT} in flight")  # fmt: skip
    print(f"    sustained {sustained:.2f} starts/s = {100 * sustained / PER_SECOND:.1f}% of the limit; "
          f"busiest 1-s window {busiest} starts; peak in flight {stats['peak_in_flight']}")  # fmt: skip
    print(f"    stage wall {wall:.1f} s (ideal {(DOCUMENTS - 1) / PER_SECOND + LATENCY:.1f} s)")
    print(f"    engine cost per document (no latency, no limit): {1000 * free_wall / DOCUMENTS:.1f} ms "
          f"({DOCUMENTS / free_wall:.0f} documents/s)")  # fmt: skip


def _predictions_from_gold(corpus: Path, folder: Path) -> None:
    (folder / "predictions").mkdir(parents=True)
    for gold in (corpus / "gold").glob("*.json"):
        shutil.copyfile(gold, folder / "predictions" / gold.name)


def bench_grade(corpus: Path, work: Path) -> None:
    import ray

    if not (corpus / "manifest.parquet").exists():
        subprocess.run([sys.executable, "scripts/make_corpus.py", "--out", str(corpus)], check=True)
    folder = work / "corpus-run"
    _predictions_from_gold(corpus, folder)
    print(f"(b) grade {len(list((folder / 'predictions').iterdir()))} documents of {corpus}")
    for cpus in (1, 2):
        shutil.rmtree(folder / "field_matching", ignore_errors=True)
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        try:
            started = time.perf_counter()
            graded = grade_folder(str(folder), dataset=str(corpus), details=False)
            wall = time.perf_counter() - started
        finally:
            ray.shutdown()
        seconds = graded.seconds
        largest = max(seconds, key=seconds.get)
        bound = max(seconds[largest], sum(seconds.values()) / cpus)
        print(f"    {cpus} CPU: wall {wall:.1f} s; bound {bound:.1f} s (largest {largest} {seconds[largest]:.1f} s, "
              f"total CPU {sum(seconds.values()):.1f} s); wall/bound {wall / bound:.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path(tempfile.gettempdir()) / "oeb-corpus")
    parser.add_argument("--skip-predict", action="store_true")
    parser.add_argument("--skip-grade", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="oeb-bench-") as temp:
        work = Path(temp)
        if not args.skip_predict:
            bench_predict(work)
        if not args.skip_grade:
            bench_grade(args.corpus, work)


if __name__ == "__main__":
    main()
