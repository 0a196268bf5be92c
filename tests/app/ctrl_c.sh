#!/bin/sh
# ctrl_c.sh ADJOINT SCENE OUTDIR: Ctrl+C during `adjoint optimize` stops after the current
# iteration (exit 130) and still writes the log and the optimized scene
adjoint=$1 scene=$2 out=$3
# (the old output too: the wait below must not read a previous run's rows before this one starts)
rm -f "$out/interrupted_log.json" "$out/interrupted_scene.json" "$out/interrupted.txt"
"$adjoint" optimize "$scene" --iterations 100000 --log "$out/interrupted_log.json" \
  --save-scene "$out/interrupted_scene.json" > "$out/interrupted.txt" 2>&1 &
pid=$!
# wait until at least one iteration has printed, then interrupt
for i in $(seq 1 100); do
  grep -qE '^ +1 ' "$out/interrupted.txt" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
cat "$out/interrupted.txt"
[ "$rc" -eq 130 ] || { echo "ctrl_c.sh: exit code $rc, expected 130"; exit 1; }
grep -q "stopped by Ctrl+C" "$out/interrupted.txt" || { echo "ctrl_c.sh: no stop message"; exit 1; }
grep -q '"interrupted": true' "$out/interrupted_log.json" || { echo "ctrl_c.sh: log missing or not marked"; exit 1; }
"$adjoint" run "$out/interrupted_scene.json" --steps 1 > /dev/null || { echo "ctrl_c.sh: saved scene does not load"; exit 1; }
echo "ctrl_c.sh: ok"
