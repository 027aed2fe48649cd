"""`oeb adjudicate propose|accept|reject|check|diff|sample`: the adjudication file from the command line
(docs/adjudication.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from oeb.errors import AdjudicationError, UsageError

if TYPE_CHECKING:
    from oeb.dataset import Dataset
    from oeb.gold.entries import Adjudications, Entry


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb adjudicate` and its six verbs."""
    parser = subparsers.add_parser(
        "adjudicate",
        help="dispute, decide and measure the gold: the adjudication file",
        description=(
            "Work on an adjudication file (adjudications.yaml): propose entries from the gold audit, accept "
            "or reject them with a reason, check them against the dataset, see what they change in each "
            "system's score, and sample gold values to measure the gold's own error (docs/adjudication.md)."
        ),
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=type(parser))
    verbs.required = True

    propose = verbs.add_parser("propose", help="the gold audit's findings as proposed entries")
    propose.add_argument("runs", nargs="+", metavar="RUN", help="graded runs of one dataset, 3 or more")
    propose.add_argument("--min-agree", type=int, metavar="K", help="systems that must agree (default: a majority)")
    propose.add_argument("--out", required=True, metavar="FILE", help="the file to write or merge into")
    propose.set_defaults(run=_propose)

    for verb, help_text in (("accept", "accept entries"), ("reject", "reject entries")):
        decide = verbs.add_parser(verb, help=help_text + " (the file is edited in place, atomically)")
        decide.add_argument(
            "file", metavar="FILE", help="the adjudication file (local, s3:// or hf:// through a commit)"
        )
        decide.add_argument("ids", nargs="+", metavar="ID", help="the entries' ids")
        decide.add_argument("--by", required=True, metavar="NAME", help="who decides")
        decide.add_argument("--reason", metavar="TEXT", required=verb == "reject", help="why")
        if verb == "accept":
            decide.add_argument(
                "--value",
                metavar="JSON",
                help="a verify entry's correction, as JSON (null: the page states no value there)",
            )
        decide.set_defaults(run=_decide, status="accepted" if verb == "accept" else "rejected")

    check = verbs.add_parser("check", help="every entry against the dataset; one line per problem, exit 2")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--dataset", metavar="D", help="the dataset (default: the one the file names)")
    check.set_defaults(run=_check)

    diff = verbs.add_parser("diff", help="each system's score before and after the file")
    diff.add_argument("runs", nargs="+", metavar="RUN", help="graded runs of one dataset")
    diff.add_argument("--adjudications", required=True, metavar="FILE", help="the adjudication file")
    diff.add_argument("--format", choices=("text", "md", "json"), default="text")
    diff.set_defaults(run=_diff)

    sample = verbs.add_parser("sample", help="a seeded random sample of gold values as verify entries")
    sample.add_argument("dataset", metavar="DATASET", help="the dataset (local, s3:// or hf://...@commit)")
    sample.add_argument("--n", type=int, required=True, metavar="N", help="how many gold values")
    sample.add_argument("--seed", type=int, default=0, metavar="S", help="the random seed (default 0)")
    sample.add_argument("--by", choices=("suite",), help="allocate the sample to suites by their gold values")
    sample.add_argument("--out", required=True, metavar="FILE", help="the file to write or merge into")
    sample.set_defaults(run=_sample)


def _header(adjudications: Adjudications, dataset: Dataset) -> Adjudications:
    """A new file names the dataset and commit; an existing one must name the same."""
    import dataclasses

    from oeb.gold.check import commit_problem

    problem = commit_problem(adjudications, dataset)
    if problem:
        raise AdjudicationError(problem)
    if adjudications.dataset is None:
        return dataclasses.replace(adjudications, dataset=dataset.identity, commit=dataset.commit)
    return adjudications


def _located(found: list[Entry], dataset: Dataset) -> list[Entry]:
    """The entries with evidence: where each value stands on its document's PDF (oeb.view.evidence)."""
    from oeb.view.evidence import located

    wanted = {entry.doc_id for entry in found}
    golds = {row.doc_id: gold for row, gold in dataset.golds([r for r in dataset.rows if r.doc_id in wanted])}
    return located(found, dataset, golds)


def _propose(args: argparse.Namespace) -> int:
    from oeb.gold import propose
    from oeb.publish.adjudications import read_file, write_file
    from oeb.report import audit, load_runs

    runs = load_runs(args.runs)
    min_agree = args.min_agree or audit.default_min_agree(len(runs))
    if min_agree < 2 or min_agree > len(runs):
        raise UsageError(f"--min-agree {min_agree}: give 2 to {len(runs)} (the runs given)")
    dataset = audit.dataset_of(runs, None)
    findings = audit.audit(runs, dataset, min_agree)
    proposed = _located(propose.entries_of(findings), dataset)
    read, at = read_file(args.out, missing_ok=True)
    merged, added, refreshed = propose.merge(_header(read, dataset), proposed)
    write_file(merged, args.out, f"oeb adjudicate propose: {added} new proposals", at)
    print(
        f"oeb adjudicate: {added} new and {refreshed} refreshed proposals from {len(findings)} findings "
        f"(agreement {min_agree} of {len(runs)}) in {args.out}; decide them with oeb adjudicate accept|reject "
        "or oeb view --review",
        file=sys.stderr,
    )
    _relaid(read)
    return 0


