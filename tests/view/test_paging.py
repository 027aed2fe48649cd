"""A document's answers stay bounded however many verdicts it holds: a 20,000-verdict document is
answered a slice at a time through the real server, every slice under 200 KB of JSON, the slices
reaching every verdict exactly once, the filters and orders applied on the server to all of them,
side by side too; each page's error outlines likewise (oeb/view/paging.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pyarrow.parquet as pq
import pytest
from bigdoc import BIG_DOC, BigRuns
from viewruns import Served

from oeb.view.paging import ANSWER_BYTES, paths_json

DOC = quote(BIG_DOC)
pytestmark = pytest.mark.slow  # a 20,000-verdict document graded and read through: about 13 s for the module


def label_of(served: Served, folder: str) -> str:
    return served.view.labels[[run.url for run in served.view.runs].index(folder)]


def verdicts_of(folder: str) -> list[dict[str, Any]]:
    """The run folder's verdicts of the big document, in the order grading wrote them."""
    table = pq.read_table(Path(folder) / "field_matching" / "verdicts.parquet").to_pylist()
    return [row for row in table if row["id"] == BIG_DOC]


def walk(served: Served, route: str, **args: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """Every answer of a paged route, following `next` from offset 0: the answers, and their items."""
    answers, items, offset = [], [], 0
    with httpx.Client(base_url=served.url, timeout=60) as client:
        while offset is not None:
            response = client.get(f"{route}?" + urlencode({**args, "offset": offset}))
            assert response.status_code == 200, response.text
            assert len(response.content) < ANSWER_BYTES  # the JSON as sent, before gzip
            answer = response.json()
            answers.append(answer)
            items += answer.get("verdicts") or answer.get("rows") or answer.get("boxes") or []
            offset = answer["next"]
    return answers, items


def test_every_verdict_is_reached_once_in_bounded_slices(big_served: Served, big_runs: BigRuns) -> None:
    expected = verdicts_of(big_runs.a)
    assert len(expected) > 20_000
    answers, listed = walk(big_served, f"api/documents/{DOC}", run=label_of(big_served, big_runs.a))
    assert len(answers) > 10  # a slice is a few hundred verdicts, not the document
    assert sorted(verdict["n"] for verdict in listed) == list(range(len(expected)))  # each once
    assert [verdict["address"] for verdict in listed] == [row["address"] for row in expected]  # as graded
    head = answers[0]
    assert head["total"] == head["matching"] == len(expected) and head["pages"] == 84
    assert head["counts"] == {**dict.fromkeys(head["counts"], 0), **Counter(row["result"] for row in expected)}
    paths = ["buyer", "items[].amount", "items[].code", "items[].note", "items[].qty", "items[].unit", "order_number"]
    assert head["paths"] == paths
    assert [answer["offset"] for answer in answers[1:]] == [answer["next"] for answer in answers[:-1]]


@pytest.mark.parametrize(
    ("args", "keep"),
    [
        ({"kind": "misread"}, lambda row: row["result"] == "misread"),
        ({"kind": "errors"}, lambda row: row["result"] != "matched"),
        ({"field": "items[].unit"}, lambda row: row["address"].endswith(".unit")),
        ({"q": "c04999"}, lambda row: row["gold_raw"] == '"C04999"'),  # a value, any case
        ({"q": "items[4982]", "kind": "errors"}, lambda row: "[4982]" in row["address"] and row["result"] != "matched"),
    ],
)
def test_the_filters_apply_to_every_verdict_on_the_server(
    big_served: Served, big_runs: BigRuns, args: dict[str, str], keep: Any
) -> None:
    expected = [row["address"] for row in verdicts_of(big_runs.a) if keep(row)]
    answers, listed = walk(big_served, f"api/documents/{DOC}", run=label_of(big_served, big_runs.a), **args)
    assert expected and [verdict["address"] for verdict in listed] == expected
    assert answers[0]["matching"] == len(expected) and answers[0]["total"] > 20_000


def test_errors_first_and_by_address(big_served: Served, big_runs: BigRuns) -> None:
    run = label_of(big_served, big_runs.a)
    errors = [row["address"] for row in verdicts_of(big_runs.a) if row["result"] != "matched"]
    query = urlencode({"run": run, "sort": "errors"})
    listed = httpx.get(big_served.url + f"api/documents/{DOC}?{query}", timeout=60).json()["verdicts"]
    assert len(errors) < len(listed) and {verdict["address"] for verdict in listed[: len(errors)]} == set(errors)
    assert all(verdict["result"] == "matched" for verdict in listed[len(errors) :])
    _, listed = walk(big_served, f"api/documents/{DOC}", run=run, sort="address", field="buyer")
    assert [verdict["address"] for verdict in listed] == ["buyer"]


def test_side_by_side_rows_are_bounded_and_each_address_once(big_served: Served, big_runs: BigRuns) -> None:
    a, b = label_of(big_served, big_runs.a), label_of(big_served, big_runs.b)
    answers, rows = walk(big_served, f"api/documents/{DOC}", run=a, vs=b)
    ours, theirs = verdicts_of(big_runs.a), verdicts_of(big_runs.b)
    addresses = list(dict.fromkeys([row["address"] for row in ours] + [row["address"] for row in theirs]))
    assert [row["address"] for row in rows] == addresses and answers[0]["total"] == len(addresses)
    assert answers[0]["vs"]["label"] == b and answers[0]["vs"]["counts"]["misread"] == 167
    by_address = {row["address"]: row for row in rows}
    assert by_address["items[0].note"]["sides"][1] is None  # only A invented it
    assert [side["result"] for side in by_address["items[11].qty"]["sides"]] == ["matched", "misread"]
    _, either = walk(big_served, f"api/documents/{DOC}", run=a, vs=b, kind="misread")
    assert len(either) == 200 + 167  # a misread on either side (none on both)


def test_each_pages_error_outlines_are_bounded_and_complete(big_served: Served, big_runs: BigRuns) -> None:
    run = label_of(big_served, big_runs.a)
    _, errors = walk(big_served, f"api/documents/{DOC}", run=run, kind="errors")
    placed = {
        (verdict["n"], side, at["page"], tuple(at["bbox"]))
        for verdict in errors
        for side, at in verdict["located"].items()
        if at and "page" in at
    }
    assert len({page for _, _, page, _ in placed}) > 40  # errors outlined all through the document
    outlined = set()
    for page in range(1, 85):
        answers, boxes = walk(big_served, f"api/boxes/{DOC}", run=run, page=str(page))
        assert answers[0]["columns"] == ["n", "side", "result", "address", "x0", "y0", "x1", "y1"]
        outlined |= {(n, side, page, tuple(box)) for n, side, _, _, *box in boxes}
    assert outlined == placed


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("api/documents/DOC?run=RUN&offset=-1", 400),
        ("api/documents/DOC?run=RUN&limit=0", 400),
        ("api/documents/DOC?run=RUN&limit=99999", 400),
        ("api/documents/DOC?run=RUN&kind=wrong", 400),
        ("api/documents/DOC?run=RUN&sort=worst", 400),
        ("api/documents/DOC?run=RUN&vs=nobody", 404),
        ("api/verdicts/DOC?run=RUN", 400),
        ("api/verdicts/DOC?run=RUN&n=999999", 404),
        ("api/boxes/DOC?run=RUN", 400),
        ("api/boxes/DOC?run=RUN&page=85", 404),
    ],
)
def test_a_query_that_cannot_be_answered_is_one_line(
    big_served: Served, big_runs: BigRuns, path: str, status: int
) -> None:
    url = path.replace("DOC", DOC).replace("RUN", quote(label_of(big_served, big_runs.a)))
    response = httpx.get(big_served.url + url, timeout=30)
    assert response.status_code == status and response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error and "\n" not in error


def test_an_offset_past_the_end_is_an_empty_slice(big_served: Served, big_runs: BigRuns) -> None:
    run = quote(label_of(big_served, big_runs.a))
    answer = httpx.get(big_served.url + f"api/documents/{DOC}?run={run}&offset=999999", timeout=30).json()
    assert answer["verdicts"] == [] and answer["next"] is None and answer["total"] > 20_000


def test_a_prediction_inventing_thousands_of_fields_names_a_thousand() -> None:
    listed = paths_json(f"invented_{number:04d}" for number in range(1_500))
    assert len(listed["paths"]) == 1_000 and listed["paths"][0] == "invented_0000" and listed["paths_total"] == 1_500
    assert paths_json(["b", "a", "a"]) == {"paths": ["a", "b"]}
