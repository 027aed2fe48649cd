"""A page as the locator reads it: words with their boxes, grouped into the lines the eye sees.

Words are split at whitespace and at `|` (a printed cell border); a word's `key` is what is left of
it for matching text (letters and digits, case and accents aside: what the scorer's folds keep) and
its `number` the canonical key of the number it prints, if any. Lines are words whose vertical
middles agree, left to right, whatever order the PDF wrote them in: a table row is one line even
when each cell is its own text object.
"""

from __future__ import annotations

import functools
import itertools
import re
import statistics
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) in PDF points from the page's top-left corner."""
Source = Literal["text", "ocr", "none"]
"""Where a page's words come from: its text layer, Tesseract's reading of it, or nowhere (a scan)."""

_SPLIT = frozenset("|")
WHITESPACE = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
"""The characters `str.isspace` calls whitespace, as code points (none is past U+3000)."""
_SPACES = np.append(WHITESPACE, [ord(c) for c in _SPLIT]).astype(np.uint32)
"""What separates words: whitespace and `|`."""
_PIECES = re.compile(r"[^/:;=()\[\]]+")
_PART_MARKS = frozenset("/:;=()[]")
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_LEAD = "([{\"'“‘$€£¥"
_TRAIL = ")]}\"'”’.,;:%*"


def squash(text: str) -> str:
    """Letters and digits only, accents and case aside (`"ACME-Tools, Inc."` -> `acmetoolsinc`)."""
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return "".join(c for c in text.casefold() if c.isalnum())


def number_key(text: str) -> str | None:
    """The canonical key (as the scorer writes a number's) of the number a word prints: signs (a
    trailing minus too), parentheses, currency marks, thousands separators and trailing punctuation
    read; None for a word that is no number or is zero-padded (`0042` is a code: the scorer keeps
    it as text)."""
    word = text.strip()
    negative = word.startswith("(") and word.endswith(")")
    word = word.lstrip(_LEAD).rstrip(_TRAIL).replace("\u2212", "-")
    if word.endswith("-") and "." in word:  # `45.00-`: an accountant's minus, read so by the scorer
        negative, word = not negative, word[:-1]
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


class Word:
    """One printed word: its text, keys and box, and its characters' boxes (`chars`, for a part's
    box). Read-only. The characters' boxes stay in the page's array until asked for: a dense page
    has ten thousand characters and only a split word's are ever read."""

    __slots__ = ("_boxes", "_start", "bbox", "key", "number", "text")

    def __init__(
        self, text: str, key: str, number: str | None, bbox: Box, boxes: NDArray[np.float64], start: int = 0
    ) -> None:
        self.text, self.key, self.number, self.bbox = text, key, number, bbox
        self._boxes, self._start = boxes, start  # the characters' boxes: rows start.. of an (n, 4) array

    @property
    def chars(self) -> tuple[Box, ...]:
        """One box per character of the text."""
        rows = self._boxes[self._start : self._start + len(self.text)].tolist()
        return tuple((x0, y0, x1, y1) for x0, y0, x1, y1 in rows)

    def parts(self) -> tuple[tuple[int, int], ...]:
        """The character ranges of the word's parts when `/ : ; = ( )` split it (`1500/15`,
        `Qty:12`); nothing for a word they do not split."""
        return _parts(self.text)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Word):
            return NotImplemented
        return (self.text, self.key, self.number, self.bbox, self.chars) == (
            other.text,
            other.key,
            other.number,
            other.bbox,
            other.chars,
        )

    def __hash__(self) -> int:
        return hash((self.text, self.bbox))

    def __repr__(self) -> str:
        fields = f"text={self.text!r}, chars={self.chars!r}, key={self.key!r}, number={self.number!r}"
        return f"Word({fields}, bbox={self.bbox!r})"


def span_box(boxes: Iterable[Box]) -> Box:
    """The box around some boxes (those with no width, such as a space's, aside when others have)."""
    boxes = list(boxes)
    kept = [box for box in boxes if box[2] > box[0]] or boxes
    return (min(b[0] for b in kept), min(b[1] for b in kept), max(b[2] for b in kept), max(b[3] for b in kept))


def make_word(text: str, chars: Sequence[Box]) -> Word:
    """A word from its text and one box per character (as OCR reads it)."""
    return Word(text, *_keys(text), span_box(chars), np.asarray(chars, dtype=np.float64).reshape(-1, 4))


@dataclass(frozen=True)
class Page:
    """A page's words in reading order and its lines (each a run of indices into `words`)."""

    number: int
    width: float
    height: float
    source: Source
    words: tuple[Word, ...]
    lines: tuple[tuple[int, ...], ...]
    ways: tuple[int, ...] = ()
    """Per line, the way it reads as shown (`turns.py`; none: every line upright): its words'
    boxes are in that way's upright frame."""

    @property
    def has_text(self) -> bool:
        return bool(self.words)


def words_of(text: str, boxes: Sequence[Box] | NDArray[np.float64]) -> list[Word]:
    """The words of a text layer: its characters split at whitespace and `|`, and where two
    neighbours stand apart (a gap wider than a character's height, or another baseline) though
    the PDF wrote no space between them. `boxes`: one per character of `text` (an (n, 4) array
    or boxes); the splits and word boxes are worked out on the whole page at once (a dense page
    has ten thousand characters)."""
    split = _split(text, boxes)
    return [] if split is None else split.words(range(len(split.starts)))


