"""One generic fake vendor: a real HTTP server on 127.0.0.1 answering from a route table.

A route is a method and an exact path; its replies are served in order, the last one repeating, so
"processing, then complete" is two replies. A prefix route (`on_prefix`) answers the paths under it
that have no exact route: ids the client learned from earlier answers. Every request is recorded
(method, path, query, headers, body) so tests can assert what an adapter really sent. Per-vendor
route tables live in `vendors.py`.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """What the fake answers: a status, a JSON (dict/list), text or bytes body, headers, a delay.

    `reset` closes the connection without answering (an unreachable vendor, not a refused one).
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: bytes
    received: float = field(default_factory=time.monotonic)
    """When the request arrived (the system-wide monotonic clock, as Ray actors on this machine read it)."""

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, tuple[str | None, str | None, bytes]]:
        """Multipart parts in order: name → (filename, content type, content)."""
        head = f"Content-Type: {self.headers['content-type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + self.body)
        parts = {}
        for part in message.iter_parts():
            parts[part.get_param("name", header="content-disposition")] = (
                part.get_filename(),
                part.get("content-type"),
                part.get_payload(decode=True),
            )
        return parts


def closed_url() -> str:
    """An address where nothing listens, so connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


Responder = Reply | Callable[[Request], Reply]


class FakeVendor:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Responder]] = {}
        self.prefixes: dict[tuple[str, str], list[Responder]] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def on(self, method: str, path: str, *replies: Responder) -> None:
        """Serve `replies` in order to `method path` (the last one repeats), replacing earlier ones."""
        self.routes[(method, path)] = list(replies)

    def on_prefix(self, method: str, prefix: str, *replies: Responder) -> None:
        """Serve `replies` to `method` on every path starting with `prefix` that has no exact route
        (the longest matching prefix wins)."""
        self.prefixes[(method, prefix)] = list(replies)

    def first(self, method: str, path: str, *replies: Responder) -> None:
        """Serve `replies` before what the route already serves (a fault, then the normal answer)."""
        self.routes[(method, path)][:0] = replies

    def sent(self, method: str | None = None, path: str | None = None) -> list[Request]:
        return [r for r in self.requests if method in (None, r.method) and path in (None, r.path)]

    def _answer(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self.routes.get((request.method, request.path)) or self._under_prefix(request)
            if not queue:
                return Reply(404, {"error": f"no route {request.method} {request.path}"})
            responder = queue.pop(0) if len(queue) > 1 else queue[0]
        return responder(request) if callable(responder) else responder

    def _under_prefix(self, request: Request) -> list[Responder] | None:
        matching = [p for m, p in self.prefixes if m == request.method and request.path.startswith(p)]
        return self.prefixes[(request.method, max(matching, key=len))] if matching else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Send at once, as production servers do: headers and body are two writes, and with Nagle's
            # algorithm the body waits for the client's delayed ACK (40 ms a request on a kept connection).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    method=self.command,
                    path=url.path,
                    query={k: v[-1] for k, v in parse_qs(url.query).items()},
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length),
                )
                reply = fake._answer(request)
                time.sleep(reply.delay)
                if reply.reset:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if isinstance(reply.body, bytes):
                    data, kind = reply.body, "application/octet-stream"
                elif isinstance(reply.body, str):
                    data, kind = reply.body.encode(), "text/plain"
                else:
                    data, kind = json.dumps(reply.body).encode(), "application/json"
                try:
                    self.send_response(reply.status)
                    for name, value in {"Content-Type": kind, **reply.headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a timeout test)

            do_GET = do_POST = do_PUT = _serve

        return Handler

    def __enter__(self) -> FakeVendor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
