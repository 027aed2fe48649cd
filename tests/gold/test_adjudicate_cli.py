"""`oeb adjudicate` as a user runs it, over three graded mock runs of the sample with seeded gold errors
(goldruns.py): propose, accept and reject on local and S3 files, check, diff against two separate
gradings, sample, and bad input refused in one line with exit 2 and nothing changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from goldruns import SEEDED, GoldRuns

from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import AdjudicationError
from oeb.gold import entries
from oeb.gold.check import leaves
from oeb.report import load_run


def propose(gold_runs: GoldRuns, out: str) -> entries.Adjudications:
    assert main(["adjudicate", "propose", *gold_runs.runs, "--min-agree", "2", "--out", out]) == 0
    return entries.load(out)


def test_propose_turns_the_seeded_gold_errors_into_proposals(gold_runs: GoldRuns, tmp_path: Path) -> None:
    proposed = propose(gold_runs, str(tmp_path / "adj.yaml"))
    found = {(e.doc_id, e.address): e for e in proposed.entries}
    for (doc_id, address), (true, put) in SEEDED.items():
        entry = found[(doc_id, address)]
        assert entry.status == "proposed" and "systems" in (entry.reason or "")
        if put is None:
            assert (entry.action, entry.value) == ("add", true)
        else:
            assert (entry.action, entry.values) == ("accept", (true,))
        assert entry.evidence is not None and entry.evidence["page"] == 1 and len(entry.evidence["bbox"]) == 4
    assert proposed.dataset == str(Path(gold_runs.dataset).resolve())
    # proposing again keeps a decided entry as it is
    decided = next(iter(found.values()))
    url = str(tmp_path / "adj.yaml")
    assert main(["adjudicate", "accept", url, decided.id, "--by", "ann", "--reason", "seen on the page"]) == 0
    again = propose(gold_runs, url)
    assert again.by_id(decided.id).status == "accepted" and len(again.entries) == len(proposed.entries)


def test_accept_and_reject_round_trip(gold_runs: GoldRuns, folder_url: str) -> None:
    url = storage.join(folder_url, "adjudications.yaml")
    proposed = propose(gold_runs, url)
    first, second = proposed.entries[0].id, proposed.entries[1].id
    assert main(["adjudicate", "accept", url, first, "--by", "ann"]) == 0  # the proposal's reason is kept
    assert main(["adjudicate", "reject", url, second, "--by", "bob", "--reason", "the page says otherwise"]) == 0
    read = entries.load(url)
    assert (read.by_id(first).status, read.by_id(first).by, read.by_id(first).reason) == (
        "accepted",
        "ann",
        proposed.entries[0].reason,
    )
    assert (read.by_id(second).status, read.by_id(second).reason) == ("rejected", "the page says otherwise")
    untouched = [e for e in read.entries if e.id not in (first, second)]
    assert untouched == [e for e in proposed.entries if e.id not in (first, second)]


def bad(arguments: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(arguments) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err


def test_bad_decisions_change_nothing(gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "adj.yaml")
    proposed = propose(gold_runs, url)
    before = Path(url).read_bytes()
    some = proposed.entries[0].id
    bad(["adjudicate", "accept", url, some, "nope", "--by", "ann"], "no entry with id 'nope'", capsys)
    bad(["adjudicate", "accept", url, some, "--by", "ann", "--value", "{"], "is not JSON", capsys)
    Path(url).write_bytes(before.replace(b"status: proposed", b"status: accepted\n  by: ann", 1))
    Path(url).write_bytes(Path(url).read_bytes().replace(b"  reason:", b"  note:", 1))
    bad(["adjudicate", "check", url], "unknown key 'note'", capsys)
    Path(url).write_bytes(before.replace(b"status: proposed", b"status: accepted", 1))
    bad(["adjudicate", "check", url], "needs `by:`", capsys)
    Path(url).write_bytes(before + b"- {id: x, doc_id: d, address: [oops\n")
    bad(["adjudicate", "check", url], "not valid YAML at line", capsys)
    assert main(["adjudicate", "check", str(tmp_path / "missing.yaml")]) == 2
    Path(url).write_bytes(before)
    bad(["adjudicate", "reject", url, some, "--by", "ann", "--reason", " "], "a rejection needs --reason", capsys)
    assert Path(url).read_bytes() == before


def test_check_lists_each_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = tmp_path / "adj.yaml"
    url.write_text(
        f"dataset: {SAMPLE_DATASET}\nentries:\n"
        "- {id: a, doc_id: nothing, address: x, action: remove}\n"
        "- {id: b, doc_id: short__invoice_4417, address: total, action: replace, value: lots}\n"
    )
    capsys.readouterr()
    assert main(["adjudicate", "check", str(url)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["a", "b"]


def test_diff_equals_two_separate_gradings(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file undoes the seeded errors (replace, add), so after it each run scores as a copy of it
    graded against the sample's true gold."""
    url = tmp_path / "adj.yaml"
    lines = ["entries:"]
    for n, ((doc_id, address), (true, put)) in enumerate(SEEDED.items()):
        action = "add" if put is None else "replace"
        lines.append(
            f"- {{id: e{n}, doc_id: {doc_id}, address: {address}, action: {action}, value: {json.dumps(true)}, "
            "status: accepted, by: ann, reason: on the page}"
        )
    url.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["adjudicate", "diff", *gold_runs.runs, "--adjudications", str(url), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["accepted"] == 3
    repaired = tmp_path / "repaired"  # the damaged dataset's twin with the true gold
    shutil.copytree(gold_runs.dataset, repaired)
    shutil.copytree(gold_runs.true_gold, repaired / "gold", dirs_exist_ok=True)
    for run in gold_runs.runs:
        before = load_run(run)
        copy = tmp_path / Path(run).name
        shutil.copytree(run, copy)
        settings = json.loads((copy / "settings.json").read_text())
        (copy / "settings.json").write_text(json.dumps({**settings, "dataset": str(repaired)}))
        assert main(["grade", str(copy)]) == 0
        after = load_run(str(copy))
        row = next(s for s in result["systems"] if s["system"].endswith(f"seed={Path(run).parent.name[-1]})"))
        headline = sum(line.get("accuracy", 0) for line in after.lines) / len(after.lines)
        assert row["after"]["headline"] == pytest.approx(headline, abs=1e-12)
        assert row["before"]["headline"] == pytest.approx(
            sum(line.get("accuracy", 0) for line in before.lines) / len(before.lines), abs=1e-12
        )
        assert row["difference"]["mean_diff"] == pytest.approx(
            row["after"]["headline"] - row["before"]["headline"], abs=1e-12
        )
        assert row["documents_changed"] == 2 and {m["id"] for m in row["moved_by"]} <= {"e0", "e1", "e2"}
    assert main(["adjudicate", "diff", *gold_runs.runs, "--adjudications", str(url)]) == 0
    assert "rank" in capsys.readouterr().out


def test_sample_writes_verify_entries_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "adj.yaml")
    assert (
        main(["adjudicate", "sample", SAMPLE_DATASET, "--n", "20", "--seed", "4", "--by", "suite", "--out", url]) == 0
    )
    first = entries.load(url)
    assert len(first.entries) == 20 and {e.action for e in first.entries} == {"verify"}
    # each located where its value stands, so the review page opens it on that page (some on page 2)
    places = [e.evidence for e in first.entries]
    assert all(p and p["page"] >= 1 and len(p["bbox"]) == 4 for p in places) and max(p["page"] for p in places) > 1
    assert (
        main(["adjudicate", "sample", SAMPLE_DATASET, "--n", "20", "--seed", "4", "--by", "suite", "--out", url]) == 0
    )
    assert entries.load(url).entries == first.entries
    assert main(["adjudicate", "check", url]) == 0
    bad(["adjudicate", "sample", SAMPLE_DATASET, "--n", "0", "--out", url], "--n 0", capsys)


