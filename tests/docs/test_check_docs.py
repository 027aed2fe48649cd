"""`make check-docs` (scripts/check_docs.py): the figures pages name only options and inputs their
benchmark scripts have, no page names a path of one machine, and a page that does fails the check,
naming it."""

from __future__ import annotations

from pathlib import Path

import check_docs  # scripts/ is on pytest's pythonpath
import pytest


def test_the_figures_pages_name_existing_options_and_inputs(capsys) -> None:
    assert check_docs.main([]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("written", "says"),
    [
        (
            'make bench-scorer ARGS="--reference PY --frsh --markdown"',
            "--frsh is not an option of scripts/bench_scorer.py",
        ),
        ("`uv run python scripts/bench_scorer.py --only codes-3000 codes-9000`", "codes-9000 is not an input"),
        ('make bench-scale SCALE_FLAGS="--nodez 2"', "--nodez is not an option of scripts/bench_scale.py"),
        ("`scripts/bench_fixed_costs.py --only grading`", "--only grading is not a choice"),
        ("a 9,000-row table: `sanctions-9000` took 0.4 s", "`sanctions-9000` is not an input"),
        ("`scripts/bench_gone.py --fast`", "scripts/bench_gone.py does not exist"),
    ],
)
def test_a_page_naming_what_a_script_lacks_fails_naming_it(capsys, tmp_path: Path, written: str, says: str) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# Figures\n\nMeasured with {written} on a quiet machine.\n")
    assert check_docs.main([str(page)]) == 1
    err = capsys.readouterr().err
    assert f"page.md:3: {says}" in err, err


@pytest.mark.parametrize(
    "written",
    [
        "`uv venv /home/alice/ref/.venv`",
        '`make bench-scorer ARGS="--reference /work/ref/.venv/bin/python"`',
        "the interpreter at /Users/bob/.pyenv/versions/3.12.1/bin/python",
        "`oeb run --out /root/runs`",
        r"`oeb grade C:\Users\carol\runs\mock`",
    ],
)
def test_a_page_naming_a_path_of_one_machine_fails_naming_it(capsys, tmp_path: Path, written: str) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# Figures\n\nMeasured with {written} on a quiet machine.\n")
    assert check_docs.main([str(page)]) == 1
    err = capsys.readouterr().err
    assert "page.md:3: " in err and "is a path of one machine" in err, err


def test_placeholders_temporary_folders_and_urls_are_not_paths_of_one_machine(capsys, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "`oeb audit --dataset /data/oebdata`, `--keep /tmp/scale`, `../ref/.venv/bin/python`, `~/.cache/oeb`,\n"
        '<https://example.com/home/x>, `s3://bucket/work/runs`, `$HOME/work`, `-v "$PWD:/data"`\n'
    )
    assert check_docs.main([str(page)]) == 0, capsys.readouterr().err


def test_the_examples_check_runs_commands_and_python_and_names_what_fails(capsys, tmp_path: Path) -> None:
    """A page's commands and Python run in a scratch folder (no run of the sample is made when no
    command names runs/); a failing one is named with its exit and last line, skips have reasons."""
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\n"
        "oeb score --pred pred.json --gold gold.json \\\n    --schema schema.json --format table   # works\n"
        "oeb explain 'Acme™'\n"
        "oeb score --pred nothing.json --gold gold.json --schema schema.json\n"
        "oeb run --config configs/reducto.yaml --out runs/\n"
        "oeb view RUN [--port 8765]\n"
        "```\n\n"
        "<!-- check-docs: skip needs a quiet machine -->\n```sh\noeb score --pred nothing.json\n```\n\n"
        "```python\nimport oeb\nassert oeb.score(prediction, gold, schema)['total'] == 27\n```\n\n"
        "```python\nraise ValueError('broken example')\n```\n"
    )
    assert check_docs.main(["--examples", "--verbose", str(page)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{page}:5: oeb score --pred nothing.json --gold gold.json --schema schema.json: exit 1: oeb score: "
        "--pred nothing.json: no such file; check the path",
        f"{page}:21: raise ValueError('broken example'): ValueError: broken example",
    ]
    assert "(needs REDUCTO_API_KEY (reducto))" in captured.out and "(needs a quiet machine)" in captured.out
    assert "oeb view RUN '[--port' '8765]' (a synopsis with placeholders (RUN '[--port'))" in captured.out
    assert "5 examples ran (2 failed), 3 skipped with a reason" in captured.out
