"""An adjudication file where it lives, read and written back: a local path or s3:// through
`oeb.storage` (an atomic replace), or a file of a Hub dataset repository (`hf://datasets/ORG/NAME/...`)
written as one commit whose parent is the commit it was read at, so a push in between is refused
rather than overwritten (docs/adjudication.md). `oeb adjudicate` and the review page write through it."""

from __future__ import annotations

import dataclasses

from oeb.errors import AdjudicationError, PublishError
from oeb.gold import entries
from oeb.gold.entries import Adjudications
from oeb.publish.destination import Destination, open_destination


def read_file(url: str, missing_ok: bool = False) -> tuple[Adjudications, Destination | None]:
    """The file (an empty one when `missing_ok` and there is none) and, for an `hf://` file, the Hub
    folder pinned at the commit it was read at: `write_file` commits on that parent, so a push in between is
    refused rather than overwritten."""
    if not url.startswith("hf://"):
        return (entries.load_or_empty(url) if missing_ok else entries.load(url)), None
    folder, name = url.rsplit("/", 1)
    try:
        at = open_destination(folder)
    except PublishError as error:
        raise AdjudicationError(f"cannot open {url}: {error}") from None
    pinned = at.location(name)
    read = entries.load_or_empty(pinned) if missing_ok else entries.load(pinned)
    return dataclasses.replace(read, url=url), at


def write_file(adjudications: Adjudications, url: str, message: str, at: Destination | None = None) -> None:
    """Write the file: atomically through `oeb.storage`, or on the Hub (`hf://datasets/ORG/NAME/...`) as
    one commit whose parent is the revision it was read at (`at`, from `read_file`; a push in between is
    refused)."""
    if not url.startswith("hf://"):
        entries.save(adjudications, url)
        return
    text = entries.dump(adjudications)
    entries.parse(text, url)  # never write what could not be read back
    folder, name = url.rsplit("/", 1)
    try:
        (at or open_destination(folder)).write({name: text.encode()}, message)
    except PublishError as error:
        raise AdjudicationError(f"cannot write {url}: {error}") from None
