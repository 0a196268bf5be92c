#!/bin/sh
# expect.sh CODE REGEX CMD...: run CMD; pass when it exits with CODE and its output
# (stdout and stderr) matches the extended regular expression REGEX
code=$1 regex=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then
  echo "expect.sh: exit code $rc, expected $code" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "expect.sh: output does not match: $regex" >&2
  exit 1
fi
