"""`oeb view RUN...`: a local, read-only web app over graded folders (docs/diagnosing.md), or with
`--export DIR` the same app as static files."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb view` and its flags."""
    parser = subparsers.add_parser(
        "view",
        help="explore graded runs in a browser: fields, documents with each value on its PDF page",
        description=(
            "Serve a read-only web app over graded run folders or brought folders (local, s3:// or hf://): "
            "the leaderboard with cost against accuracy and latency, the verdicts per schema field, each "
            "document's verdicts beside its PDF pages with every value outlined where it stands, the schema "
            "with its verdict counts, and its JSON API. Runs are refused for the same reasons as oeb report. "
            "Serves until Ctrl-C; --export DIR writes the same app as static files instead."
        ),
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a graded folder (local, s3:// or hf://)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="the port to listen on (default 8765; 0: any free)")
    parser.add_argument(
        "--audit", action="store_true", help="add the gold audit's findings (/audit), each opening its document"
    )
    parser.add_argument(
        "--review",
        metavar="FILE",
        help="an adjudication file (local or s3://): with --by, the review queue (/review) writes each decision "
        "to it; /adjudications lists its entries and what each changed (docs/adjudication.md)",
    )
    parser.add_argument("--by", metavar="NAME", help="who decides on the review page (with --review)")
    parser.add_argument(
        "--adjudications",
        metavar="URL",
        help="show this adjudication file read-only on /adjudications (the same as --review without --by)",
    )
    parser.add_argument(
        "--export",
        metavar="DIR",
        help="write the app as static files to DIR (local or s3://) for any static file server, then exit",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (exit 0), or export and exit."""
    from oeb.errors import UsageError
    from oeb.view.api import open_view

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port; give one from 1 to 65535 (0: any free port)")
    if args.by is not None and args.review is None:
        raise UsageError("--by NAME names who decides on the review page; give --review FILE with it")
    if args.review is not None and args.adjudications is not None:
        raise UsageError("give --review FILE or --adjudications URL, not both")
    if args.review is not None and args.export:
        raise UsageError("--review serves decisions; an export is read-only: use --adjudications with --export")
    view = open_view(args.runs, audit=args.audit)
    review = None
    if args.review is not None or (args.adjudications is not None and args.adjudications.lower() != "none"):
        from oeb.gold import entries
        from oeb.view.review import Review

        url = args.review or args.adjudications
        if args.by is None:
            entries.load(url)  # a file that cannot be read is refused now, in one line
        elif args.by.strip() == "":
            raise UsageError("--by NAME is empty; give the name of who decides")
        review = Review(view, url, args.by)
        if args.by is None or storage_exists(url):
            from oeb.report import leaderboard
            from oeb.report.adjudicated import annotate, under_gold

            gold = under_gold(view.runs, url)  # the leaderboard and fields under the file, as oeb report
            view.runs, view.board = gold.runs, annotate(leaderboard(gold.runs), gold)
    if args.export:
        from oeb.view.export import export

        written = export(view, args.export)
        print(
            f"oeb view: wrote {written} files to {args.export}; serve it with any static file server", file=sys.stderr
        )
        return 0
    import threading

    from oeb.view.app import server

    try:
        httpd = server(view, args.host, args.port, review)
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); give another --port or --host"
        ) from None
    print(f"oeb view: serving {len(view.runs)} run(s) at http://{_shown(args.host)}:{httpd.server_port}/", flush=True)
    if review is not None and review.writable:
        print(f"oeb view: review queue at http://{_shown(args.host)}:{httpd.server_port}/review", flush=True)
    print("oeb view: press Ctrl-C to stop", file=sys.stderr, flush=True)
    threading.Thread(target=view.warm, daemon=True).start()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("oeb view: stopped", file=sys.stderr)
    finally:
        httpd.server_close()
    return 0


def storage_exists(url: str) -> bool:
    from oeb import storage

    return storage.exists(url)


def _shown(host: str) -> str:
    """The host as it goes in a URL: IPv6 in brackets."""
    return f"[{host}]" if ":" in host else host
