"""`oeb gold draft|sample|freeze`: a gold drafted from several systems' runs, checked by a person
(docs/own-documents.md). The review decisions are adjudication entries in the dataset's
adjudications.yaml, the file `oeb adjudicate` works on."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from oeb.errors import UsageError

if TYPE_CHECKING:
    from oeb.dataset import Dataset
    from oeb.gold.derivation import Draft


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

    sample = verbs.add_parser("sample", help="a random sample of drafted values for a person to check")
    sample.add_argument("dataset", metavar="DATASET", help="a drafted dataset (oeb gold draft)")
    sample.add_argument("--n", type=int, required=True, metavar="N", help="how many drafted values")
    sample.add_argument("--seed", type=int, default=0, metavar="S", help="the random seed (default 0)")
    sample.set_defaults(run=_sample)

    freeze = verbs.add_parser("freeze", help="write the decided review entries into the drafted gold")
    freeze.add_argument("dataset", metavar="DATASET", help="a drafted dataset (oeb gold draft)")
    freeze.set_defaults(run=_freeze)


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


def _drafted(url: str) -> tuple[Dataset, Draft]:
    from oeb.dataset import open_dataset
    from oeb.gold.derivation import read_draft

    dataset = open_dataset(url)
    draft = read_draft(dataset)
    if draft is None:
        raise UsageError(f"{url} is not a drafted dataset (no drafted.json); make one with oeb gold draft")
    return dataset, draft


def _sample(args: argparse.Namespace) -> int:
    """Drafted values drawn uniformly, as `verify` entries in DATASET/adjudications.yaml (the sample of
    `oeb adjudicate sample`, over the drafted values only)."""
    from oeb import storage
    from oeb.cli.adjudicate import _header
    from oeb.gold import entries, sample

    dataset, draft = _drafted(args.dataset)
    suites = {row.doc_id: row.suite for row in dataset.rows}
    values = [(suites[v.doc_id], v.doc_id, v.address, v.value) for v in draft.values if v.status == "drafted"]
    drawn = sample.draw(values, args.n, args.seed, by_suite=False)
    url = storage.join(dataset.location, entries.FILE_NAME)
    existing = _header(entries.load_or_empty(url), dataset)
    known = {entry.id for entry in existing.entries}
    fresh = [entry for entry in sample.entries(drawn, args.seed, by_suite=False) if entry.id not in known]
    entries.save(existing.replaced(fresh), url)
    print(
        f"{len(fresh)} of {len(values)} drafted values sampled as verify entries in {url} ({len(drawn) - len(fresh)} "
        "already there); check each on the page (oeb view --review) or with oeb adjudicate accept; the leaderboard "
        "then shows the draft's accuracy"
    )
    return 0


def _freeze(args: argparse.Namespace) -> int:
    from oeb import storage
    from oeb.dataset import open_dataset
    from oeb.gold import entries
    from oeb.gold.check import checked
    from oeb.gold.freeze import freeze, settled

    dataset, draft = _drafted(args.dataset)
    url = storage.join(dataset.location, entries.FILE_NAME)
    adjudications = checked(settled(entries.load_or_empty(url), dataset), dataset)  # sound before any write
    done = freeze(dataset, draft, adjudications)
    if adjudications.entries:
        entries.save(settled(adjudications, open_dataset(args.dataset)), url)  # the adds now held: replaces
    print(
        f"{args.dataset}: gold version {done.version}; {done.reviewed} values reviewed, {done.corrected} corrected, "
        f"{done.absent} absent; grade the runs again: oeb grade RUN --dataset {args.dataset}"
    )
    return 0
