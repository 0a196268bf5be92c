#!/bin/sh
# serve.sh ADJOINT PROBE SCENE OUTDIR MODE (SCENE: a particle task of a few ms an iteration or more): `adjoint optimize --serve` and `adjoint watch`.
#   watch    a watcher prints every iteration and the end; hostile frames (serve_probe) and
#            random bytes reach the port meanwhile; the run's results are the same bits as
#            without --serve
#   token    a bind to every interface needs the token it prints: without it, or with a wrong
#            one, the watcher is refused; with it, it watches to the end
#   methods  SHAC, PODS and receding horizon publish too: every window / iteration / frame, a
#            snapshot and the end reach the watcher (SCENE's folder holds robot_cartpole.json
#            and robot_drone.json)
#   control  pause/stop refused without --serve-control; with it, pause holds the run,
#            resume lets it go, stop ends it (exit 130, "stopped by a viewer")
#   worlds   SHAC with --serve-worlds 3: a snapshot carries three training copies' windows; the
#            run's weights are the same bits as without a viewer
#   ppo      PPO publishes: every iteration and the end reach the watcher, snapshots every
#            --serve-every with the training copies' collections; the same bits as without
#            a viewer; a viewer's checkpoint request is written, its stop ends the run (SCENE's
#            folder holds robot_cartpole.json)
adjoint=$1 probe=$2 scene=$3 out=$4/serve_$5 mode=$5
rm -rf "$out" && mkdir -p "$out"
fail() { echo "serve.sh ($mode): $*"; for f in "$out"/*.txt; do echo "--- $f"; cat "$f"; done; exit 1; }
# a port free now (the kernel's choice), so that parallel runs of this test do not collide
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# waits: ADJ_TIME_SCALE (default 1) stretches them where a build runs slower (the sanitizer build)
scale=${ADJ_TIME_SCALE:-1}
pause() { sleep "$(awk "BEGIN { print $1 * $scale }")"; }
# waits until FILE holds a line matching RE (60 s x scale: the machine may be loaded)
wait_for() {
  for i in $(seq 1 $((1200 * scale))); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no line /$2/ in $1"
}
# the log without wall times: what must be the same bits
strip_log() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for it in j["iterations"]: it.pop("ms", None)
print(json.dumps(j, sort_keys=True))' "$1"; }

case "$mode" in
watch)
  port=$(free_port)
  # the run waits for its first viewer; hostile frames (serve_probe) and random bytes reach the
  # port before and while it runs
  "$adjoint" optimize "$scene" --iterations 20 --serve "$port" --serve-every 4 --serve-wait 60 \
    --log "$out/served.json" --save-scene "$out/served_scene.json" >"$out/run.txt" 2>&1 &
  run=$!
  wait_for "$out/run.txt" "serving on tcp://127.0.0.1:$port"
  "$probe" "tcp://127.0.0.1:$port" 3000 >"$out/probe.txt" 2>&1 &
  probe_pid=$!
  "$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/watch.txt" 2>&1 &
  watcher=$!
  python3 -c 'import os, socket, sys
for i in range(20):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(os.urandom(4096)); s.close()' "$port" || fail "random bytes could not be sent"
  wait "$probe_pid" || fail "serve_probe failed"
  wait "$run" || fail "the served run failed"
  grep -qE "^served [0-9]+ polls; dropped [1-9][0-9]* malformed frames" "$out/run.txt" || fail "no malformed frame counted"
  wait "$watcher" || fail "adjoint watch exited $?"
  for i in $(seq 0 19); do grep -qE "^iteration $i  loss " "$out/watch.txt" || fail "watch missed iteration $i"; done
  [ "$(grep -cE '^iteration ' "$out/watch.txt")" -eq 20 ] || fail "watch printed an iteration twice"
  grep -qE "^end: finished .*iterations 20" "$out/watch.txt" || fail "watch printed no end"
  # the last iteration's snapshot: its parameters and rollout (horizon 90: 91 frames)
  grep -qE "^snapshot of iteration 19: 507 parameters, 91 frames" "$out/watch.txt" || fail "watch got no snapshot"
  grep -q "^run: $scene, method bptt" "$out/watch.txt" || fail "watch printed no hello"
  "$adjoint" optimize "$scene" --iterations 20 --log "$out/plain.json" --save-scene "$out/plain_scene.json" \
    >"$out/plain.txt" 2>&1 || fail "the plain run failed"
  [ "$(strip_log "$out/served.json")" = "$(strip_log "$out/plain.json")" ] || fail "the logs differ"
  cmp "$out/served_scene.json" "$out/plain_scene.json" || fail "the optimized scenes differ"
  ;;
token)
  port=$(free_port)
  "$adjoint" optimize "$scene" --iterations 100000 --serve "0.0.0.0:$port" >"$out/run.txt" 2>&1 &
  run=$!
  wait_for "$out/run.txt" "^token: "
  token=$(sed -n 's/^token: \([0-9a-f]*\).*/\1/p' "$out/run.txt")
  timeout 10 "$adjoint" watch "127.0.0.1:$port" --timeout 10 >"$out/none.txt" 2>&1 && fail "a watcher without the token got in"
  grep -q "refused this viewer: wrong or missing token" "$out/none.txt" || fail "no refusal without the token"
  timeout 10 "$adjoint" watch "127.0.0.1:$port" --token "x$token" --timeout 10 >"$out/wrong.txt" 2>&1 &&
    fail "a watcher with a wrong token got in"
  grep -q "refused this viewer" "$out/wrong.txt" || fail "no refusal with a wrong token"
  ADJ_TOKEN=$token "$adjoint" watch "127.0.0.1:$port" --send stop >"$out/stop.txt" 2>&1
  [ $? -eq 3 ] || fail "stop without --serve-control: expected exit 3"
  "$adjoint" watch "127.0.0.1:$port" --token "$token" --timeout 30 >"$out/watch.txt" 2>&1 &
  watcher=$!
  wait_for "$out/watch.txt" "^iteration 3 "
  # a late viewer: the run was iterations ahead when it came, and it got the history first
  grep -q "^run: $scene, method bptt" "$out/watch.txt" || fail "the late watcher got no hello"
  grep -q "^iteration 0  loss " "$out/watch.txt" || fail "the late watcher got no history"
  kill -INT "$run"
  wait "$run"
  [ $? -eq 130 ] || fail "the run did not stop on Ctrl+C"
  wait "$watcher" || fail "the watcher with the token failed"
  grep -qE "^end: stopped" "$out/watch.txt" || fail "the watcher saw no end"
  ;;
control)
  port=$(free_port)
  "$adjoint" optimize "$scene" --iterations 100000 --serve "$port" >"$out/run0.txt" 2>&1 &
  run=$!
  wait_for "$out/run0.txt" "serving on"
  "$adjoint" watch "127.0.0.1:$port" --send pause >"$out/refused.txt" 2>&1
  [ $? -eq 3 ] || fail "pause without --serve-control: expected exit 3"
  grep -q "not accepted: this run was started without --serve-control" "$out/refused.txt" || fail "no reason given"
  kill -INT "$run"; wait "$run"

  port=$(free_port)
  "$adjoint" optimize "$scene" --iterations 100000 --serve "$port" --serve-control --log "$out/log.json" \
    >"$out/run.txt" 2>&1 &
  run=$!
  wait_for "$out/run.txt" "^ +3 "
  "$adjoint" watch "127.0.0.1:$port" --send pause >"$out/pause.txt" 2>&1 || fail "pause not accepted"
  pause 1.5  # the iteration under way when the pause came finishes
  a=$(grep -cE '^ +[0-9]+ ' "$out/run.txt")
  pause 1
  b=$(grep -cE '^ +[0-9]+ ' "$out/run.txt")
  [ "$a" = "$b" ] || fail "the run went on while paused ($a, then $b iterations)"
  "$adjoint" watch "127.0.0.1:$port" --send resume >"$out/resume.txt" 2>&1 || fail "resume not accepted"
  wait_for "$out/run.txt" "^ +$((b + 2)) "
  "$adjoint" watch "127.0.0.1:$port" --send stop >"$out/stop.txt" 2>&1 || fail "stop not accepted"
  wait "$run"
  [ $? -eq 130 ] || fail "a stopped run exits 130"
  grep -q "stopped by a viewer after" "$out/run.txt" || fail "the run did not say who stopped it"
  grep -q '"interrupted": true' "$out/log.json" || fail "the log is not marked interrupted"

  # Ctrl+C still stops a paused run
  port=$(free_port)
  "$adjoint" optimize "$scene" --iterations 100000 --serve "$port" --serve-control >"$out/run2.txt" 2>&1 &
  run=$!
  wait_for "$out/run2.txt" "^ +1 "
  "$adjoint" watch "127.0.0.1:$port" --send pause >"$out/pause2.txt" 2>&1 || fail "pause not accepted"
  kill -INT "$run"
  wait "$run"
  [ $? -eq 130 ] || fail "Ctrl+C did not stop the paused run"
  grep -q "stopped by Ctrl+C after" "$out/run2.txt" || fail "the paused run did not say Ctrl+C stopped it"
  ;;
