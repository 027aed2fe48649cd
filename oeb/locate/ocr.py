"""Reading a scanned page with Tesseract (Debian's `tesseract-ocr`, the binary on PATH).

A page is rendered at `SCALE` pixels per point, read once (`tesseract stdin stdout tsv`) and its
words kept in memory by the PDF's digest and page number, so a page viewed again, or by another
run's view of the same document, is not read twice.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from collections import OrderedDict

from oeb.locate.words import Box, Word, make_word

SCALE = 3.0
"""Pixels per PDF point of the image Tesseract reads (216 dpi: 10-pt text about 30 pixels high)."""
TIMEOUT = 120.0
"""Seconds one page may take before the reading is given up (the page is then left as a scan)."""
_KEPT = 256
_CACHE: OrderedDict[tuple[str, int], tuple[Word, ...]] = OrderedDict()
_LOCK = threading.Lock()


def tesseract() -> str | None:
    """The Tesseract binary, or None when it is not installed."""
    return shutil.which("tesseract")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cached(key: tuple[str, int]) -> tuple[Word, ...] | None:
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    return None


def read(key: tuple[str, int], png: bytes) -> tuple[Word, ...]:
    """The words Tesseract reads on the page image (boxes in PDF points), cached under `key`;
    OcrFailed in one line when Tesseract is missing or fails."""
    known = cached(key)
    if known is not None:
        return known
    binary = tesseract()
    if binary is None:
        raise OcrFailed("Tesseract is not installed (Debian: apt-get install tesseract-ocr)")
    try:
        done = subprocess.run(
            [binary, "stdin", "stdout", "--psm", "3", "tsv"],
            input=png,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise OcrFailed(f"Tesseract did not read the page: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise OcrFailed(f"Tesseract failed (exit {done.returncode}): {last}")
    words = tuple(parse_tsv(done.stdout.decode("utf-8", errors="replace")))
    with _LOCK:
        _CACHE[key] = words
        while len(_CACHE) > _KEPT:
            _CACHE.popitem(last=False)
    return words


def parse_tsv(tsv: str) -> list[Word]:
    """Tesseract's TSV (level 5 rows are words) as words in PDF points; each character's box is
    its share of the word's width (Tesseract gives no character boxes in TSV)."""
    words = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        left, top, width, height = (float(cell) / SCALE for cell in cells[6:10])
        for text in cells[11].replace("|", " ").split():
            words.append(make_word(text, _shares(text, (left, top, left + width, top + height))))
    return words


def _shares(text: str, box: Box) -> list[Box]:
    step = (box[2] - box[0]) / max(len(text), 1)
    return [(box[0] + i * step, box[1], box[0] + (i + 1) * step, box[3]) for i in range(len(text))]


class OcrFailed(Exception):
    """Tesseract could not read a page (missing, failed, too slow)."""
