"""`score()`: one prediction against its gold under the document's schema (docs/scorer.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import eq, is_, itemgetter
from typing import Any

from oeb._gc import cyclic_gc_paused
from oeb.errors import DocumentTooDeep, ScoreArgumentError, ScoreOptionError
from oeb.scoring._flatten import SchemaView, array_paths, flatten, prepare, states_nothing, survey
from oeb.scoring._pairing import Aligner
from oeb.scoring._tree import Address, Item, Value
from oeb.scoring.canonical import canonical_key
from oeb.scoring.schema import ResolvedSchema, array_name, resolve_schema
from oeb.scoring.verdict import RESULTS, Verdict, document_metrics, show_address

__all__ = ["score"]

SKIPPED = "skipped_open_map"
MAX_ARRAYS_LISTED = 12
_SUFFIX, _KEY = itemgetter(0), itemgetter(2)  # of a `Value`


def reading_order(address: Address) -> tuple[tuple[str, bool, int, str], ...]:
    """Keys alphabetically, indices numerically, `pN` labels after indices and as strings."""
    return tuple(
        (kind, isinstance(name, str), name if isinstance(name, int) else 0, str(name)) for kind, name in address
    )


def score(
    pred: dict[str, Any] | None,
    gold: dict[str, Any] | None,
    schema: dict[str, Any],
    order_matters: Iterable[str] | bool = (),
    verdicts: bool = False,
    absent: Callable[[Any], bool] = states_nothing,
) -> dict[str, Any]:
    """Score `pred` against `gold`, exactly as omni-extract-bench 1.0.0 does.

    Returns the metrics and counts described in docs/scorer.md, and with `verdicts=True` one `Verdict` per
    address (skipped open maps first, then reading order).
    """
    _check_documents(pred, gold, schema)
    try:
        with cyclic_gc_paused():
            resolved = resolve_schema(schema)
            pred_found = survey(pred, prediction=True)
            gold_found = survey(gold, prediction=False)
            pred_doc = prepare(pred if pred is not None else {}, pred_found, prediction=True)
            gold_doc = prepare(gold if gold is not None else {}, gold_found, prediction=False)
            empty_keys = pred_found.empty_keys or gold_found.empty_keys
            positional = _positional_arrays(order_matters, resolved, (pred, gold, pred_doc, gold_doc), empty_keys)
            return _Scoring(pred_doc, gold_doc, resolved, positional, absent).result(verdicts)
    except RecursionError:
        raise DocumentTooDeep(
            "a document or the schema nests too deeply to score (hundreds of levels); "
            "flatten the structure or check the file for corruption"
        ) from None


def _check_documents(pred: Any, gold: Any, schema: Any) -> None:
    if pred is not None and not isinstance(pred, dict):
        raise ScoreArgumentError(
            "the prediction must be a JSON object (the extraction) or None for no answer, "
            f"not {type(pred).__name__}; parse JSON text before scoring it"
        )
    if gold is not None and not isinstance(gold, dict):
        raise ScoreArgumentError(
            f"the ground truth must be a JSON object, not {type(gold).__name__}; documents whose root is "
            "an array are not supported: wrap the array in an object on both sides"
        )
    if schema is not None and not isinstance(schema, dict):
        raise ScoreArgumentError(f"the schema must be a JSON object, not {type(schema).__name__}")
    if not schema:
        raise ScoreArgumentError(
            "a schema is required: without it open maps cannot be found and fabricated values cannot be "
            "told from invented ones; pass the schema the prediction was generated against"
        )


def _positional_arrays(
    order_matters: Iterable[str] | bool, schema: ResolvedSchema, documents: tuple[Any, ...], empty_keys: bool
) -> frozenset[str] | bool:
    """The arrays compared by position: `True` for all, else a set of names, each checked.

    As the reference does on every call, refuses documents where two different arrays have the
    same name (possible only through empty keys: the documents' are known from their survey),
    since a name could then mean either. The documents' arrays are listed only when needed.
    """
    if isinstance(order_matters, str):
        raise ScoreArgumentError(
            f"order_matters takes a list of array names, not one string: write [{order_matters!r}] "
            "(a bare string would be read character by character)"
        )
    paths = schema.array_paths()
    documents_read = empty_keys or any(("k", "") in path for path in paths)
    if documents_read:
        paths = paths | _document_arrays(documents)
        named: dict[str, Address] = {}
        for path in sorted(paths):
            name = array_name(path)
            if named.setdefault(name, path) != path:
                raise ScoreOptionError(
                    f"two different arrays are both named {name!r} (through empty keys), so order_matters "
                    "could not tell them apart; rename the empty keys"
                )
    if isinstance(order_matters, bool):
        return order_matters
    try:
        names: list[object] = list(order_matters)
    except TypeError:
        kind = type(order_matters).__name__
        raise ScoreArgumentError(f"order_matters takes a list of array names, True or False, not {kind}") from None
    if names and not documents_read:
        paths = paths | _document_arrays(documents)
    known = {array_name(path) for path in paths} if names else set()
    checked: list[str] = []
    for entry in names:
        if not isinstance(entry, str):
            kind = type(entry).__name__
            raise ScoreArgumentError(f"order_matters entries must be array names (str), not {kind}")
        if entry not in known:
            listed = ", ".join(repr(n) for n in sorted(known)[:MAX_ARRAYS_LISTED])
            available = f"arrays available: {listed}" if known else "these documents have no arrays"
            raise ScoreOptionError(f"order_matters names {entry!r}, which is not an array here; {available}")
        checked.append(entry)
    return frozenset(checked)


def _document_arrays(documents: tuple[Any, ...]) -> set[Address]:
    distinct = {id(document): document for document in documents}  # a prepared document is often its raw one
    return set().union(*(array_paths(d) for d in distinct.values()))


class _Scoring:
    """One scoring: both documents flattened, the prediction renumbered, then compared."""

    def __init__(
        self,
        pred: dict[str, Any],
        gold: dict[str, Any],
        schema: ResolvedSchema,
        positional: frozenset[str] | bool,
        absent: Callable[[Any], bool],
    ) -> None:
        self.schema = schema
        view = SchemaView(schema.root)  # one for both sides: their rows share suffix tuples
        self.pred_tree, self.asserted, pred_skipped = flatten(pred, view, absent, canonical_key)
        self.gold_tree, self.expected, gold_skipped = flatten(gold, view, absent, canonical_key)
        self.skipped = sorted(dict.fromkeys(gold_skipped + pred_skipped), key=reading_order)
        self.aligner = Aligner(1 + self.asserted, positional)
        self.aligner.align(self.pred_tree, self.gold_tree)

    def result(self, with_verdicts: bool) -> dict[str, Any]:
        comparison = _Comparison(self.schema.slots, with_verdicts)
        comparison.items(self.gold_tree, self.pred_tree, () if with_verdicts else None, False)
        result: dict[str, Any] = {
            **document_metrics(comparison.counts, self.asserted, self.expected),
            "gold_rows": comparison.gold_rows,
            "pred_rows": comparison.pred_rows,
            "matched_rows": comparison.matched_rows,
            "matching_exact": not self.aligner.approximated,
            "approximated": sorted(self.aligner.approximated, reverse=True),
            "skipped_open_maps": [show_address(a) for a in self.skipped],
        }
        if comparison.verdicts is not None:
            found = sorted(comparison.verdicts, key=lambda v: reading_order(v.address))
            result["verdicts"] = [Verdict(a, None, None, None, None, SKIPPED) for a in self.skipped] + found
        return result


class _Comparison:
    """Both trees walked together: each gold row with the predicted row renumbered to its index,
    each value judged under its suffix there, object rows counted on the way.
    Addresses are put together only for verdicts."""

    def __init__(self, slots: frozenset[Address], with_verdicts: bool) -> None:
        self.slots = slots
        self.counts = dict.fromkeys(RESULTS, 0)
        self.verdicts: list[Verdict] | None = [] if with_verdicts else None
        self.gold_rows = self.pred_rows = self.matched_rows = 0

    def items(self, gold: Item | None, pred: Item | None, pred_address: Address | None, invented: bool) -> None:
        """A gold row and the predicted row at its address, either possibly None, and their arrays'
        rows in turn. `pred_address` is the predicted row's renumbered address (None without
        verdicts); `invented`, whether it lies in a predicted row paired with none."""
        self._values(gold, pred, pred_address, invented)
        g_arrays = gold.arrays if gold is not None else {}
        p_arrays = pred.arrays if pred is not None else {}
        for path, g_array in g_arrays.items():
            p_array = p_arrays.get(path)
            by_label = {item.label: item for item in p_array.items.values()} if p_array is not None else {}
            for index, g_item in g_array.items.items():
                p_item = by_label.pop(index, None)
                self._count(g_item, p_item)
                self.items(g_item, p_item, _below(pred_address, path, index), invented)
            self._only_predicted(by_label.values(), path, pred_address, invented)
        for path, p_array in p_arrays.items():
            if path not in g_arrays:
                self._only_predicted(p_array.items.values(), path, pred_address, invented)

    def _only_predicted(self, items: Iterable[Item], path: Address, address: Address | None, invented: bool) -> None:
        for item in items:
            self._count(None, item)
            self.items(None, item, _below(address, path, item.label), invented or isinstance(item.label, str))

    def _count(self, gold: Item | None, pred: Item | None) -> None:
        g_object = gold is not None and gold.is_object
        p_object = pred is not None and pred.is_object
        self.gold_rows += g_object
        self.pred_rows += p_object
        self.matched_rows += g_object and p_object

    def _values(self, gold: Item | None, pred: Item | None, pred_address: Address | None, invented: bool) -> None:
        counts, verdicts = self.counts, self.verdicts
        p_values, pattern = (pred.leaves, pred.pattern) if pred is not None else ([], ())
        unpaired: Iterable[Value] = p_values
        if gold is not None:
            g_values = gold.leaves
            if len(g_values) == len(p_values) and all(map(is_, map(_SUFFIX, g_values), map(_SUFFIX, p_values))):
                if verdicts is None:  # the same suffixes in the same order: only equal keys to count
                    matched = sum(map(eq, map(_KEY, g_values), map(_KEY, p_values)))
                    counts["matched"] += matched
                    counts["misread"] += len(g_values) - matched
                    return
                both: Iterable[tuple[Value, Value | None]] = zip(g_values, p_values, strict=True)
                unpaired = ()
            else:  # other suffixes, or the same in another order
                by_suffix = {p[0]: p for p in p_values}
                both = [(g, by_suffix.pop(g[0], None)) for g in g_values]
                unpaired = by_suffix.values()
            for (suffix, g_raw, g_key), p in both:
                outcome = "unfound" if p is None else "matched" if p[2] == g_key else "misread"
                counts[outcome] += 1
                if verdicts is not None:
                    p_raw, p_key = (None, None) if p is None else p[1:]
                    verdicts.append(Verdict((*gold.address, *suffix), g_raw, p_raw, g_key, p_key, outcome))
        for suffix, p_raw, p_key in unpaired:
            # In a row paired with none: an invented item; else fabricated if the schema offers the address.
            if invented:
                outcome = "invented_item"
            else:
                outcome = "fabricated" if (*pattern, *suffix) in self.slots else "invented_field"
            counts[outcome] += 1
            if verdicts is not None:
                verdicts.append(Verdict((*(pred_address or ()), *suffix), None, p_raw, None, p_key, outcome))


def _below(address: Address | None, path: Address, label: Any) -> Address | None:
    """The address of a row labelled `label` in the array at `path` below `address` (None: none kept)."""
    return None if address is None else (*address, *path, ("i", label))
