#!/usr/bin/env bash
# Installs the Debian packages that Adjoint's build, run and tests need.
# Only what is missing is installed; safe to run twice. Needs root or sudo.
#   scripts/setup.sh          the build, run and tests
#   scripts/setup.sh --fuzz   and clang with libFuzzer and the sanitizer runtimes (scripts/fuzz.sh)
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  # engine
  libglm-dev libtinyobjloader-dev nlohmann-json3-dev libcli11-dev libomp-dev liburdfdom-dev libtinyxml2-dev libassimp-dev
  # render and app
  libvulkan-dev vulkan-validationlayers mesa-vulkan-drivers glslc
  libglfw3-dev libimgui-dev libstb-dev
  # the run server and its viewers (adjoint optimize --serve, adjoint watch, File > Attach)
  libzmq3-dev cppzmq-dev
  # tests, benchmarks, headless windows, video
  catch2 libbenchmark-dev xvfb xauth ffmpeg
  # the documentation checks (tests/docs)
  python3
  # data-parallel training over processes (ADJ_MPI: `mpirun -np N adjoint optimize ...`)
  libopenmpi-dev openmpi-bin
)
# the fuzz build (scripts/fuzz.sh): clang, its libFuzzer and ASan/UBSan runtimes (libclang-rt),
# and clang's OpenMP (libomp-dev, above)
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: this system has no apt/dpkg (Adjoint targets Debian 12)." >&2
  echo "Install these packages (Debian names) with your package manager, then re-run:" >&2
  printf '  %s\n' "${packages[@]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#packages[@]} packages present."
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done."
