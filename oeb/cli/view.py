"""`oeb view RUN...`: a local, read-only web app over graded folders (docs/diagnosing.md), or with
`--export DIR` the same app as static files."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from oeb.cli._slices import add_trait_flags


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb view` and its flags."""
    from oeb.cli.report import add_runs

    parser = subparsers.add_parser(
        "view",
        help="explore graded runs in a browser: fields, documents with each value on its PDF page",
        description=(
            "Serve a read-only web app over graded run folders or brought folders (local, s3:// or hf://): "
            "the leaderboard with cost against the headline and latency, the verdicts per schema field, each "
            "document's verdicts beside its PDF pages with every value outlined where it stands, the schema "
            "with its verdict counts, and its JSON API. Runs are refused for the same reasons as oeb report. "
            "Serves until Ctrl-C; --export DIR writes the same app as static files instead."
        ),
    )
    add_runs(parser, "+", "a graded folder")
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
        help="show this adjudication file read-only on /adjudications (the same as --review without --by; "
        "default: the one the runs' config.yaml names, else the dataset's own adjudications.yaml; none: the raw gold)",
    )
    parser.add_argument(
        "--export",
        metavar="DIR",
        help="write the app as static files to DIR (local or s3://) for any static file server, then exit",
    )
    add_trait_flags(
        parser,
        dataset_help="the runs' dataset where it is now, if it moved since grading (local, s3:// or hf://): the "
        "PDFs, golds and schemas are read there; refused now if it cannot be opened or lacks a document",
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
    from oeb.cli._runs import log_to_stderr

    log_to_stderr()
    view = open_view(args.runs, audit=args.audit, all_runs=args.all_runs, dataset=args.dataset)
    if args.dataset is not None:  # named by the user: one that cannot be opened is refused now, not page by page
        view.dataset()
    _slicing(view, args)
    from oeb.view.gold import read_under

    review = read_under(view, review=args.review, adjudications=args.adjudications, by=args.by)
    if args.export:
        from oeb.view.export import export

        written = export(view, args.export, review)
        print(
            f"oeb view: wrote {written} files to {args.export}; serve it with any static file server", file=sys.stderr
        )
        return 0
    import threading

    from oeb.view.app import is_loopback, server

    httpd = server(view, args.host, args.port, review)
    if not is_loopback(args.host):
        print(
            f"oeb view: warning: --host {args.host} is not a loopback address: anyone who can reach this machine "
            "can read these runs' gold and predictions",
            file=sys.stderr,
        )
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


def _shown(host: str) -> str:
    """The host as it goes in a URL: IPv6 in brackets."""
    return f"[{host}]" if ":" in host else host


def _slicing(view: Any, args: argparse.Namespace) -> None:
    """The slices page's settings; with --mix or --mix-from the traits are read and the mix checked
    now, so a bad mix is refused before anything is served."""
    from oeb.cli._slices import read_mix, traits_of
    from oeb.traits import parse_buckets
    from oeb.view.slices import Slicing

    if args.min_docs < 1:
        from oeb.errors import UsageError

        raise UsageError(f"--min-docs {args.min_docs}: give a positive number of documents")
    from oeb.cli._slices import configured

    view.slicing = Slicing(parse_buckets(args.bucket, configured(args.config)), args.min_docs)
    if args.mix or args.mix_from:
        traits = traits_of(view.runs, args, "view")
        view.slicing = Slicing(traits.edges, args.min_docs, read_mix(args, traits, []), traits)
