"""`oeb systems [NAME]`: which systems exist, and one system's options, kind, published price and API key
(docs/systems/index.md)."""

from __future__ import annotations

import argparse
import sys

from oeb.errors import OebError
from oeb.systems import Adapter, adapter_class, names
from oeb.systems.base import Price
from oeb.systems.llm import EXAMPLES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `oeb systems` (listing systems and showing one) to the command line."""
    parser = subparsers.add_parser(
        "systems",
        help="list the systems, or show one system's options and the key it needs",
        description=(
            "Without a name, list the systems oeb can run (shipped, offline and installed plugins) and "
            "example model ids. With a name, show its options with their defaults, whether it works in "
            "jobs (which survive a crash), its published price and the environment variable holding its API key."
        ),
    )
    parser.add_argument("system", nargs="?", help="a system name or an org/model id")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out `oeb systems` and return its exit code (docs/exit-codes.md)."""
    if args.system is None:
        for name in names():
            print(f"{name:<16}{adapter_class(name).description}")
        for model in EXAMPLES:
            print(model)
        print("\nThe model ids are examples: any OpenRouter org/model id works.", file=sys.stderr)
        return 0
    cls = adapter_class(args.system)
    print(cls.description)
    options = [o for o in cls.describe_options() if not ("/" in args.system and o.name == "model")]
    for option in options:
        choices = f" (choices: {', '.join(map(str, option.choices))})" if option.choices else ""
        print(f"{option.name:<19} {option.default!r:<29} {option.help}{choices}".rstrip())
    if not options:
        print(f"{args.system} has no options: it takes only the document and the schema.")
    print()
    print(_kind(cls))
    print(_price(cls))
    if cls.keys:
        for variable in cls.keys:
            stand_in = cls.stand_ins.get(variable)
            alternative = f" (or {stand_in})" if stand_in else ""
            print(f"{args.system} needs an API key: export {variable}=<key>{alternative}")
        for note in cls.key_notes:
            print(f"  {note}")
    else:
        print(f"{args.system} needs no API key.")
    return 0


def _kind(cls: type[Adapter]) -> str:
    """Whether a crash can make the user pay twice: what docs/crash-costs.md explains per system."""
    if cls.submits:
        return "kind: job vendor (submits a job, then polls it; a crash never buys a submitted job twice)"
    if cls.batching is not Adapter.batching:
        return (
            "kind: synchronous (one request per document; a call in flight at a crash is asked again), or with "
            "batch: true provider batches (a crash never sends a batch's documents twice)"
        )
    return "kind: synchronous (one request per document; a call in flight at a crash is asked again)"


def _price(cls: type[Adapter]) -> str:
    """The published price the plan estimates with, for the default options when they build."""
    try:
        price, which = cls.from_options({}).published_price(), "default options; "
    except OebError:  # a required option (replay's source, an LLM's model): the class's own figure
        price, which = cls.price, ""
    if price is None:
        return "published price: none per page or document (the plan's estimate says unknown)"
    return f"published price: {_amounts(price) or 'none'} ({which}source: {price.source or 'not given'})"


def _amounts(price: Price) -> str:
    parts = []
    if price.usd_per_page is not None:
        parts.append(f"${price.usd_per_page * 1000:g} per 1,000 pages")
    if price.usd_per_document is not None:
        parts.append(f"${price.usd_per_document:g} per document")
    if price.credits_per_page is not None:
        parts.append(f"{price.credits_per_page:g} credits per page")
    if price.credits_per_document is not None:
        parts.append(f"{price.credits_per_document:g} credits per document")
    return "; ".join(parts)
