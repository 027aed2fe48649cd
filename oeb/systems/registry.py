"""Finding a system by name: shipped adapters, `org/model` ids, and installed plugins.

A plugin is any installed package declaring an entry point in the group `oeb.systems`, named after
the system, pointing at its adapter class:

    [project.entry-points."oeb.systems"]
    fake = "oeb_fake:Fake"

Plugins are discovered by name only; a plugin's module is imported when it is first used, so a
broken plugin breaks only the runs that use it. A plugin whose name is taken or holds a `/` is
skipped with a warning (the reference refuses to start at all), so one bad package cannot break
every command.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata
import warnings
from collections.abc import Mapping
from typing import Any, cast

from oeb.systems.base import Adapter
from oeb.systems.errors import OptionError, PluginError, UnknownSystem

ENTRY_POINT_GROUP = "oeb.systems"
LLM = "llm_single_shot"

SHIPPED = {
    "azure-cu": "oeb.systems.azure_cu:AzureCU",
    "datalab": "oeb.systems.datalab:Datalab",
    "extend": "oeb.systems.extend:Extend",
    "llamaextract": "oeb.systems.llamaextract:LlamaExtract",
    "mistral": "oeb.systems.mistral:Mistral",
    "mock": "oeb.systems.mock:Mock",
    "reducto": "oeb.systems.reducto:Reducto",
    "replay": "oeb.systems.replay:Replay",
}
_LLM_CLASS = "oeb.systems.llm:LLMSingleShot"
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "azure-cu": ("AZURE_CU_KEY",),
    "datalab": ("DATALAB_API_KEY",),
    "extend": ("EXTEND_API_KEY",),
    "llamaextract": ("LLAMA_CLOUD_API_KEY", "LLAMAPARSE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "mock": (),
    "reducto": ("REDUCTO_API_KEY",),
    "replay": (),
    LLM: ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"),
}
"""Each shipped system's `Adapter.key_variables()`, written out so that naming every key variable
(`oeb publish`'s secret scan) imports no adapter; a test holds it equal to what the classes declare."""


@functools.cache
def plugins() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed plugins by system name (skipping, with a warning, names that cannot be used)."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        package = entry.dist.name if entry.dist else entry.value
        problem = (
            "holds a '/'"
            if "/" in entry.name
            else "is a shipped system"
            if entry.name in SHIPPED or entry.name == LLM
            else "is taken by another plugin"
            if entry.name in found
            else None
        )
        if problem:
            warnings.warn(
                f"ignoring the oeb system {entry.name!r} of {package}: the name {problem}; "
                "rename it in that package's pyproject.toml",
                stacklevel=2,
            )
            continue
        found[entry.name] = entry
    return found


def names() -> list[str]:
    """Every system name except model ids (any `org/model` works), sorted."""
    return sorted([*SHIPPED, *plugins()])


def key_variables() -> list[str]:
    """Every variable that may hold a system's key: the shipped systems' (`KEY_VARIABLES`, no adapter
    imported) and each installed plugin's (a plugin alone knows its own: it is loaded; one that cannot
    load declares none)."""
    found = [variable for variables in KEY_VARIABLES.values() for variable in variables]
    for name in plugins():
        try:
            found += adapter_class(name).key_variables()
        except PluginError:
            continue
    return list(dict.fromkeys(found))


def _import(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def adapter_class(name: str) -> type[Adapter]:
    """The adapter class of a system name (a name holding `/` is a model id: the LLM adapter)."""
    if "/" in name or name == LLM:
        return cast(type[Adapter], _import(_LLM_CLASS))
    if name in SHIPPED:
        return cast(type[Adapter], _import(SHIPPED[name]))
    entry = plugins().get(name)
    if entry is None:
        close = difflib.get_close_matches(name, names(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownSystem(
            f"unknown system {name!r}; {hint}the systems are {', '.join(names())}, and any OpenRouter model id "
            "such as openai/gpt-5.6-sol"
        )
    package = entry.dist.name if entry.dist else entry.value
    try:
        cls = entry.load()
    except Exception as error:
        raise PluginError(f"the plugin {package} cannot load its system {name!r}: {error!r}") from error
    if not (isinstance(cls, type) and issubclass(cls, Adapter)) or "__dataclass_fields__" not in cls.__dict__:
        raise PluginError(f"the plugin {package} names {entry.value} for {name!r}, which is not an Adapter dataclass")
    return cls


def get(name: str, options: Mapping[str, Any] | None = None) -> Adapter:
    """The system `name` with `options` checked; a model id sets the LLM adapter's `model`."""
    cls = adapter_class(name)
    options = dict(options or {})
    if "/" in name and options.setdefault("model", name) != name:
        raise OptionError(
            f"the model option of {name} is its name, not {options['model']!r}; to run "
            f"{options['model']}, use that id as the system"
        )
    return cls.from_options(options)
