#!/usr/bin/env bash
# Adjoint beside NVIDIA Newton 1.8.0 on the CPU, on the same cloth (../shared/bench/newton/):
# 200 substeps, forward and forward + backward, Adjoint on 1 and 2 threads and Newton's
# captured-graph replay (Warp's CPU backend: one thread), in interleaved rounds; prints the
# medians with the Adjoint/Newton ratios, the machine, the load and the commit.
#   scripts/bench-newton.sh                       rounds=5, repeats=3 per round, N = 16 32 64
#   scripts/bench-newton.sh --rounds 10 --sizes 16 32
#   scripts/bench-newton.sh --bin before=/tmp/base/build/bin/adjoint_engine_bench --bin after=build/bin/adjoint_engine_bench
# Newton lives in a venv of its own ($ADJ_NEWTON_VENV, default ~/.cache/adjoint-newton-venv), made
# here on first use; it is never part of the build or the tests. --no-newton times Adjoint only.
# The first Newton run JIT-compiles Warp's kernels for minutes (cached in ~/.cache/warp).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

venv=${ADJ_NEWTON_VENV:-$HOME/.cache/adjoint-newton-venv}
scenes="$root/../shared/bench/newton"
rounds=5 repeats=3 sizes=(16 32 64) threads=(1 2) bins=() newton=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --no-newton) newton=0; shift ;;
    --threads) threads=(); shift; while [[ $# -gt 0 && $1 != --* ]]; do threads+=("$1"); shift; done ;;
    --sizes) sizes=(); shift; while [[ $# -gt 0 && $1 != --* ]]; do sizes+=("$1"); shift; done ;;
    *) echo "bench-newton.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ ${#bins[@]} -gt 0 ]] || bins=("adjoint=$root/build/bin/adjoint_engine_bench")
for b in "${bins[@]}"; do
  [[ -x ${b#*=} ]] || { echo "bench-newton.sh: ${b#*=} not built (build_tree build Release)" >&2; exit 1; }
done
[[ -f $scenes/newton_bench.py ]] || { echo "bench-newton.sh: $scenes/newton_bench.py not found" >&2; exit 1; }

if [[ $newton == 1 && ! -x $venv/bin/python ]]; then
  echo "bench-newton.sh: setting up Newton in $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q newton==1.8.0 warp-lang==1.19.0 numpy
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/bench-newton.XXXXXX")
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; r++)); do
  # alternate the order of the engines each round, so neither always runs after the other
  run_newton() {
    [[ $newton == 1 ]] || return 0
    (cd "$out" && "$venv/bin/python" "$scenes/newton_bench.py" --device cpu --graph --scenes cloth \
      --sizes "${sizes[@]}" --repeats "$repeats" --json "$out/newton_$r.json" >"$out/newton_$r.log" 2>&1) ||
      { echo "bench-newton.sh: Newton failed, see $out/newton_$r.log" >&2; exit 1; }
  }
  run_adjoint() {
    for b in "${bins[@]}"; do
      for n in "${sizes[@]}"; do
        for t in "${threads[@]}"; do
          OMP_NUM_THREADS=$t "${b#*=}" --scene "$scenes/adjoint_cloth_$n.json" --threads "$t" --repeats "$repeats" |
            sed "s/^{/{\"label\": \"${b%%=*}\", \"N\": $n, /" >>"$out/adjoint.jsonl"
        done
      done
    done
  }
  if ((r % 2)); then run_adjoint; run_newton; else run_newton; run_adjoint; fi
  echo "round $((r + 1))/$rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- engine tests || echo "+dirty")

python3 - "$out" "$rounds" "$repeats" "$load_start" "$load_end" "$commit" "${sizes[*]}" <<'EOF'
import glob, json, os, statistics, sys
out, rounds, repeats, load0, load1, commit, sizes = sys.argv[1:8]
sizes = [int(s) for s in sizes.split()]
med = statistics.median
rows, newton = {}, {}
for f in sorted(glob.glob(os.path.join(out, "newton_*.json"))):
    for r in json.load(open(f))["results"]:
        d = newton.setdefault(r["N"], {"fwd": [], "fb": []})
        d["fwd"] += r["runs_ms"]["fwd"]
        d["fb"] += [a + b for a, b in zip(r["runs_ms"]["fwd_tape"], r["runs_ms"]["bwd"])]
for line in open(os.path.join(out, "adjoint.jsonl")):
    r = json.loads(line)
    d = rows.setdefault((r["label"], r["threads"]), {}).setdefault(
        r["N"], {"fwd": [], "fb": [], "loss": r["loss"], "kf": [], "kb": [], "sf": [], "sb": []})
    d["fwd"] += r["fwd_runs"]
    d["fb"] += r["fwd_bwd_runs"]
    for k, key in (("kf", "rollout_kept_fwd_runs"), ("kb", "rollout_kept_bwd_runs"),
                   ("sf", "rollout_sqrt_fwd_runs"), ("sb", "rollout_sqrt_bwd_runs")):
        d[k] += r.get(key, [])
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"machine: {cpu}, {os.cpu_count()} cores; load average {load0} at start, {load1} at end")
print(f"Adjoint commit {commit}; Newton 1.8.0 / warp 1.19.0 --graph; {rounds} interleaved rounds x {repeats} repeats, medians")
print("fwd+bwd: Adjoint's forward + backward of the task's rollout; Newton's taped forward + tape.backward\n")
head = "| 200 substeps, ms | " + " | ".join(f"N={n} fwd | fwd+bwd" for n in sizes) + " |"
print(head)
print("|---|" + "---|" * (2 * len(sizes)))
def cell(v, ref):
    return f"{v:.1f}" + (f" ({v / ref:.2f}x)" if ref else "")
if newton:
    print("| Newton, graph replay (1 thread) | " + " | ".join(
        f"{med(newton[n]['fwd']):.1f} | {med(newton[n]['fb']):.1f}" for n in sizes) + " |")
for (label, t), per_n in sorted(rows.items()):
    cells = []
    for n in sizes:
        ref = newton.get(n)
        cells.append(cell(med(per_n[n]["fwd"]), ref and med(ref["fwd"])))
        cells.append(cell(med(per_n[n]["fb"]), ref and med(ref["fb"])))
    print(f"| {label}, {t} thread{'s' if t > 1 else ''} | " + " | ".join(cells) + " |")
print("\n(x): Adjoint / Newton time. bwd/fwd and thread speed-up:")
for (label, t), per_n in sorted(rows.items()):
    parts = []
    for n in sizes:
        f, fb = med(per_n[n]["fwd"]), med(per_n[n]["fb"])
        one = rows.get((label, 1), {}).get(n)
        sp = f" 1thr/{t}thr fwd {med(one['fwd']) / f:.2f}x fb {med(one['fb']) / fb:.2f}x" if one and t > 1 else ""
        parts.append(f"N={n}: bwd/fwd {(fb - f) / f:.2f}{sp} loss {per_n[n]['loss']:.6g}")
    print(f"  {label}, {t} thr: " + "; ".join(parts))
print("\nthe backward pass alone / the forward that keeps its records (the task's rollout run directly):")
for (label, t), per_n in sorted(rows.items()):
    parts = [f"N={n}: every state kept {med(per_n[n]['kb']) / med(per_n[n]['kf']):.2f}, "
             f"sqrt(T) checkpoints {med(per_n[n]['sb']) / med(per_n[n]['sf']):.2f}"
             for n in sizes if per_n[n]["kf"] and per_n[n]["sf"]]
    if parts:
        print(f"  {label}, {t} thr: " + "; ".join(parts))
EOF
echo "(raw runs in $out)"
