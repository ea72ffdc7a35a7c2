#!/bin/sh
# check_names.sh - the C++ linkage names of libnccomring (issue #3, C++ hosts).
#
#   check_names.sh LIBNCCOMRING CXX_HOST_OBJECT_OR_EXECUTABLE
#
# 1. The C++ host object (compiled with -DNCCOM_RING_CXX_LINKAGE) references
#    exactly four ring-stage names, all mangled, and none of the C names
#    (nm -u; on an executable, its undefined dynamic symbols).
# 2. c++filt turns them into exactly the four documented signatures.
# 3. The library exports exactly these four mangled names, each at the
#    address of its C entry point (an alias), besides the four C names.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 LIBNCCOMRING CXX_HOST_OBJECT" >&2
  exit 2
fi
LIB=$1
OBJ=$2
fail() { echo "check_names.sh: FAIL: $*" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/documented" <<'DOC'
ncclBuildRings(int, int*, int, int, int*, int*)
ncclTopoGetNetDev(ncclTopoSystem*, int, ncclTopoGraph*, int, int*)
ncclTopoPostset(ncclComm*, int*, ncclTopoRanks**, int*, int*)
ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)
DOC

# 1. What the C++ host references.
case $OBJ in
  *.o | *.obj) nm -u "$OBJ" ;;
  *) nm -D --undefined-only "$OBJ" ;;
esac | awk '{print $NF}' | sed 's/@.*//' | grep -E 'nccl(TopoPreset|TopoPostset|BuildRings|TopoGetNetDev)' |
  sort -u > "$TMP/referenced" || true
[ "$(wc -l < "$TMP/referenced")" -eq 4 ] || { cat "$TMP/referenced"; fail "$OBJ does not reference exactly 4 ring-stage names"; }
if grep -Ev '^_Z' "$TMP/referenced"; then fail "$OBJ references C names: NCCOM_RING_CXX_LINKAGE had no effect"; fi
echo "nm -u $OBJ: the C++ host references"
sed 's/^/  /' "$TMP/referenced"

# 2. c++filt gives back the documented signatures.
echo "c++filt:"
while read -r name; do
  printf '  %s -> %s\n' "$name" "$(echo "$name" | c++filt)"
done < "$TMP/referenced"
c++filt < "$TMP/referenced" | sort > "$TMP/demangled"
cmp -s "$TMP/demangled" "$TMP/documented" || {
  diff "$TMP/demangled" "$TMP/documented"
  fail "the mangled names do not demangle to the documented signatures"
}
echo "ok: they demangle to exactly the four documented signatures"

# 3. The library exports exactly these, as aliases of the C entry points.
nm -D --defined-only "$LIB" > "$TMP/dynsym"
awk '$3 ~ /^_Z/ {print $3}' "$TMP/dynsym" | sort > "$TMP/exported"
cmp -s "$TMP/exported" "$TMP/referenced" || {
  diff "$TMP/exported" "$TMP/referenced"
  fail "$LIB's exported C++ names differ from what the C++ host references"
}
while read -r name; do
  c=$(echo "$name" | c++filt | sed 's/(.*//')
  a=$(awk -v n="$name" '$3 == n {print $1}' "$TMP/dynsym")
  b=$(awk -v n="$c" '$3 == n {print $1}' "$TMP/dynsym")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$name (0x$a) is not an alias of $c (0x$b)"
  echo "  $LIB: $name = $c at 0x$a"
done < "$TMP/referenced"
echo "check_names.sh: the C++ linkage names are exported and demangle to the documented signatures"
