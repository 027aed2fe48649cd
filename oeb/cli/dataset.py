"""`oeb dataset init`: a dataset without gold from PDFs and a schema (docs/own-documents.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb dataset` and its verb `init`."""
    parser = subparsers.add_parser(
        "dataset",
        help="make a dataset of your own documents (no gold needed)",
        description="Make a dataset in oeb's layout from your own PDFs and schema (docs/own-documents.md).",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=type(parser))
    verbs.required = True
    init = verbs.add_parser(
        "init",
        help="a gold-less dataset from PDF files or folders and a JSON Schema",
        description=(
            "Copy the PDFs (files, or folders searched recursively) and the schemas into a new dataset whose "
            "manifest has no gold yet: one row per readable PDF, its doc_id the file name without .pdf, made "
            "unique. Unreadable or encrypted PDFs are named and left out. Run systems over it, then draft the "
            "gold from their answers with `oeb gold draft`."
        ),
    )
    init.add_argument("pdfs", nargs="+", metavar="PDFS", help="PDF files or folders holding them")
    init.add_argument("--schema", required=True, metavar="SCHEMA.json", help="the JSON Schema of every document")
    init.add_argument(
        "--schema-for",
        action="append",
        default=[],
        metavar="GLOB=FILE",
        help="another schema for the PDFs whose path (relative to the folder given) matches GLOB (repeatable; "
        "the first match wins)",
    )
    init.add_argument("--out", required=True, metavar="DATASET", help="the new dataset: a folder, s3:// or hf://")
    init.set_defaults(run=_init)


def _init(args: argparse.Namespace) -> int:
    from oeb.cli._runs import log_to_stderr
    from oeb.gold.goldless import init_dataset

    log_to_stderr()  # each PDF left out is named as it is met, and again at the end
    made = init_dataset(args.pdfs, args.schema, args.schema_for, args.out)
    print(
        f"{made.url}: {len(made.written)} documents, no gold yet; next: oeb run --config ... --set dataset={made.url}"
    )
    if made.left_out:
        print(f"left out {len(made.left_out)} PDFs:", file=sys.stderr)
        for path, problem in made.left_out:
            print(f"  {path}: {problem}", file=sys.stderr)
    return 0
