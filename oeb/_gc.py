"""Python's cycle collector paused around work that makes many objects and no reference cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Scoring a large document, and turning its verdicts into records, allocates millions of small
    objects and no reference cycles: the cycle collector would scan them, and everything else alive,
    again and again for nothing (a third of the scorer's time on large tables, seven tenths of the
    time spent turning a 9,000-row table's verdicts into records). Paused for the block only, and
    only if it was running."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
