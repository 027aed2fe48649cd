"""`oeb systems [NAME]`: which systems exist, and one system's options and API key (docs/systems/index.md)."""

from __future__ import annotations

import argparse
import sys

from oeb.systems import adapter_class, names
from oeb.systems.llm import EXAMPLES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "systems",
        help="list the systems, or show one system's options and the key it needs",
        description=(
            "Without a name, list the systems oeb can run (shipped, offline and installed plugins) and "
            "example model ids. With a name, show its options with their defaults and the environment "
            "variable holding its API key."
        ),
    )
    parser.add_argument("system", nargs="?", help="a system name or an org/model id")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
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
    if cls.keys:
        for variable in cls.keys:
            stand_in = cls.stand_ins.get(variable)
            alternative = f" (or {stand_in})" if stand_in else ""
            print(f"{args.system} needs an API key: export {variable}=<key>{alternative}")
    else:
        print(f"{args.system} needs no API key.")
    return 0
