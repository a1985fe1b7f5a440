#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (docs/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Builds the targets (clang, -DCLUSTERD_FUZZ=ON, in $FUZZ_BUILD_DIR, default build-asan/) when
# needed, then fuzzes each TARGET (default: all; names as in tests/fuzz/corpus/, e.g.
# device_info, or fuzz_device_info) for SECONDS (default 60), $JOBS at a time (default: the
# number of cores), each starting from its checked-in corpus. Inputs that find new coverage go
# to $FUZZ_WORK_DIR/corpus/<target>/ (default build-asan/fuzz/), never into the checked-in corpus. A crash, a leak, a timeout or an
# out-of-memory stops that target; the script goes on with the others and fails at the end,
# printing each reproducer's path and the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if [[ $# -gt 0 ]]; then shift; fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [SECONDS] [TARGET...]" >&2
  exit 2
fi

build_dir=${FUZZ_BUILD_DIR:-build-asan}
work_dir=${FUZZ_WORK_DIR:-$build_dir/fuzz}
jobs=${JOBS:-$(nproc)}
corpus_root=tests/fuzz/corpus

targets=()
if [[ $# -eq 0 ]]; then
  for d in "$corpus_root"/*/; do targets+=("$(basename "$d")"); done
else
  for t in "$@"; do targets+=("${t#fuzz_}"); done
fi
for t in "${targets[@]}"; do
  if [[ ! -d "$corpus_root/$t" ]]; then
    echo "fuzz: unknown target \"$t\" (no $corpus_root/$t/)" >&2
    exit 2
  fi
done

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [[ ! -f "$build_dir/build.ninja" ]] || ! grep -q '^CLUSTERD_FUZZ:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCLUSTERD_FUZZ=ON >/dev/null
fi
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]/#/fuzz_}"

# Leaks are checked per input (libFuzzer's -detect_leaks); halt on the first UBSan report.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Each target is one libFuzzer process on one core: $jobs of them run at a time, and each
# prints its summary (or, on a failure, its log's tail and reproducers) when it ends.
fuzz_target() {
  local t=$1
  local bin="$build_dir/tests/fuzz/fuzz_$t"
  local corpus="$work_dir/corpus/$t"
  local artifacts="$work_dir/artifacts/$t"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  local log="$work_dir/$t.log"
  # The file parsers get inputs up to 16 KiB (a count-driven bug, such as a sum over many
  # entries, needs more than libFuzzer's default 4 KiB); the daemon and store targets keep the
  # default, where each input costs a round trip or a store.
  # They also get tests/fuzz/values.dict: integer extremes (which libFuzzer's comparison
  # tracing does not suggest) and JSON / YAML punctuation.
  local extra=()
  case "$t" in
    http_request | grpc_request) ;;
    store_object) extra=(-dict=tests/fuzz/values.dict) ;;
    *) extra=(-max_len=16384 -dict=tests/fuzz/values.dict) ;;
  esac
  if "$bin" "${extra[@]}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$artifacts/" "$corpus" "$corpus_root/$t" >"$log" 2>&1; then
    echo "== fuzz_$t: ${seconds}s (log: $log)"
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | tail -2 || true
    return 0
  fi
  echo "== fuzz_$t: FAILED (log: $log)"
  tail -40 "$log"
  for a in "$artifacts"/*; do
    [[ -e "$a" ]] || continue
    echo "fuzz_$t: reproducer $a"
    echo "  replay: $bin $a"
  done
  return 1
}

mkdir -p "$work_dir"
declare -A running=()  # pid -> target
failed=()
reap_one() {
  local pid
  wait -n -p pid "${!running[@]}" && true
  local status=$?
  if ((status != 0)); then failed+=("${running[$pid]}"); fi
  unset "running[$pid]"
}
for t in "${targets[@]}"; do
  while ((${#running[@]} >= jobs)); do reap_one; done
  fuzz_target "$t" > "$work_dir/$t.summary" 2>&1 &
  running[$!]=$t
done
while ((${#running[@]} > 0)); do reap_one; done
for t in "${targets[@]}"; do cat "$work_dir/$t.summary"; done

if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), ${seconds}s each, no crash"
