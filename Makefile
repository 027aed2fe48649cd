# oeb developer entry points. `make bench` runs the main job offline; `make test` runs every test.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export RAY_USAGE_STATS_ENABLED := 0
export RAY_AUTH_MODE := disabled
export RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S := 0
export RAY_ENABLE_UV_RUN_RUNTIME_ENV := 0
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

# `make bench` runs the offline mock config; `make bench SYSTEM=reducto` runs configs/reducto.yaml.
# With RAY_ADDRESS=http://HEAD:8265 (a Ray dashboard) set, `bench`, `bench-all` and `regrade` submit
# to that cluster's Jobs API instead (scripts/submit.py) and need OUT on shared storage (s3://...).
SYSTEM ?= mock
BENCH_CONFIG = $(if $(filter mock,$(SYSTEM)),oeb/examples/mock.yaml,configs/$(SYSTEM).yaml)
OUT ?= runs
# SUBMIT_FLAGS=--send-keys also sends the system's keys from this shell (a throwaway cluster only).
SUBMIT = $(UV) run python scripts/submit.py $(SUBMIT_FLAGS)

.PHONY: setup test test-fast check check-docs check-examples imports lint style docs docs-serve bench bench-all regrade bench-scorer bench-run bench-scale bench-storage bench-view bench-slices bench-grounding bench-adjudicate bench-gold bench-cluster image image-check lint-cluster

setup:
	@command -v uv >/dev/null 2>&1 || python3 -m pip install -q uv
	$(UV) sync --locked

# Tests keep Python's bytecode caches (__pycache__, ignored by git) even where the environment sets
# PYTHONDONTWRITEBYTECODE: otherwise every pytest worker, `oeb` subprocess and Ray worker compiles oeb,
# Ray and the other dependencies from source again (about 6 s of CPU each, hundreds of them in CI).
# The benchmarks keep them too: without, each of a run's Ray workers compiles Ray again (measured on a
# fresh clone: `ray.init` 24 s instead of 8, and a ten-system run's workers 25% more CPU).
PYRUN = PYTHONDONTWRITEBYTECODE= $(UV) run
PYTEST = $(PYRUN) pytest
# The tests without Ray write about 9,000 small files a run (run folders, records, datasets) and pytest
# deletes a run's folders three runs later: on this machine's disk each file costs about 0.3 ms to make
# and as much to delete, on a RAM disk (/dev/shm, where there is one) next to nothing. Ray's tests keep
# /tmp, where Ray keeps its session files. (Three workers on two cores: 2 s faster on the fast tests,
# 20 s slower on all of them.)
UNIT = $(if $(wildcard /dev/shm/.),TMPDIR=/dev/shm) $(PYTEST) -n 2

# mypy runs beside the unit tests (in `test` and `check`): they leave about a third of two cores idle,
# waiting on sockets and timers, and mypy (5 s warm, 37 s on a fresh clone) fits in it.
# $(call beside_mypy,COMMAND) fails if either fails.
beside_mypy = $(UV) run mypy & mypy=$$!; $(1); status=$$?; wait $$mypy && exit $$status

test: setup style
	$(call beside_mypy,$(UNIT) -m "not ray and not cluster")
	$(PYRUN) python scripts/check_docs.py --examples  # every README and docs/ example on the sample (~15 s, 4 s of CPU)
	$(PYTEST) -m ray -p no:xdist || [ $$? -eq 5 ]  # 5: no Ray test selected
	$(PYTEST) -m cluster -p no:xdist tests/cluster  # its own 2-node Ray: a process of its own

test-fast: setup
	$(UNIT) -m "not ray and not slow and not cluster"

# The loop to run before each commit (.pre-commit-config.yaml runs the same): fixes what ruff can,
# formats, type-checks, and runs the fast tests (not ray, slow or cluster).
check: setup imports
	$(UV) run ruff check --fix oeb tests scripts
	$(UV) run ruff format oeb tests scripts
	$(call beside_mypy,$(UNIT) -q -m "not ray and not slow and not cluster")

