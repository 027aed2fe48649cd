"""Replaying scoring cases and comparing scorer outputs exactly.

Shared by `scripts/compare_reference.py` (the differential tester against the published reference
scorer) and `tests/scoring/test_reference_corpus.py` (which replays the saved corpus against oeb).

Standard library only: `scripts/compare_reference.py` also loads this module inside the reference's
own interpreter to serialise the reference's answers, so both sides go through the same code.

A *case* is a dict with `schema`, `gold`, `pred` and optional `options` (`order_matters` passed
through, `absent: "never"` meaning `absent=lambda v: False`), as in
`scoring_examples.jsonl`. An *outcome* is what `run_score` makes of one call:
`{"result": <JSON result>, "types": {...}, "problems": [...]}` or
`{"raises": "<ExceptionType>", "raises_mro": [...], "message": "..."}`.
An *expected* value is the JSON form used in the example files: the result dict, or
`{"raises": "<ExceptionType>"}`.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Json = Any
ScoreFn = Callable[..., Any]

VERDICT_FIELDS = ("address", "gold_raw", "pred_raw", "gold_canon", "pred_canon", "result")
_PLAIN_TYPES = (bool, int, float, str, type(None))
_JSON_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}


def never_absent(value: object) -> bool:
    """The `absent` predicate called "never" in the example files: every value is a leaf."""
    return False


def score_kwargs(options: Mapping[str, Json] | None) -> dict[str, Any]:
    """Keyword arguments for `score` from a case's JSON `options`."""
    kwargs: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key == "absent":
            if value != "never":
                raise ValueError(f"unknown absent option {value!r}")
            kwargs["absent"] = never_absent
        elif key == "order_matters":
            kwargs["order_matters"] = value
        else:
            raise ValueError(f"unknown case option {key!r}")
    return kwargs


def _plain(value: Any, where: str, problems: list[str]) -> Json:
    """`value` as plain JSON data; notes every non-builtin scalar type in `problems`."""
    if type(value) in _PLAIN_TYPES:
        if type(value) is float and not math.isfinite(value):
            problems.append(f"{where}: non-finite float {value!r}")
            return repr(value)
        return value
    if isinstance(value, list | tuple):
        return [_plain(item, f"{where}[{i}]", problems) for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}.{k}", problems) for k, v in value.items()}
    problems.append(f"{where}: {type(value).__module__}.{type(value).__qualname__} {value!r}")
    if hasattr(value, "item"):
        return _plain(value.item(), where, [])
    return repr(value)


def verdict_fields(verdict: Any) -> list[Any]:
    """The six fields of a verdict record (named tuple, dataclass, mapping or plain tuple)."""
    if isinstance(verdict, Mapping):
        return [verdict.get(name) for name in VERDICT_FIELDS]
    if all(hasattr(verdict, name) for name in VERDICT_FIELDS):
        return [getattr(verdict, name) for name in VERDICT_FIELDS]
    return list(verdict)


def verdict_to_json(verdict: Any, where: str, problems: list[str]) -> list[Json]:
    """One verdict as `[address, gold_raw, pred_raw, gold_canon, pred_canon, result]`."""
    fields = verdict_fields(verdict)
    if len(fields) != len(VERDICT_FIELDS):
        problems.append(f"{where}: verdict has {len(fields)} fields, not 6")
    if not isinstance(verdict, tuple) or getattr(verdict, "_fields", None) != VERDICT_FIELDS:
        problems.append(f"{where}: verdict is a {type(verdict).__name__}, not a named tuple of {VERDICT_FIELDS}")
    address = fields[0]
    if not isinstance(address, tuple) or not all(type(step) is tuple and len(step) == 2 for step in address):
        problems.append(f"{where}: address {address!r} is not a tuple of (kind, name) pairs")
    address = [_plain(list(step), f"{where}.address", problems) for step in fields[0]]
    return [address, *(_plain(v, where, problems) for v in fields[1:])]


