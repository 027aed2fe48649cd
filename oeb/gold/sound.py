"""Documents whose accepted entries were found sound against their gold and schema, remembered across
commands, so a regrade under an unchanged file does not validate the same values again (about half a
second per regrade for a thousand entries; docs/adjudication.md, "Performance").

A document is remembered by a digest of everything its check reads: its entries as written, its
row's schema, its gold and the checking code (with jsonschema's version). Any change to one of them
is another digest, checked afresh. Only sound documents are remembered; a problem is found again
every time. The digests live in the user's cache folder (`$XDG_CACHE_HOME/oeb`, else `~/.cache/oeb`),
never in a run folder or dataset, which a stranger may have written.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from oeb.dataset import Row
from oeb.gold.entries import Entry, to_json

KEPT = 20_000
"""Digests kept, the newest: a few regrade's worth of documents of many files."""


def _file() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "oeb" / "adjudications-sound.json"


@functools.cache
def _checker() -> str:
    """The checking code's digest: a changed check remembers nothing from before."""
    import oeb.schema_refs
    import oeb.scoring.schema

    here = Path(__file__).parent
    digest = hashlib.sha256(metadata.version("jsonschema").encode())
    paths = [here / name for name in ("check.py", "validate.py", "apply.py", "entries.py", "sound.py")]
    for path in [*paths, Path(oeb.schema_refs.__file__), Path(oeb.scoring.schema.__file__)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def digest(entries: Sequence[Entry], row: Row, gold: dict[str, Any]) -> str:
    """What one document's check reads, as one digest."""
    text = json.dumps(
        [_checker(), row.doc_id, [to_json(entry) for entry in entries], row.schema, gold],
        sort_keys=True,
        ensure_ascii=False,
        default=repr,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def known() -> dict[str, None]:
    """The digests remembered, oldest first (none when the file is missing or unreadable)."""
    try:
        held = json.loads(_file().read_text())
    except (OSError, ValueError):
        return {}
    return dict.fromkeys(key for key in held if isinstance(key, str)) if isinstance(held, list) else {}


def remember(before: dict[str, None], new: Iterable[str]) -> None:
    """Add `new` digests to those read (`before`), the oldest dropped past `KEPT`; written atomically,
    and not at all where the cache folder cannot be written (the check is then only repeated)."""
    added = [key for key in new if key not in before]
    if not added:
        return
    kept = [*before, *added][-KEPT:]
    path = _file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".adjudications-sound-")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(kept, out)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
