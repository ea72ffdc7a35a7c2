#!/bin/sh
# tests/install/check.sh ROOT [MAKE] - make test-install (issue 11).
#
# Into an empty temporary folder: make install PREFIX=DIR; a C program built
# with `pkg-config --cflags --libs nccomring` runs; a CMake project using
# find_package(nccomring REQUIRED) builds and runs, also after the installed
# tree is moved; the installed ringstage, nccom-abi and nccom-rings run; a CMake project
# with its own targets `expected` and `conformance` add_subdirectory's ROOT,
# builds, and lists none of our tests; cmake --install installs the same set
# of files as make install; DESTDIR stages under DESTDIR/PREFIX; make
# uninstall removes every file it installed and the package's directory
# (shared directories such as bin and lib stay, as on a real system).
set -eu
root=${1:?usage: check.sh ROOT [MAKE]}
make=${2:-make}
cc=${CC:-cc}
PATH=$PATH:/usr/local/go/bin
export PATH
for tool in pkg-config cmake ctest "$cc"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "test-install: needs $tool (apt-get install -y -q pkg-config cmake gcc)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nccomring-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
mkdir "$prefix"
version=$(sed -n 's/^#define NCCOMRING_VERSION "\([^"]*\)".*/\1/p' "$root/include/nccom_ring.h")
step() { echo "== test-install: $*"; }
fail() { echo "test-install: FAILED: $*"; exit 1; }
listing() { (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort); }
expected_files='bin/nccom-abi
bin/nccom-rings
bin/ringstage
include/nccom_ring.h
lib/cmake/nccomring/nccomringConfig.cmake
lib/cmake/nccomring/nccomringConfigVersion.cmake
lib/libnccomring-preload.so
lib/libnccomring-preload.so.0
lib/libnccomring.so
lib/libnccomring.so.0
lib/pkgconfig/nccomring.pc'

step "make install PREFIX=$prefix"
$make -C "$root" --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; }
got=$(listing "$prefix")
[ "$got" = "$expected_files" ] || { printf 'installed:\n%s\nexpected:\n%s\n' "$got" "$expected_files"; fail "make install put another set of files"; }
[ "$(readlink "$prefix/lib/libnccomring.so")" = libnccomring.so.0 ] || fail "lib/libnccomring.so is not a link to libnccomring.so.0"
readelf -d "$prefix/lib/libnccomring.so.0" | grep -q 'SONAME.*\[libnccomring\.so\.0\]' || fail "no SONAME libnccomring.so.0"

step "pkg-config --cflags --libs nccomring, a C program"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion nccomring)" = "$version" ] || fail "pkg-config --modversion is not $version"
flags=$(pkg-config --cflags --libs nccomring)
echo "   $cc -o pc-consumer consumer.c $flags"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/pc-consumer" "$root/tests/install/consumer.c" $flags
LD_LIBRARY_PATH=$prefix/lib "$tmp/pc-consumer"
unset PKG_CONFIG_PATH

