"""Submit oeb to a Ray cluster through its Jobs API: `make bench`, `make bench-all` and `make regrade`
with RAY_ADDRESS set.

    python scripts/submit.py --config configs/reducto.yaml --out s3://bucket/runs [--set rows.limit=20]
    python scripts/submit.py --config configs/a.yaml --config configs/b.yaml --out s3://bucket/runs/all
    python scripts/submit.py --grade s3://bucket/runs/ [--out s3://bucket/regraded]

All the configs go in ONE job whose driver runs `python -m oeb run --config A --config B ... --set
ray.address=auto` on the cluster: the systems run side by side in that one run, each with its own
actors, start schedule and in-flight cap, one folder each under --out, one leaderboard at the end
(`--grade`: one job running `oeb grade RUNS --address auto`). The repository is the job's
working directory (so the cluster runs this checkout's code and configs; runs/, tests and caches stay
here), and the storage settings its workers need (AWS_* / HF_* / OEB_*) are taken from this shell into
the job's runtime env. API keys are not: Ray logs runtime envs in plain text on every node, so the
job's driver reads them from the cluster's own environment (its secret store, cluster/README.md) and
hands them to its actors; `--send-keys` sends them from this shell, for a throwaway cluster. The job's
log is followed (it ends with the leaderboard); the exit status is 0 only when the job succeeded.
Ctrl-C stops the job (`oeb resume` continues its runs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from oeb import storage
from oeb.errors import OebError, RayUnavailable, UsageError
from oeb.run.cluster.session import system_keys, worker_env
from oeb.run.plan.config import load_config

REPO = Path(__file__).resolve().parent.parent
EXCLUDES = [".git", ".venv", "/runs", "/tests", "**/__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
            ".hypothesis", "*.log", ".env", ".env.*"]  # fmt: skip
JOB_ENV = {
    # oeb's driver asks for the same variables in ray.init; inside a job that would be a conflict.
    "RAY_OVERRIDE_JOB_RUNTIME_ENV": "1",
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
}
_POLL_SECONDS = 2.0


@dataclass(frozen=True)
class Job:
    """One submitted job: what it runs (a config, or `grade RUNS`) and its submission id."""

    what: str
    job_id: str


def run_command(configs: list[str], out: str, sets: list[str], python: str) -> str:
    """The shell command of a benchmark job's driver: every config side by side in one run."""
    words = [python, "-m", "oeb", "run", *(word for config in configs for word in ("--config", config))]
    words += ["--set", "ray.address=auto"]
    for assignment in sets:
        words += ["--set", assignment]
    return shlex.join([*words, "--out", out, "-y"])


def grade_command(runs: str, out: str | None, python: str) -> str:
    """The shell command of a regrade job's driver."""
    return shlex.join([python, "-m", "oeb", "grade", runs, "--address", "auto", *(["--out", out] if out else [])])


def runtime_env(variables: dict[str, str]) -> dict[str, object]:
    """The repository as working directory, and `variables` for the driver and every worker."""
    return {"working_dir": str(REPO), "excludes": EXCLUDES, "env_vars": variables | JOB_ENV}


def job_env(config: str, sets: list[str], send_keys: bool) -> dict[str, str]:
    """The storage settings, and with `send_keys` the system's key variables (refused here when one
    is unset); the config is checked here first, so a typo fails before anything is submitted."""
    adapter = load_config(config, sets).adapter
    if not send_keys:
        return worker_env()
    adapter.check_keys()
    return worker_env() | system_keys(adapter.keys, adapter.stand_ins)


def _shipped(config: str) -> str:
    """The config's path inside the repository (the job's working directory), or a one-line refusal."""
    path = Path(config).resolve()
    if not path.is_file():
        raise UsageError(f"no config at {config}; give a file such as configs/reducto.yaml")
    if not path.is_relative_to(REPO):
        raise UsageError(f"{config} is outside {REPO}, so it would not ship with the job; copy it under configs/")
    return path.relative_to(REPO).as_posix()


def _client(address: str | None):
    from ray.job_submission import JobSubmissionClient

    logging.getLogger("ray").setLevel(logging.ERROR)  # packaging chatter (set once Ray has configured it)
    try:
        return JobSubmissionClient(address)
    except (ConnectionError, RuntimeError, ValueError) as error:
        message = " ".join(str(error).split())[:200]
        raise RayUnavailable(
            f"cannot reach the Ray Jobs API at {address or os.environ.get('RAY_ADDRESS')} ({message}); set "
            "RAY_ADDRESS to the head's dashboard (http://HEAD:8265) and check the cluster is up"
        ) from None


