"""One thin layer over fsspec: every file oeb reads or writes is named by a URL.

A URL is a plain path, `file://...`, `s3://bucket/prefix` or `hf://datasets/org/name[@revision]/...`
(read-only). Going through this module is what makes a run folder on S3 behave like one on disk:
writes are atomic (a reader never sees half a file), a folder is listed with one listing call, and
S3 is configured from the standard AWS environment (`AWS_ENDPOINT_URL`, `AWS_PROFILE`, keys), so
MinIO, R2 and moto work unchanged. Every call goes through the one retry policy (`oeb._retry`):
transient faults are tried again for up to `storage.retry_s`, and every failure is a `StorageError`
naming the URL and the fix (`StorageDown` past the retry time, `DiskFull` for a full or read-only disk).

Credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `HF_TOKEN`, ...) never
travel in a Ray runtime environment, which Ray writes to every node's logs: a worker is handed the
driver's in a call (the values of its arguments) and holds them in memory only while its caller needs
them (`holding`), as storage options given to fsspec and huggingface_hub; without any, a worker uses
its node's own credential chain (instance role, mounted profile). docs/guarantees.md#secrets. The
credentials held are `oeb._credentials`'s, below this module and the Hub's (`oeb._hub`), which both read them.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import fsspec  # type: ignore[import-untyped]  # fsspec and pyarrow ship no type information
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]
from fsspec.spec import AbstractFileSystem  # type: ignore[import-untyped]

from oeb import _json, _retry
from oeb._credentials import credentials, held, hold, holding, hub_token, is_credential
from oeb.errors import (
    DiskFull,
    HubError,
    StorageAccessError,
    StorageError,
    StorageFormatError,
    StorageNotFoundError,
    StorageURLError,
)

__all__ = [
    "credentials",
    "exists",
    "filesystem",
    "hold",
    "holding",
    "hub_token",
    "is_credential",
    "is_dir",
    "is_local",
    "join",
    "list_files",
    "local_path",
    "pinned",
    "read_bytes",
    "read_json",
    "read_jsonl",
    "read_many",
    "read_parquet",
    "read_text",
    "remove",
    "retried",
    "storage_errors",
    "write_bytes",
    "write_json",
    "write_jsonl",
    "write_parquet",
    "write_text",
]

_READ_ONLY_PROTOCOLS = frozenset({"hf", "http", "https"})
_S3_CREDENTIALS = (("key", "AWS_ACCESS_KEY_ID"), ("secret", "AWS_SECRET_ACCESS_KEY"), ("token", "AWS_SESSION_TOKEN"))
_READ_THREADS = 8


def _protocol(url: str) -> str:
    scheme, separator, _ = url.partition("://")
    return scheme.lower() if separator else "file"


def is_local(url: str) -> bool:
    """True for a plain path or a `file://` URL: the only storage where a file has an OS path."""
    return _protocol(url) in ("file", "local")


def join(url: str, *parts: str) -> str:
    """The URL of a relative POSIX path under the folder `url`."""
    return "/".join([url.rstrip("/"), *(part.strip("/") for part in parts if part)])


def local_path(url: str) -> Path:
    """The OS path of a local URL (a plain path or `file://`)."""
    if not is_local(url):
        raise StorageURLError(f"{url} is not on local disk; give a folder path or a file:// URL")
    return Path(fsspec.core.strip_protocol(url)).absolute()


def _storage_options(protocol: str) -> dict[str, Any]:
    """Options read from the environment (and the credentials held) at call time, so a changed
    variable takes effect at once.

    They are also part of fsspec's instance-cache key: a new `AWS_ENDPOINT_URL` gets a new client.
    """
    if protocol in ("s3", "s3a"):
        # Listings are never cached: other processes (Ray workers) write the same folders.
        # Request timeouts on and the client's own retries off: `oeb._retry` is the one policy.
        options: dict[str, Any] = {"use_listings_cache": False, **_retry.client_options()}
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            options["client_kwargs"] = {"endpoint_url": endpoint}
        if os.environ.get("AWS_PROFILE"):
            options["profile"] = os.environ["AWS_PROFILE"]
        for option, name in (
            ("key", "AWS_ACCESS_KEY_ID"),
            ("secret", "AWS_SECRET_ACCESS_KEY"),
            ("token", "AWS_SESSION_TOKEN"),
        ):
            if held(name):
                options[option] = held(name)
        return options
    if protocol == "hf":
        _retry.hub_timeouts()
        options = {"endpoint": os.environ["HF_ENDPOINT"]} if os.environ.get("HF_ENDPOINT") else {}
        return options | ({"token": hub_token()} if hub_token() else {})
    return {}


def _hub_url(url: str) -> str:
    """An `hf://` URL in the form `HfFileSystem` reads (a revision given after the folder moved to
    after the repo's name); the Hub client is imported only for such a URL. A URL of another shape
    is left for fsspec to read or refuse."""
    from oeb._hub import parse_location

    try:
        return parse_location(url).url()
    except HubError:
        return url


def pinned(url: str) -> str:
    """The URL of what `url` names now: for `hf://`, at the commit its revision names (so every later
    read sees that one commit, whatever is pushed meanwhile); any other URL as given."""
    if _protocol(url) != "hf":
        return url
    from oeb._hub import commit_of, parse_location

    location = parse_location(url)
    return location.url(commit_of(location))


def filesystem(url: str) -> tuple[AbstractFileSystem, str]:
    """The configured fsspec filesystem for `url` (endpoint, profile, token) and the path in it."""
    protocol = _protocol(url)
    if protocol == "hf":
        url = _hub_url(url)
    try:
        fs, path = fsspec.core.url_to_fs(url, **_storage_options(protocol))
    except (ValueError, ImportError) as error:
        raise StorageURLError(
            f"{url}: oeb cannot use the {protocol}:// protocol ({error}); give a folder, a file://, s3:// or hf:// URL"
        ) from error
    if protocol in ("s3", "s3a"):
        fs.retries = _retry.S3FS_ATTEMPTS
    return fs, str(path)


def _is_boto_error(error: BaseException) -> bool:
    """True for botocore's own errors (no credentials, endpoint unreachable), without importing it."""
    exceptions = sys.modules.get("botocore.exceptions")
    return exceptions is not None and isinstance(error, exceptions.BotoCoreError)


def _storage_error(url: str, action: str, error: BaseException) -> StorageError | None:
    """The `StorageError` naming the URL and the fix for an error of fsspec, s3fs or the OS."""
    if isinstance(error, StorageError):
        return error
    if _retry.fault(error) == "full":
        return DiskFull(f"cannot {action} {url}: {error}; the disk is full or read-only: free space or fix the mount")
    if isinstance(error, FileNotFoundError):
        return StorageNotFoundError(f"cannot {action} {url}: no such file or folder; check the URL")
    if isinstance(error, IsADirectoryError | NotADirectoryError):
        return StorageNotFoundError(f"cannot {action} {url}: a folder and a file are mixed up; check the URL")
    if isinstance(error, PermissionError):
        return StorageAccessError(
            f"cannot {action} {url}: permission denied; check the credentials "
            "(AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) or the folder's permissions"
        )
    if isinstance(error, OSError) or _is_boto_error(error):
        return StorageAccessError(
            f"cannot {action} {url}: {error}; check the endpoint (AWS_ENDPOINT_URL), the credentials and the network"
        )
    return None


@contextlib.contextmanager
def storage_errors(url: str, action: str) -> Iterator[None]:
    """Storage failures inside the block (fsspec's, botocore's) raised as one-line `StorageError`s."""
    try:
        yield
    except Exception as error:
        reported = _storage_error(url, action, error)
        if reported is None or reported is error:
            raise
        raise reported from error


def retried[T](url: str, action: str, attempt: Callable[[], T]) -> T:
    """`attempt()` under the retry policy (`oeb._retry`), its failures as one-line `StorageError`s."""
    with storage_errors(url, action):
        return _retry.call(attempt, action, url)


def exists(url: str) -> bool:
    """True when a file or a folder exists at the URL."""
    fs, path = filesystem(url)
    return retried(url, "look up", lambda: bool(fs.exists(path)))


def is_dir(url: str) -> bool:
    """True when the URL is a folder (on S3: a prefix with at least one object under it)."""
    fs, path = filesystem(url)
    return retried(url, "look up", lambda: bool(fs.isdir(path)))


def list_files(url: str) -> dict[str, int]:
    """Every file under the folder `url` (relative POSIX path -> size), from one recursive listing.

    A folder that does not exist lists as empty, as an S3 prefix with no objects does.
    """
    fs, path = filesystem(url)

    def listing() -> dict[str, Any]:
        return dict(fs.find(path, detail=True)) if fs.isdir(path) else {}

    found = retried(url, "list", listing)
    root = path.rstrip("/") + "/"
    return {name.removeprefix(root): int(info.get("size") or 0) for name, info in found.items()}


def read_bytes(url: str) -> bytes:
    """The whole content of a file."""
    fs, path = filesystem(url)
    return retried(url, "read", functools.partial(_cat, fs, path))


def read_many(folder: str, paths: Sequence[str]) -> dict[str, bytes | StorageError]:
    """Read many files under one folder concurrently (object storage answers one file per request).

    A file that cannot be read maps to its `StorageError` instead of stopping the others, so a
    caller can report every bad file by name. (Not `fs.cat(list)`: it would glob ids with brackets.)
    """
    fs, root = filesystem(folder)

    def read(path: str) -> bytes | StorageError:
        try:
            return retried(join(folder, path), "read", functools.partial(_cat, fs, join(root, path)))
        except StorageError as error:
            return error

    if len(paths) <= 1:  # one file (a document's gold, as grading reads it): no pool to start and join
        return {path: read(path) for path in paths}
    with ThreadPoolExecutor(max_workers=_READ_THREADS) as pool:
        return dict(zip(paths, pool.map(read, paths), strict=True))


def _cat(fs: AbstractFileSystem, path: str) -> bytes:
    return bytes(fs.cat_file(path))


def read_text(url: str) -> str:
    """A UTF-8 text file (a leading byte-order mark is dropped)."""
    data = read_bytes(url)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise StorageFormatError(f"{url} is not UTF-8 text ({error}); re-save it as UTF-8") from error


def read_json(url: str) -> Any:
    """A JSON file, parsed."""
    try:
        return _json.loads(read_text(url))
    except json.JSONDecodeError as error:
        raise StorageFormatError(f"{url} is not JSON ({error}); fix or rewrite the file") from error


def read_jsonl(url: str) -> list[Any]:
    """A JSON Lines file: one parsed value per non-blank line."""
    values = []
    for number, line in enumerate(read_text(url).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(_json.loads(line))
        except json.JSONDecodeError as error:
            raise StorageFormatError(f"{url} line {number} is not JSON ({error}); fix or rewrite the file") from error
    return values


def read_parquet(url: str, columns: Sequence[str] | None = None, filters: Any = None) -> pa.Table:
    """A parquet file as a pyarrow table (only `columns`, and only the rows `filters` keeps, in
    pyarrow's form, e.g. `[("id", "==", doc_id)]`: row groups whose statistics exclude them are not
    decoded). The file is read whole first, under the retry policy: a read cut short is read again,
    never taken for a broken file."""
    data = read_bytes(url)
    try:
        return pq.read_table(pa.BufferReader(data), columns=columns, filters=filters)
    except pa.ArrowInvalid as error:
        missing = _missing_columns(data, columns)
        if missing:
            raise StorageFormatError(
                f"{url} has no column {', '.join(missing)}; rewrite it as oeb writes it"
            ) from error
        reason = " ".join(str(error).split())  # one line: Arrow's messages span several
        raise StorageFormatError(f"{url} is not a parquet file ({reason}); rewrite it as parquet") from error


def _missing_columns(data: bytes, columns: Sequence[str] | None) -> list[str]:
    """The `columns` a readable parquet file lacks (none when it is no parquet file at all)."""
    try:
        names = set(pq.read_schema(pa.BufferReader(data)).names)
    except pa.ArrowException:
        return []
    return [name for name in columns or () if name not in names]


def write_bytes(url: str, data: bytes) -> None:
    """Write a whole file atomically: a temporary file renamed into place on local disk, a single
    PUT on object storage (a multipart upload above 100 MB, also invisible until complete). Tried
    again whole after a transient fault, so a retry never leaves a torn or doubled file."""
    protocol = _protocol(url)
    if protocol in _READ_ONLY_PROTOCOLS:
        raise StorageURLError(f"cannot write {url}: {protocol}:// is read-only for oeb; write to a folder or s3://")
    fs, path = filesystem(url)
    if isinstance(fs, LocalFileSystem):
        retried(url, "write", lambda: _replace_local_file(Path(path), data))
    else:
        retried(url, "write", lambda: fs.pipe_file(path, data))


def _default_file_mode() -> int:
    """0666 less the process umask: the mode `open()` would give a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _default_file_mode()


def _replace_local_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}."
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=prefix, suffix=".tmp", delete=False) as file:
        temporary = Path(file.name)
        try:
            file.write(data)
            file.flush()
            os.fchmod(file.fileno(), _FILE_MODE)  # a temporary file is 0600; run files are shared
            os.fsync(file.fileno())
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    try:
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def remove(url: str) -> None:
    """Delete a file, or a folder and everything under it; a URL naming nothing is not an error
    (a regrade drops results that no longer apply, and may run twice)."""
    protocol = _protocol(url)
    if protocol in _READ_ONLY_PROTOCOLS:
        raise StorageURLError(f"cannot remove {url}: {protocol}:// is read-only for oeb")
    fs, path = filesystem(url)

    def delete() -> None:
        if fs.exists(path):
            fs.rm(path, recursive=True)

    retried(url, "remove", delete)


def write_text(url: str, text: str) -> None:
    """Write a UTF-8 text file atomically."""
    write_bytes(url, text.encode("utf-8"))


def write_json(url: str, value: Any) -> None:
    """Write one JSON value the way every run file is written: UTF-8, indent 2, trailing newline."""
    write_text(url, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(url: str, values: Iterable[Any]) -> None:
    """Write JSON Lines atomically: one `json.dumps` per line, `ensure_ascii=False`."""
    write_text(url, "".join(json.dumps(value, ensure_ascii=False) + "\n" for value in values))


def write_parquet(url: str, table: pa.Table) -> None:
    """Write a pyarrow table as one parquet file, atomically."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    write_bytes(url, buffer.getvalue())
