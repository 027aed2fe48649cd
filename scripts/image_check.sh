#!/usr/bin/env bash
# `make image-check`: builds the oeb image with podman from a locally made base image (no registry,
# no Docker engine needed) and runs `oeb --version` and `oeb score` on the bundled example inside it.
# Needs root, apt, podman and buildah (`apt-get install -y podman buildah fuse-overlayfs debootstrap`),
# about 3-5 minutes and 2.5 GB of disk. RUN steps and `buildah run` use chroot isolation because
# the default OCI runtime (crun) cannot set rlimits/cgroups on these VMs.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE_IMAGE=${BASE_IMAGE_LOCAL:-localhost/python:3.12-slim}
IMAGE=${IMAGE:-localhost/oeb:check}
PODMAN="podman --cgroup-manager cgroupfs --events-backend file"

for tool in podman buildah; do
    command -v $tool >/dev/null || { echo "image-check: $tool is missing: apt-get install -y podman buildah fuse-overlayfs debootstrap" >&2; exit 1; }
done
BASE_IMAGE=$BASE_IMAGE PODMAN=$PODMAN scripts/image_base.sh
$PODMAN build --isolation chroot --pull=never --build-arg BASE_IMAGE="$BASE_IMAGE" -t "$IMAGE" .
$PODMAN image ls "$IMAGE"

CTR=$(buildah from --pull-never "$IMAGE")
trap 'buildah rm "$CTR" >/dev/null' EXIT
run() { buildah run --isolation chroot "$CTR" -- "$@"; }
run oeb --version
run oeb score --pred oeb/examples/invoice/pred.json --gold oeb/examples/invoice/gold.json \
    --schema oeb/examples/invoice/schema.json
run python -c "import oeb, ray, s3fs, huggingface_hub, pyarrow; print('image ok: ray', ray.__version__)"
run tesseract --version
run id
echo "image-check: ok ($IMAGE)"
