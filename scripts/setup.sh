#!/usr/bin/env bash
# Installs the Debian packages the project builds and runs with. Idempotent: it only
# calls apt-get when something is missing, so it is cheap to run before every build.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev
  libabsl-dev nlohmann-json3-dev libspdlog-dev libcli11-dev libyaml-cpp-dev
  libcpp-httplib-dev libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libssl-dev
  libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-grpcio python3-protobuf python3-yaml python3-kubernetes
  chromium  # the dashboard test loads the page in headless Chromium
  openssl  # the TLS tests make their certificates at test time
  clang libclang-rt-14-dev  # the sanitizer tree and the libFuzzer targets (libclang_rt.fuzzer)
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

echo "setup: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
