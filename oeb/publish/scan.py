"""The check before anything is published: no secret and no local path in any file to upload.

A run folder can hold more than its numbers: a vendor's error body echoing a request header, a
record naming the gold file it could not read on this machine. Once on a public Hub dataset such a
value cannot be taken back (its history keeps it), so every file is read before the first upload
and the publish is refused, in one line naming the file and what was found (never the secret
itself), when it holds

- the value of a variable that holds a key: every system's key variables (the registry's list, stand-ins,
  every LLM provider's and plugins' included) and the storage and Hub credentials (`EXTRA_VARIABLES`);
- a string shaped like a key (`KEY_PATTERNS`: OpenAI, Anthropic and OpenRouter `sk-`, Google `AIza`,
  LlamaCloud `llx-`, Hugging Face `hf_`, AWS access key ids, GitHub tokens, private-key blocks, bearer
  tokens; the other vendors' keys have no shape of their own and are found by their variables' values);
- an absolute local path: the user's home folder, the folder the run lives in, the working folder.

Parquet files are compressed, so their values are read as a table and searched as text.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow ships no type information

from oeb.errors import SecretFound

EXTRA_VARIABLES = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GOOGLE_API_KEY",
    "GITHUB_TOKEN",
)
"""Credentials no system declares but a machine that publishes often holds."""
KEY_PATTERNS = {
    "an API key (sk-...)": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    "a Google API key (AIza...)": re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    "a LlamaCloud key (llx-...)": re.compile(r"\bllx-[A-Za-z0-9]{20,}"),
    "a Hugging Face token (hf_...)": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "an AWS access key id (AKIA...)": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "a GitHub token (ghp_...)": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    "a private key block": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "a bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{20,}"),
}
_SHORTEST_SECRET = 8
"""Shorter values (moto's `testing`, a placeholder) are words, not keys: searching for them would
refuse ordinary text."""


def secret_variables() -> list[str]:
    """Every variable that may hold a key: every system's (the registry's list, plugins included),
    then `EXTRA_VARIABLES`."""
    from oeb.systems.registry import key_variables

    return list(dict.fromkeys([*key_variables(), *EXTRA_VARIABLES]))


@dataclass(frozen=True)
class Scanner:
    """What a file must not hold: secret values by variable name, local paths by what they are."""

    secrets: Mapping[str, str]
    paths: Mapping[str, str]

    @classmethod
    def for_folders(cls, folders: Iterable[str]) -> Scanner:
        """The secrets in this process's environment and the local paths of this machine and `folders`."""
        secrets = {
            variable: value
            for variable in secret_variables()
            if len(value := os.environ.get(variable, "").strip()) >= _SHORTEST_SECRET
        }
        paths: dict[str, str] = {}
        for folder in folders:
            paths[str(Path(folder).resolve())] = "the run's local folder"
        for place, what in ((Path.home(), "your home folder"), (Path.cwd(), "the working folder")):
            if len(place.resolve().parts) > 1:  # not "/": every absolute path starts there
                paths.setdefault(str(place.resolve()), what)
        return cls(secrets, paths)

    def problem(self, path: str, data: bytes) -> str | None:
        """What `data` (the file `path`) must not hold, as the half-line naming it, or None."""
        text = _text(path, data)
        for variable, value in self.secrets.items():
            if value in text:
                return f"the value of {variable}"
        for what, pattern in KEY_PATTERNS.items():
            if pattern.search(text):
                return f"something shaped like {what}"
        for local, what in self.paths.items():
            if re.search(re.escape(local) + r"(?![^/\\\"'\s])", text):
                return f"the local path {local} ({what})"
        return None

    def check(self, files: Mapping[str, bytes]) -> None:
        """Refuse (`SecretFound`) at the first file holding a secret or a local path."""
        for path, data in files.items():
            found = self.problem(path, data)
            if found is not None:
                raise SecretFound(
                    f"{path} holds {found}; nothing was uploaded: remove it from the run (or publish with "
                    "--no-records when it is in records/) and publish again"
                )


def _text(path: str, data: bytes) -> str:
    """The file as text to search: a parquet file's values as JSON, anything else decoded."""
    if path.endswith(".parquet"):
        try:
            return json.dumps(pq.read_table(io.BytesIO(data)).to_pylist(), ensure_ascii=False, default=str)
        except Exception:  # not readable as parquet: searched as bytes instead
            pass
    return data.decode("utf-8", errors="replace")
