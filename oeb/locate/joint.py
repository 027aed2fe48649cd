"""Placing one side's values (the gold's, or a prediction's) on the document together.

An array's items are placed on printed rows: each item on the line (with the line below it, for a
cell that wraps or a row printed on two lines) holding the most of its values, items in the order
they are printed where they can be (a weighted longest increasing run over the lines), every
printed cell taken by at most one value, so a unit or a quantity that repeats lands in its own row.
A scalar printed in several places goes where its label (its name's or its schema description's
words) is printed just before it or just above it.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from oeb.locate.match import Index, Needle, Place, needle
from oeb.locate.words import Box, Source, squash

Status = Literal["found", "ambiguous", "not_printed", "no_text_layer"]
"""found: one place; ambiguous: several equally good places, the best shown; not_printed: every
page has a text layer and none prints the value; no_text_layer: not found, and some page is a scan
(read by OCR or not), so the value may stand there."""

_ITEM = re.compile(r"\[p?[0-9]+\]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ABBREVIATIONS = {
    "number": {"no", "nr", "num"},
    "quantity": {"qty"},
    "amount": {"amt"},
    "description": {"desc"},
    "reference": {"ref"},
    "telephone": {"tel"},
    "phone": {"tel"},
    "account": {"acct"},
    "department": {"dept"},
}
_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "this",
        "that",
        "to",
        "was",
        "were",
        "which",
        "with",
        "value",
        "field",
    )
)
"""Description words that label nothing."""
_ROWS_KEPT = 64
"""Candidate rows kept per array item (the best ones): a unit printed on 200 lines is no row."""
_LABEL_REACH = 5
"""Words before a value on its line that may be its label."""
_LABEL_GAP = 1.5
"""A gap wider than this many word heights between two words before a value ends its label."""


@dataclass(frozen=True)
class Located:
    """Where one value stands: `status`, and for found or ambiguous its best `page` (from 1) and
    `bbox` (x0, y0, x1, y1 in PDF points from the page's top-left corner), `others` (how many other
    places print the same value) and `source` (the page's text layer, or OCR)."""

    status: Status
    page: int | None = None
    bbox: Box | None = None
    others: int = 0
    source: Source | None = None


@dataclass(frozen=True)
class Label:
    """A field's label words: from its name (`well_number`: well, number) and its description."""

    name: tuple[str, ...]
    description: tuple[str, ...] = ()


def label_of(address: str, description: str = "") -> Label:
    """The label words of the field at `address` (its last key), and of its schema description."""
    last = _ITEM.sub("", address).rsplit(".", 1)[-1]
    name = tuple(squash(part) for part in re.split(r"[_\s\-]+", _CAMEL.sub("_", last)) if squash(part))
    described = tuple(word for word in (squash(part) for part in description.split()) if word and word not in _STOP)
    return Label(name, described[:12])


def locate_values(
    index: Index, values: Sequence[tuple[str, Any]], labels: Mapping[str, Label] | None = None
) -> list[Located | None]:
    """Each (address, value) of one side located; None for a value not looked for (null, a
    boolean, an object or array, empty text). `labels` by folded path (`items[].unit`); a field
    without one is labelled by its name."""
    needles: dict[Needle, list[Place]] = {}
    places: list[list[Place] | None] = []
    for _, value in values:
        wanted = needle(value)
        if wanted is None:
            places.append(None)
            continue
        if wanted not in needles:
            needles[wanted] = index.places(wanted)
        places.append(needles[wanted])
    placer = _Placer(index, [address for address, _ in values], places, labels or {})
    return placer.run()


class _Placer:
    def __init__(
        self, index: Index, addresses: list[str], places: list[list[Place] | None], labels: Mapping[str, Label]
    ) -> None:
        self.index, self.addresses, self.places, self.labels = index, addresses, places, labels
        self.used: dict[tuple[Any, ...], bool] = {}  # cell: taken by a value placed for sure
        self.rows: dict[str, int] = {}
        self.array_rows: dict[str, list[int]] = {}
        self.out: list[Located | None] = [None] * len(addresses)

    def run(self) -> list[Located | None]:
        arrays: dict[str, dict[str, list[int]]] = {}
        scalars = []
        for number, address in enumerate(self.addresses):
            if self.places[number] is None:
                continue
            ends = [match.end() for match in _ITEM.finditer(address)]
            if not ends:
                scalars.append(number)
                continue
            item = address[: ends[-1]]
            array = item[: item.rfind("[")]
            arrays.setdefault(array, {}).setdefault(item, []).append(number)
        for array in sorted(arrays, key=lambda array: array.count("[")):  # outer arrays first
            items = arrays[array]
            rows = self._rows(list(items.values()), self._window(array))
            for item, row in zip(items, rows, strict=True):
                if row is not None:
                    self.rows[item] = row
            self.array_rows[array] = sorted(row for row in rows if row is not None)
        for number in scalars:
            self._scalar(number)
        return self.out

    # -- arrays ---------------------------------------------------------------------------------

    def _window(self, array: str) -> tuple[int, int]:
        """The lines a nested array's items may stand on: from its parent item's row to the next
        row of the parent's array (everywhere when the parent has no row)."""
        parent = array[: array.rfind("]") + 1]
        if parent not in self.rows:
            return (0, len(self.index.lines))
        start = self.rows[parent]
        later = [row for row in self.array_rows.get(parent[: parent.rfind("[")], ()) if row > start]
        return (start, min(later, default=len(self.index.lines)))

    def _rows(self, items: list[list[int]], window: tuple[int, int]) -> list[int | None]:
        """Each item on its row, then each of its values on a cell of that row; the rows."""
        scores = [self._scores(item) for item in items]
        inside = [{line: score for line, score in item.items() if window[0] <= line < window[1]} for item in scores]
        if any(inside):
            scores = inside
        rows = _increasing(scores)
        taken = {row for row in rows if row is not None}
        for number, row in enumerate(rows):
            if row is None and scores[number]:
                # A line already holding an item's row may hold this one's too: two columns of a
                # page (or two tables side by side) print two items on each line.
                open_lines = {line: score for line, score in scores[number].items() if line not in taken} or scores[
                    number
                ]
                if open_lines:
                    rows[number] = max(open_lines, key=lambda line: (open_lines[line], -line))
                    taken.add(rows[number])  # type: ignore[arg-type]
        columns: dict[str, list[float]] = {}
        pending: list[tuple[int, int, list[Place], float]] = []
        lefts: dict[int, list[float]] = {}  # per item, where its values placed alone stand
        for item_number, (item, row, item_scores) in enumerate(zip(items, rows, scores, strict=True)):
            score = item_scores.get(row, 0.0) if row is not None else 0.0
            for number in item:
                on_row = self._on_row(number, row)
                if len(on_row) == 1:
                    self._take(number, on_row[0], sure=score >= 2 or self._printed(number) == 1)
                    columns.setdefault(_ITEM.sub("[]", self.addresses[number]), []).append(on_row[0].frame[0])
                    lefts.setdefault(item_number, []).append(on_row[0].frame[0])
                elif on_row:
                    pending.append((number, item_number, on_row, score))
                else:
                    self._anywhere(number, row)
        for number, _, on_row, score in self._by_rank(pending, rows, lefts):
            free = [place for place in on_row if place.cell not in self.used] or on_row
            column = columns.get(_ITEM.sub("[]", self.addresses[number]))
            if column and len(on_row) > 1:
                middle = statistics.median(column)
                free.sort(key=lambda place: abs(place.frame[0] - middle))
            self._take(number, free[0], sure=score >= 2 and bool(column))
        return rows

    def _by_rank(
        self, pending: list[tuple[int, int, list[Place], float]], rows: list[int | None], lefts: dict[int, list[float]]
    ) -> list[tuple[int, int, list[Place], float]]:
        """The values whose row prints them more than once, each left with its own cell where
        several items share a row (two columns of a page): the items sharing it, ordered by where
        their other values stand, take the field's cells on it in order, left to right."""
        shared: dict[tuple[int | None, str], list[int]] = {}
        for at, (number, item_number, _, _) in enumerate(pending):
            shared.setdefault((rows[item_number], _ITEM.sub("[]", self.addresses[number])), []).append(at)
        out = list(pending)
        for ats in shared.values():
            if len(ats) < 2 or any(pending[at][1] not in lefts for at in ats):
                continue
            cells = sorted({place.cell: place for at in ats for place in pending[at][2]}.values(), key=_left)
            if len(cells) < len(ats):
                continue
            ranked = sorted(ats, key=lambda at: statistics.median(lefts[pending[at][1]]))
            for rank, at in enumerate(ranked):
                number, item_number, _, score = pending[at]
                out[at] = (number, item_number, [cells[rank * len(cells) // len(ats)]], score)
        return out

    def _scores(self, item: list[int]) -> dict[int, float]:
        """Per line, how many of the item's values it prints (a value on the line below: half); only
        the lines within one value of the best (at most `_ROWS_KEPT`), which alone can be its row."""
        scores: dict[int, float] = {}
        for number in item:
            lines = {place.line for place in self.places[number] or ()}
            for line in lines:
                scores[line] = scores.get(line, 0.0) + 1.0
            for line in lines:
                above = line - 1
                if above >= 0 and above not in lines and self.index.line_page[above] == self.index.line_page[line]:
                    scores[above] = scores.get(above, 0.0) + 0.5
        if len(scores) > _ROWS_KEPT:
            best = max(scores.values())
            kept = sorted((line for line in scores if scores[line] >= best - 1), key=lambda line: -scores[line])
            scores = {line: scores[line] for line in kept[:_ROWS_KEPT]}
        return scores

    def _on_row(self, number: int, row: int | None) -> list[Place]:
        if row is None:
            return []
        places = [place for place in self.places[number] or () if place.cell not in self.used]
        same = [place for place in places if place.line == row]
        if same:
            return same
        page = self.index.line_page[row]
        return [place for place in places if place.line == row + 1 and place.page == page]

    def _anywhere(self, number: int, row: int | None) -> None:
        """A value its row does not print: the nearest free place to the row, if any."""
        places = self.places[number] or []
        free = [place for place in places if place.cell not in self.used] or places
        if not free:
            self._missing(number)
            return
        if row is not None:
            free = sorted(free, key=lambda place: abs(place.line - row))
        self._take(number, free[0], sure=len(free) == 1)

    # -- scalars --------------------------------------------------------------------------------

    def _scalar(self, number: int) -> None:
        places = self.places[number] or []
        if not places:
            self._missing(number)
            return
        free = [place for place in places if place.cell not in self.used] or places
        if len(free) == 1:  # the only place left: sure when every other was taken for sure
            self._take(number, free[0], sure=all(self.used.get(place.cell, True) for place in places))
            return
        address = self.addresses[number]
        label = self.labels.get(_ITEM.sub("[]", address)) or label_of(address)
        scored = sorted(((self._label_score(place, label), -place.first, place) for place in free), reverse=True)
        best, runner_up = scored[0][0], scored[1][0]
        self._take(number, scored[0][2], sure=best > 0 and best > runner_up)

    def _label_score(self, place: Place, label: Label) -> float:
        """How many of the label's words are printed just before the place on its line, or else
        just above it (a name's word counts 1, a description's 0.5): the better of the two. The
        words before it stop at a wide gap (another column's field: `Due date: X   Date: Y`), and
        among labels that match as well, the one with fewer other words wins (`Date:` is the
        label of `date` more than `Due date:` is)."""
        index = self.index
        line = index.lines[place.line]
        at = index.position[place.first]
        near = list(line[max(0, at - _LABEL_REACH) : at])
        for step in range(len(near) - 1, 0, -1):
            left, right = index.words[near[step - 1]].bbox, index.words[near[step]].bbox
            if right[0] - left[2] > _LABEL_GAP * max(right[3] - right[1], 1.0):
                near = near[step:]
                break
        before = tuple(index.words[word_id].key for word_id in near)
        matched = _matches(label, before)
        if matched:
            matched -= 0.1 * sum(1 for key in before if key and not _labels(label, key))
        above: list[str] = []
        if place.line > 0 and index.line_page[place.line - 1] == place.page:
            x0, x1 = place.frame[0] - 20, place.frame[2] + 20
            above = [
                index.words[word_id].key
                for word_id in index.lines[place.line - 1]
                if index.words[word_id].bbox[2] >= x0 and index.words[word_id].bbox[0] <= x1
            ]
        return max(matched, _matches(label, tuple(above)))

    # -- results --------------------------------------------------------------------------------

    def _printed(self, number: int) -> int:
        return len(self.places[number] or ())

    def _take(self, number: int, place: Place, *, sure: bool) -> None:
        others = self._printed(number) - 1
        status: Status = "found" if sure or others == 0 else "ambiguous"
        self.used[place.cell] = status == "found"
        self.out[number] = Located(status, place.page, place.bbox, others, self.index.source(place))

    def _missing(self, number: int) -> None:
        self.out[number] = Located("no_text_layer" if self.index.scanned else "not_printed")


def _left(place: Place) -> float:
    return place.frame[0]


@functools.lru_cache(maxsize=1 << 14)
def _matches(label: Label, near: tuple[str, ...]) -> float:
    """The label's score against the words near a place (kept: a form repeats its lines)."""
    score = sum(1.0 for word in label.name if any(_same_word(word, key) for key in near))
    return score + sum(0.5 for word in label.description if any(_same_word(word, key) for key in near))


def _labels(label: Label, printed: str) -> bool:
    """Whether a printed word is one of the label's words."""
    return any(_same_word(word, printed) for word in (*label.name, *label.description))


def _same_word(label: str, printed: str) -> bool:
    if not printed:
        return False
    if label == printed or printed in _ABBREVIATIONS.get(label, ()):
        return True
    return len(label) >= 4 and len(printed) >= 4 and (label.startswith(printed) or printed.startswith(label))


def _increasing(scores: list[dict[int, float]]) -> list[int | None]:
    """A line per item, lines increasing with the items, the total score the highest (earlier
    lines first among equals): a weighted longest increasing subsequence over a Fenwick tree of
    prefix maxima. Items left out get None."""
    size = 1 + max((line for item in scores for line in item), default=0)
    tree: list[tuple[float, int, int]] = [(0.0, 0, -1)] * (size + 1)  # (total, -line, node)
    nodes: list[tuple[int, int, int]] = []  # (item, line, previous node)

    def best_before(line: int) -> tuple[float, int, int]:
        best, at = (0.0, 0, -1), line  # lines 0..line-1 are tree slots 1..line
        while at > 0:
            best = max(best, tree[at])
            at -= at & -at
        return best

    def record(line: int, value: tuple[float, int, int]) -> None:
        at = line + 1
        while at <= size:
            if value > tree[at]:
                tree[at] = value
            at += at & -at

    top: tuple[float, int, int] = (0.0, 0, -1)
    for item, item_scores in enumerate(scores):
        updates = []
        for line, score in item_scores.items():
            total, _, previous = best_before(line)
            nodes.append((item, line, previous))
            updates.append((line, (total + score, -line, len(nodes) - 1)))
        for line, value in updates:
            record(line, value)
            top = max(top, value)
    rows: list[int | None] = [None] * len(scores)
    node = top[2]
    while node >= 0:
        item, line, node = nodes[node]
        rows[item] = line
    return rows
