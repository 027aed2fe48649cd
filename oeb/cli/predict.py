"""`oeb predict`: ask one system about one document and print the record (docs/systems/index.md).

The same rules as a run: the schema conventions, one time limit, retries, what is recorded and
what stops; a job vendor's job is submitted and collected in this one process. Two documented
differences from the reference: a non-positive `--timeout` is refused, and options keyed by a mix
of names are refused with a message that says so.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

from oeb import _json
from oeb.cli._output import load_json_object, print_json
from oeb.errors import InputFileError, UsageError
from oeb.systems import OptionError, Question, get, names, predict, question_schema

DEFAULT_TIMEOUT = 1800


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="ask one system about one document and print the record",
        description=(
            "Send one document and its schema to a system, under the same rules as a run (schema "
            "conventions, one time limit, retries), and print the record as JSON. Exits 1 when the "
            "record holds an error."
        ),
    )
    parser.add_argument("--system", required=True, help="a system name or an org/model id")
    parser.add_argument("--doc", required=True, type=Path, help="the document file (a PDF)")
    parser.add_argument("--schema", required=True, help="the JSON Schema file")
    parser.add_argument(
        "--options",
        default="",
        metavar="JSON",
        help='the system\'s options, as inline JSON (\'{"mode": "accurate"}\') or a JSON file',
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"seconds the document may take, retries included (default: {DEFAULT_TIMEOUT})",
    )
    parser.set_defaults(run=run)


def parse_options(text: str, system: str) -> dict[str, Any]:
    """Options given bare (`{"mode": "accurate"}`) or under the system's name (`{"datalab": {...}}`)."""
    if not text.strip():
        return {}
    if text.lstrip().startswith("{"):
        try:
            options: dict[str, Any] = _json.loads(text)
        except ValueError as error:
            raise OptionError(f"--options is not JSON: {error}") from None
    else:
        options = load_json_object(text, "--options")
    if system in options:
        if len(options) > 1:
            others = ", ".join(sorted(k for k in options if k != system))
            raise OptionError(
                f"--options names {system} and also {others}; give only {system}'s options, "
                f"bare or as '{{\"{system}\": {{...}}}}'"
            )
        if not isinstance(options[system], dict):
            raise OptionError(f"--options holds one object under the system's name: '{{\"{system}\": {{...}}}}'")
        return cast(dict[str, Any], options[system])
    foreign = sorted(k for k in options if "/" in k or k in names())
    if foreign:
        raise OptionError(
            f"--options are for {', '.join(foreign)}, but this command runs {system}; give {system}'s "
            'options bare, e.g. \'{"mode": "accurate"}\''
        )
    return options


def run(args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    adapter = get(args.system, parse_options(args.options, args.system))
    if not args.doc.is_file():
        what = "a folder" if args.doc.is_dir() else "not there"
        raise InputFileError(f"--doc: {args.doc} is {what}; a document file is expected")
    schema = load_json_object(str(args.schema), "--schema")
    question = Question(args.doc.resolve(), question_schema(schema))
    record = predict(adapter, question, timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout)
    print_json(record)
    return 1 if record["error"] else 0
