"""One generic fake vendor: a real HTTP server on 127.0.0.1 answering from a route table.

A route is a method and an exact path; its replies are served in order, the last one repeating, so
"processing, then complete" is two replies. A prefix route (`on_prefix`) answers the paths under it
that have no exact route: ids the client learned from earlier answers. Every request is recorded
(method, path, query, headers, body) so tests can assert what an adapter really sent. Per-vendor
route tables live in `vendors.py`; the HTTP server is `scripts/fake_http.py`'s.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from fake_http import Reply, Request, server  # scripts/fake_http.py: the server the benchmark's fakes use too

__all__ = ["FakeVendor", "Reply", "Request", "Responder", "closed_url"]


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
        self._server = server(self._answer)
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

    def __enter__(self) -> FakeVendor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
