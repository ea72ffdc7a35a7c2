#!/bin/sh
# bench-compare.sh BASE - this tree's library against BASE's (issue 35).
#
# `make bench-compare BASE=REV` runs it once build/libnccomring.so and
# build/bench are built. It resolves BASE to a commit, builds that commit's
# library in a git worktree of its own under build/bench-compare/ (removed
# afterwards; the library is kept as build/bench-compare/SHA/libnccomring.so
# and reused the next time that commit is asked for), then runs
# `build/bench --compare`: each library in a child process of its own (two Go
# runtimes cannot share one process), calls alternated, and for each figure
# the ratio of the medians (new/old) with the median and range of the pairs'
# ratios. The new side is this tree as it is, uncommitted edits included, so
# BASE=HEAD prices an edit before it is committed.
#
# Exit status: 0 the comparison ran, 2 unusable input (BASE names no commit,
# its library did not build, the bench failed). A ratio is a figure, not a
# finding: no ratio changes the exit status.
set -u

usage() {
  echo "usage: sh mk/bench-compare.sh BASE   (make bench-compare BASE=REV, e.g. BASE=HEAD~1)" >&2
  exit 2
}
[ $# -eq 1 ] && [ -n "$1" ] || usage
base=$1

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
sha=$(git rev-parse --verify --quiet "$base^{commit}") || {
  echo "bench-compare: BASE=$base names no commit of this repository" >&2
  exit 2
}
head=$(git rev-parse --verify --quiet HEAD) || head="(no commit)"
cache=build/bench-compare/$sha
old=$cache/libnccomring.so

if [ -f "$old" ]; then
  echo "bench-compare: reusing $old (built before from $sha)"
else
  mkdir -p build/bench-compare || exit 2
  wt=$root/build/bench-compare/worktree-$sha-$$
  # The worktree goes whatever happens; its library stays only once whole.
  trap 'git worktree remove --force "$wt" 2>/dev/null || { rm -rf "$wt"; git worktree prune; }' EXIT
  trap 'exit 2' INT TERM HUP PIPE
  echo "bench-compare: building $base ($sha) in $wt"
  git worktree add --quiet --detach "$wt" "$sha" || exit 2
  # The base's Makefile computes its own flags: none of this make's.
  if ! (unset MAKEFLAGS MFLAGS MAKELEVEL CGO_CFLAGS; make -s -C "$wt" build/libnccomring.so); then
    echo "bench-compare: $base ($sha) did not build its library" >&2
    exit 2
  fi
  mkdir -p "$cache" && cp "$wt/build/libnccomring.so" "$old.tmp$$" && mv "$old.tmp$$" "$old" || exit 2
fi

dirty=""
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=" with uncommitted changes"
echo "bench-compare: new = this tree, HEAD $(git rev-parse --short "$head" 2>/dev/null || echo "$head")$dirty: build/libnccomring.so"
echo "bench-compare: old = $base, $(git rev-parse --short "$sha"): $old"
build/bench --compare --lib build/libnccomring.so --vs "$old" --out build/bench-compare.json || {
  echo "bench-compare: build/bench failed" >&2
  exit 2
}
echo "bench-compare: new/old under 1 is faster; a pairs range straddling 1 is noise on this machine (BENCHMARKS.md); figures in build/bench-compare.json"
