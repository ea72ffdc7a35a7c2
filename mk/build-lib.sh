#!/bin/sh
# build-lib.sh OUTDIR - builds OUTDIR/libnccomring.so (and its SONAME link),
# the one place the library's build flags live (Makefile and CMakeLists.txt
# both call it).
#
# -buildmode=c-shared with a linker version script (only the ring-stage
# symbols are exported) and a SONAME. The public header lives outside the Go
# package, where Go's build cache does not see it change; its hash goes into
# CGO_CFLAGS (part of the cache key) so an edited header is always recompiled
# and its _Static_asserts always run. The glibc floor's link flags (--wrap
# and NEEDED libpthread.so.0/libdl.so.2, issue 9) are #cgo lines in
# cmd/libnccomring/glibc_compat.go, so every build of the package has them.
set -eu
out=${1:?usage: build-lib.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
case $out in /*) ;; *) out=$root/$out ;; esac
# The SONAME's major comes from the header, the one source of the version.
major=$(sed -n 's/^#define NCCOMRING_VERSION_MAJOR \([0-9][0-9]*\).*/\1/p' include/nccom_ring.h)
soname=libnccomring.so.${major:?include/nccom_ring.h defines no NCCOMRING_VERSION_MAJOR}
hash=$(cat include/nccom_ring.h | sha256sum | cut -c1-16)
# -buildvcs=false: the library is the same whoever owns the checkout (Go
# would stamp the revision, or refuse to build in a checkout another user
# owns). -ffile-prefix-map and -trimpath keep the checkout's path out of the
# library, and its build ID is a hash of its contents (an empty Go build ID,
# the linker's --build-id=sha1) rather than of the flags, which name the
# checkout: two builds from different directories are identical.
CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DNCCOMRING_HEADER_SHA256_PREFIX=$hash -ffile-prefix-map=$root=."
export CGO_CFLAGS
"${GO:-go}" build -buildmode=c-shared -trimpath -buildvcs=false \
  -ldflags "-buildid= -extldflags '-Wl,--build-id=sha1 -Wl,--version-script=$root/cmd/libnccomring/exports.map -Wl,-soname,$soname'" \
  -o "$out/libnccomring.so" ./cmd/libnccomring
rm -f "$out/libnccomring.h"
ln -sf libnccomring.so "$out/$soname"
