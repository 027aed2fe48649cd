"""The one HTTP server of oeb's vendor fakes: a real threaded HTTP/1.1 server on 127.0.0.1 that hands
each request to an `answer` function and sends back its `Reply`.

The scale benchmark's job-protocol fakes (`job_fakes.py`) and the tests' route-table fake vendor
(`tests/systems/fake_vendor.py`, which pytest finds here through `pythonpath`) differ only in how
they answer; how a request is read and an answer sent (at once, without Nagle's delay, a closed
connection being no error) is this module's.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import socket
import struct
import sys
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


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that closes a kept-alive connection (oeb exiting) is no error worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def server(answer: Callable[[Request], Reply], port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (`port` 0: any free one) answering every request with `answer` (not yet
    serving: call `serve_forever` on a thread or in a process of its own)."""

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
            reply = answer(request)
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
                self.close_connection = True  # the client gave up (a timeout test, oeb exiting)

        do_GET = do_POST = do_PUT = _serve

    return _Server(("127.0.0.1", port), Handler)
