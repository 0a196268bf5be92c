#!/usr/bin/env bash
# Build the readers' libFuzzer targets (clang, ASan + UBSan, engine only: build-fuzz/) and run
# each for SECONDS (default 60) from a seed corpus of the project's own files.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 mjcf urdf
# An input that crashes, breaks a reader's rule (tests/fuzz/fuzz_input.h), runs past 1 s or
# allocates past 2 GB is a finding: libFuzzer writes it to build-fuzz/findings/<target>/ and
# the script fails. Keep each (after the fix) in tests/data/fuzz/<target>/, which the normal
# ctest replays (fuzz.<target>). The corpus grows in build-fuzz/corpus/<target>/ between runs.
# libFuzzer's output of each target is in build-fuzz/fuzz-<target>.log; its last lines (exec/s,
# cov, ft) are printed. A timeout that does not come back alone is a stall (below), not a finding.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(scene urdf mjcf mesh_obj mesh_stl mesh_dae script values wire checkpoint)

"$root/scripts/setup.sh" --fuzz
dir="$root/build-fuzz"
start=$(date +%s)
if [[ ! -f "$dir/build.ninja" ]]; then
  # -O1 with line tables: ASan's usual level, and the quickest sanitized build of the engine
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER=clang++ -DADJ_FUZZ=ON -DADJ_CUDA=OFF -DADJ_APP=OFF -DADJ_TESTS=OFF -DADJ_BENCH=OFF
fi
cmake --build "$dir" -j "$jobs" --target "${targets[@]/#/fuzz_}"
echo "fuzz.sh: build took $(( $(date +%s) - start )) s"

# seed files of each target: the project's own scenes, robots, meshes and scripts, and the
# inputs kept from earlier findings
seeds() {
  local d=$root/tests/data
  case "$1" in
    scene) find "$root/assets/scenes" "$d/scenes" "$d/editor" -name '*.json' ;;
    urdf) find "$root/assets/robots" "$d" "$root/../shared/robots" -name '*.urdf' ;;
    mjcf) find "$d/mjcf" "$root/../shared/robots" -name '*.xml' ;;
    mesh_obj) find "$root/assets" "$d/meshes" "$root/../shared/robots" -name '*.obj' -size -64k ;;
    mesh_stl) find "$root/assets" "$d/meshes" "$root/../shared/robots" -iname '*.stl' -size -64k ;;
    mesh_dae) find "$root/assets" "$d" "$root/../shared/robots" -name '*.dae' -size -64k ;;
    script) find "$d/editor" "$root/tests/editor" -name '*.txt' -o -name '*.script' ;;
    values) find "$root/tests/fuzz/seeds/values" -type f ;;
    wire) find "$root/tests/fuzz/seeds/wire" -type f ;;
    checkpoint) find "$root/tests/fuzz/seeds/checkpoint" -type f ;;
  esac 2>/dev/null || true
  if [[ -d "$d/fuzz/$1" ]]; then find "$d/fuzz/$1" -type f; fi
  return 0
}

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
# a timeout that does not come back when its input runs alone (three times, 1 s each) was the
# shared machine stalling, not the reader: it is set aside in findings/<target>/stalls/ and the
# run goes on for the time left
confirmed() {
  local t=$1 f=$2
  [[ "$(basename "$f")" == timeout-* ]] || return 0
  if "$dir/bin/fuzz_$t" -runs=3 -timeout=1 -rss_limit_mb=2048 "$f" >/dev/null 2>&1; then
    mkdir -p "$(dirname "$f")/stalls" && mv "$f" "$(dirname "$f")/stalls/"
    return 1
  fi
  return 0
}

failed=()
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t" findings="$dir/findings/$t"
  mkdir -p "$corpus" "$findings"
  seeds "$t" | while read -r f; do cp -n "$f" "$corpus/" 2>/dev/null || true; done
  echo "fuzz.sh: $t for $seconds s ($(ls "$corpus" | wc -l) corpus files)"
  end=$(( $(date +%s) + seconds )) log="$dir/fuzz-$t.log"
  : >"$log"
  while (( $(date +%s) < end )); do
    mark="$dir/fuzz-$t.mark" left=$(( end - $(date +%s) ))
    touch "$mark"
    # one job (the machine is shared); timeouts and memory past the limits are findings
    # (-max_total_time=0 would mean no limit)
    if "$dir/bin/fuzz_$t" "$corpus" -max_total_time=$(( left > 0 ? left : 1 )) -timeout=1 -rss_limit_mb=2048 \
        -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" >>"$log" 2>&1; then
      break
    fi
    new=$(find "$findings" -maxdepth 1 -type f -newer "$mark")
    real=0
    [[ -n "$new" ]] || real=1  # it stopped without an input to show
    for f in $new; do confirmed "$t" "$f" && real=1; done
    if (( real )); then
      failed+=("$t")
      tail -n 40 "$log"
      break
    fi
    echo "fuzz.sh: $t: a timeout that did not come back alone (a stall of the machine); going on"
  done
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" | tail -n 3 || true
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: findings in ${failed[*]} (inputs in $dir/findings/)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, no finding"
