"""A run folder's batches: `batches/<name>.json`, one per batch a provider accepted (or may have
accepted) and oeb has not finished with. Each names the provider's batch (its handle) and maps every
custom id to its document and that document's asking so far (`oeb.systems.Asking.to_json`: attempts,
cost, first start).

The file is written before the create is sent, as an intent (its handle empty): a create whose answer
is lost (a reset, a timeout, a proxy's 5xx after the provider took it), or a kill while it is on the
wire, leaves the intent, and the batch is looked up by its `tag` before anything is sent again."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, TypedDict

from oeb import _json, storage
from oeb.errors import OebError, RunFolderError
from oeb.systems import Asking

FOLDER = "batches"
SUFFIX = ".json"


class Held(TypedDict):
    """One request of a batch: its document and the asking it was sent with."""

    doc_id: str
    asking: dict[str, Any]


class BatchFile(TypedDict):
    """`batches/<name>.json`."""

    name: str
    provider: str
    handle: dict[str, Any]
    """The provider's answer to the create, holding its id under `batch_id` (never a key); empty
    while the create has no answer (an intent)."""
    tag: str
    """The mark the batch was created with, by which the provider's batch list shows it."""
    sent: float
    """When the create was sent (wall clock)."""
    requests: int
    bytes: int
    worst_usd: float | None
    """Its requests' worst-case cost at the batch price, counted against the budget until answered."""
    documents: dict[str, Held]
    """By custom id."""


def new_name() -> str:
    """A name that sorts by sending time: later batches hold a document sent again."""
    return f"{time.time():.6f}-{secrets.token_hex(3)}"


def intent(batch: BatchFile) -> bool:
    """Whether the batch's create has no answer yet: it may or may not have been accepted."""
    return "batch_id" not in batch["handle"]


def describe(batch: BatchFile, state: str, spent: float | None, now: float) -> str:
    """A batch for the plan and the live view: requests, state, age, spend."""
    age = max(0.0, now - batch["sent"])
    shown = f"{age:.0f} s" if age < 120 else f"{age / 60:.0f} min" if age < 7200 else f"{age / 3600:.1f} h"
    spend = "spend unknown" if spent is None else f"${spent:,.2f} spent"
    worst = batch["worst_usd"]
    bound = "" if worst is None else f" of at most ${worst:,.2f}"
    if intent(batch):
        return (
            f"batch {batch['tag']} (its create unanswered: looked up before anything is sent again): "
            f"{batch['requests']} requests, {shown} old{bound}"
        )
    return f"batch {batch['handle']['batch_id']}: {batch['requests']} requests, {state}, {shown} old, {spend}{bound}"


def _url(folder_url: str, name: str) -> str:
    return storage.join(folder_url, FOLDER, f"{name}{SUFFIX}")


def write(folder_url: str, batch: BatchFile) -> None:
    """Write a batch down, atomically (a reader sees the old file or the new)."""
    storage.write_json(_url(folder_url, batch["name"]), batch)


def remove(folder_url: str, name: str) -> None:
    storage.remove(_url(folder_url, name))


def live(folder_url: str) -> list[BatchFile]:
    """Every batch written down, oldest first. A file that cannot be read stops the run: its
    documents may be paid for and answered, and sending them again would pay twice."""
    root = storage.join(folder_url, FOLDER)
    names = sorted(n for n in storage.list_files(root) if n.endswith(SUFFIX) and "/" not in n and n[0] != ".")
    found = []
    for name, content in storage.read_many(root, names).items():
        where = f"{FOLDER}/{name} in {folder_url}"
        if isinstance(content, OebError):
            raise RunFolderError(f"{where} cannot be read ({content}); fix access to the run folder and resume")
        try:
            batch = _json.loads(content.decode("utf-8"))
            for held in batch["documents"].values():
                Asking.from_json(held["asking"])
            if not isinstance(batch["handle"], dict) or not isinstance(batch.setdefault("tag", batch["name"]), str):
                raise TypeError("its handle is not an object")
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError, OebError) as error:
            raise RunFolderError(
                f"{where} is not a batch oeb wrote ({error}); restore it, or remove it to send its documents again "
                "(paying for them twice if the provider answers them)"
            ) from None
        found.append(batch)
    return sorted(found, key=lambda batch: batch["name"])
