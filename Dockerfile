# oeb image: the harness, the scorer and Ray, so one image serves as Ray head, Ray worker and driver.
#   podman build --pull=never -t localhost/oeb:dev .        (or docker build; see `make image`)
#   docker run --rm --shm-size=8g oeb:dev score --pred p.json --gold g.json --schema s.json
# Dependencies come from uv.lock only (`--frozen`); no API key or credential is ever copied in.
ARG BASE_IMAGE=python:3.12-slim

# ---- build: uv resolves nothing, it installs the locked versions into /app/.venv ----
FROM ${BASE_IMAGE} AS build
ENV UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON_PREFERENCE=only-system \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NO_CACHE=1 \
    PYTHONUNBUFFERED=1
RUN python3 -m pip install --no-cache-dir uv==0.13.9
WORKDIR /app
# Dependencies in their own layer: rebuilt only when the lock changes, not when the code does.
# No dev/lint groups; the `aws` group adds boto3, which Ray's autoscaler needs on an EC2 head.
COPY pyproject.toml uv.lock .python-version ./
RUN uv sync --frozen --no-dev --no-default-groups --group aws --no-install-project
COPY README.md Makefile ./
COPY configs ./configs
COPY oeb ./oeb
# Readable by the runtime user whatever the modes in the build context (atomic writes leave 0600 files).
RUN chmod -R a+rX README.md Makefile configs oeb \
    && uv sync --frozen --no-dev --no-default-groups --group aws

# ---- runtime: the base image + the virtual environment and the sources, without uv or pip caches ----
FROM ${BASE_IMAGE}
# make: cluster jobs run `make bench-cluster SYSTEM=...`. tesseract-ocr: `oeb view` reads scanned pages
# (no text layer) by OCR to place their values (English data only). User oeb: uid/gid 1000, as in rayproject images.
# profile.d: login shells (`bash -l`, as KubeRay and the Ray launcher use) reset PATH; keep the venv on it.
# hadolint ignore=DL3008,SC2016
RUN apt-get update \
    && apt-get install -y --no-install-recommends make tesseract-ocr tesseract-ocr-eng \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash oeb \
    && echo 'export PATH=/app/.venv/bin:$PATH' > /etc/profile.d/oeb-venv.sh
WORKDIR /app
# The virtual environment, oeb's sources, configs/ and the Makefile (`make bench-cluster`).
COPY --from=build /app /app
ENV PATH=/app/.venv/bin:$PATH \
    VIRTUAL_ENV=/app/.venv \
    PYTHONUNBUFFERED=1 \
    OEB=oeb \
    RAY_USAGE_STATS_ENABLED=0 \
    RAY_ENABLE_UV_RUN_RUNTIME_ENV=0
USER 1000:1000
ENTRYPOINT ["oeb"]
CMD ["--help"]
