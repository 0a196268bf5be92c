#!/usr/bin/env bash
# The GPU checks, as one command for a machine with an NVIDIA GPU (headless: everything
# renders offscreen):  scripts/gpu-check.sh OUTDIR
# Builds with CUDA into build-gpu/ (or reuses a build-gpu/ built elsewhere and carried
# over: the CUDA runtime is linked statically; scripts/gpu-bundle.sh packs one with the
# shared libraries and the validation layer a bare machine lacks), runs every GPU test and
# the GPU benchmarks, and writes logs and tables into OUTDIR. Each step is capped at
# ADJ_GPU_TIMEOUT seconds (default 120); meant to finish in under 8 minutes.
# ADJ_GPU_SANITIZE=1 also runs the CUDA tests under compute-sanitizer at the end (memcheck, or
# the tools ADJ_GPU_SANITIZE_TOOLS names: "memcheck initcheck racecheck synccheck").
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${ADJ_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
cap=${ADJ_GPU_TIMEOUT:-120}

# a carried bundle (gpu-bundle.sh): its libraries and validation layer; the driver's Vulkan
# ICD where the loader would not look for it
if [[ -d "$dir/lib" ]]; then
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export VK_LAYER_PATH="$dir/layers"
fi
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -z "${VK_DRIVER_FILES:-}" && -f "$nv_icd" ]] && ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=$nv_icd
fi

# the machine
{ nvidia-smi || echo "nvidia-smi: not found"; } > "$out/nvidia-smi.txt" 2>&1
say "gpu-check: $(head -n 12 "$out/nvidia-smi.txt" | grep -m1 -E 'H[0-9]+|A[0-9]+|RTX|Tesla' || echo 'GPU: see nvidia-smi.txt')"

# build (skipped when a carried build is present and up to date enough to run)
if [[ ! -x "$dir/bin/adjoint_cuda_rollout_test" || ! -x "$dir/bin/adjoint" ]]; then
  if ! command -v cmake >/dev/null; then
    say "gpu-check: no cmake here and no carried $dir: build it on the CPU machine and carry it"
    exit 1
  fi
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$root" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DADJ_CUDA=ON -DADJ_TESTS=ON \
    -DADJ_BENCH=ON > "$out/configure.log" 2>&1 || { say "gpu-check: configure failed (configure.log)"; exit 1; }
  cmake --build "$dir" -j "$(nproc)" > "$out/build.log" 2>&1 || { say "gpu-check: build failed (build.log)"; tail -30 "$out/build.log"; exit 1; }
fi
say "gpu-check: build ready after $(( $(date +%s) - start )) s"

# a carried build: name any shared library this machine lacks (the CUDA runtime is static)
for b in adjoint adjoint_cuda_rollout_test; do
  missing=$(ldd "$dir/bin/$b" 2>/dev/null | grep "not found" || true)
  [[ -z "$missing" ]] || say "gpu-check: $b: missing libraries: $missing"
done

# what the program sees
"$dir/bin/adjoint" info > "$out/info.txt" 2>&1 || true
cat "$out/info.txt" >> "$summary"

# every GPU test: CPU/CUDA parity, interop (each exits 77 = skipped without a device)
rc=0
gpu_tests=(adjoint_cuda_rollout_test adjoint_cuda_parity_test adjoint_cuda_coupled_test adjoint_vis_cuda_test
  adjoint_cuda_interop_test adjoint_cuda_worlds_test)
for t in "${gpu_tests[@]}"; do
  [[ -x "$dir/bin/$t" ]] || { say "gpu-check: $t: not built"; rc=1; continue; }
  timeout "$cap" "$dir/bin/$t" > "$out/$t.log" 2>&1
  r=$?
  case $r in
    0) say "gpu-check: $t: passed" ;;
    77) say "gpu-check: $t: SKIPPED (no CUDA device?)"; rc=1 ;;
    *) say "gpu-check: $t: FAILED ($r), see $t.log"; tail -20 "$out/$t.log"; rc=1 ;;
  esac
done

# the CPU side of the share paths, on whatever Vulkan device is here
if [[ -x "$dir/bin/adjoint_gpu_view_tests" ]]; then
  timeout "$cap" "$dir/bin/adjoint_gpu_view_tests" > "$out/gpu_view_tests.log" 2>&1 &&
    say "gpu-check: adjoint_gpu_view_tests: passed" ||
    { say "gpu-check: adjoint_gpu_view_tests: FAILED, see gpu_view_tests.log"; rc=1; }
fi

# `adjoint render --backend cuda`: staging and interop draw the same pixels, CUDA's first
# frame is the CPU's (tests/app/data_paths.sh; the images stay in OUTDIR)
for scene in cloth_throw walker; do
  mkdir -p "$out/data_paths_$scene"
  timeout "$cap" sh "$root/tests/app/data_paths.sh" cuda "$dir/bin/adjoint" "$dir/bin/png_probe" \
    "$root/assets/scenes/$scene.json" "$out/data_paths_$scene" > "$out/data_paths_$scene.log" 2>&1
  r=$?
  case $r in
    0) say "gpu-check: render data paths ($scene): passed" ;;
    77) say "gpu-check: render data paths ($scene): SKIPPED (no CUDA device?)"; rc=1 ;;
    *) say "gpu-check: render data paths ($scene): FAILED ($r), see data_paths_$scene.log"; rc=1 ;;
  esac
