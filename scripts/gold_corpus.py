"""A generated dataset with a hidden true gold, its gold-less copy, and five runs of the offline `mock`
over it: three independent systems answering from the true gold and a correlated pair answering from
one damaged copy of it (shared errors), each with its own seeded misreadings and omissions. The
drafting tests (tests/drafts) and `make bench-gold` (scripts/bench_gold.py) build on it."""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pypdf
import yaml

from oeb.cli import main

DOCUMENTS = 40
SCHEMA = {
    "type": "object",
    "properties": {
        **{f"field_{i}": {"type": "string"} for i in range(8)},
        "amount": {"type": "number"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "number"}}},
        },
    },
}
DAMAGE = 0.2
"""The share of leaf values the correlated pair's shared copy of the gold gets wrong."""
SYSTEMS = {  # name: (gold it answers from, seed, misread, unfound)
    "a": ("truth", 1, 0.02, 0.04),
    "b": ("truth", 2, 0.05, 0.06),
    "c": ("truth", 3, 0.08, 0.08),
    "d": ("damaged", 4, 0.02, 0.03),
    "e": ("damaged", 5, 0.04, 0.03),
}
PAIR = ("d", "e")


@dataclass(frozen=True)
class Drafting:
    root: Path
    truth: Path
    dataset: Path
    runs: dict[str, str]


def _gold(rng: random.Random, number: int) -> dict[str, Any]:
    gold: dict[str, Any] = {f"field_{i}": f"value {number}-{i} {rng.choice('ABCDEFGH')}" for i in range(8)}
    gold["amount"] = round(rng.uniform(1, 9999), 2)
    gold["items"] = [{"sku": f"SKU-{number}-{j}-{rng.randint(100, 999)}", "qty": rng.randint(1, 50)} for j in range(4)]
    return gold


def _damaged(gold: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = json.loads(json.dumps(gold))
    for key in [k for k in out if k.startswith("field_")]:
        if rng.random() < DAMAGE:
            out[key] = out[key] + " X"
    if rng.random() < DAMAGE:
        out["amount"] = round(out["amount"] + 1, 2)
    for item in out["items"]:
        if rng.random() < DAMAGE:
            item["qty"] += 1
    return out


def blank_pdf() -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def build(root: Path, documents: int = DOCUMENTS) -> Drafting:
    rng = random.Random(40)
    truth, damaged, pdfs = root / "truth", root / "damaged", root / "pdfs"
    for folder in (truth, damaged, pdfs):
        folder.mkdir(parents=True)
    page = blank_pdf()
    for number in range(documents):
        doc_id = f"doc{number:03d}"
        gold = _gold(rng, number)
        (truth / f"{doc_id}.json").write_text(json.dumps(gold))
        (damaged / f"{doc_id}.json").write_text(json.dumps(_damaged(gold, rng)))
        (pdfs / f"{doc_id}.pdf").write_bytes(page)
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    dataset = root / "dataset"
    assert main(["dataset", "init", str(pdfs), "--schema", str(root / "schema.json"), "--out", str(dataset)]) == 0
    example = yaml.safe_load((Path(__file__).parents[1] / "oeb" / "examples" / "mock.yaml").read_text())
    arguments = ["run", "-y", "--out", str(root / "runs")]
    for name, (source, seed, misread, unfound) in SYSTEMS.items():
        config = json.loads(json.dumps(example))
        config["dataset"] = str(dataset)
        config["system"]["mock"] |= {
            "gold": str(root / source),
            "seed": seed,
            "misread": misread,
            "unfound": unfound,
            "fabricated": 0.0,
            "invented_item": 0.0,
            "invented_field": 0.0,
            "latency": 0.0,
        }
        config["ray"]["rate_limit"]["requests_per_second"] = 1000.0
        path = root / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        arguments += ["--config", str(path)]
    assert main(arguments) == 0
    runs = {}
    for folder in (root / "runs").iterdir():
        seed = json.loads((folder / "settings.json").read_text())["options"]["seed"]
        runs[next(name for name, spec in SYSTEMS.items() if spec[1] == seed)] = str(folder)
    return Drafting(root, truth, dataset, dict(sorted(runs.items())))
