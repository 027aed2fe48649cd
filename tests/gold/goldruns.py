"""The bundled sample with seeded gold errors and three graded runs of the offline `mock` system over
it, each answering from the true gold (the mock's `gold` option), as a user makes them (`oeb run`)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET

EXAMPLE = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"
SEEDED = {
    ("short__invoice_4417", "customer"): ("Amberline Foods", "Amberline Fods"),
    ("short__invoice_4417", "total"): (5411.73, 5411.37),
    ("short__invoice_4418", "currency"): ("GBP", None),  # dropped from the gold
}
"""(document, address) -> (the true value, the value put in the damaged gold; None: left out)."""


@dataclass(frozen=True)
class GoldRuns:
    dataset: str  # the sample with SEEDED errors
    true_gold: str  # the sample's own gold folder
    runs: tuple[str, str, str]


def damaged_sample(root: Path) -> Path:
    """A copy of the sample whose gold has the SEEDED errors."""
    folder = root / "damaged"
    shutil.copytree(SAMPLE_DATASET, folder)
    for (doc_id, address), (true, put) in SEEDED.items():
        path = folder / "gold" / f"{doc_id}.json"
        gold = json.loads(path.read_text())
        assert gold[address] == true
        if put is None:
            del gold[address]
        else:
            gold[address] = put
        path.write_text(json.dumps(gold, indent=2))
    return folder


def mock_run(out: Path, dataset: Path, seed: int, *sets: str) -> str:
    changes = [
        f"dataset={dataset}",
        f"system.mock.gold={Path(SAMPLE_DATASET) / 'gold'}",
        f"system.mock.seed={seed}",
        "system.mock.latency=0",
        "ray.rate_limit.requests_per_second=100",
        *sets,
    ]
    arguments = ["run", "--config", str(EXAMPLE), "-y", "--out", str(out)]
    for change in changes:
        arguments += ["--set", change]
    assert main(arguments) == 0
    (folder,) = [path for path in out.iterdir() if path.is_dir()]
    return str(folder)


def build(root: Path) -> GoldRuns:
    dataset = damaged_sample(root)
    runs = tuple(mock_run(root / f"run{seed}", dataset, seed) for seed in (1, 2, 3))
    return GoldRuns(str(dataset), str(Path(SAMPLE_DATASET) / "gold"), runs)  # type: ignore[arg-type]