# `lint` is `style` and mypy (strict, over oeb/: pyproject.toml).
lint: style
	$(UV) run mypy

style: setup check-docs imports
	$(UV) run ruff check oeb tests scripts
	$(UV) run ruff format --check oeb tests scripts
	$(UV) run hadolint Dockerfile  # the static binary from the lint group: offline, < 1 s
	$(MKDOCS) build --strict --quiet  # every nav page exists, every link and anchor resolves (offline)

# No import circles in oeb, and oeb.run's rooms in their layers (import-linter, contracts in
# pyproject.toml's [tool.importlinter]; under a second): part of `style`, so of `make test`.
imports: setup
	$(UV) run lint-imports --no-cache

# The figures pages (docs/performance/*.md, CHANGELOG.md) name only options and inputs their scripts
# have: a command beside a figure must still run; and no page (docs/, README, CONTRIBUTING, this
# Makefile) names a path of one machine (scripts/check_docs.py; about 3 s).
check-docs: setup
	$(UV) run python scripts/check_docs.py

# Every fenced command and Python example of the README and docs/, run on the bundled sample (those
# needing a key, a cluster, S3 or the Hub skipped with their reason; --verbose lists them). In `make test`.
check-examples: setup
	$(PYRUN) python scripts/check_docs.py --examples

# The docs site (mkdocs-material; API pages from the docstrings): built into build/site, or served with
# live reload at http://127.0.0.1:8000.
MKDOCS = NO_MKDOCS_2_WARNING=1 $(UV) run mkdocs
docs: setup
	$(MKDOCS) build --strict

docs-serve: setup
	$(MKDOCS) serve

bench: setup
ifdef RAY_ADDRESS
	$(SUBMIT) --config $(BENCH_CONFIG) --out $(OUT)
else
	$(PYRUN) oeb run --config $(BENCH_CONFIG) --out $(OUT) -y
endif

