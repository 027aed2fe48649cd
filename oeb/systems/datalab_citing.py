"""Datalab's citations and scores, read from its kept raw answer into the shared shape
(`oeb.grounding.cite.Cite`; docs/grounding.md says how to turn them on and what they cost). Pure
functions of the raw answer, like `oeb.systems._citing`: a reader fixed later grounds old runs again.

- Citations: beside each extracted value, `<key>_citations` lists the ids of the blocks it was read
  from, in every extraction mode (`/page/0/Text/3`: the page from 0, the block type, its number). The
  blocks are in the same answer's `json` output (asked with `output_format=json`): a tree of
  `children` from each page block down, every block with its `id`, `bbox` [x0, y0, x1, y1] from the
  page's top-left and the same box as a 4-corner `polygon`. Datalab's docs do not name the boxes'
  unit, so a block's box is read against its own page block's box: a share of the page, whatever the
  unit (PDF points or pixels). Without a page block the box is taken as PDF points, then checked.
- Scores: `<key>_score` = `{"score": 1..5, "reasoning"}` (1 "no clear evidence", 5 "clear match with
  strong citation support"), which arrive on polls after the request completed. The confidence is
  (score - 1) / 4: the five levels spread evenly over [0, 1], 1 -> 0, 3 -> 0.5, 5 -> 1.
A value cited by several blocks is cited by the first; a citation that names no page is kept as given
so the checks drop and count it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

from oeb.grounding.cite import Box, Cite, address_of, polygon_box
from oeb.systems._citing import Unit

CITATIONS = "_citations"
SCORE = "_score"
_PAGE = re.compile(r"^/page/(\d+)/")
_TAG = re.compile(r"<[^>]*>")

Path = tuple[str | int, ...]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_score(key: str, value: Any, siblings: dict[str, Any]) -> bool:
    """Whether `key` is a `<base>_score` object beside its base key (the scores, not a value)."""
    return (
        key.endswith(SCORE)
        and key[: -len(SCORE)] in siblings
        and isinstance(value, dict)
        and "score" in value
        and set(value) <= {"score", "reasoning"}
    )


def without_scores(value: Any) -> Any:
    """The extraction with every `<key>_score` object beside its key taken out (the scorer drops the
    `_citations` and `_meta` sidecars itself; a score object would otherwise grade as an invented field)."""
    if isinstance(value, dict):
        return {k: without_scores(v) for k, v in value.items() if not is_score(k, v, value)}
    if isinstance(value, list):
        return [without_scores(v) for v in value]
    return value


def _blocks(node: Any) -> Iterator[dict[str, Any]]:
    """Every block of the `json` output's tree (any object with a string `id`), depth first."""
    if isinstance(node, dict):
        if isinstance(node.get("id"), str):
            yield node
        for key in ("children", "pages", "blocks"):
            yield from _blocks(node.get(key))
    elif isinstance(node, list):
        for item in node:
            yield from _blocks(item)


def _box(block: dict[str, Any]) -> Box | None:
    bbox = block.get("bbox")
    if isinstance(bbox, list) and len(bbox) == 4 and all(_number(v) for v in bbox):
        return (float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3]))
    polygon = block.get("polygon")
    return polygon_box(polygon) if isinstance(polygon, list) else None


def _text(block: dict[str, Any]) -> str | None:
    shown = block.get("html")
    if not isinstance(shown, str):
        return None
    text = " ".join(html.unescape(_TAG.sub(" ", shown)).split())
    return text or None


class Blocks:
    """The `json` output's blocks by id, and each page's own box by page index (from 0)."""

    def __init__(self, tree: Any) -> None:
        if isinstance(tree, str):
            try:
                tree = json.loads(tree)
            except ValueError:
                tree = None
        self.by_id: dict[str, dict[str, Any]] = {}
        self.pages: dict[int, Box] = {}
        for block in _blocks(tree):
            self.by_id.setdefault(block["id"], block)
            match = _PAGE.match(block["id"])
            box = _box(block)
            if match and block.get("block_type") == "Page" and box is not None:
                self.pages.setdefault(int(match.group(1)), box)

    def cite(self, address: str, block_id: Any, confidence: Any) -> Cite:
        """The cite of one value by its first cited block: the page from the id, the box from the block
        (a share of its page when the page block gives the page's box)."""
        match = _PAGE.match(block_id) if isinstance(block_id, str) else None
        if match is None:  # not a block id: kept as given, so the checks drop and count it
            return Cite(address, str(block_id), None, None, confidence)
        index = int(match.group(1))
        block = self.by_id.get(block_id)
        box = _box(block) if block is not None else None
        text = _text(block) if block is not None else None
        page = self.pages.get(index)
        unit: Unit = "pt"
        if box is not None and page is not None and page[2] > page[0] and page[3] > page[1]:
            width, height = page[2] - page[0], page[3] - page[1]
            box = ((box[0] - page[0]) / width, (box[1] - page[1]) / height,
                   (box[2] - page[0]) / width, (box[3] - page[1]) / height)  # fmt: skip
            unit = "fraction"
        return Cite(address, index + 1, box, text, confidence, unit=unit)


def confidence(score: Any) -> Any:
    """A 1-5 score as a confidence in [0, 1], (score - 1) / 4; anything else is kept as given, so a
    score outside 1-5 or not a number is dropped and counted by the checks."""
    value = score.get("score") if isinstance(score, dict) else score
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (float(value) - 1.0) / 4.0
    return value


def _values(node: Any, path: Path) -> Iterator[tuple[Path, Any, dict[str, Any]]]:
    """Each scalar value of the extraction with its path and the object that holds its sidecars."""
    if isinstance(node, dict):
        for key, value in node.items():
            if (key.endswith(CITATIONS) and key.removesuffix(CITATIONS) in node) or is_score(key, value, node):
                continue  # a sidecar, not a value
            if isinstance(value, dict | list):
                yield from _values(value, (*path, key))
            else:
                yield (*path, key), value, node
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, dict | list):
                yield from _values(item, (*path, index))


def cites(raw: Any, *, places: bool = True, scores: bool = True) -> list[Cite]:
    """Each value's first cited block (with `places`) and score (with `scores`), from the raw answer."""
    found = raw if isinstance(raw, dict) else {}
    extraction = found.get("extraction_schema_json")
    if isinstance(extraction, str):
        try:
            extraction = json.loads(extraction)
        except ValueError:
            return []
    blocks = Blocks(found.get("json")) if places else None
    out = []
    for path, _, holder in _values(extraction, ()):
        key = str(path[-1])
        cited = holder.get(key + CITATIONS) if blocks is not None else None
        score = holder.get(key + SCORE) if scores else None
        score = score if is_score(key + SCORE, score, holder) else None
        first = cited[0] if isinstance(cited, list) and cited else None
        if first is None and score is None:
            continue
        address = address_of(path)
        level = confidence(score) if score is not None else None
        if blocks is not None and first is not None:
            out.append(blocks.cite(address, first, level))
        else:
            out.append(Cite(address, None, None, None, level))
    return out