def result_to_json(result: Mapping[str, Any]) -> tuple[dict[str, Json], dict[str, str], list[str]]:
    """The result dict as JSON data, the Python type name of each value, and type problems."""
    problems: list[str] = []
    out: dict[str, Json] = {}
    types: dict[str, str] = {}
    for key, value in result.items():
        types[str(key)] = type(value).__name__
        if key == "verdicts":
            out[key] = [verdict_to_json(v, f"verdicts[{i}]", problems) for i, v in enumerate(value)]
        else:
            out[str(key)] = _plain(value, str(key), problems)
    return out, types, problems


def run_score(score: ScoreFn, case: Mapping[str, Json], extra_checks: bool = False) -> dict[str, Json]:
    """Call `score(pred, gold, schema, verdicts=True, **options)` and describe what happened.

    With `extra_checks`, also check that the call left its arguments unchanged and that
    `verdicts=False` gives the same result without the `verdicts` key; failures are listed under
    `"checks"` (the reference is not asked for these).
    """
    kwargs = score_kwargs(case.get("options"))
    before = json.dumps([case["pred"], case["gold"], case["schema"]]) if extra_checks else ""
    try:
        result = score(case["pred"], case["gold"], case["schema"], verdicts=True, **kwargs)
    except Exception as exc:
        return {
            "raises": type(exc).__name__,
            "raises_mro": [cls.__name__ for cls in type(exc).__mro__],
            "message": str(exc)[:500],
        }
    if not isinstance(result, Mapping):
        return {"result": None, "types": {}, "problems": [f"score returned {type(result).__name__}"]}
    out, types, problems = result_to_json(result)
    outcome: dict[str, Json] = {"result": out, "types": types, "problems": problems}
    if extra_checks:
        outcome["checks"] = _extra_checks(score, case, kwargs, before, out)
    return outcome


def _extra_checks(
    score: ScoreFn, case: Mapping[str, Json], kwargs: dict[str, Any], before: str, out: dict[str, Json]
) -> list[str]:
    checks: list[str] = []
    if json.dumps([case["pred"], case["gold"], case["schema"]]) != before:
        checks.append("score changed its pred, gold or schema argument")
    try:
        plain = score(case["pred"], case["gold"], case["schema"], **kwargs)
    except Exception as exc:
        checks.append(f"with verdicts=False it raised {type(exc).__name__}: {exc}")
        return checks
    if "verdicts" in plain:
        checks.append("with verdicts=False the result still has a verdicts key")
    plain_json, _types, _problems = result_to_json(plain)
    without = {k: v for k, v in out.items() if k != "verdicts"}
    plain_json = {k: v for k, v in plain_json.items() if k != "verdicts"}
    if not same(roundtrip(plain_json), roundtrip(without)):
        changed = [k for k in without if k not in plain_json or not same(plain_json[k], without[k])]
        checks.append(f"with verdicts=False these keys differ: {changed or list(plain_json)}")
    return checks


def roundtrip(value: Json) -> Json:
    """`value` after a trip through JSON text, as a saved corpus would hold it."""
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


def expected_of(outcome: Mapping[str, Json]) -> dict[str, Json]:
    """The example-file form of an outcome: the result, or `{"raises": type}`."""
    if "raises" in outcome:
        return {"raises": outcome["raises"]}
    return dict(outcome["result"])


def serve(score: ScoreFn) -> None:
    """Answer JSON-lines cases from stdin with JSON-lines outcomes on stdout (one per line)."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        case = json.loads(line)
        outcome = run_score(score, case)
        sys.stdout.write(json.dumps(outcome, allow_nan=False) + "\n")
        sys.stdout.flush()


# --------------------------------------------------------------------------------------------
# Comparison


@dataclass(frozen=True)
class Difference:
    """One way in which a candidate's outcome differs from the expected one."""

    kind: str
    detail: str
    data: Json = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


KIND_PRIORITY = (
    "candidate-raises",
    "reference-raises",
    "exception-type",
    "result-keys",
    "canonical-key",
    "verdict-address",
    "verdict-result",
    "verdict-raw",
    "verdict-order",
    "metric",
    "type",
    "result-shape",
    "extra-check",
)


