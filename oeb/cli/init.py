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
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        dest="options",
        metavar="NAME=VALUE",
        help="set one of the system's options (the value read as YAML), repeatable; a required option such "
        "as replay's source must be given: oeb init replay --option source=runs/mock-.../predictions",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the config, or say in one line which options are wrong or missing and how to give them."""
    from oeb.run.plan._set import parse_assignment
    from oeb.systems import OptionError
    from oeb.systems._options import REQUIRED
    from oeb.systems.registry import adapter_class

    options = dict(parse_assignment(text, "--option", "mode=accurate") for text in args.options)
    try:
        text = init_text(args.system, args.dataset, options)
    except OptionError as error:
        needed = [
            f"--option {option.name}=VALUE"
            for option in adapter_class(args.system).describe_options()
            if option.default == REQUIRED and option.name not in options
        ]
        hint = f"; give {'them' if len(needed) > 1 else 'it'}: oeb init {args.system} {' '.join(needed)}"
        raise OptionError(f"{error}{hint if needed else ''}") from None
    sys.stdout.write(text)
    return 0
