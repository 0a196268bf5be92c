# sourced by run.sh and test.sh: where things are, and the environment Vulkan tests need
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lvp_icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
jobs=$(nproc 2>/dev/null || echo 2)

# a private 0700 runtime dir silences "XDG_RUNTIME_DIR is invalid" from Mesa and GLFW
if [[ -z "${XDG_RUNTIME_DIR:-}" || ! -d "${XDG_RUNTIME_DIR:-}" ]]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/adjoint-runtime-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi

# configure (once) and build a tree; extra args go to cmake's configure step
build_tree() {
  local dir=$1 type=$2
  shift 2
  if [[ ! -f "$dir/build.ninja" ]]; then
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@"
  else
    cmake "$dir" "$@" >/dev/null
  fi
  cmake --build "$dir" -j "$jobs"
}
