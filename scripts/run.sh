#!/usr/bin/env bash
# Set up, build (Release) into build/, and open the editor on the default scene.
# Without a display, render the default scene headless to a video and print where it went.
# Extra arguments go to the adjoint program.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$root/scripts/setup.sh"
build_tree "$root/build" Release
bin="$root/build/bin/adjoint"
scene="$root/assets/scenes/default.json"

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "run.sh: no display; rendering $scene headless to a video instead."
  out="$root/build/out"
  mkdir -p "$out"
  "$bin" render "$scene" --frames 180 --size 1280x720 --out "$out/default.mp4" "$@"
  echo "run.sh: video in $out/default.mp4"
else
  exec "$bin" "$scene" "$@"
fi