done

# the editor's CUDA backend (worker on CudaSolver, staging to the renderer; a coupled scene),
# driven by its script headless (tests/editor/scripts/backend_gpu.txt, as ctest runs it where
# a device is)
mkdir -p "$out/editor"
ADJ_OUT="$out/editor" ADJ_ASSETS="$root/assets" ADJ_TEST_DATA="$root/tests/data" XDG_STATE_HOME="$out/editor/state" \
  timeout "$cap" "$dir/bin/adjoint" --headless --validation --no-vsync --size 1280x720 \
  --script "$root/tests/editor/scripts/backend_gpu.txt" > "$out/editor_backend_gpu.log" 2>&1
r=$?
case $r in
  0) say "gpu-check: editor CUDA backend script: passed" ;;
  *) say "gpu-check: editor CUDA backend script: FAILED ($r), see editor_backend_gpu.log"; tail -5 "$out/editor_backend_gpu.log"; rc=1 ;;
esac

# GPU benchmarks: the CUDA backend (engine table, sim+render interop vs staging) with the
# validation layer on for the render cases, then the renderer alone on this GPU
timeout "$cap" "$dir/bin/adjoint" bench gpu --validation > "$out/bench-gpu.txt" 2>&1
r=$?
case $r in
  0) say "gpu-check: bench gpu: done (bench-gpu.txt)"; cat "$out/bench-gpu.txt" >> "$summary" ;;
  77) say "gpu-check: bench gpu: SKIPPED (no CUDA device?)"; rc=1 ;;
  *) say "gpu-check: bench gpu: FAILED ($r), see bench-gpu.txt"; tail -20 "$out/bench-gpu.txt"; rc=1 ;;
esac
# bodies-only worlds on CudaSolverT (one launch, one thread per world): cartpole x1024, walker x1024
if [[ -x "$dir/bin/adjoint_rigid_bench" ]]; then
  timeout "$cap" "$dir/bin/adjoint_rigid_bench" cuda > "$out/bench-rigid-cuda.txt" 2>&1 ||
    say "gpu-check: rigid CUDA bench failed, see bench-rigid-cuda.txt"
  cat "$out/bench-rigid-cuda.txt" >> "$summary"
fi
# many worlds (CudaSolverT): the locomotion Ant over 4096 worlds on CUDA (one launch, one thread
# each) beside 256 on the CPU cores; a coupled scene (an arm pushing a soft ball) over 256 worlds
# on the CPU and on CUDA (particles: a launch sequence per world)
{
  timeout "$cap" "$dir/bin/adjoint" bench worlds "$root"/assets/scenes/locomotion/ant.json --worlds 4096 --cuda --windows 2
  timeout "$cap" "$dir/bin/adjoint" bench worlds "$root"/assets/scenes/locomotion/ant.json --worlds 256 --threads "$(nproc)" --windows 2
  timeout "$cap" "$dir/bin/adjoint" bench worlds "$root"/assets/scenes/robot_arm_push_soft.json --worlds 256 --threads "$(nproc)" --windows 2
  timeout "$cap" "$dir/bin/adjoint" bench worlds "$root"/assets/scenes/robot_arm_push_soft.json --worlds 256 --cuda --windows 1
} > "$out/bench-worlds.txt" 2>&1 || say "gpu-check: worlds benchmark failed, see bench-worlds.txt"
cat "$out/bench-worlds.txt" >> "$summary"
timeout "$cap" "$dir/bin/adjoint" bench render --frames 5 > "$out/render-bench.txt" 2>&1 ||
  say "gpu-check: render benchmark failed (Vulkan on this machine?)"

# memory errors and races the tests' results would not show (compute-sanitizer, when asked)
if [[ "${ADJ_GPU_SANITIZE:-0}" == 1 ]] && command -v compute-sanitizer >/dev/null; then
  for tool in ${ADJ_GPU_SANITIZE_TOOLS:-memcheck}; do
    for t in adjoint_cuda_rollout_test adjoint_cuda_worlds_test adjoint_cuda_coupled_test; do
      log="$out/${tool}_$t.log"
      timeout "${ADJ_GPU_SANITIZE_TIMEOUT:-$cap}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$dir/bin/$t" > "$log" 2>&1
      r=$?
      case $r in
        0) say "gpu-check: $tool $t: clean" ;;
        9) say "gpu-check: $tool $t: ERRORS, see ${tool}_$t.log"; grep -m5 -A4 "=====.*Invalid\|=====.*rror\|=====.*azard" "$log"; rc=1 ;;
        124) say "gpu-check: $tool $t: no error found in ${ADJ_GPU_SANITIZE_TIMEOUT:-$cap} s, then stopped (partial run)" ;;
        *) say "gpu-check: $tool $t: exit $r, see ${tool}_$t.log"; rc=1 ;;
      esac
    done
  done
fi

say "gpu-check: done in $(( $(date +%s) - start )) s; logs in $out"
exit $rc
