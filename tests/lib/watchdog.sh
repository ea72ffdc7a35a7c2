# watchdog.sh - sourced by the shell tests that run commands under
# build/watchdog (tests/watchdog, docs/testing.md "Limits"): make passes its
# absolute path as WATCHDOG. Without it the test stops at once, saying so:
# run bare, a command that hangs would wait forever instead of failing.

if [ -z "${WATCHDOG:-}" ] || [ ! -x "$WATCHDOG" ]; then
  echo "$0: WATCHDOG must name build/watchdog, the limits the commands here run under" \
    "(make passes WATCHDOG=\$(CURDIR)/build/watchdog; make build/watchdog builds it); it is '${WATCHDOG:-}'" >&2
  exit 2
fi

# cmdname CMD...: the program CMD runs, past env and its -i, -u NAME and
# NAME=VALUE: what the watchdog's lines call it.
cmdname() {
  while [ $# -gt 1 ]; do
    case $1 in
      env | -i | *=*) shift ;;
      -u) shift 2 ;;
      *) break ;;
    esac
  done
  echo "${1##*/}"
}

# watched FLAG... -- CMD...: CMD under the watchdog with the limits FLAG...
# (--cpu, --blocked, --wall); its status, 124 when a limit ended it (the
# watchdog's lines on stderr then say which, and where each thread waited).
# The watchdog goes first: env and LD_PRELOAD= reach CMD only (preloaded
# into the watchdog, a Go program, libnccomring would start a second Go
# runtime there).
watched() {
  flags=
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    flags="$flags $1"
    shift
  done
  shift
  # shellcheck disable=SC2086 # flags: words without spaces
  "$WATCHDOG" run --name "$(cmdname "$@")" $flags -- "$@"
}
