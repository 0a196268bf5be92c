#!/bin/sh
# attach.sh ADJOINT SCRIPT OUTDIR [XVFB-RUN ARGS...]: an editor script attached to a CLI run.
# The run waits for its first viewer; the editor attaches, sees iterations arrive, replays the
# newest rollout and detaches; the run then finishes on its own (exit 0, every iteration). The
# script's name picks the run:
#   attach_worlds   SHAC on the cartpole, 20 windows, 6 copies; snapshots carry copies 0..2
#   attach_robot    BPTT on the walker robot, 20 iterations, a snapshot every 5
#   (any other)     BPTT on the default scene, 40 iterations, a snapshot every 5
adjoint=$1 script=$2 out=$3
shift 3
mkdir -p "$out"
log=$out/$(basename "$script" .txt)_run.txt
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
case $(basename "$script" .txt) in
attach_worlds)
  "$adjoint" optimize "$ADJ_ASSETS/scenes/robot_cartpole.json" --task "swing up (policy)" --method shac \
    --iterations 20 --envs 6 --seed 3 --threads 1 --serve "$port" --serve-worlds 3 --serve-wait 300 >"$log" 2>&1 &
  last="^ +19 " ;;
attach_robot)
  "$adjoint" optimize "$ADJ_ASSETS/scenes/robot_walker.json" --iterations 20 --serve "$port" --serve-every 5 \
    --serve-wait 300 >"$log" 2>&1 &
  last="^ +19 " ;;
*)
  "$adjoint" optimize "$ADJ_ASSETS/scenes/default.json" --iterations 40 --serve "$port" --serve-every 5 \
    --serve-wait 300 >"$log" 2>&1 &
  last="^ +39 " ;;
esac
run=$!
ADJ_ATTACH=127.0.0.1:$port "$@" "$adjoint" --validation --no-vsync --size 1280x720 --script "$script"
rc=$?
wait "$run"
run_rc=$?
cat "$log"
[ "$rc" -eq 0 ] || { echo "attach.sh: the editor script exited $rc"; kill "$run" 2>/dev/null; exit 1; }
[ "$run_rc" -eq 0 ] || { echo "attach.sh: the run exited $run_rc"; exit 1; }
grep -qE "$last" "$log" || { echo "attach.sh: the run did not finish its iterations"; exit 1; }
grep -qE "^(final loss|final weights fingerprint)" "$log" || { echo "attach.sh: the run did not end"; exit 1; }
echo "attach.sh: ok"
