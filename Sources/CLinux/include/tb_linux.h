// Linux calls the Swift Glibc module does not give: epoll, eventfd, and recvmmsg (a GNU extension,
// declared only under _GNU_SOURCE, so it is wrapped here with a struct of its own, as NIO's CNIOLinux does).
#ifndef TOUCHBRIDGE_TB_LINUX_H
#define TOUCHBRIDGE_TB_LINUX_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>

/// `struct mmsghdr`, laid out as glibc's.
typedef struct {
    struct msghdr msg_hdr;
    unsigned int msg_len;
} tb_mmsghdr;

/// recvmmsg(2), with no time-out.
int tb_recvmmsg(int fd, tb_mmsghdr *messages, unsigned int count, int flags);

/// epoll_pwait2(2) with no signal mask: glibc 2.35 and later, Linux 5.11 and later (-1, ENOSYS, before).
int tb_epoll_pwait2(int epfd, struct epoll_event *events, int count, const struct timespec *timeout);
#endif
