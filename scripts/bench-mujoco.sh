#!/usr/bin/env bash
# Rigid bodies beside MuJoCo (#17): adjoint_rigid_bench's robot-file cases and MuJoCo's C mj_step
# (PyPI mujoco, through mujoco.rollout, one thread) on the same URDFs of ../shared/robots and the
# same 1/240 s step, interleaved, ROUNDS rounds, then medians and ratios as a table. MuJoCo lives
# in a venv of its own (~/.cache/adjoint-mujoco-venv), never a test dependency.
#   scripts/bench-mujoco.sh [ROUNDS] [build dir]   (defaults 3, build/; builds nothing)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rounds=${1:-3}
bench="${2:-$root/build}/bin/adjoint_rigid_bench"
robots="$root/../shared/robots"
venv="$HOME/.cache/adjoint-mujoco-venv"
[[ -x "$bench" ]] || { echo "bench-mujoco.sh: no $bench (build first)" >&2; exit 1; }
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import mujoco" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q mujoco
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  OMP_WAIT_POLICY=passive "$bench" "1/240" > "$tmp/adjoint_$r.txt"
  "$venv/bin/python" "$root/scripts/bench-mujoco.py" "$robots" 1 > "$tmp/mujoco_$r.txt"
done
echo "Rigid bodies beside MuJoCo: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$root" rev-parse --short HEAD), $rounds interleaved rounds, medians"
echo
"$venv/bin/python" - "$tmp" "$rounds" <<'PY'
import re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def rows(prefix):
    out = {}
    for r in range(1, rounds + 1):
        for line in open(f"{tmp}/{prefix}_{r}.txt"):
            m = re.match(r"(.+?\(.*?\)) (float|double|mujoco [0-9.]+)\s+dof\s+(\d+).*?([0-9]+) steps/s forward(?:,\s+([0-9]+) step adjoints)?", line)
            if m:
                out.setdefault((m.group(1), m.group(2)), []).append((int(m.group(4)), int(m.group(5) or 0)))
    return {k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v)) for k, v in out.items()}
ours, theirs = rows("adjoint"), rows("mujoco")
print("| case | MuJoCo mj_step/s (double) | Adjoint float steps/s | double | Adjoint / MuJoCo (double) | Adjoint step adjoints/s (double) |")
print("|---|---|---|---|---|---|")
for case in dict.fromkeys(c for c, _ in ours):
    mj = next(v for (c, k), v in theirs.items() if c == case)[0]
    f, d = ours[(case, "float")], ours[(case, "double")]
    print(f"| {case} | {mj:,.0f} | {f[0]:,.0f} | {d[0]:,.0f} | {d[0] / mj:.2f}x | {d[1]:,.0f} |")
PY
