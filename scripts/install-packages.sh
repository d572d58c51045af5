# Sourced by scripts/setup.sh and scripts/sanitize.sh: install_missing WHO PACKAGE... installs the
# Debian packages that are not installed yet (as root, non-interactively), saying so as WHO.
install_missing() {
  local who=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "$who: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086  # TORCHONNX_APT_FLAGS: extra words for apt-get install
    apt-get install -y -qq ${TORCHONNX_APT_FLAGS:-} "${missing[@]}" >/dev/null
  fi
}
