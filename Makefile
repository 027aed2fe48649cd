# oeb developer entry points. `make bench` runs the main job offline; `make test` runs every test.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export RAY_USAGE_STATS_ENABLED := 0
export RAY_AUTH_MODE := disabled
export RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S := 0
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

.PHONY: setup test test-fast lint bench bench-scorer

setup:
	@command -v uv >/dev/null 2>&1 || python3 -m pip install -q uv
	$(UV) sync --locked

test: setup lint
	$(UV) run pytest -m "not ray" -n 2
	$(UV) run pytest -m ray -p no:xdist || [ $$? -eq 5 ]  # 5: no Ray test selected

test-fast: setup
	$(UV) run pytest -m "not ray and not slow" -n 2

lint: setup
	$(UV) run ruff check oeb tests scripts
	$(UV) run ruff format --check oeb tests scripts

bench: setup
	$(UV) run oeb score --pred oeb/examples/invoice/pred.json --gold oeb/examples/invoice/gold.json --schema oeb/examples/invoice/schema.json

bench-scorer: setup
	$(UV) run python scripts/bench_scorer.py
