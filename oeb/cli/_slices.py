"""What `oeb report`, `oeb compare` and `oeb view` share about document traits: the flags (`--bucket`,
`--min-docs`, `--dataset`, `--config`, `--mix`, `--mix-from`), the traits of the runs' dataset, the mix
read from its file, and the output in each format (docs/slices.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from oeb.errors import UsageError

if TYPE_CHECKING:
    from oeb.report.mix import Mix
    from oeb.report.runs import Run
    from oeb.report.slice_tables import Block
    from oeb.traits import Traits

DEFAULT_MIX_TRAITS = ("pages", "text_layer")
"""The traits `--mix-from` stratifies by when no `--by TRAIT` says which."""


def add_trait_flags(parser: argparse.ArgumentParser, *, mix: bool = True, dataset_help: str | None = None) -> None:
    """The flags of slicing by traits (and with `mix`, of a score for one's own mix); `dataset_help`
    says what --dataset is for a command that reads more of the dataset than its traits."""
    parser.add_argument(
        "--bucket",
        action="append",
        default=[],
        metavar="TRAIT=E1,E2,...",
        help="bucket edges of a counted trait (pages, gold_values, array_items, schema_depth), inclusive upper "
        "bounds, e.g. pages=1,3,10 gives 1, 2-3, 4-10, 11+ (repeatable)",
    )
    parser.add_argument(
        "--min-docs",
        type=int,
        default=10,
        metavar="N",
        help="a slice of fewer documents is shown but marked and never ranked (default 10)",
    )
    parser.add_argument(
        "--dataset",
        metavar="D",
        help=dataset_help
        or "the dataset the runs were graded against, for folders that do not name it (traits read its PDFs)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="a config whose slices: block sets bucket edges (slices: {buckets: {pages: [1, 3, 10]}})",
    )
    if mix:
        parser.add_argument(
            "--mix",
            metavar="MIX.yaml",
            help="score each system at this mix of trait values (e.g. {text_layer: {scanned: 0.7, digital: 0.3}})",
        )
        parser.add_argument(
            "--mix-from",
            metavar="DATASET",
            help="score each system at the mix of this dataset's documents (gold not needed), by the --by traits "
            f"or else {' and '.join(DEFAULT_MIX_TRAITS)}",
        )


def configured(path: str | None) -> dict[str, Any]:
    """The `slices:` block of a config: {buckets: {TRAIT: [edges]}}; {} without --config."""
    if path is None:
        return {}
    from oeb.run.plan.config import read_tree

    block = read_tree(path).get("slices") or {}
    if not isinstance(block, dict) or not set(block) <= {"buckets"} or not isinstance(block.get("buckets", {}), dict):
        raise UsageError(
            f"{path}: slices: holds buckets: {{TRAIT: [E1, E2, ...]}}, e.g. buckets: {{pages: [1, 3, 10]}}"
        )
    buckets: dict[str, Any] = block.get("buckets") or {}
    for trait, edges in buckets.items():
        if not isinstance(edges, list):
            raise UsageError(f"{path}: slices.buckets.{trait} must be a list of edges, e.g. [1, 3, 10]")
    return buckets


def traits_of(runs: Sequence[Run], args: argparse.Namespace, command: str) -> Traits:
    """The traits of the documents of the runs' dataset (cached), each damaged PDF named on stderr."""
    from oeb.report.audit import dataset_of
    from oeb.traits import document_traits, parse_buckets

    if args.min_docs < 1:
        raise UsageError(f"--min-docs {args.min_docs}: give a positive number of documents")
    edges = parse_buckets(args.bucket, configured(args.config))
    traits = document_traits(dataset_of(runs, args.dataset), edges)
    for line in traits.warnings():
        print(f"oeb {command}: warning: {line}", file=sys.stderr)
    return traits


def read_mix(args: argparse.Namespace, traits: Traits, by: Sequence[str]) -> Mix | None:
    """The mix of `--mix FILE` or `--mix-from DATASET`, None without either."""
    from oeb.report.mix import mix_from, parse_mix

    if args.mix and args.mix_from:
        raise UsageError("give --mix or --mix-from, not both")
    if args.mix:
        import yaml

        from oeb import storage
        from oeb._yaml import load_yaml
        from oeb.errors import StorageError

        try:
            tree = load_yaml(storage.read_text(args.mix))
        except StorageError as error:
            raise UsageError(f"--mix {args.mix}: {error}") from None
        except yaml.YAMLError as error:
            raise UsageError(f"--mix {args.mix} is not YAML: {' '.join(str(error).split())}") from None
        return parse_mix(tree, traits, f"--mix {args.mix}")
    if args.mix_from:
        from oeb.dataset import open_dataset
        from oeb.traits import document_traits

        other = document_traits(open_dataset(args.mix_from), traits.edges)
        for line in other.warnings():
            print(f"oeb report: warning: --mix-from {args.mix_from}: {line}", file=sys.stderr)
        names = list(by) or list(DEFAULT_MIX_TRAITS)
        for trait in names:
            traits.check(trait)
        return mix_from(other, names)
    return None


def rendered(
    blocks: list[Block],
    form: str,
    title: str,
    answer: Any,
    to_file: bool,
    text: Callable[[list[Any], bool], str | None],
) -> str | None:
    """The blocks as `form` (text: the rich tables given to `text`, the verb's printer: None when it
    printed them, or plain text for a file), json: `answer`."""
    from rich.console import Console

    from oeb.cli._runs import OUT_WIDTH, out_width
    from oeb.report.slice_tables import html_blocks, markdown_blocks, rich_blocks

    if form == "json":
        return json.dumps(answer, indent=2, ensure_ascii=False) + "\n"
    if form == "md":
        return f"# {title}\n\n" + markdown_blocks(blocks)
    if form == "html":
        return html_blocks(title, blocks)
    return text(rich_blocks(blocks, OUT_WIDTH if to_file else Console(width=out_width(sys.stdout)).width), to_file)


def partial_line(result: dict[str, Any], command: str) -> None:
    """One line on stderr naming the mix's strata the benchmark holds no documents for."""
    mix = result["mix"]
    if mix["partial"]:
        print(
            f"oeb {command}: the benchmark holds no documents for {', '.join(mix['missing'])}; the mix score is "
            f"partial, over {100 * mix['covered_share']:.1f}% of the mix",
            file=sys.stderr,
        )
