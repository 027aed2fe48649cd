"""Job handles in a run folder: `jobs/<id>.json`, one per document a job vendor is working on.

A job vendor (`type(adapter).submits`) is paid when the job is submitted, long before its answer
comes back. The actor that submitted the job writes the document's asking (`oeb.systems.Asking.to_json`,
which holds the job's handle and when the document was first asked) here the moment the vendor
answers, before it even tells the driver, and the driver removes it once the record is saved; so
whatever stops the run in between (kill -9 of the run or of the actor, Ctrl-C, a lost node) leaves
the job named in the folder, and a replaced actor or `oeb resume` collects it instead of paying for
it again (docs/crash-costs.md). Every write is atomic, on disk or on `s3://` (`oeb.storage`);
`pending` lists the folder once, `read` reads one document's.
"""

from __future__ import annotations

import json

from oeb import _json, storage
from oeb.errors import OebError, StorageNotFoundError, StorageOutage
from oeb.systems import Asking

FOLDER = "jobs"
SUFFIX = ".json"


def _url(folder_url: str, doc_id: str) -> str:
    return storage.join(folder_url, FOLDER, f"{doc_id}{SUFFIX}")


def write(folder_url: str, doc_id: str, asking_json: dict[str, object]) -> None:
    """Write down the document's submitted job (atomically: a reader sees the old file or the new)."""
    storage.write_json(_url(folder_url, doc_id), asking_json)


def remove(folder_url: str, doc_id: str) -> None:
    """Forget the document's job once its record is saved (no file is not an error)."""
    storage.remove(_url(folder_url, doc_id))


def read(folder_url: str, doc_id: str) -> Asking | None:
    """The document's written-down job, if any (an actor that died after writing it could not say
    so); a file that cannot be read gives a fresh asking recorded as resubmitted (`Asking.unreadable`)."""
    try:
        content = storage.read_bytes(_url(folder_url, doc_id))
    except StorageNotFoundError:
        return None
    except StorageOutage:
        raise  # storage down is no unreadable handle: submitting again would buy the job twice
    except OebError as error:
        return Asking.unreadable(str(error))
    saved = _parse(f"{FOLDER}/{doc_id}{SUFFIX}", content)
    return Asking.unreadable(saved) if isinstance(saved, str) else Asking.from_json(saved)


def _parse(name: str, content: bytes) -> dict[str, object] | str:
    """A saved asking (JSON), or why `name` is not one."""
    try:
        value: dict[str, object] = _json.loads(content.decode("utf-8-sig"))
        Asking.from_json(value)
    except UnicodeDecodeError as error:
        return f"{name} is not UTF-8 ({error})"
    except json.JSONDecodeError as error:
        return f"{name} is not JSON ({error})"
    except OebError as error:
        return f"{name}: {error}"
    return value


def pending(folder_url: str) -> dict[str, dict[str, object] | str]:
    """Every job still written down: doc_id -> the saved asking (JSON), or, for a file that cannot
    be read or is not an asking, the reason (the engine then asks that document again and records
    it as resubmitted). One listing of the folder, then the files read concurrently."""
    root = storage.join(folder_url, FOLDER)
    names = [
        name
        for name in storage.list_files(root)
        if name.endswith(SUFFIX) and "/" not in name and not name.startswith(".")
    ]
    found: dict[str, dict[str, object] | str] = {}
    for name, content in storage.read_many(root, names).items():
        if isinstance(content, StorageOutage):
            raise content
        doc_id = name.removesuffix(SUFFIX)
        found[doc_id] = str(content) if isinstance(content, OebError) else _parse(f"{FOLDER}/{name}", content)
    return found
