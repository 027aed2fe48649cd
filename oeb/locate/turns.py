"""Text that runs sideways or upside down on the page as shown (a table turned a quarter on a
portrait page, a rotated column heading): read in its own upright frame, outlined where it is shown.

Each character's direction is where its neighbour in the text stands (right, down, left or up);
the characters of each direction are read as words and lines turned upright, so a sideways row is
one line, and a place's box is turned back onto the page as shown.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from oeb.locate.words import WHITESPACE, Box, Word, page_words

UPRIGHT, DOWNWARD, UPSIDE_DOWN, UPWARD = 0, 1, 2, 3
"""The way a text reads on the page as shown: left to right, top to bottom (turned a quarter
clockwise), right to left (a half turn), bottom to top (a quarter counter-clockwise)."""


def directions(text: str, boxes: NDArray[np.float64]) -> NDArray[np.intp]:
    """Per character, the way its line of the text layer (what PDFium ends with a line break)
    mostly reads: from each character towards the next (neighbours more than two characters apart,
    or less than a third of one, as an accent over its letter, do not count). A line without such
    a pair reads as the line before it (upright at the page's start)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)[: len(boxes)]
    kept = ~np.isin(codes, WHITESPACE)
    centres = np.column_stack(((boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2))
    step = centres[1:] - centres[:-1]
    size = np.maximum(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]), 1.0)
    pair_size = np.maximum(size[1:], size[:-1])
    distance = np.maximum(np.abs(step[:, 0]), np.abs(step[:, 1]))
    counts = kept[1:] & kept[:-1] & (distance <= 2 * pair_size) & (distance >= pair_size / 3)
    across = np.abs(step[:, 0]) >= np.abs(step[:, 1])
    way = np.where(across, np.where(step[:, 0] >= 0, UPRIGHT, UPSIDE_DOWN), np.where(step[:, 1] > 0, DOWNWARD, UPWARD))
    line = np.cumsum(codes == ord("\n"))
    lines = int(line[-1]) + 1 if len(line) else 1
    votes = np.bincount(line[:-1][counts] * 4 + way[counts], minlength=4 * lines).reshape(lines, 4)
    ways = np.where(votes.any(axis=1), votes.argmax(axis=1), -1)
    known = np.where(ways >= 0, np.arange(lines), -1)
    np.maximum.accumulate(known, out=known)  # a line without a pair: as the last one with one
    ways = np.where(known >= 0, ways[np.maximum(known, 0)], UPRIGHT)
    return ways[line].astype(np.intp)


def upright(boxes: NDArray[np.float64], way: int, width: float, height: float) -> NDArray[np.float64]:
    """The boxes (as shown, an (n, 4) array) in the upright frame of a text reading `way`."""
    x0, y0, x1, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    if way == DOWNWARD:
        return np.column_stack((y0, width - x1, y1, width - x0))
    if way == UPWARD:
        return np.column_stack((height - y1, x0, height - y0, x1))
    if way == UPSIDE_DOWN:
        return np.column_stack((width - x1, height - y1, width - x0, height - y0))
    return boxes


def shown(box: Box, way: int, width: float, height: float) -> Box:
    """A box of a text reading `way`, from its upright frame back onto the page as shown."""
    x0, y0, x1, y1 = box
    if way == DOWNWARD:
        return (width - y1, x0, width - y0, x1)
    if way == UPWARD:
        return (y0, height - x1, y1, height - x0)
    if way == UPSIDE_DOWN:
        return (width - x1, height - y1, width - x0, height - y0)
    return box


def turned_words(
    text: str, boxes: NDArray[np.float64], width: float, height: float
) -> tuple[tuple[Word, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The page's words and lines (`page_words`), each direction's read upright (upright text
    first), and each line's direction; the words' boxes are in their line's upright frame."""
    ways = directions(text, boxes)
    present = sorted(set(ways.tolist()))
    if present == [UPRIGHT]:
        words, lines = page_words(text, boxes)
        return words, lines, (UPRIGHT,) * len(lines)
    all_words: list[Word] = []
    all_lines: list[tuple[int, ...]] = []
    line_ways: list[int] = []
    for way in present:
        only = "".join(c if w == way else " " for c, w in zip(text, ways.tolist(), strict=False)) + text[len(ways) :]
        words, lines = page_words(only, upright(boxes, way, width, height))
        base = len(all_words)
        all_words += words
        all_lines += [tuple(base + index for index in line) for line in lines]
        line_ways += [way] * len(lines)
    return tuple(all_words), tuple(all_lines), tuple(line_ways)
