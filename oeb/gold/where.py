"""Where the adjudication file of a run is named: `--adjudications URL` first, else the run folder's
config.yaml (`dataset.adjudications`), else the file beside the dataset (docs/adjudication.md, "Where
it lives"). `oeb grade` and the readers of graded runs (`oeb report`, `oeb compare`, `oeb view`) take
the same order, so a run reports the numbers it was graded to."""

from __future__ import annotations

import yaml

from oeb import storage
from oeb._yaml import load_yaml
from oeb.dataset import FOLDER_SCHEMES
from oeb.errors import AdjudicationError, OebError
from oeb.gold.entries import NONE

CONFIG = "config.yaml"


def configured(folder: str) -> str | None:
    """The adjudication file a run folder's config.yaml names (`dataset.adjudications`; None: it names
    none, or the folder has no config oeb reads), refused in one line unless it is `none`, a local
    path, s3:// or hf://: a folder from a stranger must not make oeb fetch a URL of its choice."""
    url = storage.join(folder, CONFIG)
    try:
        tree = load_yaml(storage.read_text(url))
    except (OebError, yaml.YAMLError):  # a brought folder, or a config.yaml oeb cannot read: never needed
        return None
    named = tree.get("dataset") if isinstance(tree, dict) else None
    given = named.get("adjudications") if isinstance(named, dict) else None
    if given is None:
        return None
    if not isinstance(given, str) or not readable_on_word(given):
        raise AdjudicationError(
            f"{url} names the adjudication file {given!r}, which oeb does not read on a run folder's word "
            f"(only {NONE}, a local path, s3:// or hf://); if you trust it: --adjudications URL"
        )
    return given


def readable_on_word(given: object) -> bool:
    """Whether a file a run folder or a published run names may be read on its word: `none`, a local
    path, s3:// or hf://, never a URL of a stranger's choosing (http://, ...)."""
    if not isinstance(given, str) or not given.strip():
        return False
    scheme, separator, _ = given.partition("://")
    return not separator or scheme.lower() in FOLDER_SCHEMES


def is_none(given: str) -> bool:
    """`--adjudications none` (any case): the raw gold."""
    return given.strip().lower() == NONE
