#!/usr/bin/env bash
# The project's entry point: `scripts/run.sh demo` or `scripts/run.sh test`.
#   demo   install what is missing, build, and run the embedded demo
#   test   install what is missing, build, and run every test (CTest)
#   build  install what is missing and build
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
build_type=${BUILD_TYPE:-RelWithDebInfo}
jobs=${JOBS:-$(nproc)}

bash scripts/setup.sh

build() {
  if [[ ! -f "$build_dir/build.ninja" ]]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" ${CMAKE_ARGS:-}
  fi
  cmake --build "$build_dir" -j "$jobs"
}

case "${1:-demo}" in
  build)
    build
    ;;
  demo)
    build
    exec "$build_dir/apps/clustersim/clustersim" --demo
    ;;
  test)
    build
    cd "$build_dir"
    exec ctest --output-on-failure -j "$jobs" --timeout 600
    ;;
  *)
    echo "usage: $0 demo|test|build" >&2
    exit 2
    ;;
esac
