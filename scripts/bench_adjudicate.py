"""Benchmark of grading under an adjudication file (`make bench-adjudicate`).

Builds the synthetic 620-document corpus (`scripts/make_corpus.py`), runs ten offline `mock` systems
(seeds 1-10) over it side by side in one `oeb run`, writes an adjudication file of 1,000 accepted
entries on sampled gold values (accept, replace, remove and verify-with-a-correction, in turn), then
times, best of `--repeat`, alternating (each after one unmeasured regrade under the same condition):

- the regrade of the ten runs without a file (`oeb grade PREFIX`: every document from the cache);
- the same regrade with the file beside the dataset (`corpus/adjudications.yaml`, which a regrade
  applies): the file read and checked against the dataset once per regrade, and the accepted entries
  applied to the documents they name;
- the ten runs under the file at report time (`oeb.report.adjudicated.under_gold`, what
  `oeb report --adjudications` and `oeb adjudicate diff` do), for the record.

Target (issue #39): with the file at most 1.1x the regrade without.

Usage: uv run python scripts/bench_adjudicate.py [--values 60000] [--entries 1000] [--repeat 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.1


def _runs(folder: Path, values: int) -> list[Path]:
    """The corpus and ten graded mock runs of it in `folder` (made once: kept runs are reused)."""
    dataset, runs = folder / "corpus", folder / "runs"
    if runs.is_dir():
        return sorted(runs.iterdir())
    make = [sys.executable, str(ROOT / "scripts" / "make_corpus.py"), "--out", str(dataset), "--documents", "620"]
    subprocess.run([*make, "--values", str(values), "--largest", str(max(20, values // 10))], check=True)
    command = [sys.executable, "-m", "oeb", "run", "-y", "--out", str(runs)]
    example = (ROOT / "oeb" / "examples" / "mock.yaml").read_text()
    for seed in range(1, 11):
        config = folder / f"mock-{seed}.yaml"
        config.write_text(example.replace("seed: 0", f"seed: {seed}"))
        command += ["--config", str(config)]
    for change in (f"dataset={dataset}", "system.mock.latency=0", "ray.rate_limit.requests_per_second=1000"):
        command += ["--set", change]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return sorted(runs.iterdir())


def _file(dataset: str, url: Path, count: int) -> None:
    """`count` accepted entries on sampled gold values, the actions in turn."""
    from oeb.dataset import open_dataset
    from oeb.gold import entries, sample

    opened = open_dataset(dataset)
    drawn = sample.draw(sample.population(opened), count, 1, False)
    made = []
    for n, (_, doc_id, address, value) in enumerate(drawn):
        common = {"reason": "benchmark", "by": "bench", "status": "accepted"}
        kind = n % 4
        other = value + 1 if isinstance(value, int | float) and not isinstance(value, bool) else f"{value}!"
        if kind == 0:
            made.append(entries.Entry(f"e{n}", doc_id, address, "accept", values=(other,), **common))
        elif kind == 1:
            made.append(entries.Entry(f"e{n}", doc_id, address, "replace", value=other, **common))
        elif kind == 2:
            made.append(entries.Entry(f"e{n}", doc_id, address, "remove", **common))
        else:
            made.append(entries.Entry(f"e{n}", doc_id, address, "verify", value=other, **common))
    entries.save(entries.Adjudications(tuple(made), opened.identity, opened.commit), str(url))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=60_000, help="gold values in the corpus, in all")
    parser.add_argument("--entries", type=int, default=1000, help="accepted entries in the file")
    parser.add_argument("--repeat", type=int, default=2, help="timings of each, the best kept")
    parser.add_argument("--keep", type=Path, help="build the runs in DIR and keep them, or reuse those there")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-adjudicate-"))
    folder.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    runs = _runs(folder, args.values)
    made = folder / "adjudications.yaml"
    _file(str(folder / "corpus"), made, args.entries)
    beside = folder / "corpus" / "adjudications.yaml"

    from oeb.report import load_runs
    from oeb.report.adjudicated import under_gold

    grade = [sys.executable, "-m", "oeb", "grade", str(folder / "runs")]
    timings: dict[bool, list[float]] = {False: [], True: []}
    phases: dict[bool, list[float]] = {False: [], True: []}  # the grading phase alone (OEB_TIMINGS)
    work: dict[bool, list[float]] = {False: [], True: []}  # the documents' CPU seconds, all runs (OEB_TIMINGS)
    for _ in range(args.repeat):
        for with_file in (False, True):
            if with_file:
                beside.write_bytes(made.read_bytes())
            else:
                beside.unlink(missing_ok=True)
            # unmeasured first: the switch itself rewrites the touched documents' details once, and
            # each figure is the steady regrade under that condition
            subprocess.run(grade, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            start = time.perf_counter()
            done = subprocess.run(
                grade,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "OEB_TIMINGS": "1"},
            )
            timings[with_file].append(time.perf_counter() - start)
            phases[with_file] += [
                float(line.split()[3]) for line in done.stderr.splitlines() if line.startswith("oeb timing: grading ")
            ]
            work[with_file].append(
                sum(float(line.split()[-2]) for line in done.stderr.splitlines() if "documents (their CPU)" in line)
            )
    beside.unlink(missing_ok=True)
    start = time.perf_counter()
    gold = under_gold(load_runs([str(run) for run in runs]), str(made))
    reporting = time.perf_counter() - start
    touched = sum(1 for run in gold.runs for line in run.lines if line.get("adjudications"))
    without, with_file = min(timings[False]), min(timings[True])
    ratio = with_file / without

    def shown(values: list[float]) -> str:
        return ", ".join(f"{value:.2f}" for value in values)

    print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"10 runs x 620 documents; {args.entries} accepted entries changing {touched} run-documents")
    print(f"regrade without a file: {without:.2f} s (best of {args.repeat}: {shown(timings[False])})")
    print(f"regrade with the file:  {with_file:.2f} s (best of {args.repeat}: {shown(timings[True])})")
    print(f"load average at the end: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"with / without: {ratio:.3f}x (target at most {TARGET}x)")
    phase = min(phases[True]) / min(phases[False])
    print(
        f"the grading phase alone (Ray's start left out): {min(phases[False]):.2f} s without "
        f"({shown(phases[False])}), {min(phases[True]):.2f} s with ({shown(phases[True])}): {phase:.3f}x"
    )
    print(
        f"the documents' CPU (the scoring workers, load aside): {min(work[False]):.2f} s without "
        f"({shown(work[False])}), {min(work[True]):.2f} s with ({shown(work[True])}): "
        f"{min(work[True]) / min(work[False]):.3f}x"
    )
    print(f"the ten runs under the file at report time (read, checked, applied): {reporting:.2f} s")
    sys.exit(0 if ratio <= TARGET else 1)


if __name__ == "__main__":
    main()
