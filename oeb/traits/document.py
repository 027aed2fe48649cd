"""What one document is like, from its PDF, its gold and its schema: the raw facts the traits are
bucketed from (`oeb.traits.table`).

The PDF is read with PDFium (pypdfium2): its page count, how many of its pages carry a text layer
(at least `MIN_TEXT_CHARS` characters other than spaces: a page number alone is not a text layer) and
the language of that text. A file PDFium cannot open is `damaged`: its PDF facts are unknown (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pypdfium2  # type: ignore[import-untyped]

from oeb.locate.pdfium import PDFIUM as LOCATOR_PDFIUM
from oeb.traits.language import UNKNOWN, language

PDFIUM = LOCATOR_PDFIUM
"""PDFium is not thread-safe: every call into it holds a lock, the process's one (oeb.locate.pdfium's,
which `oeb view`'s renderer and locator hold too) unless the caller gives its own."""

MIN_TEXT_CHARS = 8
MAX_PAGES_READ = 50
"""Text is read from at most this many pages; a longer document's text layer is judged on them."""


@dataclass(frozen=True)
class Facts:
    """`pages` and `text_pages` (None when the PDF cannot be read), the text's `language`, the number of
    gold leaves `gold_values` and rows of the largest gold array `array_items` (None without a gold),
    the schema's nesting `schema_depth`, and whether the PDF was `damaged`."""

    pages: int | None
    text_pages: int | None
    read_pages: int | None
    language: str
    gold_values: int | None
    array_items: int | None
    schema_depth: int
    damaged: bool


def pdf_facts(
    data: bytes | None, lock: AbstractContextManager[Any] = PDFIUM
) -> tuple[int | None, int | None, int | None, str, bool]:
    """(pages, pages with text, pages read, language, damaged) of a PDF's bytes; None: no file."""
    if data is None:
        return None, None, None, UNKNOWN, False
    texts = []
    with lock:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError:
            return None, None, None, UNKNOWN, True
        try:
            pages = len(document)
            for index in range(min(pages, MAX_PAGES_READ)):
                page = document[index]
                textpage = page.get_textpage()
                texts.append(textpage.get_text_range())
                textpage.close()
                page.close()
        except pypdfium2.PdfiumError:
            return None, None, None, UNKNOWN, True
        finally:
            document.close()
    with_text = [text for text in texts if sum(not char.isspace() for char in text) >= MIN_TEXT_CHARS]
    return pages, len(with_text), len(texts), language("\n".join(with_text)), False


def leaves(value: Any) -> int:
    """The gold's leaves: every scalar (null included) under objects and arrays."""
    if isinstance(value, dict):
        return sum(leaves(item) for item in value.values())
    if isinstance(value, list):
        return sum(leaves(item) for item in value)
    return 1


def largest_array(value: Any) -> int:
    """The number of items of the longest array anywhere in the gold (0 when it holds none)."""
    if isinstance(value, dict):
        return max((largest_array(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return max([len(value), *(largest_array(item) for item in value)])
    return 0


def schema_depth(schema: Mapping[str, Any]) -> int:
    """How deeply the schema nests objects and arrays: 1 for flat fields, +1 per object or array level."""

    def depth(node: Any, seen: int) -> int:
        if not isinstance(node, Mapping) or seen > 64:  # a $ref cycle or hostile nesting stops here
            return 0
        below = [depth(child, seen + 1) for child in (node.get("properties") or {}).values()]
        items = node.get("items")
        if isinstance(items, Mapping):
            below.append(depth(items, seen + 1))
        for key in ("anyOf", "oneOf", "allOf"):
            below += [depth(option, seen + 1) - 1 for option in node.get(key) or [] if isinstance(option, Mapping)]
        return 1 + max(below, default=0)

    return max(1, depth(schema, 0) - 1)