methods)
  dir=$(dirname "$scene")
  # watched METHOD ITERATIONS OPTIONS...: a served run of that method and a watcher of it
  watched() {
    m=$1 n=$2
    shift 2
    port=$(free_port)
    "$adjoint" optimize "$@" --serve "$port" --serve-wait 60 >"$out/run_$m.txt" 2>&1 &
    run=$!
    wait_for "$out/run_$m.txt" "serving on"
    "$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/watch_$m.txt" 2>&1 || fail "watch of $m failed"
    wait "$run" || fail "the $m run failed"
    grep -q "^run: .*, method $m," "$out/watch_$m.txt" || fail "$m: no hello"
    [ "$(grep -cE '^iteration [0-9]+ ' "$out/watch_$m.txt")" -eq "$n" ] || fail "$m: not $n iterations"
    grep -qE "^end: finished" "$out/watch_$m.txt" || fail "$m: no end"
    grep -qE "^snapshot of iteration [0-9]+: [0-9]+ parameters, [1-9][0-9]* frames" "$out/watch_$m.txt" ||
      fail "$m: no snapshot"
  }
  watched shac 10 "$dir/robot_cartpole.json" --task "swing up (policy)" --method shac --iterations 10 --seed 0 --envs 8
  watched pods 3 "$dir/robot_cartpole.json" --task "swing up (policy)" --method pods --iterations 3 --envs 4
  # receding horizon: one record per frame flown (90); it refuses stop (the control request comes
  # while the run waits for its first viewer: a control request is not one)
  port=$(free_port)
  "$adjoint" optimize "$dir/robot_drone.json" --receding-horizon 30 --iterations 2 --serve "$port" --serve-control \
    --serve-wait 60 >"$out/run_receding_stop.txt" 2>&1 &
  run=$!
  wait_for "$out/run_receding_stop.txt" "serving on"
  "$adjoint" watch "127.0.0.1:$port" --send stop >"$out/receding_stop.txt" 2>&1
  [ $? -eq 3 ] || fail "receding horizon accepted stop"
  grep -q "not accepted: this method runs to its end" "$out/receding_stop.txt" || fail "no reason for the refusal"
  "$adjoint" watch "127.0.0.1:$port" >/dev/null 2>&1 || fail "watch of the receding run failed"
  wait "$run" || fail "the receding run failed"
  watched receding 90 "$dir/robot_drone.json" --receding-horizon 30 --iterations 2
  ;;
