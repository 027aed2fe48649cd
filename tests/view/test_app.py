"""`oeb view`'s JSON API through its real server on 127.0.0.1 over graded sample runs: the numbers
equal the run folder's verdicts, unknown things are one-line 404s, and no id reaches outside the run's
and dataset's folders."""

from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import httpx
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from viewruns import BRACKETS_DOC, HOSTILE, HOSTILE_DOC, Runs, Served, serve

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import OebError, ReportMismatch
from oeb.report.fields import fold
from oeb.scoring import RESULTS
from oeb.view.api import open_view
from oeb.view.export import export


def get(served: Served, path: str) -> httpx.Response:
    return httpx.get(served.url + path, timeout=30)


def labels(served: Served) -> list[str]:
    return [run["label"] for run in get(served, "api/runs").json()]


def by_path(folder: str, suite: str | None = None) -> dict[str, Counter[str]]:
    """The run folder's verdicts grouped by folded path, counted by kind (what /api/fields must give)."""
    table = pq.read_table(Path(folder) / "field_matching" / "verdicts.parquet").to_pylist()
    suites = {}
    for line in (Path(folder) / "field_matching" / "scores.jsonl").read_text().splitlines():
        record = json.loads(line)
        suites[record["id"]] = record["row"]["suite"]
    grouped: dict[str, Counter[str]] = defaultdict(Counter)
    for verdict in table:
        if suite is None or suites[verdict["id"]] == suite:
            grouped[fold(verdict["address"])][verdict["result"]] += 1
    return grouped


def test_runs_name_each_run_as_the_report_does(served: Served, sample_runs: Runs) -> None:
    runs = get(served, "api/runs").json()
    assert {run["folder"] for run in runs} == {sample_runs.a, sample_runs.b}
    # short names: the system and the one option that tells the runs apart; the full label in the setting
    assert [run["label"] for run in runs] == ["mock (seed=0)", "mock (seed=1)"]
    assert [run["setting"].split(":")[0] for run in runs] == [row["system"] for row in served.view.board["rows"]]
    for run in runs:
        folder = Path(run["folder"]).name  # the folder's name and the full label name the run too
        by_folder = get(served, f"api/fields?run={quote(folder)}").json()
        assert by_folder == get(served, f"api/fields?run={quote(run['label'])}").json()
        assert get(served, f"api/fields?run={quote(run['setting'].split(':')[0])}").status_code == 200
        assert {"headline", "accuracy", "ci95", "cost", "latency_p50_s", "latency_p95_s"} <= set(run)
        assert 0 <= run["accuracy"] <= 1


@pytest.mark.parametrize("suite", [None, "invoices"])
def test_field_counts_are_the_verdicts_grouped_by_folded_path(served: Served, suite: str | None) -> None:
    for run in get(served, "api/runs").json():
        query = f"api/fields?run={quote(run['label'])}" + (f"&suite={suite}" if suite else "")
        rows = get(served, query).json()
        expected = by_path(run["folder"], suite)
        assert {row["path"] for row in rows} == set(expected)
        for row in rows:
            counts = {kind: n for kind, n in row["counts"].items() if n}
            assert counts == dict(expected[row["path"]]), row["path"]
            assert set(row["counts"]) == set(RESULTS)
            assert row["total"] == sum(row["counts"].values())
        accuracies = [row["accuracy"] for row in rows if row["accuracy"] is not None]
        assert accuracies == sorted(accuracies)  # worst first
        assert any("[]" in row["path"] for row in rows)  # line_items[].amount, not line_items[0].amount


def test_the_bundled_mock_shows_every_verdict_kind_on_the_sample(served: Served) -> None:
    """Run A is oeb/examples/mock.yaml on the bundled sample (seed 0): the offline demo shows each
    verdict kind, fabricated included (the mock fabricates fields the gold leaves out)."""
    rows = get(served, f"api/fields?run={quote(labels(served)[0])}").json()
    totals = {kind: sum(row["counts"][kind] for row in rows) for kind in RESULTS}
    assert all(totals.values()), totals


