#!/bin/sh
# checkpoint.sh ADJOINT SCRIPT OUTDIR [XVFB-RUN ARGS...]: SHAC checkpoints between the command line
# and the editor. The CLI trains the cartpole swing-up 20 windows straight through, and again
# stopped after 7; the editor script continues that one to the end and saves it, and saves a
# run of its own paused after a few windows, which the CLI resumes to the end. Both must end
# with the straight run's weights, bit for bit (their fingerprints). The editor also evaluates the
# straight run's checkpoint: its replayed episode's return is the run's last evaluation.
set -u
adjoint=$1 script=$2 out=$3/checkpoint
shift 3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "checkpoint.sh: $*"; exit 1; }
scene=$ADJ_ASSETS/scenes/robot_cartpole.json
shac() { "$adjoint" optimize "$scene" --task "swing up (policy)" --method shac --envs 4 --seed 1 --threads 2 \
  --iterations 20 "$@"; }
fingerprint() { grep -o 'fingerprint [0-9a-f]*' "$1" | tail -1 | cut -d' ' -f2; }

shac --checkpoint-dir "$out/straight" > "$out/straight.txt" 2>&1 || fail "straight run: $(cat "$out/straight.txt")"
want=$(fingerprint "$out/straight.txt")
[ -n "$want" ] || fail "the straight run printed no fingerprint"
shac --checkpoint-dir "$out/cli" --stop-after 7 > "$out/cli.txt" 2>&1 || fail "first part: $(cat "$out/cli.txt")"

# the evaluation after the last window, as the run printed it (%.6g): the return the editor's replay reports
ret=$(awk '$1 == 19 { print $6 }' "$out/straight.txt")
[ -n "$ret" ] || fail "the straight run printed no row for window 19"
ADJ_EVAL_RETURN=$ret ADJ_CKPT=$out "$@" "$adjoint" --validation --no-vsync --size 1280x720 --script "$script" > "$out/editor.txt" 2>&1
rc=$?
cat "$out/editor.txt"
[ "$rc" -eq 0 ] || fail "the editor script exited $rc"
# the editor's save of the continued run, read back by the command line (nothing left to train):
# the straight run's weights
shac --resume "$out/from_cli" > "$out/from_cli.txt" 2>&1 || fail "reading the editor's save: $(cat "$out/from_cli.txt")"
grep -q "resumed from .* at window 20" "$out/from_cli.txt" || fail "not at window 20: $(cat "$out/from_cli.txt")"
got=$(fingerprint "$out/from_cli.txt")
[ "$got" = "$want" ] || fail "CLI -> editor: the editor ended with weights $got, straight through $want"
# the editor's own run, resumed on the command line to the end
shac --resume "$out/from_editor" > "$out/resumed.txt" 2>&1 || fail "resume of the editor's run: $(cat "$out/resumed.txt")"
grep -q "resumed from .* at window [1-9]" "$out/resumed.txt" || fail "no resume message: $(cat "$out/resumed.txt")"
got=$(fingerprint "$out/resumed.txt")
[ "$got" = "$want" ] || fail "editor -> CLI: the resumed run ended with weights $got, straight through $want"
echo "checkpoint.sh: ok (both ways end with weights $want)"
