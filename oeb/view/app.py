"""`oeb view`'s server: a WSGI app (werkzeug) over a `View`, serving the pages, the JSON API and the
rendered PDF pages (docs/diagnosing.md).

Every page is one shell (static/shell.html) told which view it shows; the front end (static/app.js)
draws it from the API. Pages sit one folder deep at most and point at everything relatively, so the
same shell works under this server and in an export (`oeb.view.export`) served by any static server.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import html
import ipaddress
import json
import logging
import socket
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from oeb.errors import AdjudicationError, OebError, StaleDecision, UsageError, ViewNotFound, WriteRefused
from oeb.view.api import MOST_SCALE, SCALE, View
from oeb.view.paging import Query, number, to_json
from oeb.view.pdf import asked_scale
from oeb.view.review import TOKEN_HEADER, Review, origins

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

STATIC = {
    entry.name: entry.read_bytes()
    for entry in resources.files("oeb.view").joinpath("static").iterdir()
    if entry.is_file() and entry.name != "shell.html"
}
"""The front end's files by name: a request names one of these or gets a 404 (no path is joined)."""
_TOP_PAGES = ("board", "fields", "document_list", "audit", "slices", "calibration")
"""Pages one level deep that draw themselves from the API (a new page: a Rule, a name here, a view in
app.js)."""
_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}

_ROUTES = Map(
    [
        Rule("/", endpoint="board"),
        Rule("/fields", endpoint="fields"),
        Rule("/documents", endpoint="document_list"),
        Rule("/documents/<path:doc_id>", endpoint="documents"),
        Rule("/schema/<path:doc_id>", endpoint="schema"),
        Rule("/audit", endpoint="audit"),
        Rule("/slices", endpoint="slices"),
        Rule("/calibration", endpoint="calibration"),
        Rule("/static/<name>", endpoint="static"),
        Rule("/api/runs", endpoint="api_runs"),
        Rule("/api/gold", endpoint="api_gold"),
        Rule("/api/fields", endpoint="api_fields"),
        Rule("/api/documents", endpoint="api_document_list"),
        Rule("/api/documents/<path:doc_id>", endpoint="api_documents"),
        Rule("/api/verdicts/<path:doc_id>", endpoint="api_verdicts"),
        Rule("/api/boxes/<path:doc_id>", endpoint="api_boxes"),
        Rule("/api/schema/<path:doc_id>", endpoint="api_schema"),
        Rule("/api/audit", endpoint="api_audit"),
        Rule("/api/slices", endpoint="api_slices"),
        Rule("/api/mix", endpoint="api_mix"),
        Rule("/api/calibration", endpoint="api_calibration"),
        Rule("/pages/<path:doc_id>/<int:page>.png", endpoint="page"),
        Rule("/review", endpoint="review"),
        Rule("/adjudications", endpoint="adjudications"),
        Rule("/api/review", endpoint="api_review", methods=["GET"]),
        Rule("/api/review/decide", endpoint="api_decide", methods=["POST"]),
        Rule("/api/adjudications", endpoint="api_adjudications"),
    ]
)


def shell(
    page: str,
    *,
    static: bool,
    root: str,
    doc_id: str | None = None,
    message: str = "",
    audit: bool = False,
    review: str = "",
    token: str = "",
) -> str:
    """The HTML of one page: the shell with its view, its way back to the top (`root`: "" or "../"),
    whether it is an export (`static`: the API as JSON files) and the document it shows."""
    template = resources.files("oeb.view").joinpath("static", "shell.html").read_text(encoding="utf-8")
    values = {
        "VIEW": page,
        "ROOT": root,
        "MODE": "static" if static else "server",
        "DOC": doc_id or "",
        "MESSAGE": message,
        "SCALE": str(SCALE),
        "AUDIT": "1" if audit else "",
        "REVIEW": review,
        "TOKEN": token,
    }
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", html.escape(value, quote=True))
    return template


def _json_response(value: Any, status: int = 200) -> Response:
    return Response(to_json(value), status=status, mimetype="application/json", headers={"Cache-Control": "no-store"})


LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether `--host` keeps the server to this machine (a loopback address or the name localhost)."""
    try:
        return host.lower() in LOCAL_NAMES or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> frozenset[str]:
    """The names a request's `Host` may give: localhost's, and the address the server is bound to (for
    a wildcard address, this machine's name and addresses). Any other name reaching this port is a
    rebound one (DNS rebinding: a web page the user visits reading the private benchmark)."""
    names = {*LOCAL_NAMES, host.lower().strip("[]")}
    if host in ("0.0.0.0", "::", ""):
        fqdn = socket.getfqdn()
        names |= {socket.gethostname().lower(), fqdn.lower()}
        with contextlib.suppress(OSError):
            names |= {str(info[4][0]) for info in socket.getaddrinfo(fqdn, None)}
    return frozenset(names)


def _host_name(header: str) -> str:
    """The name in a `Host` header, port and IPv6 brackets left out."""
    if header.startswith("["):
        return header[1 : header.find("]")].lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


class App:
    """The WSGI application over one `View`, answering only requests that name an allowed host."""

    def __init__(self, view: View, hosts: frozenset[str] = LOCAL_NAMES, review: Review | None = None) -> None:
        self.view = view
        self.hosts = hosts
        self.review = review

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        if _host_name(request.headers.get("Host", "")) not in self.hosts:
            response = Response(  # naming no host: a rebound page must learn nothing of this machine
                "oeb view answers only requests to localhost or the address it listens on\n", 403, mimetype="text/plain"
            )
        else:
            response = _compressed(request, self._respond(request))
        return response(environ, start_response)

    def _respond(self, request: Request) -> Response:
        adapter = _ROUTES.bind_to_environ(request.environ)
        api = request.path.startswith(("/api/", "/pages/"))
        try:
            endpoint, values = adapter.match()
            return self._answer(str(endpoint), values, request)
        except ViewNotFound as error:
            if api:
                return _json_response({"error": str(error)}, 404)
            return self._page(request, "notfound", 404, message=str(error))
        except NotFound:
            if api:
                return _json_response({"error": f"no such route: {request.path}"}, 404)
            return self._page(request, "notfound", 404, message=f"no page at {request.path}")
        except UsageError as error:  # a query the API cannot answer (offset=-1, kind=nothing)
            if api:
                return _json_response({"error": str(error)}, 400)
            return self._page(request, "notfound", 400, message=str(error))
        except AdjudicationError as error:  # a refused decision: one line, and nothing written
            status = 403 if isinstance(error, WriteRefused) else 409 if isinstance(error, StaleDecision) else 400
            return _json_response({"error": str(error)}, status)
        except HTTPException as error:  # a redirect (/fields/ to /fields) or a method not allowed
            return error.get_response(request.environ)
        except OebError as error:  # a dataset or folder that cannot be read now: one line, not a traceback
            return (
                _json_response({"error": str(error)}, 500) if api else self._page(request, "notfound", 500, str(error))
            )

    def _page(
        self, request: Request, page: str, status: int = 200, message: str = "", doc_id: str | None = None
    ) -> Response:
        root = "../" * (request.path.count("/") - 1)  # /documents/ID: one folder deep
        review = self.review
        mode = "" if review is None else "write" if review.writable else "read"
        token = review.token if review is not None and review.writable and page == "review" else ""
        text = shell(
            page,
            static=False,
            root=root,
            doc_id=doc_id,
            message=message,
            audit=self.view.audit,
            review=mode,
            token=token,
        )
        return Response(text, status=status, mimetype="text/html")

    def _answer(self, endpoint: str, values: Mapping[str, Any], request: Request) -> Response:
        view, run = self.view, request.args.get("run")
        if endpoint in _TOP_PAGES:
            if endpoint == "audit" and not view.audit:
                raise ViewNotFound("the gold audit is not shown; start oeb view with --audit")
            if endpoint in ("fields", "document_list") and run is not None:
                view.run(run)
            return self._page(request, endpoint)
        if endpoint in ("documents", "schema"):
            for label in (run, request.args.get("vs")):
                if label is not None:
                    view.run(label)
            view.check_document(values["doc_id"])
            return self._page(request, endpoint, doc_id=values["doc_id"])
        if endpoint in ("review", "adjudications", "api_review", "api_decide", "api_adjudications"):
            return self._review(endpoint, request)
        if endpoint == "static":
            name = values["name"]
            if name not in STATIC:
                raise NotFound()
            kind = _TYPES.get(name[name.rfind(".") :], "application/octet-stream")
            return Response(STATIC[name], mimetype=kind)
        if endpoint == "page":
            scale = asked_scale(request.args.get("scale"), SCALE, MOST_SCALE)
            png = view.page_png(values["doc_id"], values["page"], scale)
            return Response(png, mimetype="image/png", headers={"Cache-Control": "max-age=3600"})
        answer: Callable[[], Any] = {
            "api_runs": view.runs_json,
            "api_gold": lambda: _gold(view),
            "api_fields": lambda: _fields(view, run, request.args),
            "api_document_list": lambda: view.documents_json(run),
            "api_documents": lambda: view.document_json(
                run, values["doc_id"], Query.of(request.args), request.args.get("vs") or None
            ),
            "api_verdicts": lambda: view.verdict_json(
                run, values["doc_id"], number(request.args, "n", None, most=None)
            ),
            "api_boxes": lambda: view.boxes_json(
                run,
                values["doc_id"],
                number(request.args, "page", None, least=1, most=None),
                number(request.args, "offset", 0, most=None),
            ),
            "api_schema": lambda: view.schema_json(run, values["doc_id"]),
            "api_audit": view.audit_json,
            "api_slices": lambda: _slices(view, request.args.get("trait")),
            "api_mix": lambda: view.slicing.mix_json(view),
            "api_calibration": view.calibration_json,
        }[endpoint]
        return _json_response(answer())

    def _review(self, endpoint: str, request: Request) -> Response:
        """The review queue, the adjudications list and the one write (`oeb.view.review`)."""
        review = self.review
        if review is None:
            raise ViewNotFound("no adjudication file is shown; start oeb view with --review FILE --by NAME")
        if endpoint in ("review", "adjudications"):
            if endpoint == "review" and not review.writable:
                raise ViewNotFound("the review queue needs --by NAME (who decides)")
            return self._page(request, endpoint)
        if endpoint == "api_review":
            return _json_response(review.queue_json())
        if endpoint == "api_adjudications":
            return _json_response(review.adjudications_json())
        review.check_request(request.headers.get(TOKEN_HEADER), request.headers.get("Origin"))
        try:
            body = json.loads(request.get_data(cache=False, as_text=True) or "null")
        except ValueError:
            raise AdjudicationError("a decision is a JSON object: {id, revision, decision, reason, value}") from None
        return _json_response(review.decide(body))


_COMPRESSED_FROM = 4096
"""JSON answers from this many bytes go gzipped to a client that accepts it (a 2,500-verdict
document's 845 KB travel as about a tenth of that)."""


def _compressed(request: Request, response: Response) -> Response:
    if (
        response.mimetype == "application/json"
        and "gzip" in request.headers.get("Accept-Encoding", "")
        and response.content_length is not None
        and response.content_length >= _COMPRESSED_FROM
    ):
        response.set_data(gzip.compress(response.get_data(), compresslevel=5))
        response.headers["Content-Encoding"] = "gzip"
        response.vary.add("Accept-Encoding")
    return response


def _fields(view: View, run: str | None, args: Mapping[str, str]) -> Any:
    """`/api/fields`: a run's fields, over a suite's documents, or a slice's (`trait` and `value`)."""
    if "trait" in args:
        return view.slicing.fields_json(view, run, args["trait"], args.get("value", ""))
    return view.fields_json(run, args.get("suite"))


def _gold(view: View) -> Any:
    """`/api/gold`: which gold the leaderboard's numbers use and how wrong it still is."""
    from oeb.view.gold import gold_json

    return gold_json(view.board)


def _slices(view: View, trait: str | None) -> Any:
    """`/api/slices`: the traits there are; `?trait=T`: the runs sliced by T."""
    return view.slicing.traits_json(view) if trait is None else view.slicing.slices_json(view, trait)


def server(view: View, host: str, port: int, review: Review | None = None) -> BaseWSGIServer:
    """A threaded HTTP server of the app on host:port (0: a free port), not yet serving; a port that is
    taken or an address this machine lacks is refused in one line (`UsageError`). The socket is bound
    here: werkzeug's own bind prints two lines and exits. A review's origins are the server's own."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request on the terminal
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listening = socket.create_server((host.strip("[]"), port), family=family)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is taken by another program; try --port 0 (any free port)"
            ) from None
        raise UsageError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); give another --port or --host"
        ) from None
    with listening:  # werkzeug takes a duplicate of its descriptor
        httpd = make_server(host, port, App(view, allowed_hosts(host), review), threaded=True, fd=listening.fileno())
    httpd.server_name, httpd.server_port = host, httpd.port  # what HTTPServer's own bind would have set
    if review is not None:
        review.origins = origins(host, httpd.server_port)
    return httpd
