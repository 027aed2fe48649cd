"""`make bench-gold`: `oeb gold draft` from five runs over 620 generated documents (docs/own-documents.md).

The corpus and the five mock runs (three independent systems, a correlated pair) are made first
(scripts/gold_corpus.py); then the draft alone runs in a child process, timed, with its peak memory.
Prints one JSON line: documents, values drafted and undecided, wall seconds, peak RSS in MiB, load.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gold_corpus import build

DOCUMENTS = 620


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="oeb-bench-gold-") as folder:
        root = Path(folder)
        made = build(root, DOCUMENTS)
        out = root / "drafted"
        command = [sys.executable, "-m", "oeb", "gold", "draft", *made.runs.values(), "--out", str(out)]
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(done.stdout.strip(), file=sys.stderr)
        result = {
            "documents": DOCUMENTS,
            "runs": len(made.runs),
            "seconds": round(seconds, 1),
            "peak_rss_mib": round(peak),
            "load_1min_before": round(load, 2),
            "cores": os.cpu_count(),
        }
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
