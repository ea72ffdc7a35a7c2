/* glibc_compat.c - the glibc floor (issue 9).
 *
 * glibc 2.34 merged libpthread and libdl into libc and gave the moved
 * functions new default versions (dlsym@@GLIBC_2.34, pthread_create@@GLIBC_2.34,
 * pthread_getattr_np@@GLIBC_2.32, ...). A library linked on such a glibc
 * binds to those versions and cannot be loaded by an older one. Every
 * x86_64 glibc still carries each of these functions under its original
 * version, GLIBC_2.2.5: on 2.34+ the same code at the same address, on
 * older releases the only version (in libpthread.so.0 or libdl.so.2).
 *
 * The references come from this package's C files and from Go's
 * runtime/cgo objects, which cannot be edited. The link (glibc_compat.go)
 * passes -Wl,--wrap=SYM for each SYM below: the linker then resolves every
 * undefined reference to SYM, in any object of the link, to __wrap_SYM,
 * defined here; __wrap_SYM calls nccomring_glibc_SYM, which .symver binds
 * to SYM@GLIBC_2.2.5. The same link adds NEEDED libpthread.so.0 and
 * libdl.so.2 (stubs on 2.34+) so that an older glibc finds these symbols
 * where it keeps them: the dynamic linker looks a versioned symbol up in
 * every object of the scope, not only in the file the version was recorded
 * against (libc.so.6). The wrappers are hidden and exports.map keeps
 * everything but the API local, so nothing here is exported.
 *
 * dlopen, dlsym and dladdr behave as before: libc derives the caller's
 * object from the return address, which is still inside this library.
 *
 * A new call to a libc function whose default version is newer than the
 * floor needs a COMPAT line here and a --wrap in glibc_compat.go;
 * mk/glibc-floor.sh (make test-glibc) fails until both are there.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#if defined(__linux__) && defined(__x86_64__)

#if defined(__GLIBC__)
#define COMPAT(ret, name, params, args)                               \
  ret nccomring_glibc_##name params;                                  \
  __asm__(".symver nccomring_glibc_" #name "," #name "@GLIBC_2.2.5"); \
  __attribute__((visibility("hidden"))) ret __wrap_##name params;     \
  ret __wrap_##name params { return nccomring_glibc_##name args; }
#else /* another libc: the wrappers only forward (--wrap's __real_SYM) */
#define COMPAT(ret, name, params, args)                           \
  ret __real_##name params;                                       \
  __attribute__((visibility("hidden"))) ret __wrap_##name params; \
  ret __wrap_##name params { return __real_##name args; }
#endif

/* libdl until 2.34 */
COMPAT(void *, dlopen, (const char *file, int mode), (file, mode))
COMPAT(int, dlclose, (void *handle), (handle))
COMPAT(void *, dlsym, (void *handle, const char *name), (handle, name))
COMPAT(int, dladdr, (const void *addr, Dl_info *info), (addr, info))
COMPAT(char *, dlerror, (void), ())

/* libpthread until 2.34 (2.32 for the last two) */
COMPAT(int, pthread_create,
       (pthread_t * thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg),
       (thread, attr, start, arg))
COMPAT(int, pthread_once, (pthread_once_t * once, void (*init)(void)), (once, init))
COMPAT(int, pthread_key_create, (pthread_key_t * key, void (*destructor)(void *)),
       (key, destructor))
COMPAT(int, pthread_setspecific, (pthread_key_t key, const void *value), (key, value))
COMPAT(void *, pthread_getspecific, (pthread_key_t key), (key))
COMPAT(int, pthread_attr_getstack, (const pthread_attr_t *attr, void **addr, size_t *size),
       (attr, addr, size))
COMPAT(int, pthread_attr_getstacksize, (const pthread_attr_t *attr, size_t *size),
       (attr, size))
COMPAT(int, pthread_getattr_np, (pthread_t thread, pthread_attr_t *attr), (thread, attr))
COMPAT(int, pthread_sigmask, (int how, const sigset_t *set, sigset_t *old), (how, set, old))

#endif
