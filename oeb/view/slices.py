"""`oeb view`'s slices (docs/slices.md): the runs sliced by each document trait, as `oeb report --by
TRAIT --format json` gives them, and with `--mix` the scores at that mix.

The traits are computed (or read from their cache) the first time a slices page asks, from the
dataset the runs were graded against; a mix is read when the server starts, so a bad one is refused
before anything is served.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from oeb.errors import UsageError, ViewNotFound
from oeb.report.fields import field_rows, row_json, run_verdicts
from oeb.report.mix import Mix, mix_report
from oeb.report.slices import MIN_DOCS, slice_report

if TYPE_CHECKING:
    from oeb.dataset import Dataset
    from oeb.report.runs import Run
    from oeb.traits import Traits


class View(Protocol):
    """What slicing needs of `oeb.view.api.View` (which holds a `Slicing`: no import back)."""

    runs: list[Run]

    def dataset(self) -> Dataset: ...

    def run(self, label: str | None) -> Run: ...


@dataclass
class Slicing:
    """How the view slices: the bucket edges, the least documents of a ranked slice, the mix (None
    without `--mix`), and the traits once read."""

    edges: Mapping[str, tuple[int, ...]] | None = None
    min_docs: int = MIN_DOCS
    mix: Mix | None = None
    traits: Traits | None = None
    _cache: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _verdicts: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def of(self, view: View) -> Traits:
        """The traits of the view's documents (read once)."""
        with self._lock:
            if self.traits is None:
                from oeb.locate.pdfium import PDFIUM  # PDFium's one lock: pages are drawn meanwhile
                from oeb.traits import document_traits

                self.traits = document_traits(view.dataset(), self.edges, pdfium=PDFIUM)
            return self.traits

    def traits_json(self, view: View) -> dict[str, Any]:
        """`GET /api/slices`: the traits (each with its values) and whether a mix is shown."""
        traits = self.of(view)
        return {
            "traits": [{"trait": name, "values": traits.labels(name)} for name in traits.names],
            "mix": self.mix is not None,
            "warnings": traits.warnings(),
        }

    def slices_json(self, view: View, trait: str) -> dict[str, Any]:
        """`GET /api/slices?trait=T`: the same numbers as `oeb report RUN... --by T --format json`."""
        traits = self.of(view)
        try:
            traits.check(trait)
        except UsageError as error:
            raise ViewNotFound(str(error)) from None
        with self._lock:
            if trait not in self._cache:
                self._cache[trait] = slice_report(view.runs, traits, [trait], self.min_docs)
            return self._cache[trait]

    def fields_json(self, view: View, label: str | None, trait: str, value: str) -> list[dict[str, Any]]:
        """`GET /api/fields?run=LABEL&trait=T&value=V`: the fields page's rows over one slice's documents."""
        run = view.run(label)
        traits = self.of(view)
        try:
            traits.check(trait)
        except UsageError as error:
            raise ViewNotFound(str(error)) from None
        if value not in traits.labels(trait):
            raise ViewNotFound(f"{trait} has no value {value!r}; its values are {', '.join(traits.labels(trait))}")
        chosen = [doc_id for doc_id in run.doc_ids if traits.values.get(doc_id, {}).get(trait) == value]
        with self._lock:
            if run.url not in self._verdicts:
                self._verdicts[run.url] = run_verdicts(run)
            verdicts = self._verdicts[run.url]
        # only the slice's verdicts are folded: an export asks for every slice of every trait
        mine = verdicts.filter(pc.is_in(verdicts["id"], value_set=pa.array(chosen, pa.string())))
        return [row_json(row) for row in field_rows(mine)]

    def mix_json(self, view: View) -> dict[str, Any]:
        """`GET /api/mix` (with --mix or --mix-from): the scores at the mix, as `oeb report --mix`."""
        if self.mix is None:
            raise ViewNotFound("no mix is shown; start oeb view with --mix MIX.yaml or --mix-from DATASET")
        return mix_report(view.runs, self.of(view), self.mix)
