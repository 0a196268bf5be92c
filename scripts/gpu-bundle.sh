#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh runs into one archive, for a GPU machine that has the
# NVIDIA driver but none of Debian's libraries (no GLFW, assimp, Vulkan loader or
# validation layer):  scripts/gpu-bundle.sh [BUILD_DIR] [OUT.tar.xz]
# The archive unpacks into build-gpu/: bin/ (the GPU tests, the program, the benchmarks,
# stripped), lib/ (every shared library they load from this system, but the C and C++
# runtimes, which the other machine has newer), layers/ (the Khronos validation layer).
# gpu-check.sh puts lib/ and layers/ on the loader paths when they are there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/.gpu/build-gpu.tar.xz}
bins=(adjoint png_probe adjoint_cuda_rollout_test adjoint_cuda_parity_test adjoint_cuda_coupled_test
  adjoint_vis_cuda_test adjoint_cuda_interop_test adjoint_cuda_worlds_test adjoint_gpu_view_tests
  adjoint_rigid_bench)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-gpu/bin" "$stage/build-gpu/lib" "$stage/build-gpu/layers" "$(dirname "$out")"
for b in "${bins[@]}"; do
  [[ -x "$build/bin/$b" ]] || { echo "gpu-bundle.sh: $build/bin/$b not built (ADJ_CUDA on?)" >&2; exit 1; }
  strip -o "$stage/build-gpu/bin/$b" "$build/bin/$b"
done
# the libraries: everything ldd resolves but the C/C++ runtime and the dynamic loader
keep='^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux-x86-64|linux-vdso)\.'
for b in "${bins[@]}"; do ldd "$build/bin/$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r name path; do
  [[ "$name" =~ $keep ]] || cp -L "$path" "$stage/build-gpu/lib/$name"
done
layer=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [[ -f "$layer" ]]; then
  cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so "$stage/build-gpu/layers/"
  sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' "$layer" \
    > "$stage/build-gpu/layers/VkLayer_khronos_validation.json"
fi
# xz: the programs share most of their code, which a solid archive stores once (20 MB, not 69)
tar -C "$stage" -cf - build-gpu | xz -9 -T0 > "$out"
echo "gpu-bundle.sh: $out ($(du -h "$out" | cut -f1)): ${#bins[@]} programs, $(ls "$stage/build-gpu/lib" | wc -l) libraries"
