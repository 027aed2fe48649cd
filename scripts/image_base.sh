#!/usr/bin/env bash
# Builds a local `python:3.12-slim` stand-in for machines that cannot reach Docker Hub (no registry,
# no Docker engine): a Debian bookworm minbase rootfs + this machine's pyenv Python 3.12, imported
# into podman as localhost/python:3.12-slim. Used by `make image-check`; real builds use the
# official image. Needs root, apt, debootstrap and podman. Idempotent: skips when the image exists.
set -euo pipefail
IMAGE=${BASE_IMAGE:-localhost/python:3.12-slim}
PODMAN=${PODMAN:-podman}
WORK=${IMAGE_WORK:-$(mktemp -d)}

if $PODMAN image exists "$IMAGE"; then
    echo "image_base: $IMAGE already exists"; exit 0
fi
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
PY_PREFIX=$(pyenv prefix 3.12)
MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
    | grep -oE '^(URIs:|deb) +https?://[^ ]+' | grep -oE 'https?://[^ ]+' | head -1 || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
ROOTFS="$WORK/rootfs"
trap 'rm -rf "$WORK"' EXIT

debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR"
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
chroot "$ROOTFS" apt-get install -y -q --no-install-recommends \
    libssl3 ca-certificates libsqlite3-0 libffi8 libreadline8 libncursesw6 libexpat1 libbz2-1.0 \
    liblzma5 zlib1g libuuid1 libnsl2 libtirpc3
chroot "$ROOTFS" apt-get clean
mkdir -p "$ROOTFS$PY_PREFIX"
cp -a "$PY_PREFIX/." "$ROOTFS$PY_PREFIX/"        # same path: it is linked with an rpath to itself
chmod 755 "$ROOTFS/root"   # pyenv lives under /root: the image's non-root user must reach python
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/"   # the local certificate authority
tar -C "$ROOTFS" -c . | $PODMAN import \
    --change "ENV PATH=$PY_PREFIX/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' - "$IMAGE"
echo "image_base: built $IMAGE"
