"""The `oeb` command line: one module per verb, parsing and printing only.

Each verb module exposes `register(subparsers)`, which adds its parser and sets `run` (a function
taking the parsed arguments and returning an exit code). Errors from lower layers are `OebError`s
whose message is printed on one line; their class picks the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from oeb import __version__
from oeb.errors import OebError

VERBS = ("init", "run", "resume", "grade", "score", "explain", "check", "systems", "predict", "report", "compare")


class _Parser(argparse.ArgumentParser):
    """argparse without prefix abbreviations (`--conf` is not `--config`)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="oeb", description="Benchmark harness for document-extraction systems.")
    parser.add_argument("--version", action="version", version=f"oeb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for verb in VERBS:
        importlib.import_module(f"oeb.cli.{verb}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except OebError as error:
        print(f"oeb {args.command}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"oeb {args.command}: interrupted", file=sys.stderr)
        return 130
