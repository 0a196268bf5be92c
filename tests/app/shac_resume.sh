#!/bin/sh
# shac_resume.sh ADJOINT SCENES_DIR OUTDIR: a SHAC run stopped after 7 of 20 windows
# (--stop-after) and resumed prints the same rows (all but the wall time) and ends with the
# same weights (fingerprint) as one run straight through; Ctrl+C writes a checkpoint that
# resumes; a checkpoint of another run, scene or shape, or a damaged one, is refused by name
set -u
adjoint=$1 scenes=$2 out=$3/shac_resume
cartpole=$scenes/robot_cartpole.json
rm -rf "$out" && mkdir -p "$out"
fail() { echo "shac_resume.sh: $*"; exit 1; }
shac() { "$adjoint" optimize "$cartpole" --task "swing up (policy)" --method shac --envs 4 --seed 1 --threads 2 "$@"; }
# the rows without the wall time, and the final fingerprint
digest() { grep -E '^ +[0-9]+ |fingerprint' "$1" | awk '/fingerprint/ { print; next } { $3 = ""; print }'; }

shac --iterations 20 --checkpoint-dir "$out/straight" > "$out/straight.txt" 2>&1 || fail "straight run failed"
shac --iterations 20 --checkpoint-dir "$out/split" --checkpoint-every 3 --stop-after 7 > "$out/part1.txt" 2>&1 ||
  fail "first part failed: $(cat "$out/part1.txt")"
grep -q "stopped after 7 windows" "$out/part1.txt" || fail "no stop message: $(cat "$out/part1.txt")"
shac --iterations 20 --resume "$out/split" > "$out/part2.txt" 2>&1 || fail "resume failed: $(cat "$out/part2.txt")"
grep -q "resumed from .* at window 7" "$out/part2.txt" || fail "no resume message"
cat "$out/part1.txt" "$out/part2.txt"
digest "$out/straight.txt" > "$out/straight.digest"
grep -E '^ +[0-9]+ ' "$out/part1.txt" | awk '/fingerprint/ { print; next } { $3 = ""; print }' > "$out/split.digest"
digest "$out/part2.txt" >> "$out/split.digest"
[ "$(grep -c fingerprint "$out/split.digest")" -eq 1 ] || fail "the resumed run printed no fingerprint"
diff "$out/straight.digest" "$out/split.digest" || fail "stopped and resumed differs from straight through"
grep -q "the policy's mean frame cost" "$out/part2.txt" || fail "no final cost"

# another run: copies, window count, scene, a damaged file
code() { "$@" > "$out/refused.txt" 2>&1; echo $?; }
[ "$(code "$adjoint" optimize "$cartpole" --task "swing up (policy)" --method shac --envs 8 --seed 1 --iterations 20 \
  --resume "$out/split")" -eq 1 ] || fail "--envs 8 accepted"
grep -q "checkpoint.adjck: the checkpoint's copies is 4, this run's is 8" "$out/refused.txt" || fail "$(cat "$out/refused.txt")"
[ "$(code shac --iterations 30 --resume "$out/split")" -eq 1 ] || fail "--iterations 30 accepted"
grep -q "windows is 20, this run's is 30" "$out/refused.txt" || fail "$(cat "$out/refused.txt")"
[ "$(code "$adjoint" optimize "$scenes/robot_cartpole_balance.json" --method shac --envs 4 --seed 1 --iterations 20 \
  --resume "$out/split")" -eq 1 ] || fail "another scene accepted"
grep -q "checkpoint's scene is \"cartpole swing-up\", this run's is \"cartpole balance\"" "$out/refused.txt" ||
  fail "$(cat "$out/refused.txt")"
[ "$(code shac --iterations 20 --checkpoint-dir "$out/split")" -eq 1 ] || fail "a checkpoint was overwritten"
grep -q "split already holds a checkpoint: continue that run with --resume" "$out/refused.txt" || fail "$(cat "$out/refused.txt")"
mkdir -p "$out/damaged" && cp "$out/split/checkpoint.adjck" "$out/damaged/"
size=$(wc -c < "$out/damaged/checkpoint.adjck")
printf 'X' | dd of="$out/damaged/checkpoint.adjck" bs=1 seek=$((size - 64)) conv=notrunc 2> /dev/null
[ "$(code shac --iterations 20 --resume "$out/damaged")" -eq 1 ] || fail "a damaged checkpoint accepted"
grep -q "damaged/checkpoint.adjck: array .* does not match its hash (the file is corrupted)" "$out/refused.txt" ||
  fail "$(cat "$out/refused.txt")"

# Ctrl+C: a checkpoint after the current window, exit 130, and it resumes
# (adjoint itself in the background, not a shell function's subshell: the signal must reach it)
"$adjoint" optimize "$cartpole" --task "swing up (policy)" --method shac --envs 4 --seed 1 --threads 2 \
  --iterations 5000 --checkpoint-dir "$out/ctrl_c" --checkpoint-every 5000 > "$out/ctrl_c.txt" 2>&1 &
pid=$!
for i in $(seq 1 200); do
  grep -q "^window" "$out/ctrl_c.txt" 2> /dev/null && break
  sleep 0.05
done
sleep 0.3
kill -INT "$pid"
wait "$pid"
rc=$?
cat "$out/ctrl_c.txt"
[ "$rc" -eq 130 ] || fail "Ctrl+C: exit code $rc, expected 130"
grep -q "stopped by Ctrl+C after window" "$out/ctrl_c.txt" || fail "Ctrl+C: no stop message"
grep -q "checkpoint after window .* written" "$out/ctrl_c.txt" || fail "Ctrl+C: no checkpoint"
shac --iterations 5000 --resume "$out/ctrl_c" --stop-after 1 > "$out/ctrl_c2.txt" 2>&1 ||
  fail "Ctrl+C: resume failed: $(cat "$out/ctrl_c2.txt")"
echo "shac_resume.sh: ok"
