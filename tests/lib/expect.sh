# expect.sh - sourced by the shell tests (tests/c/abi/check.sh,
# tests/dump/ringstage_dump.sh): run a command, then check its exit code and
# output. The caller sets out (a file for the output) and fail=0 first, and
# exits with $fail at the end.

# run DESC CMD...: runs CMD, keeping its stdout and stderr in $out.
run() {
  desc=$1
  shift
  "$@" > "$out" 2>&1
  rc=$?
}
# want_rc N: the last run exited N.
want_rc() {
  if [ "$rc" -ne "$1" ]; then
    echo "FAIL: $desc: exit $rc, want $1"
    sed 's/^/  | /' "$out" | head -40
    fail=1
  fi
}
# want REGEX: the last run's output matches REGEX (grep -E).
want() {
  if ! grep -qE -- "$1" "$out"; then
    echo "FAIL: $desc: output lacks /$1/"
    sed 's/^/  | /' "$out" | head -40
    fail=1
  fi
}
