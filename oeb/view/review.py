"""`oeb view --review FILE --by NAME`: the review queue (`/review`) and the adjudications list
(`/adjudications`) over an adjudication file, and the one write the explorer allows.

The queue holds the file's proposed entries, those where most systems disagree with the gold first,
each with the gold, every system's reading there and the entry's evidence. A decision is written to
the file at once (read, changed, replaced atomically under a lock), and only when:

- the request carries the per-server token the page holds (header `X-OEB-Token`; a random value made
  when the server starts, compared in constant time), and, where it has an `Origin` header, that
  origin is one of the server's own: no other site's page can write, and the custom header makes a
  browser ask first (CORS preflight), which this server never grants;
- the entry is still the revision the page loaded: otherwise the decision is refused in one line
  (`StaleDecision`, HTTP 409), so two reviewers never overwrite each other.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from oeb import _json, storage
from oeb.dataset import Dataset
from oeb.errors import AdjudicationError, StaleDecision, StorageNotFoundError, WriteRefused
from oeb.gold import entries
from oeb.gold.check import decisions_refused
from oeb.gold.entries import Adjudications, Entry
from oeb.view.api import View

TOKEN_HEADER = "X-OEB-Token"
_SCORER = "field_matching"


def origins(host: str, port: int) -> frozenset[str]:
    """The origins a page of this server has: its host as bound, and the loopback names for 127.0.0.1."""
    names = {f"[{host}]" if ":" in host else host}
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    return frozenset(f"http://{name}:{port}" for name in names)


ABSENT = "absent: the document states no value here"
"""The reason of an entry marked absent (`x`) without one typed."""


def typed_value(text: str) -> Any:
    """A value typed on the page: JSON when it reads as a number, true/false or a quoted string, else
    the text itself."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, str | int | float | bool) else text


