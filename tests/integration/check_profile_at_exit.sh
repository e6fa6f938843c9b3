#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The global profiler's exit path, run as a user runs it: a child process with
# TSCOPE_FLAGS=profile=true, whose profile is written by the exit handler (or fails to be).
# Checks the exact exit status and that the report is complete: the summary, the Class, Ops and
# Apply tables, the tips, and the sum of all profiles when several were printed.
#
#   check_profile_at_exit.sh CASE TSCOPE PROGRAM WORKDIR CHECK_TRACE
# CASE names the command (cli: `tscope profile --model mlp`; program: tests' profiled_program)
# and the destination. TSCOPE and PROGRAM are the binaries; WORKDIR a scratch folder;
# CHECK_TRACE the timeline checker (check_trace.cpp).
set -uo pipefail
case_name="$1"
tscope="$2"
program="$3"
work="$4/$case_name"
check_trace="$5"
rm -rf "$work" && mkdir -p "$work"
out="$work/stdout.txt"
err="$work/stderr.txt"

fail() {
  echo "FAIL [$case_name]: $*"
  echo "--- stdout (last 40 lines)"; tail -n 40 "$out" 2>/dev/null
  echo "--- stderr (last 40 lines)"; tail -n 40 "$err" 2>/dev/null
  exit 1
}

# Runs "$@" with TSCOPE_FLAGS=$flags; expects exit status $expected.
run_expecting() {
  local expected="$1" flags="$2"
  shift 2
  TSCOPE_FLAGS="$flags" "$@" >"$out" 2>"$err" </dev/null
  local status=$?
  [[ $status -eq $expected ]] || fail "exit status $status, expected $expected (TSCOPE_FLAGS=$flags $*)"
}

# A complete text report: every section of every printed profile, the tips, and optionally the
# sum line and the memory section.
expect_complete_text() {
  local file="$1" want_sum="$2" want_memory="$3"
  for section in "Function profiling" "^Class$" "^Ops$" "^Apply$" \
                 "(Here are tips to potentially make your code run faster|Sorry, no tip for today)"; do
    grep -qE "$section" "$file" || fail "section '$section' missing from $file"
  done
  if [[ $want_sum == sum ]]; then
    grep -q "Sum of all([0-9]*) printed profiles at exit." "$file" || fail "no sum in $file"
  fi
  if [[ $want_memory == memory ]]; then
    grep -q "^Memory Profile" "$file" || fail "no memory section in $file"
  fi
  # The last section of a report is its tips; a report cut short ends before them.
  tail -n 5 "$file" | grep -qE "Sorry, no tip for today|^  - |est\. gain|^$|[a-z]" ||
    fail "$file ends unexpectedly"
}

cli=("$tscope" profile --model mlp --steps 3 --batch 8)
prog=("$program")

case "$case_name" in
  cli_stderr)
    run_expecting 0 "profile=true" "${cli[@]}"
    expect_complete_text "$err" nosum nomemory ;;
  cli_stdout)
    run_expecting 0 "profile=true,profiling.destination=stdout" "${cli[@]}"
    expect_complete_text "$out" nosum nomemory ;;
  cli_text_file)
    run_expecting 0 "profile=true,profiling.destination=$work/profile.txt" "${cli[@]}"
    expect_complete_text "$work/profile.txt" nosum nomemory ;;
  cli_memory)
    run_expecting 0 "profile=true,profile_memory=true,profiling.destination=$work/p.txt" "${cli[@]}"
    expect_complete_text "$work/p.txt" nosum memory ;;
  cli_json_file)
    run_expecting 0 "profile=true,profiling.destination=$work/profile.json" "${cli[@]}"
    grep -q '"schema_version"' "$work/profile.json" || fail "no schema_version in the JSON"
    "$tscope" report "$work/profile.json" >"$work/report.txt" 2>"$err" ||
      fail "tscope report cannot read the JSON written at exit"
    expect_complete_text "$work/report.txt" nosum nomemory ;;
  program_stderr)
    run_expecting 0 "profile=true" "${prog[@]}"
    expect_complete_text "$err" sum nomemory
    # The program's own report (README: per function, in code) is on stdout, also complete.
    expect_complete_text "$out" nosum nomemory ;;
  program_memory_file)
    run_expecting 0 "profile=true,profile_memory=true,profiling.destination=$work/p.txt" "${prog[@]}"
    expect_complete_text "$work/p.txt" sum memory ;;
  program_symlink)
    # The link stays a link; the file it points to gets the profile.
    ln -s target.txt "$work/link.txt"
    run_expecting 0 "profile=true,profiling.destination=$work/link.txt" "${prog[@]}"
    [[ -L "$work/link.txt" ]] || fail "the symbolic link was replaced"
    expect_complete_text "$work/target.txt" sum nomemory ;;
  program_fifo)
    # A named pipe is written in place (a rename would replace it with a regular file).
    mkfifo "$work/pipe"
    cat "$work/pipe" >"$work/from_pipe.txt" &
    reader=$!
    run_expecting 0 "profile=true,profiling.destination=$work/pipe" "${prog[@]}"
    wait "$reader"
    [[ -p "$work/pipe" ]] || fail "the FIFO was replaced"
    expect_complete_text "$work/from_pipe.txt" sum nomemory ;;
  program_char_device)
    # A copy of /dev/null (root only: mknod); it must stay a character device.
    if ! mknod "$work/null" c 1 3 2>/dev/null; then echo "skipped: mknod needs root"; exit 0; fi
    run_expecting 0 "profile=true,profiling.destination=$work/null" "${prog[@]}"
    [[ -c "$work/null" ]] || fail "the character device was replaced by a regular file" ;;
  missing_directory)
    # Checked when the flags are read: the program stops before doing any work.
    run_expecting 2 "profile=true,profiling.destination=$work/no/such/dir/p.txt" "${prog[@]}"
    grep -q "profiling.destination=.*does not exist" "$err" || fail "no clear message" ;;
  destination_is_directory)
    run_expecting 2 "profile=true,profiling.destination=$work" "${prog[@]}"
    grep -q "profiling.destination=.*is a directory" "$err" || fail "no clear message" ;;
  write_fails_at_exit)
    # The directory disappears while the program runs: the exit status says the profile is lost.
    mkdir -p "$work/out"
    run_expecting 3 "profile=true,profiling.destination=$work/out/p.txt" "${prog[@]}" \
      --remove-before-exit "$work/out"
    grep -q "could not write the profile" "$err" || fail "no message about the lost profile" ;;
  cli_trace)
    # The timeline is written at exit with the profile, which names it in its header.
    run_expecting 0 "profile=true,profiling.trace=$work/t.json" "${cli[@]}"
    expect_complete_text "$err" nosum nomemory
    grep -q "Timeline: [0-9]* events written to $work/t.json" "$err" || fail "no Timeline line"
    "$check_trace" "$work/t.json" >"$out" 2>&1 || fail "invalid timeline: $(cat "$out")" ;;
  trace_missing_directory)
    run_expecting 2 "profile=true,profiling.trace=$work/no/such/dir/t.json" "${prog[@]}"
    grep -q "profiling.trace=.*does not exist" "$err" || fail "no clear message" ;;
  *)
    echo "unknown case $case_name"; exit 2 ;;
esac
echo "ok [$case_name]"
