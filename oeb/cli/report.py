"""`oeb report RUN [RUN ...]`: the leaderboard over graded run folders, as a table, Markdown, JSON or HTML,
and the CI gate `--fail-under`."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from rich.console import Console

from oeb import storage
from oeb.cli._runs import OUT_WIDTH, out_width
from oeb.cli._slices import add_trait_flags


def fraction(text: str) -> float:
    """A share between 0 and 1 given on the command line (0.85, not 85)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a share such as 0.85") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1; give a share such as 0.85 for 85%")
    return value


def output_flags(parser: argparse.ArgumentParser, formats: tuple[str, ...], default: str) -> None:
    """`--format` and `--out`, alike for report, compare and audit."""
    parser.add_argument("--format", choices=formats, default=default, help=f"{default} (default)")
    parser.add_argument("--out", metavar="FILE", help="write to this file (local or s3://) instead of stdout")


def add_runs(parser: argparse.ArgumentParser, nargs: str, what: str) -> None:
    """The RUN arguments (a graded folder, or a folder of them) and `--all-runs`, alike for report,
    audit and view."""
    parser.add_argument("runs", nargs=nargs, metavar="RUN", help=f"{what}, or a folder of them (local, s3:// or hf://)")
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="keep every run as its own row (default: of several runs of one system setting, the newest)",
    )


def emit(verb: str, text: str | None, out: str | None) -> None:
    """Write the output to `out` (saying so on stderr) or to stdout; None: it was printed already."""
    if out:
        storage.write_text(out, text or "")
        print(f"oeb {verb}: wrote {out}", file=sys.stderr)
    elif text is not None:
        sys.stdout.write(text)


