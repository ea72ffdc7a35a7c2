/*
 * selfcheck.c - the objects mapped in the process, for the layout
 * self-check and the layout profile's build ID (selfcheck.go,
 * commlayout.go; NCCOM_RING_ABI_CHECK, NCCOM_RING_LAYOUT).
 *
 * dl_iterate_phdr sees every loaded object, including a libnccom its host
 * loaded with RTLD_LOCAL, which no symbol lookup would reveal. For each it
 * reports, besides its path, what the object as mapped says of itself: its
 * DT_SONAME and its GNU build ID (NT_GNU_BUILD_ID), read from the loaded
 * segments' memory, and the address of a segment mapped from its file. The
 * file at the path may have been replaced since it was loaded; the Go half
 * reads the file only when its build ID is the mapped one and it is the
 * file mapped at that address (device and inode, /proc/self/maps).
 *
 * Memory is read only inside a PT_LOAD segment of the same object that is
 * readable (PF_R), so a malformed program header cannot make this read an
 * unmapped page; every length comes from the object and is checked
 * against the segment it lies in.
 */
#include "shim.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct object_list {
  struct nccomring_object *objs;
  size_t len, cap;
  int failed;
};

/* The end of the readable PT_LOAD segment of info holding [addr, addr+len),
 * or 0 when no such segment holds all of it. */
static uintptr_t readable_end(const struct dl_phdr_info *info, uintptr_t addr, size_t len) {
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R)) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    uintptr_t end = start + (uintptr_t)ph->p_memsz;
    if (end < start) continue;
    if (addr >= start && addr <= end && len <= end - addr) return end;
  }
  return 0;
}

/* The GNU build ID among the object's PT_NOTE segments. */
static void find_build_id(const struct dl_phdr_info *info, struct nccomring_object *obj) {
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    uintptr_t p = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    size_t left = (size_t)ph->p_memsz;
    if (readable_end(info, p, left) == 0) continue;
    uint64_t align = ph->p_align == 8 ? 8 : 4;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) nh;
      memmove(&nh, (const void *)p, sizeof nh);
      uint64_t name = (nh.n_namesz + align - 1) & ~(align - 1);
      uint64_t desc = (nh.n_descsz + align - 1) & ~(align - 1);
      uint64_t need = sizeof nh + name + desc;
      if (need > left) break;
      const char *n = (const char *)(p + sizeof nh);
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(n, "GNU", 4) == 0 && nh.n_descsz > 0 &&
          nh.n_descsz <= sizeof obj->build_id) {
        memmove(obj->build_id, n + name, nh.n_descsz);
        obj->build_id_len = nh.n_descsz;
        return;
      }
      p += (uintptr_t)need;
      left -= (size_t)need;
    }
  }
}

/* The start of the object's first PT_LOAD segment that maps part of its
 * file (p_filesz > 0): the line of /proc/self/maps holding that address
 * names the device and inode of the file the loader mapped, which the Go
 * half compares with the file it opens at the object's path. */
static void find_map_addr(const struct dl_phdr_info *info, struct nccomring_object *obj) {
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || ph->p_filesz == 0) continue;
    obj->map_addr = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    return;
  }
}

/* The DT_SONAME of the object as mapped. The dynamic section's DT_STRTAB is
 * an address glibc has relocated where the section is writable, and the
 * link-time value where it is not (the vDSO, read-only PT_DYNAMIC): the one
 * that lies in a readable segment of the object is taken. */
static void find_soname(const struct dl_phdr_info *info, struct nccomring_object *obj) {
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_DYNAMIC) continue;
    uintptr_t dyn = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    size_t n = (size_t)ph->p_memsz / sizeof(ElfW(Dyn));
    if (readable_end(info, dyn, n * sizeof(ElfW(Dyn))) == 0) return;
    uintptr_t strtab = 0, soname = 0, strsz = 0;
    int has_soname = 0, has_strtab = 0, has_strsz = 0;
    for (size_t k = 0; k < n; k++) {
      ElfW(Dyn) d;
      memmove(&d, (const void *)(dyn + k * sizeof d), sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_SONAME) soname = (uintptr_t)d.d_un.d_val, has_soname = 1;
      if (d.d_tag == DT_STRTAB) strtab = (uintptr_t)d.d_un.d_ptr, has_strtab = 1;
      if (d.d_tag == DT_STRSZ) strsz = (uintptr_t)d.d_un.d_val, has_strsz = 1;
    }
    if (!has_soname) {
      obj->soname_known = 1; /* it has none */
      return;
    }
    if (!has_strtab || !has_strsz || soname >= strsz) return;
    if (readable_end(info, strtab, strsz) == 0) {
      strtab += (uintptr_t)info->dlpi_addr;
      if (readable_end(info, strtab, strsz) == 0) return;
    }
    size_t max = strsz - soname;
    if (max > sizeof obj->soname) max = sizeof obj->soname;
    const char *s = (const char *)(strtab + soname);
    const char *nul = memchr(s, '\0', max);
    if (nul == NULL) return;
    memmove(obj->soname, s, (size_t)(nul - s) + 1);
    obj->soname_known = 1;
    return;
  }
  obj->soname_known = 1; /* no dynamic section: no SONAME */
}

/* Appends one object. The executable has an empty name (it is no libnccom)
 * and is left out. */
static int add_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct object_list *list = data;
  const char *name = info->dlpi_name;
  if (name == NULL || name[0] == '\0') return 0;
  if (list->len == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 32;
    struct nccomring_object *grown = realloc(list->objs, cap * sizeof *grown);
    if (grown == NULL) {
      list->failed = 1;
      return 1; /* stops the iteration */
    }
    list->objs = grown, list->cap = cap;
  }
  struct nccomring_object *obj = &list->objs[list->len];
  memset(obj, 0, sizeof *obj);
  size_t n = strlen(name) + 1;
  obj->path = malloc(n);
  if (obj->path == NULL) {
    list->failed = 1;
    return 1;
  }
  /* memmove, not memcpy: x86_64's memcpy@GLIBC_2.14 would raise the
   * library's glibc floor (docs/building.md, "Platform"). */
  memmove(obj->path, name, n);
  list->len++;
  find_soname(info, obj);
  find_build_id(info, obj);
  find_map_addr(info, obj);
  return 0;
}

void nccomring_free_objects(struct nccomring_object *objs, size_t n) {
  for (size_t i = 0; i < n; i++) free(objs[i].path);
  free(objs);
}

int nccomring_loaded_objects(struct nccomring_object **objs, size_t *n) {
  struct object_list list = {NULL, 0, 0, 0};
  dl_iterate_phdr(add_object, &list);
  if (list.failed) {
    nccomring_free_objects(list.objs, list.len);
    return -1;
  }
  *objs = list.objs;
  *n = list.len;
  return 0;
}
