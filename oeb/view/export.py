"""`oeb view RUN... --export DIR`: the app as static files, for a bucket, GitHub Pages or a Hugging Face
Space, where no oeb runs.

The pages are the server's shell marked `static`, so the front end reads the API's answers as files:

    index.html, fields.html, documents.html, audit.html    the top views (?run=LABEL&suite=S in the query)
    documents/<DOC_ID>.html, schema/<DOC_ID>.html
    api/runs.json                             GET /api/runs
    api/gold.json                             GET /api/gold
    api/runs/<N>/fields.json                  GET /api/fields?run=LABEL (N: the run's place in runs.json)
    api/runs/<N>/fields/<S>.json              ... &suite=SUITE (S: the suite's place in the leaderboard)
    api/runs/<N>/documents.json               GET /api/documents?run=LABEL
    api/runs/<N>/documents/<DOC_ID>.json      GET /api/documents/DOC_ID?run=LABEL (its first slice)
    api/runs/<N>/documents/<DOC_ID>/<K>.json  ... &offset=K (each further slice, K: the `next` before)
    api/runs/<N>/verdicts/<DOC_ID>/<I>.json   GET /api/verdicts/DOC_ID?run=LABEL&n=I (a verdict listed `cut`)
    api/runs/<N>/boxes/<DOC_ID>/<P>.json      GET /api/boxes/DOC_ID?run=LABEL&page=P (and <P>/<K>.json: &offset=K)
    api/runs/<N>/schema/<DOC_ID>.json         GET /api/schema/DOC_ID?run=LABEL
    api/audit.json                            GET /api/audit (with --audit)
    slices.html, api/slices.json              GET /api/slices (the traits)
    calibration.html, api/calibration.json    GET /api/calibration
    api/slices/<T>.json                       GET /api/slices?trait=TRAIT (T: the trait's place in slices.json)
    api/runs/<N>/slices/<T>/<V>.json          GET /api/fields?run=LABEL&trait=TRAIT&value=VALUE (V: the value's
                                              place in the trait's values in slices.json)
    api/mix.json                              GET /api/mix (with --mix or --mix-from)
    adjudications.html, api/adjudications.json  GET /api/adjudications (with an adjudication file shown)
    pages/<DOC_ID>/<PAGE>.png                 GET /pages/DOC_ID/PAGE.png

A DOC_ID is a file name (the manifest checks make it one), so it names its files as it is; URLs carry
it percent-encoded, which a static server decodes back to the file's name.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePosixPath

from oeb import storage
from oeb.errors import PageTooLarge, ReportError, StorageFormatError, UsageError
from oeb.view.api import View
from oeb.view.app import STATIC, shell
from oeb.view.gold import gold_json
from oeb.view.paging import Query, to_json
from oeb.view.review import Review

_THREADS = 4
"""Documents exported at once: rendering and writing overlap (PDFium and the writes release the GIL)."""


MARKER = ".oeb-view-export"
"""The list of files an export wrote (JSON), kept in its folder: the next export into that folder
removes those it does not write again, and a folder without it that holds anything is refused."""


def _earlier(folder: str) -> list[str]:
    """The files an earlier export wrote into `folder` (none for an empty or new folder); a folder
    holding files oeb did not write is refused, so an export never mixes with or overwrites them."""
    listing = storage.list_files(folder)
    if not listing:
        return []
    try:
        earlier = storage.read_json(storage.join(folder, MARKER)) if MARKER in listing else None
    except StorageFormatError:
        earlier = None
    if not isinstance(earlier, list) or not all(isinstance(path, str) for path in earlier):
        raise UsageError(
            f"{folder} holds {len(listing)} files that oeb view did not write; export into an empty or new folder"
        )
    return [path for path in earlier if path in listing and path != MARKER]


def export(view: View, folder: str, review: Review | None = None) -> int:
    """Write the whole app under `folder` (local or s3://); returns the number of files written. The
    files of an earlier export there that this one does not write are removed (no stale pages). With
    the adjudication file the view is read under (`review`, read-only), its list of entries too."""
    earlier = _earlier(folder)
    pages = _Pages(view.audit, review is not None)
    written: list[str] = []  # list.append is atomic: the documents' threads share it

    def put(path: str, data: bytes) -> None:
        if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:  # ids are checked on loading
            raise ReportError(f"the export file {path!r} would land outside {folder}; nothing more is written")
        storage.write_bytes(storage.join(folder, path), data)
        written.append(path)

    for name, data in STATIC.items():
        put(f"static/{name}", data)
    tops = (
        ("board", "index.html"),
        ("fields", "fields.html"),
        ("document_list", "documents.html"),
        ("audit", "audit.html"),
        ("calibration", "calibration.html"),
    )
    for page, path in tops:
        if page != "audit" or view.audit:
            put(path, pages.html(page))
    put("api/runs.json", to_json(view.runs_json()))
    put("api/gold.json", to_json(gold_json(view.board)))
    if review is not None:
        put("adjudications.html", pages.html("adjudications"))
        put("api/adjudications.json", to_json(review.adjudications_json()))
    put("api/calibration.json", to_json(view.calibration_json()))
    if view.audit:
        put("api/audit.json", to_json(view.audit_json()))
    for number, label in enumerate(view.labels):
        put(f"api/runs/{number}/fields.json", to_json(view.fields_json(label)))
        put(f"api/runs/{number}/documents.json", to_json(view.documents_json(label)))
        for index, suite in enumerate(view.board["suites"]):
            put(f"api/runs/{number}/fields/{index}.json", to_json(view.fields_json(label, suite)))
    _slices(view, put, pages)
    with ThreadPoolExecutor(_THREADS) as pool:
        for done in [pool.submit(_document, view, doc_id, put, pages) for doc_id in view.doc_ids]:
            done.result()
    storage.write_json(storage.join(folder, MARKER), sorted(written))
    for stale in set(earlier) - set(written):
        storage.remove(storage.join(folder, stale))
    return len(written) + 1  # and the list of them


class _Pages:
    """The shell of each exported page: static, with the gold audit and the adjudications list in its
    menu when the export has them."""

    def __init__(self, audit: bool, adjudications: bool) -> None:
        self.audit, self.review = audit, "read" if adjudications else ""

    def html(self, page: str, root: str = "", doc_id: str | None = None) -> bytes:
        text = shell(page, static=True, root=root, doc_id=doc_id, audit=self.audit, review=self.review)
        return text.encode()


def _document(view: View, doc_id: str, put: Callable[[str, bytes], None], pages: _Pages) -> None:
    """One document's pages, its rendered PDF pages and every run's answers about it."""
    for page in ("documents", "schema"):
        put(f"{page}/{doc_id}.html", pages.html(page, "../", doc_id))
    for number, label in enumerate(view.labels):
        _answers(view, f"api/runs/{number}", label, doc_id, put)
    for number in range(1, view.page_count(doc_id) + 1):
        try:
            put(f"pages/{doc_id}/{number}.png", view.page_png(doc_id, number))
        except PageTooLarge:  # left out: the page shows no image, as the server answers 404 for it
            continue


def _answers(view: View, base: str, label: str, doc_id: str, put: Callable[[str, bytes], None]) -> None:
    """A run's answers about a document: every slice of its verdicts in its own order (the page
    filters what it reads), the whole verdict of each listed `cut`, its schema, each page's boxes."""
    offset: int | None = 0
    while offset is not None:
        answer = view.document_json(label, doc_id, Query(offset=offset))
        put(f"{base}/documents/{doc_id}" + (f"/{offset}.json" if offset else ".json"), to_json(answer))
        for verdict in answer["verdicts"]:
            if "cut" in verdict:
                whole = view.verdict_json(label, doc_id, verdict["n"])
                put(f"{base}/verdicts/{doc_id}/{verdict['n']}.json", to_json(whole))
        offset = answer["next"]
    put(f"{base}/schema/{doc_id}.json", to_json(view.schema_json(label, doc_id)))
    for page in range(1, view.page_count(doc_id) + 1):
        offset = 0
        while offset is not None:
            boxes = view.boxes_json(label, doc_id, page, offset)
            put(f"{base}/boxes/{doc_id}/{page}" + (f"/{offset}.json" if offset else ".json"), to_json(boxes))
            offset = boxes["next"]


def _slices(view: View, put: Callable[[str, bytes], None], pages: _Pages) -> None:
    """The slices page and its answers: the traits, each trait's slices, the mix when one is shown."""
    put("slices.html", pages.html("slices"))
    listed = view.slicing.traits_json(view)
    put("api/slices.json", to_json(listed))
    for number, entry in enumerate(listed["traits"]):
        put(f"api/slices/{number}.json", to_json(view.slicing.slices_json(view, entry["trait"])))
        for run, label in enumerate(view.labels):
            for index, value in enumerate(entry["values"]):
                rows = view.slicing.fields_json(view, label, entry["trait"], value)
                put(f"api/runs/{run}/slices/{number}/{index}.json", to_json(rows))
    if listed["mix"]:
        put("api/mix.json", to_json(view.slicing.mix_json(view)))
