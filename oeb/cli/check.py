"""`oeb check`: every dataset check of a run (manifest, document files, golds), with no system called."""

from __future__ import annotations

import argparse
import json
import sys

from oeb.dataset import DEFAULT_MANIFEST, SAMPLE_DATASET, check_dataset


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check a dataset: manifest, document files and gold files",
        description=(
            "Run every check a run makes on a dataset (manifest columns and rows, document files, gold "
            "files) without calling any system, and print a short JSON report."
        ),
    )
    parser.add_argument(
        "--dataset",
        metavar="URL",
        help="a folder, file://, s3://bucket/prefix or hf://datasets/<org>/<name>[@<revision>] "
        "(default: the sample dataset shipped with oeb)",
    )
    parser.add_argument(
        "--manifest",
        default=DEFAULT_MANIFEST,
        metavar="PATH",
        help=f"the manifest's path inside the dataset (default: {DEFAULT_MANIFEST})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    dataset = check_dataset(args.dataset or SAMPLE_DATASET, args.manifest)
    report = {
        "dataset": args.dataset or dataset.identity,
        "manifest": args.manifest,
        "rows": len(dataset.rows),
        "suites": dataset.suites(),
        **({"dataset_commit": dataset.commit} if dataset.commit else {}),
        **({"gold": None} if dataset.goldless else {}),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if dataset.goldless:
        print(
            f"oeb check: {report['dataset']} is a gold-less dataset: runs predict on it; draft its gold from two or "
            "more runs with oeb gold draft (docs/own-documents.md)",
            file=sys.stderr,
        )
    return 0
