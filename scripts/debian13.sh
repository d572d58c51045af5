#!/usr/bin/env bash
# Runs a command of this checkout on Debian 13 (trixie: libtorch 2.6, onnx 1.17), the second
# platform torchonnx builds and tests on (issue 18):
#   bash scripts/debian13.sh bash scripts/test.sh      # all tests on Debian 13
#   bash scripts/debian13.sh bash scripts/run-example.sh
#   bash scripts/debian13.sh bash                      # a shell there
# On a Debian 13 machine the command runs as it is. On Debian 12 (as root) it runs in a Debian 13
# root made with debootstrap and kept between runs in $TORCHONNX_DEBIAN13_ROOT (default
# /var/cache/torchonnx/debian13; ~1 min to make, then the project's setup installs the stack in
# it, ~3 min the first time). The checkout and /tmp are bind-mounted at their own paths, and the
# build goes to build-debian13/ (TORCHONNX_BUILD_DIR), so the Debian 12 build/ is left alone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
[ $# -gt 0 ] || set -- bash

os_version() { (. "${1:-}/etc/os-release" && echo "${VERSION_ID:-}"); }
if [ "$(os_version)" = 13 ]; then
  exec "$@"
fi
if [ "$(id -u)" != 0 ]; then
  echo "debian13: making and entering a Debian 13 root needs root (or run on Debian 13)" >&2
  exit 2
fi

chroot_dir=${TORCHONNX_DEBIAN13_ROOT:-/var/cache/torchonnx/debian13}
mirror=${TORCHONNX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -f "$chroot_dir/.torchonnx-root" ]; then
  source scripts/install-packages.sh
  install_missing debian13 debootstrap
  echo "debian13: making a Debian 13 root in $chroot_dir (debootstrap, ~1 min)"
  rm -rf "$chroot_dir.partial"
  mkdir -p "$(dirname "$chroot_dir")"
  debootstrap --variant=minbase trixie "$chroot_dir.partial" "$mirror" >/dev/null
  rm -rf "$chroot_dir"
  mv "$chroot_dir.partial" "$chroot_dir"
  touch "$chroot_dir/.torchonnx-root"
fi

# The mounts live in a mount namespace of this command's own (unshare -m), so they vanish with it
# and runs at the same time (a build, a shell) do not unmount each other's.
if [ -z "${TORCHONNX_IN_DEBIAN13_NS:-}" ]; then
  TORCHONNX_IN_DEBIAN13_NS=1 exec unshare --mount --propagation private \
    bash "$root/scripts/debian13.sh" "$@"
fi
bind() {  # bind SOURCE: mount SOURCE at the same path inside the root
  mkdir -p "$chroot_dir$1"
  mount --rbind "$1" "$chroot_dir$1"
}
# The root is a mount point of its own, so that inside it `unshare -m` (the bad-input tests' full
# disk) can make "/" private.
mount --bind "$chroot_dir" "$chroot_dir"
mkdir -p "$chroot_dir/proc"
mount -t proc proc "$chroot_dir/proc"
bind /dev
bind /sys
bind /tmp
bind "$root"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"

# A clean environment: the host's PATH entries (pyenv, node) do not exist in the root.
quoted=$(printf '%q ' "$@")
chroot "$chroot_dir" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TORCHONNX_BUILD_DIR="${TORCHONNX_BUILD_DIR:-build-debian13}" \
  TORCHONNX_SKIP_SANITIZE="${TORCHONNX_SKIP_SANITIZE:-0}" \
  TORCHONNX_TARGETS="${TORCHONNX_TARGETS:-}" \
  TORCHONNX_TORCH_TESTS="${TORCHONNX_TORCH_TESTS:-1}" \
  bash -c "cd $(printf '%q' "$root") && $quoted"
