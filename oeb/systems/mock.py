"""`mock`: an offline, simulated system that answers from the gold, with seeded mistakes and faults.

It exists so that a whole run (plan, predict, retries, grading, reports) works with no API key and
no network, and so that the engine and the scorer can be tested against known error rates. It is
not a benchmark entry: its answers are the gold, damaged on purpose.

It declares `uses_gold`, so a run hands it each document's gold as read through the dataset (the
storage layer grading uses), wherever the dataset lives: a folder, `s3://`, `hf://`. The `gold`
option (a folder of `<document stem>.json`) overrides that; with neither (`oeb predict` on one
file), the gold is looked up in the dataset layout, `<document folder>/../gold/<stem>.json`. No
vendor is ever handed the gold. Every random choice comes from `seed` and the document's name (faults also from the
attempt number), so a run is reproducible and a retried fault can clear.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from oeb.scoring.canonical import canonical_key
from oeb.systems import _mock_cites
from oeb.systems.base import Adapter, Call, Cite, Cost, Deadline, Price, Question
from oeb.systems.errors import OptionError, SystemFailed, SystemTimeout


def _rate(help_text: str) -> Any:
    return field(default=0.0, metadata={"help": help_text, "rate": True})


_LOOKALIKES = {"0": "O", "O": "0", "1": "l", "l": "1", "5": "S", "S": "5", "8": "B", "B": "8", "2": "Z", "e": "c"}
"""Characters an OCR engine takes for one another."""


def _misread(value: Any, rng: random.Random) -> Any:
    """A wrong value drawn from many (so two differently seeded mocks rarely agree on one): a
    number off by a random amount, text with one character dropped, doubled, swapped or mistaken."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((1, -1)) * rng.randint(1, max(9, abs(value) // 4))
    if isinstance(value, float):
        wrong = round(value * (1 + rng.choice((1, -1)) * rng.uniform(0.01, 0.4)), 2)
        return wrong if canonical_key(wrong) != canonical_key(value) else value + rng.randint(1, 99)
    return _misread_text(str(value), rng)


def _misread_text(text: str, rng: random.Random) -> str:
    for _ in range(8):
        wrong = _garble(text, rng)
        if canonical_key(wrong) != canonical_key(text):
            return wrong
    return f"{text} {rng.randrange(10, 100)}"


def _garble(text: str, rng: random.Random) -> str:
    if not text:
        return str(rng.randrange(10, 100))
    at = rng.randrange(len(text))
    kind = rng.choice(("drop", "double", "swap", "lookalike", "other"))
    if kind == "drop" and len(text) > 1:
        return text[:at] + text[at + 1 :]
    if kind == "double":
        return text[:at] + text[at] + text[at:]
    if kind == "swap" and at + 1 < len(text):
        return text[:at] + text[at + 1] + text[at] + text[at + 2 :]
    if kind == "lookalike" and text[at] in _LOOKALIKES:
        return text[:at] + _LOOKALIKES[text[at]] + text[at + 1 :]
    return text[:at] + rng.choice("abcdefghijkmnopqrstuvwxyz0123456789") + text[at + 1 :]


