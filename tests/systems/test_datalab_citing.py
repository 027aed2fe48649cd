"""Datalab's citations and scores beyond the happy path (tests/systems/test_citations.py): nested and
array addresses, hostile block ids and scores dropped and counted, the bounded wait for the scores, and
the score objects kept out of the graded answer."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from oeb.grounding.cite import check
from oeb.systems import get, question_schema
from oeb.systems.asking import predict
from oeb.systems.base import Question
from oeb.systems.datalab_citing import confidence
from systems.conftest import FAST, KEY
from systems.fake_vendor import FakeVendor, Reply
from systems.vendors import SCHEMA

PAGE = (612.0, 792.0)


def _block(block_id: str, box: list[float], text: str = "x") -> dict[str, Any]:
    return {"id": block_id, "block_type": "Text", "bbox": box, "html": f"<p>{text}</p>"}


TREE = {
    "children": [
        {
            "id": "/page/0/Page/0",
            "block_type": "Page",
            "bbox": [0, 0, 1224, 1584],  # the page in pixels at 144 DPI
            "children": [
                _block("/page/0/Table/4", [100, 200, 300, 240], "SKU-1 &amp; co"),
                _block("/page/0/Text/5", [2000, 10, 2100, 20]),  # wider than its page
            ],
        },
        {
            "id": "/page/2/Page/0",
            "block_type": "Page",
            "bbox": [0, 0, 1224, 1584],
            "children": [_block("/page/2/Text/1", [10, 10, 50, 20])],  # a third page of a two-page document
        },
    ]
}
EXTRACTION = {
    "lines": [
        {"sku": "SKU-1", "sku_citations": ["/page/0/Table/4"], "sku_score": {"score": 5, "reasoning": "r"}},
        {"sku": "SKU-2", "sku_citations": ["nonsense"], "sku_score": {"score": 7, "reasoning": "r"}},
    ],
    "buyer": {"name": "ACME", "name_citations": ["/page/0/Text/99"], "name_score": {"score": "high"}},
    "wide": "w",
    "wide_citations": ["/page/0/Text/5"],
    "late": "l",
    "late_citations": ["/page/2/Text/1"],
    "plain": "p",
    "note_score": 3,  # a bare number is a value (no base key `note` beside it)
}


def test_nested_and_array_values_are_cited_and_hostile_ones_dropped_and_counted() -> None:
    adapter = get("datalab", {"citations": True, "confidence": True})
    cites = adapter.cites({"status": "complete", "extraction_schema_json": json.dumps(EXTRACTION), "json": TREE})
    checked = check("d", "datalab", cites, [PAGE, PAGE])
    rows = {row["address"]: row for row in checked.rows}
    sku = rows["lines[0].sku"]
    assert (sku["page"], sku["confidence"], sku["text"]) == (1, 1.0, "SKU-1 & co")
    assert (sku["x0"], sku["y0"], sku["x1"], sku["y1"]) == pytest.approx((50, 100, 150, 120))  # pixels / 2
    assert rows["buyer.name"]["page"] == 1 and rows["buyer.name"]["x0"] is None  # an unknown block: its page only
    # `nonsense` (no page), a box past its page, page 3 of 2; a score of 7 and one of "high"
    assert (checked.invalid_citations, checked.invalid_confidences) == (3, 2)
    assert rows["late"]["page"] is None and rows["wide"]["page"] is None  # their quoted text is kept
    assert "plain" not in rows and "note_score" not in rows
    assert adapter.read({"extraction_schema_json": EXTRACTION})["note_score"] == 3
    assert "sku_score" not in adapter.read({"extraction_schema_json": EXTRACTION})["lines"][0]
    # scores not asked for: the answer is read as the reference reads it (a score graded as a field)
    assert "sku_score" in get("datalab", {}).read({"extraction_schema_json": EXTRACTION})["lines"][0]


def test_the_options_choose_what_is_kept() -> None:
    raw = {"extraction_schema_json": EXTRACTION, "json": TREE}
    assert get("datalab", {}).cites(raw) == []
    places = get("datalab", {"citations": True}).cites(raw)
    assert places and all(c.confidence is None for c in places)
    scores = get("datalab", {"confidence": True}).cites(raw)
    assert scores and all(c.page is None and c.bbox is None for c in scores)
    assert [confidence({"score": s}) for s in (1, 2, 3, 4, 5)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(Exception, match="score_wait"):
        get("datalab", {"score_wait": -1.0})


def test_the_wait_for_scores_is_bounded_and_never_fails_the_extraction(
    fake: FakeVendor, pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATALAB_API_KEY", KEY)
    fake.on("POST", "/api/v1/extract", Reply(200, {"request_id": "r1"}))
    done = {"status": "complete", "extraction_schema_json": json.dumps({"invoice": "A-1", "total": 2.5}),
            "cost_breakdown": {"final_cost_cents": 4}}  # fmt: skip
    fake.on("GET", "/api/v1/extract/r1", Reply(200, done))  # the scores never come
    options = {"base_url": fake.url, "poll_interval": 0.05, "confidence": True, "score_wait": 0.3}
    started = time.monotonic()
    record = predict(get("datalab", options), Question(pdf, question_schema(SCHEMA)), timeout=5.0, policy=FAST)
    assert record["error"] is None and record["output"] == {"invoice": "A-1", "total": 2.5}
    assert 0.3 <= time.monotonic() - started < 2.0
    polls = len(fake.sent("GET", "/api/v1/extract/r1"))
    assert polls >= 4  # the finishing poll, then about one each 0.05 s of the 0.3 s
    fake.requests.clear()
    plain = get("datalab", options | {"confidence": False})
    record = predict(plain, Question(pdf, question_schema(SCHEMA)), timeout=5.0, policy=FAST)
    assert record["error"] is None and len(fake.sent("GET", "/api/v1/extract/r1")) == 1  # no wait without it


@pytest.mark.parametrize("mode", ["balanced", "accurate"])
def test_the_cited_configs_are_the_published_ones_with_citations_kept(mode: str) -> None:
    import yaml

    configs = Path(__file__).parents[2] / "configs"
    published = yaml.safe_load((configs / f"datalab-{mode}.yaml").read_text())
    cited = yaml.safe_load((configs / "cited" / f"datalab-{mode}.yaml").read_text())
    assert published["system"]["datalab"]["citations"] is False
    published["system"]["datalab"]["citations"] = True
    assert cited == published
    assert get("datalab", cited["system"]["datalab"]).options() == cited["system"]["datalab"]
