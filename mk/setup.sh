#!/bin/sh
# setup.sh demo|test - the set-up step of `make demo` and `make test` (and of
# .ci/run): checks every tool and header those targets need and, when one is
# missing, installs it with apt-get where it can (as root, or with sudo that
# needs no password), saying so; otherwise stops at once with the exact
# apt-get line to run. Go itself is not installed here (README: Two
# commands); it is found on PATH or at /usr/local/go/bin.
set -eu
what=${1:-test}

say() { printf 'setup: %s\n' "$*"; }

# Go: on PATH, or where these machines keep it.
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
  say "Go 1.26 or newer is needed and was found neither on PATH nor at /usr/local/go/bin (https://go.dev/dl/); stopping"
  exit 1
fi

# D3 for nccom-rings report's page (issue 37): the pinned npm tarball,
# its sha512 checked (mk/fetch-d3.py). Without it (offline, no python3)
# the tools still build, and the page says it was built without D3.
d3dir="$(dirname "$0")/../cmd/nccom-rings/report/d3"
if command -v python3 >/dev/null 2>&1; then
  python3 "$(dirname "$0")/fetch-d3.py" "$d3dir" ||
    say "D3 not fetched: report pages say \"built without D3\" and make test-report skips its browser check until sh mk/setup.sh fetches it"
else
  say "D3 not fetched (no python3 yet): run sh mk/setup.sh again once it is installed"
fi

need=""
want() { need="$need $1"; }

# Both targets build the library and the C hosts.
command -v gcc >/dev/null 2>&1 || want gcc
command -v g++ >/dev/null 2>&1 || want g++
command -v make >/dev/null 2>&1 || want make
command -v pkg-config >/dev/null 2>&1 || want pkg-config
command -v python3 >/dev/null 2>&1 || want python3
pkg-config --exists libxml-2.0 2>/dev/null || [ -f /usr/include/libxml2/libxml/parser.h ] || want libxml2-dev

if [ "$what" = test ]; then
  command -v cmake >/dev/null 2>&1 || want cmake
  command -v pahole >/dev/null 2>&1 || want dwarves
  # test-mpi: Debian's OpenMPI (mpirun; mpicc and mpi.h come with the -dev).
  command -v mpirun >/dev/null 2>&1 || want openmpi-bin
  command -v mpicc >/dev/null 2>&1 || want libopenmpi-dev
  if command -v clang >/dev/null 2>&1; then
    # libFuzzer and the sanitizer runtimes of exactly this clang.
    major=$(clang -dumpversion | cut -d. -f1)
    dpkg -s "libclang-rt-$major-dev" >/dev/null 2>&1 || want "libclang-rt-$major-dev"
  else
    want clang
    clang_later=1
  fi
fi

# test-report opens nccom-rings report's page in Debian's headless
# chromium; test-simulate needs SimGrid (libsimgrid-dev: nccom-rings
# simulate's engine, smpicc and smpirun). Installed like the rest where
# they can be; where they cannot, the set-up goes on and those steps say
# what they skipped.
optional=""
if [ "$what" = test ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || optional="chromium"
  { pkg-config --exists simgrid 2>/dev/null && command -v smpirun >/dev/null 2>&1; } || optional="$optional libsimgrid-dev"
fi

if [ -z "$need" ] && [ -z "$optional" ]; then
  say "every tool '$what' needs is here"
  exit 0
fi

line="apt-get install -y -q$need"
if [ "$(id -u)" -eq 0 ]; then
  run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run="sudo"
elif [ -z "$need" ]; then
  say "missing and not installable here (not root, no sudo without a password):$optional (make test-report skips its browser check without chromium, test-simulate its checks without libsimgrid-dev); to run them: sudo apt-get install -y$optional"
  exit 0
else
  need="$need $optional"
  line="apt-get install -y -q$need"
  say "missing:$need"
  say "install them, then run make again:"
  say "  sudo apt-get update && sudo $line"
  if [ "${clang_later:-0}" = 1 ]; then
    say "  and then the clang runtime: sudo apt-get install -y -q libclang-rt-\$(clang -dumpversion | cut -d. -f1)-dev"
  fi
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Only optional packages missing: a failed update does not stop the set-up.
$run apt-get update -q >/dev/null || [ -z "$need" ]
if [ -n "$need" ]; then
  say "installing:$need ($line)"
  # shellcheck disable=SC2086
  $run apt-get install -y -q $need
fi
for o in $optional; do
  say "installing: $o (apt-get install -y -q $o)"
  $run apt-get install -y -q "$o" ||
    say "could not install $o: make test-report (chromium) or test-simulate (libsimgrid-dev) will skip what needs it"
done
if [ "${clang_later:-0}" = 1 ]; then
  major=$(clang -dumpversion | cut -d. -f1)
  say "installing: libclang-rt-$major-dev (the runtime of the clang just installed)"
  $run apt-get install -y -q "libclang-rt-$major-dev"
fi
say "done"
