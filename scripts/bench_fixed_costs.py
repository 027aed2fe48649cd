"""Where the fixed seconds of `oeb grade` and `make bench` go (docs/performance/fixed-costs.md).

Writes a brought folder of 120 documents and its dataset (one 5,000-row nested list, four tables of
600-1,500 rows, 115 small forms; seeded, deterministic), then times, each in a fresh process:

- `import`: `python -c "import oeb.cli"` and what `oeb --version` costs;
- `grade`: `oeb grade FOLDER --dataset DATASET` from a cold start (the grading cache emptied first),
  with its phases from oeb's own timing lines (`OEB_TIMINGS=1`: start (interpreter and imports),
  command line, session start, grading, the documents' own CPU, session end), wall and CPU seconds;
- `grade, attached`: the same with `OEB_RAY_ADDRESS` set to a local Ray this script starts with
  `ray start --head` (its address: on a workstation `auto` finds it; skipped with `--no-attached`):
  first the command that starts the warm grading workers, then commands that find them (the cache
  emptied before each), and the memory the idle workers hold;
- `bench`: what `make bench` runs (`oeb run --config oeb/examples/mock.yaml -y`: 12 sample documents
  through `mock`, with the Makefile's environment), without `make setup`'s `uv sync`.

Python keeps each module's bytecode once it has compiled it, so an installed oeb compiles its imports
once; a shell with `PYTHONDONTWRITEBYTECODE` set (this development environment sets it) compiles them
in every command, seconds more. The commands run with their bytecode kept under `WORK/pycache`, after
one run of each to fill it; `--compile-each-time` measures them as that shell runs them.

`--root DIR` measures another checkout of oeb (e.g. `git worktree add /tmp/before HEAD~5`) with this
venv: its `oeb` package comes first on PYTHONPATH.

Usage: uv run python scripts/bench_fixed_costs.py [--work DIR] [--repeat N] [--no-attached] [--only NAME] [--root DIR]
                                                  [--compile-each-time]
       uv run python scripts/bench_fixed_costs.py --write DIR   (only write the folder and dataset)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["ACME", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent"]
CODES = ["EA", "PC", "KG", "BX", "M"]


def _list_document(rng: random.Random, rows: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A sanctions-style list: rows with a nested alias array, some misread or dropped in the prediction."""
    entry = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "country": {"type": "string"},
            "id": {"type": "string"},
            "aliases": {"type": "array", "items": {"type": "object", "properties": {"alias": {"type": "string"}}}},
        },
    }
    schema = {"type": "object", "properties": {"entries": {"type": "array", "items": entry}}}
    gold_rows = []
    for i in range(rows):
        row: dict[str, Any] = {"name": f"{rng.choice(NAMES)} {i % 97}", "country": rng.choice(NAMES)[:3], "id": f"S{i}"}
        if rng.random() < 0.3:
            row["aliases"] = [{"alias": f"{rng.choice(NAMES)}-{i}-{k}"} for k in range(rng.randint(1, 3))]
        gold_rows.append(row)
    predicted = [dict(row) for row in gold_rows if rng.random() > 0.03]
    for row in predicted:
        if rng.random() < 0.02:
            row["country"] = "XXX"
    return schema, {"entries": gold_rows}, {"entries": predicted}


