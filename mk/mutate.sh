#!/bin/sh
# mutate.sh BUILD PKG... - `make mutate` (issue 20; docs/mutation.md):
# mutation testing of each package with gremlins.
#
# gremlins is installed at GREMLINS_VERSION into BUILD/tools through the Go
# module proxy unless that version is there already. Each package is mutated
# on its own, from its directory, with every mutator gremlins has but
# INVERT_NEGATIVES, which in v0.6.0 makes of every '-' the very mutant
# ARITHMETIC_BASE makes (both turn it into '+'), so it would count each one
# twice. The tests run with -short (GOFLAGS; docs/mutation.md says what it
# leaves out) and -count=1, MUTATE_WORKERS at once. gremlins stops a mutant's
# tests after MUTATE_TIMEOUT_COEFFICIENT times the duration of its coverage
# run; the package's tests are run once first, so that this run finds the
# build cached (else its duration, and so the timeout, depends on what the
# cache held) and a failing test stops here rather than in gremlins.
#
# BUILD/mutate-PKG.txt is gremlins' report (every mutant with its status),
# BUILD/mutate-PKG.json its JSON. Printed: the mutants that LIVED or TIMED
# OUT, then one line per package with its test efficacy (killed / (killed +
# lived)) and mutator coverage ((killed + lived) / (killed + lived + not
# covered)), as gremlins defines them. Exit 1 when a package is under
# MUTATE_EFFICACY or MUTATE_COVERAGE percent, or when gremlins failed.
set -u
build=${1:?usage: mutate.sh BUILD PKG...}
shift
[ $# -gt 0 ] || { echo "usage: mutate.sh BUILD PKG..." >&2; exit 2; }
go=${GO:-go}
version=${GREMLINS_VERSION:-v0.6.0}
workers=${MUTATE_WORKERS:-2}
coefficient=${MUTATE_TIMEOUT_COEFFICIENT:-20}
min_efficacy=${MUTATE_EFFICACY:-90}
min_coverage=${MUTATE_COVERAGE:-85}
flags='-short -count=1'

mkdir -p "$build/tools"
build=$(cd "$build" && pwd)
tools=$build/tools
gremlins=$tools/gremlins
# The version a binary was built from is in its build information.
if ! "$go" version -m "$gremlins" 2>/dev/null | grep -q "^[[:space:]]*mod[[:space:]]*github.com/go-gremlins/gremlins[[:space:]]*$version[[:space:]]"; then
  echo "mutate: GOBIN=$tools $go install github.com/go-gremlins/gremlins/cmd/gremlins@$version"
  GOBIN=$tools "$go" install "github.com/go-gremlins/gremlins/cmd/gremlins@$version" || exit 1
fi

status=0
summary=
for pkg in "$@"; do
  txt=$build/mutate-$pkg.txt json=$build/mutate-$pkg.json
  rm -f "$txt" "$json"
  t0=$(date +%s)
  if ! GOFLAGS=$flags "$go" test -cover "./$pkg" > "$txt" 2>&1; then
    cat "$txt"
    summary="${summary}mutate $pkg: FAILED: its tests fail without a mutant (go test $flags -cover ./$pkg)
"
    status=1
    continue
  fi
  echo "mutate: $pkg: gremlins unleash, $workers workers, timeout coefficient $coefficient (report: $txt)"
  rc=0
  (cd "$pkg" && GOFLAGS=$flags "$gremlins" unleash \
    --arithmetic-base --conditionals-boundary --conditionals-negation --increment-decrement --invert-negatives=false \
    --invert-assignments --invert-bitwise --invert-bwassign --invert-logical --invert-loopctrl --remove-self-assignments \
    --workers "$workers" --timeout-coefficient "$coefficient" --output "$json") > "$txt" 2>&1 || rc=$?
  t=$(( $(date +%s) - t0 ))
  # The mutants that survived, as gremlins prints them ("LIVED
  # CONDITIONALS_BOUNDARY at walk.go:48:16").
  sed -n 's/^ *\(LIVED\|TIMED OUT\) \(.*\)/  '"$pkg"': \1 \2/p' "$txt"
  line=$(awk -v pkg="$pkg" -v rc="$rc" -v t="$t" -v me="$min_efficacy" -v mc="$min_coverage" '
    /^Killed: [0-9]+, Lived: [0-9]+, Not covered: [0-9]+$/ { gsub(/,/, ""); k = $2; l = $4; nc = $7; seen++ }
    /^Timed out: [0-9]+, Not viable: [0-9]+, Skipped: [0-9]+$/ { gsub(/,/, ""); to = $3; nv = $6; seen++ }
    END {
      time = sprintf("%dm%02ds", t / 60, t % 60)
      if (seen != 2 || k + l == 0) { printf "mutate %s: FAILED: gremlins (exit %d) gave no figures [%s]\n", pkg, rc, time; exit 1 }
      e = 100 * k / (k + l); c = 100 * (k + l) / (k + l + nc)
      ok = e >= me && c >= mc && rc == 0
      printf "mutate %s: %s: test efficacy %.2f%% (min %d), mutator coverage %.2f%% (min %d): killed %d, lived %d, timed out %d, not covered %d, not viable %d [%s]\n",
        pkg, ok ? "ok" : "FAILED", e, me, c, mc, k, l, to, nc, nv, time
      exit !ok
    }' "$txt") || status=1
  summary="$summary$line
"
done
printf '%s' "$summary"
exit "$status"
