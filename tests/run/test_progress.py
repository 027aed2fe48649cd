"""The run's live display: the plain lines a log gets, the live table a terminal gets (captured through a
rich Console on a StringIO), and the Ray metrics it records on the test Ray."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

from oeb.run.cluster.progress import RunProgress, clock

SYSTEMS = ["datalab", "reducto"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _plain(clock_: Clock, **kwargs: Any) -> tuple[RunProgress, io.StringIO]:
    stream = io.StringIO()
    progress = RunProgress(
        SYSTEMS, {"datalab": 620, "reducto": 3}, stream, metrics=False, summary_seconds=0, clock=clock_, **kwargs
    )
    return progress, stream


def test_plain_output_is_one_line_per_saved_document_and_note() -> None:
    now = Clock()
    progress, stream = _plain(now)
    with progress:
        now.now += 2
        progress.in_flight("datalab", 8)
        progress.started("datalab", 3)
        progress.saved("datalab", "doc_1", {"answer": {}, "cost": {"usd": 0.02}})
        now.now += 1
        error = {"type": "SystemFailed", "status": 500, "message": "the vendor\nbroke"}
        progress.saved("datalab", "doc_2", {"error": error})
        progress.throttled("reducto")
        progress.spend("reducto", None, 16)
        progress.note("reducto", "stopped: the budget of 16 credits was reached")
        progress.grading(1, 1, 0)
    lines = stream.getvalue().splitlines()
    assert lines[:3] == [
        "[0:02] datalab: 1/620 doc_1 saved (failed 0, $0.02)",
        "[0:03] datalab: 2/620 doc_2 failed: SystemFailed (status 500): the vendor broke",
        "[0:03] reducto: stopped: the budget of 16 credits was reached",
    ]
    # at the end, a summary of every system and of grading
    assert lines[3].startswith("[0:03] datalab: 2/620 done, 1 failed, 8 in flight, pace –, 0 429s, spent $0.02, ")
    assert lines[4] == ("[0:03] reducto: 0/3 done, 0 failed, 0 in flight, pace –, 1 429s, spent 16 cr, – docs/s, ETA –")
    assert lines[5] == "[0:03] grading: 0 graded, 1 queued, 1 running"
    assert len(lines) == 6  # in flight, starts, 429s, spend and grading alone print nothing
    assert "\x1b" not in stream.getvalue()  # no terminal codes in a log


def test_plain_pace_lines_say_when_lowered_and_when_back_not_every_step() -> None:
    now = Clock()
    progress, stream = _plain(now)
    with progress:
        progress.pace("reducto", 20.0, 20.0)
        progress.throttled("reducto")
        progress.pace("reducto", 10.0, 20.0)
        progress.pace("reducto", 12.5, 20.0)
        progress.pace("reducto", 15.0, 20.0)
        progress.pace("reducto", 20.0, 20.0)
    lines = stream.getvalue().splitlines()
    assert lines[:2] == [
        "[0:00] reducto: pace lowered to 10.0 starts/s (limit 20) after 429s (1 so far)",
        "[0:00] reducto: pace back at its limit, 20 starts/s",
    ]
    assert "pace 20.0/20 starts/s, 1 429s" in lines[3]


def test_spend_from_the_run_replaces_the_records_sum() -> None:
    progress, stream = _plain(Clock())
    with progress:
        progress.saved("reducto", "a", {"cost": {"credits": 8}})
        progress.spend("reducto", 1.25, 8)
        progress.saved("reducto", "b", {"cost": {"credits": 8}})  # the run's count stays the one shown
    assert "spent $1.25 + 8 cr" in stream.getvalue().splitlines()[-2]


def test_rate_and_time_left_follow_the_last_minute() -> None:
    now = Clock()
    progress, _ = _plain(now)
    with progress:
        now.now += 30  # start-up: Ray, actors; not the vendor's pace
        progress.in_flight("datalab", 8)
        for n in range(60):
            now.now += 0.5
            progress.saved("datalab", f"doc_{n}", {})
        state = progress.systems["datalab"]
        assert state.rate(now.now, progress.began) == pytest.approx(2.0)
        assert state.eta(now.now, progress.began) == clock(560 / 2.0) == "4:40"
        now.now += 61  # a minute without answers: no rate to promise a time by
        assert state.eta(now.now, progress.began) == "–"
        for n in range(560):
            progress.saved("datalab", f"more_{n}", {})
        assert state.eta(now.now, progress.began) == "done"


def test_periodic_summaries_only_for_systems_that_moved() -> None:
    stream = io.StringIO()
    progress = RunProgress(SYSTEMS, {"datalab": 5, "reducto": 5}, stream, metrics=False, summary_seconds=0.05)
    with progress:
        progress.saved("datalab", "doc_1", {})
        deadline = time.monotonic() + 10
        while "grading:" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)  # more summaries would be due: nothing moved, so none is written
        before_exit = stream.getvalue()
    summaries = [line for line in before_exit.splitlines() if " done, " in line]
    assert [line.split("] ")[1].split(":")[0] for line in summaries] == ["datalab", "reducto"]


def test_terminal_shows_a_live_table_of_every_system_and_grading() -> None:
    now = Clock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=132, color_system=None, legacy_windows=False)
    progress = RunProgress(SYSTEMS, {"datalab": 620, "reducto": 3}, console=console, metrics=False, clock=now)
    with progress:
        for n in range(30):
            now.now += 0.5
            progress.saved("datalab", f"doc_{n}", {"cost": {"usd": 0.05}})
        progress.in_flight("datalab", 8)
        progress.pace("datalab", 19.5, 20.0)
        progress.saved("reducto", "r1", {"error": {"type": "SystemTimeout", "message": "no answer in 600 s"}})
        progress.throttled("reducto")
        progress.grading(4, 2, 24)
        progress.note("reducto", "stopped: HTTP 402 (payment required)")
    final = out.getvalue().rsplit("\x1b[2K", 1)[-1]  # the last drawing of the table
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "reducto: 1/3 r1 failed: SystemTimeout: no answer in 600 s" in text
    assert "reducto: stopped: HTTP 402 (payment required)" in text
    assert "doc_3 saved" not in text  # a terminal gets the table, not a line per document
    assert "oeb: 2 systems, 31 of 623 documents, 0:15 elapsed" in final
    datalab = next(line for line in final.splitlines() if "datalab" in line)
    cells = [cell.strip() for cell in re.split(r"[│┃]", datalab) if cell.strip()]
    assert cells[0] == "datalab" and cells[2:] == ["30/620", "0", "8", "0", "19.5/20", "0", "$1.50", "2.0", "4:55"]
    reducto = next(line for line in final.splitlines() if "reducto" in line)
    assert [cell.strip() for cell in re.split(r"[│┃]", reducto) if cell.strip()][-4:] == ["1", "–", "0.1", "0:30"]
    assert "grading: 24 graded, 4 queued, 2 running" in final


class Recorder:
    """Stands in for `RunMetrics`, keeping every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def __getattr__(self, method: str) -> Any:
        return lambda *args: self.calls.append((method, *map(str, args)))


