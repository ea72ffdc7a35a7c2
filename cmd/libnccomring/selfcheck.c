/*
 * selfcheck.c - the paths of the objects mapped in the process, for the
 * layout self-check (selfcheck.go, NCCOM_RING_ABI_CHECK). The Go half
 * opens each with debug/elf to find the one whose SONAME is libnccom.so.2:
 * dl_iterate_phdr sees every loaded object, including a libnccom its host
 * loaded with RTLD_LOCAL, which no symbol lookup would reveal.
 */
#include "shim.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>

struct path_list {
  char *buf;
  size_t len, cap;
  int failed;
};

/* Appends one object's path and its NUL. The executable has an empty name
 * (it is no libnccom) and is left out. */
static int add_path(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct path_list *list = data;
  const char *name = info->dlpi_name;
  if (name == NULL || name[0] == '\0') return 0;
  size_t n = strlen(name) + 1;
  if (list->len + n > list->cap) {
    size_t cap = list->cap ? list->cap : 4096;
    while (cap < list->len + n) cap *= 2;
    char *grown = realloc(list->buf, cap);
    if (grown == NULL) {
      list->failed = 1;
      return 1; /* stops the iteration */
    }
    list->buf = grown, list->cap = cap;
  }
  /* memmove, not memcpy: x86_64's memcpy@GLIBC_2.14 would raise the
   * library's glibc floor (README, Platform). */
  memmove(list->buf + list->len, name, n);
  list->len += n;
  return 0;
}

int nccomring_loaded_objects(char **paths, size_t *len) {
  struct path_list list = {NULL, 0, 0, 0};
  dl_iterate_phdr(add_path, &list);
  if (list.failed) {
    free(list.buf);
    return -1;
  }
  *paths = list.buf;
  *len = list.len;
  return 0;
}
