#!/usr/bin/env bash
# The GPU checks, as one command for a machine with an NVIDIA GPU (headless: everything
# renders offscreen):  scripts/gpu-check.sh OUTDIR
# Builds with CUDA into build-gpu/ (or reuses a build-gpu/ built elsewhere and carried
# over: the CUDA runtime is linked statically), runs every GPU test and the GPU
# benchmarks, and writes logs and tables into OUTDIR. Meant to finish in under 8 minutes.
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${ADJ_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)

# the machine
{ nvidia-smi || echo "nvidia-smi: not found"; } > "$out/nvidia-smi.txt" 2>&1
say "gpu-check: $(head -n 12 "$out/nvidia-smi.txt" | grep -m1 -E 'H[0-9]+|A[0-9]+|RTX|Tesla' || echo 'GPU: see nvidia-smi.txt')"

# build (skipped when a carried build is present and up to date enough to run)
if [[ ! -x "$dir/bin/adjoint_cuda_parity_test" ]]; then
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

# what the program sees
"$dir/bin/adjoint" info > "$out/info.txt" 2>&1 || true
cat "$out/info.txt" >> "$summary"

# every GPU test: CPU/CUDA parity, interop (each exits 77 = skipped without a device)
rc=0
for t in adjoint_cuda_parity_test adjoint_cuda_interop_test; do
  [[ -x "$dir/bin/$t" ]] || { say "gpu-check: $t: not built"; rc=1; continue; }
  timeout 300 "$dir/bin/$t" > "$out/$t.log" 2>&1
  r=$?
  case $r in
    0) say "gpu-check: $t: passed" ;;
    77) say "gpu-check: $t: SKIPPED (no CUDA device?)"; rc=1 ;;
    *) say "gpu-check: $t: FAILED ($r), see $t.log"; tail -20 "$out/$t.log"; rc=1 ;;
  esac
done

# GPU benchmarks: engine (cloth and free particles on CUDA) and the renderer on this GPU
if [[ -x "$dir/bin/adjoint_engine_bench" ]]; then
  timeout 240 "$dir/bin/adjoint_engine_bench" --benchmark_filter='Cuda|cuda' \
    > "$out/engine-bench-cuda.txt" 2>&1 || say "gpu-check: engine benchmark failed or timed out"
fi
timeout 120 "$dir/bin/adjoint" bench render --frames 5 > "$out/render-bench.txt" 2>&1 ||
  say "gpu-check: render benchmark failed (Vulkan on this machine?)"

say "gpu-check: done in $(( $(date +%s) - start )) s; logs in $out"
exit $rc
