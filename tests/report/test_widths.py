"""The leaderboard at 80, 120 and 160 columns: every figure shown whole, each system's headline and
CI always there, the columns left out named in one line, `--wide` showing them all."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from oeb.cli import main
from oeb.report import leaderboard, load_runs, rich_tables
from oeb.report.tables import _cells, _columns


@pytest.fixture
def board(make_run) -> dict:
    return leaderboard(load_runs([make_run("perfect"), make_run("sloppy")]))


def _render(board: dict, width: int | None) -> str:
    console = Console(file=io.StringIO(), width=width or 400, record=True, color_system=None)
    for renderable in rich_tables(board, width):
        console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120, 160])
def test_every_figure_shown_is_whole_at_any_width(board, width: int) -> None:
    text = _render(board, width)
    assert all(len(line) <= width for line in text.splitlines()) and "…" not in text
    table_rows = [line for line in text.splitlines() if line.startswith("│")]
    for row in board["rows"]:
        cells = dict(zip(_columns(board), _cells(row, board, "\n"), strict=True))
        line = next(line for line in table_rows if "mock" in line and cells["headline"] in line)
        shown = [cell.strip() for cell in line.split("│")]
        assert cells["headline"] in shown and cells["accuracy 95% CI"] in shown
        whole = {value.split("\n")[0] for column, value in cells.items() if column != "system"}
        assert set(shown[2:-1]) <= whole  # every figure shown is a whole one
    dropped = [line for line in text.splitlines() if line.startswith("not shown at")]
    if width < 160:
        assert len(dropped) == 1 and dropped[0].startswith(f"not shown at {width} columns: ")
        assert "--wide shows every column" in text.split("not shown at")[1] and "inv. field" in dropped[0]
        assert "inv. field" not in text.split("not shown at")[0]
    else:
        assert dropped == []
    assert "headline" in text and "accuracy" in text


def test_wide_shows_every_column_and_a_file_gets_them_all(make_run, tmp_path, capsys) -> None:
    urls = [make_run("perfect"), make_run("sloppy")]
    assert main(["report", *urls, "--wide"]) == 0  # stdout is no terminal here: 240 columns, all shown
    out = capsys.readouterr().out
    assert "inv. field" in out and "not shown" not in out
    text = _render(leaderboard(load_runs(urls)), None)
    assert all(word in text for word in ("misread", "inv. field", "latency", "cost/doc"))


def test_a_pipe_gets_the_width_columns_names(make_run, capsys, monkeypatch) -> None:
    urls = [make_run("perfect"), make_run("sloppy")]
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", *urls]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80 and "not shown at 80 columns" in out
    monkeypatch.delenv("COLUMNS")
    assert main(["report", *urls]) == 0  # no COLUMNS: a pipe gets every column
    assert "not shown" not in capsys.readouterr().out


@pytest.mark.parametrize("width", [60, 80])
def test_fields_per_run_keep_header_words_and_figures_whole(make_run, capsys, monkeypatch, width: int) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["report", make_run("sloppy"), "--by", "field"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= width and "…" not in out
    header = " ".join(line for line in lines if line.startswith("┃"))
    for word in ("field", "matched", "misread", "unfound", "accuracy"):
        assert f" {word} " in header  # a header word is never cut across lines
    assert "not shown at" in out and "--wide or --format md shows" in " ".join(out.split())
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", make_run("sloppy"), "--by", "field", "--wide"]) == 0
    assert "documents" in capsys.readouterr().out
