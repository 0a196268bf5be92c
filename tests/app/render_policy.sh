#!/bin/sh
# render_policy.sh ADJOINT PNG_PROBE SCENES_DIR OUTDIR: a short SHAC run on the Ant writes its
# checkpoint; `adjoint render --policy` of it replays the evaluation episode the run evaluated
# after its last window: the same return (bit for bit, against the --log), states that the
# policy drove (not those of the passive Ant), the camera sliding with the robot and the robot
# in view at the last frame; a PPO run's checkpoint replays its evaluation too (the cart-pole:
# the same mean frame cost); a checkpoint of another scene, or none, is refused by name
set -u
adjoint=$1 probe=$2 scenes=$3 out=$4/render_policy
ant=$scenes/locomotion/ant.json
rm -rf "$out" && mkdir -p "$out"
fail() { echo "render_policy.sh: $*"; exit 1; }

"$adjoint" optimize "$ant" --method shac --envs 2 --iterations 2 --seed 3 --threads 2 --checkpoint-dir "$out/ck" \
  --log "$out/log.json" > "$out/train.txt" 2>&1 || fail "training failed: $(cat "$out/train.txt")"
render() { "$adjoint" render "$ant" --policy "$out/ck" --size 320x180 --validation "$@"; }
render --out "$out/last.png" --states "$out/states.json" > "$out/last.txt" 2>&1 ||
  fail "render --policy failed: $(cat "$out/last.txt")"
cat "$out/last.txt"
render --frames 0 --out "$out/first.png" > "$out/first.txt" 2>&1 || fail "frame 0: $(cat "$out/first.txt")"
# the whole episode as a video, every 100th frame
render --stride 100 --out "$out/episode.mp4" > "$out/video.txt" 2>&1 || fail "video: $(cat "$out/video.txt")"
grep -q "frames 320x180 at 60 fps written" "$out/video.txt" || fail "no video: $(cat "$out/video.txt")"

# the return printed equals the run's evaluation after its last window; the states are the
# episode's (frames 0..length) and differ from the Ant left to itself for as many frames
length=$(sed -n 's/.* over \([0-9]*\) frames .*/\1/p' "$out/last.txt")
[ -n "$length" ] || fail "no episode length printed"
"$adjoint" render "$ant" --frames "$length" --size 64x36 --out "$out/passive.png" --states "$out/passive.json" \
  > "$out/passive.txt" 2>&1 || fail "passive render: $(cat "$out/passive.txt")"
python3 - "$out" << 'PY' || fail "the episode's return or states differ"
import json, re, sys
out = sys.argv[1]
text = open(f"{out}/last.txt").read()
printed = float(re.search(r"evaluation return (\S+) over (\d+) frames", text).group(1))
logged = json.load(open(f"{out}/log.json"))["windows"][-1]["eval_return"]
print(f"printed {printed!r}, logged {logged!r}")
assert printed == logged, "the evaluation return is not the run's"
frames = json.load(open(f"{out}/states.json"))["frames"]
passive = json.load(open(f"{out}/passive.json"))["frames"]
length = int(re.search(r"over (\d+) frames", text).group(1))
assert len(frames) == length + 1 and frames[-1]["frame"] == length, (len(frames), length)
root = [f["joint_q"][:3] for f in frames]
moved = max(abs(a - b) for a, b in zip(root[0], root[-1]))
alone = max(abs(a - b) for a, b in zip(root[-1], passive[-1]["joint_q"][:3]))
print(f"root {root[0]} -> {root[-1]}: moved {moved:.4f} m, {alone:.4f} m from the passive Ant's")
assert frames[0]["joint_q"] == passive[0]["joint_q"], "frame 0 is not the task's nominal start"
assert moved > 0.01 and alone > 0.01, "the root does not move as the policy drives it"
# the camera slid with the root over the ground: the Ant's file is z-up, the scene y-up (the
# object turned -90 deg about x), so the world's (x, z) are the file's (x, -y)
shift = [float(v) for v in re.search(r"followed the robot's root by \((\S+), (\S+), (\S+)\) m", text).groups()]
want = [root[-1][0] - root[0][0], 0.0, -(root[-1][1] - root[0][1])]
print(f"camera shift {shift}, root's horizontal displacement {want}")
assert all(abs(a - b) < 1e-4 for a, b in zip(shift, want)), "the camera did not follow the robot"
PY
# the camera follows: the Ant (blue) is in the middle of the last frame as of the first, in another pose
for f in first last; do
  "$probe" colour "$out/$f.png" 110 50 210 130 70 150 230 40 0.05 || fail "no robot in the middle of $f.png"
done
"$probe" differ "$out/first.png" "$out/last.png" 0 0 320 180 0.02 || fail "the last frame looks like the first"

# a PPO run's checkpoint (the cart-pole's swing-up): its evaluation episode, the same mean frame cost
cartpole=$scenes/robot_cartpole.json
"$adjoint" optimize "$cartpole" --task "swing up (policy)" --method ppo --envs 4 --seed 1 --iterations 3 \
  --checkpoint-dir "$out/ppo" --log "$out/ppo_log.json" > "$out/ppo_train.txt" 2>&1 ||
  fail "PPO training failed: $(cat "$out/ppo_train.txt")"
"$adjoint" render "$cartpole" --policy "$out/ppo" --size 160x90 --out "$out/ppo.png" > "$out/ppo.txt" 2>&1 ||
  fail "render --policy of PPO failed: $(cat "$out/ppo.txt")"
cat "$out/ppo.txt"
python3 - "$out" << 'PY' || fail "the PPO episode's cost differs"
import json, re, sys
out = sys.argv[1]
m = re.search(r"PPO policy .* after 3 iterations: evaluation return \S+ over (\d+) frames \(eval cost (\S+)\)",
              open(f"{out}/ppo.txt").read())
logged = json.load(open(f"{out}/ppo_log.json"))["iterations"][-1]["eval_cost"]
print(f"printed {float(m.group(2))!r}, logged {logged!r}")
assert float(m.group(2)) == logged
PY

# refused: a checkpoint of another scene, a folder without one
code() { "$@" > "$out/refused.txt" 2>&1; echo $?; }
[ "$(code "$adjoint" render "$scenes/locomotion/hopper.json" --policy "$out/ck" --out "$out/no.png")" -eq 1 ] ||
  fail "a checkpoint of another scene accepted"
grep -q "ck/checkpoint.adjck: the checkpoint's scene is \"ant (DiffRL locomotion)\", this run's is" "$out/refused.txt" ||
  fail "$(cat "$out/refused.txt")"
[ "$(code "$adjoint" render "$ant" --policy "$out/nowhere" --out "$out/no.png")" -eq 1 ] || fail "no checkpoint accepted"
grep -q "nowhere/checkpoint.adjck: cannot open" "$out/refused.txt" || fail "$(cat "$out/refused.txt")"
echo "render_policy.sh: ok"
