"""`oeb publish RUN... DEST`: graded run folders, their card and results.json on a Hub dataset or s3://
(docs/publishing.md)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb publish` and its flags."""
    parser = subparsers.add_parser(
        "publish",
        help="publish graded run folders, their leaderboard card and results.json to a Hub dataset or s3://",
        description=(
            "Upload each graded run folder under DEST/<its folder name>/ (settings, config, predictions, "
            "field_matching/ and records), with a README.md dataset card holding the leaderboard of every setting "
            "published at DEST and results.json with its numbers, in one commit on the Hub. verdicts.parquet and "
            "details/ hold every gold value: --no-gold leaves them out. Every file is checked "
            "for secrets and local paths first. Files already at DEST are not sent again; a new run of a setting "
            "takes that setting's row."
        ),
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a graded run folder (local, s3:// or hf://)")
    parser.add_argument(
        "dest", metavar="DEST", help="hf://datasets/ORG/NAME[/PATH][@REVISION], or a writable URL such as s3://"
    )
    parser.add_argument(
        "--no-records",
        action="store_true",
        help="leave records/ out (raw vendor answers: large, or under the vendor's licence)",
    )
    parser.add_argument(
        "--no-gold",
        action="store_true",
        help="publish no gold value: verdicts.parquet without its gold columns, no details/ (the card says so)",
    )
    parser.add_argument("--message", metavar="TEXT", help="the commit message on the Hub")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Publish, then say what was written (or that nothing was new) and how to read it back."""
    from oeb.publish import publish

    dest = args.dest
    done = publish(args.runs, dest, records=not args.no_records, gold=not args.no_gold, message=args.message)
    if done.made is None:
        print(f"oeb publish: nothing new at {done.destination} ({done.unchanged} files already there)")
        return 0
    where = f"in commit {done.made}" if dest.startswith("hf://") else f"to {done.made}"
    print(
        f"oeb publish: {len(done.written)} files written {where} ({done.unchanged} unchanged); "
        f"{len(done.rows)} row{'s' if len(done.rows) != 1 else ''} in {done.destination}/README.md"
    )
    for row in done.rows:
        print(f"  {row['system']}: headline {100 * row['headline']:.2f}  {done.destination}/{row['folder']}")
    return 0
