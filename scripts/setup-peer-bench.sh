#!/usr/bin/env bash
# Installs the Debian packages of the optional benchmark beside a real peer (bench/peer/:
# PyTorch TorchElastic). Not part of scripts/setup.sh: CI and the tests do not need them.
# Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

packages=(
  python3-torch  # torchrun, the c10d rendezvous, the elastic agent, gloo
)

# shellcheck source=scripts/apt_install.sh
source "$(dirname "$0")/apt_install.sh"
install_missing setup-peer-bench "${packages[@]}"
