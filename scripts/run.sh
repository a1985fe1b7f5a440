#!/usr/bin/env bash
# The project's entry point: `scripts/run.sh demo` or `scripts/run.sh test`.
#   demo   install what is missing, build, and run the embedded demo
#   test   install what is missing, build (and the real kube-apiserver and etcd of the kube-real
#          tests, tests/kube-real/build.sh), and run every test (CTest)
#   build  install what is missing and build
# Under CI (CI=true), or with SANITIZE=1, `test` also builds the unit tests and the fuzz targets
# with clang, AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/ (-DCLUSTERD_FUZZ=ON;
# clang also checks the thread-safety annotations there, -Wthread-safety -Werror),
# runs the unit tests and every fuzz target's checked-in corpus there, then fuzzes each target
# for FUZZ_SECONDS (default 15) with scripts/fuzz.sh (docs/fuzzing.md).
# Under CI the main tree is the Release configuration the Dockerfile uses (-O3, -Werror): every
# test runs on the code an image ships, so -O3's warnings and optimiser-only bugs are seen before
# an image build meets them, and no second optimised tree is compiled. Elsewhere the main tree is
# RelWithDebInfo (BUILD_TYPE sets it); RELEASE=1 then also builds the Release configuration in
# build-release/ (the shipped binaries and the unit tests) and runs those unit tests.
# CTest runs TEST_JOBS tests at a time (default: four per core, at most 16): the integration and
# end-to-end tests mostly wait on real timers (the whole suite keeps a quarter of one core busy
# at two tests per core), so four per core finish in a quarter of the time.
set -euo pipefail
cd "$(dirname "$0")/.."

is_on() { [[ "${1:-}" == "1" || "${1:-}" == "true" ]]; }

build_dir=${BUILD_DIR:-build}
if is_on "${CI:-}"; then
  build_type=${BUILD_TYPE:-Release}
else
  build_type=${BUILD_TYPE:-RelWithDebInfo}
fi
jobs=${JOBS:-$(nproc)}
test_jobs=${TEST_JOBS:-$((4 * jobs < 16 ? 4 * jobs : 16))}

bash scripts/setup.sh

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere (CI) reuses the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# build [TARGET...]: configures once, then builds the targets named (every target when none).
build() {
  if [[ ! -f "$build_dir/build.ninja" ]]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" ${CMAKE_ARGS:-}
  elif ! grep -qx "CMAKE_BUILD_TYPE:STRING=$build_type" "$build_dir/CMakeCache.txt"; then
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" >/dev/null  # asked for another type
  fi
  local targets=()
  if (($# > 0)); then
    targets=(--target "$@")
  fi
  cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
}

case "${1:-demo}" in
  build)
    build
    ;;
  demo)
    # Only what the demo runs: clustersim starts clusterd from the same build directory (the
    # tests and benchmarks are built by `test` and `build`).
    build clustersim clusterd clusterctl
    exec "$build_dir/apps/clustersim/clustersim" --demo
    ;;
  test)
    build
    # The real kube-apiserver and etcd of the `kube-real` tests, from their Go modules pinned in
    # tests/kube-real/go.mod (cheap once Go's build cache holds them). Only the tests need them:
    # the demo never waits for this build.
    bash tests/kube-real/build.sh "$build_dir/kube-real"
    (cd "$build_dir" && ctest --output-on-failure -j "$test_jobs" --timeout 600)
    if is_on "${SANITIZE:-${CI:-}}"; then
      echo "== unit tests and fuzz targets under clang, ASan + UBSan (build-asan/)"
      # One sanitizer tree for both: clang, the fuzzer's coverage instrumentation in every
      # library. A tree configured otherwise (an older gcc build-asan/) is rebuilt from scratch.
      if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CLUSTERD_FUZZ:BOOL=ON' build-asan/CMakeCache.txt; then
        rm -rf build-asan
      fi
      # Batches of 16 sources: the tree is built whole and rarely edited, and a cold build of
      # larger batches repeats fewer headers (the main tree keeps 8 for its edit loop).
      if [[ ! -f build-asan/build.ninja ]]; then
        cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
          -DCLUSTERD_FUZZ=ON -DCLUSTERD_UNITY_BATCH_SIZE=16 >/dev/null
      fi
      targets=$(cmake --build build-asan --target help 2>/dev/null | sed -n 's/^\(unit[a-z_]*tests\):.*/\1/p')
      cmake --build build-asan -j "$jobs" --target $targets fuzz_all
      (cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ctest --output-on-failure -j "$jobs" --timeout 600 -L 'unit|fuzz')
      echo "== short fuzzing run of every target (scripts/fuzz.sh)"
      FUZZ_BUILD_DIR=build-asan bash scripts/fuzz.sh "${FUZZ_SECONDS:-15}"
    fi
    if is_on "${RELEASE:-}" && [[ "$build_type" != Release ]]; then
      echo "== the Release configuration (build-release/)"
      if [[ ! -f build-release/build.ninja ]]; then
        cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
      fi
      targets=$(cmake --build build-release --target help 2>/dev/null | sed -n 's/^\(unit[a-z_]*tests\):.*/\1/p')
      cmake --build build-release -j "$jobs" --target clusterd clusterctl clustersim npu-agent $targets
      (cd build-release && ctest --output-on-failure -j "$jobs" --timeout 600 -L unit)
    fi
    ;;
  *)
    echo "usage: $0 demo|test|build" >&2
    exit 2
    ;;
esac
