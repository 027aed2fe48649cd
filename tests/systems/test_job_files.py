"""The run folder's jobs/<id>.json (`oeb.run.predict.jobs`): written atomically, removed once saved, listed
in one call, on disk and on moto's S3; a file that cannot be read comes back as its reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oeb import storage
from oeb.run.predict import jobs
from oeb.systems import Asking, Cost, SystemFailed

ASKING = Asking(
    started=1_700_000_000.5,
    attempts=2,
    cost=Cost(usd=0.01, source="cost"),
    failure=SystemFailed("HTTP 503", status=503, body="unavailable"),
    handle={"job_id": "j-17", "project_id": "p"},
)


def test_written_jobs_are_pending_until_removed(folder_url: str) -> None:
    assert jobs.pending(folder_url) == {}
    jobs.write(folder_url, "doc_a", ASKING.to_json())
    jobs.write(folder_url, "doc_b", Asking(started=1.0, handle={"request_id": "r"}).to_json())
    found = jobs.pending(folder_url)
    assert set(found) == {"doc_a", "doc_b"}
    back = found["doc_a"]
    assert isinstance(back, dict)
    again = Asking.from_json(back)
    assert (again.started, again.attempts, again.cost, again.handle) == (
        ASKING.started,
        2,
        ASKING.cost,
        ASKING.handle,
    )
    assert again.failure is not None and (again.failure.status, again.failure.body) == (503, "unavailable")
    jobs.remove(folder_url, "doc_a")
    jobs.remove(folder_url, "doc_a")  # twice: a resume may remove what a crash left half done
    assert set(jobs.pending(folder_url)) == {"doc_b"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "is not JSON"),
        (b"\xff\xfe\x00", "is not UTF-8"),
        (b'["a list"]', "a saved asking is a JSON object"),
        (b'{"started": 1.0, "handle": "j1"}', "handle is str"),
    ],
)
def test_a_corrupt_jobs_file_comes_back_as_its_reason(folder_url: str, content: bytes, reason: str) -> None:
    storage.write_bytes(storage.join(folder_url, "jobs", "doc_c.json"), content)
    jobs.write(folder_url, "doc_d", ASKING.to_json())
    found = jobs.pending(folder_url)
    assert isinstance(found["doc_c"], str) and reason in found["doc_c"] and "jobs/doc_c.json" in found["doc_c"]
    assert isinstance(found["doc_d"], dict)


def test_leftovers_of_a_killed_write_are_not_jobs(tmp_path: Path) -> None:
    folder = str(tmp_path / "run")
    jobs.write(folder, "doc_a", ASKING.to_json())
    (tmp_path / "run" / "jobs" / ".doc_b.json.x1y2.tmp").write_text("{")
    assert set(jobs.pending(folder)) == {"doc_a"}


def test_pending_lists_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = str(tmp_path / "run")
    for n in range(5):
        jobs.write(folder, f"doc_{n}", ASKING.to_json())
    listings: list[str] = []
    real: Callable[[str], Any] = storage.list_files
    monkeypatch.setattr(storage, "list_files", lambda url: listings.append(url) or real(url))
    assert len(jobs.pending(folder)) == 5
    assert listings == [storage.join(folder, "jobs")]
