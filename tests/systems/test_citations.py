"""Each vendor's citations and confidences in its documented wire shape, served by its fake on
127.0.0.1 for a generated PDF: the adapter asks for them when `citations` is on, and the boxes it
reads back land on the value's printed place (PDFium's own search) within 2 points."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdfium2
import pytest

from oeb.grounding.cite import check
from oeb.systems import get, question_schema
from oeb.systems.asking import predict
from oeb.systems.azure_cu import AzureCU
from oeb.systems.base import Question
from oeb.systems.schema import azure_field_schema
from systems.conftest import FAST, KEY
from systems.fake_vendor import FakeVendor, Reply
from systems.vendors import SCHEMA

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from dataset_files import pdf_bytes

LINES = ["Invoice A-1 from ACME", "", "Total due: 2.50 EUR", *[""] * 57, "Page two: nothing"]
ANSWER = {"invoice": "A-1", "total": 2.5}
PRINTED = {"invoice": "A-1", "total": "2.50"}
Box = tuple[float, float, float, float]


@pytest.fixture(scope="module")
def places() -> dict[str, tuple[int, Box, tuple[float, float]]]:
    """Where each value is printed: page, box in points from the top-left, and the page's size."""
    found = {}
    pdf = pypdfium2.PdfDocument(pdf_bytes(LINES))
    page = pdf[0]
    width, height = page.get_size()
    text = page.get_textpage()
    for key, printed in PRINTED.items():
        at = text.search(printed).get_next()
        rects = [text.get_rect(i) for i in range(text.count_rects(*at))]
        left, bottom, right, top = rects[0]
        found[key] = (1, (left, height - top, right, height - bottom), (width, height))
    pdf.close()
    return found


PIXELS = 2.0
"""Datalab's block boxes in the fake are pixels of the page rendered at 144 DPI: read against the page
block's own box, they come out in points whatever the unit."""


def datalab_json(places: dict[str, Any]) -> dict[str, Any]:
    """The `json` output's tree as Datalab documents it: page blocks, their children blocks with `id`,
    `block_type`, `bbox` [x0, y0, x1, y1], `polygon` and `html`."""
    w, h = places["invoice"][2]
    pages = []
    for index in (0, 1):
        children = []
        for number, (key, (page, (x0, y0, x1, y1), _)) in enumerate(places.items(), 1):
            if page - 1 != index:
                continue
            box = [v * PIXELS for v in (x0, y0, x1, y1)]
            polygon = [[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]]
            children.append({"id": f"/page/{index}/Text/{number}", "block_type": "Text", "bbox": box,
                             "polygon": polygon, "html": f"<p>{PRINTED[key]}</p>", "children": None})  # fmt: skip
        page_box = [0.0, 0.0, w * PIXELS, h * PIXELS]
        pages.append({"id": f"/page/{index}/Page/0", "block_type": "Page", "bbox": page_box, "children": children})
    return {"id": "/document/0", "block_type": "Document", "children": pages}


def _datalab(fake: FakeVendor, places: dict[str, Any]) -> None:
    fake.on("POST", "/api/v1/extract", Reply(200, {"request_id": "r1", "request_check_url": "ignored"}))
    cited: dict[str, Any] = {}
    for number, key in enumerate(places, 1):
        cited |= {key: ANSWER[key], f"{key}_citations": [f"/page/0/Text/{number}"]}
    done = {"status": "complete", "extraction_schema_json": json.dumps(cited), "json": datalab_json(places),
            "cost_breakdown": {"final_cost_cents": 4}}  # fmt: skip
    scores = {f"{key}_score": {"score": 4, "reasoning": "clear match in the totals"} for key in places}
    scored = {**done, "extraction_schema_json": json.dumps(cited | scores), "extraction_score_average": 4.0}
    fake.on("GET", "/api/v1/extract/r1", Reply(200, {"status": "processing"}), Reply(200, done), Reply(200, scored))


def _reducto(fake: FakeVendor, places: dict[str, Any]) -> None:
    fake.on("POST", "/upload", Reply(200, {"file_id": "reducto://f1"}))
    fake.on("POST", "/extract_async", Reply(200, {"job_id": "j1"}))
    result = {}
    for key, (page, (x0, y0, x1, y1), (w, h)) in places.items():
        bbox = {"left": x0 / w, "top": y0 / h, "width": (x1 - x0) / w, "height": (y1 - y0) / h, "page": page}
        citation = {"type": "Text", "content": PRINTED[key], "bbox": bbox, "confidence": "high",
                    "granular_confidence": {"extract_confidence": 0.9, "parse_confidence": 0.8}}  # fmt: skip
        result[key] = {"value": ANSWER[key], "citations": [citation]}
    done = {"status": "Completed", "result": {"usage": {"credits": 8}, "result": result}}
    fake.on("GET", "/job/j1", Reply(200, done))
    fake.on("GET", "/jobs", Reply(200, {"jobs": []}))


