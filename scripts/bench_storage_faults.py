"""A run to S3 through a proxy that throttles, closes and stalls connections (`make bench-storage`,
docs/storage.md).

moto's S3 server on 127.0.0.1, and in front of it the tests' fault proxy (`tests/fixtures/fault_proxy.py`)
meeting each request with a fault at the rates `--faults` gives, by default 40% SlowDown (503), 5% of
the connections closed before any answer and 3% stalled `--stall` (4) seconds before they are
forwarded; `--faults reset:0.2,reset_after:0.2` resets 40% of them instead, half before forwarding
and half after (the store has the write, the client cannot know). The dataset (`--documents` of them,
60) and the run folder are both on S3 behind the proxy; real `oeb run`, `oeb grade` and `oeb report`
processes with the mock system. Then, read straight from moto: every record, prediction and score line
must be there and whole, the mock's call log must show every document asked once, and no temporary
file, job handle or lock may be left. Prints the requests and faults the proxy saw, each command's
wall time and the machine's load; exits 1 if anything was lost.

Usage: uv run python scripts/bench_storage_faults.py [--documents 60] [--faults 503:0.4,close:0.05,stall:0.03]
       [--stall 4] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_run import _tiny_dataset
from fixtures.fault_proxy import FaultProxy

from oeb import storage
from oeb.run.plan.config import init_tree, to_yaml

BUCKET = "bench"


def _oeb(args: list[str], env: dict[str, str]) -> tuple[int, float, str, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "oeb", *args], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    return done.returncode, time.perf_counter() - started, done.stdout, done.stderr


def _problems(run: str, ids: list[str], calls: Path) -> list[str]:
    """What is missing, torn, doubled or left over in the run folder (read straight from moto)."""
    problems = []
    files = storage.list_files(run)
    for doc_id in ids:
        try:
            record = storage.read_json(storage.join(run, "records", f"{doc_id}.json"))
            if record.get("error") is None:
                prediction = storage.read_json(storage.join(run, "predictions", f"{doc_id}.json"))
                if prediction != record["output"]:
                    problems.append(f"{doc_id}: the prediction is not the record's output")
        except Exception as error:
            problems.append(f"{doc_id}: {error}")
    lines = storage.read_jsonl(storage.join(run, "field_matching", "scores.jsonl"))
    scored = Counter(line["id"] for line in lines)
    if scored != Counter(ids):
        problems.append(f"scores.jsonl has {len(lines)} lines for {len(scored)} of {len(ids)} documents")
    asked = Counter(line.split("\t")[0] for line in calls.read_text().splitlines())
    if asked != Counter(ids):
        twice = sorted(doc_id for doc_id, count in asked.items() if count > 1)
        problems.append(f"{len(asked)} documents asked, {len(twice)} more than once ({twice[:5]})")
    stray = [path for path in files if path.endswith(".tmp") or path.startswith("jobs/") or path == ".oeb-lock"]
    if stray:
        problems.append(f"left over: {stray[:5]}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--faults", default="503:0.4,close:0.05,stall:0.03",
                        help="KIND:RATE,... of the fault proxy's kinds (503, 500, reset, reset_after, close, stall, "
                             "truncate)")  # fmt: skip
    parser.add_argument("--stall", type=float, default=4.0, help="seconds a stalled request is held")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        weights = {kind: float(rate) for kind, rate in (part.split(":") for part in args.faults.split(","))}
    except ValueError:
        parser.error(f"--faults {args.faults!r} is not KIND:RATE,...")

    os.environ |= {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip
    os.environ.pop("AWS_PROFILE", None)
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's line per request

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    upstream = f"http://{host}:{port}"
    os.environ["AWS_ENDPOINT_URL"] = upstream
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="oeb-bench-storage-") as work_dir:
        work = Path(work_dir)
        storage.filesystem(f"s3://{BUCKET}")[0].mkdir(BUCKET)
        local = _tiny_dataset(work / "dataset", args.documents)
        dataset = f"s3://{BUCKET}/dataset"
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            storage.write_bytes(storage.join(dataset, path.relative_to(local).as_posix()), path.read_bytes())
        ids = [f"doc_{n:04d}" for n in range(args.documents)]
        calls = work / "calls.log"
        tree = init_tree("mock", dataset)
        tree["workers"] = 4
        tree["system"]["mock"] |= {"latency": 0.2, "misread": 0.05, "usd": 0.01, "calls_log": str(calls)}
        tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
        config = work / "mock.yaml"
        config.write_text(to_yaml(tree))

        with FaultProxy(upstream, stall_s=args.stall, seed=args.seed) as proxy:
            proxy.weights = weights
            env = dict(os.environ) | {"AWS_ENDPOINT_URL": proxy.url, "OEB_SPILL_DIR": str(work / "spill")}
            out = f"s3://{BUCKET}/runs"
            code, ran_s, _, err = _oeb(["run", "--config", str(config), "--out", out, "-y"], env)
            if code != 0:
                sys.exit(f"oeb run ended with {code}: {err[-2000:]}")
            [run] = {storage.join(out, p.split("/")[0]) for p in storage.list_files(out) if p.endswith("settings.json")}
            code, graded_s, graded, err = _oeb(["grade", run], env)
            if code != 0:
                sys.exit(f"oeb grade ended with {code}: {err[-2000:]}")
            code, report_s, _, err = _oeb(["report", run, "--out", str(work / "report.md")], env)
            if code != 0:
                sys.exit(f"oeb report ended with {code}: {err[-2000:]}")
            requests, faults = proxy.total(), dict(proxy.faults)
        problems = _problems(run, ids, calls)
        headline = json.loads(graded)["scorers"]["field_matching"]["headline"]
    server.stop()
    load_after = os.getloadavg()
    failed = sum(faults.values())
    rates = ", ".join(f"{kind} {rate:.0%}" for kind, rate in weights.items())
    print(f"{args.documents} documents to S3 through a fault proxy: {rates}; stalls {args.stall:g} s, seed {args.seed}")
    print(f"  requests {requests}, faults {failed} ({failed / requests:.0%}): {faults}")
    print(f"  oeb run {ran_s:.1f} s, oeb grade {graded_s:.1f} s, oeb report {report_s:.1f} s; headline {headline:.3f}")
    print(f"  load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    if problems:
        print("LOST OR DOUBLED:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print(f"  every record, prediction and score of the {args.documents} documents whole; each asked once")


if __name__ == "__main__":
    main()
