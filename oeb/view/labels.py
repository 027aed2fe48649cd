"""Short, stable names for the runs in `oeb view`'s URLs.

`oeb report` labels a run by its system and the options that tell it apart from the other runs
(`mock (seed=1, misread=0.15, unfound=0.05)`): exact, but long in a URL and in a table heading. In
the view a run is named by its system alone when no other open run has that system, else by the
fewest of those options that tell it apart (`mock (seed=1)`), else by its folder's name. The
full label stays in the tooltip, and `run=` also takes the full label or the folder's name.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from oeb.report.runs import Run

_LONGEST = 40
"""A short name longer than this gives way to the folder's name."""


def folder_name(run: Run) -> str:
    return run.url.rstrip("/").rsplit("/", 1)[-1]


def short_names(runs: Sequence[Run]) -> list[str]:
    """One short, distinct name per run (same order)."""
    names = []
    for run in runs:
        names.append(_short(run, runs))
    if len(set(names)) < len(names):  # two runs the options cannot tell apart (brought folders alike)
        names = [name if names.count(name) == 1 else folder_name(run) for name, run in zip(names, runs, strict=True)]
    return names


def _short(run: Run, runs: Sequence[Run]) -> str:
    if run.brought:
        return run.label
    system = str(run.settings.get("system", "?"))
    peers = [other for other in runs if other is not run and other.settings.get("system") == system]
    if not peers:
        return system
    options: dict[str, Any] = run.settings.get("options") or {}
    differing = [
        key for key in options if any((peer.settings.get("options") or {}).get(key) != options[key] for peer in peers)
    ]
    for size in range(1, len(differing) + 1):
        for keys in itertools.combinations(differing, size):
            if all(
                any((peer.settings.get("options") or {}).get(key) != options[key] for key in keys) for peer in peers
            ):
                name = f"{system} ({', '.join(f'{key}={json.dumps(options[key])}' for key in keys)})"
                return name if len(name) <= _LONGEST else folder_name(run)
    return folder_name(run)


def setting(run: Run) -> str:
    """The run's full setting for a tooltip: its label, system and every option, and its folder."""
    options = run.settings.get("options") or {}
    shown = ", ".join(f"{key}={json.dumps(value)}" for key, value in options.items())
    system = run.settings.get("system")
    return f"{run.label}: {system}({shown}) at {run.url}" if system else f"{run.label} at {run.url}"
