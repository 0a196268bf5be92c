#!/bin/sh
# train_mpi.sh ADJOINT MPIEXEC SCENES_DIR OUTDIR shac|ahac|ppo|pods|bptt: SHAC, AHAC, PPO, PODS or BPTT over 1, 2 and 4 MPI ranks (6 copies:
# blocks of 6, 3+3, 2+2+1+1) prints the same rows (all but the wall time) and ends with the
# same weights (fingerprint) as a plain run without mpirun, also when stopped on 2 ranks and
# resumed on 4; a rank whose weights differ is caught by the fingerprint comparison and
# named; a rank that dies ends the job, named
set -u
adjoint=$1 mpiexec=$2 scenes=$3 method=$5 out=$4/${5}_mpi
rm -rf "$out" && mkdir -p "$out"
fail() { echo "train_mpi.sh ($method): $*"; exit 1; }
# PODS improves whole episodes: fewer iterations
iters=12 riters=10
[ "$method" = pods ] && iters=3 riters=2
# BPTT's copies are --worlds (the loss averaged over them), a few iterations of the whole horizon
copies="--envs 6"
[ "$method" = bptt ] && copies="--worlds 6" iters=4 riters=3
# AHAC on the Ant, whose feet meet the ground (windows cut by contact, a horizon that moves); the others on the cartpole
scene=$scenes/robot_cartpole.json task="swing up (policy)"
if [ "$method" = ahac ]; then
  # C = 3 kN (the scene's is 10 kN): the Ant's feet then cut windows from the first ones on
  mkdir -p "$out/ahac_scene"
  # (its robot file's relative path made absolute, since the copy lives elsewhere)
  sed -e 's/"contact_threshold": 10000/"contact_threshold": 3000/' \
      -e "s|\"file\": \"\\.\\./|\"file\": \"$scenes/locomotion/../|" "$scenes/locomotion/ant.json" > "$out/ahac_scene/ant.json"
  grep -q '"contact_threshold": 3000' "$out/ahac_scene/ant.json" || fail "the Ant's ahac block has no contact_threshold 10000 to lower"
  scene=$out/ahac_scene/ant.json task=run
fi
args() { echo optimize "$scene" --method "$method" $copies --seed 2 --threads 1 --iterations $iters; }
# how the mismatch message names the method and its iterations
case $method in
  shac) mismatch="SHAC, after 2 windows" ;;
  ahac) mismatch="AHAC, after 2 windows" ;;
  pods) mismatch="PODS, after 2 iterations" ;;
  *) mismatch="PPO, after 2 iterations" ;;
esac
# (the task's name has spaces: passed apart from args)
# under the sanitizer build (scripts/test.sh --sanitize) the ranks run without leak checking:
# OpenMPI 4.1 leaves allocations of components it has unloaded, whose frames LSan can neither
# name nor suppress; the same trainers run leak-checked without mpirun
# each job is bounded (exit 124 past it): after ranks that exit with an error (the mismatch and
# killed-rank cases below) mpirun itself has been seen to hang, once, under CI's load, after
# "ORTE_ERROR_LOG: Out of resource in file show_help.c", with both ranks' messages printed; the
# checks below read those messages, so a bounded job still tests what it should
mpi() {
  n=$1
  shift
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout -k 10 120 "$mpiexec" --oversubscribe \
    --allow-run-as-root -np "$n" "$@"
}
# the rows without the wall time (BPTT's 4th column, the others' 3rd) and the final fingerprint
wall=3
[ "$method" = bptt ] && wall=4
digest() { grep -E '^ +[0-9]+ |fingerprint' "$1" | awk -v c=$wall '/fingerprint/ { print; next } { $c = ""; print }'; }

"$adjoint" $(args) --task "$task" > "$out/plain.txt" 2>&1 || fail "plain run failed: $(cat "$out/plain.txt")"
digest "$out/plain.txt" > "$out/plain.digest"
[ -s "$out/plain.digest" ] || fail "the plain run printed no rows"
for n in 1 2 4; do
  mpi "$n" "$adjoint" $(args) --task "$task" --fingerprint-every 3 > "$out/np$n.txt" 2>&1 ||
    fail "-np $n failed: $(cat "$out/np$n.txt")"
  cat "$out/np$n.txt"
  [ "$n" -eq 1 ] || grep -q "^$n MPI ranks share the copies" "$out/np$n.txt" || fail "-np $n: not $n ranks"
  digest "$out/np$n.txt" > "$out/np$n.digest"
  diff "$out/plain.digest" "$out/np$n.digest" || fail "-np $n differs from the plain run"
done

# randomized worlds (settings.randomize): each rank's block holds the same worlds as one process's
rand="$(dirname "$0")/../data/cartpole_randomized.json"
rargs() { echo optimize "$rand" --method "$method" $copies --seed 2 --threads 1 --iterations $riters; }
"$adjoint" $(rargs) --task "swing up (policy)" > "$out/rand_plain.txt" 2>&1 || fail "randomized plain run failed: $(cat "$out/rand_plain.txt")"
mpi 3 "$adjoint" $(rargs) --task "swing up (policy)" > "$out/rand_np3.txt" 2>&1 || fail "randomized -np 3 failed: $(cat "$out/rand_np3.txt")"
digest "$out/rand_plain.txt" > "$out/rand_plain.digest"
digest "$out/rand_np3.txt" > "$out/rand_np3.digest"
diff "$out/rand_plain.digest" "$out/rand_np3.digest" || fail "randomized worlds: -np 3 differs from the plain run"

# PODS and BPTT keep no checkpoints (and have no test hooks for a perturbed or dead rank)
[ "$method" = pods ] || [ "$method" = bptt ] && { echo "train_mpi.sh ($method): ok"; exit 0; }

# stopped on 2 ranks, resumed on 4: still the plain run's bits (the checkpoint holds every copy)
mpi 2 "$adjoint" $(args) --task "$task" --checkpoint-dir "$out/ck" --stop-after 5 > "$out/part1.txt" 2>&1 ||
  fail "-np 2 --stop-after 5 failed: $(cat "$out/part1.txt")"
mpi 4 "$adjoint" $(args) --task "$task" --resume "$out/ck" > "$out/part2.txt" 2>&1 ||
  fail "-np 4 --resume failed: $(cat "$out/part2.txt")"
cat "$out/part2.txt"
grep -E '^ +[0-9]+ ' "$out/part1.txt" | awk '{ $3 = ""; print }' > "$out/resumed.digest"
digest "$out/part2.txt" >> "$out/resumed.digest"
diff "$out/plain.digest" "$out/resumed.digest" || fail "stopped on 2 ranks and resumed on 4 differs from the plain run"

# a replica whose weights differ is caught at the first comparison, named
mpi 2 "$adjoint" $(args) --task "$task" --fingerprint-every 2 --test-perturb-rank 1 > "$out/perturb.txt" 2>&1 &&
  fail "a perturbed rank went unnoticed: $(cat "$out/perturb.txt")"
cat "$out/perturb.txt"
grep -q "$mismatch: the ranks' parameters differ: rank(s) 1 disagree with rank 0" "$out/perturb.txt" ||
  fail "no mismatch message"

# a rank that dies: the job ends, non-zero, and the rank is named
mpi 2 "$adjoint" $(args) --task "$task" --test-kill-rank 1 > "$out/killed.txt" 2>&1 && fail "a killed rank went unnoticed"
cat "$out/killed.txt"
grep -Eqi "rank 1" "$out/killed.txt" || fail "the dead rank is not named"
echo "train_mpi.sh ($method): ok"