def board(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["report", *arguments, "--format", "json"]) == 0
    answer: dict[str, object] = json.loads(capsys.readouterr().out)
    return answer


def test_the_report_says_which_gold_and_how_wrong(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = board(list(gold_runs.runs), capsys)
    url = str(tmp_path / "adj.yaml")
    assert main(["adjudicate", "sample", gold_runs.dataset, "--n", "8", "--seed", "2", "--out", url]) == 0
    unchanged = board([*gold_runs.runs, "--adjudications", url], capsys)  # nothing decided yet
    assert unchanged["rows"] == [{**row, "within_gold_noise": False} for row in raw["rows"]]  # type: ignore[union-attr]
    assert unchanged["gold_error"] is None
    ids = [entry.id for entry in entries.load(url).entries]
    assert main(["adjudicate", "accept", url, *ids[:6], "--by", "ann", "--reason", "as on the page"]) == 0
    wrong = entries.load(url).by_id(ids[6])
    gold = dict(leaves(json.loads((Path(gold_runs.dataset) / "gold" / f"{wrong.doc_id}.json").read_text())))
    fixed = json.dumps("Zz" if isinstance(gold[wrong.address], str) else gold[wrong.address] + 1)
    assert main(["adjudicate", "accept", url, wrong.id, "--by", "ann", "--reason", "misread", "--value", fixed]) == 0
    adjudicated = board([*gold_runs.runs, "--adjudications", url], capsys)
    error = adjudicated["gold_error"]
    assert isinstance(error, dict) and (error["checked"], error["wrong"]) == (7, 1)
    assert error["rate"] == pytest.approx(1 / 7) and error["ci"][0] < 1 / 7 < error["ci"][1]
    gold = adjudicated["gold"]
    assert (
        isinstance(gold, dict)
        and gold["accepted"] == 1
        and gold["line"].endswith(f"+ 1 adjudication (sha256 {entries.load(url).short})")
    )
    capsys.readouterr()
    assert main(["report", *gold_runs.runs, "--adjudications", url]) == 0
    out = capsys.readouterr().out
    assert "gold error: 14.3% (95% CI 0.4-57.9%) from 7 checked values" in out
    page = tmp_path / "report.html"
    assert main(["report", *gold_runs.runs, "--adjudications", url, "--format", "html", "--out", str(page)]) == 0
    assert gold["line"] in page.read_text() and "from 7 checked values" in page.read_text()
    assert board([*gold_runs.runs, "--adjudications", "none"], capsys) == raw
    bad(["report", *gold_runs.runs, "--adjudications", str(tmp_path / "absent.yaml")], "no adjudication file", capsys)


def test_grading_under_a_file(gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """oeb grade --adjudications: only the named documents' lines change, their verdicts carry the ids,
    the provenance names the file; a bad file grades nothing; none is the raw gold again."""
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    shutil.copytree(gold_runs.runs[1], run)  # seed 2 reads the customer right
    results = run / "field_matching"
    raw = {line["id"]: line for line in load_run(str(run)).lines}
    url = tmp_path / "adj.yaml"
    url.write_text(
        "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
        " status: accepted, by: ann, reason: on the page}\n"
    )
    assert main(["grade", str(run), "--adjudications", str(url)]) == 0
    graded = {line["id"]: line for line in load_run(str(run)).lines}
    assert {doc for doc in raw if raw[doc] != graded[doc]} == {"short__invoice_4417"}
    assert graded["short__invoice_4417"]["adjudications"] == ["fix"]
    assert graded["short__invoice_4417"]["matched"] == raw["short__invoice_4417"]["matched"] + 1
    table = pq.read_table(results / "verdicts.parquet").to_pylist()
    marked = [row for row in table if row["adjudication"] is not None]
    assert [(row["id"], row["address"], row["result"]) for row in marked] == [
        ("short__invoice_4417", "customer", "matched")
    ]
    summary = json.loads((results / "summary.json").read_text())
    assert summary["provenance"]["adjudications"]["applied"] == ["fix"]
    from oeb.view.api import open_view

    view = open_view([str(run)])  # the document page marks the verdict the entry changed
    page = view.document_json(view.labels[0], "short__invoice_4417")
    assert {v["address"]: v.get("adjudication") for v in page["verdicts"] if v.get("adjudication")} == {
        "customer": "fix"
    }
    assert summary["provenance"]["adjudications"]["sha256"] == entries.load(str(url)).sha256
    before = {path.name: path.read_bytes() for path in results.iterdir() if path.is_file()}
    url.write_text(url.read_text().replace("address: customer", "address: colour"))
    bad(["grade", str(run), "--adjudications", str(url)], "no gold value at colour", capsys)
    assert {path.name: path.read_bytes() for path in results.iterdir() if path.is_file()} == before
    assert main(["grade", str(run), "--adjudications", "none"]) == 0
    assert {line["id"]: line for line in load_run(str(run)).lines} == raw


def test_decisions_on_the_hub_are_commits(fake_hub, gold_runs: GoldRuns, tmp_path: Path) -> None:
    """accept and reject on an hf:// file write it back in one commit, read back at the new revision."""
    import uuid

    from fixtures.datasets import publish as put_on_hub

    folder = tmp_path / "sample"
    shutil.copytree(SAMPLE_DATASET, folder)
    (folder / "adjudications.yaml").write_text(
        "- {id: a, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline],"
        " reason: two systems read it}\n- {id: b, doc_id: short__invoice_4417, address: total, action: remove}\n"
    )
    url = put_on_hub(fake_hub, folder, f"acme/gold-{uuid.uuid4().hex[:6]}") + "/adjudications.yaml"
    assert main(["adjudicate", "accept", url, "a", "--by", "ann"]) == 0
    assert main(["adjudicate", "reject", url, "b", "--by", "ann", "--reason", "legible on the page"]) == 0
    read = entries.load(url)
    assert (read.by_id("a").status, read.by_id("b").status) == ("accepted", "rejected")
    # grading a Hub dataset applies the file pinned with it
    from oeb.dataset import open_dataset
    from oeb.gold.check import applying

    dataset = open_dataset(url.removesuffix("/adjudications.yaml"))
    pinned = applying(None, dataset)
    assert pinned is not None and pinned.sha256 == read.sha256 and "@" in pinned.url
    # a push between reading the file and writing it back is refused, not overwritten
    from oeb.publish.adjudications import read_file, write_file

    read, at = read_file(url)
    theirs = fake_hub.repo(url.split("/")[3] + "/" + url.split("/")[4]) / "adjudications.yaml"
    theirs.write_text(theirs.read_text() + "# pushed by bob meanwhile\n")
    with pytest.raises(AdjudicationError, match="cannot write"):
        write_file(read, url, "oeb adjudicate accept", at)
    assert theirs.read_text().endswith("# pushed by bob meanwhile\n")
    # propose and sample write a file beside a Hub dataset as accept does: in a commit (they were refused)
    dataset_url = url.removesuffix("/adjudications.yaml")
    assert main(["adjudicate", "sample", dataset_url, "--n", "2", "--seed", "3", "--out", url]) == 0
    assert [e.action for e in entries.load(url).entries] == ["accept", "remove", "verify", "verify"]
    # the review page decides on the Hub file too (each decision a commit; it answered "hf:// is read-only")
    from oeb.view.api import open_view
    from oeb.view.review import Review

    verify = entries.load(url).entries[2]
    review = Review(open_view([gold_runs.runs[0]]), url, "ann")
    review.decide({"id": verify.id, "revision": verify.revision, "decision": "accept", "reason": "as printed"})
    assert entries.load(url).by_id(verify.id).status == "accepted"
    assert fake_hub.commits[-1]["summary"] == f"oeb view --review: {verify.id} accepted by ann"


def test_compare_and_slices_say_which_gold(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`oeb compare`, `oeb report --by field` and `--by TRAIT` under a file name it beside their
    numbers, as the leaderboard does; under the raw gold they name none."""
    url = tmp_path / "adj.yaml"
    url.write_text(
        "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
        " status: accepted, by: ann, reason: on the page}\n"
    )
    said = f"+ 1 adjudication (sha256 {entries.load(str(url)).short})"
    a, b = gold_runs.runs[:2]
    capsys.readouterr()
    assert main(["compare", a, b, "--adjudications", str(url), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["gold"].endswith(said)
    for form in ("text", "md"):
        assert main(["compare", a, b, "--adjudications", str(url), "--format", form]) == 0
        assert said in capsys.readouterr().out.replace("\n", " "), form
    assert main(["compare", a, b, "--adjudications", "none", "--format", "json"]) == 0
    assert "gold" not in json.loads(capsys.readouterr().out)
    for by in ("field", "pages"):
        assert main(["report", a, b, "--by", by, "--adjudications", str(url), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["gold"].endswith(said), by
        assert main(["report", a, b, "--by", by, "--adjudications", str(url), "--format", "md"]) == 0
        assert said in capsys.readouterr().out, by
        assert main(["report", a, b, "--by", by, "--adjudications", "none", "--format", "json"]) == 0
        assert "gold" not in json.loads(capsys.readouterr().out), by


def test_a_decision_grading_would_refuse_is_not_written(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value its schema refuses (`total` is a number), accepted on the command line or typed on the
    review page, is refused in one line before the file is written: it would make every later grading
    and report refuse the whole file."""
    from oeb.view.api import open_view
    from oeb.view.review import Review

    url = str(tmp_path / "adj.yaml")
    proposed = propose(gold_runs, url)
    typed = entries.Entry("typed", "short__invoice_4417", "total", "replace", value=1.0, reason="the page")
    entries.save(proposed.replaced([typed]), url)
    before = Path(url).read_bytes()
    refused = "the value 'lots' is refused by the schema at total"
    bad(["adjudicate", "accept", url, "typed", "--by", "ann", "--value", '"lots"'], refused, capsys)
    review = Review(open_view(list(gold_runs.runs)), url, "ann")
    body = {"id": "typed", "revision": typed.revision, "decision": "correct", "value": "lots", "reason": "typo"}
    with pytest.raises(AdjudicationError, match=refused):
        review.decide(body)
    assert Path(url).read_bytes() == before
    assert main(["adjudicate", "accept", url, "typed", "--by", "ann", "--value", "5411.73"]) == 0
    assert entries.load(url).by_id("typed").value == 5411.73


def test_a_hub_datasets_own_file_is_read_as_it_was_graded(fake_hub, tmp_path: Path, capsys) -> None:
    """A run of a Hub dataset whose repository holds adjudications.yaml is graded under it (pinned at
    the commit graded); `oeb report RUN` with no flag reads it under the same file, not the raw gold."""
    import uuid

    from fixtures.datasets import publish as put_on_hub
    from goldruns import damaged_sample, mock_run

    folder = damaged_sample(tmp_path)
    (folder / "adjudications.yaml").write_text(
        "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
        " status: accepted, by: ann, reason: on the page}\n"
    )
    hub = put_on_hub(fake_hub, folder, f"acme/adj-{uuid.uuid4().hex[:6]}")
    run = mock_run(tmp_path / "runs", hub, 2)  # type: ignore[arg-type]
    assert load_run(run).provenance["adjudications"]["applied"] == ["fix"]
    capsys.readouterr()
    assert main(["report", run, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["gold"]["applied"] == ["fix"] and "@" in board["gold"]["adjudications"]
    assert main(["report", run, "--format", "json", "--adjudications", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["headline"] < board["rows"][0]["headline"]


def test_the_adjudications_list_gives_each_effect_from_the_raw_gold(gold_runs: GoldRuns, tmp_path: Path) -> None:
    """`/api/adjudications` gives, per run, the document's accuracy before an entry (the raw gold) and
    after it, also when the explorer reads the runs under that file (`oeb view --adjudications`)."""
    from oeb.report import leaderboard
    from oeb.report.adjudicated import annotate, under_gold
    from oeb.view.api import open_view
    from oeb.view.review import Review

    url = tmp_path / "adj.yaml"
    url.write_text(
        "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
        " status: accepted, by: ann, reason: on the page}\n"
    )
    view = open_view(list(gold_runs.runs))
    raw = {run.label: next(line for line in run.lines if line["id"] == "short__invoice_4417") for run in view.runs}
    gold = under_gold(view.runs, str(url))  # as `oeb view` does with a file
    view.runs, view.board = gold.runs, annotate(leaderboard(gold.runs, adjudications=gold.adjudications), gold)
    [listed] = Review(view, str(url), None).adjudications_json()["entries"]
    assert len(listed["effect"]) >= 2  # the runs whose system read the accepted value
    for label, effect in listed["effect"].items():
        assert effect["accuracy"][0] == raw[label]["accuracy"] < effect["accuracy"][1], label
        assert effect["verdicts"] == [{"address": "customer", "result": "matched"}]


def test_the_view_reads_a_run_as_the_report_does(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run graded under a file its folder does not name (`oeb grade --adjudications`) is read under
    the raw gold by `oeb report` with no flag; `oeb view` with no flag showed the graded numbers."""
    url = tmp_path / "adj.yaml"
    url.write_text(
        "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
        " status: accepted, by: ann, reason: on the page}\n"
    )
    run = tmp_path / "run"
    shutil.copytree(gold_runs.runs[1], run)
    assert main(["grade", str(run), "--adjudications", str(url)]) == 0
    capsys.readouterr()
    assert main(["report", str(run), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    site = tmp_path / "site"
    assert main(["view", str(run), "--export", str(site)]) == 0
    [shown] = json.loads((site / "api" / "runs.json").read_text())
    assert shown["headline"] == row["headline"]
    page = json.loads((site / "api" / "runs" / "0" / "documents" / "short__invoice_4417.json").read_text())
    customer = next(v for v in page["verdicts"] if v["address"] == "customer")
    assert (customer["result"], customer.get("adjudication")) == ("misread", None)
