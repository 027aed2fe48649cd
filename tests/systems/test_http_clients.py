"""The vendors' HTTP clients: a document's client is kept for the next document of the same vendor
(its connections reused), never shared by two documents at once, and the idle ones are bounded."""

from __future__ import annotations

import threading

from oeb.systems import _http
from oeb.systems.base import Deadline
from systems.fake_vendor import FakeVendor, Reply


def session(url: str, key: str = "k1") -> _http.Session:
    return _http.Session("test", Deadline(10.0), base_url=url, headers={"Authorization": key})


def test_the_next_document_reuses_the_client_of_the_last_one_and_its_connection(fake: FakeVendor) -> None:
    fake.on("GET", "/ping", Reply(200, {"ok": True}))
    with session(fake.url) as first:
        first.json("GET", "/ping", "a ping", timeout=5)
    with session(fake.url) as second:
        second.json("GET", "/ping", "a ping", timeout=5)
    assert second.client is first.client and not first.client.is_closed
    with session(fake.url, key="k2") as other:  # another key: another client
        assert other.client is not first.client


def test_two_documents_at_once_never_share_a_client(fake: FakeVendor) -> None:
    fake.on("GET", "/ping", Reply(200, {"ok": True}, delay=0.05))
    clients: list[object] = []
    failures: list[BaseException] = []

    def document() -> None:
        try:
            for _ in range(10):
                with session(fake.url) as http:
                    clients.append(http.client)
                    http.json("GET", "/ping", "a ping", timeout=5)
        except BaseException as failure:
            failures.append(failure)

    threads = [threading.Thread(target=document) for _ in range(8)]
    for thread in threads:
        thread.start()
    with session(fake.url) as a, session(fake.url) as b:
        assert a.client is not b.client
    for thread in threads:
        thread.join()
    assert not failures
    assert len({id(client) for client in clients}) <= 9  # reused across documents, one per document at a time


def test_idle_clients_are_bounded_and_the_oldest_vendors_closed() -> None:
    opened = []
    for n in range(_http._IDLE_KEYS + 5):
        with session(f"http://127.0.0.1:{40000 + n}") as http:
            opened.append(http.client)
    assert len(_http._IDLE) <= _http._IDLE_KEYS
    assert all(client.is_closed for client in opened[:5]) and not opened[-1].is_closed
