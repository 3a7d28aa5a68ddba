#!/usr/bin/env bash
# Local stand-ins for the two public images the deployment is written for, made from Debian's own packages, for
# machines that cannot pull from a container registry (the check in scripts/container_check.py uses them):
#
#   attention-lab-base   ~ python:3.11-slim  Debian bookworm (minbase) + its Python 3.11 in a venv on PATH, so
#                                            `python` and `pip install` behave as in the official image
#   attention-lab-nginx  ~ nginx:*-alpine    Debian's nginx 1.22 in the foreground, config at /etc/nginx/nginx.conf
#
#   sudo bash deploy/base/build.sh            # needs root (debootstrap), a Docker daemon and Debian's mirror
#
# A user with registry access never needs this: Dockerfile and compose.yaml default to the official images.
set -euo pipefail

BASE_TAG=${BASE_TAG:-attention-lab-base}
NGINX_TAG=${NGINX_TAG:-attention-lab-nginx}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
HERE=$(cd "$(dirname "$0")" && pwd)

if ! docker image inspect "$BASE_TAG" > /dev/null 2>&1; then
  command -v debootstrap > /dev/null || { echo "debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
  ROOTFS=$(mktemp -d /tmp/attention-lab-rootfs.XXXXXX)
  trap 'rm -rf "$ROOTFS"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$ROOTFS" "$MIRROR"
  # This machine's certificate bundle (it may trust a TLS-inspecting proxy between pip and PyPI), used by pip
  # inside the image builds as on the host.
  cp "${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > "$ROOTFS/etc/pip.conf"
  # A venv owned by root, first on PATH: pip installs into it (Debian's own python3 refuses system-wide installs).
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin python3 -m venv /opt/python
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    /opt/python/bin/pip install --no-cache-dir --quiet --upgrade pip
  rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/usr/share/doc/* \
         "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/* "$ROOTFS"/tmp/*
  tar -C "$ROOTFS" --numeric-owner -c . | docker import \
    --change 'ENV PATH=/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    - "$BASE_TAG"
fi

if ! docker image inspect "$NGINX_TAG" > /dev/null 2>&1; then
  docker build --network host --build-arg BASE="$BASE_TAG" -t "$NGINX_TAG" -f "$HERE/nginx.Dockerfile" "$HERE"
fi
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^($BASE_TAG|$NGINX_TAG):"