def _llamaextract(fake: FakeVendor, places: dict[str, Any]) -> None:
    fake.on("GET", "/api/v1/projects", Reply(200, [{"id": "proj1"}]))
    fake.on("POST", "/api/v1/beta/files", Reply(200, {"id": "f1"}))
    fake.on("POST", "/api/v2/extract", Reply(200, {"id": "j1", "status": "PENDING"}))
    fields = {}
    for key, (page, (x0, y0, x1, y1), (w, h)) in places.items():
        box = {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}
        citation = {"page": page, "matching_text": PRINTED[key], "bounding_boxes": [box],
                    "page_dimensions": {"width": w, "height": h}}  # fmt: skip
        fields[key] = {"citation": [citation], "extraction_confidence": 0.9}
    done = {"id": "j1", "status": "COMPLETED", "extract_result": ANSWER, "extract_metadata": {"field_metadata": fields}}
    fake.on("GET", "/api/v2/extract/j1", Reply(200, done))


def _extend(fake: FakeVendor, places: dict[str, Any]) -> None:
    fake.on("POST", "/files/upload", Reply(200, {"object": "file", "id": "file_1"}))
    fake.on("POST", "/extract_runs", Reply(200, {"object": "extract_run", "id": "exr_1", "status": "PROCESSING"}))
    metadata = {}
    for key, (page, (x0, y0, x1, y1), (w, h)) in places.items():
        scale = 2.0  # the page rendered at 144 DPI: the polygon is in that page's pixels
        polygon = [{"x": x * scale, "y": y * scale} for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        citation = {"page": {"number": page, "width": w * scale, "height": h * scale}, "polygon": polygon,
                    "referenceText": PRINTED[key]}  # fmt: skip
        metadata[key] = {"citations": [citation], "logprobsConfidence": 0.9, "ocrConfidence": 0.99}
    done = {"id": "exr_1", "status": "PROCESSED", "output": {"value": ANSWER, "metadata": metadata}}
    fake.on("GET", "/extract_runs/exr_1", Reply(200, done))


def _azure(fake: FakeVendor, places: dict[str, Any]) -> None:
    adapter = AzureCU(citations=True)
    base = f"/contentunderstanding/analyzers/{adapter.analyzer_id(azure_field_schema(question_schema(SCHEMA)))}"
    fake.on("PUT", base, Reply(201, {}))
    result = f"{fake.url}/contentunderstanding/analyzerResults/r1?api-version=v"
    fake.on("POST", f"{base}:analyze", Reply(202, {}, {"Operation-Location": result}))
    fields = {}
    for key, (page, (x0, y0, x1, y1), _) in places.items():
        inches = [v / 72 for v in (x0, y0, x1, y0, x1, y1, x0, y1)]
        source = f"D({page}," + ",".join(f"{v:.4f}" for v in inches) + ")"
        kind = "valueString" if key == "invoice" else "valueNumber"
        fields[key] = {"type": "string", kind: ANSWER[key], "confidence": 0.9, "source": source}
    w, h = places["invoice"][2]
    pages = [{"pageNumber": n, "width": w / 72, "height": h / 72, "unit": "inch"} for n in (1, 2)]  # A4 in inches
    done = {"status": "Succeeded", "result": {"contents": [{"fields": fields, "pages": pages}]}}
    fake.on("GET", "/contentunderstanding/analyzerResults/r1", Reply(200, done))


CITED: dict[str, tuple[str, Callable[[FakeVendor, dict[str, Any]], None], Callable[[dict[str, Any]], bool]]] = {
    "datalab": (
        "DATALAB_API_KEY",
        _datalab,
        lambda sent: (sent["extraction_mode"][2], sent["output_format"][2]) == (b"fast", b"json"),
    ),
    "reducto": ("REDUCTO_API_KEY", _reducto, lambda sent: sent["settings"]["citations"] == {"enabled": True}),
    "llamaextract": (
        "LLAMA_CLOUD_API_KEY",
        _llamaextract,
        lambda sent: sent["configuration"]["cite_sources"] is True and sent["configuration"]["confidence_scores"],
    ),
    "extend": ("EXTEND_API_KEY", _extend, lambda sent: sent["config"]["advancedOptions"]["citationsEnabled"] is True),
    "azure-cu": ("AZURE_CU_KEY", _azure, lambda sent: sent["config"]["estimateFieldSourceAndConfidence"] is True),
}
ASKED = {"reducto": "/extract_async", "llamaextract": "/api/v2/extract", "extend": "/extract_runs"}
ASKED |= {"datalab": "/api/v1/extract"}
CONFIDENCE = {"datalab": 0.75}
"""Datalab scores 1 to 5: a 4 is (4 - 1) / 4; the others' fakes say 0.9."""
OPTIONS: dict[str, dict[str, Any]] = {"llamaextract": {"confidence": True}}
OPTIONS["datalab"] = {"confidence": True, "mode": "fast", "score_wait": 5.0}


@pytest.mark.parametrize("system", sorted(CITED))
def test_the_vendors_citations_land_on_the_printed_value(
    system: str, places: dict[str, Any], fake: FakeVendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, install, asked = CITED[system]
    monkeypatch.setenv(key, KEY)
    install(fake, places)
    options: dict[str, Any] = {"citations": True}
    if system == "azure-cu":
        options |= {"endpoint": fake.url, "poll_interval": 0.01}
    else:
        options |= {"base_url": fake.url, "poll_interval": 0.01}
    adapter = get(system, options | OPTIONS.get(system, {}))
    pdf = tmp_path / "invoice.pdf"
    pdf.write_bytes(pdf_bytes(LINES))
    record = predict(adapter, Question(pdf, question_schema(SCHEMA)), timeout=5.0, policy=FAST)
    assert record["error"] is None
    output = {k: v for k, v in record["output"].items() if not k.endswith("_citations")}  # the scorer drops those
    assert output == ANSWER  # the cited answer reads as the plain one
    request = fake.sent("POST", ASKED[system])[0] if system in ASKED else fake.sent("PUT")[0]
    assert asked(request.form() if system == "datalab" else json.loads(request.body))
    sizes = [places["invoice"][2], places["invoice"][2]]
    checked = check("d", system, adapter.cites(record["raw"]), sizes)
    assert (checked.invalid_citations, checked.invalid_confidences) == (0, 0)
    rows = {row["address"]: row for row in checked.rows}
    assert set(rows) == set(ANSWER)
    for name, (page, box, _) in places.items():
        row = rows[name]
        assert row["page"] == page and row["confidence"] == CONFIDENCE.get(system, 0.9)
        assert max(abs(a - b) for a, b in zip((row["x0"], row["y0"], row["x1"], row["y1"]), box, strict=True)) < 2


def test_without_the_option_nothing_is_asked_and_a_plain_answer_cites_nothing() -> None:
    for system in CITED:
        adapter = get(system, {"endpoint": "https://x.invalid"} if system == "azure-cu" else {})
        assert adapter.options()["citations"] is False
        assert adapter.cites({"result": {"contents": [{"fields": {}}]}, "output": {"value": {}}}) == []
    assert AzureCU().analyzer_id({"a": 1}) != AzureCU(citations=True).analyzer_id({"a": 1})


def test_extend_falls_back_to_its_ocr_confidence_where_logprobs_are_phased_out() -> None:
    """Extend's docs: `logprobsConfidence` is null from extraction_performance 4.6.0 on and never sent
    by extraction_light; `ocrConfidence` is the score to read then."""
    polygon = [{"x": 10, "y": 20}, {"x": 60, "y": 20}, {"x": 60, "y": 32}, {"x": 10, "y": 32}]
    citation = {"page": {"number": 1, "width": 612, "height": 792}, "polygon": polygon, "referenceText": "A-1"}
    metadata = {
        "invoice": {"logprobsConfidence": None, "ocrConfidence": 0.97, "citations": [citation]},
        "total": {"ocrConfidence": 0.88, "citations": [citation]},
        "lines[0].sku": {"logprobsConfidence": 0.6, "ocrConfidence": 0.99, "citations": []},
        "lines[1].sku": {"logprobsConfidence": None, "ocrConfidence": None},
    }
    raw = {"status": "PROCESSED", "output": {"value": {}, "metadata": metadata}}
    confidences = {cite.address: cite.confidence for cite in get("extend", {"citations": True}).cites(raw)}
    assert confidences == {"invoice": 0.97, "total": 0.88, "lines[0].sku": 0.6, "lines[1].sku": None}


def test_azure_sources_without_the_pages_are_read_in_inches() -> None:
    """oeb asks with `returnDetails: false`, so the content may come without its `pages`: a PDF's
    source polygon is then in inches (Azure's unit for a PDF); a field on two regions cites the first."""
    first = "D(2,1,1,2,1,2,1.5,1,1.5);D(3,0,0,1,0,1,1,0,1)"
    item = {"type": "object", "valueObject": {"sku": {"type": "string", "valueString": "s", "source": first}}}
    fields = {
        "total": {
            "type": "number",
            "valueNumber": 2.5,
            "confidence": 0.7,
            "source": "D(1,0.5,1,1.5,1,1.5,1.25,0.5,1.25)",
        },
        "lines": {"type": "array", "valueArray": [item]},
    }
    raw = {"status": "Succeeded", "result": {"contents": [{"kind": "document", "unit": "inch", "fields": fields}]}}
    cites = {c.address: c for c in AzureCU(citations=True).cites(raw)}
    assert (cites["total"].page, cites["total"].bbox, cites["total"].confidence) == (1, (36.0, 72.0, 108.0, 90.0), 0.7)
    assert (cites["lines[0].sku"].page, cites["lines[0].sku"].bbox) == (2, (72.0, 72.0, 144.0, 108.0))
    checked = check("d", "azure-cu", list(cites.values()), [(612.0, 792.0)] * 3)
    assert (checked.invalid_citations, len(checked.rows)) == (0, 2)
