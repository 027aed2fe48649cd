"""Words a line prints apart that the scorer reads as one value: each run is indexed under the
scorer's own canonical key of its text, so it is found for exactly the values the scorer treats as
equal to it.

- thousands grouped by spaces: `1 234 567.89`, `2 500`;
- a sign, a currency mark or parentheses set apart from the number: `- 45.00`, `( 45.00 )`,
  `- $ 45.00` (a minus between two numbers, `10.00 - 20.00`, is a range, not a sign);
- an ISO date and its time: `2024-03-05 10:00` (and the one word `2024-03-05T00:00:00`, which the
  scorer reads as that day, or as that moment for a value with a time).

Words join only on one line and one space apart (at most half a line's height between them): two
cells of a table, set wider apart, are never one value. The words of a run are still found on
their own (`45.00` in `- 45.00`, as `500` in `2 500`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from oeb.locate.words import Word, number_key
from oeb.scoring.canonical import DATE_PREFIX, TIME_PREFIX, canonical_key

_NUMBER_KEY = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
"""A canonical key that is a number's."""
_GROUP_LEAD = re.compile(r"[(\[$€£¥+\-\u2212]?[1-9]\d{0,2}")
_GROUP = re.compile(r"\d{3}(?:\.\d+)?[)\].,;:%*]?")
"""A space-grouped number: a lead of 1-3 digits (a sign or currency mark before it), then 3-digit
groups, the last one with its fraction."""
_LEAD_MARK = re.compile(r"[(+\-\u2212\u2013$]+")
"""A word of signs, opening parentheses and dollars only: what the scorer reads before a number."""
_TRAIL_MARK = re.compile(r"\)+")
_MINUS = frozenset("-\u2212\u2013")
_MARKS_READ = 2
"""Mark words read before a number (`- $ 45.00`)."""
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_CLOCK = re.compile(r"\d{2}:\d{2}\S*")
_CLOSING = ".,;"
"""Punctuation after a date and time that ends the sentence or the list, not the value."""


def spaced(left: Word, right: Word) -> bool:
    """Whether two words on a line are one space apart (not two table cells side by side)."""
    return right.bbox[0] - left.bbox[2] <= 0.5 * max(left.bbox[3] - left.bbox[1], 1.0)


def is_number_key(key: str) -> bool:
    return _NUMBER_KEY.fullmatch(key) is not None


def line_runs(words: list[Word]) -> Iterator[tuple[str, int, int]]:
    """Each run of a line's words (`words[start:end]`) read as one value, with its canonical key."""
    yield from _groups(words)
    yield from _signed(words)
    yield from _moments(words)


def _groups(words: list[Word]) -> Iterator[tuple[str, int, int]]:
    at = 0
    while at < len(words):
        end = at + 1
        if _GROUP_LEAD.fullmatch(words[at].text):
            while end < len(words) and _GROUP.fullmatch(words[end].text) and spaced(words[end - 1], words[end]):
                end += 1
        if end - at > 1:
            number = number_key("".join(word.text for word in words[at:end]))
            if number is not None:
                yield number, at, end
        at = end


def _signed(words: list[Word]) -> Iterator[tuple[str, int, int]]:
    """A number word with the mark words set a space before it and the closing parentheses after,
    where the scorer reads them together as another number than the word's own (`- 45.00` is -45;
    `+ 45.00` and `- 45`, which the scorer reads as 45, add nothing)."""
    for at, word in enumerate(words):
        if word.number is None:
            continue
        first = at
        while first > 0 and at - first < _MARKS_READ and _marks_before(words, first - 1):
            first -= 1
        last = at + 1
        if last < len(words) and _TRAIL_MARK.fullmatch(words[last].text) and spaced(words[at], words[last]):
            last += 1
        widest: dict[str, tuple[int, int]] = {}
        for start in range(first, at + 1):
            for end in range(last, at, -1):
                if (start, end) == (at, at + 1):
                    continue
                key = canonical_key(" ".join(word.text for word in words[start:end]))
                if is_number_key(key) and key != word.number and key not in widest:
                    widest[key] = (start, end)  # the widest span first: a key once, not once per span
        for key, (start, end) in widest.items():
            yield key, start, end


def _marks_before(words: list[Word], at: int) -> bool:
    """Whether `words[at]` is a mark word read with the word after it: one space before it, and a
    minus not between two numbers."""
    mark = words[at]
    if not _LEAD_MARK.fullmatch(mark.text) or not spaced(mark, words[at + 1]):
        return False
    if any(c in _MINUS for c in mark.text) and at > 0:
        before = words[at - 1]
        return before.number is None or not spaced(before, mark)
    return True


def _moments(words: list[Word]) -> Iterator[tuple[str, int, int]]:
    """An ISO date with its time: one word (`2024-03-05T10:00:00`) or a date and a time one space
    apart, keyed as the scorer keys it (a day at midnight is that day's date)."""
    for at, word in enumerate(words):
        if not _ISO_DAY.match(word.text):
            continue
        if len(word.text) > 10:
            key = canonical_key(word.text.rstrip(_CLOSING))
            if key.startswith((DATE_PREFIX, TIME_PREFIX)):
                yield key, at, at + 1
        elif at + 1 < len(words) and _CLOCK.fullmatch(words[at + 1].text) and spaced(word, words[at + 1]):
            key = canonical_key(f"{word.text} {words[at + 1].text.rstrip(_CLOSING)}")
            if key.startswith(TIME_PREFIX):  # at midnight it is the date, which the date word prints
                yield key, at, at + 2
