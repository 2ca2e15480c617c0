/*
 * What Gloo binds and dials, seen from inside the process (test/lab/gloo-oracle.ts):
 * an LD_PRELOAD library that passes listen(2) and connect(2) through to libc
 * and appends one line per inet call to the file $GLOO_SHIM_LOG:
 *
 *   listen 198.18.220.2 40123 rc=0
 *   connect 198.18.220.1 29500 from 198.18.220.2 51234 rc=-1 errno=115
 *
 * IPv6 addresses carry their scope id (fe80::b%3). listen's address is the
 * socket's own (getsockname), which is the address of Gloo's device;
 * connect's source is read after the call, when the kernel has chosen it.
 * create_default_device() exposes none of this, and Gloo 1.13's per-pair
 * listener closes too fast for /proc/net/tcp sampling (shared/LAB.md).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int describe(const struct sockaddr *address, char *out, size_t size) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)address;
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    snprintf(out, size, "%s %u", text, ntohs(in->sin_port));
    return 1;
  }
  if (address->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)address;
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    if (in6->sin6_scope_id != 0)
      snprintf(out, size, "%s%%%u %u", text, in6->sin6_scope_id, ntohs(in6->sin6_port));
    else
      snprintf(out, size, "%s %u", text, ntohs(in6->sin6_port));
    return 1;
  }
  return 0;
}

/* One write(2) per line on an O_APPEND descriptor: lines from threads never interleave. */
static void log_line(const char *format, ...) {
  const char *path = getenv("GLOO_SHIM_LOG");
  if (path == NULL) return;
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (length <= 0) return;
  if ((size_t)length >= sizeof line) length = sizeof line - 1;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t written = write(fd, line, (size_t)length);
  (void)written;
  close(fd);
}

static int own_address(int fd, char *out, size_t size) {
  struct sockaddr_storage storage;
  socklen_t length = sizeof storage;
  if (getsockname(fd, (struct sockaddr *)&storage, &length) != 0) return 0;
  return describe((const struct sockaddr *)&storage, out, size);
}

int listen(int fd, int backlog) {
  static int (*real_listen)(int, int);
  if (real_listen == NULL) real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
  int rc = real_listen(fd, backlog);
  int saved = errno;
  char own[INET6_ADDRSTRLEN + 16];
  if (own_address(fd, own, sizeof own)) log_line("listen %s rc=%d\n", own, rc);
  errno = saved;
  return rc;
}

int connect(int fd, const struct sockaddr *address, socklen_t length) {
  static int (*real_connect)(int, const struct sockaddr *, socklen_t);
  if (real_connect == NULL)
    real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
  int rc = real_connect(fd, address, length);
  int saved = errno;
  char target[INET6_ADDRSTRLEN + 16];
  char own[INET6_ADDRSTRLEN + 16] = "-";
  if (address != NULL && describe(address, target, sizeof target)) {
    own_address(fd, own, sizeof own);
    log_line("connect %s from %s rc=%d errno=%d\n", target, own, rc, rc == 0 ? 0 : saved);
  }
  errno = saved;
  return rc;
}