worlds)
  cartpole="$(dirname "$scene")/robot_cartpole.json"
  shac() { "$adjoint" optimize "$cartpole" --task "swing up (policy)" --method shac --iterations 20 --seed 3 --envs 6 \
    --threads 1 "$@"; }
  port=$(free_port)
  shac --serve "$port" --serve-worlds 3 --serve-wait 60 >"$out/run.txt" 2>&1 &
  run=$!
  wait_for "$out/run.txt" "serving on"
  "$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/watch.txt" 2>&1 || fail "watch failed"
  wait "$run" || fail "the served run failed"
  shac >"$out/plain.txt" 2>&1 || fail "the plain run failed"
  # every --serve-every (10) windows and the last publish: windows 0, 10 and 19, the evaluation
  # episode and copies 0..2 over the window (32 frames and its start)
  [ "$(grep -cE '^snapshot of iteration (0|10|19): .*, 3 worlds of 33 frames' "$out/watch.txt")" -eq 3 ] ||
    fail "not 3 snapshots (windows 0, 10, 19) with 3 worlds of 33 frames"
  [ "$(grep -cE '^iteration [0-9]+ .*grad_norm' "$out/watch.txt")" -eq 20 ] || fail "not 20 windows with their gradient norm"
  a=$(grep "^final weights fingerprint" "$out/run.txt")
  b=$(grep "^final weights fingerprint" "$out/plain.txt")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "the served run's weights differ: $a / $b"
  ;;
