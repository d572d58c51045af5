#!/usr/bin/env bash
# Runs a command of this checkout on another Debian release, one of the platforms torchonnx builds
# and tests on (issues 18 and 58):
#   bash scripts/root.sh forky bash scripts/test.sh       # all tests on PyTorch 2.14
#   bash scripts/root.sh debian13 bash scripts/run-example.sh
#   bash scripts/root.sh forky bash                        # a shell there
# Releases: debian13 (trixie: libtorch 2.6, onnx 1.17) and forky (Debian testing: libtorch 2.14,
# onnx 1.20). scripts/debian13.sh and scripts/forky.sh are this script with the release given.
# On a machine of that release the command runs as it is. Elsewhere (as root) it runs in a root
# made with debootstrap and kept between runs in $TORCHONNX_ROOT_DIR (default
# /var/cache/torchonnx/RELEASE; ~1 min to make, then the project's setup installs the stack in it,
# a few minutes the first time). The checkout and /tmp are bind-mounted at their own paths, and
# the build goes to build-RELEASE/ (TORCHONNX_BUILD_DIR), so the host's build/ is left alone.
# The root takes the host's DNS settings, its CA certificates (a TLS proxy's CA among them: npm
# and apt over https inside the root need it) and its proxy variables.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

release=${1:-}
case "$release" in
  debian13 | trixie) release=debian13 codename=trixie script=trixie ;;
  forky) codename=forky
    # Debian 12's debootstrap has no script for forky; testing's is sid's.
    script=sid ;;
  *) echo "root: usage: scripts/root.sh debian13|forky [COMMAND...]" >&2; exit 2 ;;
esac
shift
[ $# -gt 0 ] || set -- bash

if [ "$( (. /etc/os-release && echo "${VERSION_CODENAME:-}"))" = "$codename" ]; then
  exec "$@"
fi
if [ "$(id -u)" != 0 ]; then
  echo "$release: making and entering a $codename root needs root (or run on $codename)" >&2
  exit 2
fi

default_dir=/var/cache/torchonnx/$release
chroot_dir=${TORCHONNX_ROOT_DIR:-$default_dir}
# The old name of the Debian 13 root's folder variable.
[ "$release" != debian13 ] || chroot_dir=${TORCHONNX_DEBIAN13_ROOT:-$chroot_dir}
mirror=${TORCHONNX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -f "$chroot_dir/.torchonnx-root" ]; then
  source scripts/install-packages.sh
  install_missing "$release" debootstrap
  echo "$release: making a $codename root in $chroot_dir (debootstrap, ~1 min)"
  rm -rf "$chroot_dir.partial"
  mkdir -p "$(dirname "$chroot_dir")"
  script_path=/usr/share/debootstrap/scripts/$script
  debootstrap --variant=minbase "$codename" "$chroot_dir.partial" "$mirror" "$script_path" >/dev/null
  if [ "$release" = forky ]; then
    # The mirror serves testing with a Release file past its Valid-Until, which apt refuses as
    # expired; the check is off in this root only (never on Debian 12 or 13).
    echo 'Acquire::Check-Valid-Until "false";' >"$chroot_dir.partial/etc/apt/apt.conf.d/99torchonnx"
  fi
  rm -rf "$chroot_dir"
  mv "$chroot_dir.partial" "$chroot_dir"
  touch "$chroot_dir/.torchonnx-root"
fi

# The mounts live in a mount namespace of this command's own (unshare -m), so they vanish with it
# and runs at the same time (a build, a shell) do not unmount each other's.
if [ -z "${TORCHONNX_IN_ROOT_NS:-}" ]; then
  TORCHONNX_IN_ROOT_NS=1 exec unshare --mount --propagation private \
    bash "$root/scripts/root.sh" "$release" "$@"
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
# The host's trust store: the extra CAs it adds (kept by the root's update-ca-certificates, when
# its ca-certificates package runs that), and the bundle as the host has it now.
if [ -d /usr/local/share/ca-certificates ]; then
  mkdir -p "$chroot_dir/usr/local/share/ca-certificates"
  cp -r /usr/local/share/ca-certificates/. "$chroot_dir/usr/local/share/ca-certificates/"
fi
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$chroot_dir/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$chroot_dir/etc/ssl/certs/ca-certificates.crt"
fi

# A clean environment (the host's PATH entries, pyenv and node, do not exist in the root), but for
# the proxy and trust-store variables, which name paths that are the same inside.
passed=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY all_proxy \
         SSL_CERT_FILE SSL_CERT_DIR NODE_EXTRA_CA_CERTS CURL_CA_BUNDLE REQUESTS_CA_BUNDLE \
         GIT_SSL_CAINFO PIP_CERT CI; do
  [ -z "${!v:-}" ] || passed+=("$v=${!v}")
done
quoted=$(printf '%q ' "$@")
chroot "$chroot_dir" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  "${passed[@]}" \
  TORCHONNX_BUILD_DIR="${TORCHONNX_BUILD_DIR:-build-$release}" \
  TORCHONNX_SKIP_SANITIZE="${TORCHONNX_SKIP_SANITIZE:-0}" \
  TORCHONNX_TARGETS="${TORCHONNX_TARGETS:-}" \
  TORCHONNX_TORCH_TESTS="${TORCHONNX_TORCH_TESTS:-1}" \
  TORCHONNX_LEG="${TORCHONNX_LEG:-}" \
  TORCHONNX_FUZZ_PROGRAMS="${TORCHONNX_FUZZ_PROGRAMS:-60}" \
  bash -c "cd $(printf '%q' "$root") && $quoted"