def _table_document(rng: random.Random, rows: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A flat table of order lines with low-cardinality codes; a few cells misread."""
    line = {
        "type": "object",
        "properties": {
            "sku": {"type": "string"},
            "code": {"type": "string"},
            "qty": {"type": "integer"},
            "price": {"type": "number"},
        },
    }
    schema = {"type": "object", "properties": {"lines": {"type": "array", "items": line}}}
    gold_rows = [
        {
            "sku": f"K-{i:05d}",
            "code": rng.choice(CODES),
            "qty": rng.randint(1, 9),
            "price": round(rng.random() * 100, 2),
        }
        for i in range(rows)
    ]
    predicted = [dict(row) for row in gold_rows]
    for row in predicted:
        if rng.random() < 0.03:
            row["qty"] += 1
    return schema, {"lines": gold_rows}, {"lines": predicted}


def _form(rng: random.Random, n: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A small form: a dozen fields, one sometimes misread."""
    fields = {f"field_{k}": {"type": "string"} for k in range(12)}
    schema = {"type": "object", "properties": {**fields, "total": {"type": "number"}}}
    gold: dict[str, Any] = {f"field_{k}": f"{rng.choice(NAMES)} {n}-{k}" for k in range(12)}
    gold["total"] = round(rng.random() * 1000, 2)
    predicted = dict(gold)
    if rng.random() < 0.3:
        predicted["field_3"] = "misread"
    return schema, gold, predicted


def write_folder(work: Path, seed: int = 120) -> tuple[Path, Path]:
    """The dataset and the brought folder of 120 predictions under `work` (rewritten each time)."""
    rng = random.Random(seed)
    dataset, brought = work / "dataset", work / "brought"
    shutil.rmtree(dataset, ignore_errors=True)
    shutil.rmtree(brought, ignore_errors=True)
    for folder in (dataset / "pdfs", dataset / "gold", brought / "predictions"):
        folder.mkdir(parents=True)
    documents = [("lists", "sanctions_000", _list_document(rng, 5000))]
    documents += [
        ("tables", f"orders_{n:03d}", _table_document(rng, rows)) for n, rows in enumerate((600, 900, 1200, 1500))
    ]
    documents += [("forms", f"form_{n:03d}", _form(rng, n)) for n in range(115)]
    columns: dict[str, list[Any]] = {"doc_id": [], "suite": [], "doc_path": [], "gt_path": [], "schema": []}
    for suite, doc_id, (schema, gold, predicted) in documents:
        (dataset / "pdfs" / f"{doc_id}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
        (dataset / "gold" / f"{doc_id}.json").write_text(json.dumps(gold))
        (brought / "predictions" / f"{doc_id}.json").write_text(json.dumps(predicted))
        for name, value in (("doc_id", doc_id), ("suite", suite), ("doc_path", f"pdfs/{doc_id}.pdf")):
            columns[name].append(value)
        columns["gt_path"].append(f"gold/{doc_id}.json")
        columns["schema"].append(json.dumps(schema))
    pq.write_table(pa.table(columns), dataset / "manifest.parquet")
    return dataset, brought


MAKE_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
}
"""What the Makefile exports to every recipe."""
OEB = [sys.executable, "-c", "import sys; from oeb.cli import main; sys.exit(main())"]
"""`oeb` as its console script runs it, from whichever tree PYTHONPATH names first."""


BYTECODE: dict[str, str] = {}
"""Where the commands keep their bytecode (`PYTHONPYCACHEPREFIX`), unless `--compile-each-time`."""


def _env(**extra: str) -> dict[str, str]:
    """This environment without Ray's or oeb's Ray variables (a user's plain shell), timings on."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("RAY_", "OEB_RAY"))}
    if BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env | BYTECODE | {"OEB_TIMINGS": "1", "PYTHONPATH": str(ROOT)} | extra


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, dict[str, float], str]:
    """Wall seconds of `command`, the phases oeb printed (`oeb timing: NAME WALL CPU`: each phase's
    wall and CPU seconds) and `cpu` (the CPU seconds of the process and the children it waited for),
    and its output."""
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{output[-2000:]}")
    phases = {"cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime}
    for line in output.splitlines():
        if line.startswith("oeb timing: "):
            name, seconds, cpu = line.removeprefix("oeb timing: ").rsplit(" ", 2)
            phases[name] = phases.get(name, 0.0) + float(seconds)
            if cpu != "-":
                phases[f"{name} cpu"] = phases.get(f"{name} cpu", 0.0) + float(cpu)
    return wall, phases, output


def _report(name: str, runs: list[tuple[float, dict[str, float], str]]) -> None:
    walls = [wall for wall, _, _ in runs]
    phases: dict[str, list[float]] = {}
    for _, found, _ in runs:
        for phase, seconds in found.items():
            phases.setdefault(phase, []).append(seconds)
    shown = ", ".join(f"{phase} {statistics.median(values):.2f}" for phase, values in phases.items())
    print(f"{name}: wall median {statistics.median(walls):.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)})"
          + (f"; phases (median s): {shown}" if shown else ""), flush=True)  # fmt: skip


HEAD_ATTEMPTS = 2
"""On a busy machine a head can miss Ray's fixed 30-s start-up wait; a second start then succeeds."""


def ray_head(temp: Path, port: int = 6611) -> tuple[subprocess.Popen[bytes], str]:
    """`ray start --head --block` without the dashboard, in its own temp folder and on ports of its
    own (`port`, its client server on the next); returns it once it is up, and its address (given to
    oeb explicitly: `auto` picks any Ray it finds on the machine, and a shared machine runs several).
    Stop it with `os.killpg(head.pid, signal.SIGTERM)`."""
    ray = Path(sys.executable).parent / "ray"
    command = [str(ray), "start", "--head", "--block", "--num-cpus=2", "--include-dashboard=false"]
    command += [f"--port={port}", f"--ray-client-server-port={port + 1}", f"--temp-dir={temp / 'r'}"]
    env = _env(RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0", RAY_USAGE_STATS_ENABLED="0")
    for attempt in range(1, HEAD_ATTEMPTS + 1):
        with (temp / "head.log").open("wb") as log:
            head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + 180
        while b"Ray runtime started" not in (temp / "head.log").read_bytes():
            if head.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        else:
            address = re.search(r"--address='([^']+)'", (temp / "head.log").read_text())
            if address is None:
                raise SystemExit(f"no address in {temp / 'head.log'}")
            return head, address.group(1)
        log_text = (temp / "head.log").read_text()[-2000:]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, 9)
        head.wait(60)
        if attempt == HEAD_ATTEMPTS:
            shutil.rmtree(temp, ignore_errors=True)
            raise SystemExit(f"ray start failed {HEAD_ATTEMPTS} times; the last said:\n{log_text}")
    raise AssertionError("unreachable")


def _idle_workers_mb() -> list[float]:
    """The resident memory of each warm grading worker on this machine (MB)."""
    sizes = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            text = status.read_text()
            rss = re.search(r"VmRSS:\s+(\d+)", text)
            if text.startswith("Name:\tray::GradingWor") and rss:
                sizes.append(int(rss.group(1)) / 1024)
    return sizes


def _attached(grade: list[str], brought: Path, repeat: int) -> None:
    """`oeb grade` on a running local Ray: the first command (it starts the warm workers), then
    commands that find them; the cache emptied before each."""
    temp = Path(tempfile.mkdtemp(prefix="oebhead"))
    head, address = ray_head(temp)
    try:
        attached = _env(OEB_RAY_ADDRESS=address)
        shutil.rmtree(brought / "field_matching", ignore_errors=True)
        first = _timed(grade, attached)
        _report(
            "oeb grade, 120 documents, attached to a running local Ray: the first command (starts the workers)", [first]
        )
        runs = []
        for _ in range(repeat):
            shutil.rmtree(brought / "field_matching", ignore_errors=True)
            runs.append(_timed(grade, attached))
        _report("oeb grade, 120 documents, attached to a running local Ray, warm workers", runs)
        print(f"warm workers idle: {', '.join(f'{mb:.0f} MB' for mb in _idle_workers_mb())}", flush=True)
        stop = _timed([*OEB, "grade", "--stop-workers"], attached)
        print(f"oeb grade --stop-workers: {stop[0]:.2f} s; workers left: {len(_idle_workers_mb())}", flush=True)
    finally:
        os.killpg(head.pid, 15)
        head.wait(60)
        shutil.rmtree(temp, ignore_errors=True)


def main() -> None:
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "oeb-fixed-costs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-attached", action="store_true", help="skip the runs against a running local Ray")
    parser.add_argument("--only", choices=("import", "grade", "attached", "bench"), action="append")
    parser.add_argument("--root", type=Path, default=ROOT, help="the oeb checkout to measure (default: this one)")
    parser.add_argument("--write", type=Path, metavar="DIR", help="only write the dataset and brought folder")
    parser.add_argument(
        "--compile-each-time", action="store_true", help="keep no bytecode: every command compiles its imports"
    )
    args = parser.parse_args()
    if args.write:
        write_folder(args.write)
        return
    dataset, brought = write_folder(args.work)
    ROOT = args.root.resolve()
    oeb = OEB
    grade = [*oeb, "grade", str(brought), "--dataset", str(dataset)]
    only = set(args.only or ("import", "grade", "attached", "bench"))
    if not args.compile_each_time:
        BYTECODE["PYTHONPYCACHEPREFIX"] = str(args.work / "pycache")
        _timed(grade, _env())  # compiles what the commands import (every verb: --version lists them)
        _timed([*oeb, "--help"], _env())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if "import" in only:
        _report(
            "import oeb.cli", [_timed([sys.executable, "-c", "import oeb.cli"], _env()) for _ in range(args.repeat)]
        )
        _report("oeb --version", [_timed([*oeb, "--version"], _env()) for _ in range(args.repeat)])
    if "grade" in only:
        runs = []
        for _ in range(args.repeat):
            shutil.rmtree(brought / "field_matching", ignore_errors=True)
            runs.append(_timed(grade, _env()))
        _report("oeb grade, 120 documents, cold", runs)
        _report("oeb grade, 120 documents, cache warm", [_timed(grade, _env()) for _ in range(args.repeat)])
    if "attached" in only and not args.no_attached:
        _attached(grade, brought, args.repeat)
    if "bench" in only:
        out = args.work / "bench-runs"
        bench = [*oeb, "run", "--config", "oeb/examples/mock.yaml", "--out", str(out), "-y"]
        if BYTECODE:
            _timed(bench, _env(**MAKE_ENV))  # compiles what the run verb imports as it runs
        _report("make bench (its oeb run)", [_timed(bench, _env(**MAKE_ENV)) for _ in range(args.repeat)])
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
