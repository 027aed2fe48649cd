"""The storage credentials a process holds in memory (a Ray worker's caller's), below both
`oeb.storage` and the Hub client (`oeb._hub`), which read them.

Credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `HF_TOKEN`, ...) never
travel in a Ray runtime environment, which Ray writes to every node's logs: a worker is handed the
driver's in a call (the values of its arguments) and holds them here only while its caller needs
them (`holding`), never in `os.environ`, which child processes inherit. docs/guarantees.md#secrets.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import fsspec  # type: ignore[import-untyped]  # fsspec ships no type information

_SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")
_held: dict[str, str] = {}
"""The credentials this process was handed (a Ray worker's caller's), used instead of its environment."""


def is_credential(name: str) -> bool:
    """Whether an `AWS_*`/`HF_*`/`OEB_*` variable holds a secret (a key, secret or token; not a file
    naming one): such a variable is handed to workers in a call, never through their environment."""
    return not name.endswith(("_FILE", "_PATH")) and any(word in name for word in _SECRET_WORDS)


def credentials() -> dict[str, str]:
    """The storage credentials of this process now (its environment's, else those it holds)."""
    here = {name: value for name, value in os.environ.items() if value and name.startswith(("AWS_", "HF_", "HUGGING"))}
    return {name: value for name, value in (_held | here).items() if is_credential(name)}


@contextlib.contextmanager
def holding(values: dict[str, str]) -> Iterator[None]:
    """Use the credentials `values` for storage inside the block, then drop them (and every client
    made with them): what a warm Ray worker does for each caller's batch."""
    hold(values)
    try:
        yield
    finally:
        hold({})


def hold(values: dict[str, str]) -> None:
    """Use the credentials `values` from now on, in memory only (never in `os.environ`, which child
    processes inherit); `{}` drops them, and the fsspec clients made with them."""
    if _held:
        for cls in set(fsspec.registry.values()):  # the filesystem classes imported (s3fs, hf, ...)
            cls.clear_instance_cache()
    _held.clear()
    _held.update({name: value for name, value in values.items() if value and is_credential(name)})


def hub_token() -> str | None:
    """The Hugging Face token this process holds, if any (None: huggingface_hub's own lookup)."""
    return _held.get("HF_TOKEN") or _held.get("HUGGING_FACE_HUB_TOKEN")


def held(name: str) -> str | None:
    """The value of the credential `name` this process holds, if any (its environment's is not read)."""
    return _held.get(name) or None
