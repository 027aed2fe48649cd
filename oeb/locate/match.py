"""Every place a value is printed: the value in each form the scorer treats as equal, looked up in
an index of a document's words.

A number (or a string the scorer reads as one: `"4,712.96"`) is a word printing the same number
(`$4,712.96`, `4712.960`), or words one space apart on a line that the scorer reads as it
(`1 234 567.89`, `- 45.00`: oeb.locate.runs), never part of a longer number: number boundaries are
word boundaries, so a number at a line's end never runs into the next line. Text is a run of whole
words whose letters and digits spell the value's (`ED` is not in `LED`), on one line or continued on
the next lines at the same left edge (a wrapped cell). A date is also looked for in every date form
the scorer reads, and a date or a time as an ISO date and time the scorer keys the same
(`2024-03-05 10:00`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import weakref
from dataclasses import dataclass
from datetime import date
from typing import Any

from oeb.locate.pages import PdfPages
from oeb.locate.runs import is_number_key, line_runs
from oeb.locate.turns import UPRIGHT, shown
from oeb.locate.words import Box, Page, Source, Word, float_key, number_key, span_box, squash
from oeb.scoring.canonical import DATE_FORMATS, DATE_PREFIX, TIME_PREFIX, canonical_key

LONGEST = 2000
"""A string longer than this (in characters) is not looked for: no page prints it as one run of text."""
_STARTS = 400
"""At most this many starting words are tried for one text (a one-letter value on a dense page)."""


@dataclass(frozen=True)
class Place:
    """One printed occurrence: its page, line (numbered across the document), the words it spans
    (`first`..`last`, numbered across the document; `part` the character range inside a single word,
    or None for whole words), its box on the page as shown, and its box in its line's upright
    frame (`frame`: the same but for sideways or upside-down text, `turns.py`), which the placing's
    geometry (columns, labels) compares with its words'."""

    page: int
    line: int
    first: int
    last: int
    part: tuple[int, int] | None
    bbox: Box
    frame: Box

    @property
    def cell(self) -> tuple[int, int, tuple[int, int] | None]:
        """What makes this place one printed cell: no two values of one side take the same one."""
        return (self.first, self.last, self.part)


@dataclass(frozen=True)
class Needle:
    """What to look for: a number's key, or the squashed texts (several for a date), and a date's or
    a time's canonical key (`moment`, for a date printed with a time)."""

    number: str | None
    texts: tuple[str, ...]
    moment: str | None = None


