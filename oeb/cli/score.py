"""`oeb score`: one prediction against its gold and schema, printed as JSON."""

from __future__ import annotations

import argparse
import sys

from oeb.cli._output import load_json_object, print_json, result_json
from oeb.errors import UsageError
from oeb.scoring import score


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
    result = score(pred, gold, schema, order_matters=order_matters, verdicts=args.details or args.verdicts)
    print_json(result_json(result))
    return 0
