#!/usr/bin/env bash
# Set up, build and run every test (ctest). Vulkan tests run on lavapipe with validation.
#   scripts/test.sh              Release build in build/
#   scripts/test.sh --sanitize   ASan+UBSan build in build-asan/ (without CUDA)
# Other arguments go to ctest (e.g. -R engine). The plain run also builds the engine without
# CUDA (build-nocuda/, ADJ_CUDA=OFF) and runs its tests, so both configurations stay green, and
# runs each file reader's fuzz target for 7 s (scripts/fuzz.sh: clang, ASan + UBSan, build-fuzz/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

dir="$root/build" type=Release cmake_args=(-DADJ_TESTS=ON)
ctest_args=()
for a in "$@"; do
  case "$a" in
    # the sanitizer build leaves CUDA out: the sanitizers instrument C and C++ only (nvcc's
    # objects would be built uninstrumented, the slowest part of the build), and on a GPU
    # compute-sanitizer checks the kernels (scripts/gpu-check.sh)
    --sanitize) dir="$root/build-asan" type=RelWithDebInfo cmake_args+=(-DADJ_SANITIZE=ON -DADJ_BENCH=OFF -DADJ_CUDA=OFF) ;;
    *) ctest_args+=("$a") ;;
  esac
done

"$root/scripts/setup.sh"
start=$(date +%s)
build_tree "$dir" "$type" "${cmake_args[@]}"
echo "test.sh: build took $(( $(date +%s) - start )) s"

export VK_DRIVER_FILES="$lvp_icd"
if [[ "$dir" == *asan ]]; then
  # lavapipe is preloaded so the loader cannot unload it: its one-time allocations stay
  # reachable instead of showing up as leaks from an "<unknown module>" (the validation
  # layer is kept loaded by render/context.cpp in sanitizer builds; see tests/lsan.supp)
  export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:verify_asan_link_order=0"
  export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
ctest --test-dir "$dir" --output-on-failure -j "$jobs" "${ctest_args[@]}"

if [[ "$dir" == "$root/build" && ${#ctest_args[@]} -eq 0 ]]; then
  echo "test.sh: the engine without CUDA (ADJ_CUDA=OFF)"
  build_tree "$root/build-nocuda" Release -DADJ_CUDA=OFF -DADJ_APP=OFF -DADJ_BENCH=OFF -DADJ_TESTS=ON
  ctest --test-dir "$root/build-nocuda" --output-on-failure -j "$jobs"
  echo "test.sh: the file readers under libFuzzer (scripts/fuzz.sh 7)"
  "$root/scripts/fuzz.sh" 7
fi
