"""Benchmark of the run engine on a local Ray (`make bench-run`).

(a) Predict: 500 documents against `mock` with 200 ms latency, limited to 20 starts/s and 16 calls
    in flight: the sustained rate of the booked starts and of the starts the actors made (must reach
    95% of the limit, never exceed it in any 1-s window), the overhead per document in wall time
    (stage wall less the actors' start-up and the ideal (documents - 1) / limit + latency), and in
    CPU time per role (driver, actors, Ray's daemons; from /proc, less what Ray uses idle), at the
    limit and for the same 500 documents with no latency and no limit.
(b) Grade: the 620-document synthetic corpus (`scripts/make_corpus.py`), its gold used as the
    predictions, graded from scratch on a local Ray with 1 and then 2 CPUs; the wall time against
    the bound max(largest document's CPU time, total CPU time / CPUs), and against the same bound
    made of the scoring's own wall time (which other jobs on the machine lengthen too).

Usage: uv run python scripts/bench_run.py [--corpus DIR] [--skip-predict] [--skip-grade]
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import oeb.run  # noqa: F401  (sets Ray's environment defaults before Ray is imported)
from oeb.dataset import open_dataset
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade.regrade import grade_folder
from oeb.run.plan.config import check_tree, init_tree
from oeb.run.predict.stage import predict_rows

DOCUMENTS = 500
LATENCY = 0.2
PER_SECOND = 20.0
IN_FLIGHT = 16
IDLE_SECONDS = 3.0


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
    started = time.monotonic()
    stats = predict_rows(config, opened, opened.rows, folder)
    return started, stats


ROLES = ("driver", "actors", "ray")


def _tree_cpu() -> dict[str, float]:
    """CPU seconds used so far by this process (`driver`), its live `SystemActor` descendants
    (`actors`) and every other live descendant (`ray`: Ray's daemons and idle workers)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    me = os.getpid()
    mine = {me}
    for pid in sorted(parents):  # children have larger pids, except after a pid wrap
        if parents[pid] in mine:
            mine.add(pid)
    used = dict.fromkeys(ROLES, 0.0)
    for pid in mine:
        try:
            actor = (Path("/proc") / str(pid) / "cmdline").read_bytes().startswith(b"ray::SystemActor")
        except OSError:
            continue
        used["driver" if pid == me else "actors" if actor else "ray"] += cpu[pid]
    return used


class _CpuSampler(threading.Thread):
    """Samples `_tree_cpu` every 0.2 s (the driver's less the sampler's own), so the CPU of a stage's
    steady part can be read afterwards."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.2):
            used = _tree_cpu()
            used["driver"] -= time.thread_time()
            self.samples.append((time.monotonic(), used))

    def between(self, first: float, last: float) -> dict[str, float]:
        """CPU seconds per role from the first sample at or after `first` to the last at or before `last`."""
        inside = [(at, used) for at, used in self.samples if first <= at <= last]
        (begin, before), (end, after) = inside[0], inside[-1]
        return {role: after[role] - before[role] for role in ROLES} | {"seconds": end - begin}


def _busiest(starts: list[float]) -> int:
    return max(bisect.bisect_left(starts, start + 1) - n for n, start in enumerate(starts))


def bench_predict(work: Path) -> None:
    import ray  # after oeb.run, which sets Ray's environment defaults

    dataset = _tiny_dataset(work / "tiny", DOCUMENTS)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    sampler = _CpuSampler()
    sampler.start()
    try:
        _predict(dataset, work / "warm", 0.0, None, IN_FLIGHT)  # worker processes started once
        quiet = time.monotonic()
        time.sleep(IDLE_SECONDS)  # what Ray's daemons use doing nothing
        idle = sampler.between(quiet, time.monotonic())
        began, stats = _predict(dataset, work / "limited", LATENCY, PER_SECOND, IN_FLIGHT)
        ended = time.monotonic()
        _, free = _predict(dataset, work / "free", 0.0, None, IN_FLIGHT)
    finally:
        sampler.stopped.set()
        ray.shutdown()
    starts, started = sorted(stats["starts"]), sorted(stats["started"])
    sustained = (len(starts) - 1) / (starts[-1] - starts[0])
    actual = (len(started) - 1) / (started[-1] - started[0])
    ideal = (DOCUMENTS - 1) / PER_SECOND + LATENCY
    startup = starts[0] - began
    wall = ended - began
    print(f"(a) predict {DOCUMENTS} documents, mock latency {LATENCY * 1000:.0f} ms, limit {PER_SECOND:g}/s, "
          f"{IN_FLIGHT} in flight; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"    booked starts: {sustained:.2f}/s = {100 * sustained / PER_SECOND:.1f}% of the limit, busiest 1-s "
          f"window {_busiest(starts)}; started by the actors: {actual:.2f}/s, busiest 1-s window "
          f"{_busiest(started)}; peak in flight {stats['peak_in_flight']}")  # fmt: skip
    print(f"    stage wall {wall:.2f} s = actor start-up {startup:.2f} s + {wall - startup:.2f} s "
          f"(ideal at the limit {ideal:.2f} s): {1000 * (wall - startup - ideal) / DOCUMENTS:.2f} ms per document "
          f"past the ideal, {1000 * (wall - ideal) / DOCUMENTS:.2f} ms with the start-up")  # fmt: skip
    for name, booked in (("at the limit", starts), ("no latency, no limit", sorted(free["starts"]))):
        used = sampler.between(booked[0], booked[-1])
        documents = (len(booked) - 1) * used["seconds"] / (booked[-1] - booked[0])  # booked inside the samples
        per = {role: 1000 * (used[role] - idle[role] * used["seconds"] / idle["seconds"]) / documents for role in ROLES}
        print(f"    CPU per document {name} ({documents / used['seconds']:.0f} documents/s), Ray's idle use "
              f"taken out: driver {per['driver']:.2f} ms, actors (mock included) {per['actors']:.2f} ms, "
              f"Ray's daemons {per['ray']:.2f} ms; total {sum(per.values()):.2f} ms")  # fmt: skip


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
            load = os.getloadavg()[0]
            started = time.perf_counter()
            graded = grade_folder(str(folder), dataset=str(corpus), details=False)
            wall = time.perf_counter() - started
        finally:
            ray.shutdown()
        seconds, elapsed = graded.seconds, graded.elapsed
        largest = max(seconds, key=seconds.get)
        bound = max(seconds[largest], sum(seconds.values()) / cpus)
        busy = max(elapsed[largest], sum(elapsed.values()) / cpus)
        print(f"    {cpus} CPU: wall {wall:.1f} s; bound {bound:.1f} s (largest {largest} {seconds[largest]:.1f} s, "
              f"total CPU {sum(seconds.values()):.1f} s); wall/bound {wall / bound:.2f}; load average {load:.1f} "
              f"-> {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"           the scoring's own wall time (CPU plus what the machine's other work took from it) "
              f"{sum(elapsed.values()):.1f} s: wall / that bound {wall / busy:.2f}")  # fmt: skip


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
