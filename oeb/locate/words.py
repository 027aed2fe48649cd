"""A page as the locator reads it: words with their boxes, grouped into the lines the eye sees.

Words are split at whitespace and at `|` (a printed cell border); a word's `key` is what is left of
it for matching text (letters and digits, case and accents aside: what the scorer's folds keep) and
its `number` the canonical key of the number it prints, if any. Lines are words whose vertical
middles agree, left to right, whatever order the PDF wrote them in: a table row is one line even
when each cell is its own text object.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) in PDF points from the page's top-left corner."""
Source = Literal["text", "ocr", "none"]
"""Where a page's words come from: its text layer, Tesseract's reading of it, or nowhere (a scan)."""

_SPLIT = frozenset("|")
_PARTS = re.compile(r"[/:;=()\[\]]+")
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_LEAD = "([{\"'“‘$€£¥"
_TRAIL = ")]}\"'”’.,;:%*"


def squash(text: str) -> str:
    """Letters and digits only, accents and case aside (`"ACME-Tools, Inc."` -> `acmetoolsinc`)."""
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return "".join(c for c in text.casefold() if c.isalnum())


def number_key(text: str) -> str | None:
    """The canonical key (as the scorer writes a number's) of the number a word prints: signs,
    parentheses, currency marks, thousands separators and trailing punctuation read; None for a
    word that is no number or is zero-padded (`0042` is a code: the scorer keeps it as text)."""
    word = text.strip()
    negative = word.startswith("(") and word.endswith(")")
    word = word.lstrip(_LEAD).rstrip(_TRAIL).replace("\u2212", "-")
    if not _NUMBER.fullmatch(word):
        return None
    digits = word.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        return None
    value = float(word.replace(",", ""))
    if negative:
        value = -value
    return float_key(value)


def float_key(value: float) -> str:
    """A number's key as the scorer writes it: an integer without `.0`, else its repr."""
    return str(int(value)) if value.is_integer() else repr(value)


@dataclass(frozen=True)
class Word:
    """One printed word: its text, its boxes (one per character, for a part's box) and keys."""

    text: str
    chars: tuple[Box, ...]
    key: str
    number: str | None
    bbox: Box

    def parts(self) -> list[tuple[int, int]]:
        """The character ranges of the word's parts when `/ : ; = ( )` split it (`1500/15`,
        `Qty:12`); nothing for a word they do not split."""
        pieces = [(m.start(), m.end()) for m in re.finditer(r"[^/:;=()\[\]]+", self.text)]
        return pieces if len(pieces) > 1 else []


def span_box(boxes: Iterable[Box]) -> Box:
    """The box around some boxes (those with no width, such as a space's, aside when others have)."""
    boxes = list(boxes)
    kept = [box for box in boxes if box[2] > box[0]] or boxes
    return (min(b[0] for b in kept), min(b[1] for b in kept), max(b[2] for b in kept), max(b[3] for b in kept))


def make_word(text: str, chars: Sequence[Box]) -> Word:
    return Word(text, tuple(chars), squash(text), number_key(text), span_box(chars))


@dataclass(frozen=True)
class Page:
    """A page's words in reading order and its lines (each a run of indices into `words`)."""

    number: int
    width: float
    height: float
    source: Source
    words: tuple[Word, ...]
    lines: tuple[tuple[int, ...], ...]

    @property
    def has_text(self) -> bool:
        return bool(self.words)


def words_of(text: str, boxes: Sequence[Box]) -> list[Word]:
    """The words of a text layer: its characters split at whitespace and `|`, and where two
    neighbours stand apart (a gap wider than a character's height, or another baseline) though
    the PDF wrote no space between them."""
    words: list[Word] = []
    current: list[int] = []

    def close() -> None:
        if current:
            words.append(make_word("".join(text[i] for i in current), [boxes[i] for i in current]))
            current.clear()

    for index, char in enumerate(text):
        if char.isspace() or char in _SPLIT:
            close()
            continue
        box = boxes[index]
        if current:
            last = boxes[current[-1]]
            height = max(last[3] - last[1], box[3] - box[1], 1.0)
            middle, last_middle = (box[1] + box[3]) / 2, (last[1] + last[3]) / 2
            if box[0] - last[2] > height or abs(middle - last_middle) > height / 2 or box[2] < last[0]:
                close()
        current.append(index)
    close()
    return words


def lines_of(words: Sequence[Word]) -> tuple[tuple[Word, ...], tuple[tuple[int, ...], ...]]:
    """The words in reading order (top to bottom, each line left to right) and the lines.

    A word joins the line whose vertical middle is within half a word's height of its own."""
    if not words:
        return (), ()
    height = statistics.median(max(w.bbox[3] - w.bbox[1], 1.0) for w in words)
    ordered = sorted(words, key=lambda w: (w.bbox[1] + w.bbox[3]) / 2)
    groups: list[list[Word]] = []
    total = 0.0
    for word in ordered:
        centre = (word.bbox[1] + word.bbox[3]) / 2
        if groups and centre - total / len(groups[-1]) <= height / 2:
            groups[-1].append(word)
            total += centre
        else:
            groups.append([word])
            total = centre
    out: list[Word] = []
    lines: list[tuple[int, ...]] = []
    for group in groups:
        group.sort(key=lambda w: w.bbox[0])
        lines.append(tuple(range(len(out), len(out) + len(group))))
        out.extend(group)
    return tuple(out), tuple(lines)
