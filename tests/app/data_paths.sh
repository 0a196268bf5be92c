#!/bin/sh
# data_paths.sh cpu|cuda ADJOINT PNG_PROBE SCENE OUTDIR: the ways particles reach the renderer
# (render/interop.h) draw the same pixels.
#   CPU: host arrays vs mapped Vulkan buffers at frame 30 (same); the mapped path follows
#        the simulation (frame 0 and frame 30 differ).
#   CUDA (exit 77 = skipped without a CUDA device): staging vs interop at frame 30 (the same
#        simulation: same pixels), CUDA vs CPU at frame 0 (the same initial state) and at
#        frame 30 (the same physics and camera: both scenes stay within 3e-6 of their double
#        answer over 30 frames, so at most 0.1% of the pixels, edges, may round the other way; a camera left framing
#        frame 0 moves 0.6% of them).
mode=$1 adjoint=$2 probe=$3 scene=$4 out=$5
set -u
render() {  # render NAME FRAMES ARGS...
  name=$1 frames=$2
  shift 2
  "$adjoint" render "$scene" --frames "$frames" --size 320x240 --validation --out "$out/$name.png" "$@" || {
    echo "data_paths.sh: adjoint render $* failed" >&2
    exit 1
  }
}
same() { "$probe" same "$out/$1.png" "$out/$2.png" 0 0 320 240 || exit 1; }

render mapped0 0 --data-path mapped
if [ "$mode" = cpu ]; then
  render host30 30 --data-path host
  render mapped30 30 --data-path mapped
  same host30 mapped30
  "$probe" differ "$out/mapped0.png" "$out/mapped30.png" 0 0 320 240 0.004 || exit 1
  echo "data_paths.sh: host arrays and mapped buffers agree"
  exit 0
fi

msg=$("$adjoint" render "$scene" --backend cuda --frames 0 --size 320x240 --out "$out/cuda_probe.png" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  if printf '%s' "$msg" | grep -q "no CUDA device"; then
    echo "data_paths.sh: CUDA part skipped: $msg"
    exit 77
  fi
  echo "data_paths.sh: $msg" >&2
  exit 1
fi
render staging30 30 --backend cuda --data-path staging
render interop30 30 --backend cuda --data-path interop
render cuda0 0 --backend cuda --data-path interop
render mapped30 30 --data-path mapped
same staging30 interop30
same cuda0 mapped0
"$probe" close "$out/staging30.png" "$out/mapped30.png" 0 0 320 240 0.001 || exit 1
echo "data_paths.sh: host, mapped, staging and interop agree"
