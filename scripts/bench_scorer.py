"""Scorer benchmark: oeb's `score()` on a family of generated tables, optionally beside the reference.

    uv run python scripts/bench_scorer.py                                  # oeb only, the family
    uv run python scripts/bench_scorer.py --reference /path/to/reference/python
    uv run python scripts/bench_scorer.py --reference PY --only sanctions-3000 codes-3000
    uv run python scripts/bench_scorer.py --list                           # every input, one a line
    make bench-scorer ARGS="--reference ../ref/.venv/bin/python"

The family varies what makes pairing rows hard, one generated input per shape and size (1,000 to
10,000 rows): the share of rows holding a nested array (0 to 50%), dropped and duplicated rows (0 to
5%), how many distinct values a column holds (ids, names repeating every 97 rows, a handful of
codes: ties), neighbours swapped or rows shuffled, and misreads in high- and low-cardinality
columns. `--group classic` runs the earlier fixed inputs (a small 50-field document, a 27,000-row
table, nested invoices).

Every input is generated deterministically and scored in a fresh process (peak memory is that
input's alone) after a warm-up call. Seconds are one call for each side (oeb: the best of `--runs`
fresh processes; `--repeat N` takes the best of N calls in one process, but later calls find the
canonical keys of the input's values made, which grading never does), without verdicts, in seconds
of CPU (`--clock wall` for the wall clock): on a machine shared with other work the CPU seconds of
a single-threaded call change far less than its wall time (numpy's and scipy's thread pools are held
to one thread each). Each side then scores once more with `verdicts=True` and hashes every metric
and every verdict: "agree" means the two hashes are equal. The reference's figures are kept in a
cache (`--cache`, keyed by the input's and the reference interpreter's digest) so that oeb can be
measured again without waiting minutes (`--cached`: never run the reference); a cached time is
marked with the day it was measured, `2.28 (cached 2026-12-02)`, in the text and the Markdown
table alike. `--fresh` measures both sides in this run. Exit status 1 if any input disagrees.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Document = dict[str, Any]
Case = tuple[Document, Document, Document]  # pred, gold, schema

FIRST = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
LAST = ["Abbott", "Baker", "Cruz", "Diallo", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jensen"]
PROGRAMS = ["SDGT", "UKRAINE-EO13662", "IRAN", "CYBER2", "RUSSIA-EO14024", "SDNTK"]
COUNTRIES = ["Russia", "Iran", "Syria", "Cuba", "Venezuela"]
CATEGORIES = ["retail", "wholesale", "online", "partner", "internal"]
CODES = {  # a flat table of low-cardinality codes: 2 to 8 values a column
    "status": ["open", "closed", "held"],
    "region": ["north", "south", "east", "west", "central"],
    "tier": ["A", "B", "C", "D"],
    "currency": ["USD", "EUR", "GBP", "JPY", "CHF", "CAD"],
    "flag": ["Y", "N"],
    "channel": ["web", "phone", "mail", "store", "agent", "partner", "api", "fax"],
}


# --- the gold rows of each kind of table -----------------------------------------------------


def sanctions_entry(rng: random.Random, i: int, nested: float, ids: bool) -> Document:
    """A sanctions-list entry; names repeat every 97 entries, `aliases` in a `nested` share of them."""
    k = i % 97
    entry: Document = {"uid": str(10000 + i)} if ids else {}
    entry |= {
        "name": f"{LAST[k % 10].upper()}, {FIRST[k % 12]} {k}",
        "type": rng.choice(["Individual", "Entity", "Vessel"]),
        "program": rng.choice(PROGRAMS),
        "country": rng.choice(COUNTRIES),
        "dob": f"{rng.randint(1, 28):02d} {rng.choice(['Jan', 'Feb', 'Mar'])} 19{rng.randint(40, 99)}",
        "listed": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
        "remarks": rng.choice(["", "Linked To: ACME LLC", "Secondary sanctions risk", "-"]),
    }
    if rng.random() < nested:
        entry["aliases"] = [
            {"type": rng.choice(["a.k.a.", "f.k.a."]), "name": f"{rng.choice(LAST)} {rng.choice(FIRST)}"}
            for _ in range(rng.randint(1, 4))
        ]
    return entry


def sanctions_schema() -> Document:
    alias = {"type": "object", "properties": {"type": {"type": "string"}, "name": {"type": "string"}}}
    props: Document = {
        k: {"type": "string"} for k in ("uid", "name", "type", "program", "country", "dob", "listed", "remarks")
    }
    props["aliases"] = {"type": "array", "items": alias}
    return _list_schema("entries", props)


def order_line(rng: random.Random, i: int, nested: float, ids: bool) -> Document:
    """An order line; a `nested` share of them hold the serial numbers of what was shipped."""
    line: Document = {"line": i + 1} if ids else {}
    line |= {
        "sku": f"SKU-{rng.randint(1, 60):03d}",
        "description": rng.choice(["Widget", "Gadget", "Bolt", "Nut", "Cable"]),
        "qty": rng.randint(1, 20),
        "unit_price": f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}",
        "total": f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
    }
    if rng.random() < nested:
        line["serials"] = [{"serial": f"SN{rng.randint(0, 99999):05d}"} for _ in range(rng.randint(1, 3))]
    return line


def orders_schema() -> Document:
    props: Document = {k: {} for k in ("line", "sku", "description", "qty", "unit_price", "total")}
    props["serials"] = {"type": "array", "items": {"type": "object", "properties": {"serial": {"type": "string"}}}}
    return _list_schema("lines", props)


def code_row(rng: random.Random, i: int, nested: float, ids: bool) -> Document:
    """A row of low-cardinality codes (many rows alike: ties); `ref` an id when `ids`."""
    row: Document = {"ref": f"R{i:06d}"} if ids else {}
    row |= {column: rng.choice(values) for column, values in CODES.items()}
    if rng.random() < nested:
        notes = range(rng.randint(1, 2))
        row["notes"] = [{"code": rng.choice(CODES["status"]), "by": rng.choice(FIRST)} for _ in notes]
    return row


def codes_schema() -> Document:
    props: Document = {k: {"type": "string"} for k in ("ref", *CODES)}
    note = {"type": "object", "properties": {"code": {"type": "string"}, "by": {"type": "string"}}}
    props["notes"] = {"type": "array", "items": note}
    return _list_schema("rows", props)


def ledger_row(rng: random.Random, i: int, nested: float, ids: bool) -> Document:
    """A ledger row of mixed types: an id, a unique name, numbers, dates, money and a category."""
    row: Document = {"id": f"ID-{i:06d}"} if ids else {}
    row |= {
        "name": f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}",
        "qty": rng.randint(1, 500),
        "price": round(rng.uniform(1, 1000), 2),
        "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "active": rng.random() < 0.5,
        "amount": f"${rng.randint(1, 99):,}{rng.randint(0, 999):03d}.{rng.randint(0, 99):02d}",
        "category": rng.choice(CATEGORIES),
    }
    if rng.random() < nested:
        row["splits"] = [{"account": rng.choice(CATEGORIES), "share": rng.choice([25, 50, 75])} for _ in range(2)]
    return row


LEDGER_TYPES = {"id": "string", "name": "string", "qty": "integer", "price": "number", "date": "string"}
LEDGER_TYPES |= {"active": "boolean", "amount": "string", "category": "string"}


def ledger_schema() -> Document:
    props: Document = {k: {"type": t} for k, t in LEDGER_TYPES.items()}
    split = {"type": "object", "properties": {"account": {"type": "string"}, "share": {"type": "integer"}}}
    props["splits"] = {"type": "array", "items": split}
    return _list_schema("rows", props)


def _list_schema(name: str, props: Document) -> Document:
    items = {"type": "object", "properties": props}
    return {"type": "object", "properties": {"title": {"type": "string"}, name: {"type": "array", "items": items}}}


KINDS: dict[str, tuple[str, Callable[[random.Random, int, float, bool], Document], Callable[[], Document]]] = {
    "sanctions": ("entries", sanctions_entry, sanctions_schema),
    "orders": ("lines", order_line, orders_schema),
    "codes": ("rows", code_row, codes_schema),
    "ledger": ("rows", ledger_row, ledger_schema),
}


# --- what a prediction gets wrong ------------------------------------------------------------


def misread(rng: random.Random, row: Document, column: str, pool: list[Document]) -> Document:
    """`column` read wrong: another row's value (a code or id that exists elsewhere: ties), or a
    value no row holds (an id's digits swapped, a reformatted number)."""
    if column not in row:
        return row
    row = dict(row)
    value = row[column]
    if rng.random() < 0.5:
        other = rng.choice(pool).get(column, value)
        row[column] = other if other != value else f"{value}?"
    elif isinstance(value, str) and len(value) > 2:
        row[column] = value[:-2] + value[-1] + value[-2]
    elif isinstance(value, int) and not isinstance(value, bool):
        row[column] = value + 1
    else:
        row[column] = f"{value}!"
    return row


@dataclass(frozen=True)
class Shape:
    """One member of the family: a kind of table, its size and what its prediction gets wrong."""

    kind: str
    rows: int
    nested: float = 0.0  # share of rows holding a nested array
    ids: bool = True  # whether the rows have an id column
    dropped: float = 0.02
    duplicated: float = 0.01
    invented: float = 0.01
    swapped: float = 0.0  # neighbours swapped in a prediction kept in gold order; 0: shuffled
    misreads: tuple[tuple[str, float], ...] = ()  # (column, share of rows)
    note: str = ""

    def case(self, seed: int) -> Case:
        """The prediction, gold and schema of this shape (the same for the same seed)."""
        name, make, schema = KINDS[self.kind]
        rng = random.Random(seed)
        gold = [make(rng, i, self.nested, self.ids) for i in range(self.rows)]
        pred: list[Document] = []
        for row in gold:
            if rng.random() < self.dropped:
                continue
            for column, share in self.misreads:
                if rng.random() < share:
                    row = misread(rng, row, column, gold)
            pred.append(row)
            if rng.random() < self.duplicated:
                pred.append(dict(row))
        invented = [make(rng, self.rows + k, self.nested, self.ids) for k in range(round(self.rows * self.invented))]
        for row in invented:
            pred.insert(rng.randrange(len(pred) + 1), row)
        if self.swapped:
            for k in range(len(pred) - 1):
                if rng.random() < self.swapped:
                    pred[k], pred[k + 1] = pred[k + 1], pred[k]
        else:
            rng.shuffle(pred)
        return {"title": "Extracted", name: pred}, {"title": "Extracted", name: gold}, schema()


def family() -> dict[str, Shape]:
    """The family: each shape at 1,000 and 3,000 rows, a few at 10,000."""
    shapes = {
        # The three: a sanctions-style list, order lines with serials, a flat table of codes.
        "sanctions": Shape(
            "sanctions",
            0,
            nested=0.3,
            dropped=0.03,
            duplicated=0.01,
            swapped=0.05,
            misreads=(("country", 0.03), ("uid", 0.02)),
            note="30% nested aliases, names every 97 rows, 3% dropped, 1% duplicated, swaps, misread ids",
        ),
        "orders": Shape(
            "orders",
            0,
            nested=0.2,
            misreads=(("sku", 0.03), ("qty", 0.03)),
            note="order lines, a fifth with nested serials, shuffled",
        ),
        "codes": Shape(
            "codes",
            0,
            ids=False,
            dropped=0.02,
            duplicated=0.02,
            misreads=(("region", 0.03), ("channel", 0.03)),
            note="flat, 6 columns of 2-8 codes, no id: ties",
        ),
        # Ids against names only; the share of nested rows from 5% to 50%; 0 to 5% dropped/duplicated.
        "sanctions-noid": Shape(
            "sanctions",
            0,
            nested=0.3,
            ids=False,
            dropped=0.05,
            duplicated=0.05,
            swapped=0.05,
            misreads=(("country", 0.05), ("name", 0.02)),
            note="no uid: names every 97 rows, 5% dropped, 5% duplicated",
        ),
        "sanctions-half": Shape(
            "sanctions",
            0,
            nested=0.5,
            dropped=0.05,
            duplicated=0.05,
            misreads=(("uid", 0.05), ("program", 0.05)),
            note="50% nested, 5% dropped and duplicated, misread ids and programs",
        ),
        "orders-noid": Shape(
            "orders",
            0,
            nested=0.2,
            ids=False,
            misreads=(("sku", 0.03), ("description", 0.03)),
            note="no line number: a fifth nested, the rest SKUs and small numbers",
        ),
        "codes-nested": Shape(
            "codes",
            0,
            nested=0.05,
            ids=False,
            dropped=0.03,
            duplicated=0.03,
            misreads=(("tier", 0.03),),
            note="codes, no id, 5% with nested notes: ties inside and out",
        ),
        "codes-ids": Shape(
            "codes",
            0,
            nested=0.1,
            swapped=0.1,
            dropped=0.05,
            duplicated=0.0,
            misreads=(("ref", 0.05), ("status", 0.05)),
            note="codes with an id, 10% nested, swaps, misread ids",
        ),
        "ledger": Shape(
            "ledger",
            0,
            dropped=0.05,
            duplicated=0.05,
            invented=0.02,
            misreads=(("id", 0.03), ("date", 0.03), ("category", 0.03)),
            note="flat mixed types, ids, 5% dropped and duplicated",
        ),
        "ledger-clean": Shape(
            "ledger",
            0,
            dropped=0.0,
            duplicated=0.0,
            invented=0.0,
            swapped=0.2,
            note="flat, nothing dropped or duplicated, neighbours swapped",
        ),
        "ledger-nested": Shape(
            "ledger",
            0,
            nested=0.1,
            ids=False,
            dropped=0.01,
            duplicated=0.01,
            misreads=(("category", 0.05), ("qty", 0.02)),
            note="no id, 10% with nested splits",
        ),
    }
    sizes = {name: (1000, 3000) for name in shapes}
    for name in ("sanctions", "orders", "codes", "ledger"):
        sizes[name] = (1000, 3000, 10000)
    return {
        f"{name}-{rows}": Shape(**{**shape.__dict__, "rows": rows})
        for name, shape in shapes.items()
        for rows in sizes[name]
    }


# --- the earlier fixed inputs --------------------------------------------------------------------


def small_document() -> Case:
    rng = random.Random(50)
    gold: Document = {f"field_{k:02d}": f"value {rng.randint(0, 999)}" for k in range(50)}
    table_pred, table_gold, table_schema = Shape("ledger", 20).case(50)
    pred = dict(gold) | {"field_03": "something else", "table": table_pred["rows"]}
    gold["table"] = table_gold["rows"]
    props: Document = {k: {"type": "string"} for k in gold if k != "table"}
    props["table"] = table_schema["properties"]["rows"]
    return pred, gold, {"type": "object", "properties": props}


def invoices(n: int, lines: int = 10) -> Case:
    rng = random.Random(n * 31 + lines)
    gold = []
    for i in range(n):
        items = [order_line(rng, k, 0.0, False) for k in range(lines)]
        vendor = rng.choice(["Acme Corp", "Globex", "Initech", "Umbrella"])
        date = f"2024-{rng.randint(1, 12):02d}-01"
        gold.append({"number": f"INV-{i:05d}", "date": date, "vendor": vendor, "lines": items})
    pred = []
    for inv in gold:
        items = [misread(rng, line, "qty", inv["lines"]) if rng.random() < 0.05 else line for line in inv["lines"]]
        rng.shuffle(items)
        pred.append({**inv, "lines": items[: lines - (rng.random() < 0.1)]})
    rng.shuffle(pred)
    line = {"type": "object", "properties": {k: {} for k in ("sku", "description", "qty", "unit_price", "total")}}
    invoice = {"type": "object", "properties": {k: {} for k in ("number", "date", "vendor")}}
    invoice["properties"]["lines"] = {"type": "array", "items": line}
    schema = {"type": "object", "properties": {"invoices": {"type": "array", "items": invoice}}}
    return {"invoices": pred}, {"invoices": gold}, schema


CLASSIC: dict[str, Callable[[], Case]] = {
    "small-50-fields": small_document,
    "flat-27000": lambda: Shape("ledger", 27000).case(27000),
    "invoices-200x10": lambda: invoices(200),
}


def inputs(group: str) -> dict[str, Callable[[], Case]]:
    """The inputs of a group by name, in the order they run."""
    found: dict[str, Callable[[], Case]] = {}
    if group in ("family", "all"):
        found |= {name: (lambda s=shape, n=name: s.case(_seed(n))) for name, shape in family().items()}
    if group in ("classic", "all"):
        found |= CLASSIC
    return found


def _seed(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")


# --- measuring -----------------------------------------------------------------------------------

# Runs in a fresh interpreter (oeb's or the reference's): warm up, time, hash every verdict.
WORKER = textwrap.dedent(
    """
    import hashlib, json, resource, sys, time
    impl, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])  # argv[4]: cpu or wall
    if impl == "oeb":
        from oeb import score
    else:
        from omni_extract_bench import score
    score({"a": "1"}, {"a": "1"}, {"type": "object"})
    with open(path) as f:
        case = json.load(f)
    clock = time.process_time if sys.argv[4] == "cpu" else time.perf_counter
    best = None
    for _ in range(repeat):
        start = clock()
        result = score(case["pred"], case["gold"], case["schema"])
        took = clock() - start
        best = took if best is None else min(best, took)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    full = score(case["pred"], case["gold"], case["schema"], verdicts=True)
    digest = hashlib.sha256()
    verdicts = full.pop("verdicts")
    digest.update(json.dumps(full, sort_keys=True).encode())
    for v in verdicts:
        digest.update(json.dumps([v.address, v.gold_raw, v.pred_raw, v.gold_canon, v.pred_canon, v.result]).encode())
    print(json.dumps({"seconds": best, "peak_mb": peak, "verdicts": len(verdicts), "hash": digest.hexdigest()}))
    """
)


def run_worker(python: str, impl: str, path: Path, repeat: int, clock: str) -> dict[str, Any]:
    """One input scored in a fresh interpreter, its numerical libraries on one thread each (the
    same for both scorers, and CPU seconds then mean what wall seconds mean on a quiet machine)."""
    env = os.environ | dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")
    done = subprocess.run(
        [python, "-c", WORKER, impl, str(path), str(repeat), clock],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"{impl} failed on {path.name}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def reference_run(
    python: str, path: Path, clock: str, cache: Path | None, cached_only: bool = False
) -> tuple[dict[str, Any] | None, str | None]:
    """The reference's figures for this input and, when they come from the cache, the day they were
    measured (a cached time sits beside fresh oeb times: every output says so); measured now (and
    kept) when not cached, or None with `cached_only`."""
    interpreter = hashlib.sha256(os.path.realpath(python).encode()).hexdigest()[:12]
    entry = None
    if cache is not None:
        entry = cache / f"{hashlib.sha256(path.read_bytes()).hexdigest()[:24]}-{interpreter}-{clock}.json"
        if entry.exists():
            found = json.loads(entry.read_text())
            day = found.get("measured") or datetime.fromtimestamp(entry.stat().st_mtime, UTC).date().isoformat()
            return found, day
    if cached_only:
        return None, None
    found = run_worker(python, "reference", path, 1, clock)
    if entry is not None:
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text(json.dumps(found | {"measured": datetime.now(UTC).date().isoformat()}))
    return found, None


def count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_leaves(v) for v in value)
    return 0 if value in (None, "") else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reference", metavar="PYTHON", help="an interpreter with omni-extract-bench installed")
    parser.add_argument("--group", choices=("family", "classic", "all"), default="family")
    parser.add_argument("--only", nargs="*", metavar="INPUT", help="run only these inputs (see --list)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="timed runs per input for oeb (best is reported; later runs reuse canonical keys)",
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="oeb: the best of this many fresh processes (each one cold call)"
    )
    parser.add_argument(
        "--reference-max-rows",
        type=int,
        default=3000,
        metavar="N",
        help="run the reference only on family inputs up to N rows (nested 10,000-row ones take it many minutes)",
    )
    default_cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "oeb" / "bench_scorer"
    parser.add_argument("--cache", type=Path, default=default_cache, help="where the reference's figures are kept")
    parser.add_argument("--fresh", action="store_true", help="measure the reference again, not from the cache")
    parser.add_argument("--cached", action="store_true", help="only the reference's cached figures; run it on none")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="seconds of CPU (steady on a shared machine; the default) or of the wall clock",
    )
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list the inputs and exit")
    args = parser.parse_args(argv)
    table = inputs("all" if args.only else args.group)
    if args.list:
        shapes = family()
        print("\n".join(f"{name:<22} {shapes[name].note if name in shapes else ''}" for name in table))
        return 0
    unknown = sorted(set(args.only or ()) - set(table))
    if unknown:
        print(f"bench_scorer: unknown input(s) {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    names = args.only or list(table)
    shapes = family()
    columns = ["input", "gold values", "oeb s", "oeb MB"]
    if args.reference:
        columns += ["ref s", "ref MB", "speed-up", "agree"]
    print(_line(columns, args.markdown))
    if args.markdown:
        print(_line(["---"] + ["---:"] * (len(columns) - 2) + ["---"], True))
    agreed, ratios, days = True, {}, set()
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            pred, gold, schema = table[name]()
            path = Path(folder) / f"{name}.json"
            path.write_text(json.dumps({"pred": pred, "gold": gold, "schema": schema}))
            runs = [run_worker(sys.executable, "oeb", path, args.repeat, args.clock) for _ in range(args.runs)]
            ours = min(runs, key=lambda run: run["seconds"])
            cells = [name, f"{count_leaves(gold):,}", f"{ours['seconds']:.4f}", f"{ours['peak_mb']:.0f}"]
            rows = shapes[name].rows if name in shapes else 0
            theirs = None
            if args.reference and rows <= args.reference_max_rows and name != "flat-27000":
                cache = None if args.fresh else args.cache
                theirs, cached = reference_run(args.reference, path, args.clock, cache, args.cached)
            if theirs is not None:
                same = theirs["hash"] == ours["hash"]
                agreed &= same
                ratio = theirs["seconds"] / ours["seconds"]
                ratios[name] = ratio
                mark = f" (cached {cached})" if cached else ""
                days |= {cached} if cached else set()
                cells += [f"{theirs['seconds']:.2f}{mark}", f"{theirs['peak_mb']:.0f}", f"{ratio:.0f}x"]
                cells.append("yes" if same else "NO")
            elif args.reference:
                cells += ["not run", "", "", ""]
            print(_line(cells, args.markdown), flush=True)
    if ratios:
        print()
        for label, nested in (("nested", True), ("flat", False)):
            for rows in (1000, 3000):
                found = {n: r for n, r in ratios.items() if n in shapes and shapes[n].rows == rows}
                found = {n: r for n, r in found.items() if (shapes[n].nested > 0) == nested}
                if found:
                    worst = min(found, key=found.__getitem__)
                    print(f"minimum speed-up, {label} shapes at {rows:,} rows: {found[worst]:.0f}x ({worst})")
        worst = min(ratios, key=ratios.__getitem__)
        print(f"minimum speed-up over the inputs run with the reference: {ratios[worst]:.0f}x ({worst})")
        print(f"every verdict agrees: {'yes' if agreed else 'NO'}")
        if days:
            print(f"the reference's times marked cached were measured on {', '.join(sorted(days))}; --fresh: now")
    return 0 if agreed else 1


def _line(cells: list[str], markdown: bool) -> str:
    if markdown:
        return "| " + " | ".join(cells) + " |"
    widths = [22, 11, 9, 7, 24, 7, 9, 5]
    padded = zip(cells, widths, strict=False)
    return " ".join(c.ljust(w) if k in (0, 7) else c.rjust(w) for k, (c, w) in enumerate(padded))


if __name__ == "__main__":
    sys.exit(main())
