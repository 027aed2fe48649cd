"""A run folder is data from strangers (anyone can publish one): what its settings.json and scores.jsonl
say never chooses where oeb sends the user's key, what it fetches or where it writes.

A probe HTTP server on 127.0.0.1 stands for the stranger's endpoint and dataset URL: it records every
request, and must see none.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_http
import pytest
from fake_http import Reply, Request

from oeb.cli import main
from oeb.errors import DatasetRefused, PlanDeclined, ReportError
from oeb.publish import reproduce
from oeb.publish.reproduce import config_tree
from oeb.report import load_run
from oeb.view.api import open_view

SEEN: list[str] = []


@pytest.fixture(scope="module")
def probe() -> Iterator[str]:
    """A stranger's server: its base URL; what it was asked in `SEEN`."""

    def answer(request: Request) -> Reply:
        SEEN.append(f"{request.method} {request.path} {request.headers.get('authorization', '')}")
        return Reply(200, {"status": "complete"})

    server = fake_http.server(answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _nothing_seen() -> Iterator[None]:
    SEEN.clear()
    yield
    assert SEEN == []  # every test: the probe was asked nothing


def _settings(run: str, **changes: Any) -> str:
    path = Path(run) / "settings.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | changes))
    return run


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str], code: int, *says: str) -> None:
    assert main(argv) == code
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert all(part in lines[0] for part in says), lines[0]


class TestReproduce:
    """`oeb reproduce` takes the published system and options, never its endpoints and local paths."""

    def test_a_published_endpoint_is_not_where_the_key_goes(self, make_run, probe, monkeypatch) -> None:
        monkeypatch.setenv("DATALAB_API_KEY", "dl-users-own-key-0123456789")
        run = _settings(make_run("perfect"), system="datalab", options={"mode": "fast"}, located={"base_url": probe})
        shown: list[str] = []

        def decline(plans: Any) -> None:
            shown.extend(plans.lines())
            raise PlanDeclined("declined")

        with pytest.raises(PlanDeclined):
            reproduce(run, out=str(Path(run).parent / "again"), confirm=decline)
        options = next(line for line in shown if "datalab options:" in line)
        assert "base_url='https://www.datalab.to'" in options and "mode='fast'" in options
        assert probe not in "\n".join(shown)
        # the user may name an endpoint: then it is the one shown (and used)
        tree = config_tree(load_run(run), [f"system.datalab.base_url={probe}/mine"], None)
        assert tree["system"]["datalab"]["base_url"] == f"{probe}/mine"

    def test_an_endpoint_without_default_comes_from_the_user(self, make_run, probe, capsys) -> None:
        run = _settings(make_run("perfect"), system="azure-cu", options={}, located={"endpoint": probe})
        _one_line(
            capsys,
            ["reproduce", run, "-y", "--out", str(Path(run).parent / "again")],
            1,
            f"names endpoint='{probe}', which a published run does not choose",
            "--set system.azure-cu.endpoint=VALUE",
        )

    def test_a_published_local_path_is_refused_then_taken_from_the_user(self, make_run, tmp_path, capsys) -> None:
        planted = tmp_path / "victim.txt"
        planted.write_text("kept\n")
        run = _settings(make_run("perfect"), options={"seed": 0, "calls_log": str(planted)})
        out = str(tmp_path / "again")
        _one_line(capsys, ["reproduce", run, "-y", "--out", out], 1, f"names calls_log='{planted}'", "--set")
        assert planted.read_text() == "kept\n" and not Path(out).exists()
        mine = tmp_path / "mine.log"
        assert main(["reproduce", run, "-y", "--out", out, "--set", f"system.mock.calls_log={mine}"]) == 0
        assert len(mine.read_text().splitlines()) == 3 and planted.read_text() == "kept\n"

    def test_a_published_adjudication_url_is_not_fetched(self, make_run, probe, capsys) -> None:
        """The file a published run was graded under is read beside it, or where its provenance says
        only when that is a local path, s3:// or hf://; never a URL of the run's choosing."""
        run = make_run("perfect")
        summary = Path(run) / "field_matching" / "summary.json"
        tree = json.loads(summary.read_text())
        tree["provenance"]["adjudications"] = {"url": f"{probe}/adjudications.yaml", "sha256": "0" * 64}
        summary.write_text(json.dumps(tree))
        out = str(Path(run).parent / "again")
        _one_line(capsys, ["reproduce", run, "-y", "--out", out], 2, "adjudications.yaml', which oeb does not read")
        assert not Path(out).exists()


@pytest.fixture
def fetching(make_run, probe) -> str:
    """A graded run folder whose settings name the probe as its dataset."""
    return _settings(make_run("perfect"), dataset=f"{probe}/dataset", options={})


class TestDatasetURL:
    """A run folder's `dataset` is opened only when local, s3:// or hf://; a URL only when the user names it."""

    def test_view_refuses_it_at_start_up(self, fetching) -> None:
        view = open_view([fetching])
        view.warm()  # what `oeb view` does at start-up: the failure is kept for the page
        with pytest.raises(DatasetRefused, match="which oeb does not open on a run folder's word"):
            view.dataset()

    @pytest.mark.parametrize(
        "verb", [["audit"], ["grade"], ["reproduce", "-y"], ["reproduce", "-y", "--reuse"]], ids=" ".join
    )
    def test_each_command_refuses_it_in_one_line(self, fetching, verb: list[str], capsys) -> None:
        argv = [verb[0], fetching, *verb[1:]]
        if verb[0] == "reproduce":
            argv += ["--out", str(Path(fetching).parent / "again")]
        _one_line(capsys, argv, 2, "/dataset', which oeb does not open on a run folder's word", "name it yourself")

    def test_the_user_may_name_it(self, fetching, probe, capsys) -> None:
        """Named with --dataset, it is the user's choice: fetched (and here refused as no dataset)."""
        assert main(["audit", fetching, "--dataset", f"{probe}/dataset"]) != 0
        assert SEEN and all("/dataset" in seen for seen in SEEN)
        SEEN.clear()


def test_an_id_that_is_a_path_is_refused_on_loading(make_run) -> None:
    run = make_run("perfect")
    scores = Path(run) / "field_matching" / "scores.jsonl"
    lines = [json.loads(line) for line in scores.read_text().splitlines()]
    lines[0]["id"] = "../../escaped"
    scores.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ReportError, match=r"line 1 names the document '../../escaped', which is not a file name"):
        load_run(run)


def test_the_plan_names_where_an_llm_key_goes() -> None:
    """base_url unset: the plan shows the provider's endpoint, not None."""
    from oeb.systems import get

    assert get("openai/gpt-5.6-sol", {"provider": "openai"}).shown_options()["base_url"] == "https://api.openai.com/v1"
    assert get("openai/gpt-5.6-sol").shown_options()["base_url"] == "https://openrouter.ai/api/v1"