ppo)
  cartpole="$(dirname "$scene")/robot_cartpole.json"
  ppo() { "$adjoint" optimize "$cartpole" --task "swing up (policy)" --method ppo --envs 4 --seed 1 "$@"; }
  port=$(free_port)
  ppo --iterations 12 --serve "$port" --serve-every 5 --serve-worlds 2 --serve-wait 60 --log "$out/served.json" >"$out/run.txt" 2>&1 &
  run=$!
  wait_for "$out/run.txt" "serving on"
  "$adjoint" watch "127.0.0.1:$port" --timeout 60 >"$out/watch.txt" 2>&1 || fail "watch failed"
  wait "$run" || fail "the served run failed"
  ppo --iterations 12 --log "$out/plain.json" >"$out/plain.txt" 2>&1 || fail "the plain run failed"
  grep -q "^run: .*, method ppo," "$out/watch.txt" || fail "no hello"
  for i in $(seq 0 11); do grep -qE "^iteration $i  loss .*mean_reward" "$out/watch.txt" || fail "watch missed iteration $i"; done
  [ "$(grep -cE '^iteration ' "$out/watch.txt")" -eq 12 ] || fail "watch printed an iteration twice"
  grep -qE "^end: finished .*iterations 12" "$out/watch.txt" || fail "no end"
  # iterations 0, 5, 10 and the last publish: each with copies 0 and 1 over the collection (32 frames and its start)
  [ "$(grep -cE '^snapshot of iteration (0|5|10|11): [0-9]+ parameters, [1-9][0-9]* frames.*, 2 worlds of 33 frames' \
    "$out/watch.txt")" -ge 1 ] || fail "no snapshot with 2 worlds"
  a=$(grep "^final weights fingerprint" "$out/run.txt")
  b=$(grep "^final weights fingerprint" "$out/plain.txt")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "the served run's weights differ: $a / $b"
  cmp "$out/served.json" "$out/plain.json" >/dev/null || {
    python3 -c 'import json,sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for r in a["iterations"] + b["iterations"]: r.pop("wall_s", None)
sys.exit(a != b)' "$out/served.json" "$out/plain.json" || fail "the logs differ"
  }
  # a viewer's checkpoint request (written after the iteration under way), then its stop
  port=$(free_port)
  ppo --iterations 100000 --serve "$port" --serve-control --checkpoint-dir "$out/ck" --checkpoint-every 100000 \
    >"$out/stop_run.txt" 2>&1 &
  run=$!
  wait_for "$out/stop_run.txt" "^ +9 "
  "$adjoint" watch "127.0.0.1:$port" --send checkpoint >"$out/ask.txt" 2>&1 || fail "checkpoint not accepted"
  wait_for "$out/stop_run.txt" "^checkpoint after iteration [0-9]+ written"
  [ -f "$out/ck/checkpoint.adjck" ] || fail "no checkpoint file"
  "$adjoint" watch "127.0.0.1:$port" --send stop >"$out/stop.txt" 2>&1 || fail "stop not accepted"
  wait "$run"
  [ $? -eq 130 ] || fail "a stopped PPO run exits 130"
  grep -q "stopped by a viewer after" "$out/stop_run.txt" || fail "the run did not say who stopped it"
  ;;
*) fail "unknown mode" ;;
esac
echo "serve.sh ($mode): ok"
