"""The `oeb` command line: one module per verb, parsing and printing only.

Each verb module exposes `register(subparsers)`, which adds its parser and sets `run` (a function
taking the parsed arguments and returning an exit code). Errors from lower layers are `OebError`s
whose message is printed on one line; their class picks the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oeb import __version__, _sigterm
from oeb.errors import OebError
from oeb.run.cluster.session import TIMINGS_VARIABLE, timed, timing

VERBS = (
    "init",
    "run",
    "resume",
    "grade",
    "score",
    "explain",
    "check",
    "systems",
    "predict",
    "report",
    "compare",
    "audit",
    "adjudicate",
    "dataset",
    "gold",
    "publish",
    "reproduce",
    "view",
)


class _Parser(argparse.ArgumentParser):
    """argparse without prefix abbreviations (`--conf` is not `--config`); `verbs` holds the verbs'
    parsers on the top one."""

    verbs: dict[str, argparse.ArgumentParser]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.verbs = {}


def build_parser(verbs: Sequence[str] = VERBS) -> _Parser:
    """The command line with `verbs` (each verb's module is imported to register it)."""
    parser = _Parser(prog="oeb", description="Benchmark harness for document-extraction systems.")
    parser.add_argument("--version", action="version", version=f"oeb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for verb in verbs:
        importlib.import_module(f"oeb.cli.{verb}").register(subparsers)
    parser.verbs = dict(subparsers.choices)
    return parser


def _parse(arguments: Sequence[str]) -> argparse.Namespace:
    """The parsed command line. An argument the verb does not take is refused with the verb's own
    usage (argparse's would show only `oeb COMMAND ...`, which does not say what the verb takes)."""
    parser = build_parser(_needed(arguments))
    args, extra = parser.parse_known_args(arguments)
    if extra:
        parser.verbs[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _needed(argv: Sequence[str]) -> Sequence[str]:
    """The verbs to register: only the one asked for (each verb's module imports what it uses, and
    all of them together take seconds), none for `--version`, all to list them or to say an unknown
    verb is unknown."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first in VERBS:
        return (first,)
    return () if first is None and "--version" in argv and not {"-h", "--help"} & set(argv) else VERBS


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `oeb` command and return its exit code (an `OebError`'s class decides it)."""
    _time_since_start()
    _sigterm.install()
    with timed("command line"):
        arguments = sys.argv[1:] if argv is None else list(argv)
        args = _parse(arguments)
    try:
        code: int = args.run(args)
        return code
    except OebError as error:
        print(f"oeb {args.command}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        stop = _sigterm.stopped()
        print(f"oeb {args.command}: {stop}", file=sys.stderr)
        return stop.exit_code
    except BrokenPipeError:
        # Whoever read the output stopped reading (`oeb score ... | head`): stop quietly, as Unix tools
        # do; stdout goes nowhere, so the interpreter's last flush cannot raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


BROKEN_PIPE = 141
"""The exit code when the output's reader went away: 128 + SIGPIPE, what a shell reports for a Unix
tool that the signal stopped (docs/exit-codes.md)."""


def _time_since_start() -> None:
    """With `OEB_TIMINGS` set, the seconds from the process's start to here (the interpreter and
    the imports), as `oeb.run.cluster.session.timed` prints phases; Linux only."""
    if not os.environ.get(TIMINGS_VARIABLE):
        return
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    timing("start", uptime - ticks / os.sysconf("SC_CLK_TCK"), time.process_time())