def plan_runs(configs: list[str], sets: list[str], send_keys: bool) -> list[tuple[str, dict[str, str]]]:
    """Each config's path in the repository and the job's variables for it, checked before anything is
    submitted; with several configs, one that cannot run (e.g. a key unset) is reported and left out."""
    planned = []
    for config in configs:
        try:
            shipped = _shipped(config)
            planned.append((shipped, job_env(str(REPO / shipped), sets, send_keys)))
        except OebError as error:
            if len(configs) == 1:
                raise
            print(f"submit: {config} skipped: {error}", file=sys.stderr)
    if not planned:
        raise UsageError("no config can be submitted")
    return planned


def _submit(client, what: str, command: str, env: dict[str, str]) -> Job:
    try:
        job_id = client.submit_job(entrypoint=command, runtime_env=runtime_env(env), metadata={"oeb": what})
    except (ConnectionError, RuntimeError, ValueError) as error:
        message = " ".join(str(error).split())[:300]
        raise RayUnavailable(
            f"the cluster refused the job for {what} ({message}); check the cluster (ray status)"
        ) from None
    print(f"submit: {what}: job {job_id}", file=sys.stderr)
    return Job(what, job_id)


async def _follow(client, job_id: str) -> None:
    async for lines in client.tail_job_logs(job_id):
        sys.stdout.write(lines)
        sys.stdout.flush()


def wait(client, jobs: list[Job], follow: bool) -> dict[str, str]:
    """Each job's final state; the one job's log is printed as it comes."""
    from ray.job_submission import JobStatus

    if follow:
        asyncio.run(_follow(client, jobs[0].job_id))
    states: dict[str, str] = {}
    while len(states) < len(jobs):
        for job in jobs:
            if job.job_id in states:
                continue
            status = client.get_job_status(job.job_id)
            if status.is_terminal():
                states[job.job_id] = str(status.value)
                print(f"submit: {job.what}: job {job.job_id} {status.value}", file=sys.stderr)
                if status != JobStatus.SUCCEEDED and not follow:
                    tail = client.get_job_logs(job.job_id).splitlines()[-15:]
                    print("\n".join(f"  | {line}" for line in tail), file=sys.stderr)
        if len(states) < len(jobs):
            time.sleep(_POLL_SECONDS)
    return states


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--config", action="append", help="a config in this repository (repeatable)")
    task.add_argument("--grade", metavar="RUNS", help="regrade this run folder or prefix of runs on the cluster")
    parser.add_argument("--out", help="where runs (or regrade results) go, on shared storage: s3://bucket/runs")
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="PATH=VALUE",
                        help="passed to oeb run for every config")  # fmt: skip
    parser.add_argument("--address", help="the Ray dashboard, http://HEAD:8265 (default: $RAY_ADDRESS)")
    parser.add_argument("--python", default="python", help="the interpreter with oeb on the cluster's nodes")
    parser.add_argument(
        "--send-keys",
        action="store_true",
        help="also send the system's key variables from this shell (Ray logs runtime envs in plain text on every "
        "node and shows them in the dashboard: for a throwaway cluster only)",
    )
    args = parser.parse_args(argv)
    jobs: list[Job] = []
    client = None
    try:
        if args.config and not args.out:
            raise UsageError("--out is required with --config: the shared folder for the runs, s3://bucket/runs")
        for option, url in (("--out", args.out), ("--grade", args.grade)):
            if url and storage.is_local(url):
                raise UsageError(
                    f"{option} {url} is on this machine; the cluster reads and writes shared storage: s3://..."
                )
        planned = plan_runs(args.config, args.sets, args.send_keys) if args.config else []
        client = _client(args.address)
        if args.grade:
            command = grade_command(args.grade, args.out, args.python)
            jobs = [_submit(client, f"grade {args.grade}", command, worker_env())]
        if planned:
            shipped = [config for config, _ in planned]
            env = {name: value for _, variables in planned for name, value in variables.items()}
            command = run_command(shipped, args.out, args.sets, args.python)
            jobs.append(_submit(client, " ".join(shipped), command, env))
        states = wait(client, jobs, follow=True)
    except OebError as error:
        print(f"submit: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        for job in jobs:
            client.stop_job(job.job_id)
        print(f"submit: interrupted; stopped {len(jobs)} job(s); oeb resume continues their runs", file=sys.stderr)
        return 130
    return 0 if all(state == "SUCCEEDED" for state in states.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
