"""Folders of run folders read as their runs, and one run per system setting (the newest).

`oeb report runs/` and `oeb report runs/*/` after a second `make bench` name a folder holding runs,
and two runs of one setting: a folder that is not itself a run is read as the graded runs under it
(local, `s3://`, `hf://`), and of several runs of one setting the newest is taken, with one line
naming the older ones, unless `all_runs` keeps each as its own row.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from oeb import storage
from oeb.errors import ReportError
from oeb.report.runs import Run, labelled, load_run, setting

log = logging.getLogger("oeb")

_SCORES = "field_matching/scores.jsonl"
_MARKS = ("settings.json", "predictions", _SCORES)
"""What makes a folder a run (graded or not) rather than a folder of runs."""
_NAMED = 3
"""How many older runs the line names before it counts the rest."""


def run_urls(url: str) -> list[str]:
    """The folder itself when it is a run (or nothing oeb knows: `load_run` says why), else each
    graded run folder under it, in name order; a published destination is such a folder too."""
    url = url.rstrip("/")
    if not storage.is_dir(url) or any(storage.exists(storage.join(url, mark)) for mark in _MARKS):
        return [url]
    fs, path = storage.filesystem(url)
    root = path.rstrip("/") + "/"

    # A run sits one or two levels down (runs/NAME, or a published destination's runs/NAME).
    def scores(depth: str) -> list[str]:
        return [str(hit) for hit in fs.glob(f"{root}{depth}/{_SCORES}")]

    found: set[str] = set()
    for depth in ("*", "*/*"):
        hits = storage.retried(url, "list", lambda: scores(depth))  # noqa: B023 - called at once
        found.update(hit.removeprefix(root).removesuffix("/" + _SCORES) for hit in hits)
    inner = sorted(name for name in found if not any(name.startswith(other + "/") for other in found))
    return [storage.join(url, name) for name in inner] or [url]


def _started(run: Run) -> str:
    """When the run started (settings.json), its name breaking ties and standing in for brought folders."""
    return f"{run.settings.get('started') or ''}\0{run.name}"


def newest(runs: list[Run]) -> tuple[list[Run], list[Run]]:
    """Of the runs of each system setting the newest (in first-seen order), and the older ones."""
    chosen: dict[str, Run] = {}
    for run in runs:
        key = setting(run)
        if key not in chosen or _started(run) > _started(chosen[key]):
            chosen[key] = run
    kept = [run for run in runs if chosen[setting(run)] is run]
    return kept, [run for run in runs if chosen[setting(run)] is not run]


def older_line(older: list[Run], kept: list[Run]) -> str:
    """The line naming the runs left out for a newer run of their setting, and the flag that keeps them."""
    by_setting = {setting(run): run for run in kept}
    names = [f"{run.name} (older than {by_setting[setting(run)].name})" for run in older[:_NAMED]]
    more = f" and {len(older) - _NAMED} more" if len(older) > _NAMED else ""
    return (
        f"took the newest run of each system setting, leaving out {', '.join(names)}{more}; "
        "--all-runs keeps every run as its own row"
    )


def load_folders(urls: list[str], *, all_runs: bool = False) -> list[Run]:
    """The graded runs these folders are or hold, labelled for one table: the newest of each setting
    (the older named in one `oeb` log line), or with `all_runs` every run, those sharing a setting told
    apart by their run's name."""
    seen: set[str] = set()
    loaded = []
    for url in urls:
        for found in run_urls(url):
            if found not in seen:
                seen.add(found)
                loaded.append(load_run(found))
    if not all_runs:
        kept, older = newest(loaded)
        if older:
            log.info(older_line(older, kept))
        return labelled(kept)
    runs = labelled(loaded, distinct=False)
    counts: dict[str, int] = {}
    for run in runs:
        counts[setting(run)] = counts.get(setting(run), 0) + 1
    return [replace(run, label=f"{run.label} · {run.name}") if counts[setting(run)] > 1 else run for run in runs]


def load_one(url: str, role: str) -> Run:
    """The one run `url` is or holds (of one setting run several times, the newest, the older named
    in one `oeb` log line); a one-line `ReportError` when it holds runs of several settings."""
    kept, older = newest([load_run(found) for found in run_urls(url)])
    if len(kept) > 1:
        names = ", ".join(run.name for run in kept[:_NAMED]) + (" ..." if len(kept) > _NAMED else "")
        raise ReportError(f"{role} {url} holds runs of {len(kept)} system settings ({names}); give one run folder")
    if older:
        log.info(older_line(older, kept))
    return kept[0]
