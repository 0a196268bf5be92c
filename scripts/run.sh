#!/usr/bin/env bash
# Set up, build (Release) into build/, and open the editor on the default scene.
# Without a display, render the default scene headless and print where the output went.
# Extra arguments go to the adjoint program.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$root/scripts/setup.sh"
build_tree "$root/build" Release
bin="$root/build/bin/adjoint"
scene="$root/assets/scenes/default.json"

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "run.sh: no display; rendering $scene headless instead."
  out="$root/build/out"
  mkdir -p "$out"
  "$bin" "$scene" --headless --frames 60 --about --screenshot "$out/default.png" "$@"
  echo "run.sh: output in $out/default.png"
else
  exec "$bin" "$scene" "$@"
fi
