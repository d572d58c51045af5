# Sourced by the scripts: which of torchonnx's platforms this machine (or root) is.
#   platform_id    debian12, debian13 or forky (another release: its codename)
#   platform_name  "Debian 12", "Debian 13" or "Debian forky"
# forky is Debian's testing release: its os-release has a codename and no VERSION_ID.
platform_id=$(. /etc/os-release && case "${VERSION_CODENAME:-}" in
  bookworm) echo debian12 ;; trixie) echo debian13 ;; *) echo "${VERSION_CODENAME:-unknown}" ;;
esac)
case "$platform_id" in
  debian12) platform_name="Debian 12" ;;
  debian13) platform_name="Debian 13" ;;
  *) platform_name="Debian $platform_id" ;;
esac
