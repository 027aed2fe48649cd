"""The dataset card (`README.md`) and `results.json` published beside the run folders.

Both are made from the leaderboard of every run the destination holds (`oeb.report.leaderboard`), so
the card shows the same numbers `oeb report` prints for those folders. They hold nothing that changes
between two publishes of the same runs (no time of publishing), so publishing again is byte for byte
the same and adds nothing. Each row is keyed by its system setting (the system and its options): a
new run of a setting takes its row.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

import oeb
from oeb import storage
from oeb.report import Run
from oeb.report.adjudicated import lines
from oeb.report.tables import markdown, markdown_table

FORMAT = 1
"""The version of results.json's shape."""


def setting(run: Run) -> dict[str, Any]:
    """The identity of a run's row: its system and options (a brought folder: its folder's name)."""
    if run.brought:
        return {"brought": folder_name(run)}
    return {"system": run.settings.get("system"), "options": run.settings.get("options") or {}}


def setting_key(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)


def folder_name(run: Run) -> str:
    """The run folder's own name: where it is published, under the destination."""
    return run.url.rstrip("/").rsplit("/", 1)[-1]


def results(board: dict[str, Any], runs: list[Run]) -> dict[str, Any]:
    """results.json: the leaderboard's numbers, each row with its folder and setting (no local URL)."""
    by_url = {run.url: run for run in runs}
    rows = []
    for row in board["rows"]:
        run = by_url[row["url"]]
        kept = {key: value for key, value in row.items() if key != "url"}
        rows.append({"folder": folder_name(run), "setting": setting(run), **kept})
    return {
        "format": FORMAT,
        "oeb": oeb.__version__,
        **{key: value for key, value in board.items() if key != "rows"},
        "rows": rows,
    }


def _graded(row: dict[str, Any], key: str) -> str:
    """A value of the row's grading provenance (`oeb`, `graded_at`), "unrecorded" when it has none."""
    return str((row["provenance"] or {}).get(key, "unrecorded"))


NO_GOLD = (
    "- gold: none published (`oeb publish --no-gold`): verdicts.parquet's gold columns are empty, details/ is left "
    "out and failed documents' errors keep only their kind; the scores are whole\n"
)


def card(board: dict[str, Any], table: dict[str, Any], where: str, *, gold: bool = True) -> str:
    """README.md: YAML front matter as Hub dataset cards have, then the leaderboard, the dataset and
    its commit, and per row its folder, scorer digest and oeb version; `where` is the destination's URL
    (a local one is named relatively: the card is read from its own folder, wherever it is copied)."""
    front = {
        "pretty_name": f"oeb results on {board['dataset']}",
        "tags": ["oeb", "benchmark", "document-extraction", "evaluation"],
    }
    commit = board["dataset_commit"] or "none (not a Hub dataset)"
    base = "." if storage.is_local(where) else where.rstrip("/")  # no path of this machine in a published file
    scorers = ", ".join(f"`{digest}`" for digest in sorted({row["scorer"] or "unrecorded" for row in table["rows"]}))
    versions = ", ".join(sorted({_graded(row, "oeb") for row in table["rows"]}))
    folders = markdown_table(
        ["system", "run folder", "scorer", "oeb", "graded"],
        [
            [
                row["system"],
                f"`{row['folder']}`",
                f"`{(row['scorer'] or 'unrecorded')[:16]}`",
                _graded(row, "oeb"),
                _graded(row, "graded_at"),
            ]
            for row in table["rows"]
        ],
        numbers=set(),
    )
    first = table["rows"][0]["folder"]
    return (
        "---\n"
        + yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        + "---\n\n"
        + f"# oeb results on {board['dataset']}\n\n"
        + "Graded run folders of oeb, the benchmark harness for document-extraction systems: one folder per "
        "system setting, and their leaderboard.\n\n"
        f"- dataset: `{board['dataset']}`, commit `{commit}`, manifest `{board['manifest']}`, "
        f"{board['documents']} documents\n"
        f"- scorer digest: {scorers}\n"
        f"- oeb: {versions} (published by oeb {oeb.__version__})\n"
        f"- the numbers as JSON: `results.json`\n"
        + ("- adjudications: `adjudications.yaml` (docs/adjudication.md)\n" if "gold" in board else "")
        + ("" if gold else NO_GOLD)
        + "\n"
        + markdown(board)
        + "".join(f"\n{line}\n" for line in lines(board))
        + "\n## Run folders\n\n"
        + folders
        + "\n\n## Check a row\n\n"
        + "```sh\n"
        + f"oeb report {base}/{first}            # the leaderboard, from the published folder alone\n"
        + f"oeb reproduce {base}/{first}         # run it again on the same documents and test the difference\n"
        + "```\n"
    )