@dataclass
class Review:
    """The file under review, who reviews, the server's token and its origins."""

    view: View
    url: str
    by: str | None
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    origins: frozenset[str] = frozenset()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _effects: tuple[str, list[dict[str, Any]]] | None = field(default=None, repr=False)

    @property
    def writable(self) -> bool:
        return self.by is not None

    def _file(self) -> Adjudications:
        return entries.load_or_empty(self.url) if self.writable else entries.load(self.url)

    # -- reading -----------------------------------------------------------------------------------

    def _readings(self, doc_ids: Iterable[str]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
        """Per (document, address), each run's predicted value and verdict there."""
        wanted = sorted(set(doc_ids))
        found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        if not wanted:
            return found
        for run in self.view.runs:
            url = storage.join(run.url, _SCORER, "verdicts.parquet")
            try:
                table = storage.read_parquet(url, ["id", "address", "pred_raw", "result"], [("id", "in", wanted)])
            except StorageNotFoundError:
                continue
            for row in table.to_pylist():
                pred = None if row["pred_raw"] is None else _json.loads(row["pred_raw"])
                found.setdefault((row["id"], row["address"]), {})[run.label] = {"value": pred, "result": row["result"]}
        return found

    def queue_json(self) -> dict[str, Any]:
        """`GET /api/review`: the proposed entries, most disagreeing systems first, with the gold, each
        system's reading, the evidence, the revision to decide on, and the reviewer."""
        from oeb.gold.check import leaves

        current = self._file()
        proposed = [entry for entry in current.entries if entry.status == "proposed"]
        known = set(self.view.doc_ids)
        readings = self._readings(entry.doc_id for entry in proposed if entry.doc_id in known)
        dataset = self.view.dataset()
        rows = [row for row in dataset.rows if row.doc_id in {entry.doc_id for entry in proposed}]
        golds = {row.doc_id: dict(leaves(gold)) for row, gold in dataset.golds(rows)}
        items = []
        for entry in proposed:
            systems = readings.get((entry.doc_id, entry.address), {})
            disagree = sum(1 for reading in systems.values() if reading["result"] != "matched")
            items.append(
                {
                    **self._entry_json(entry),
                    "gold": golds.get(entry.doc_id, {}).get(entry.address),
                    "systems": systems,
                    "disagree": disagree,
                    "pages": self.view.page_count(entry.doc_id) if entry.doc_id in known else 0,
                    "page_size": self._page_size(entry) if entry.doc_id in known else None,
                }
            )
        draft = self._derivation(dataset)
        if draft is None:
            items.sort(key=lambda item: -item["disagree"])  # stable: file order among equals
        else:  # a drafted gold: undecided values first, then the lowest agreement (docs/own-documents.md)
            for item in items:
                value = draft.get((item["doc_id"], item["address"]))
                if value is not None:
                    item["systems"] = {key: {"value": v, "result": "reading"} for key, v in value.readings}
                    item["agreement"] = -1 if value.status == "undecided" else len(value.systems)
            items.sort(key=lambda item: item.get("agreement", 1 << 30))
        return {"file": self.url, "by": self.by, "sha256": current.sha256, "queue": items}

    @staticmethod
    def _derivation(dataset: Any) -> dict[tuple[str, str], Any] | None:
        """A drafted dataset's values by (document, address): their systems' readings; None otherwise."""
        from oeb.gold.derivation import read_draft

        draft = read_draft(dataset)
        return None if draft is None else {(v.doc_id, v.address): v for v in draft.values}

    def _page_size(self, entry: Entry) -> list[float] | None:
        """The width and height in points of the page the entry's evidence is on (its first page)."""
        pdf = self.view._pdf(entry.doc_id)  # the explorer's cached PDF of the document
        number = (entry.evidence or {}).get("page") or 1
        if pdf is None or not 1 <= number <= pdf[1].page_count:
            return None
        page = pdf[1].page(number)
        return [round(page.width, 1), round(page.height, 1)]

    @staticmethod
    def _entry_json(entry: Entry) -> dict[str, Any]:
        return {**entries.to_json(entry), "revision": entry.revision}

    def adjudications_json(self) -> dict[str, Any]:
        """`GET /api/adjudications`: every entry with its status and, per run, what it changed."""
        from oeb.report.adjudicated import adjudicate_run

        current = self._file()
        with self._lock:
            if self._effects is not None and self._effects[0] == current.sha256:
                listed = self._effects[1]
                return {"file": self.url, "sha256": current.sha256, "entries": listed}
        effects: dict[str, dict[str, Any]] = {}
        raw = Adjudications(())  # the view's runs are read under the file already: before is the raw gold
        try:
            done = [adjudicate_run(adjudicate_run(run, raw).run, current) for run in self.view.runs]
        except AdjudicationError as error:
            done, problem = [], str(error)
        else:
            problem = ""
        for adjudicated in done:
            for doc_id, changed in adjudicated.changed.items():
                before = next(line for line in adjudicated.before.lines if line["id"] == doc_id)
                for entry_id in changed.applied:
                    effects.setdefault(entry_id, {})[adjudicated.run.label] = {
                        "doc_id": doc_id,
                        "accuracy": [before["accuracy"], changed.result["accuracy"]],
                        "verdicts": [
                            {"address": _shown(v["address"]), "result": v["result"]}
                            for v, mark in zip(changed.details, changed.marks, strict=True)
                            if mark == entry_id
                        ],
                    }
        listed = [{**self._entry_json(entry), "effect": effects.get(entry.id, {})} for entry in current.entries]
        with self._lock:
            self._effects = (current.sha256, listed)
        answer: dict[str, Any] = {"file": self.url, "sha256": current.sha256, "entries": listed}
        if problem:
            answer["problem"] = problem
        return answer

    # -- the one write -----------------------------------------------------------------------------

    def check_request(self, token: str | None, origin: str | None) -> None:
        """Refuse a write without the token, or from an origin that is not this server's."""
        if not self.writable:
            raise WriteRefused("this server is read-only; start oeb view with --review FILE --by NAME to decide")
        if not token or not hmac.compare_digest(token.encode(), self.token.encode()):
            raise WriteRefused("a decision needs this server's token; reload the review page")
        if origin is not None and origin not in self.origins:
            raise WriteRefused(f"a decision from {origin} is refused: only this server's own pages can decide")

    def decide(self, body: Any) -> dict[str, Any]:
        """`POST /api/review/decide` with `{id, revision, decision: accept|reject|correct|absent, reason,
        value}` (value: the typed text of a correction; absent: a verify entry's value is not on the
        page, accepted with `value: null`): the entry as written, with its new revision."""
        if not isinstance(body, dict):
            raise AdjudicationError("a decision is a JSON object: {id, revision, decision, reason, value}")
        decision, entry_id, revision = body.get("decision"), body.get("id"), body.get("revision")
        if decision not in ("accept", "reject", "correct", "absent") or not isinstance(entry_id, str):
            raise AdjudicationError("a decision needs `id` and `decision` (accept, reject, correct or absent)")
        reason = body.get("reason") if isinstance(body.get("reason"), str) else None
        readings: list[Any] = []
        assert self.by is not None
        from oeb.publish.adjudications import read_file, write_file  # the Hub's client: on a decision only

        with self._lock:
            current, at = read_file(self.url)  # an hf:// file: written on the commit read (publish.adjudications)
            entry = current.by_id(entry_id)
            if entry.revision != revision:
                who = f" (now {entry.status} by {entry.by})" if entry.by else ""
                raise StaleDecision(
                    f"{entry_id} changed in {self.url} since this page loaded it{who}; reload the queue"
                )
            if decision == "correct":
                text = body.get("value")
                if not isinstance(text, str) or not text.strip():
                    raise AdjudicationError(f"{entry_id}: type the corrected value")
                readings = _readings(text)
                new = _corrected(entry, self.by, reason, readings[0])
            elif decision == "absent":  # the page states no value there: a sampled gold value was wrong
                if entry.action != "verify":
                    raise AdjudicationError(
                        f"{entry_id}: only a verify entry is marked absent; reject it with a reason"
                    )
                new = entries.decide(entry, "accepted", self.by, reason or ABSENT, None)
            else:
                status = "accepted" if decision == "accept" else "rejected"
                new = entries.decide(entry, status, self.by, reason)
            updated = current.replaced([new])
            updated.accepted  # noqa: B018 - two accepted entries on one address are refused before writing
            try:
                decisions_refused(updated, [new], self.view.dataset())  # a typed value its schema refuses
            except AdjudicationError:
                as_text = _corrected(entry, self.by, reason, readings[-1]) if len(readings) > 1 else None
                if as_text is None or _refused(current.replaced([as_text]), as_text, self.view.dataset()):
                    raise
                new, updated = as_text, current.replaced([as_text])  # `1234` typed for a text field
            write_file(updated, self.url, f"oeb view --review: {entry_id} {new.status} by {self.by}", at)
        return self._entry_json(new)


def _refused(updated: Adjudications, decided: Entry, dataset: Dataset) -> bool:
    try:
        decisions_refused(updated, [decided], dataset)
    except AdjudicationError:
        return True
    return False


def _readings(text: str) -> list[Any]:
    """What a typed correction may mean, in order: its JSON reading, then, for a number or true/false,
    the text as typed (taken when the field's schema refuses the first: `1234` typed for an SKU)."""
    typed = typed_value(text)
    return [typed] if isinstance(typed, str) else [typed, text.strip()]


def _corrected(entry: Entry, by: str, reason: str | None, value: Any) -> Entry:
    """A typed correction: a verify, replace or add entry accepted with the value; an accept entry
    accepted with the value as its reading; a remove entry takes no value."""
    import dataclasses

    if entry.action == "remove":
        raise AdjudicationError(f"{entry.id}: a remove entry takes no value; accept or reject it")
    if entry.action == "accept":
        return entries.decide(dataclasses.replace(entry, values=(value,)), "accepted", by, reason)
    return entries.decide(entry, "accepted", by, reason, value)


def _shown(address: Any) -> str:
    from oeb.scoring import show_address

    return show_address(tuple(tuple(step) for step in address))
