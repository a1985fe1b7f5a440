#!/usr/bin/env bash
# Installs the Debian packages the project builds and runs with. Idempotent: it only
# calls apt-get when something is missing, so it is cheap to run before every build.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev
  libabsl-dev nlohmann-json3-dev libsimdjson-dev libspdlog-dev libcli11-dev libyaml-cpp-dev
  libcpp-httplib-dev libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libssl-dev
  libsqlite3-dev
  libmimalloc-dev  # clusterd's allocator (CLUSTERD_MIMALLOC)
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-grpcio python3-protobuf python3-yaml python3-kubernetes
  chromium  # the dashboard test loads the page in headless Chromium
  openssl  # the TLS tests make their certificates at test time
  clang libclang-rt-14-dev  # the sanitizer tree and the libFuzzer targets (libclang_rt.fuzzer)
)

# shellcheck source=scripts/apt_install.sh
source "$(dirname "$0")/apt_install.sh"
install_missing setup "${packages[@]}"
