/*
 * The CPU section's paced reference: nginx with every accepted connection capped by
 * the kernel at one fixed rate (SO_MAX_PACING_RATE), as this server caps a paced
 * response. nginx has no setting for it, so the bench starts nginx with this library
 * in LD_PRELOAD: it wraps accept() and accept4() and sets the cap on each new socket.
 *
 * The rate (bytes/s) comes from PACE_BYTES_PER_S and is read when the library loads:
 * nginx's master process still has its environment then, its workers (which accept)
 * do not. 0 or unset leaves sockets unpaced. Built by the bench with gcc into its
 * work folder (bench/run.ts, buildPacePreload).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>

static unsigned int pace_bytes_per_s;

__attribute__((constructor)) static void read_pace(void) {
  const char *value = getenv("PACE_BYTES_PER_S");
  pace_bytes_per_s = value ? (unsigned int)strtoul(value, NULL, 10) : 0;
}

static int capped(int fd) {
  if (fd >= 0 && pace_bytes_per_s > 0) {
    setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &pace_bytes_per_s, sizeof pace_bytes_per_s);
  }
  return fd;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  static int (*real)(int, struct sockaddr *, socklen_t *, int);
  if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
  return capped(real(fd, addr, len, flags));
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  static int (*real)(int, struct sockaddr *, socklen_t *);
  if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
  return capped(real(fd, addr, len));
}
