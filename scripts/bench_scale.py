"""The scale benchmark (`make bench-scale`): ten systems over 620 documents side by side in one run.

Ten job-protocol fakes on 127.0.0.1 (`scripts/job_fakes.py`, each a process of its own; five vendor
protocols, each twice with other options) answer a synthetic dataset of small PDFs; ONE `oeb run
--config ... x10` asks all ten systems through oeb's real adapters and grades as the answers arrive.
It reports the wall time against the bound (the slowest system's max(N / rate, N x latency / in
flight)), Ray start-up apart, the driver's CPU and peak RSS, the Ray object store's peak, requests per
second and CPU seconds of each fake, jobs bought per document (must be exactly 1), and the time from the
last answer to grading done, against the targets of docs/performance/scale.md. `--nodes 2` runs it on a
local two-node Ray started with `ray start` (head and worker on 127.0.0.2); `--profile` records the
driver with py-spy and prints where its CPU went; `--terminal` runs oeb on a tmux terminal and keeps
text captures of its live view (`--keep` to read them).

Usage: uv run python scripts/bench_scale.py [--documents 620] [--systems 10] [--latency 2] [--spread 0.5]
           [--in-flight 8] [--rate 20] [--poll 0.5] [--nodes 1|2] [--profile] [--terminal] [--keep DIR]
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import itertools
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from job_fakes import SCHEMA, gold, pdf

from oeb.run.plan.config import init_tree, to_yaml

HERE = Path(__file__).resolve().parent
pa: Any = importlib.import_module("pyarrow")  # no type stubs
pq: Any = importlib.import_module("pyarrow.parquet")
KEYS = {
    "datalab": "DATALAB_API_KEY",
    "reducto": "REDUCTO_API_KEY",
    "extend": "EXTEND_API_KEY",
    "llamaextract": "LLAMA_CLOUD_API_KEY",
    "azure-cu": "AZURE_CU_KEY",
}
SYSTEMS: list[tuple[str, str, dict[str, Any]]] = [
    ("datalab-balanced", "datalab", {"mode": "balanced"}),
    ("datalab-accurate", "datalab", {"mode": "accurate"}),
    ("reducto-max", "reducto", {"agentic_table_mode": "max"}),
    ("reducto-default", "reducto", {"agentic_table_mode": "default"}),
    ("extend-max-context", "extend", {"array_strategy": "large_array_max_context"}),
    ("extend-heuristics", "extend", {"array_strategy": "large_array_heuristics"}),
    ("llamaextract-agentic-plus", "llamaextract", {"tier": "agentic_plus"}),
    ("llamaextract-agentic", "llamaextract", {"tier": "agentic"}),
    ("azure-cu-mini", "azure-cu", {"completion_model": "gpt-4.1-mini"}),
    ("azure-cu", "azure-cu", {"completion_model": "gpt-4.1"}),
]
"""Ten systems: five vendor protocols, each with two option settings (a fake of its own each)."""
HEAD = "127.0.0.2"
HEAD_PORT = 6391
TARGET_WALL = 1.2
TARGET_RSS_MB = 1024
TARGET_GRADING_S = 5.0


# the driver's side: `bench_scale.py --as-driver STATS -- <oeb arguments>` -------------------------


def as_driver(stats: Path, argv: list[str]) -> int:
    """Run `oeb argv` in this process, sampling the Ray object store every second, and write this
    process's CPU seconds, peak RSS and the store's peak to `stats` at exit."""
    peak = {"object_store_bytes": 0}

    def sample() -> None:
        state = None  # one connection to the GCS for the whole run: the samples are the driver's CPU too
        while True:
            time.sleep(1.0)
            ray = sys.modules.get("ray")
            try:
                if ray is None or not ray.is_initialized():  # (ray may be half imported: AttributeError)
                    state = None
                    continue
                internal: Any = importlib.import_module("ray._private.internal_api")  # untyped
                state = state or internal.get_state_from_address(ray.get_runtime_context().gcs_address)
                used = internal.get_memory_info_reply(state).store_stats.object_store_bytes_used
                peak["object_store_bytes"] = max(peak["object_store_bytes"], int(used))
            except Exception:  # the session may be closing: a lost sample is not worth a failure
                continue

    def write() -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        figures = {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024} | peak
        stats.write_text(json.dumps(figures))

    threading.Thread(target=sample, daemon=True).start()
    atexit.register(write)
    from oeb.cli import main as oeb

    return oeb(argv)


# the benchmark's side -----------------------------------------------------------------------------


def make_dataset(folder: Path, count: int) -> Path:
    """`count` small PDFs (1 to 30 KB), their gold and one schema, with a manifest."""
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    ids = [f"doc_{n:05d}" for n in range(count)]
    for n, doc_id in enumerate(ids):
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(pdf(doc_id, padding=1000 * (1 + n % 30)))
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(gold(doc_id)))
    columns = {
        "doc_id": ids,
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in ids],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in ids],
        "schema": [json.dumps(SCHEMA)] * count,
    }
    pq.write_table(pa.table(columns), folder / "manifest.parquet")
    return folder


@dataclass
class Fake:
    label: str
    protocol: str
    process: subprocess.Popen[str]
    url: str

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_stats", timeout=30) as reply:
            found: dict[str, Any] = json.load(reply)
            return found


def start_fakes(args: argparse.Namespace) -> list[Fake]:
    fakes = []
    for seed, (label, protocol, _) in enumerate(SYSTEMS[: args.systems]):
        command = [sys.executable, str(HERE / "job_fakes.py"), "--protocol", protocol, "--seed", str(seed)]
        command += ["--latency", str(args.latency), "--spread", str(args.spread), "--jobs", str(args.documents)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        fakes.append(Fake(label, protocol, process, process.stdout.readline().strip()))
    return fakes


def write_configs(args: argparse.Namespace, dataset: Path, fakes: list[Fake], folder: Path) -> list[Path]:
    """One config per system, pointed at its fake, each with its own pace and in-flight cap."""
    folder.mkdir()
    paths = []
    for (label, system, options), fake in zip(SYSTEMS, fakes, strict=False):
        tree = init_tree(system, str(dataset))
        located = {"endpoint": fake.url} if system == "azure-cu" else {"base_url": fake.url}
        tree["system"][system] |= options | located | {"poll_interval": args.poll}
        tree["workers"] = args.in_flight
        tree["timeout"] = 600.0
        rate = {"requests_per_second": args.rate, "max_in_flight": args.in_flight}
        tree["ray"] = {"address": None, "actors": args.actors, "rate_limit": rate}
        path = folder / f"{label}.yaml"
        path.write_text(to_yaml(tree))
        paths.append(path)
    return paths


def _patient(env: dict[str, str]) -> dict[str, str]:
    """Ray's start-up waits made long enough for a busy machine, where the benchmark would rather start
    slowly than not at all: a node's registration (30 s by default) and the raylet's wait for its
    metrics agent (which, past its default, aborts the raylet)."""
    return {"RAY_raylet_start_wait_time_s": "180", "RAY_agent_register_timeout_ms": "180000"} | env


def _agent_ports(first: int) -> list[str]:
    """Fixed ports for a node's agents (outside Ray's worker ports, 10002-19999). With ports left to
    choose, the raylet waits for its metrics agent to write the one it chose, and aborts when that
    takes long, as on a busy machine."""
    names = (
        "dashboard-agent-grpc-port",
        "dashboard-agent-listen-port",
        "metrics-export-port",
        "runtime-env-agent-port",
    )
    return [f"--{name}={first + n}" for n, name in enumerate(names)]


class TwoNodes:
    """A local two-node Ray started with `ray start` on 127.0.0.2 (a head and a worker of one CPU
    each); every process it starts carries a tag, so stopping it leaves none behind."""

    def __init__(self, work: Path, census: Census) -> None:
        self.census = census
        self.tag = uuid.uuid4().hex
        self.temp = Path(tempfile.mkdtemp(prefix="oebscale"))  # short: Ray's unix sockets live under it
        self.work = work
        self.nodes: list[subprocess.Popen[bytes]] = []
        self.address = f"{HEAD}:{HEAD_PORT}"

    def _start(self, name: str, arguments: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
        env |= {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "OEB_SCALE_TAG": self.tag}
        env[CENSUS_TAG] = self.census.value
        env = _patient(env)
        env["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] = "0"
        log = self.work / f"{name}.log"
        ray = str(Path(sys.executable).with_name("ray"))
        with log.open("wb") as out:
            command = [ray, "start", "--block", f"--node-ip-address={HEAD}", *arguments]
            self.nodes.append(subprocess.Popen(command, stdout=out, stderr=out, env=env, start_new_session=True))
        deadline = time.monotonic() + 180
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if self.nodes[-1].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench_scale: the Ray {name} did not start; see {log}")
            time.sleep(0.2)

    def __enter__(self) -> TwoNodes:
        head = ["--head", f"--port={HEAD_PORT}", "--num-cpus=1", f"--temp-dir={self.temp}", "--include-dashboard=false"]
        try:
            self._start("head", head + _agent_ports(HEAD_PORT + 2))
            self._start("worker", [f"--address={self.address}", "--num-cpus=1", *_agent_ports(HEAD_PORT + 6)])
        except BaseException:
            self.__exit__()  # a node that did start is stopped
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for node in reversed(self.nodes):
            with _quiet():
                os.killpg(node.pid, signal.SIGTERM)
            try:
                node.wait(30)
            except subprocess.TimeoutExpired:
                with _quiet():
                    os.killpg(node.pid, signal.SIGKILL)
        for pid in _tagged(f"OEB_SCALE_TAG={self.tag}"):
            with _quiet():
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.temp, ignore_errors=True)


CENSUS_TAG = "OEB_SCALE_CENSUS"
"""Set in the environment of the driver and of a two-node Ray: every process of the run inherits it."""
_TICK = os.sysconf("SC_CLK_TCK")


class Census:
    """CPU seconds of every process of the run by kind (the driver, the actors, the grading workers,
    Ray's daemons), read from /proc each half second: where the cores went, not only the driver's
    share. A process that ends between two readings loses at most its last half second."""

    KINDS = ("driver", "actors", "grading workers", "raylet", "gcs_server", "other processes", "py-spy")

    def __init__(self) -> None:
        self.value = uuid.uuid4().hex
        self.tag = f"{CENSUS_TAG}={self.value}".encode()
        self.cpu: dict[int, tuple[str, float]] = {}
        self.skip: set[int] = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Census:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.done.wait(0.5):
            self.read()

    def read(self) -> None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or (pid := int(entry.name)) in self.skip:
                continue
            try:
                if pid not in self.cpu and self.tag not in (entry / "environ").read_bytes():
                    self.skip.add(pid)
                    continue
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            seconds = (int(fields[11]) + int(fields[12])) / _TICK
            kind = self._kind(title)  # a worker takes its title (actor, task) after it started
            if kind == "other processes" or self.cpu.get(pid, ("",))[0] == "actors":
                kind = self.cpu.get(pid, (kind,))[0]
            self.cpu[pid] = (kind, seconds)

    @staticmethod
    def _kind(title: str) -> str:
        if Path(title.split(" ", 1)[0]).name == "py-spy":
            return "py-spy"
        if "--as-driver" in title:
            return "driver"
        if title.startswith("ray::SystemActor"):
            return "actors"
        if title.startswith("ray::"):
            return "grading workers"
        for daemon in ("raylet", "gcs_server"):
            if daemon in title.split(" ", 1)[0]:
                return daemon
        return "other processes"

    def totals(self) -> dict[str, tuple[int, float]]:
        """Processes and their CPU seconds by kind, over every process seen."""
        found = dict.fromkeys(self.KINDS, (0, 0.0))
        for kind, seconds in self.cpu.values():
            count, total = found[kind]
            found[kind] = (count + 1, total + seconds)
        return found


class _quiet:
    """Ignore a process already gone."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, *rest: object) -> bool:
        return kind is ProcessLookupError


def _tagged(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def run_driver(
    args: argparse.Namespace, configs: list[Path], out: Path, work: Path, address: str | None, census: Census
) -> dict[str, Any]:
    """One `oeb run` of every config in a process of its own (its plain output to driver.log)."""
    stats = work / "driver.json"
    command = [sys.executable, __file__, "--as-driver", str(stats), "--", "run"]
    for config in configs:
        command += ["--config", str(config)]
    if address:
        command += ["--set", f"ray.address={address}"]
    command += ["--out", str(out), "-y", "--no-details"]
    if args.profile:
        spy = str(Path(sys.executable).with_name("py-spy"))
        command = [
            spy,
            "record",
            "--rate",
            "50",
            "--gil",
            "--format",
            "raw",
            "-o",
            str(work / "driver.folded"),
            "--",
            *command,
        ]
    env = os.environ | {key: "bench-fake" for key in KEYS.values()}
    if address:
        env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    else:
        env.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    env |= {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", CENSUS_TAG: census.value}
    env = _patient(env)
    began = time.monotonic()
    if args.terminal:
        code = _in_terminal(command, env, work)
    else:
        with (work / "driver.log").open("w") as log:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False).returncode
    ended = time.monotonic()
    figures: dict[str, Any] = json.loads(stats.read_text()) if stats.exists() else {}
    return figures | {"exit": code, "began": began, "ended": ended}


def _in_terminal(command: list[str], env: dict[str, str], work: Path) -> int:
    """Run `command` on a tmux terminal (150 x 30), so oeb shows its live table, and save a capture of
    the screen every 10 s (`screen-NNN.txt`) and at the end (`driver.log`); its exit code."""
    session = f"oeb-scale-{os.getpid()}"
    done = work / "driver.exit"
    line = " ".join(shlex.quote(part) for part in command) + f"; echo $? > {shlex.quote(str(done))}; sleep 600"
    tmux = ["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "30", line]
    subprocess.run(tmux, env=env, check=True)
    try:
        for shot in itertools.count():
            if done.exists() and done.read_text().strip():
                break
            if shot % 10 == 0:
                (work / f"screen-{shot // 10:03d}.txt").write_text(_screen(session))
            time.sleep(1)
        (work / "driver.log").write_text(_screen(session, history=True))
        return int(done.read_text())
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def _screen(session: str, history: bool = False) -> str:
    command = ["tmux", "capture-pane", "-p", "-t", session] + (["-S", "-2000"] if history else [])
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def folder_times(out: Path) -> dict[str, dict[str, float]]:
    """Per run folder: when its last answer was saved and when its grading was done (wall clock)."""
    found = {}
    for folder in sorted(path for path in out.iterdir() if path.is_dir()):
        saved = [entry.stat().st_mtime for entry in (folder / "predictions").glob("*.json")]
        summary = folder / "field_matching" / "summary.json"
        found[folder.name] = {
            "answers": len(saved),
            "last_answer": max(saved, default=float("nan")),
            "graded": summary.stat().st_mtime if summary.exists() else float("nan"),
        }
    return found


def hot_spots(folded: Path, top: int = 15) -> list[str]:
    """The functions where the driver spent most samples (own time), from py-spy's raw output."""
    own: Counter[str] = Counter()
    total = 0
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        total += int(count)
        own[re.sub(r" \(.*?\)$", "", stack.rsplit(";", 1)[-1])] += int(count)
    return [f"{100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(top)]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _turn(stats: dict[str, Any], in_flight: int) -> float:
    """The mean time a slot stays empty: with `in_flight` jobs at most, the k-th submit waits for the
    (k - in_flight)-th job seen done (the start schedule, far from binding here, aside)."""
    submitted, seen = stats["submitted"], stats["seen"]
    last = min(len(submitted), len(seen) + in_flight)
    return _mean([submitted[k] - seen[k - in_flight] for k in range(in_flight, last)])


def report(
    args: argparse.Namespace,
    fakes: list[Fake],
    driver: dict[str, Any],
    out: Path,
    work: Path,
    cpu: dict[str, tuple[int, float]],
) -> bool:
    """Print the figures and the targets; whether every target was met."""
    stats = {fake.label: fake.stats() for fake in fakes}
    firsts = [s["first"] for s in stats.values() if s["first"] is not None]
    if not firsts or not out.is_dir():
        print(f"bench-scale: oeb run exited {driver['exit']} without asking any fake; the end of its log:")
        for line in (work / "driver.log").read_text(errors="replace").splitlines()[-15:]:
            print(f"    {line}")
        return False
    startup = min(firsts) - driver["began"]  # the fakes' monotonic clock is the machine's, as ours
    first = min(firsts)
    times = folder_times(out)
    last_answer = max((t["last_answer"] for t in times.values()), default=float("nan"))
    graded = max((t["graded"] for t in times.values()), default=float("nan"))
    wall_clock_now, monotonic_now = time.time(), time.monotonic()

    def monotonic(stamp: float) -> float:
        return stamp - wall_clock_now + monotonic_now

    asking = monotonic(graded) - first
    bound = max(args.documents / args.rate, args.documents * args.latency / args.in_flight)
    polled = max(args.documents / args.rate, args.documents * (args.latency + args.poll / 2) / args.in_flight)
    tail = graded - last_answer
    wall = driver["ended"] - driver["began"]
    jobs = Counter[str]()
    for s in stats.values():
        jobs.update(s["jobs_per_document"])
    once = set(jobs) == {"1"} and jobs["1"] == args.documents * len(fakes)
    rss = driver.get("peak_rss_mb", float("nan"))
    ok = (
        driver["exit"] == 0
        and asking <= TARGET_WALL * bound
        and once
        and rss < TARGET_RSS_MB
        and tail <= TARGET_GRADING_S
    )
    print(
        f"bench-scale: {len(fakes)} systems x {args.documents} documents, jobs of {args.latency:g} s on average "
        f"(log-normal sigma {args.spread:g}), {args.in_flight} in flight and {args.rate:g} starts/s per system, "
        f"polls every {args.poll:g} s, {args.nodes} node{'s' if args.nodes > 1 else ''}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"  oeb run exit {driver['exit']}; run folders with answers: {sum(1 for t in times.values() if t['answers'])}"
    )
    rows = [
        ("wall, oeb run start to exit", f"{wall:.1f} s", ""),
        ("  Ray start-up (start to the first request)", f"{startup:.1f} s", ""),
        (
            "  first request to grading done",
            f"{asking:.1f} s",
            f"<= {TARGET_WALL} x bound = {TARGET_WALL * bound:.0f} s",
        ),
        ("  bound: max(N / rate, N x latency / in flight)", f"{bound:.1f} s", f"ratio {asking / bound:.2f}"),
        (
            "  the same, a job seen done half a poll late",
            f"{polled:.1f} s",
            f"ratio {asking / polled:.2f} (information: real vendors' polls are a far smaller part of a job)",
        ),
        ("  last answer to grading done", f"{tail:.1f} s", f"<= {TARGET_GRADING_S:g} s"),
        ("driver CPU", f"{driver.get('cpu_s', float('nan')):.1f} s", ""),
        ("driver peak RSS", f"{rss:.0f} MB", f"< {TARGET_RSS_MB} MB"),
        ("Ray object store peak (sampled each second)", f"{driver.get('object_store_bytes', 0) / 2**20:.1f} MiB", ""),
        ("jobs bought per document", ", ".join(f"{k}: {v}" for k, v in sorted(jobs.items())), "exactly 1"),
    ]
    for name, value, target in rows:
        print(f"  {name:<48} {value:>14}  {target}")
    print("  late: a job's done seen by a poll after it was done, mean; turn: from a job seen done to the next submit")
    print("  (a slot freed and filled: the answer back to the driver, the next call, the requests before a submit);")
    print("  work: the fake's job seconds / in flight (its own bound); end: its last job seen done, from the start")
    print(
        f"  {'fake':<26} {'protocol':<13} {'requests':>9} {'req/s':>7} {'CPU s':>7} {'jobs':>6} {'late':>6} {'turn':>6}"
        f" {'work':>6} {'end':>6}  routes"
    )
    for label, s in stats.items():
        span = (s["last"] - s["first"]) if s["first"] is not None else 0.0
        rate = s["requests"] / span if span else 0.0
        routes = ", ".join(f"{k} {v}" for k, v in sorted(s["routes"].items()))
        print(
            f"  {label:<26} {s['protocol']:<13} {s['requests']:>9} {rate:>7.1f} {s['cpu_seconds']:>7.1f} "
            f"{s['jobs']:>6} {_mean(s['late']):>6.3f} {_turn(s, args.in_flight):>6.3f}"
            f" {sum(s['durations']) / args.in_flight:>6.1f} {max(s['seen'], default=first) - first:>6.1f}  {routes}"
        )
    fakes_cpu = sum(s["cpu_seconds"] for s in stats.values())
    cores = os.cpu_count() or 1
    print(f"  CPU seconds by process, start to exit ({cores} cores x {wall:.0f} s = {cores * wall:.0f} s available):")
    everything = (sum(n for n, _ in cpu.values()) + len(fakes), sum(s for _, s in cpu.values()) + fakes_cpu)
    print(f"    {'':<24} {'processes':>9} {'CPU s':>8}")
    for kind, (count, seconds) in [*cpu.items(), ("the fakes", (len(fakes), fakes_cpu)), ("in all", everything)]:
        if count:
            print(f"    {kind:<24} {count:>9} {seconds:>8.1f}")
    if args.profile and (work / "driver.folded").exists():
        print("  where the driver's Python CPU went (own time; py-spy --gil: samples holding the GIL):")
        for line in hot_spots(work / "driver.folded"):
            print(f"    {line}")
    if driver["exit"] != 0:
        print("  the end of the driver's log:")
        for line in (work / "driver.log").read_text(errors="replace").splitlines()[-15:]:
            print(f"    {line}")
    print(f"  targets {'met' if ok else 'NOT met'}")
    return ok


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--as-driver":
        return as_driver(Path(sys.argv[2]), sys.argv[4:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=620)
    parser.add_argument("--systems", type=int, default=len(SYSTEMS), choices=range(1, len(SYSTEMS) + 1))
    parser.add_argument("--latency", type=float, default=2.0, help="mean seconds of a job")
    parser.add_argument("--spread", type=float, default=0.5, help="log-normal sigma of a job's seconds (0: fixed)")
    parser.add_argument("--in-flight", type=int, default=8, help="documents in flight per system")
    parser.add_argument("--rate", type=float, default=20.0, help="starts per second per system")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between an adapter's polls")
    parser.add_argument(
        "--actors",
        type=int,
        help="actors per system (default: one per node; an actor waits on its vendor on threads, and each "
        "one costs a Ray worker's start-up and about 1%% of a core while idle)",
    )
    parser.add_argument("--nodes", type=int, default=1, choices=(1, 2))
    parser.add_argument("--profile", action="store_true", help="record the driver with py-spy")
    parser.add_argument(
        "--terminal", action="store_true", help="run oeb on a tmux terminal and keep captures of its live view"
    )
    parser.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    args = parser.parse_args()
    args.actors = args.actors or args.nodes
    if args.keep:
        args.keep.mkdir(parents=True)
    work = args.keep or Path(tempfile.mkdtemp(prefix="oeb-scale-"))
    dataset = make_dataset(work / "dataset", args.documents)
    fakes = start_fakes(args)
    try:
        configs = write_configs(args, dataset, fakes, work / "configs")
        with Census() as census:
            if args.nodes == 2:
                with TwoNodes(work, census) as cluster:
                    driver = run_driver(args, configs, work / "runs", work, cluster.address, census)
            else:
                driver = run_driver(args, configs, work / "runs", work, None, census)
        ok = report(args, fakes, driver, work / "runs", work, census.totals())
    finally:
        for fake in fakes:
            fake.process.terminate()
            fake.process.wait()
    if args.keep:
        print(f"  kept: {work} (dataset, configs, run folders, driver.log)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
