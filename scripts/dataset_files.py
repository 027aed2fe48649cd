"""What the dataset scripts share: a tiny PDF writer and a writer of the published dataset layout.

Layout (docs/datasets.md): `manifest.parquet` (doc_id, suite, doc_path, gt_path, schema as JSON
bytes, source_id), `pdfs/<doc_id>.pdf`, `gold/<doc_id>.json`. Everything is written through
`oeb.storage`, so the destination may be a folder or an `s3://` prefix.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from oeb import storage

_LINES_PER_PAGE = 60
_WRITE_THREADS = 8


@dataclass(frozen=True)
class Document:
    """One dataset row with its files."""

    doc_id: str
    suite: str
    source_id: str
    schema: dict[str, Any]
    gold: dict[str, Any]
    pdf: bytes


def pdf_bytes(lines: Sequence[str]) -> bytes:
    """A valid PDF 1.4 with the lines in 10-pt Helvetica, 60 lines a page (standard font, none embedded).

    Deterministic: no dates or ids, so the same lines always give the same bytes.
    """
    pages = [lines[start : start + _LINES_PER_PAGE] for start in range(0, len(lines), _LINES_PER_PAGE)] or [[]]
    streams = [
        b"BT /F1 10 Tf 12 TL 50 800 Td " + b" ".join(b"(%s) Tj T*" % _pdf_string(line) for line in page) + b" ET"
        for page in pages
    ]
    return _pdf(streams)


Placed = tuple[float, float, str]
"""A text placed on a page: x and y of its baseline's start, in points from the top-left corner."""


def placed_pdf_bytes(pages: Sequence[Sequence[Placed]], *, size: float = 10) -> bytes:
    """A PDF whose pages hold each text where it is placed (Helvetica, `size` points), each text
    its own text object, written in the order given (a table may be written column by column)."""
    streams = [
        b"\n".join(
            b"BT /F1 %g Tf %.2f %.2f Td (%s) Tj ET" % (size, x, _HEIGHT - y, _pdf_string(text)) for x, y, text in page
        )
        for page in pages
    ] or [b""]
    return _pdf(streams)


_HEIGHT = 842


def _pdf(streams: Sequence[bytes]) -> bytes:
    """A PDF of A4 pages with these content streams (Helvetica as /F1)."""
    first_page = 4
    page_ids = [first_page + 2 * index for index in range(len(streams))]
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % i for i in page_ids), len(streams)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for page_id, stream in zip(page_ids, streams, strict=True):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 %d] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (_HEIGHT, page_id + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _pdf_string(line: str) -> bytes:
    encoded = line.encode("cp1252", errors="replace")
    return encoded.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def write_dataset(url: str, documents: Iterable[Document]) -> int:
    """Write the documents in the published layout under `url`; returns the number of rows.

    Documents are consumed a batch at a time, so a large corpus never sits in memory whole.
    """
    columns: dict[str, list[Any]] = {
        name: [] for name in ("doc_id", "suite", "doc_path", "gt_path", "schema", "source_id")
    }

    def write_files(document: Document) -> None:
        storage.write_bytes(storage.join(url, f"pdfs/{document.doc_id}.pdf"), document.pdf)
        storage.write_json(storage.join(url, f"gold/{document.doc_id}.json"), document.gold)

    with ThreadPoolExecutor(max_workers=_WRITE_THREADS) as pool:
        for batch in itertools.batched(documents, _WRITE_THREADS * 2):
            list(pool.map(write_files, batch))
            for document in batch:
                columns["doc_id"].append(document.doc_id)
                columns["suite"].append(document.suite)
                columns["doc_path"].append(f"pdfs/{document.doc_id}.pdf")
                columns["gt_path"].append(f"gold/{document.doc_id}.json")
                columns["schema"].append(json.dumps(document.schema).encode())
                columns["source_id"].append(document.source_id)
    manifest = pa.table(
        {
            name: pa.array(values, type=pa.binary() if name == "schema" else pa.string())
            for name, values in columns.items()
        }
    )
    storage.write_parquet(storage.join(url, "manifest.parquet"), manifest)
    return len(columns["doc_id"])