def _decide(args: argparse.Namespace) -> int:
    from oeb.gold import entries
    from oeb.publish.adjudications import read_file, write_file

    current, at = read_file(args.file)
    unknown = entries.ids_unknown(current, args.ids)
    if unknown:
        raise AdjudicationError(f"{args.file}: no entry with id {unknown[0]!r}; nothing was changed")
    value: Any = entries.MISSING
    if getattr(args, "value", None) is not None:
        try:
            value = json.loads(args.value)
        except json.JSONDecodeError as error:
            raise UsageError(f"--value {args.value!r} is not JSON ({error.msg}); quote text as '\"text\"'") from None
    decided = [entries.decide(current.by_id(i), args.status, args.by, args.reason, value) for i in args.ids]
    updated = current.replaced(decided)
    updated.accepted  # noqa: B018 - refuses two accepted entries on one address before writing
    if current.dataset is not None and any(entry.effect is not None for entry in decided):
        from oeb.gold.check import decisions_refused

        decisions_refused(updated, decided, _dataset_for(current, None))  # never write what grading refuses
    write_file(updated, args.file, f"oeb adjudicate {args.verb}: {', '.join(args.ids)} by {args.by}", at)
    noun = "entry" if len(decided) == 1 else "entries"
    print(f"oeb adjudicate: {len(decided)} {noun} {args.status} in {args.file}", file=sys.stderr)
    _relaid(current)
    return 0


def _relaid(read: Adjudications) -> None:
    """Say so when the file was hand-edited: what oeb writes keeps the entries, not the comments."""
    from oeb.gold import entries

    if entries.relaid(read):
        print(
            f"oeb adjudicate: note: {read.url} is written in oeb's own layout; the comments, anchors (&name, "
            "*name) and flow lists of a hand-edited file are not kept, its entries are",
            file=sys.stderr,
        )


def _dataset_for(adjudications: Adjudications, given: str | None) -> Dataset:
    from oeb.dataset import open_dataset

    if given is not None:
        return open_dataset(given)
    if adjudications.dataset is None:
        raise UsageError(f"{adjudications.url} names no dataset; give it with --dataset D")
    commit = adjudications.commit
    return open_dataset(f"{adjudications.dataset}@{commit}" if commit else adjudications.dataset)


def _check(args: argparse.Namespace) -> int:
    from oeb.gold import check, entries

    adjudications = entries.load(args.file)
    dataset = _dataset_for(adjudications, args.dataset)
    problems = check.problems(adjudications, dataset)
    for problem in problems:
        print(problem)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        print(f"oeb adjudicate check: {len(problems)} {noun} in {args.file}; fix them", file=sys.stderr)
        return 2
    decided = sum(1 for entry in adjudications.entries if entry.status != "proposed")
    changing = len(adjudications.accepted)
    print(
        f"oeb adjudicate check: {len(adjudications.entries)} entries ({decided} decided, {changing} changing "
        "grading), no problem",
        file=sys.stderr,
    )
    return 0


def _diff(args: argparse.Namespace) -> int:
    from oeb.gold import check, entries
    from oeb.report import audit, load_runs
    from oeb.report.gold_diff import diff, render

    runs = load_runs(args.runs)
    adjudications = entries.load(args.adjudications)
    check.checked(adjudications, audit.dataset_of(runs, None))
    sys.stdout.write(render(diff(runs, adjudications), args.format))
    return 0


def _sample(args: argparse.Namespace) -> int:
    from oeb.dataset import open_dataset
    from oeb.gold import sample
    from oeb.publish.adjudications import read_file, write_file

    dataset = open_dataset(args.dataset)
    values = sample.population(dataset)
    drawn = sample.draw(values, args.n, args.seed, args.by == "suite")
    read, at = read_file(args.out, missing_ok=True)
    existing = _header(read, dataset)
    known = {entry.id for entry in existing.entries}
    fresh = [entry for entry in sample.entries(drawn, args.seed, args.by == "suite") if entry.id not in known]
    fresh = _located(fresh, dataset)  # the review page opens each on the page its value stands on
    write_file(existing.replaced(fresh), args.out, f"oeb adjudicate sample: {len(fresh)} gold values to verify", at)
    print(
        f"oeb adjudicate: {len(fresh)} sampled gold values of {len(values)} as verify entries in {args.out} "
        f"({len(drawn) - len(fresh)} already there); check each with oeb view --review or oeb adjudicate accept",
        file=sys.stderr,
    )
    _relaid(read)
    return 0
