"""Write a synthetic dataset shaped like the public 620-document one (docs/datasets.md).

Four suites, ids like the real ones (`short__`/`long__`, date-prefixed micro1 ids, `research__[...]`
ids with spaces and brackets), and the published size distribution: most documents small, a long
tail, one document of about 410,000 gold values, about 2.9 million gold values in all. The PDFs are
one-page placeholders. Deterministic from `--seed`; writes to a folder or an `s3://` prefix:

    uv run python scripts/make_corpus.py --out /tmp/corpus [--seed 620]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
from collections.abc import Iterator
from typing import Any

from dataset_files import Document, pdf_bytes, write_dataset

SUITES = {"extractbench": 331, "internal": 207, "micro1": 47, "contextual": 35}  # 620 in all
SPACED_IDS = 28  # ids with spaces and brackets in the public set (all in `contextual` here)
FIELDS_PER_ROW = 5
WORDS = ["invoice", "schedule", "filing", "census", "ledger", "manifest", "report", "survey", "budget", "permit"]


def suite_sizes(documents: int) -> dict[str, int]:
    """The published suite proportions scaled to `documents` (the first suite takes the rounding)."""
    total = sum(SUITES.values())
    sizes = {suite: max(1, round(count * documents / total)) for suite, count in SUITES.items()}
    first = next(iter(sizes))
    sizes[first] += documents - sum(sizes.values())
    return sizes


def value_counts(rng: random.Random, documents: int, values: int, largest: int) -> list[int]:
    """Gold values per document: one of `largest`, the rest log-normal (a long tail), summing to `values`."""
    weights = [rng.lognormvariate(0.0, 1.9) for _ in range(documents - 1)]
    rest = values - largest
    counts = [max(2, min(largest - 1, math.floor(rest * weight / sum(weights)))) for weight in weights]
    # Hand out what rounding and the bounds lost (or added) one value at a time, largest documents first.
    order = sorted(range(len(counts)), key=counts.__getitem__, reverse=True)
    diff, turn = rest - sum(counts), 0
    while diff:
        index, step = order[turn % len(order)], 1 if diff > 0 else -1
        if 2 <= counts[index] + step < largest:
            counts[index] += step
            diff -= step
        turn += 1
    counts.insert(rng.randrange(documents), largest)
    return counts


def doc_ids(rng: random.Random, sizes: dict[str, int], spaced: int) -> Iterator[tuple[str, str]]:
    """(suite, id) pairs with the public id styles."""
    for suite, count in sizes.items():
        for index in range(count):
            word = rng.choice(WORDS)
            if suite == "micro1":
                digest = hashlib.sha1(f"{index}".encode()).hexdigest()[:8]
                yield suite, f"06_10_26_{word.title()}_Actuals_{digest}_sampl{index}"
            elif suite == "contextual":
                author = f"{rng.choice(['zhao', 'okafor', 'moreau', 'tanaka'])}{20 + index % 6}"
                title = f"a study of {word} extraction {index}"
                yield suite, f"research__[{author}] {title}" if index < spaced else f"research__{author}_{index}"
            else:
                yield suite, f"{rng.choice(['short', 'long'])}__{suite}_{word}_{index:04d}"


def document(rng: random.Random, suite: str, doc_id: str, values: int) -> Document:
    """A gold object with exactly `values` leaf values: a table of rows plus a few header fields."""
    rows = (values - 2) // FIELDS_PER_ROW
    header = values - rows * FIELDS_PER_ROW
    row_fields = ["code", "description", "quantity", "amount", "date"]
    gold: dict[str, Any] = {f"field_{k}": f"{doc_id[:12]}-{k}" for k in range(header)}
    base = rng.randrange(10_000)
    gold["rows"] = [
        {
            "code": f"C{base + i:06d}",
            "description": WORDS[(base + i) % len(WORDS)],
            "quantity": (base + i) % 97,
            "amount": round(((base * 31 + i * 17) % 100_000) / 100, 2),
            "date": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
        }
        for i in range(rows)
    ]
    string, number = {"type": "string"}, {"type": "number"}
    row_schema = {name: number if name in ("quantity", "amount") else string for name in row_fields}
    schema = {
        "type": "object",
        "properties": {
            **{f"field_{k}": string for k in range(header)},
            "rows": {"type": "array", "items": {"type": "object", "properties": row_schema}},
        },
    }
    pdf = pdf_bytes([doc_id, f"suite {suite}: placeholder for a document of {values} gold values"])
    return Document(doc_id, suite, f"synthetic:{suite}", schema, gold, pdf)


def corpus(seed: int, documents: int, values: int, largest: int) -> tuple[list[int], Iterator[Document]]:
    rng = random.Random(seed)
    sizes = suite_sizes(documents)
    ids = list(doc_ids(rng, sizes, spaced=round(SPACED_IDS * documents / sum(SUITES.values()))))
    counts = value_counts(rng, documents, values, largest)
    largest_index = counts.index(largest)
    ids[largest_index] = (ids[largest_index][0], "long__real_ofac_ssi_full")
    documents_out = (document(rng, suite, doc_id, n) for (suite, doc_id), n in zip(ids, counts, strict=True))
    return counts, documents_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a folder or s3://bucket/prefix")
    parser.add_argument("--seed", type=int, default=620)
    parser.add_argument("--documents", type=int, default=620)
    parser.add_argument("--values", type=int, default=2_900_000, help="gold values in all")
    parser.add_argument("--largest", type=int, default=410_012, help="gold values of the largest document")
    args = parser.parse_args()
    others = args.documents - 1
    if not 2 * others <= args.values - args.largest <= others * (args.largest - 1):
        parser.error("--values must leave 2 to (--largest - 1) values for each of the other documents")
    counts, documents = corpus(args.seed, args.documents, args.values, args.largest)
    written = write_dataset(args.out, documents)
    print(
        f"wrote {written} documents, {sum(counts)} gold values (median {statistics.median(counts):.0f}, "
        f"largest {max(counts)}, top 20 hold {sum(sorted(counts)[-20:]) / sum(counts):.0%}) to {args.out}"
    )


if __name__ == "__main__":
    main()
