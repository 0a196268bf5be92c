#!/bin/sh
# ppo_resume.sh ADJOINT SCENES_DIR OUTDIR: a PPO run stopped after 7 of 20 iterations
# (--stop-after) and resumed prints the same rows (all but the wall time) and ends with the
# same weights (fingerprint) as one run straight through; a SHAC checkpoint is refused
set -u
adjoint=$1 scenes=$2 out=$3/ppo_resume
cartpole=$scenes/robot_cartpole.json
rm -rf "$out" && mkdir -p "$out"
fail() { echo "ppo_resume.sh: $*"; exit 1; }
ppo() { "$adjoint" optimize "$cartpole" --task "swing up (policy)" --method ppo --envs 4 --seed 1 --iterations 20 "$@"; }
rows() { grep -E '^ +[0-9]+ ' "$1" | awk '{ $3 = ""; print }'; }

ppo --checkpoint-dir "$out/straight" > "$out/straight.txt" 2>&1 || fail "straight run failed: $(cat "$out/straight.txt")"
ppo --checkpoint-dir "$out/split" --stop-after 7 > "$out/part1.txt" 2>&1 || fail "first part failed: $(cat "$out/part1.txt")"
ppo --resume "$out/split" > "$out/part2.txt" 2>&1 || fail "resume failed: $(cat "$out/part2.txt")"
cat "$out/part1.txt" "$out/part2.txt"
grep -q "resumed from .* at iteration 7" "$out/part2.txt" || fail "no resume message"
{ rows "$out/straight.txt"; grep fingerprint "$out/straight.txt"; } > "$out/straight.digest"
{ rows "$out/part1.txt"; rows "$out/part2.txt"; grep fingerprint "$out/part2.txt"; } > "$out/split.digest"
[ "$(wc -l < "$out/straight.digest")" -ge 3 ] || fail "too few rows to compare"
diff "$out/straight.digest" "$out/split.digest" || fail "stopped and resumed differs from straight through"

"$adjoint" optimize "$cartpole" --task "swing up (policy)" --method shac --envs 4 --iterations 2 \
  --checkpoint-dir "$out/shac" > /dev/null 2>&1 || fail "the SHAC run failed"
ppo --resume "$out/shac" > "$out/refused.txt" 2>&1 && fail "a SHAC checkpoint accepted"
grep -q "shac/checkpoint.adjck: the checkpoint's method is \"shac\", this run's is \"ppo\"" "$out/refused.txt" ||
  fail "$(cat "$out/refused.txt")"
echo "ppo_resume.sh: ok"
