"""A document's verdicts a slice at a time, so every answer of `oeb view` about a document stays
under `ANSWER_BYTES` of JSON however many verdicts it holds (a 20,085-verdict table answered 5.29 MB
whole).

The filters and the order the page offers apply here, on the server, to every verdict of the
document (or, side by side, to every row of two runs' verdicts merged by address), and the answer
says how many there are, how many the filters keep, and where the next slice starts. A value too long
to list (a 100,000-character prediction) is listed shortened, marked `cut`, and served whole by the
per-verdict answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oeb.errors import UsageError
from oeb.scoring import RESULTS

ANSWER_BYTES = 200_000
"""The most bytes of JSON any document answer holds (a slice of verdicts or of boxes, its head included)."""
_SPARE = 8_000
"""Bytes kept free below `ANSWER_BYTES` for the paging keys written after the slice is chosen."""
LIMIT = 500
"""Verdicts (or rows) an answer lists unless `limit=` asks for fewer or more; fewer when they are long."""
MOST = 5_000
"""The largest `limit=` accepted (the byte bound holds whatever the limit)."""
LISTED = 1_000
"""Characters of a value, canonical key or explanation a list shows; the rest is in the verdict's answer."""
WHOLE = 20_000
"""Characters of a canonical key or explanation a verdict's own answer shows (its values come whole)."""
PATHS_LISTED = 1_000
"""Field paths an answer names for the page's field menu (a hostile answer may invent thousands)."""
SORTS = ("order", "errors", "address")
"""The orders: as graded (the document's order), errors first (by kind, then as graded), by address."""
KIND_FILTERS = ("errors", *RESULTS)
_TEXTS = ("gold_key", "pred_key", "explain")
"""A verdict's texts derived from its values (each as long as they are)."""


def to_json(value: Any) -> bytes:
    """An API answer as the server sends it and an export writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Query:
    """What a document answer is asked for: the filters, the order and the slice."""

    kind: str = ""
    field: str = ""
    text: str = ""
    sort: str = "order"
    offset: int = 0
    limit: int = LIMIT

    @classmethod
    def of(cls, args: Mapping[str, str]) -> Query:
        """The query of a request's arguments (`kind`, `field`, `q`, `sort`, `offset`, `limit`);
        `UsageError` naming the argument that is wrong."""
        kind, sort = args.get("kind", ""), args.get("sort", "") or "order"
        if kind and kind not in KIND_FILTERS:
            raise UsageError(f"kind={kind!r} is not a verdict kind; give one of {', '.join(KIND_FILTERS)}")
        if sort not in SORTS:
            raise UsageError(f"sort={sort!r} is not an order; give one of {', '.join(SORTS)}")
        return cls(
            kind,
            args.get("field", ""),
            args.get("q", ""),
            sort,
            number(args, "offset", 0, most=None),
            number(args, "limit", LIMIT, least=1),
        )

    @property
    def plain(self) -> bool:
        """Whether every verdict is kept in the document's order (an export writes only those slices)."""
        return not (self.kind or self.field or self.text) and self.sort == "order"


def number(args: Mapping[str, str], name: str, default: int | None, least: int = 0, most: int | None = MOST) -> int:
    """An integer argument from `least` to `most` (None: no upper bound), `default` when it is not
    given (None: it must be); `UsageError` naming what is wrong."""
    text = args.get(name)
    if text is None or text == "":
        if default is None:
            raise UsageError(f"{name}= is missing: give a whole number from {least}")
        return default
    if not text.isascii() or not text.isdigit() or int(text) < least or (most is not None and int(text) > most):
        bound = f"from {least}" + ("" if most is None else f" to {most}")
        raise UsageError(f"{name}={text!r} is not a whole number {bound}")
    return int(text)


