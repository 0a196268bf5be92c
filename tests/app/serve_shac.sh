#!/bin/sh
# serve_shac.sh ADJOINT SCENES_DIR OUTDIR [MPIEXEC]: a served SHAC run that writes checkpoints.
#   - a viewer's checkpoint request (--serve-control) is written after the window under way, not
#     only at the end; without --checkpoint-dir it is refused with the reason;
#   - with MPIEXEC: under mpirun -np 2 rank 0 serves, a watcher sees every window and the end,
#     and a viewer's stop ends every rank (no rank left waiting); a PPO run over 2 ranks serves
#     every iteration and the end from rank 0, with the weights of a plain run
set -u
adjoint=$1 scenes=$2 out=$3/serve_shac mpiexec=${4:-}
rm -rf "$out" && mkdir -p "$out"
fail() { echo "serve_shac.sh: $*"; for f in "$out"/*.txt; do echo "--- $f"; cat "$f"; done; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# ADJ_TIME_SCALE (default 1) stretches the waits where a build runs slower (the sanitizer build)
wait_for() {
  for i in $(seq 1 $((1200 * ${ADJ_TIME_SCALE:-1}))); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no line /$2/ in $1"
}
task="swing up (policy)"
shac() { echo optimize "$scenes/robot_cartpole.json" --method shac --envs 6 --seed 2 --threads 1; }

# refused: no checkpoints to write
port=$(free_port)
"$adjoint" $(shac) --task "$task" --iterations 100000 --serve "$port" --serve-control >"$out/nockpt.txt" 2>&1 &
run=$!
wait_for "$out/nockpt.txt" "serving on"
"$adjoint" watch "127.0.0.1:$port" --send checkpoint >"$out/nockpt_send.txt" 2>&1
[ $? -eq 3 ] || fail "a checkpoint request without --checkpoint-dir was not refused"
grep -q "writes no checkpoints" "$out/nockpt_send.txt" || fail "no reason for the refusal"
"$adjoint" watch "127.0.0.1:$port" --send stop >/dev/null 2>&1
wait "$run"

# accepted: paused before the first window, asked for a checkpoint, resumed: window 0's checkpoint
port=$(free_port)
"$adjoint" $(shac) --task "$task" --iterations 30 --checkpoint-dir "$out/ck" --checkpoint-every 1000 \
  --serve "$port" --serve-control --serve-wait 60 >"$out/run.txt" 2>&1 &
run=$!
wait_for "$out/run.txt" "serving on"
"$adjoint" watch "127.0.0.1:$port" --send pause >"$out/pause.txt" 2>&1 || fail "pause not accepted"
"$adjoint" watch "127.0.0.1:$port" --send checkpoint >"$out/ask.txt" 2>&1 || fail "checkpoint not accepted"
"$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/watch.txt" 2>&1 &
watcher=$!
wait_for "$out/watch.txt" "^run: "
"$adjoint" watch "127.0.0.1:$port" --send resume >"$out/resume.txt" 2>&1 || fail "resume not accepted"
wait "$run" || fail "the run failed"
wait "$watcher" || fail "the watcher failed"
grep -q "^checkpoint after window 0 written" "$out/run.txt" || fail "the requested checkpoint was not written after window 0"
grep -q "^checkpoint after window 29 written" "$out/run.txt" || fail "no checkpoint at the end"
[ -f "$out/ck/checkpoint.adjck" ] || fail "no checkpoint file"
# viewers are told where the run's checkpoints are
grep -qE "^iteration 0 .*checkpoint_dir .*/ck .*checkpoint_window 0" "$out/watch.txt" || fail "the watcher was not told of window 0's checkpoint"

[ -n "$mpiexec" ] || exit 0
# under the sanitizer build (scripts/test.sh --sanitize) the ranks run without leak checking:
# OpenMPI 4.1 leaves allocations of components it has unloaded, whose frames LSan can neither
# name nor suppress; the same trainers run leak-checked without mpirun
mpi() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$@"; }
# under mpirun: rank 0 serves every window and the end
port=$(free_port)
mpi "$adjoint" $(shac) --task "$task" --iterations 12 --serve "$port" --serve-wait 60 >"$out/mpi.txt" 2>&1 &
run=$!
wait_for "$out/mpi.txt" "serving on"
"$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/mpi_watch.txt" 2>&1 || fail "watch of the ranks failed"
wait "$run" || fail "the 2-rank run failed"
grep -q "^2 MPI ranks share the copies" "$out/mpi.txt" || fail "not 2 ranks"
[ "$(grep -cE '^iteration [0-9]+ ' "$out/mpi_watch.txt")" -eq 12 ] || fail "the watcher did not see 12 windows"
grep -qE "^end: finished" "$out/mpi_watch.txt" || fail "no end from the ranks"
[ "$(grep -c 'serving on' "$out/mpi.txt")" -eq 1 ] || fail "not one server"
# a viewer's stop ends every rank
port=$(free_port)
mpi "$adjoint" $(shac) --task "$task" --iterations 100000 --serve "$port" --serve-control >"$out/mpi_stop.txt" 2>&1 &
run=$!
wait_for "$out/mpi_stop.txt" "^ +9 "
"$adjoint" watch "127.0.0.1:$port" --send stop >"$out/mpi_send.txt" 2>&1 || fail "stop not accepted"
for i in $(seq 1 600); do kill -0 "$run" 2>/dev/null || break; sleep 0.1; done
kill -0 "$run" 2>/dev/null && { kill -9 "$run"; fail "a rank kept the job alive after the stop"; }
wait "$run"
grep -q "stopped by a viewer after" "$out/mpi_stop.txt" || fail "the ranks did not say who stopped them"
# PPO under mpirun: rank 0 serves every iteration, snapshots with its copies, and the end; the
# weights are those of the run without a viewer
ppo() { echo optimize "$scenes/robot_cartpole.json" --method ppo --envs 4 --seed 1 --threads 1 --iterations 12; }
port=$(free_port)
mpi "$adjoint" $(ppo) --task "$task" --serve "$port" --serve-every 5 --serve-worlds 2 --serve-wait 60 \
  >"$out/mpi_ppo.txt" 2>&1 &
run=$!
wait_for "$out/mpi_ppo.txt" "serving on"
"$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/mpi_ppo_watch.txt" 2>&1 || fail "watch of the PPO ranks failed"
wait "$run" || fail "the 2-rank PPO run failed"
[ "$(grep -cE '^iteration [0-9]+ ' "$out/mpi_ppo_watch.txt")" -eq 12 ] || fail "the watcher did not see 12 PPO iterations"
grep -qE "^snapshot of iteration [0-9]+: .*, 2 worlds of 33 frames" "$out/mpi_ppo_watch.txt" || fail "no PPO snapshot with rank 0's copies"
grep -qE "^end: finished" "$out/mpi_ppo_watch.txt" || fail "no end from the PPO ranks"
[ "$(grep -c 'serving on' "$out/mpi_ppo.txt")" -eq 1 ] || fail "not one PPO server"
"$adjoint" $(ppo) --task "$task" >"$out/ppo_plain.txt" 2>&1 || fail "the plain PPO run failed"
a=$(grep "^final weights fingerprint" "$out/mpi_ppo.txt")
b=$(grep "^final weights fingerprint" "$out/ppo_plain.txt")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the served PPO ranks' weights differ: $a / $b"
exit 0