def page_words(
    text: str, boxes: Sequence[Box] | NDArray[np.float64]
) -> tuple[tuple[Word, ...], tuple[tuple[int, ...], ...]]:
    """`lines_of(words_of(text, boxes))`, the same words and lines, with the lines worked out on
    the words' boxes as arrays (each word made once, in reading order)."""
    split = _split(text, boxes)
    if split is None:
        return (), ()
    x0, y0, _, y1 = split.bounds
    height = statistics.median(np.maximum(y1 - y0, 1.0).tolist())
    centres = (y0 + y1) / 2
    order = np.argsort(centres, kind="stable")  # stable: as lines_of's sort
    group = np.empty(len(order), dtype=np.intp)
    number, count, total = -1, 0, 0.0
    for at, centre in enumerate(centres[order].tolist()):
        if count and centre - total / count <= height / 2:
            count += 1
            total += centre
        else:
            number, count, total = number + 1, 1, centre
        group[at] = number
    reading = order[np.lexsort((x0[order], group))]  # by line, then left to right (stable)
    sizes = np.bincount(group).tolist()
    firsts = itertools.accumulate(sizes, initial=0)
    lines = tuple(tuple(range(first, first + size)) for first, size in zip(firsts, sizes, strict=False))
    return tuple(split.words(reading.tolist())), lines


@dataclass(frozen=True)
class _Split:
    """A page's characters split into words: the characters' boxes, each word's first and past-last
    character and its box's four sides."""

    text: str
    boxes: NDArray[np.float64]
    starts: NDArray[np.intp]
    ends: NDArray[np.intp]
    bounds: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]

    def words(self, numbers: Iterable[int]) -> list[Word]:
        """The words numbered, in that order."""
        starts, ends = self.starts.tolist(), self.ends.tolist()
        word_boxes: list[Box] = list(zip(*(column.tolist() for column in self.bounds), strict=True))
        words = []
        for number in numbers:
            start = starts[number]
            word = self.text[start : ends[number]]
            key, key_number = _keys(word)
            words.append(Word(word, key, key_number, word_boxes[number], self.boxes, start))
        return words


def _split(text: str, boxes: Sequence[Box] | NDArray[np.float64]) -> _Split | None:
    if not text:
        return None
    box = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    kept = ~np.isin(codes, _SPACES)
    if not kept.any():
        return None
    x0, y0, x1, y1 = box[:, 0], box[:, 1], box[:, 2], box[:, 3]
    heights = y1 - y0
    height = np.maximum(np.maximum(heights[:-1], heights[1:]), 1.0)  # pair (i - 1, i) at i - 1
    middles = (y0 + y1) / 2
    apart = (x0[1:] - x1[:-1] > height) | (np.abs(middles[1:] - middles[:-1]) > height / 2) | (x1[1:] < x0[:-1])
    starts_here = kept.copy()
    starts_here[1:] &= ~kept[:-1] | apart
    starts = np.flatnonzero(starts_here)
    ends_here = kept.copy()
    ends_here[:-1] &= ~kept[1:] | apart
    ends = np.flatnonzero(ends_here) + 1
    wide = x1 > x0  # span_box's rule: boxes without width aside when the word has others
    left, top = _spans(np.minimum, x0, wide, np.inf, starts, ends), _spans(np.minimum, y0, wide, np.inf, starts, ends)
    right = _spans(np.maximum, x1, wide, -np.inf, starts, ends)
    bottom = _spans(np.maximum, y1, wide, -np.inf, starts, ends)
    return _Split(text, box, starts, ends, (left, top, right, bottom))


def _spans(
    reduce: np.ufunc,
    column: NDArray[np.float64],
    wide: NDArray[np.bool_],
    empty: float,
    starts: NDArray[np.intp],
    ends: NDArray[np.intp],
) -> NDArray[np.float64]:
    """Per word (characters starts[i]..ends[i]), `reduce` of `column` over its characters with
    width, or over all of them when none has."""
    at = np.ravel(np.column_stack((starts, ends)))  # reduceat over [start, end), every other result
    padded = np.append(column, empty)
    narrow = reduce.reduceat(padded, at)[::2]
    widest = reduce.reduceat(np.append(np.where(wide, column, empty), empty), at)[::2]
    has_wide = np.logical_or.reduceat(np.append(wide, False), at)[::2]
    return np.where(has_wide, widest, narrow)


@functools.lru_cache(maxsize=1 << 16)
def _keys(text: str) -> tuple[str, str | None]:
    """A word's matching key and number key (kept: a document prints the same words again and again)."""
    return squash(text), number_key(text)


@functools.lru_cache(maxsize=1 << 16)
def _parts(text: str) -> tuple[tuple[int, int], ...]:
    if not any(c in _PART_MARKS for c in text):
        return ()
    pieces = tuple((m.start(), m.end()) for m in _PIECES.finditer(text))
    return pieces if len(pieces) > 1 else ()


def lines_of(words: Sequence[Word]) -> tuple[tuple[Word, ...], tuple[tuple[int, ...], ...]]:
    """The words in reading order (top to bottom, each line left to right) and the lines.

    A word joins the line whose vertical middle is within half a word's height of its own."""
    if not words:
        return (), ()
    boxes = [word.bbox for word in words]
    height = statistics.median([max(box[3] - box[1], 1.0) for box in boxes])
    centres = [(box[1] + box[3]) / 2 for box in boxes]
    groups: list[list[int]] = []
    total = 0.0
    for number in sorted(range(len(words)), key=centres.__getitem__):  # stable: as sorting the words
        centre = centres[number]
        if groups and centre - total / len(groups[-1]) <= height / 2:
            groups[-1].append(number)
            total += centre
        else:
            groups.append([number])
            total = centre
    out: list[Word] = []
    lines: list[tuple[int, ...]] = []
    for group in groups:
        group.sort(key=lambda number: boxes[number][0])
        lines.append(tuple(range(len(out), len(out) + len(group))))
        out.extend(words[number] for number in group)
    return tuple(out), tuple(lines)