def test_each_errors_explanation_names_its_own_verdict(served: Served) -> None:
    """The scorer's text beside an unfound or fabricated value says so, not 'misread'; an invented
    value's names the rule that made it one."""
    url = f"api/documents/long__dd1155_schedule_continuation_0011?run={quote(labels(served)[0])}"
    for kind in ("misread", "unfound", "fabricated"):
        verdicts = get(served, f"{url}&kind={kind}").json()["verdicts"]
        assert verdicts and all(v["explain"].endswith(f"(this pair would be {kind})") for v in verdicts), kind
    invented = get(served, f"{url}&kind=invented_field").json()["verdicts"]
    assert invented and all(v["explain"].startswith("invented_field: only the prediction") for v in invented)


def test_a_document_gives_its_verdicts_and_where_their_values_stand(served: Served, sample_runs: Runs) -> None:
    label = labels(served)[0]
    answer = get(served, f"api/documents/{quote(BRACKETS_DOC)}?run={quote(label)}").json()
    assert answer["doc_id"] == BRACKETS_DOC and answer["pages"] == 1
    run = next(r for r in get(served, "api/runs").json() if r["label"] == label)["folder"]
    table = pq.read_table(Path(run) / "field_matching" / "verdicts.parquet").to_pylist()
    assert len(answer["verdicts"]) == sum(1 for verdict in table if verdict["id"] == BRACKETS_DOC)
    title = next(v for v in answer["verdicts"] if v["address"] == "title")
    assert title["path"] == "title" and isinstance(title["gold"], str)
    place = title["located"]["gold"]
    assert place["status"] == "found", "the paper's title is in its text layer"
    x0, y0, x1, y1 = place["bbox"]
    assert place["page"] == 1 and 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792  # a US Letter page, in points
    assert title["gold_key"] and answer["page_notes"] == [
        {"page": 1, "width": 595.0, "height": 842.0, "source": "text", "note": ""}
    ]
    assert answer["fields"]["title"]["type"] == "string"
    for verdict in answer["verdicts"]:
        for side in ("gold", "pred"):
            located = verdict["located"][side]
            assert located is None or located["status"] in ("found", "ambiguous", "not_printed", "no_text_layer")


def test_the_hostile_prediction_comes_back_as_it_was_given(served: Served, sample_runs: Runs) -> None:
    label = quote(labels(served)[0])
    answer = get(served, f"api/documents/{HOSTILE_DOC}?run={label}").json()
    (listed,) = [v for v in answer["verdicts"] if v["address"] == "customer"]
    assert listed["pred"] == HOSTILE[:1000] and listed["cut"]["pred"] == len(HOSTILE)  # too long to list whole
    customer = get(served, f"api/verdicts/{HOSTILE_DOC}?run={label}&n={listed['n']}").json()
    assert customer["pred"] == HOSTILE and customer["result"] == "misread"
    assert customer["located"]["pred"] == {"status": "not_printed", "others": 0}  # too long for any page