def test_the_driver_loop_repeating_a_figure_costs_no_metric_call() -> None:
    progress, _ = _plain(Clock())
    recorder = Recorder()
    progress.metrics = recorder  # type: ignore[assignment]
    for _ in range(5):
        progress.in_flight("datalab", 8)
        progress.pace("datalab", 20.0, 20.0)
    progress.in_flight("datalab", 7)
    assert recorder.calls == [
        ("set", "in_flight", "datalab", "8"),
        ("set", "pace", "datalab", "20.0"),
        ("set", "in_flight", "datalab", "7"),
    ]


def test_the_display_neither_imports_ray_nor_records_metrics_without_it() -> None:
    code = (
        "import sys, io; from oeb.run.cluster.progress import RunProgress; "
        "p = RunProgress(['a'], {'a': 1}, io.StringIO()); "
        "assert p.metrics is None and 'ray' not in sys.modules, sorted(m for m in sys.modules if 'ray' in m)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _scrape(port: int) -> dict[str, float]:
    """`name{system="..."}` -> value of the oeb metrics the node's metrics agent exports to Prometheus
    (the labels Ray adds left out)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("ray_oeb_"):
            name, _, value = line.rpartition(" ")
            system = re.search(r'[{,]system="([^"]*)"', name)
            found[name.split("{")[0] + (f'{{system="{system.group(1)}"}}' if system else "")] = float(value)
    return found


@pytest.mark.ray
@pytest.mark.slow
def test_ray_metrics_reach_the_prometheus_export(ray_cluster: None) -> None:
    import ray

    progress = RunProgress(["metrics-test"], {"metrics-test": 3}, io.StringIO(), summary_seconds=0)
    assert progress.metrics is not None  # Ray is in use: metrics by default
    with progress:
        progress.started("metrics-test", 4)
        progress.in_flight("metrics-test", 2)
        progress.saved("metrics-test", "a", {"cost": {"usd": 0.5}})
        progress.saved("metrics-test", "b", {"error": {"type": "SystemFailed", "status": 429, "message": "slow"}})
        progress.throttled("metrics-test")
        progress.pace("metrics-test", 5.0, 10.0)
        progress.grading(1, 1, 1)
        progress.graded("metrics-test", 0.3)
    nodes: Any = ray.nodes  # untyped
    port = next(node["MetricsExportPort"] for node in nodes() if node["Alive"])
    wanted = {
        'ray_oeb_documents_done_total{system="metrics-test"}': 2.0,
        'ray_oeb_documents_failed_total{system="metrics-test"}': 1.0,
        'ray_oeb_requests_started_total{system="metrics-test"}': 4.0,
        'ray_oeb_throttled_total{system="metrics-test"}': 1.0,
        'ray_oeb_in_flight{system="metrics-test"}': 2.0,
        'ray_oeb_pace{system="metrics-test"}': 5.0,
        'ray_oeb_spend_usd{system="metrics-test"}': 0.5,
        'ray_oeb_grading_seconds_count{system="metrics-test"}': 1.0,
        "ray_oeb_grading_queued": 1.0,
    }
    deadline = time.monotonic() + 90  # the agent collects every few seconds
    found: dict[str, float] = {}
    while time.monotonic() < deadline:
        found = _scrape(port)
        if all(found.get(name) == value for name, value in wanted.items()):
            break
        time.sleep(1)
    assert {name: found.get(name) for name in wanted} == wanted, json.dumps(sorted(found), indent=1)


def _final_rows(width: int, events: Callable[[RunProgress, Clock], None]) -> tuple[str, dict[str, list[str]]]:
    """The live table's last drawing at a console `width`, and each system's cells."""
    now = Clock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, color_system=None, legacy_windows=False)
    progress = RunProgress(SYSTEMS, {"datalab": 6200, "reducto": 3}, console=console, metrics=False, clock=now)
    with progress:
        events(progress, now)
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue().rsplit("\x1b[2K", 1)[-1])
    rows = {}
    for line in final.splitlines():
        cells = [cell.strip() for cell in re.split(r"[│┃]", line)]
        if len(cells) > 2 and cells[1] in SYSTEMS:
            rows[cells[1]] = cells[1:-1]
    return final, rows


def _busy(progress: RunProgress, now: Clock) -> None:
    for n in range(1200):
        now.now += 0.05
        progress.saved("datalab", f"doc_{n}", {"cost": {"usd": 0.05}})
    progress.in_flight("datalab", 8)
    progress.pace("datalab", 19.5, 20.0)
    progress.retrying("reducto", 2, 18.0, 61.0)


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_live_table_keeps_every_figure_whole_at_any_width(width: int) -> None:
    final, rows = _final_rows(width, _busy)
    assert all(len(line) <= width for line in final.splitlines())
    assert "…" not in final
    for header in ("system", "done", "failed", "ETA", "retrying"):
        assert header in final
    datalab, reducto = rows["datalab"], rows["reducto"]
    assert "1,200/6,200" in datalab and datalab[-1] == "4:09" and reducto[-1] == "≥1:01"
    assert "2, next 0:18" in reducto
    if width == 160:
        assert "not shown" not in final
    else:
        assert "not shown at this width: progress" in final


def test_documents_waiting_on_a_retry_are_shown_and_lengthen_the_eta() -> None:
    """A system whose documents wait out back-offs is not hanging: the summary says how many wait and
    when the next goes, and the time left is never before the last back-off ends."""
    now = Clock()
    out = io.StringIO()
    progress = RunProgress(["reducto"], {"reducto": 10}, out, metrics=False, clock=now, summary_seconds=0)
    with progress:
        for n in range(7):
            now.now += 1.0
            progress.saved("reducto", f"doc_{n}", {"cost": {"usd": 0.01}})
        progress.retrying("reducto", 3, 20.0, 60.0)
        progress.summary()
        now.now += 30
        progress.summary()
        progress.retrying("reducto", 0, None, None)
    lines = out.getvalue().splitlines()
    first, second = (line for line in lines if "waiting to retry" in line)
    assert "0 in flight, 3 waiting to retry, next in 0:20" in first and first.endswith("ETA 1:00")
    assert "next in 0:00" in second and second.endswith("ETA 0:30")
    assert "waiting to retry" not in lines[-2]
