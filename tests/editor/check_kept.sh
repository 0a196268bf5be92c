#!/bin/sh
# check_kept.sh ADJOINT SCENE LOSS_FILE: the scene the editor saved after Apply reproduces the
# loss it applied (`adjoint optimize --iterations 0`, within 1e-5 relative), and optimizing it
# further finds a lower loss within 3 iterations (the lowest loss the run measured, as Apply
# would keep it: contact makes single steps go up as well as down)
set -eu
adjoint=$1 scene=$2 loss_file=$3
want=$(cat "$loss_file")
got=$("$adjoint" optimize "$scene" --iterations 0 | sed -n 's/^final loss \([^ ]*\) after.*/\1/p')
# the iteration rows ("  iter  loss  grad  ms") and the final loss: the lowest of them
lowest=$("$adjoint" optimize "$scene" --iterations 3 |
  awk '/^ *[0-9]+ +[-0-9.e+]+ +[-0-9.e+]+ +[0-9.]+$/ { l = $2 } /^final loss/ { l = $3 }
       l != "" { if (m == "" || l + 0 < m + 0) m = l; l = "" } END { print m }')
echo "applied $want, saved scene $got, lowest of 3 more iterations $lowest"
awk -v a="$want" -v b="$got" -v c="$lowest" 'BEGIN {
  d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a;
  if (b == "" || d > 1e-5 * s) { print "FAIL: the saved scene does not reproduce the applied loss"; exit 1 }
  if (c == "" || !(c + 0 < b + 0)) { print "FAIL: optimizing the saved scene did not lower its loss"; exit 1 }
  print "ok" }'
