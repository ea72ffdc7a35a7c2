/*
 * evil.c - build/libnccomring-evil.so, the library an attacker names in
 * NCCOMRING_LIBRARY (make test-security): its constructor creates the file
 * $EVIL_MARKER, so that a test sees whether it was ever loaded. Under a
 * set-user-ID-root host run by another user it would run as root.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void evil(void) {
  const char *marker = getenv("EVIL_MARKER");
  if (marker == NULL) return;
  int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}