def test_a_value_drawn_at_a_known_place_is_located_there(tmp_path: Path) -> None:
    """Lines drawn by the dataset scripts' PDF writer: 10-pt Helvetica from (50, 800) up from the
    bottom of a 595 x 842 page, 12 pt apart, so line n's baseline is 42 + 12 (n - 1) pt from the top."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from dataset_files import Document, pdf_bytes, write_dataset

    schema = {"type": "object", "properties": {"number": {"type": "string"}, "total": {"type": "number"}}}
    gold = {"number": "INV-0042", "total": 1234.5}
    lines = ["Invoice INV-0042", "", "Total due: 1,234.50"]
    dataset = str(tmp_path / "dataset")
    write_dataset(dataset, [Document("drawn [1] doc", "invoices", "s1", schema, gold, pdf_bytes(lines))])
    mine = tmp_path / "mine"
    (mine / "predictions").mkdir(parents=True)
    (mine / "predictions" / "drawn [1] doc.json").write_text(json.dumps({"number": "INV-0042", "total": 99}))
    assert main(["grade", str(mine), "--dataset", dataset]) == 0
    for site in serve(open_view([str(mine)])):
        answer = get(site, f"api/documents/{quote('drawn [1] doc')}?run=mine").json()
        places = {
            (v["address"], side): (place["page"], place["bbox"])
            for v in answer["verdicts"]
            for side, place in v["located"].items()
            if place and "page" in place
        }
        page, (x0, y0, x1, y1) = places[("number", "gold")]
        assert page == 1 and 80 < x0 < 100 and x1 < 140 and 30 < y0 < 42 < y1 < 46  # after "Invoice ", line 1
        assert places[("number", "pred")] == places[("number", "gold")]
        page, (x0, y0, x1, y1) = places[("total", "gold")]  # 1234.5 found as "1,234.50", line 3
        assert page == 1 and 80 < x0 < 120 and 54 < y0 < 66 < y1 < 70
        assert ("total", "pred") not in places  # 99 is not on the page


@pytest.mark.must_run  # under CI=true a missing Tesseract fails the run
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="no Tesseract (apt-get install -y tesseract-ocr)")
def test_a_scanned_page_is_read_by_ocr_and_never_blames_the_document(tmp_path: Path) -> None:
    """A page that is an image only: its values are found by OCR, and a misread is not found
    there without the document being blamed (no_text_layer, never not_printed)."""
    import io

    import pypdfium2  # type: ignore[import-untyped]

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from dataset_files import Document, pdf_bytes, write_dataset

    drawn = pypdfium2.PdfDocument(pdf_bytes(["Invoice INV-0042", "", "Total due: 1,234.50"]))[0]
    scan = io.BytesIO()
    drawn.render(scale=200 / 72).to_pil().convert("L").save(scan, format="PDF", resolution=200.0)
    schema = {"type": "object", "properties": {"number": {"type": "string"}, "total": {"type": "number"}}}
    dataset = str(tmp_path / "dataset")
    gold = {"number": "INV-0042", "total": 1234.5}
    write_dataset(dataset, [Document("scanned", "invoices", "s1", schema, gold, scan.getvalue())])
    mine = tmp_path / "mine"
    (mine / "predictions").mkdir(parents=True)
    (mine / "predictions" / "scanned.json").write_text(json.dumps({"number": "INV-0042", "total": 99}))
    assert main(["grade", str(mine), "--dataset", dataset]) == 0
    view = open_view([str(mine)])
    answer = view.document_json("mine", "scanned")
    (note,) = answer["page_notes"]
    assert note["source"] == "ocr" and "read by OCR" in note["note"]
    located = {v["address"]: v["located"] for v in answer["verdicts"]}
    for address in ("number", "total"):
        assert located[address]["gold"]["status"] == "found" and located[address]["gold"]["ocr"] is True
    assert located["total"]["pred"] == {"status": "no_text_layer", "others": 0}  # 99: not blamed on the document


def test_a_node_above_fields_keeps_every_verdict_under_it(served: Served) -> None:
    """The schema page links an object's or an array's node with `field=` its path."""
    url = f"api/documents/short__h5Filing-46780-1?run={quote(labels(served)[0])}"
    every = get(served, url).json()["verdicts"]
    for node, prefix in (("pressure_tests", "pressure_tests["), ("injection_interval", "injection_interval.")):
        kept = get(served, f"{url}&field={node}").json()["verdicts"]
        assert kept and [v["n"] for v in kept] == [v["n"] for v in every if v["path"].startswith(prefix)]
    leaf = get(served, f"{url}&field=pressure_tests[].minutes").json()["verdicts"]
    assert len(leaf) == 3 and {v["path"] for v in leaf} == {"pressure_tests[].minutes"}
    assert get(served, f"{url}&field=pressure").json()["verdicts"] == []  # a node, not a text prefix


def test_a_page_is_rendered_as_png(served: Served) -> None:
    response = get(served, f"pages/{quote(BRACKETS_DOC)}/1.png")
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert response.content.startswith(b"\x89PNG\r\n\x1a\n")
    width = int.from_bytes(response.content[16:20], "big")  # the PNG's IHDR: its width in pixels
    assert width >= 595 * 96 / 72 * 2  # sharp at 200%: a pixel for each CSS pixel of the A4 page there


def test_a_page_is_rendered_at_the_scale_asked_once_per_scale(served: Served) -> None:
    """A high-density screen asks for `scale=` (its pixel ratio times the view's): the PNG is that
    many pixels a point, kept per scale; a scale that is no number from 1 to 8.25 is one line."""
    path = f"pages/{quote(BRACKETS_DOC)}/1.png"
    sharp = get(served, path + "?scale=5.5")
    assert sharp.status_code == 200 and int.from_bytes(sharp.content[16:20], "big") == math.ceil(595 * 5.5)
    kept = [key for key in served.view._pngs if key[0] == BRACKETS_DOC]
    assert (BRACKETS_DOC, 1, 5.5) in kept and get(served, path + "?scale=5.50").content == sharp.content
    assert get(served, path).content != sharp.content and (BRACKETS_DOC, 1, 2.75) in served.view._pngs
    for bad in ("0.5", "9", "nan", "1e1", "5.555", "-2"):
        answer = get(served, f"{path}?scale={bad}")
        assert answer.status_code == 400 and answer.json()["error"].startswith(f"scale={bad!r} is not a number"), bad


def test_the_schema_has_the_documents_verdict_counts(served: Served) -> None:
    answer = get(served, f"api/schema/{HOSTILE_DOC}?run={quote(labels(served)[0])}").json()
    assert answer["schema"]["type"] == "object" and "customer" in answer["schema"]["properties"]
    assert answer["counts"]["customer"] == {"misread": 1}


@pytest.mark.parametrize(
    "path",
    [
        "api/fields?run=nobody",
        "api/fields",
        "api/documents/nothing?run=LABEL",
        f"api/documents/{HOSTILE_DOC}?run=nobody",
        f"api/schema/{HOSTILE_DOC}?run=nobody",
        f"pages/{HOSTILE_DOC}/0.png",
        f"pages/{HOSTILE_DOC}/2.png",
        "pages/nothing/1.png",
        "api/nothing",
        "api/fields?run=LABEL&suite=nothing",
    ],
)
def test_unknown_things_are_one_line_404s(served: Served, path: str) -> None:
    response = get(served, path.replace("LABEL", quote(labels(served)[0])))
    assert response.status_code == 404 and response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error and "\n" not in error


@pytest.mark.parametrize(
    "path",
    [
        "api/documents/..%2Fsettings?run=LABEL",
        "api/documents/..%2F..%2F..%2F..%2Fetc%2Fpasswd?run=LABEL",
        "api/documents/%2e%2e?run=LABEL",
        "api/schema/..%2Frecords%2Fshort__invoice_4417?run=LABEL",
        "pages/..%2Fgold%2Fshort__invoice_4417/1.png",
        "pages/..%2F..%2Fmanifest.parquet/1.png",
        "static/..%2Fapi.py",
        "static/%2e%2e%2fapp.py",
        "documents/..%2F..%2Fsettings.json?run=LABEL",
    ],
)
def test_no_id_reaches_outside_its_folders(served: Served, path: str) -> None:
    response = get(served, path.replace("LABEL", quote(labels(served)[0])))
    assert response.status_code == 404
    assert b"dataset" not in response.content or b"no " in response.content  # an error, never a file's content
    assert b"import " not in response.content and b"root:" not in response.content


def test_the_pages_are_served_at_their_own_urls(served: Served) -> None:
    a, b = (quote(label) for label in labels(served))
    for path in (
        "",
        f"fields?run={a}",
        f"documents/{quote(BRACKETS_DOC)}?run={a}&vs={b}",
        f"schema/{HOSTILE_DOC}?run={a}",
        "audit",
    ):
        response = get(served, path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html"), path
        assert 'src="' in response.text and "//" not in response.text.split('src="')[1][:10]  # served by oeb, no CDN
    assert get(served, f"documents/nothing?run={a}").status_code == 404
    assert get(served, f"documents/{HOSTILE_DOC}?run=nobody").status_code == 404
    assert isinstance(get(served, "api/audit").json(), list)


def test_the_audit_is_there_only_with_audit(sample_runs: Runs) -> None:
    for plain in serve(open_view([sample_runs.a, sample_runs.b])):
        assert get(plain, "audit").status_code == 404
        assert "--audit" in get(plain, "api/audit").json()["error"]


def test_runs_oeb_report_refuses_are_refused(sample_runs: Runs, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "field_matching").mkdir()
    source = Path(sample_runs.b) / "field_matching"
    lines = source.joinpath("scores.jsonl").read_text().splitlines()
    (other / "field_matching" / "scores.jsonl").write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(ReportMismatch, match="differ in documents"):
        open_view([sample_runs.a, str(other)])


def test_the_export_served_by_a_static_server_answers_the_same(
    served: Served, tmp_path: Path, sample_runs: Runs
) -> None:
    folder = tmp_path / "site"
    written = export(served.view, str(folder))
    assert written == len([path for path in folder.rglob("*") if path.is_file()])
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    static = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=static.serve_forever, daemon=True).start()
    site = Served(served.view, f"http://127.0.0.1:{static.server_port}/")
    try:
        runs = get(served, "api/runs").json()
        assert get(site, "api/runs.json").json() == runs
        for number, run in enumerate(runs):
            label = quote(run["label"])
            assert get(site, f"api/runs/{number}/fields.json").json() == get(served, f"api/fields?run={label}").json()
            for doc_id in (BRACKETS_DOC, HOSTILE_DOC):
                served_doc = get(served, f"api/documents/{quote(doc_id)}?run={label}").json()
                assert get(site, f"api/runs/{number}/documents/{quote(doc_id)}.json").json() == served_doc
            long_doc = quote("long__dd1155_schedule_continuation_0011")  # 548 verdicts: two slices
            first = get(served, f"api/documents/{long_doc}?run={label}").json()
            assert first["next"] and get(site, f"api/runs/{number}/documents/{long_doc}.json").json() == first
            second = get(served, f"api/documents/{long_doc}?run={label}&offset={first['next']}").json()
            assert get(site, f"api/runs/{number}/documents/{long_doc}/{first['next']}.json").json() == second
            boxes = get(served, f"api/boxes/{long_doc}?run={label}&page=1").json()
            assert boxes["boxes"] and get(site, f"api/runs/{number}/boxes/{long_doc}/1.json").json() == boxes
        hostile = get(served, f"api/documents/{HOSTILE_DOC}?run={quote(runs[0]['label'])}&field=customer").json()
        (n,) = [verdict["n"] for verdict in hostile["verdicts"]]  # listed cut: its whole verdict is a file
        whole = get(served, f"api/verdicts/{HOSTILE_DOC}?run={quote(runs[0]['label'])}&n={n}").json()
        assert whole["pred"] == HOSTILE and get(site, f"api/runs/0/verdicts/{HOSTILE_DOC}/{n}.json").json() == whole
        suite = served.view.board["suites"].index("invoices")
        invoices = get(served, f"api/fields?run={quote(runs[0]['label'])}&suite=invoices").json()
        assert get(site, f"api/runs/0/fields/{suite}.json").json() == invoices
        png = f"pages/{quote(BRACKETS_DOC)}/1.png"
        assert get(site, png).content == get(served, png).content
        for page in ("index.html", "fields.html", "audit.html", f"documents/{quote(BRACKETS_DOC)}.html"):
            assert get(site, page).status_code == 200
    finally:
        static.shutdown()
        static.server_close()


def test_the_export_goes_to_s3(served: Served, s3_env: dict[str, str]) -> None:
    from fixtures.services import S3_BUCKET

    from oeb import storage

    url = f"s3://{S3_BUCKET}/view-export"
    export(served.view, url)
    assert storage.read_json(storage.join(url, "api", "runs.json")) == get(served, "api/runs").json()
    assert storage.exists(storage.join(url, "pages", BRACKETS_DOC, "1.png"))


def test_oeb_view_serves_until_ctrl_c(sample_runs: Runs) -> None:
    command = [sys.executable, "-m", "oeb", "view", sample_runs.a, "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = line.rsplit(" ", 1)[-1].strip()
        assert line.startswith("oeb view: serving 1 run(s) at http://127.0.0.1:"), line
        assert httpx.get(url + "api/runs", timeout=30).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in stderr


def test_bad_input_is_one_line_and_a_failing_exit(sample_runs: Runs, tmp_path: Path, capsys) -> None:
    assert main(["view", str(tmp_path / "nothing")]) == 1
    assert main(["view", sample_runs.a, "--port", "70000"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("oeb view: ") for line in errors)


def test_oeb_report_by_field_gives_the_apis_rows(served: Served, sample_runs: Runs, capsys) -> None:
    assert main(["report", sample_runs.a, sample_runs.b, "--by", "field", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)["runs"]
    assert [run["label"] for run in printed] == [run["setting"].split(":")[0] for run in get(served, "api/runs").json()]
    for run in printed:  # the report's full label names the run too
        assert run["fields"] == get(served, f"api/fields?run={quote(run['label'])}").json()
    assert main(["report", sample_runs.a, "--by", "field", "--format", "md"]) == 0
    assert "| field | matched | misread |" in capsys.readouterr().out
    assert main(["report", sample_runs.a, "--by", "field", "--format", "html"]) == 2
    assert "--by field goes with" in capsys.readouterr().err


def test_a_run_folder_on_s3_is_served(sample_runs: Runs, s3_env: dict[str, str]) -> None:
    from fixtures.datasets import upload
    from fixtures.services import S3_BUCKET

    url = upload(Path(sample_runs.b), f"s3://{S3_BUCKET}/view-runs/b")
    for site in serve(open_view([url])):
        (run,) = get(site, "api/runs").json()
        assert run["folder"] == url
        answer = get(site, f"api/documents/{quote(BRACKETS_DOC)}?run={quote(run['label'])}").json()
        assert answer["pages"] == 1 and answer["verdicts"]
        assert sorted(row["path"] for row in get(site, f"api/fields?run={quote(run['label'])}").json()) == sorted(
            by_path(sample_runs.b)
        )


def test_a_dataset_that_moved_is_given_with_dataset(sample_runs: Runs, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(SAMPLE_DATASET, moved)
    view = open_view([sample_runs.a], dataset=str(moved))
    answer = view.document_json(view.labels[0], BRACKETS_DOC)
    assert answer["pages"] == 1 and answer["verdicts"][0]["located"]["gold"]["status"] == "found"
    assert main(["view", sample_runs.a, "--dataset", str(moved), "--export", str(tmp_path / "site")]) == 0
    lacking = tmp_path / "lacking"
    shutil.copytree(SAMPLE_DATASET, lacking)
    table = pq.read_table(lacking / "manifest.parquet")
    pq.write_table(table.filter(pc.not_equal(table["doc_id"], BRACKETS_DOC)), lacking / "manifest.parquet")
    with pytest.raises(ReportMismatch, match="lacks 1 of the runs' documents"):
        open_view([sample_runs.a], dataset=str(lacking)).dataset()


def test_a_dataset_that_moved_says_how_to_give_it(sample_runs: Runs, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(sample_runs.a, folder)
    settings = json.loads((folder / "settings.json").read_text())
    (folder / "settings.json").write_text(json.dumps({**settings, "dataset": str(tmp_path / "gone")}))
    view = open_view([str(folder)])
    with pytest.raises(
        OebError, match=r"no dataset folder at .*gone.* if it moved, give where it is now with oeb view"
    ):
        view.document_json(view.labels[0], BRACKETS_DOC)
    moved = open_view([str(folder)], dataset=SAMPLE_DATASET)  # given where it is now: read there
    assert moved.document_json(moved.labels[0], BRACKETS_DOC)["verdicts"]


def test_a_dataset_that_cannot_be_used_is_refused_before_serving(
    sample_runs: Runs, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def served(*_: object) -> None:
        raise AssertionError("oeb view served a --dataset it cannot use")

    monkeypatch.setattr("oeb.view.app.server", served)
    lacking = tmp_path / "lacking"
    lacking.mkdir()
    table = pq.read_table(Path(SAMPLE_DATASET) / "manifest.parquet")
    pq.write_table(table.slice(0, 1), lacking / "manifest.parquet")
    assert main(["view", sample_runs.a, "--dataset", str(tmp_path / "nowhere")]) == 1
    assert main(["view", sample_runs.a, "--dataset", str(lacking)]) == 1
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and errors[0].startswith("oeb view: no dataset folder at ")
    assert "lacks 11 of the runs' documents" in errors[1] and "Traceback" not in "".join(errors)
    with pytest.raises(SystemExit):
        main(["view", "--help"])
    assert "where it is now, if it moved since grading" in " ".join(capsys.readouterr().out.split())


def test_a_document_never_answered_is_listed_as_missing(sample_runs: Runs, tmp_path: Path) -> None:
    """Graded with --partial, a document without an answer is missing (never asked), not failed."""
    folder = tmp_path / "partial"
    shutil.copytree(sample_runs.b, folder)
    for kept in ("records", "predictions"):
        (folder / kept / f"{BRACKETS_DOC}.json").unlink()
    assert main(["grade", str(folder), "--partial"]) == 0
    view = open_view([str(folder)])
    statuses = {row["doc_id"]: row["status"] for row in view.documents_json(view.labels[0])}
    assert statuses.pop(BRACKETS_DOC) == "missing" and set(statuses.values()) == {"graded"}
    answer = view.document_json(view.labels[0], BRACKETS_DOC)
    assert answer["status"] == "missing" and answer["record"] is None and answer["verdicts"] == []
    assert view.document_json(view.labels[0], HOSTILE_DOC)["status"] == "graded"


def test_every_document_is_listed_with_its_status_and_counts(served: Served, sample_runs: Runs) -> None:
    rows = get(served, f"api/documents?run={quote(labels(served)[0])}").json()
    lines = [
        json.loads(line) for line in (Path(sample_runs.a) / "field_matching" / "scores.jsonl").read_text().splitlines()
    ]
    assert [row["doc_id"] for row in rows] == [line["id"] for line in lines]
    for row, line in zip(rows, lines, strict=True):
        assert row["status"] == "graded" and row["accuracy"] == line["accuracy"] and row["pages"] >= 1
        assert row["counts"] == {kind: line[kind] for kind in RESULTS}
    assert get(served, "api/documents?run=nobody").status_code == 404
    big = httpx.get(
        served.url + f"api/documents/long__dd1155_schedule_continuation_0011?run={quote(labels(served)[0])}"
    )
    assert big.headers["content-encoding"] == "gzip" and big.json()["doc_id"]  # sent gzipped, read whole
