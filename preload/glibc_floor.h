/*
 * glibc_floor.h - the preload shim's glibc floor (docs/building.md, "Platform"; make test-glibc),
 * included by its build into each of its files (-include): the
 * libnccomring.so files it compiles (log.c, env.c, hostsym.c) as well as
 * nccomring_preload.c.
 *
 * glibc 2.34 moved the dl* and pthread functions into libc under a new
 * default version, GLIBC_2.34; a plain link binds to it and glibc < 2.34
 * could not load the shim. Every x86_64 glibc keeps them under their first
 * version, GLIBC_2.2.5 (in libdl.so.2 and libpthread.so.0 before 2.34, libc
 * after): bind to that one. The link records libdl.so.2 and
 * libpthread.so.0 as NEEDED (stubs on 2.34+) so that an older glibc finds
 * them there. (The Go library does the same with --wrap instead,
 * cmd/libnccomring/glibc_compat.c: its runtime's objects cannot take a
 * header.)
 */
#ifndef NCCOMRING_PRELOAD_GLIBC_FLOOR_H
#define NCCOMRING_PRELOAD_GLIBC_FLOOR_H

/* __GLIBC__ comes from <features.h>, which reads the feature macros once:
 * the build defines _GNU_SOURCE on its command line, ahead of this file. */
#include <features.h>

#if defined(__GLIBC__) && defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
#endif

#endif
