#!/usr/bin/env bash
# Installs the Debian packages of the optional benchmark beside a real peer (bench/peer/:
# PyTorch TorchElastic). Not part of scripts/setup.sh: CI and the tests do not need them.
# Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

packages=(
  python3-torch  # torchrun, the c10d rendezvous, the elastic agent, gloo
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup-peer-bench: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
