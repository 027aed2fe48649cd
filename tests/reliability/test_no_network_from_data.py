"""A dataset's schema cannot make oeb fetch anything: a probe HTTP server on 127.0.0.1 that every URL in
the schema points at sees no request from `oeb check`, `run`, `grade`, `audit` or `report --audit`.

A `$schema` or `$id` URL is only a name, so a dataset naming the probe that way is checked, graded and
audited as usual; a `$ref`, `$dynamicRef` or `$recursiveRef` leaving the schema refuses the dataset in
one line naming the document, the keyword and the URL (oeb/schema_refs.py is the one resolver).

A run folder's settings.json cannot make oeb fetch either (its dataset URL, a rerun's endpoint):
tests/report/test_untrusted_runs.py holds those cases, against a probe of its own.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import fake_http
import pytest
from fake_http import Reply, Request
from fixtures.datasets import write_manifest

from reliability.conftest import assert_refused, oeb_cli, snapshot

MOCK_CONFIG = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"
DOC = "invoice_1"
GOLD = {"number": "INV-1", "date": "2026-12-03"}


SEEN: list[str] = []
"""Every request the probe received (`METHOD path`)."""


def _probe(request: Request) -> Reply:
    """Answer with a schema, as a server a hostile dataset names would, after recording the request."""
    SEEN.append(f"{request.method} {request.path}")
    return Reply(200, {"type": "string"}, {"Content-Type": "application/schema+json"})


@pytest.fixture(scope="module")
def probe() -> Iterator[str]:
    """The probe's base URL; its requests in `SEEN`."""
    server = fake_http.server(_probe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{url}/alive").read()
    assert SEEN == ["GET /alive"]  # it records what it is asked: an empty SEEN later means no request
    SEEN.clear()
    yield url
    server.shutdown()
    server.server_close()


def _dataset(folder: Path, schema: dict) -> str:
    """A one-row dataset asking `schema` (written again over one already there)."""
    (folder / "pdfs").mkdir(parents=True, exist_ok=True)
    (folder / "gold").mkdir(exist_ok=True)
    (folder / "pdfs" / f"{DOC}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (folder / "gold" / f"{DOC}.json").write_text(json.dumps(GOLD))
    columns = {
        "doc_id": [DOC],
        "doc_path": [f"pdfs/{DOC}.pdf"],
        "gt_path": [f"gold/{DOC}.json"],
        "schema": [json.dumps(schema)],
    }
    write_manifest(folder, columns)
    return str(folder)


def _named(probe: str) -> dict:
    """A schema whose `$schema` and `$id`s name the probe, its `$ref` local."""
    return {
        "$schema": f"{probe}/meta.json",
        "$id": f"{probe}/invoice.json",
        "type": "object",
        "properties": {"number": {"$ref": "#/$defs/Text"}, "date": {"type": "string", "format": "date"}},
        "$defs": {"Text": {"$id": f"{probe}/text.json", "type": "string"}},
    }


def _graded(capsys: pytest.CaptureFixture[str], root: Path, schema: dict) -> tuple[str, Path]:
    """The dataset asking `schema`, and a brought folder of predictions graded against it."""
    dataset = _dataset(root / "data", schema)
    brought = root / "brought"
    (brought / "predictions").mkdir(parents=True)
    (brought / "predictions" / f"{DOC}.json").write_text(json.dumps(GOLD))
    graded = oeb_cli(capsys, "grade", str(brought), "--dataset", dataset)
    assert graded.code == 0, graded
    return dataset, brought


def test_a_schema_and_id_url_are_only_names(capsys, probe: str, tmp_path: Path) -> None:
    """Checked, graded, audited (the gold's format checked by the validator) and shown: nothing fetched."""
    dataset, brought = _graded(capsys, tmp_path, _named(probe))
    assert oeb_cli(capsys, "check", "--dataset", dataset).code == 0
    (Path(dataset) / "gold" / f"{DOC}.json").write_text(json.dumps({**GOLD, "date": "3 Dec 2026"}))
    audit = oeb_cli(capsys, "audit", "--dataset", dataset, "--format", "json")
    assert audit.code == 0, audit
    assert [finding["kind"] for finding in json.loads(audit.out)["findings"]] == ["gold_invalid"]
    page = oeb_cli(capsys, "report", str(brought), "--format", "html", "--audit")
    assert page.code == 0, page
    assert SEEN == []


@pytest.mark.parametrize("keyword", ["$ref", "$dynamicRef", "$recursiveRef"])
def test_a_reference_leaving_the_schema_refuses_every_command_and_fetches_nothing(
    capsys, probe: str, tmp_path: Path, keyword: str
) -> None:
    """A graded folder's dataset turned hostile afterwards (as one changed on the Hub would be): every
    command refuses it on opening, before anything is asked, graded or shown, and writes nothing."""
    dataset, brought = _graded(capsys, tmp_path, _named(probe))
    url = f"{probe}/probe.json"
    _dataset(Path(dataset), {"type": "object", "properties": {"number": {keyword: url}, "date": {"type": "string"}}})
    says = (
        f"{Path(dataset) / 'manifest.parquet'} row 1 ({DOC}): the schema's {keyword} '{url}' points outside",
        "oeb never fetches what a dataset names",
    )
    before, runs = snapshot(brought), tmp_path / "runs"
    commands = {
        "check": ["check", "--dataset", dataset],
        "run": ["run", "-y", "--config", str(MOCK_CONFIG), "--set", f"dataset={dataset}", "--out", str(runs)],
        "grade": ["grade", str(brought), "--dataset", dataset],
        "audit": ["audit", "--dataset", dataset],
        "report": ["report", str(brought), "--format", "html", "--audit", "--out", str(tmp_path / "page.html")],
    }
    for name, argv in commands.items():
        assert_refused(oeb_cli(capsys, *argv), f"oeb {name}: ", *says)
    assert snapshot(brought) == before
    assert not runs.exists() and not (tmp_path / "page.html").exists()
    assert SEEN == []
