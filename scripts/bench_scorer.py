"""Scorer benchmark: oeb's `score()` on large tables, optionally beside the reference scorer.

    uv run python scripts/bench_scorer.py                      # oeb only, every input
    uv run python scripts/bench_scorer.py --reference /path/to/reference/python --only flat-3000
    uv run python scripts/bench_scorer.py --list

Inputs are generated deterministically (seeded): flat tables, a sanctions-style list with nested
alias arrays and repeated values, nested invoices, and a small 50-field document. Each prediction
drops, shuffles, duplicates and misreads rows. Every input is scored in a fresh process (so peak
memory is that input's alone) after a warm-up call; seconds are the best of `--repeat` runs.
With `--reference PYTHON` (an interpreter where `omni_extract_bench` is installed) the same input
is scored by the reference in the same run, and the table shows the ratio and whether every count
and ratio agree.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

Document = dict[str, Any]

CATEGORIES = ["retail", "wholesale", "online", "partner", "internal"]
FIRST = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
LAST = ["Abbott", "Baker", "Cruz", "Diallo", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jensen"]
PROGRAMS = ["SDGT", "UKRAINE-EO13662", "IRAN", "CYBER2", "RUSSIA-EO14024", "SDNTK"]


def flat_schema() -> Document:
    fields = {k: {"type": t} for k, t in FLAT_TYPES.items()}
    row = {"type": "object", "properties": fields}
    return {"type": "object", "properties": {"title": {"type": "string"}, "rows": {"type": "array", "items": row}}}


FLAT_TYPES = {
    "id": "string",
    "name": "string",
    "qty": "integer",
    "price": "number",
    "date": "string",
    "active": "boolean",
    "amount": "string",
    "category": "string",
}


def flat_row(rng: random.Random, i: int) -> Document:
    return {
        "id": f"ID-{i:06d}",
        "name": f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}",
        "qty": rng.randint(1, 500),
        "price": round(rng.uniform(1, 1000), 2),
        "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "active": rng.random() < 0.5,
        "amount": f"${rng.randint(1, 99):,}{rng.randint(0, 999):03d}.{rng.randint(0, 99):02d}",
        "category": rng.choice(CATEGORIES),
    }


def misread(rng: random.Random, row: Document) -> Document:
    """One field changed: reformatted or recased (same key), or really wrong."""
    row = dict(row)
    field = rng.choice([k for k, v in row.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)])
    value = row[field]
    kind = rng.random()
    if isinstance(value, str) and len(value) == 10 and value[4] == "-":
        y, m, d = value.split("-")
        row[field] = f"{m}/{d}/{y}" if kind < 0.7 else "WRONG"  # same day in another format
    elif isinstance(value, str):
        row[field] = value.upper() if kind < 0.5 else "WRONG"
    elif isinstance(value, int):
        row[field] = str(value) if kind < 0.5 else value + 1
    else:
        row[field] = round(value + 1, 2)
    return row


def predicted(rng: random.Random, rows: list[Document], invent: Callable[[int], Document]) -> list[Document]:
    """Drop 2%, misread 5%, duplicate 1%, invent 1% of the rows, then shuffle."""
    out = []
    for row in rows:
        draw = rng.random()
        if draw < 0.02:
            continue
        out.append(misread(rng, row) if draw < 0.07 else row)
        if rng.random() < 0.01:
            out.append(dict(row))
    out.extend(invent(len(rows) + k) for k in range(max(1, len(rows) // 100)))
    rng.shuffle(out)
    return out


def flat_table(n: int) -> tuple[Document, Document, Document]:
    rng = random.Random(n)
    rows = [flat_row(rng, i) for i in range(n)]
    gold = {"title": "Quarterly ledger", "rows": rows}
    pred = {"title": "Quarterly Ledger", "rows": predicted(rng, rows, lambda i: flat_row(rng, i))}
    return pred, gold, flat_schema()


def sanctions_schema() -> Document:
    alias = {"type": "object", "properties": {"type": {"type": "string"}, "name": {"type": "string"}}}
    props = {k: {"type": "string"} for k in ("uid", "name", "type", "program", "country", "dob", "listed", "remarks")}
    props["aliases"] = {"type": "array", "items": alias}
    entry = {"type": "object", "properties": props}
    return {"type": "object", "properties": {"entries": {"type": "array", "items": entry}}}


def sanctions_entry(rng: random.Random, i: int) -> Document:
    entry = {
        "uid": str(10000 + i),
        "name": f"{rng.choice(LAST).upper()}, {rng.choice(FIRST)}",
        "type": rng.choice(["Individual", "Entity", "Vessel"]),
        "program": rng.choice(PROGRAMS),
        "country": rng.choice(["Russia", "Iran", "Syria", "Cuba", "Venezuela"]),
        "dob": f"{rng.randint(1, 28):02d} {rng.choice(['Jan', 'Feb', 'Mar'])} 19{rng.randint(40, 99)}",
        "listed": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
        "remarks": rng.choice(["", "Linked To: ACME LLC", "Secondary sanctions risk", "-"]),
    }
    if rng.random() < 0.3:
        entry["aliases"] = [
            {"type": rng.choice(["a.k.a.", "f.k.a."]), "name": f"{rng.choice(LAST)} {rng.choice(FIRST)}"}
            for _ in range(rng.randint(1, 4))
        ]
    return entry


def sanctions_list(n: int) -> tuple[Document, Document, Document]:
    rng = random.Random(n + 7)
    entries = [sanctions_entry(rng, i) for i in range(n)]
    gold = {"entries": entries}
    pred = {"entries": predicted(rng, entries, lambda i: sanctions_entry(rng, i))}
    return pred, gold, sanctions_schema()


def invoice_schema() -> Document:
    line = {"type": "object", "properties": {k: {} for k in ("sku", "description", "qty", "unit_price", "total")}}
    invoice = {
        "type": "object",
        "properties": {"number": {}, "date": {}, "vendor": {}, "lines": {"type": "array", "items": line}},
    }
    return {"type": "object", "properties": {"invoices": {"type": "array", "items": invoice}}}


def invoice(rng: random.Random, i: int, lines: int) -> Document:
    return {
        "number": f"INV-{i:05d}",
        "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "vendor": rng.choice(["Acme Corp", "Globex", "Initech", "Umbrella"]),
        "lines": [
            {
                "sku": f"SKU-{rng.randint(1, 60):03d}",
                "description": rng.choice(["Widget", "Gadget", "Bolt", "Nut", "Cable"]),
                "qty": rng.randint(1, 20),
                "unit_price": f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}",
                "total": f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
            }
            for _ in range(lines)
        ],
    }


def invoices(n: int, lines: int = 10) -> tuple[Document, Document, Document]:
    rng = random.Random(n * 31 + lines)
    gold_invoices = [invoice(rng, i, lines) for i in range(n)]
    pred_invoices = []
    for inv in gold_invoices:
        inv_lines = [misread(rng, line) if rng.random() < 0.05 else line for line in inv["lines"]]
        rng.shuffle(inv_lines)
        pred_invoices.append({**inv, "lines": inv_lines[: lines - (rng.random() < 0.1)]})
    rng.shuffle(pred_invoices)
    return {"invoices": pred_invoices}, {"invoices": gold_invoices}, invoice_schema()


def small_document() -> tuple[Document, Document, Document]:
    rng = random.Random(50)
    gold: Document = {f"field_{k:02d}": f"value {rng.randint(0, 999)}" for k in range(50)}
    gold["table"] = [flat_row(rng, i) for i in range(20)]
    pred = dict(gold)
    pred["field_03"] = "something else"
    pred["table"] = predicted(rng, gold["table"], lambda i: flat_row(rng, i))
    props: Document = {k: {"type": "string"} for k in gold if k != "table"}
    props["table"] = flat_schema()["properties"]["rows"]
    return pred, gold, {"type": "object", "properties": props}


INPUTS: dict[str, Callable[[], tuple[Document, Document, Document]]] = {
    "small-50-fields": small_document,
    "flat-1000": lambda: flat_table(1000),
    "flat-3000": lambda: flat_table(3000),
    "flat-9000": lambda: flat_table(9000),
    "flat-27000": lambda: flat_table(27000),
    "sanctions-1000": lambda: sanctions_list(1000),
    "sanctions-3000": lambda: sanctions_list(3000),
    "sanctions-6000": lambda: sanctions_list(6000),
    "invoices-200x10": lambda: invoices(200),
}
# The reference takes minutes (or more memory than the machine has) on these.
REFERENCE_SKIPS = {"flat-27000"}

# Runs in a fresh interpreter (oeb's or the reference's): warm up, time, report peak memory.
WORKER = textwrap.dedent(
    """
    import json, resource, sys, time
    impl, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if impl == "oeb":
        from oeb import score
    else:
        from omni_extract_bench import score
    score({"a": "1"}, {"a": "1"}, {"type": "object"})
    with open(path) as f:
        case = json.load(f)
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = score(case["pred"], case["gold"], case["schema"])
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": best, "peak_mb": peak, "result": result}))
    """
)


def run_worker(python: str, impl: str, path: Path, repeat: int) -> dict[str, Any]:
    done = subprocess.run(
        [python, "-c", WORKER, impl, str(path), str(repeat)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{impl} failed on {path.name}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_leaves(v) for v in value)
    return 0 if value in (None, "") else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", metavar="PYTHON", help="an interpreter with omni-extract-bench installed")
    parser.add_argument("--only", nargs="*", choices=sorted(INPUTS), help="run only these inputs")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per input (best is reported)")
    parser.add_argument("--list", action="store_true", help="list the inputs and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(INPUTS))
        return 0
    names = args.only or list(INPUTS)
    header = f"{'input':<18} {'gold values':>11} {'oeb s':>9} {'oeb MB':>7}"
    if args.reference:
        header += f" {'ref s':>8} {'ref MB':>7} {'speed-up':>8}  agree"
    print(header)
    agreed = True
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            pred, gold, schema = INPUTS[name]()
            path = Path(folder) / f"{name}.json"
            path.write_text(json.dumps({"pred": pred, "gold": gold, "schema": schema}))
            ours = run_worker(sys.executable, "oeb", path, args.repeat)
            line = f"{name:<18} {count_leaves(gold):>11,} {ours['seconds']:>9.4f} {ours['peak_mb']:>7.0f}"
            if args.reference and name not in REFERENCE_SKIPS:
                theirs = run_worker(args.reference, "reference", path, 1)
                same = theirs["result"] == ours["result"]
                agreed &= same
                ratio = theirs["seconds"] / ours["seconds"]
                line += (
                    f" {theirs['seconds']:>8.2f} {theirs['peak_mb']:>7.0f} {ratio:>7.0f}x  {'yes' if same else 'NO'}"
                )
            print(line, flush=True)
    return 0 if agreed else 1


if __name__ == "__main__":
    sys.exit(main())
