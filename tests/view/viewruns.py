"""Graded runs of the bundled sample by the offline `mock` system, as a user makes them (`oeb run`,
`oeb grade`), and `oeb view`'s server over them on 127.0.0.1 (the fixtures are in conftest.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.view.api import View
from oeb.view.app import server

EXAMPLE = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"
HOSTILE_DOC = "short__invoice_4417"
HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>' + "x" * 100_000
"""The prediction of `customer` in HOSTILE_DOC in run A: markup, a script and 100k characters."""
BRACKETS_DOC = "research__[zhao25] a survey of LLMs"


@dataclass(frozen=True)
class Runs:
    a: str  # seed 0, with the hostile prediction
    b: str  # seed 1, misreads more


def _run(out: Path, *sets: str) -> str:
    changes = [f"dataset={SAMPLE_DATASET}", "system.mock.latency=0", "ray.rate_limit.requests_per_second=100", *sets]
    arguments = ["run", "--config", str(EXAMPLE), "-y", "--out", str(out)]
    for change in changes:
        arguments += ["--set", change]
    assert main(arguments) == 0
    (folder,) = [path for path in out.iterdir() if path.is_dir()]
    return str(folder)


def build(root: Path) -> Runs:
    """Two graded runs of the sample; run A's answer for HOSTILE_DOC regraded with HOSTILE in it."""
    a = _run(root / "a", "system.mock.seed=0")
    b = _run(root / "b", "system.mock.seed=1", "system.mock.misread=0.2")
    prediction = Path(a) / "predictions" / f"{HOSTILE_DOC}.json"
    answer = json.loads(prediction.read_text())
    answer["customer"] = HOSTILE
    prediction.write_text(json.dumps(answer))
    assert main(["grade", a]) == 0
    return Runs(a, b)


LONG_NAME = "brought-" + "x" * 44 + "-answers"
"""A brought folder's name, its label in the view: 60 characters."""


def build_failing(root: Path) -> str:
    """A run of the sample where the mock's answers hold no extraction half the time: failed
    documents, each with its record (error, attempts, raw answer)."""
    return _run(root / "failing", "system.mock.seed=5", "system.mock.malformed=0.5")


def build_brought(root: Path, source: str) -> str:
    """Run `source`'s predictions as a brought folder named LONG_NAME, graded against the sample."""
    folder = root / LONG_NAME
    (folder / "predictions").mkdir(parents=True)
    for prediction in (Path(source) / "predictions").iterdir():
        (folder / "predictions" / prediction.name).write_bytes(prediction.read_bytes())
    assert main(["grade", str(folder), "--dataset", SAMPLE_DATASET]) == 0
    return str(folder)


@dataclass(frozen=True)
class Served:
    view: View
    url: str  # http://127.0.0.1:PORT/


def serve(view: View) -> Iterator[Served]:
    """The app over `view` on a free port of 127.0.0.1, serving from a thread until the test ends."""
    httpd = server(view, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(view, f"http://127.0.0.1:{httpd.server_port}/")
    finally:
        httpd.shutdown()
        httpd.server_close()
