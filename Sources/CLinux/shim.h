#ifndef PUSHHUB_CLINUX_SHIM_H
#define PUSHHUB_CLINUX_SHIM_H
/* Linux-only system headers that Swift's Glibc module does not export. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <malloc.h>

/* accept4 is a GNU extension; Glibc's module is built without _GNU_SOURCE. */
extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
#endif
