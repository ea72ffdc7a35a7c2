#!/bin/sh
# glibc-floor.sh FLOOR LIB... [--if-exists LIB...] - the glibc floor of each
# shipped library (issue 9; docs/building.md, "Platform").
#
# For each library it prints the newest GLIBC_ symbol version the library
# needs (its .gnu.version_r, which lists every versioned reference) and its
# NEEDED list, and fails when
#   - a needed GLIBC_ version is newer than FLOOR (or is GLIBC_PRIVATE);
#   - a reference is bound to an older, non-default version of a libc
#     function (how cmd/libnccomring/glibc_compat.c keeps the floor down) but
#     the library does not record NEEDED for the library that function lived
#     in before glibc 2.34 (libdl.so.2 for dl*, libpthread.so.0 for the
#     threads API): an old glibc would not find it. This part needs the
#     build machine's libc to be 2.34 or newer; on an older one no reference
#     is compat-bound and it checks nothing.
# Libraries after --if-exists are checked only when they have been built.
set -eu
floor=${1:?usage: glibc-floor.sh FLOOR LIB... [--if-exists LIB...]}
shift
libc=$(${CC:-cc} -print-file-name=libc.so.6 2>/dev/null || true)
[ -f "$libc" ] || libc=$(ldd /bin/sh | awk '$1 == "libc.so.6" { print $3 }')

# newer A B: A is a strictly newer version than B (both like 2.3.2).
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n1)" = "$1" ]; }

status=0
optional=0
checked=0
for lib in "$@"; do
  if [ "$lib" = --if-exists ]; then optional=1; continue; fi
  if [ ! -f "$lib" ]; then
    if [ "$optional" = 1 ]; then echo "glibc floor $floor: $lib: not built, skipped"; continue; fi
    echo "glibc floor $floor: $lib: missing" >&2; status=1; continue
  fi
  checked=$((checked + 1))
  versions=$(readelf -V -W "$lib" | sed -n 's/.*Name: GLIBC_\([0-9.]*\|PRIVATE\) .*/\1/p' | sort -uV)
  needed=$(readelf -d -W "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//')
  top=$(printf '%s\n' "$versions" | grep -v PRIVATE | tail -n1)
  verdict=ok
  for v in $versions; do
    if [ "$v" = PRIVATE ] || newer "$v" "$floor"; then
      verdict=FAIL
      syms=$(readelf -W --dyn-syms "$lib" | awk -v v="GLIBC_$v" '$7 == "UND" { split($8, a, "@"); if (a[2] == v) printf " %s", a[1] }')
      echo "glibc floor $floor: $lib needs GLIBC_$v for:$syms"
    fi
  done
  # References bound to a non-default (pre-2.34) version of a libc function.
  if [ -f "$libc" ]; then
    compat=$(readelf -W --dyn-syms "$lib" | awk '$7 == "UND" && $8 ~ /@GLIBC_/ { sub(/ .*/, "", $8); print $8 }' | sort -u |
      awk -v libc="$libc" '
        BEGIN { while (("readelf -W --dyn-syms " libc) | getline) if ($7 != "UND" && $8 ~ /@@GLIBC_/) { split($8, a, "@@"); def[a[1]] = a[2] } }
        { split($0, r, "@"); if ((r[1] in def) && def[r[1]] != r[2]) print r[1] }')
    for s in $compat; do
      case $s in
        dl*) home=libdl.so.2 ;;
        pthread_* | sem_* | cnd_* | mtx_* | thrd_* | tss_* | call_once) home=libpthread.so.0 ;;
        *) home= ;;
      esac
      if [ -n "$home" ]; then
        case " $needed " in *" $home "*) continue ;; esac
      fi
      verdict=FAIL
      echo "glibc floor $floor: $lib binds $s to an old version but does not record NEEDED ${home:-(its pre-2.34 library)}"
    done
  fi
  echo "glibc floor $floor: $lib needs GLIBC_${top:-none} at most (NEEDED: $needed): $verdict"
  [ "$verdict" = ok ] || status=1
done
[ "$checked" -gt 0 ] || { echo "glibc floor $floor: no library checked" >&2; status=1; }
exit "$status"
