"""What `oeb view` refuses: a request naming another host (DNS rebinding), a page too large to render,
an export that would write outside its folder or over files oeb did not write, a port that is taken."""

from __future__ import annotations

import io
import json
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pypdf
import pytest
from viewruns import Runs, Served

from oeb.cli import main
from oeb.errors import PageTooLarge
from oeb.view.api import open_view
from oeb.view.app import allowed_hosts, is_loopback
from oeb.view.export import MARKER, export
from oeb.view.pdf import MAX_PIXELS, render_page


def _get(served: Served, path: str, host: str) -> httpx.Response:
    return httpx.get(served.url + path, headers={"Host": host}, timeout=30)


def test_a_request_naming_another_host_is_refused(served: Served) -> None:
    """A page on evil.example whose name was rebound to 127.0.0.1 reads nothing; localhost names do."""
    port = served.url.rsplit(":", 1)[1].strip("/")
    for rebound in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
        refused = _get(served, "api/runs", rebound)
        assert refused.status_code == 403 and b"gold" not in refused.content, rebound
    for local in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
        assert _get(served, "api/runs", local).status_code == 200, local


def test_which_hosts_are_loopback() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost", "[::1]"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "192.168.1.4", "example.org", "::"))
    assert "192.168.1.4" in allowed_hosts("192.168.1.4") and "evil.example" not in allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in allowed_hosts("0.0.0.0")


def test_another_address_than_loopback_warns_in_one_line(sample_runs: Runs) -> None:
    command = [sys.executable, "-m", "oeb", "view", sample_runs.a, "--host", "0.0.0.0", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        port = line.rsplit(":", 1)[-1].strip("/\n")
        assert httpx.get(f"http://127.0.0.1:{port}/api/runs", timeout=30).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    warned = [row for row in stderr.splitlines() if "warning" in row]
    assert warned == [
        "oeb view: warning: --host 0.0.0.0 is not a loopback address: anyone who can reach this machine can read "
        "these runs' gold and predictions"
    ]


def test_a_port_that_is_taken_is_one_line(sample_runs: Runs, capsys) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["view", sample_runs.a, "--port", str(port)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"oeb view: port {port} on 127.0.0.1 is taken by another program; try --port 0 (any free port)"
    ]


def test_a_page_too_large_is_not_rendered(served: Served) -> None:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(14_400, 14_400)  # PDF's largest page: a 21,600-pixel square (1.9 GB) at the view's scale
    writer.add_blank_page(612, 792)
    data = io.BytesIO()
    writer.write(data)
    with pytest.raises(PageTooLarge, match="page 1 is 14400 x 14400 points, too large to render"):
        render_page(data.getvalue(), 1)
    assert render_page(data.getvalue(), 2).startswith(b"\x89PNG")


def test_a_sharper_page_is_capped_by_the_pixel_guard() -> None:
    """A screen asking twice the scale gets it for a letter page, and the sharpest the 40 Mpx guard
    allows for an A2 sheet (not the 1.5 px a point of a sheet too large at the view's own scale)."""
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    writer.add_blank_page(1191, 1684)  # A2: 11 Mpx at 2.75, 61 Mpx at 5.5
    data = io.BytesIO()
    writer.write(data)

    def size(png: bytes) -> tuple[int, int]:
        return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")

    assert size(render_page(data.getvalue(), 1, scale=5.5, smaller=1.5, least=2.75)) == (3366, 4356)
    width, height = size(render_page(data.getvalue(), 2, scale=5.5, smaller=1.5, least=2.75))
    assert 1191 * 4.4 < width < 1191 * 4.5 and 0.99 * MAX_PIXELS < width * height <= 1.001 * MAX_PIXELS


def test_an_id_that_is_a_path_writes_nothing_outside(sample_runs: Runs, tmp_path: Path, capsys) -> None:
    """A run folder whose scores.jsonl names `../` ids is refused on loading; nothing is exported."""
    run = tmp_path / "run"
    shutil.copytree(sample_runs.a, run)
    scores = run / "field_matching" / "scores.jsonl"
    lines = [json.loads(line) for line in scores.read_text().splitlines()]
    lines[0]["id"] = "../../../escaped"
    scores.write_text("".join(json.dumps(line) + "\n" for line in lines))
    site = tmp_path / "deep" / "er" / "site"
    assert main(["view", str(run), "--export", str(site)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert "names the document '../../../escaped', which is not a file name" in line
    assert not (tmp_path / "deep").exists() and not list(tmp_path.rglob("escaped*"))


def test_an_export_never_mixes_with_other_files_and_leaves_none_stale(
    served: Served, sample_runs: Runs, tmp_path: Path, capsys
) -> None:
    site = tmp_path / "site"
    (site / "notes").mkdir(parents=True)
    (site / "notes" / "mine.txt").write_text("not oeb's")
    assert main(["view", sample_runs.a, "--export", str(site)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"oeb view: {site} holds 1 files that oeb view did not write; export into an empty or new folder"
    ]
    assert [path.name for path in site.rglob("*") if path.is_file()] == ["mine.txt"]
    site = tmp_path / "fresh"
    first = export(served.view, str(site))  # with the audit
    assert (site / "audit.html").exists() and (site / "api" / "audit.json").exists()
    second = export(open_view([sample_runs.a]), str(site))  # one run, no audit: the earlier files go
    files = {path.relative_to(site).as_posix() for path in site.rglob("*") if path.is_file()}
    assert len(files) == second < first and MARKER in files
    assert not any(name.startswith(("audit", "api/audit", "api/runs/1/")) for name in files)
    assert set(json.loads((site / MARKER).read_text())) == files - {MARKER}
