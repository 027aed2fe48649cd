"""`oeb report --by TRAIT`, `--by field --by TRAIT`, `--mix`, `--mix-from` and `oeb compare --by TRAIT`
over folders graded by `oeb grade` against the traits dataset, and their refusals of bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from traitdata import gold

from oeb import storage
from oeb.cli import main
from oeb.run.plan.config import check_tree, read_tree

EXAMPLE = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"


@pytest.fixture(scope="module")
def graded(trait_dataset, trait_docs, tmp_path_factory) -> list[str]:
    """`ours` reads the digital documents right and the others wrong; `theirs` the other way round."""
    root = tmp_path_factory.mktemp("graded")
    folders = []
    for name in ("ours", "theirs"):
        for number, (doc_id, (_, expected)) in enumerate(trait_docs.items()):
            right = (expected["text_layer"] == "digital") == (name == "ours")
            answer = gold(number) if right else {"number": "wrong"}
            storage.write_json(str(root / name / "predictions" / f"{doc_id}.json"), answer)
        assert main(["grade", str(root / name), "--dataset", trait_dataset, "--partial"]) == 0
        folders.append(str(root / name))
    return folders


def report(capsys, *arguments: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["report", *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_by_a_trait_as_json(graded, capsys) -> None:
    code, out, err = report(capsys, *graded, "--by", "text_layer", "--format", "json", "--min-docs", "2")
    assert code == 0
    assert err.count("warning: the PDF of broken cannot be read") == 1
    answer = json.loads(out)
    names = [item["name"] for item in answer["slices"]]
    assert names == ["text_layer=digital", "text_layer=mixed", "text_layer=scanned", "text_layer=unknown"]
    assert sorted(d for item in answer["slices"] for d in item["doc_ids"]) == sorted(
        ["de_1", "en_2", "fr_5", "de_12", "scan_1", "scan_3", "mixed_2", "broken"]
    )
    digital = answer["slices"][0]
    assert {row["system"]: row["score"] for row in digital["systems"]} == {"ours": 1.0, "theirs": 0.0}
    assert answer["leader"] == "ours"  # both 0.5 pooled: a tie keeps the order given, as the leaderboard
    assert {flip["name"] for flip in answer["flips"]} <= {"text_layer=digital", "text_layer=scanned"}


def test_text_md_and_html_list_flips_first(graded, capsys) -> None:
    for form in ("text", "md", "html"):
        code, out, _ = report(capsys, *graded, "--by", "pages", "--by", "language", "--format", form)
        assert code == 0
        assert out.index("flips by pages × language") < out.index("pages=1 · language=de")
        assert "fewer than 10 documents" in out
    assert "<script" not in out


def test_fields_by_a_trait(graded, capsys) -> None:
    code, out, _ = report(capsys, *graded, "--by", "field", "--by", "text_layer", "--format", "json")
    assert code == 0
    runs = json.loads(out)["runs"]
    digital = next(s for s in runs[0]["slices"] if s["name"] == "text_layer=digital")
    assert digital["documents"] == 4 and {row["path"] for row in digital["fields"]} >= {"number", "lines[].sku"}


def test_a_mix_file_and_a_mix_from_a_dataset(graded, trait_dataset, tmp_path, capsys) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text("text_layer: {scanned: 0.7, digital: 0.3}\n")
    code, out, err = report(capsys, *graded, "--mix", str(mix), "--format", "json")
    assert code == 0 and "partial" not in err
    answer = json.loads(out)
    strata = {s["name"]: (s["share"], s["documents"]) for s in answer["mix"]["strata"]}
    assert strata == {"text_layer=scanned": (0.7, 2), "text_layer=digital": (0.3, 4)}
    rows = {row["system"]: row for row in answer["systems"]}
    assert rows["ours"]["score"] == pytest.approx(0.3) and rows["theirs"]["score"] == pytest.approx(0.7)
    assert set(rows["ours"]) >= {"score", "ci", "usd_per_1k_pages", "latency_p95_s", "rank", "pooled_rank"}
    # another dataset without gold: its documents' traits give the shares
    other = tmp_path / "mine"
    shutil.copytree(trait_dataset, other)
    shutil.rmtree(other / "gold")
    for path in (other / "pdfs").iterdir():
        if path.stem not in ("scan_1", "de_1"):
            path.unlink()
    code, out, err = report(capsys, *graded, "--mix-from", str(other), "--by", "text_layer", "--format", "json")
    assert code == 0
    mix_strata = {s["name"]: s["share"] for s in json.loads(out)["mix"]["strata"]}
    assert mix_strata["text_layer=scanned"] == pytest.approx(1 / 8) and mix_strata["text_layer=unknown"] == 0.75


def test_a_partial_mix_is_said_in_one_line(graded, tmp_path, capsys) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text("strata:\n- {pages: '1', language: de, share: 0.5}\n- {pages: '4-10', language: de, share: 0.5}\n")
    code, out, err = report(capsys, *graded, "--mix", str(mix))
    assert code == 0 and "no documents for pages=4-10 · language=de; the mix score is partial" in err
    assert "(partial)" in out


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--by", "colour"], "no trait 'colour'; the traits are pages, text_layer, language, gold_values"),
        (["--by", "pages", "--bucket", "pages=3,1"], "strictly increasing"),
        (["--by", "system", "--by", "pages"], "--by system is the leaderboard alone"),
        (["--by", "pages", "--fail-under", "0.5"], "without --audit and --fail-under"),
        (["--mix", "MIX"], "the shares sum to 0.9, not 1"),
        (["--mix", "MIX", "--mix-from", "x"], "not both"),
        (["--by", "pages", "--min-docs", "0"], "--min-docs 0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(graded, tmp_path, capsys, arguments, said) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text("text_layer: {scanned: 0.5, digital: 0.4}\n")
    code, out, err = report(capsys, *graded, *[str(mix) if a == "MIX" else a for a in arguments])
    assert code == 2 and out == ""
    assert said in err and "Traceback" not in err
    assert [line for line in err.splitlines() if not line.startswith("oeb report: warning:")] == [
        line for line in err.splitlines() if said in line
    ]


def test_compare_by_a_trait(graded, capsys) -> None:
    capsys.readouterr()
    assert main(["compare", *graded, "--by", "text_layer", "--format", "json", "--min-docs", "1"]) == 0
    answer = json.loads(capsys.readouterr().out)
    digital = next(item for item in answer["slices"] if item["name"] == "text_layer=digital")
    # four documents, each a point worse: the interval is below 0 but p = 0.125, so compare's rule
    # (the interval off 0 and p < 0.05) says no difference, as the pooled comparison would
    assert (
        digital["documents"] == 4
        and digital["mean_diff"] == pytest.approx(-1.0)
        and digital["verdict"] == "no difference"
    )
    assert main(["compare", *graded, "--by", "pages"]) == 0
    assert "paired by pages: B - A" in capsys.readouterr().out


def test_the_config_sets_bucket_edges(graded, tmp_path, capsys) -> None:
    """A run config's slices: block (which oeb run accepts and leaves alone) sets the report's buckets."""
    tree = read_tree(str(EXAMPLE)) | {"slices": {"buckets": {"pages": [2, 4]}}}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(tree))
    check_tree(read_tree(str(config)), where=str(config))
    code, out, _ = report(capsys, *graded, "--by", "pages", "--config", str(config), "--format", "json")
    assert code == 0
    names = [item["name"] for item in json.loads(out)["slices"]]
    assert names == ["pages=1-2", "pages=3-4", "pages=5+", "pages=unknown"]
    config.write_text("slices:\n  buckets:\n    pages: [4, 2]\n")
    code, _, err = report(capsys, *graded, "--by", "pages", "--config", str(config))
    assert code == 2 and "slices.buckets.pages: bucket edges must be strictly increasing" in err
