# Sourced by scripts/setup.sh and scripts/setup-peer-bench.sh.
# install_missing LABEL PACKAGE...: installs with apt-get the packages that are not installed yet
# (with sudo when not root); does nothing when every one is there, so it is cheap to run before
# every build.
install_missing() {
  local label=$1
  shift
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  echo "$label: installing ${missing[*]}"
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
