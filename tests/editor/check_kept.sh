#!/bin/sh
# check_kept.sh ADJOINT SCENE LOSS_FILE: the scene the editor saved after Apply reproduces the
# loss it applied (`adjoint optimize --iterations 0`, within 1e-5 relative), and 3 more iterations
# of optimization lower that loss
set -eu
adjoint=$1 scene=$2 loss_file=$3
want=$(cat "$loss_file")
final_loss() { sed -n 's/^final loss \([^ ]*\) after.*/\1/p'; }
got=$("$adjoint" optimize "$scene" --iterations 0 | final_loss)
after=$("$adjoint" optimize "$scene" --iterations 3 | final_loss)
echo "applied $want, saved scene $got, after 3 more iterations $after"
awk -v a="$want" -v b="$got" -v c="$after" 'BEGIN {
  d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a;
  if (b == "" || d > 1e-5 * s) { print "FAIL: the saved scene does not reproduce the applied loss"; exit 1 }
  if (!(c < b)) { print "FAIL: optimizing the saved scene did not lower its loss"; exit 1 }
  print "ok" }'