# The ten published settings side by side in ONE run (each system with its own actors, pace and
# in-flight cap; a config that is refused, e.g. for a missing key, is listed and the others go
# ahead), one folder each under BENCH_ALL_OUT, one leaderboard at the end: here, or as one Ray job
# on the cluster at RAY_ADDRESS. The exit code is the run's (docs/running.md).
BENCH_STAMP := $(shell date +%Y%m%d-%H%M%S)
BENCH_ALL_OUT ?= $(OUT)/bench-all-$(BENCH_STAMP)
BENCH_CONFIGS ?= $(wildcard configs/*.yaml)
bench-all: setup
ifdef RAY_ADDRESS
	$(SUBMIT) $(foreach config,$(BENCH_CONFIGS),--config $(config)) --out $(BENCH_ALL_OUT)
else
	$(PYRUN) oeb run $(foreach config,$(BENCH_CONFIGS),--config $(config)) --out $(BENCH_ALL_OUT) -y
endif

# `make regrade RUNS=s3://bucket/runs/ [OUT=s3://bucket/regraded]`: every run folder under RUNS graded
# again together (only documents whose prediction, gold, schema or scorer changed are scored), results
# beside each run or under OUT (only when given), then the leaderboard; on the cluster at RAY_ADDRESS.
REGRADE_OUT = $(if $(filter-out file,$(origin OUT)),--out $(OUT))
regrade: setup
	@test -n "$(RUNS)" || { echo "regrade: give RUNS=s3://bucket/runs/ (a run folder or a prefix of runs)"; exit 2; }
ifdef RAY_ADDRESS
	$(SUBMIT) --grade $(RUNS) $(REGRADE_OUT)
else
	$(PYRUN) oeb grade $(RUNS) $(REGRADE_OUT)
endif

# `make bench-scorer ARGS="--reference ../ref/.venv/bin/python"`: the scorer on its family of
# generated tables, beside the reference (docs/performance/scorer.md); ARGS=--list names the inputs.
bench-scorer: setup
	$(PYRUN) python scripts/bench_scorer.py $(ARGS)

bench-run: setup
	$(PYRUN) python scripts/bench_run.py

# Ten job-protocol fakes, 620 synthetic documents, ten configs side by side in one `oeb run`: wall time
# against the bound, driver CPU and memory, jobs bought per document (docs/performance/scale.md).
# SCALE_FLAGS="--nodes 2" on a local two-node Ray, "--profile" to see where the driver's CPU goes.
SCALE_FLAGS ?=
bench-scale: setup
	$(PYRUN) python scripts/bench_scale.py $(SCALE_FLAGS)

# 60 documents to moto's S3 through a proxy: 40% SlowDown, 5% closed unanswered, 3% stalled 4 s; run, grade and report
# lose nothing and buy nothing twice (docs/storage.md). STORAGE_FLAGS="--faults reset:0.2,reset_after:0.2 --seed 2".
STORAGE_FLAGS ?=
bench-storage: setup
	$(PYRUN) python scripts/bench_storage_faults.py $(STORAGE_FLAGS)

# `oeb view` on a 620-document graded run of the mock system: opening and a document page, against
# the targets of 2 s and 1 s (docs/diagnosing.md). VIEW_FLAGS="--keep DIR" builds the run once in DIR.
VIEW_FLAGS ?=
bench-view: setup
	$(PYRUN) python scripts/bench_view.py $(VIEW_FLAGS)

# `oeb gold draft` from five mock runs over 620 generated documents (docs/own-documents.md): wall time
# and peak memory of the draft alone, with the machine's load.
bench-gold: setup
	$(PYRUN) python scripts/bench_gold.py

# Document traits of a 620-document sample (cold and cached) and `oeb report --by pages` over ten
# graded runs of it, against the targets of 30 s, 1 s and 5 s (docs/slices.md).
# SLICES_FLAGS="--keep DIR" builds the sample and runs once in DIR.
SLICES_FLAGS ?=
bench-slices: setup
	$(PYRUN) python scripts/bench_slices.py $(SLICES_FLAGS)

# Grounding and calibration over graded runs of a 620-document sample: `oeb report --grounding` and
# `--calibration` against the target of 20 s (docs/grounding.md). GROUNDING_FLAGS="--keep DIR"
# builds the sample and its ten runs once in DIR ("--systems 2" for two).
GROUNDING_FLAGS ?=
bench-grounding: setup
	$(PYRUN) python scripts/bench_grounding.py $(GROUNDING_FLAGS)

# `make bench-adjudicate ADJUDICATE_FLAGS="--keep /tmp/adj"`: ten mock runs of 620 documents regraded, then
# the same under 1,000 accepted adjudications (docs/adjudication.md has the figures).
bench-adjudicate: setup
	$(PYRUN) python scripts/bench_adjudicate.py $(ADJUDICATE_FLAGS)

# `make bench-cluster SYSTEM=reducto OUT=s3://bucket/runs` on a Ray cluster node (the image's Ray
# head, a RayJob): the same config as `make bench`, on the running cluster (ray.address=auto), no
# `uv sync`. In the image OEB=oeb; elsewhere `uv run oeb`.
OEB ?= $(UV) run oeb
bench-cluster:
	$(OEB) run --config $(BENCH_CONFIG) --set ray.address=auto --out $(OUT) -y

# Container image (Dockerfile). `make image` builds with podman (or CONTAINER=docker);
# `make image-check` (not part of `make test`) builds from a locally made base image on machines
# without a registry or Docker engine, then runs `oeb --version` and `oeb score` inside it.
CONTAINER ?= podman
IMAGE ?= localhost/oeb:dev
BASE_IMAGE ?= python:3.12-slim
BUILD_FLAGS ?=
image:
	$(CONTAINER) build $(BUILD_FLAGS) --build-arg BASE_IMAGE=$(BASE_IMAGE) -t $(IMAGE) .

image-check:
	scripts/image_check.sh

# The cluster/container configs alone: hadolint, Ray's launcher schema, Kubernetes schemas.
lint-cluster: setup
	$(UV) run hadolint Dockerfile
	$(UV) run pytest -q tests/cluster_configs