def _fabricate(node: Any, name: str, rng: random.Random) -> Any:
    """A value of the schema node's type for a field the gold leaves out (None for a node whose type
    is an object or array, or that names none)."""
    if not isinstance(node, dict):
        return None
    if isinstance(node.get("enum"), list) and node["enum"]:
        return rng.choice(node["enum"])
    kind = node.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "integer":
        return rng.randint(1, 9999)
    if kind == "number":
        return round(rng.uniform(1, 9999), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "string":
        if node.get("format") == "date":
            return f"20{rng.randint(10, 29)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        return f"{name[:3].upper()}-{rng.randrange(10000):04d}"
    return None


def _invent(model: Any, rng: random.Random) -> Any:
    """An array item like `model` with every value changed, so it pairs with no gold item."""
    if isinstance(model, dict):
        return {k: _invent(v, rng) for k, v in model.items()}
    if isinstance(model, list):
        return [_invent(v, rng) for v in model]
    return "invented" if model is None else _misread(model, rng)


@dataclass(frozen=True)
class Mock(Adapter):
    name: ClassVar[str] = "mock"
    description: ClassVar[str] = "OFFLINE SIMULATION: answers from the gold with seeded mistakes and faults (no key)"
    uses_gold: ClassVar[bool] = True
    paths: ClassVar[tuple[str, ...]] = ("gold", "calls_log")

    gold: str = field(
        default="", metadata={"help": "folder of <document stem>.json gold files; '' = the dataset's gold"}
    )
    seed: int = field(default=0, metadata={"help": "makes every simulated choice reproducible"})
    misread: float = _rate("chance that a gold value comes back wrong")
    unfound: float = _rate("chance that a gold value comes back null")
    fabricated: float = _rate("chance that a gold null, or a schema field the gold leaves out, comes back with a value")
    invented_item: float = _rate("chance that an array gets an extra item")
    invented_field: float = _rate("chance that an object gets a field the schema lacks")
    latency: float = field(default=0.0, metadata={"help": "seconds each answer takes"})
    rate_limit: float = _rate("chance per attempt of an HTTP 429 with Retry-After")
    retry_after: float = field(default=1.0, metadata={"help": "Retry-After seconds of a simulated 429"})
    server_error: float = _rate("chance per attempt of an HTTP 503")
    timeout: float = _rate("chance per attempt that no answer comes before the time limit")
    malformed: float = _rate("chance per attempt of an answer holding no extraction")
    usd: float = field(default=0.0, metadata={"help": "simulated dollars per answer"})
    cite: bool = field(default=False, metadata={"help": "cite each value's page and box where its text is printed"})
    cite_wrong: float = _rate("share of the cited boxes placed elsewhere on their page")
    confidence: str = field(
        default="", metadata={"help": "'' (none), calibrated or overconfident: a confidence per value"}
    )
    calls_log: str = field(
        default="", metadata={"help": "file each call appends a line to (document, time): tests count the calls"}
    )

    def __post_init__(self) -> None:
        for option in fields(self):
            value = getattr(self, option.name)
            if option.metadata.get("rate") and not 0.0 <= value <= 1.0:
                raise OptionError(f"option {option.name!r} of mock is a probability, not {value!r}")
        if self.confidence not in _mock_cites.CONFIDENCE:
            raise OptionError(
                f"option 'confidence' of mock is '', calibrated or overconfident, not {self.confidence!r}"
            )
        if min(self.latency, self.retry_after, self.usd) < 0:
            raise OptionError("mock's latency, retry_after and usd must not be negative")

    def published_price(self) -> Price | None:
        """What the simulation charges: its `usd` option per document."""
        return Price(usd_per_document=self.usd, source="mock's usd option")

    def _gold(self, document: Path) -> Any:
        folder = Path(self.gold) if self.gold else document.parent.parent / "gold"
        path = folder / f"{document.stem}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as error:
            raise SystemFailed(
                f"mock has no usable gold for {document.stem} at {path} ({error}); set the option 'gold' "
                "to the dataset's gold folder"
            ) from error

    def _fault(self, document: Path, deadline: Deadline) -> None:
        rng = random.Random(f"{self.seed}|{document.stem}|{deadline.attempt}")
        roll, cumulative, fault = rng.random(), 0.0, None
        for kind, chance in (
            ("rate_limit", self.rate_limit),
            ("server_error", self.server_error),
            ("timeout", self.timeout),
        ):
            cumulative += chance
            if roll < cumulative:
                fault = kind
                break
        if fault is None:
            return
        if fault == "rate_limit":
            raise SystemFailed(
                "simulated HTTP 429: too many requests",
                status=429,
                body="rate limited",
                retry_after=self.retry_after,
            )
        if fault == "server_error":
            raise SystemFailed("simulated HTTP 503: service unavailable", status=503, body="unavailable")
        deadline.sleep(deadline.remaining())
        raise SystemTimeout(f"simulated: no answer within the {deadline.seconds:g}-second limit")

    def _damage(self, value: Any, schema: Any, rng: random.Random) -> Any:
        """The gold damaged at the options' rates; `schema` (the gold's node) names the fields the
        gold leaves out, which come back fabricated at the `fabricated` rate."""
        node: dict[str, Any] = schema if isinstance(schema, dict) else {}
        if isinstance(value, dict):
            found = node.get("properties")
            properties: dict[str, Any] = found if isinstance(found, dict) else {}
            out = {k: self._damage(v, properties.get(k), rng) for k, v in value.items()}
            for name, child in properties.items():
                if name not in value and rng.random() < self.fabricated:
                    made = _fabricate(child, name, rng)
                    if made is not None:
                        out[name] = made
            if out and rng.random() < self.invented_field:
                out[f"invented_{rng.randrange(1000)}"] = "invented"
            return out
        if isinstance(value, list):
            items = [self._damage(v, node.get("items"), rng) for v in value]
            if items and rng.random() < self.invented_item:
                items.append(_invent(rng.choice(value), rng))
            return items
        roll = rng.random()
        if value is None:
            return (_fabricate(node, "fabricated", rng) or "fabricated") if roll < self.fabricated else None
        if roll < self.unfound:
            return None
        if roll < self.unfound + self.misread:
            return _misread(value, rng)
        return value

    def call(self, question: Question, deadline: Deadline) -> Call:
        """Answer from the gold the run handed over (`Question.gold`), unless the `gold` option names
        a folder or none was handed (then `extract` reads it from a file)."""
        if question.gold is None or self.gold:
            return super().call(question, deadline)
        answer = self._answer(question.document, question.gold, deadline, question.schema)
        answer.sent = question.schema
        return answer

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        self._log(document)
        return self._answer(document, self._gold(document), deadline, schema, logged=True)

    def _log(self, document: Path) -> None:
        if self.calls_log:
            with open(self.calls_log, "a", encoding="utf-8") as calls:
                calls.write(f"{document.stem}\t{time.time()}\n")

    def _answer(
        self, document: Path, gold: Any, deadline: Deadline, schema: Any = None, *, logged: bool = False
    ) -> Call:
        if not logged:
            self._log(document)
        self._fault(document, deadline)
        if self.latency > deadline.remaining():
            deadline.sleep(deadline.remaining())
            raise SystemTimeout(f"simulated: the answer takes {self.latency:g} s, past the time limit")
        deadline.sleep(self.latency)
        cost = Cost(usd=self.usd, source="simulated") if self.usd else Cost()
        rng = random.Random(f"{self.seed}|{document.stem}|malformed|{deadline.attempt}")
        if rng.random() < self.malformed:
            return Call(raw={"extraction": "simulated malformed answer", "simulated": True}, cost=cost)
        answer = self._damage(gold, schema, random.Random(f"{self.seed}|{document.stem}"))
        raw: dict[str, Any] = {"extraction": answer, "simulated": True}
        if self.cite or self.confidence:
            raw["citations"] = _mock_cites.annotate(
                answer,
                gold,
                document,
                random.Random(f"{self.seed}|{document.stem}|cite"),
                cite=self.cite,
                cite_wrong=self.cite_wrong,
                confidence=self.confidence,
                error=self.misread / max(1e-9, 1 - self.unfound),
            )
        return Call(raw=raw, cost=cost, job_id=f"mock-{document.stem}")

    def cites(self, raw: Any) -> list[Cite]:
        """The citations and confidences the simulation put in its answer."""
        return _mock_cites.cites(raw)
