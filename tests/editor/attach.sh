#!/bin/sh
# attach.sh ADJOINT SCRIPT OUTDIR [XVFB-RUN ARGS...]: an editor script attached to a CLI run.
# The run (the default scene, 40 iterations) waits for its first viewer; the editor attaches,
# sees iterations arrive, replays the newest rollout and detaches; the run then finishes on
# its own (exit 0, all 40 iterations).
adjoint=$1 script=$2 out=$3
shift 3
mkdir -p "$out"
log=$out/attach_run.txt
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$adjoint" optimize "$ADJ_ASSETS/scenes/default.json" --iterations 40 --serve "$port" --serve-every 5 \
  --serve-wait 300 >"$log" 2>&1 &
run=$!
ADJ_ATTACH=127.0.0.1:$port "$@" "$adjoint" --validation --no-vsync --size 1280x720 --script "$script"
rc=$?
wait "$run"
run_rc=$?
cat "$log"
[ "$rc" -eq 0 ] || { echo "attach.sh: the editor script exited $rc"; kill "$run" 2>/dev/null; exit 1; }
[ "$run_rc" -eq 0 ] || { echo "attach.sh: the run exited $run_rc"; exit 1; }
grep -qE "^ +39 " "$log" || { echo "attach.sh: the run did not finish its 40 iterations"; exit 1; }
grep -q "^final loss" "$log" || { echo "attach.sh: no final loss"; exit 1; }
echo "attach.sh: ok"
