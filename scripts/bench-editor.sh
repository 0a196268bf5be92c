#!/usr/bin/env bash
# Editor frame rates on this machine's Vulkan device, as a table: the real editor (script
# mode, in a window under Xvfb when there is no display) on a 64x64 cloth at 1280x720, idle,
# playing (bare, and with contacts, velocity and gradient arrows and ghosts), optimizing, and
# playing while optimizing. Frame times are the UI's own (the worker thread never blocks a frame).
#   scripts/bench-editor.sh [build dir]   (default build/; builds nothing)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bin="${1:-$root/build}/bin/adjoint"
[[ -x "$bin" ]] || { echo "bench-editor.sh: no $bin (build first: scripts/test.sh or cmake --build build)" >&2; exit 1; }
export VK_DRIVER_FILES="${VK_DRIVER_FILES:-$lvp_icd}"
scene="$root/tests/data/editor/cloth64.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # run NAME COMMAND...: the script's "UI frames while waiting" line
  local name=$1
  shift
  printf '%s\n' "open $scene" "$@" "expect fps-above 0" quit > "$tmp/$name.txt"
  local launcher=()
  [[ -z "${DISPLAY:-}" ]] && launcher=(xvfb-run -a -s "-screen 0 1400x900x24")
  "${launcher[@]}" "$bin" --no-vsync --size 1280x720 --script "$tmp/$name.txt" 2>&1 |
    sed -n 's/^script: \([0-9]*\) UI frames while waiting: mean \([0-9.]*\) fps, slowest frame \([0-9.]*\) ms\(, \([0-9]*\) simulation frames\)\{0,1\}.*/\1 \2 \3 \5/p'
}

device=$(VK_DRIVER_FILES="$VK_DRIVER_FILES" "$bin" info 2>/dev/null | sed -n 's/^vulkan device: //p')
echo "Editor, 64x64 cloth (4225 particles), 1280x720, $(nproc) cores, $device"
echo
echo "load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo -)"
echo
echo "| case | UI frames | mean fps | slowest frame [ms] | simulation frames shown |"
echo "|---|---|---|---|---|"
# "playing, overlays": contacts, velocity arrows, dL/dv0 arrows and the ghosts of 2 iterations
# over the live simulation ("toggle optimized": not the optimized rollout's frozen end);
# "playing and optimizing": the simulation plays while 4 iterations run on the worker
for c in idle playing "playing, overlays" optimizing "playing and optimizing"; do
  case $c in
    idle) r=$(run idle "wait 120") ;;
    playing) r=$(run playing "key space" "wait 120") ;;
    "playing, overlays")
      r=$(run overlays "optimize 2" "toggle optimized" "toggle contacts" "toggle velocity" "toggle ghosts" "gradient v0" "key space" \
        "wait 120") ;;
    optimizing) r=$(run optimizing "optimize 4") ;;
    "playing and optimizing") r=$(run play_optimize "key space" "optimize 4") ;;
  esac
  read -r n fps worst sim <<< "${r:-- - - -}"
  echo "| $c | $n | $fps | $worst | $sim |"
done