def adjudications_flag(parser: argparse.ArgumentParser) -> None:
    """`--adjudications URL`, alike for report, compare and view (docs/adjudication.md)."""
    parser.add_argument(
        "--adjudications",
        metavar="URL",
        help="grade under this adjudication file (any fsspec URL; default: the one the runs' config.yaml names "
        "as dataset.adjudications, else the dataset's own adjudications.yaml when it has one; none: the raw gold)",
    )


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb report` and its flags."""
    parser = subparsers.add_parser(
        "report",
        help="the leaderboard over graded run folders (local, s3:// or hf://)",
        description=(
            "One row per system setting, best headline first, and the accuracy per suite. Runs of different "
            "datasets, manifests or document sets are refused, and so are runs graded by different scorers "
            "unless --mixed-scorers. A graded folder of one's own predictions (oeb grade mine/ --dataset D) "
            "is a run labelled by its folder name."
        ),
    )
    add_runs(parser, "+", "a graded run folder")
    output_flags(parser, ("text", "md", "json", "html"), "text")
    parser.add_argument(
        "--details-limit",
        type=int,
        default=200,
        metavar="N",
        help="html: at most N verdicts per document and system embedded, errors first (0: all)",
    )
    parser.add_argument(
        "--by",
        action="append",
        metavar="BY",
        help="system: the leaderboard (default); field: per run, one row per schema field (array indices "
        "folded), the count of each verdict, accuracy and documents, worst first (text, md or json); a document "
        "trait (pages, text_layer, language, gold_values, array_items, schema_depth, suite or a manifest column): "
        "per slice and system the score with its 95%% CI and the paired differences, flips first; repeat to "
        "cross traits, or --by field --by TRAIT for the fields per slice (docs/slices.md)",
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help="text: every column, however wide the terminal (by default the columns that do not fit are "
        "left out and named; the system, headline and CI always stay)",
    )
    parser.add_argument(
        "--mixed-scorers",
        action="store_true",
        help="rank runs graded by different scorers together, with a scorer column",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="html: add the gold audit (oeb audit's findings, each opening its document and PDF); reads the dataset",
    )
    parser.add_argument(
        "--grounding",
        action="store_true",
        help="per run with citations: grounding precision, recall and F1 at box and page level, and the "
        "citations crossed with the verdicts (docs/grounding.md); reads the dataset's PDFs",
    )
    parser.add_argument(
        "--iou",
        default=None,
        metavar="X",
        help="--grounding: the overlap (intersection over union, in (0, 1]) a cited box needs with the "
        "value's printed place to be right (default 0.5)",
    )
    parser.add_argument(
        "--calibration",
        action="store_true",
        help="per run with confidences: auto-accept coverage at 95/99/99.5%% precision, straight-through "
        "rate, calibration error and AUROC, overall and per field (docs/grounding.md)",
    )
    parser.add_argument(
        "--fail-under",
        type=fraction,
        metavar="X",
        help="CI gate: after the report, exit 3 when a run's headline is below X (a share, e.g. 0.85)",
    )
    add_trait_flags(parser)
    adjudications_flag(parser)
    parser.set_defaults(run=run)


def _console(to_file: bool) -> Console:
    """A terminal gets tables as wide as it is, a pipe `out_width`'s; --out (recorded as plain text)
    gets OUT_WIDTH."""
    if not to_file:
        return Console(width=out_width(sys.stdout))
    return Console(file=io.StringIO(), record=True, width=OUT_WIDTH)


def _text(tables: list[Any], to_file: bool, console: Console | None = None) -> str | None:
    """The tables printed to the terminal (None), or as plain text for a file."""
    console = console or _console(to_file)
    for table in tables:
        console.print(table)
    return console.export_text() if to_file else None


def _by_field(runs: list[Any], board: dict[str, Any], form: str, to_file: bool, wide: bool) -> str | None:
    """`--by field`: per run in the leaderboard's order, its rows of `oeb.report.fields`."""
    from oeb.report.fields import field_rows, row_json, run_verdicts, suites_of
    from oeb.report.tables import fitted_table, markdown_table
    from oeb.scoring import RESULTS

    by_url = {run.url: run for run in runs}
    ordered = [by_url[row["url"]] for row in board["rows"]]
    fields = {run.url: field_rows(run_verdicts(run), suites=suites_of(run)) for run in ordered}
    gold = board["gold"]["line"] if "gold" in board else None  # the counts say which decisions they used
    if form == "json":
        answer = [
            {"label": run.label, "folder": run.url, "fields": [row_json(row) for row in fields[run.url]]}
            for run in ordered
        ]
        return json.dumps({"runs": answer, **({"gold": gold} if gold else {})}, indent=2, ensure_ascii=False) + "\n"
    header = ["field", *(kind.replace("invented_", "inv. ") for kind in RESULTS), "total", "accuracy", "documents"]

    def cells(row: Any) -> list[str]:
        accuracy = "–" if row.accuracy is None else f"{100 * row.accuracy:.2f}"
        return [row.path, *(str(row.counts[kind]) for kind in RESULTS), str(row.total), accuracy, str(row.documents)]

    if form == "md":
        blocks = [
            f"## {run.label}\n\n" + markdown_table(header, [cells(r) for r in fields[run.url]]) for run in ordered
        ]
        return "\n\n".join(blocks) + "\n" + (f"\n{gold}\n" if gold else "")
    console = _console(to_file)
    width = None if wide else console.width
    drop = ("documents", "total", "inv. field", "inv. item", "fabricated")  # the rarer kinds first
    title = "{} · verdicts per field, worst first" + (f" · {gold}" if gold else "")
    how = "--wide or --format md shows every column"
    tables = [
        fitted_table(title.format(run.label), header, list(map(cells, fields[run.url])), width, droppable=drop, how=how)
        for run in ordered
    ]
    if wide and tables:  # as wide as the widest table: the terminal wraps what it cannot show
        wide_open = console.options.update_width(10_000)
        console.width = max(console.width, *(console.measure(table, options=wide_open).maximum for table in tables))
    return _text(tables, to_file, console)


def _iou(text: str | None) -> float:
    """`--iou`, checked; not given: the grounding's default (`oeb.grounding.verdicts.IOU`)."""
    from oeb.errors import UsageError

    if text is None:
        from oeb.grounding.verdicts import IOU

        return IOU
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise UsageError(f"--iou {text}: give an overlap above 0 and at most 1, such as 0.5")
    return value


def _grounding(runs: list[Any], args: argparse.Namespace, adjudications: Any = None) -> int:
    """`--grounding`: the citation figures of `oeb.report.grounding`, under the adjudication file's
    evidence boxes when one applies."""
    from oeb.errors import UsageError
    from oeb.report import grounding, grounding_tables
    from oeb.report.audit import dataset_of
    from oeb.report.tables import fitted_table

    if args.by not in (None, ["system"]) or args.audit or args.fail_under is not None or args.mix or args.mix_from:
        raise UsageError("--grounding goes without --by, --mix, --mix-from, --audit and --fail-under")
    report = grounding.grounding(runs, dataset_of(runs, args.dataset), _iou(args.iou), adjudications)
    if args.format != "text":
        emit("report", grounding_tables.render(report, args.format), args.out)
        return 0
    console = _console(args.out is not None)
    note = grounding_tables.NOTE.format(iou=report["iou"])
    tables = [
        fitted_table("grounding · " + note, grounding_tables.HEADER, grounding_tables.rows(report), None),
        fitted_table(
            "citations per verdict", grounding_tables.CATEGORY_HEADER, grounding_tables.category_rows(report), None
        ),
    ]
    emit("report", _text(tables, args.out is not None, console), args.out)
    return 0


def _calibration(runs: list[Any], args: argparse.Namespace) -> int:
    """`--calibration`: the confidence figures of `oeb.report.calibration`."""
    from oeb.errors import UsageError
    from oeb.report import calibration
    from oeb.report.tables import fitted_table

    if args.by not in (None, ["system"]) or args.audit or args.fail_under is not None or args.mix or args.mix_from:
        raise UsageError("--calibration goes without --by, --mix, --mix-from, --audit and --fail-under")
    report = calibration.calibration(runs)
    if args.format != "text":
        emit("report", calibration.render(report, args.format), args.out)
        return 0
    console = _console(args.out is not None)
    tables = [fitted_table("calibration · " + calibration.NOTE, calibration.HEADER, calibration.rows(report), None)]
    tables += [
        fitted_table(f"{run['label']} · per field", calibration.FIELD_HEADER, calibration.field_rows(run), None)
        for run in report["runs"]
        if run["confidence"]
    ]
    emit("report", _text(tables, args.out is not None, console), args.out)
    return 0


def run(args: argparse.Namespace) -> int:
    """Print or write the report, then apply the `--fail-under` gate."""
    from oeb.cli._runs import log_to_stderr
    from oeb.errors import QualityGateFailed, UsageError
    from oeb.report import leaderboard, markdown, render_html
    from oeb.report.folders import load_folders

    if args.details_limit < 0:
        raise UsageError(f"--details-limit {args.details_limit}: give 0 (all) or a positive number")
    if args.audit and args.format != "html":
        raise UsageError("--audit goes with --format html (oeb audit gives the findings as md or json)")
    by = args.by or ["system"]
    asked = [trait for trait in by if trait not in ("system", "field")]
    if "system" in by and len(by) > 1:
        raise UsageError("--by system is the leaderboard alone; give --by field and/or --by TRAIT to slice it")
    sliced = bool(asked or args.mix or args.mix_from)
    if "field" in by and (args.format == "html" or args.audit or args.fail_under is not None):
        raise UsageError("--by field goes with --format text, md or json, without --audit or --fail-under")
    if sliced and (args.audit or args.fail_under is not None):
        raise UsageError("--by TRAIT, --mix and --mix-from go without --audit and --fail-under")
    if (args.mix or args.mix_from) and "field" in by:
        raise UsageError("--mix and --mix-from give scores per system; leave --by field out")
    log_to_stderr()
    if args.iou is not None and not args.grounding:
        raise UsageError("--iou goes with --grounding")
    if args.grounding and args.calibration:
        raise UsageError("--grounding and --calibration are two reports: give one of them, then the other")
    if args.grounding:
        _iou(args.iou)  # checked before any folder is read
    from oeb.report.adjudicated import annotate, lines, under_gold

    gold = under_gold(load_folders(args.runs, all_runs=args.all_runs), args.adjudications)
    runs = gold.runs
    if args.calibration:
        return _calibration(runs, args)
    if args.grounding:
        return _grounding(runs, args, gold.adjudications)
    board = annotate(leaderboard(runs, mixed_scorers=args.mixed_scorers, adjudications=gold.adjudications), gold)
    if sliced:
        emit("report", _sliced(runs, board, by, asked, args), args.out)
        return 0
    if "field" in by:
        emit("report", _by_field(runs, board, args.format, args.out is not None, args.wide), args.out)
        return 0
    if args.format == "text":
        from oeb.report import rich_tables

        console = _console(args.out is not None)
        tables = rich_tables(board, None if args.wide else console.width)
        if args.wide:  # as wide as the table: the terminal wraps what it cannot show
            console.width = max(console.width, console.measure(tables[0]).maximum)
        text = _text(tables, args.out is not None, console)
        if lines(board):
            if text is None:
                print("\n".join(lines(board)))
            else:
                text += "\n".join(lines(board)) + "\n"
    elif args.format == "md":
        said = lines(board)
        text = markdown(board) + "".join(
            f"- {line.strip()}\n" if line.startswith("  ") else f"\n{line}\n" for line in said
        )
    elif args.format == "json":
        text = json.dumps(board, indent=2, ensure_ascii=False) + "\n"
    else:
        findings = None
        if args.audit:
            from oeb.report import audit

            findings = audit.audit(runs, audit.dataset_of(runs, None), audit.default_min_agree(len(runs)))
        text = render_html(runs, board, args.details_limit, findings)
    emit("report", text, args.out)
    if args.fail_under is not None:
        below = [row for row in board["rows"] if row["headline"] < args.fail_under]
        if below:
            shown = ", ".join(f"{row['system']} {100 * row['headline']:.2f}%" for row in below)
            raise QualityGateFailed(f"headline below {100 * args.fail_under:.2f}%: {shown}")
    return 0


def _sliced(
    runs: list[Any], board: dict[str, Any], by: list[str], asked: list[str], args: argparse.Namespace
) -> str | None:
    """`--by TRAIT` (slices, flips first), `--by field --by TRAIT` (the fields per slice) and `--mix` /
    `--mix-from` (the scores at a mix), in the asked format."""
    from oeb.cli._slices import partial_line, read_mix, rendered, traits_of
    from oeb.errors import UsageError
    from oeb.report.mix import mix_report
    from oeb.report.slice_tables import mix_blocks, slice_blocks
    from oeb.report.slices import slice_report

    traits = traits_of(runs, args, "report")
    for trait in asked:
        traits.check(trait)
    to_file = args.out is not None
    if "field" in by:
        return _fields_by_slice(runs, board, traits, asked, args.format, to_file)
    mix = read_mix(args, traits, asked)
    answer: dict[str, Any] = {}
    blocks = []
    if asked:
        answer = slice_report(runs, traits, asked, args.min_docs)
        blocks += slice_blocks(answer)
    if mix is not None:
        at_mix = mix_report(runs, traits, mix)
        partial_line(at_mix, "report")
        blocks = mix_blocks(at_mix) + blocks
        answer = {**at_mix, "slices": answer} if answer else at_mix
    if not blocks:
        raise UsageError("nothing to slice by: give --by TRAIT, --mix or --mix-from")
    title = f"{board['dataset']} · {board['documents']} documents" + (f" · by {' × '.join(asked)}" if asked else "")
    if "gold" in board:  # the slices say which decisions they used, as the leaderboard does
        title, answer = f"{title} · {board['gold']['line']}", {**answer, "gold": board["gold"]["line"]}
    return rendered(blocks, args.format, title, answer, to_file, _text)


def _fields_by_slice(
    runs: list[Any], board: dict[str, Any], traits: Any, asked: list[str], form: str, to_file: bool
) -> str | None:
    """`--by field --by TRAIT`: per run and slice, the rows of `oeb.report.fields` over its documents."""
    from oeb.cli._slices import rendered
    from oeb.report.fields import field_rows, row_json, run_verdicts
    from oeb.report.slice_tables import Block
    from oeb.report.slices import groups, slice_name
    from oeb.scoring import RESULTS

    by_url = {run.url: run for run in runs}
    ordered = [by_url[row["url"]] for row in board["rows"]]
    sliced = groups(traits, asked, ordered[0].doc_ids)
    slice_of = {doc_id: slice_name(key) for key, ids in sliced for doc_id in ids}
    answer, blocks = [], []
    header = ["field", *(kind.replace("invented_", "inv. ") for kind in RESULTS), "total", "accuracy", "documents"]
    for run in ordered:
        verdicts = run_verdicts(run)
        per_slice = []
        for key, ids in sliced:
            rows = field_rows(verdicts, suite=slice_name(key), suites=slice_of)
            per_slice.append(
                {"slice": key, "name": slice_name(key), "documents": len(ids), "fields": [row_json(r) for r in rows]}
            )
            cells = [
                [r.path, *(str(r.counts[kind]) for kind in RESULTS), str(r.total),
                 "–" if r.accuracy is None else f"{100 * r.accuracy:.2f}", str(r.documents)]
                for r in rows
            ]  # fmt: skip
            blocks.append(Block(f"{run.label} · {slice_name(key)} ({len(ids)} documents)", header, cells))
        answer.append({"label": run.label, "folder": run.url, "slices": per_slice})
    return rendered(blocks, form, f"fields by {' × '.join(asked)}", {"by": asked, "runs": answer}, to_file, _text)
