"""`oeb gold draft|sample|freeze`: a gold drafted from several systems' runs, checked by a person
(docs/own-documents.md). The review decisions are adjudication entries in the dataset's
adjudications.yaml, the file `oeb adjudicate` works on."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb gold` and its verbs."""
    parser = subparsers.add_parser(
        "gold",
        help="draft a gold from several systems' runs, sample it, freeze the reviewed gold",
        description=(
            "Benchmark your own documents: draft the gold of a gold-less dataset from the agreement of several "
            "systems' runs, review what they disagree on (oeb view --review), measure the draft's accuracy on a "
            "random sample, and freeze the decisions into the gold (docs/own-documents.md)."
        ),
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=type(parser))
    verbs.required = True

    draft = verbs.add_parser("draft", help="a gold drafted from two or more runs of different systems")
    draft.add_argument("runs", nargs="+", metavar="RUN", help="runs of different systems over one gold-less dataset")
    draft.add_argument(
        "--min-agree", type=int, metavar="K", help="systems that must agree on a value (default: a majority)"
    )
    draft.add_argument("--out", required=True, metavar="DATASET", help="the new dataset: a folder or s3://")
    draft.set_defaults(run=_draft)


def _draft(args: argparse.Namespace) -> int:
    from oeb.gold.draft import draft

    made = draft(args.runs, args.min_agree, args.out)
    drafted = sum(1 for value in made.values if value.status == "drafted")
    undecided = sum(1 for value in made.values if value.status == "undecided")
    print(
        f"{made.url}: {drafted} values drafted ({made.k} of {made.n} systems agree), {undecided} undecided for "
        f"review (gold version {made.version}); grade each run: oeb grade RUN --dataset {made.url}"
    )
    return 0
