#!/usr/bin/env bash
# bench-mpi.sh [BUILD_DIR] [WINDOWS] [ENVS]: DiffRL's Ant trained by SHAC
# (assets/scenes/locomotion/ant.json) in one process with 2 OpenMP threads and over 2 MPI ranks
# with 1 thread each; prints a table: windows per second, the time rank 0 spent in MPI per
# window and the bytes it received per window. Needs a build with ADJ_MPI and mpirun.
# The numbers mean something only on a machine that nothing else is using.
set -euo pipefail
build=${1:-build} windows=${2:-20} envs=${3:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
adjoint=$build/bin/adjoint
[[ -x $adjoint ]] || adjoint=$build/app/adjoint
scene=$root/assets/scenes/locomotion/ant.json
args=(optimize "$scene" --method shac --envs "$envs" --iterations "$windows" --seed 0)
one=$("$adjoint" "${args[@]}" --threads 2)
two=$(mpirun --oversubscribe --allow-run-as-root -np 2 "$adjoint" "${args[@]}" --threads 1)
rate() { sed -nE 's/.* windows in .* s: ([0-9.]+) windows\/s/\1/p' <<< "$1"; }
fp() { sed -nE 's/final weights fingerprint ([0-9a-f]+)/\1/p' <<< "$1"; }
mpi_ms=$(sed -nE 's/MPI: .* ([0-9.]+) ms per window.*/\1/p' <<< "$two")
mpi_bytes=$(sed -nE 's/.* ([0-9]+) bytes received per window.*/\1/p' <<< "$two")
echo "Ant SHAC, $envs copies, $windows windows of 32 frames ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| layout | windows/s | MPI ms / window (rank 0) | bytes received / window (rank 0) | weights fingerprint |"
echo "|---|---:|---:|---:|---|"
echo "| 1 rank x 2 threads | $(rate "$one") | - | - | $(fp "$one") |"
echo "| 2 ranks x 1 thread | $(rate "$two") | $mpi_ms | $mpi_bytes | $(fp "$two") |"

# the exchange alone: one allgather's time by message size, over 2 and 4 ranks (4 oversubscribe
# the 2 cores); the latency and bandwidth docs/benchmarks.md's scaling model starts from
bench=$(find "$build" -name adjoint_mpi_bench -type f -perm -u+x | head -1)
if [[ -n $bench ]]; then
  for np in 2 4; do
    echo
    mpirun --oversubscribe --allow-run-as-root -np "$np" "$bench" 50
  done
fi