def rows_of(sides: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each run's verdicts merged by address: `{"address", "path", "sides": [VERDICT or None, ...]}`,
    in the first run's order, then the addresses only a later run has, in its order."""
    rows: dict[str, dict[str, Any]] = {}
    for side, verdicts in enumerate(sides):
        for verdict in verdicts:
            row = rows.setdefault(
                verdict["address"],
                {"address": verdict["address"], "path": verdict["path"], "sides": [None] * len(sides)},
            )
            row["sides"][side] = verdict
    return list(rows.values())


def _results(row: Mapping[str, Any]) -> list[str]:
    return [verdict["result"] for verdict in row["sides"] if verdict is not None]


def _shown(value: Any) -> str:
    """A value as the page shows it: a string bare, anything else as JSON, null as nothing."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def under(path: str, field: str) -> bool:
    """Whether the folded `path` is `field` or lies beneath it: an object's or an array's node
    (`pressure_tests`, `pressure_tests[]`) keeps every verdict of the fields under it."""
    return path == field or path.startswith((field + ".", field + "["))


def _keeps(query: Query) -> Callable[[Mapping[str, Any]], bool]:
    text = query.text.casefold()

    def keep(row: Mapping[str, Any]) -> bool:
        results = _results(row)
        if query.kind == "errors" and all(result == "matched" for result in results):
            return False
        if query.kind not in ("", "errors") and query.kind not in results:
            return False
        if query.field and not under(row["path"], query.field):
            return False
        if text:
            verdicts = [verdict for verdict in row["sides"] if verdict is not None]
            shown = [row["address"], _shown(verdicts[0]["gold"]), *(_shown(verdict["pred"]) for verdict in verdicts)]
            return any(text in part.casefold() for part in shown)
        return True

    return keep


def chosen(rows: Iterable[dict[str, Any]], query: Query) -> list[dict[str, Any]]:
    """The rows the query's filters keep, in its order."""
    if query.plain:
        return list(rows)
    keep = _keeps(query)
    kept = [row for row in rows if keep(row)]
    if query.sort == "errors":
        rank = {kind: place for place, kind in enumerate((*RESULTS[1:], RESULTS[0]))}
        kept.sort(key=lambda row: min(rank[result] for result in _results(row)))
    elif query.sort == "address":
        kept.sort(key=lambda row: row["address"])
    return kept


def sliced(items: Iterable[Any], budget: int) -> list[Any]:
    """The first of `items` whose JSON fits in `budget` bytes (one at least: a listed verdict is
    short, its long texts `shortened`)."""
    taken: list[Any] = []
    used = 0
    for item in items:
        size = len(to_json(item)) + 1
        if taken and used + size > budget:
            break
        taken.append(item)
        used += size
    return taken


def budget(head: Mapping[str, Any]) -> int:
    """The bytes left for a slice once the answer's head (everything but the slice) is written."""
    return max(ANSWER_BYTES - _SPARE - len(to_json(head)), 40_000)


def shortened(verdict: Mapping[str, Any], *, values: bool = True, most: int = LISTED) -> dict[str, Any]:
    """The verdict with each text longer than `most` characters shortened to that (its values' too,
    with `values`: an object or array as its JSON text), `cut` giving each one's whole length."""
    out = dict(verdict)
    cut = {}
    for key in (("gold", "pred") if values else ()) + _TEXTS:
        value = verdict.get(key)
        if isinstance(value, dict | list):
            value = json.dumps(value, ensure_ascii=False)
        if isinstance(value, str) and len(value) > most:
            out[key] = value[:most]
            cut[key] = len(value)
    if cut:
        out["cut"] = cut
    return out


def paths_json(paths: Iterable[str]) -> dict[str, Any]:
    """`paths`: the document's field paths, sorted, the first `PATHS_LISTED` of them; with more,
    `paths_total` says how many (`field=` filters by any of them)."""
    every = sorted(set(paths))
    return {"paths": every[:PATHS_LISTED], **({"paths_total": len(every)} if len(every) > PATHS_LISTED else {})}


def counts(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many verdicts of each kind (every kind named, 0 for none)."""
    counted = dict.fromkeys(RESULTS, 0)
    for verdict in verdicts:
        counted[verdict["result"]] += 1
    return counted
