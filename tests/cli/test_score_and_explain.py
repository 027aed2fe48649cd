"""`oeb score` and `oeb explain` as a user runs them: JSON out, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import oeb
from oeb.cli import BROKEN_PIPE, main
from oeb.scoring import score

EXAMPLE = Path(oeb.__file__).parent / "examples" / "invoice"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def files(tmp_path: Path, pred: object, gold: object, schema: object) -> list[str]:
    paths = []
    for name, value in (("pred", pred), ("gold", gold), ("schema", schema)):
        path = tmp_path / f"{name}.json"
        path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
        paths += [f"--{name}", str(path)]
    return paths


RECURSIVE = {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}
ROWS = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}


def test_score_prints_the_result_as_json(capsys) -> None:
    code, out, _ = run(
        capsys, "score", "--pred", str(EXAMPLE / "pred.json"), "--gold", str(EXAMPLE / "gold.json"),
        "--schema", str(EXAMPLE / "schema.json"),
    )  # fmt: skip
    result = json.loads(out)
    assert code == 0
    expected = oeb.score(*(json.loads((EXAMPLE / f"{n}.json").read_text()) for n in ("pred", "gold", "schema")))
    assert result == json.loads(json.dumps(expected))
    assert "verdicts" not in result


def test_details_adds_verdict_objects(capsys, tmp_path) -> None:
    code, out, _ = run(
        capsys, "score", *files(tmp_path, {"a": "X"}, {"a": "x", "b": "1"}, {"type": "object"}), "--details"
    )
    verdicts = json.loads(out)["verdicts"]
    assert code == 0
    fields = ("address", "gold_raw", "pred_raw", "gold_canon", "pred_canon", "result")
    assert verdicts == [
        dict(zip(fields, ([["k", "a"]], "x", "X", "x", "x", "matched"), strict=True)),
        dict(zip(fields, ([["k", "b"]], "1", None, "1", None, "unfound"), strict=True)),
    ]


@pytest.mark.parametrize(
    ("flags", "accuracy"), [([], 1.0), (["--order-matters"], 0.0), (["--order-matters", "rows"], 0.0)]
)
def test_order_matters_bare_or_with_names(capsys, tmp_path, flags: list[str], accuracy: float) -> None:
    gold = {"rows": [{"a": "1"}, {"a": "2"}]}
    pred = {"rows": [{"a": "2"}, {"a": "1"}]}
    code, out, _ = run(capsys, "score", *files(tmp_path, pred, gold, ROWS), *flags)
    assert code == 0
    assert json.loads(out)["accuracy"] == accuracy


@pytest.mark.parametrize(
    ("pred", "schema", "says"),
    [
        ("{'a': 1}", {"type": "object"}, "--pred"),
        ("[1, 2]", {"type": "object"}, "JSON list"),
        ("null", {"type": "object"}, "JSON null"),
        ({"a": 1}, {}, "a schema is required"),
        ({"a": 1}, {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": RECURSIVE}, "recursive"),
        ({"a": 1}, {"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}}, "other.json#/x"),
        ({"a": 1}, {"type": "object"}, None),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_1(capsys, tmp_path, pred, schema, says) -> None:
    code, out, err = run(capsys, "score", *files(tmp_path, pred, {"a": 1}, schema))
    if says is None:
        assert code == 0
        return
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("oeb score: ")
    assert says in err
    assert "Traceback" not in err


def test_a_missing_file_is_named(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "score", "--pred", str(tmp_path / "nope.json"), "--gold", "x", "--schema", "y")
    assert code == 1
    assert "--pred" in err and "nope.json" in err and "no such file" in err


def test_a_missing_flag_is_a_usage_error(capsys) -> None:
    code, _, err = run(capsys, "score", "--pred", "p.json")
    assert code == 2
    assert "--gold" in err


def test_a_reader_that_stops_reading_ends_it_quietly(tmp_path) -> None:
    """`oeb score --details ... | head`: no traceback, exit 141 (128 + SIGPIPE)."""
    rows = [{"name": f"item {i}", "amount": i} for i in range(3000)]
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}
    argv = files(tmp_path, {"rows": rows}, {"rows": rows}, schema)
    process = subprocess.Popen([sys.executable, "-m", "oeb", "score", "--details", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(100)  # far less than its output (more than a pipe holds), then stop
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == BROKEN_PIPE, err
    assert err == ""


def test_an_argument_the_verb_does_not_take_is_refused_with_the_verbs_usage(capsys) -> None:
    code, _, err = run(capsys, "score", "--pred", "p.json", "--gold", "g.json", "--schema", "s.json", "extra.json")
    assert code == 2
    assert err.startswith("usage: oeb score ") and "--pred PRED" in err  # what the verb takes
    assert err.rstrip().endswith("oeb score: error: unrecognized arguments: extra.json")


def test_explain_shows_the_steps_and_whether_two_values_agree(capsys) -> None:
    code, out, _ = run(capsys, "explain", "$1,234.50", "1234.5")
    assert code == 0
    assert "canonical key: '1234.5'" in out
    assert out.strip().endswith("equal: both read as '1234.5'")
    code, out, _ = run(capsys, "explain", "Acme™", "acme tm")
    assert "different: 'acmeTM' != 'acmetm'" in out


@pytest.mark.parametrize(
    ("gold", "pred", "last"),
    [
        ("Acme", "Acme Inc", "(this pair would be misread)"),
        ("Pallet wrap", "null", "(this pair would be unfound)"),
        ("null", "LOT-1790", "(this pair would be fabricated)"),
        ("12", "", "(this pair would be unfound)"),
        ("null", "", "no verdict, as gold and prediction"),
    ],
)
def test_explain_names_the_verdict_a_pair_gets_as_the_scorer_gives_it(capsys, gold: str, pred: str, last: str) -> None:
    """The last line names the verdict of the pair as gold then prediction: a side stating nothing
    is unfound or fabricated (oeb view shows this text beside each error), as score() says."""
    code, out, _ = run(capsys, "explain", gold, pred)
    assert code == 0 and out.strip().splitlines()[-1].endswith(last)
    values = [None if v == "null" else v for v in (gold, pred)]
    schema = {"type": "object", "properties": {"a": {}}}
    verdicts = score({"a": values[1]}, {"a": values[0]}, schema, verdicts=True)["verdicts"]
    assert [v.result for v in verdicts] == ([] if "no verdict" in last else [last.split()[-1].rstrip(")")])


def test_explain_as_json_and_as_text(capsys) -> None:
    _, out, _ = run(capsys, "explain", "--json", "1e-05", '"0.00001"')  # a JSON number, then text
    report = json.loads(out)
    assert [v["key"] for v in report["values"]] == ["1e05", "1e-05"]
    assert report["equal"] is False
    _, out, _ = run(capsys, "explain", "--json", "--text", "12")
    assert json.loads(out)["values"][0]["value"] == "12"


def test_format_table_prints_one_line_per_verdict(capsys) -> None:
    paths = ["--pred", str(EXAMPLE / "pred.json"), "--gold", str(EXAMPLE / "gold.json")]
    code, out, _ = run(capsys, "score", *paths, "--schema", str(EXAMPLE / "schema.json"), "--format", "table")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 + 27  # the metrics, the header, one line per verdict
    assert lines[0].startswith("accuracy 62.96% (17 of 27 matched) · misread 1 · unfound 4")
    assert lines[1].split() == ["address", "gold", "prediction", "canonical", "keys", "verdict"]
    misread = next(line for line in lines if line.endswith("misread") and "lines[" in line)
    assert misread.split("  ")[0] == "lines[1].description"
    assert '"Hex nut M8"' in misread and '"Hex nut M6"' in misread and "hexnutm8 | hexnutm6" in misread
    unfound = next(line for line in lines if line.startswith("lines[2].amount"))
    assert unfound.split() == ["lines[2].amount", "20.0", "null", "20", "|", "–", "unfound"]
