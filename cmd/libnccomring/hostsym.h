/*
 * hostsym.h - finding a definition in the host process (internal).
 *
 * Used by the library's hook lookups (shim.c: D14, D19, P18) and by the
 * logger's look-up of libnccom's ncclDebugFile and of whether a libnccom
 * is loaded (log.c), in the library and in the preload shim alike. It includes neither the logger nor the shim,
 * and keeps no state: every call looks again.
 */
#ifndef NCCOMRING_HOSTSYM_H
#define NCCOMRING_HOSTSYM_H

/* The host's definition of name (cxxName, when not NULL, is the name a C++
 * build gives it): first in the object that holds the code address caller
 * and the objects it depends on, then in the global scope; never one of
 * this object's own (the library's, or the preload shim's). NULL when
 * there is none. */
void *nccomring_host_symbol(void *caller, const char *name, const char *cxxName);

/* Nonzero when a libnccom is mapped in the process: an object whose file
 * name, as the loader has it, has a last component beginning with
 * "libnccom.so" (libnccom.so, libnccom.so.2, libnccom.so.2.31.24). One
 * dl_iterate_phdr over the loaded objects' names: no system call, no file
 * read, no ELF parsing. The logger asks once per process, for its line
 * style (D26). */
int nccomring_libnccom_mapped(void);

#endif
