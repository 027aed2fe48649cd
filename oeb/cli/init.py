"""`oeb init SYSTEM`: a complete run config on stdout, every option at its default (docs/running.md)."""

from __future__ import annotations

import argparse
import sys

from oeb.run.plan.config import PUBLIC_DATASET, init_text


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write a complete run config for a system",
        description=(
            "Print a complete YAML run config for SYSTEM: the dataset, the rows, the time budget, the "
            "spending budget, every option of the system at its default and the ray: block (address, actors, "
            "rate limit), with comments on how many documents are asked at once. Save it, edit it, and run it "
            "with oeb run --config."
        ),
    )
    parser.add_argument("system", help="a system name (oeb systems lists them) or an org/model id")
    parser.add_argument(
        "--dataset", default=PUBLIC_DATASET, metavar="URL", help=f"the dataset to write (default: {PUBLIC_DATASET})"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(init_text(args.system, args.dataset))
    return 0
