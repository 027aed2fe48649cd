"""`oeb check`: a JSON report on stdout when every check passes; otherwise one line on stderr that
names what is wrong and the fix, a non-zero exit and no traceback."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from fixtures.datasets import publish, upload

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET

SUITES = {"invoices": 4, "tables": 3, "research": 3, "forms": 2}


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_without_a_dataset_the_shipped_sample_is_checked(capsys) -> None:
    code, out, err = check(capsys)
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "dataset": str(Path(SAMPLE_DATASET).resolve()),
        "manifest": "manifest.parquet",
        "rows": 12,
        "suites": SUITES,
    }


def test_a_dataset_on_s3(capsys, s3_env) -> None:
    url = upload(Path(SAMPLE_DATASET), f"s3://oeb-tests/cli/{uuid.uuid4().hex[:8]}")
    code, out, _ = check(capsys, "--dataset", url, "--manifest", "./manifest.parquet")
    assert code == 0
    assert json.loads(out) == {"dataset": url, "manifest": "./manifest.parquet", "rows": 12, "suites": SUITES}


def test_a_dataset_on_the_hub_reports_its_commit(capsys, fake_hub) -> None:
    url = publish(fake_hub, Path(SAMPLE_DATASET), f"acme/cli-{uuid.uuid4().hex[:8]}")
    code, out, _ = check(capsys, "--dataset", url)
    report = json.loads(out)
    assert code == 0
    assert (report["dataset"], report["suites"], report["dataset_commit"]) == (
        url,
        SUITES,
        fake_hub.commit(url.removeprefix("hf://datasets/")),
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--dataset", "/nonexistent/oebdata"], "no dataset folder at /nonexistent/oebdata"),
        (["--manifest", "../manifest.parquet"], "give it relative to the dataset"),
        (["--manifest", "manifests/none.parquet"], "no manifest at"),
        (["--dataset", "hf://models/acme/x"], "does not name a Hugging Face dataset"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(capsys, args: list[str], says: str) -> None:
    code, out, err = check(capsys, *args)
    assert (code, out) == (1, "")
    assert err.startswith("oeb check: ") and says in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_documents_are_listed(capsys, five_rows: Path) -> None:
    (five_rows / "pdfs" / "receipt_scan_demo.pdf").unlink()
    code, _, err = check(capsys, "--dataset", str(five_rows))
    assert code == 1
    assert f"1 document file missing (receipt_scan_demo: {five_rows}/pdfs/receipt_scan_demo.pdf)" in err


def test_the_help_names_the_default(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "sample dataset shipped with oeb" in capsys.readouterr().out