step "the installed tools"
runpath() { readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'; }
[ "$(runpath "$prefix/bin/ringstage")" = '$ORIGIN/../lib' ] || fail "bin/ringstage's RUNPATH is $(runpath "$prefix/bin/ringstage")"
"$prefix/bin/ringstage" --quiet
"$prefix/bin/ringstage" --help > /dev/null
"$prefix/bin/nccom-abi" --help > /dev/null
"$prefix/bin/nccom-rings" --help > /dev/null

step "find_package(nccomring REQUIRED) with CMAKE_PREFIX_PATH=$prefix"
cmake -S "$root/tests/install/find_package" -B "$tmp/fp" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/fp.log" 2>&1 || { cat "$tmp/fp.log"; fail "configure"; }
grep 'nccomring .* from' "$tmp/fp.log" | sed 's/^/   /'
cmake --build "$tmp/fp" > "$tmp/fp-build.log" 2>&1 || { cat "$tmp/fp-build.log"; fail "build"; }
"$tmp/fp/consumer"

step "the installed tree moved: find_package still finds it, ringstage still runs"
mv "$prefix" "$tmp/moved"
cmake -S "$root/tests/install/find_package" -B "$tmp/fp-moved" -DCMAKE_PREFIX_PATH="$tmp/moved" > "$tmp/fp-moved.log" 2>&1 || { cat "$tmp/fp-moved.log"; fail "configure (moved)"; }
cmake --build "$tmp/fp-moved" > "$tmp/fp-moved-build.log" 2>&1 || { cat "$tmp/fp-moved-build.log"; fail "build (moved)"; }
"$tmp/fp-moved/consumer"
"$tmp/moved/bin/ringstage" --quiet
mv "$tmp/moved" "$prefix"

step "add_subdirectory($root) beside targets named expected and conformance"
cmake -S "$root/tests/install/subdir" -B "$tmp/sub" -DNCCOMRING_SOURCE_DIR="$root" > "$tmp/sub.log" 2>&1 || { cat "$tmp/sub.log"; fail "configure"; }
cmake --build "$tmp/sub" > "$tmp/sub-build.log" 2>&1 || { cat "$tmp/sub-build.log"; fail "build"; }
ctest --test-dir "$tmp/sub" -N > "$tmp/sub-ctest.log" 2>&1 || { cat "$tmp/sub-ctest.log"; fail "ctest -N"; }
grep -q 'Total Tests: 1$' "$tmp/sub-ctest.log" || { cat "$tmp/sub-ctest.log"; fail "ctest -N lists tests of libnccomring"; }
echo "   ctest -N: $(grep 'Test *#' "$tmp/sub-ctest.log" | sed 's/^ *//')"
# Neither a C++ compiler nor libxml2 was looked for, and every target of
# ours is prefixed nccomring_ (the consumer's are consumer, expected, conformance).
! grep -q '^CMAKE_CXX_COMPILER:' "$tmp/sub/CMakeCache.txt" || fail "add_subdirectory enabled C++"
! grep -q '^LIBXML2_' "$tmp/sub/CMakeCache.txt" || fail "add_subdirectory looked for libxml2"
cmake --build "$tmp/sub" --target help > "$tmp/sub-targets.log"
ours=$(sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' "$tmp/sub-targets.log" | grep -v -x -e all -e clean -e depend -e edit_cache -e rebuild_cache -e test -e install -e list_install_components -e expected -e conformance -e 'install/.*' | grep -v -e '^nccomring_' -e / || true)
[ -z "$ours" ] || fail "unprefixed targets from add_subdirectory: $ours"
ctest --test-dir "$tmp/sub" --output-on-failure > "$tmp/sub-test.log" 2>&1 || { cat "$tmp/sub-test.log"; fail "the consumer's test"; }

step "cmake --install installs the same set of files"
cmake -S "$root" -B "$tmp/top" -DCMAKE_BUILD_TYPE=Release -DNCCOMRING_BUILD_TESTS=OFF > "$tmp/top.log" 2>&1 || { cat "$tmp/top.log"; fail "configure"; }
cmake --build "$tmp/top" > "$tmp/top-build.log" 2>&1 || { cat "$tmp/top-build.log"; fail "build"; }
cmake --install "$tmp/top" --prefix "$tmp/cmake-prefix" > "$tmp/top-install.log" 2>&1 || { cat "$tmp/top-install.log"; fail "cmake --install"; }
got=$(listing "$tmp/cmake-prefix")
[ "$got" = "$expected_files" ] || { printf 'cmake --install put:\n%s\nexpected:\n%s\n' "$got" "$expected_files"; fail "cmake --install put another set of files"; }
[ "$(runpath "$tmp/cmake-prefix/bin/ringstage")" = '$ORIGIN/../lib' ] || fail "cmake --install's bin/ringstage has RUNPATH $(runpath "$tmp/cmake-prefix/bin/ringstage")"
"$tmp/cmake-prefix/bin/ringstage" --quiet
PKG_CONFIG_PATH=$tmp/cmake-prefix/lib/pkgconfig pkg-config --cflags --libs nccomring > "$tmp/cmake-pc"
grep -q -- "-I$tmp/cmake-prefix/include" "$tmp/cmake-pc" || { cat "$tmp/cmake-pc"; fail "the .pc cmake --install wrote"; }

step "DESTDIR=$tmp/stage PREFIX=/opt/nccomring"
$make -C "$root" --no-print-directory install DESTDIR="$tmp/stage" PREFIX=/opt/nccomring > "$tmp/stage.log" 2>&1 || { cat "$tmp/stage.log"; fail "make install DESTDIR"; }
got=$(listing "$tmp/stage/opt/nccomring")
[ "$got" = "$expected_files" ] || fail "DESTDIR install put another set of files"
grep -q '^prefix=/opt/nccomring$' "$tmp/stage/opt/nccomring/lib/pkgconfig/nccomring.pc" || fail "the .pc file does not name PREFIX"
$make -C "$root" --no-print-directory uninstall DESTDIR="$tmp/stage" PREFIX=/opt/nccomring > /dev/null
left=$(cd "$tmp/stage/opt/nccomring" && find . -mindepth 1 ! -type d)
[ -z "$left" ] || fail "make uninstall DESTDIR left: $left"
[ ! -d "$tmp/stage/opt/nccomring/lib/cmake/nccomring" ] || fail "make uninstall DESTDIR left the package directory"

step "make uninstall PREFIX=$prefix"
$make -C "$root" --no-print-directory uninstall PREFIX="$prefix" > "$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(cd "$prefix" && find . -mindepth 1 ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -d "$prefix/lib/cmake/nccomring" ] || fail "make uninstall left the package directory"
echo "test-install: make install, pkg-config, find_package (also moved), add_subdirectory (no tests of ours), cmake --install (same set), DESTDIR, make uninstall: passed"
