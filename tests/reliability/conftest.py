"""Helpers shared by the reliability tests (datasets whose documents a fake vendor can tell apart, ...)."""

from __future__ import annotations

import base64
import json
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.datasets import write_manifest
from systems.fake_vendor import Request
from systems.vendors import ANSWER, SCHEMA

_MARK = re.compile(rb"% oeb-doc (\S+)")


def vendor_dataset(folder: Path, count: int) -> list[str]:
    """`count` documents `doc_000`... asking the fake vendors' schema, each gold their answer; each
    PDF names its document in a comment, so a fake server can script faults per document."""
    ids = [f"doc_{n:03d}" for n in range(count)]
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    for doc_id in ids:
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(f"%PDF-1.4\n% oeb-doc {doc_id}\n%%EOF\n".encode())
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(ANSWER))
    columns = {
        "doc_id": ids,
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in ids],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in ids],
        "schema": [json.dumps(SCHEMA)] * count,
        "suite": ["invoices"] * count,
    }
    write_manifest(folder, columns)
    return ids


def inline_document(request: Request) -> str:
    """The document id of a request carrying the PDF as a base64 data URL (Mistral, the LLM path)."""
    found = re.search(r"data:application/pdf;base64,([A-Za-z0-9+/=]+)", request.body.decode())
    match = _MARK.search(base64.b64decode(found.group(1))) if found else None
    if match is None:
        raise ValueError(f"no oeb-doc mark in {request.method} {request.path}")
    return match.group(1).decode()


@pytest.fixture(scope="session")
def ray_address(ray_cluster: None) -> str:
    """The tests' in-process Ray, for `oeb` subprocesses to join (`--set ray.address=...`): a driver
    joining costs seconds where a Ray of its own costs 15-20 s."""
    import ray

    return ray.get_runtime_context().gcs_address


@dataclass
class OebProcess:
    """A real `python -m oeb ...` subprocess; its stderr goes to a file that can be read while it runs."""

    popen: subprocess.Popen
    log: Path

    @classmethod
    def start(cls, args: list[str], log: Path) -> OebProcess:
        with log.open("wb") as err:
            popen = subprocess.Popen(
                [sys.executable, "-m", "oeb", *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
            )
        return cls(popen, log)

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def running(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait()

    def finish(self, timeout: float = 180.0) -> int:
        return self.popen.wait(timeout=timeout)


# Hostile inputs (test_hostile_*.py): the CLI run in-process as a user runs it, and what a refusal must be.


@dataclass(frozen=True)
class Outcome:
    """What one `oeb ...` command did: its exit code and what it printed."""

    code: int
    out: str
    err: str


def oeb_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """Run `oeb argv` in this process (argparse's exit included), as a user would from a shell."""
    from oeb.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return Outcome(code, out, err)


def assert_refused(outcome: Outcome, *says: str) -> None:
    """A refusal: a non-zero exit, exactly one line on stderr and no traceback, naming each of `says`."""
    lines = outcome.err.splitlines()
    assert outcome.code != 0, outcome
    assert len(lines) == 1, outcome.err
    assert "Traceback" not in outcome.err
    for part in says:
        assert part in lines[0], (part, lines[0])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes: compare two to prove that nothing saved was touched."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