def needle(value: Any) -> Needle | None:
    """The forms to look for, or None for what is not looked for (null, booleans, containers, empty
    or punctuation-only text). Text longer than `LONGEST` is looked for nowhere: it is not printed."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return Needle(float_key(float(value)), ())
    if not isinstance(value, str) or not value.strip():
        return None
    if len(value) > LONGEST:
        return Needle(None, ())
    return _text_needle(value)


@functools.lru_cache(maxsize=1 << 16)
def _text_needle(value: str) -> Needle | None:
    """A string's needle (kept: the same strings recur across a document's items and its two sides)."""
    key = canonical_key(value)
    if is_number_key(key):
        return Needle(key, ())
    forms = {squash(value)}
    if key.startswith(DATE_PREFIX):
        forms |= _squashed_dates(date.fromisoformat(key[len(DATE_PREFIX) :]))
    forms.discard("")
    moment = key if key.startswith((DATE_PREFIX, TIME_PREFIX)) else None
    return Needle(None, tuple(sorted(forms)), moment) if forms else None


@functools.lru_cache(maxsize=4096)
def _squashed_dates(day: date) -> frozenset[str]:
    return frozenset(squash(form) for form in date_forms(day))


def date_forms(day: date) -> set[str]:
    """The ways a page may print the date: the scorer's formats, day and month with or without a
    leading zero."""
    forms = set()
    for form in DATE_FORMATS:
        for day_form, month_form in itertools.product(("%d", str(day.day)), ("%m", str(day.month))):
            forms.add(day.strftime(form.replace("%d", day_form).replace("%m", month_form)))
    return forms


class Index:
    """A document's words numbered across its pages, with their lines, looked up by text and number."""

    def __init__(self, pages: list[Page]) -> None:
        self.words: list[Word] = []
        self.word_line: list[int] = []
        self.word_page: list[int] = []
        self.lines: list[tuple[int, ...]] = []
        self.line_page: list[int] = []
        self.sources: dict[int, Source] = {}
        self.by_text: dict[str, list[int]] = {}
        self.by_part: dict[str, list[tuple[int, tuple[int, int]]]] = {}
        self.by_number: dict[str, list[tuple[int, tuple[int, int] | None]]] = {}
        self.by_run: dict[str, list[tuple[int, ...]]] = {}
        self._found: dict[Needle, list[Place]] = {}
        by_text, by_number = self.by_text, self.by_number
        self.line_way: list[int] = []
        self.sizes: dict[int, tuple[float, float]] = {}
        for page in pages:
            self.sources[page.number] = page.source
            self.sizes[page.number] = (page.width, page.height)
            self.line_way += page.ways or (UPRIGHT,) * len(page.lines)
            base = len(self.words)
            for line in page.lines:
                ids = tuple(base + index for index in line)
                for key, start, end in line_runs([page.words[index] for index in line]):
                    self.by_run.setdefault(key, []).append(ids[start:end])
                self.lines.append(ids)
                self.line_page.append(page.number)
                self.word_line += [len(self.lines) - 1] * len(ids)
            self.words += page.words
            self.word_page += [page.number] * len(page.words)
            for word_id, word in enumerate(page.words, base):
                if word.key:
                    by_text.setdefault(word.key, []).append(word_id)
                if word.number is not None:
                    by_number.setdefault(word.number, []).append((word_id, None))
                if word.parts():
                    self._add_parts(word_id, word)
        # word_line was filled line by line and words appended in the same order: a page's words
        # are in reading order and its lines cover them in turn.
        self.position = {word_id: at for line in self.lines for at, word_id in enumerate(line)}
        self.line_lefts = [[self.words[word_id].bbox[0] for word_id in line] for line in self.lines]

    def _add_parts(self, word_id: int, word: Word) -> None:
        for start, end in word.parts():
            piece = word.text[start:end]
            if squash(piece):
                self.by_part.setdefault(squash(piece), []).append((word_id, (start, end)))
            number = number_key(piece)
            if number is not None and number != word.number:
                self.by_number.setdefault(number, []).append((word_id, (start, end)))

    @property
    def scanned(self) -> bool:
        """Whether some page has no text layer (then a value not found may be printed there)."""
        return any(source != "text" for source in self.sources.values())

    def source(self, place: Place) -> Source:
        return self.sources[place.page]

    def places(self, wanted: Needle) -> list[Place]:
        """Every place the needle is printed, in reading order (looked up once per needle: the
        placing and the grounding evidence both ask)."""
        known = self._found.get(wanted)
        if known is None:
            known = self._found[wanted] = self._look_up(wanted)
        return list(known)

    def _look_up(self, wanted: Needle) -> list[Place]:
        found: dict[tuple[int, int, tuple[int, int] | None], Place] = {}
        if wanted.number is not None:
            for word_id, part in self.by_number.get(wanted.number, ()):
                found.setdefault((word_id, word_id, part), self._place([word_id], part))
        for key in (wanted.number, wanted.moment):
            for words in self.by_run.get(key, ()) if key else ():
                found.setdefault((words[0], words[-1], None), self._place(list(words), None))
        for text in wanted.texts:
            for word_id, part in self.by_part.get(text, ()):
                found.setdefault((word_id, word_id, part), self._place([word_id], part))
            starts = 0
            for length in range(1, len(text) + 1):
                for word_id in self.by_text.get(text[:length], ()):
                    starts += 1
                    run = self._extend(word_id, text, length)
                    if run is not None:
                        found.setdefault((word_id, run[-1], None), self._place(run, None))
                if starts > _STARTS:
                    break
        return sorted(found.values(), key=lambda place: (place.first, place.part or (0, 0)))

    def _extend(self, first: int, text: str, done: int) -> list[int] | None:
        """The run of words from `first` that spells `text` (the first `done` characters spelt by
        `first`), or None."""
        run = [first]
        while done < len(text):
            following = self._following(run[-1], first, text[done:])
            if following is None:
                return None
            run.append(following)
            done += len(self.words[following].key)
        return run

    def _following(self, current: int, first: int, rest: str) -> int | None:
        """The word that continues a run: the next word on the line (punctuation-only words passed
        over), else on the next line of the page the word nearest the run's left edge."""
        line = self.lines[self.word_line[current]]
        at = self.position[current] + 1
        while at < len(line) and not self.words[line[at]].key:
            at += 1
        if at < len(line) and rest.startswith(self.words[line[at]].key):
            return line[at]
        below = self.word_line[current] + 1
        if below >= len(self.lines) or self.line_page[below] != self.word_page[current]:
            return None
        start, last = self.words[first].bbox, self.words[current].bbox
        height = max(last[3] - last[1], 1.0)
        lefts, line_below = self.line_lefts[below], self.lines[below]
        at = bisect.bisect_left(lefts, start[0])
        near = [i for i in (at - 1, at) if 0 <= i < len(lefts) and abs(lefts[i] - start[0]) <= 3 * height]
        if not near:
            return None
        nearest = line_below[min(near, key=lambda i: abs(lefts[i] - start[0]))]
        if self.words[nearest].bbox[1] - last[3] > 1.5 * height:
            return None
        return nearest if rest.startswith(self.words[nearest].key) else None

    def _place(self, run: list[int], part: tuple[int, int] | None) -> Place:
        first = run[0]
        if part is not None:
            box = span_box(self.words[first].chars[part[0] : part[1]])
        elif len(run) == 1:
            box = self.words[first].bbox  # what span_box of the one box gives
        else:
            box = span_box(self.words[word_id].bbox for word_id in run)
        page, line = self.word_page[first], self.word_line[first]
        way = self.line_way[line]
        return Place(page, line, first, run[-1], part, shown(box, way, *self.sizes[page]) if way else box, box)


_INDEXES: weakref.WeakKeyDictionary[PdfPages, Index] = weakref.WeakKeyDictionary()


def index_of(pages: PdfPages) -> Index:
    """The document's index, built once per `PdfPages` (every page read)."""
    known = _INDEXES.get(pages)
    if known is None:
        known = _INDEXES[pages] = Index(pages.pages())
    return known
