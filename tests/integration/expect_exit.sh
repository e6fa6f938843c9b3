#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# expect_exit.sh CODE REGEX [REGEX...] -- COMMAND [ARGS...]
# Runs COMMAND and passes when it exits with exactly CODE and every extended regular expression
# REGEX matches a line of its stderr. CTest's PASS_REGULAR_EXPRESSION ignores the exit status and
# WILL_FAIL accepts any failure, so CLI error tests use this instead.
set -u
usage() {
  echo "usage: expect_exit.sh CODE REGEX [REGEX...] -- COMMAND [ARGS...]" >&2
  exit 2
}
[ "$#" -ge 4 ] || usage
expected=$1
shift
patterns_file=$(mktemp)
stderr_file=$(mktemp)
trap 'rm -f "$patterns_file" "$stderr_file"' EXIT
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  printf '%s\n' "$1" >>"$patterns_file"
  shift
done
[ "$#" -ge 2 ] || usage
shift
"$@" 2>"$stderr_file" >/dev/null
status=$?
cat "$stderr_file" >&2
failed=0
if [ "$status" -ne "$expected" ]; then
  echo "expect_exit.sh: exit status $status, expected $expected" >&2
  failed=1
fi
while IFS= read -r pattern; do
  if ! grep -Eq -- "$pattern" "$stderr_file"; then
    echo "expect_exit.sh: no line of stderr matches '$pattern'" >&2
    failed=1
  fi
done <"$patterns_file"
[ "$failed" -eq 0 ] && echo "expect_exit.sh: exit status $status and stderr as expected"
exit "$failed"
