"""A page's words and lines worked out on arrays (`page_words`, the text layer's reader) are the
ones the per-character rules give: the rules are written out here one character at a time, as the
locator first applied them, and compared on drawn pages (spaces, `|`, zero-width boxes, a gap, a
baseline change, a character drawn to the left of the one before)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from oeb.locate.words import Box, Word, lines_of, make_word, page_words, span_box, words_of


def _words_one_by_one(text: str, boxes: Sequence[Box]) -> list[Word]:
    words: list[Word] = []
    current: list[int] = []

    def close() -> None:
        if current:
            words.append(make_word("".join(text[i] for i in current), [boxes[i] for i in current]))
            current.clear()

    for index, char in enumerate(text):
        if char.isspace() or char == "|":
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


def _lines_one_by_one(words: Sequence[Word]) -> tuple[tuple[Word, ...], tuple[tuple[int, ...], ...]]:
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


def _shown(words: Sequence[Word]) -> list[tuple[object, ...]]:
    return [(w.text, w.chars, w.key, w.number, w.bbox) for w in words]


@st.composite
def _page(draw: st.DrawFn) -> tuple[str, list[Box]]:
    """Characters on a few baselines, mostly left to right, some apart, some narrow, some drawn back."""
    size = draw(st.integers(0, 80))
    text = draw(st.text(alphabet="aZ09.,$-/:|  \u00a0\u2003\n", min_size=size, max_size=size))
    boxes: list[Box] = []
    x, line = 10.0, 0
    for char in text:
        line = draw(st.sampled_from([line, line, line, line + 1, max(0, line - 1)]))
        step = draw(st.sampled_from([5.0, 5.0, 5.0, 0.0, 30.0, -12.0]))
        tall = draw(st.sampled_from([10.0, 10.0, 0.5, 14.0]))
        top = 20.0 + 12.0 * line + draw(st.sampled_from([0.0, 0.0, 2.5, 7.0]))
        wide = 0.0 if step == 0.0 else 5.0
        boxes.append((0.0, 0.0, 0.0, 0.0) if char.isspace() else (x, top, x + wide, top + tall))
        x = max(0.0, x + step)
    return text, boxes


@settings(max_examples=300, deadline=None)
@given(_page())
def test_words_and_lines_worked_out_on_arrays_are_the_per_character_ones(page: tuple[str, list[Box]]) -> None:
    text, boxes = page
    expected = _words_one_by_one(text, boxes)
    assert _shown(words_of(text, boxes)) == _shown(expected)
    ordered, lines = page_words(text, boxes)
    expected_ordered, expected_lines = _lines_one_by_one(expected)
    assert _shown(ordered) == _shown(expected_ordered) and lines == expected_lines
    again, again_lines = lines_of(words_of(text, boxes))
    assert _shown(again) == _shown(ordered) and again_lines == lines
    for word in ordered:
        assert word.bbox == span_box(word.chars) and len(word.chars) == len(word.text)
