"""`oeb score`: one prediction against its gold and schema, printed as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from oeb.cli._output import load_json_object, print_json, result_json
from oeb.errors import UsageError
from oeb.scoring import RESULTS, Verdict, score, show_address


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `oeb score` (scoring one prediction against its gold) to the command line."""
    parser = subparsers.add_parser(
        "score",
        help="score one prediction against its gold (field matching)",
        description="Score one prediction file against its gold file under the document's JSON Schema and "
        "print the metrics as JSON; --details adds one verdict per address.",
    )
    parser.add_argument("--pred", required=True, help="the prediction: a JSON file holding an object")
    gold = parser.add_mutually_exclusive_group(required=True)
    gold.add_argument("--gold", help="the gold extraction: a JSON file holding an object")
    gold.add_argument("--gt", dest="gold", help=argparse.SUPPRESS)
    parser.add_argument("--schema", required=True, help="the JSON Schema the prediction was made against")
    parser.add_argument("--details", action="store_true", help="add every verdict (address, values, keys, result)")
    parser.add_argument(
        "--format",
        choices=("json", "table"),
        default="json",
        help="json (default): the result as the reference writes it; table: the metrics on one line, then "
        "one line per verdict (address, gold, prediction, canonical keys, verdict); implies --details",
    )
    parser.add_argument("--verdicts", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--order-matters",
        nargs="*",
        metavar="ARRAY",
        help="compare these arrays by position (e.g. rows, invoice.lines, rows[*].tags); bare: every array",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out `oeb score` and return its exit code (docs/exit-codes.md)."""
    if "--gt" in sys.argv[1:]:
        print("oeb score: --gt is deprecated; use --gold", file=sys.stderr)
    if args.verdicts:
        if args.details:
            raise UsageError("--verdicts is the deprecated name of --details; give only --details")
        print("oeb score: --verdicts is deprecated; use --details", file=sys.stderr)
    pred = load_json_object(args.pred, "--pred")
    gold = load_json_object(args.gold, "--gold")
    schema = load_json_object(args.schema, "--schema")
    order_matters: list[str] | bool = [] if args.order_matters is None else (args.order_matters or True)
    verdicts = args.details or args.verdicts or args.format == "table"
    result = score(pred, gold, schema, order_matters=order_matters, verdicts=verdicts)
    if args.format == "table":
        sys.stdout.write(verdict_table(result))
    else:
        print_json(result_json(result))
    return 0


_PADDED = 32
"""A column is padded to its widest cell up to this width; a longer value just runs on."""


def _value(value: Any) -> str:
    """A gold or predicted value as JSON (`"USD"`, `2`, `null`): a string tells apart from a number."""
    return json.dumps(value, ensure_ascii=False)


def _keys(verdict: Verdict) -> str:
    """The canonical keys compared: one when both agree, `gold | prediction` when not, `–` for none."""
    gold, pred = ("–" if key is None else str(key) for key in (verdict.gold_canon, verdict.pred_canon))
    return gold if gold == pred else f"{gold} | {pred}"


def verdict_table(result: dict[str, Any]) -> str:
    """The metrics on one line, then one aligned line per verdict in reading order."""
    counts = " · ".join(f"{kind} {result[kind]}" for kind in RESULTS[1:])
    head = f"accuracy {100 * result['accuracy']:.2f}% ({result['matched']} of {result['total']} matched) · {counts}\n"
    rows = [("address", "gold", "prediction", "canonical keys", "verdict")]
    rows += [
        (show_address(v.address), _value(v.gold_raw), _value(v.pred_raw), _keys(v), v.result)
        for v in result["verdicts"]
    ]
    widths = [min(_PADDED, max(len(row[i]) for row in rows)) for i in range(4)]
    lines = [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[4]]) for row in rows
    ]
    return head + "\n".join(line.rstrip() for line in lines) + "\n"
