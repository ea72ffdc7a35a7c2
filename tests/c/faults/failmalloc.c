/*
 * failmalloc.c - an LD_PRELOAD library that makes malloc of one size fail:
 * FAILMALLOC_SIZE=N fails every malloc(N) after the first FAILMALLOC_AFTER
 * of them. Used by malloc_failure to reach Postset's ncclSystemError path
 * (docs/errors.md P16) through the real C allocator.
 */
#include <stdlib.h>

extern void *__libc_malloc(size_t);

static long fail_size = -1, fail_after;

void *malloc(size_t n) {
  if (fail_size == -1) {
    const char *s = getenv("FAILMALLOC_SIZE"), *a = getenv("FAILMALLOC_AFTER");
    fail_size = s ? atol(s) : 0;
    fail_after = a ? atol(a) : 0;
  }
  if (fail_size > 0 && (long)n == fail_size && fail_after-- <= 0) return NULL;
  return __libc_malloc(n);
}
