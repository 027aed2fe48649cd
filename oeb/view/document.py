"""One document's verdicts as `oeb view` answers them: each value located on the PDF (oeb.locate),
both sides' canonical keys, the scorer's explanation of an error, and the schema node of each field.

One place per value (its best) and a count of the others keeps a verdict short (about 330 bytes),
not thousands of boxes; the answers list them a slice at a time (oeb.view.paging).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from oeb import _json
from oeb.locate import Label, Located, PdfPages, index_of, locate_values
from oeb.report.fields import fold
from oeb.scoring import canonical_key
from oeb.scoring.explain_text import pair_text

_NODE_KEYS = ("type", "description", "enum", "format", "pattern", "const", "minimum", "maximum", "title")
"""The keywords of a schema node shown beside a verdict (not its children: the schema page has them)."""


def scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def key_of(value: Any) -> str | None:
    """The value's canonical key (None for an object or array, which have none)."""
    return canonical_key(value) if scalar(value) else None


_INVENTED = {
    "invented_item": "invented_item: only the prediction holds a value here, inside a predicted array item "
    "paired with no item of the gold (its address carries the p label); each of its values counts so",
    "invented_field": "invented_field: only the prediction holds a value here, at an address the schema does not offer",
}
"""Why an invented value is what it is: the pair alone (null, a value) would read as fabricated."""


def explanation(gold: Any, pred: Any, result: str) -> str | None:
    """What `oeb explain GOLD PRED` prints, for an error between two scalars (None otherwise); for
    an invented value, the rule that made it one (docs/scorer.md)."""
    if result in _INVENTED:
        return _INVENTED[result]
    if result == "matched" or not scalar(gold) or not scalar(pred):
        return None
    return pair_text(gold, pred)


def verdicts_json(
    rows: Iterable[Mapping[str, Any]], pages: PdfPages | None, schema: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A document's verdicts (verdicts.parquet's rows, in the order grading wrote them) as the view
    answers them: each with its place `n`, its folded `path`, both raw values and their canonical
    keys, the scorer's explanation of an error and where both values stand (`locate_sides`)."""
    verdicts = []
    for n, row in enumerate(rows):
        gold, pred = _value(row["gold_raw"]), _value(row["pred_raw"])
        verdict = {
            "n": n,
            "address": row["address"],
            "path": fold(row["address"]),
            "gold": gold,
            "pred": pred,
            "result": row["result"],
            "gold_key": key_of(gold),
            "pred_key": key_of(pred),
            **({"adjudication": row["adjudication"]} if row.get("adjudication") else {}),
        }
        explained = explanation(gold, pred, row["result"])
        if explained is not None:  # errors only: a matched pair reads as its keys say
            verdict["explain"] = explained
        verdicts.append(verdict)
    for verdict, located in zip(verdicts, locate_sides(pages, verdicts, schema), strict=True):
        verdict["located"] = located
    return verdicts


def _value(text: str | None) -> Any:
    """A verdict's raw value from its JSON text (verdicts.parquet keeps raw values as JSON)."""
    return None if text is None else _json.loads(text)


def page_notes(pages: PdfPages) -> list[dict[str, Any]]:
    """Each page's size in points and how it was read: its text layer, OCR, or not at all (a scan,
    no Tesseract)."""
    return [
        {
            "page": page.number,
            "width": round(page.width, 1),
            "height": round(page.height, 1),
            "source": page.source,
            "note": pages.note(page.number),
        }
        for page in pages.pages()
    ]


def located_json(place: Located | None) -> dict[str, Any] | None:
    if place is None:
        return None
    answer: dict[str, Any] = {"status": place.status, "others": place.others}
    if place.page is not None and place.bbox is not None:
        answer |= {"page": place.page, "bbox": [round(x, 1) for x in place.bbox]}
    if place.source == "ocr":
        answer["ocr"] = True
    return answer


def locate_sides(
    pages: PdfPages | None, verdicts: list[dict[str, Any]], schema: Mapping[str, Any]
) -> list[dict[str, Any] | None]:
    """Per verdict, where its gold and its prediction stand: `{"gold": LOCATED, "pred": LOCATED}`
    (LOCATED: status, others, page, bbox, `ocr` when the page was read by OCR; null for a value not
    looked for)."""
    if pages is None:
        return [None] * len(verdicts)
    index = index_of(pages)
    labels = labels_of(schema, {verdict["path"] for verdict in verdicts})
    sides = {}
    for side in ("gold", "pred"):
        values = [(verdict["address"], verdict[side]) for verdict in verdicts]
        sides[side] = locate_values(index, values, labels)
    return [
        {"gold": located_json(gold), "pred": located_json(pred)}
        for gold, pred in zip(sides["gold"], sides["pred"], strict=True)
    ]


def labels_of(schema: Mapping[str, Any], paths: Iterable[str]) -> dict[str, Label]:
    """Each folded path's label words: its name's and its schema description's."""
    from oeb.locate import label_of

    labels = {}
    for path in paths:
        node = schema_node(schema, path) or {}
        description = node.get("description")
        labels[path] = label_of(path, description if isinstance(description, str) else "")
    return labels


def fields_json(schema: Mapping[str, Any], paths: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per folded path, its schema node's keywords (type, description, enum, format ...)."""
    nodes = {}
    for path in sorted(set(paths)):
        node = schema_node(schema, path)
        if node is not None:
            nodes[path] = {key: node[key] for key in _NODE_KEYS if key in node}
    return nodes


def schema_node(schema: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The schema node of a folded path (`items[].unit`), through properties, items and the
    branches of anyOf / oneOf / allOf, `$ref`s resolved inside the schema; None when none."""
    node: Mapping[str, Any] | None = _resolved(schema, schema)
    for step in _steps(path):
        if node is None:
            return None
        node = _child(schema, node, step)
    return node


def _steps(path: str) -> list[str]:
    steps = []
    for part in fold(path).split("."):
        name, _, rest = part.partition("[]")
        if name:
            steps.append(name)
        steps += ["[]"] * (1 + rest.count("[]")) if part.endswith("[]") or "[]" in part else []
    return steps


def _child(root: Mapping[str, Any], node: Mapping[str, Any], step: str) -> Mapping[str, Any] | None:
    for branch in _branches(root, node):
        if step == "[]":
            items = branch.get("items")
            if isinstance(items, Mapping):
                return _resolved(root, items)
        else:
            properties = branch.get("properties")
            if isinstance(properties, Mapping) and isinstance(properties.get(step), Mapping):
                return _resolved(root, properties[step])
    return None


def _branches(root: Mapping[str, Any], node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = [node]
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(keyword) or ():
            if isinstance(branch, Mapping):
                resolved = _resolved(root, branch)
                if resolved is not None:
                    found.append(resolved)
    return found


def _resolved(root: Mapping[str, Any], node: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any] | None:
    """The node, a local `$ref` (`#/$defs/x`) followed (never a URL: nothing is fetched)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or depth > 20:
        return node
    if not ref.startswith("#"):
        return node
    target: Any = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        target = target.get(part) if isinstance(target, Mapping) else None
    return _resolved(root, target, depth + 1) if isinstance(target, Mapping) else node
