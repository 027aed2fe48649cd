"""Names a package loads on first use (PEP 562), so that importing the package stays cheap: the
scorer brings scipy (about 0.6 s) and the HTML report ftfy and jsonschema, which most commands and
every Ray worker that does not score never need."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["loader"]


def loader(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `homes` from the module it maps
    to when first asked for, then keeps it as a plain attribute."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
