#define _GNU_SOURCE
#include "tb_linux.h"
#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(tb_mmsghdr) == sizeof(struct mmsghdr), "tb_mmsghdr is struct mmsghdr");
_Static_assert(offsetof(tb_mmsghdr, msg_len) == offsetof(struct mmsghdr, msg_len), "tb_mmsghdr is struct mmsghdr");

int tb_recvmmsg(int fd, tb_mmsghdr *messages, unsigned int count, int flags) {
    return recvmmsg(fd, (struct mmsghdr *)messages, count, flags, NULL);
}

int tb_epoll_pwait2(int epfd, struct epoll_event *events, int count, const struct timespec *timeout) {
#ifdef SYS_epoll_pwait2
    // The system call itself: glibc's wrapper is 2.35 and later; the kernel may still say ENOSYS.
    return (int)syscall(SYS_epoll_pwait2, epfd, events, count, timeout, NULL, (size_t)8);
#else
    errno = ENOSYS;
    return -1;
#endif
}