def same(a: Json, b: Json) -> bool:
    """Exact equality of JSON data: same types (bool, int and float differ), same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def _address_key(address: Json) -> str:
    return json.dumps(address, ensure_ascii=False)


def show_address(address: Json) -> str:
    """Printed form of a JSON address (keys joined with '.', indices in brackets)."""
    out = ""
    for kind, name in address:
        if kind == "i":
            out += f"[{name}]"
        else:
            out += ("." if out else "") + str(name)
    return out or "<root>"


def compare_verdicts(expected: list[Json], actual: list[Json]) -> list[Difference]:
    """Differences between two JSON verdict lists, by address first, then order."""
    diffs: list[Difference] = []
    exp_by = {_address_key(v[0]): v for v in expected}
    act_by = {_address_key(v[0]): v for v in actual}
    only_exp = [v for k, v in exp_by.items() if k not in act_by]
    only_act = [v for k, v in act_by.items() if k not in exp_by]
    if only_exp or only_act:
        diffs.append(
            Difference(
                "verdict-address",
                f"only expected: {[show_address(v[0]) for v in only_exp][:8]}; "
                f"only candidate: {[show_address(v[0]) for v in only_act][:8]}",
                {"only_expected": only_exp[:20], "only_candidate": only_act[:20]},
            )
        )
    for key, exp in exp_by.items():
        act = act_by.get(key)
        if act is None or same(exp, act):
            continue
        where = show_address(exp[0])
        for side, raw_i, canon_i in (("gold", 1, 3), ("pred", 2, 4)):
            if not same(exp[canon_i], act[canon_i]):
                diffs.append(
                    Difference(
                        "canonical-key",
                        f"{where} {side} raw {exp[raw_i]!r}: expected key {exp[canon_i]!r}, candidate {act[canon_i]!r}",
                        {"raw": exp[raw_i], "expected": exp[canon_i], "candidate": act[canon_i]},
                    )
                )
            if not same(exp[raw_i], act[raw_i]):
                diffs.append(
                    Difference(
                        "verdict-raw",
                        f"{where} {side} raw: expected {exp[raw_i]!r}, candidate {act[raw_i]!r}",
                    )
                )
        if not same(exp[5], act[5]):
            diffs.append(
                Difference(
                    "verdict-result",
                    f"{where}: expected {exp[5]}, candidate {act[5]} "
                    f"(keys {exp[3]!r}/{exp[4]!r} vs {act[3]!r}/{act[4]!r})",
                )
            )
    if not diffs and not same(expected, actual):
        diffs.append(
            Difference(
                "verdict-order",
                f"expected {[show_address(v[0]) for v in expected][:12]}, "
                f"candidate {[show_address(v[0]) for v in actual][:12]}",
            )
        )
    return diffs


def compare(
    expected: Mapping[str, Json],
    outcome: Mapping[str, Json],
    reference_raises: str | None = None,
) -> list[Difference]:
    """Every difference between an expected answer and a candidate's outcome (empty: agreement).

    `expected` is the example-file form (result dict or `{"raises": type}`); `outcome` comes from
    `run_score` (after a JSON round trip). A candidate exception agrees with an expected one when
    the expected type name is among the candidate exception's classes (oeb's errors subclass
    `TypeError`/`ValueError`). `reference_raises` marks a case where the reference itself raised
    because of its `$ref` depth limit and `expected` is its answer for the same schema with the
    refs inlined beforehand (a result, or a later argument check's error): the candidate may
    either raise the `reference_raises` type too or agree exactly with `expected`.
    """
    if "raises" in outcome:
        mro = outcome.get("raises_mro") or [outcome["raises"]]
        if reference_raises is not None and reference_raises in mro:
            return []
        if "raises" in expected:
            if expected["raises"] in mro:
                return []
            return [
                Difference(
                    "exception-type",
                    f"expected {expected['raises']}, candidate raised {outcome['raises']}: "
                    f"{outcome.get('message', '')}",
                )
            ]
        return [
            Difference(
                "candidate-raises",
                f"candidate raised {outcome['raises']}: {outcome.get('message', '')}",
                {"type": outcome["raises"]},
            )
        ]
    if "raises" in expected:
        return [Difference("reference-raises", f"expected {expected['raises']}, candidate returned a result")]
    actual = outcome.get("result")
    if not isinstance(actual, dict):
        return [Difference("result-keys", f"candidate result is {actual!r}")]
    diffs: list[Difference] = []
    if list(expected) != list(actual):
        diffs.append(Difference("result-keys", f"expected keys {list(expected)}, candidate {list(actual)}"))
    for key, exp_value in expected.items():
        if key not in actual:
            continue
        act_value = actual[key]
        if key == "verdicts" and isinstance(exp_value, list) and isinstance(act_value, list):
            diffs.extend(compare_verdicts(exp_value, act_value))
        elif not same(exp_value, act_value):
            diffs.append(Difference("metric", f"{key}: expected {exp_value!r}, candidate {act_value!r}"))
        exp_type = _JSON_TYPE_NAMES.get(type(exp_value), type(exp_value).__name__)
        act_type = (outcome.get("types") or {}).get(key, exp_type)
        if act_type != exp_type:
            diffs.append(Difference("type", f"{key}: expected a {exp_type}, candidate returned a {act_type}"))
    for problem in outcome.get("problems") or []:
        diffs.append(Difference("result-shape", problem))
    for check in outcome.get("checks") or []:
        diffs.append(Difference("extra-check", check))
    return diffs


def primary_kind(diffs: list[Difference]) -> str:
    """The most telling kind among `diffs` (used to group mismatches)."""
    kinds = {d.kind for d in diffs}
    for kind in KIND_PRIORITY:
        if kind in kinds:
            if kind == "candidate-raises":
                return f"{kind}:{next(d for d in diffs if d.kind == kind).data['type']}"
            if kind == "metric":
                names = sorted({d.detail.split(":")[0] for d in diffs if d.kind == "metric"})
                return f"metric:{','.join(names[:4])}"
            return kind
    return sorted(kinds)[0] if kinds else "none"


def describe(diffs: list[Difference], limit: int = 20) -> str:
    """Readable multi-line summary of differences."""
    lines = [str(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Corpus files


def case_of(line: Mapping[str, Json]) -> dict[str, Json]:
    """The scoring inputs of a corpus line."""
    case = {"schema": line["schema"], "gold": line["gold"], "pred": line["pred"]}
    if line.get("options"):
        case["options"] = line["options"]
    return case


def corpus_line(
    name: str,
    rule: str,
    case: Mapping[str, Json],
    expected: Mapping[str, Json],
    reference_raises: str | None = None,
) -> dict[str, Json]:
    """One line in the format of `scoring_examples.jsonl` (plus `reference_raises` when needed)."""
    line: dict[str, Json] = {
        "name": name,
        "rule": rule,
        "schema": case["schema"],
        "gold": case["gold"],
        "pred": case["pred"],
    }
    if case.get("options"):
        line["options"] = case["options"]
    line["expected"] = dict(expected)
    if reference_raises is not None:
        line["reference_raises"] = reference_raises
    return line


def iter_corpus(path: Path) -> Iterator[dict[str, Json]]:
    """The lines of a JSON-lines corpus file."""
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if text.strip():
                try:
                    yield json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{number}: not JSON: {exc}") from exc


@functools.cache
def corpus(path: Path) -> tuple[dict[str, Json], ...]:
    """A corpus file's lines, read once per process: several test modules parametrize over it."""
    return tuple(iter_corpus(path)) if path.exists() else ()


def replay(score: ScoreFn, line: Mapping[str, Json]) -> list[Difference]:
    """Score one corpus line with `score` and compare with its saved answer."""
    outcome = roundtrip(run_score(score, case_of(line), extra_checks=True))
    return compare(line["expected"], outcome, line.get("reference_raises"))
