/* hostsym.c - the host symbol lookup of hostsym.h (P18). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr, RTLD_DEFAULT, RTLD_NOLOAD */
#endif
#include "hostsym.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

/* True when addr lies inside the object this file is linked into: its own
 * definitions never count as the host's (D19). */
static int is_own_symbol(void *addr) {
  Dl_info mine, theirs;
  if (!dladdr((void *)&nccomring_host_symbol, &mine) || !dladdr(addr, &theirs)) return 0;
  return mine.dli_fbase == theirs.dli_fbase;
}

static void *symbol_in(void *handle, const char *name, const char *cxxName) {
  void *p = dlsym(handle, name);
  if (p && !is_own_symbol(p)) return p;
  if (cxxName == NULL) return NULL;
  p = dlsym(handle, cxxName);
  return p && !is_own_symbol(p) ? p : NULL;
}

/* dl_iterate_phdr's callback for in_main_program: the first object it is
 * given is the main program; stop there. */
static int main_program_contains(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  const ElfW(Addr) addr = (ElfW(Addr))*(void **)data;
  *(void **)data = NULL;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    const ElfW(Addr) start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && addr >= start && addr - start < ph->p_memsz) {
      *(void **)data = (void *)1;
      break;
    }
  }
  return 1;
}

/* True when addr lies in the main program. Its lookups are the global
 * scope's (the main program and everything it was linked with), and
 * dlopen by its name would not find it among the loaded objects (the
 * loader names it "", dladdr by argv[0]): glibc then opens and reads the
 * file to compare it, four system calls on every call of a host that calls
 * the exports from its executable. */
static int in_main_program(void *addr) {
  void *data = addr;
  dl_iterate_phdr(main_program_contains, &data);
  return data != NULL;
}

/*
 * First in the object that called (found from a code address in it) and
 * the objects it depends on, which is where a libnccom loaded with
 * RTLD_LOCAL keeps its definitions, invisible to a global lookup; then in
 * the global scope. Each by its C name, then by the name a C++ build
 * without extern "C" gives it (upstream NCCL declares its functions in
 * C++). Nothing is cached: every call looks again, so a library loaded
 * after the first call is found and a miss is never remembered. A caller
 * in the main program has no scope of its own but the global one, which is
 * searched straight away. A lookup makes no system call and costs a few
 * microseconds.
 */
void *nccomring_host_symbol(void *caller, const char *name, const char *cxxName) {
  Dl_info info;
  if (caller && !in_main_program(caller) && dladdr(caller, &info) && info.dli_fname &&
      info.dli_fname[0] && !is_own_symbol(caller)) {
    /* RTLD_NOLOAD: a handle to the already-loaded caller, never a load. */
    void *handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (handle) {
      void *p = symbol_in(handle, name, cxxName);
      dlclose(handle);
      if (p) return p;
    }
  }
  return symbol_in(RTLD_DEFAULT, name, cxxName);
}

/* dl_iterate_phdr's callback for nccomring_libnccom_mapped. The name is
 * the path the loader opened: for a DT_NEEDED entry or a dlopen by name,
 * the SONAME searched for; a link named libnccom.so keeps its own name.
 * The file's name, not its DT_SONAME read from memory (selfcheck.c does
 * that, for the layout check): the logger is compiled into the preload
 * shim too, and a name is all the line style needs. */
static int is_libnccom(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *name = info->dlpi_name;
  if (name == NULL) return 0;
  const char *slash = strrchr(name, '/');
  const char *base = slash ? slash + 1 : name;
  return strncmp(base, "libnccom.so", strlen("libnccom.so")) == 0; /* nonzero stops the walk */
}

int nccomring_libnccom_mapped(void) { return dl_iterate_phdr(is_libnccom, NULL) != 0; }
