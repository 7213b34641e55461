// ideal-bridge: the honest limit for `make bench`'s end-to-end rows. The same process hops as
// touchbridge (a UDP socket in, an X connection out) and nothing else: recvfrom, a string search for
// finger 0's position in "Touches", XTestFakeMotionEvent, XFlush. No tracker, no gate, no event loop.
//
//   ideal-bridge :N           binds 127.0.0.1:0, prints "listening <port>", then bridges until killed
//   ideal-bridge :N --epoll   the same, asleep in epoll_wait instead of recvfrom, then recvfrom
//                             (MSG_DONTWAIT): the one extra syscall of touchbridge's loop, measured alone
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

static int b64(char c) {
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(a, c);
    return p && c ? (int)(p - a) : -1;
}

int main(int argc, char **argv) {
    Display *dpy = XOpenDisplay(argc > 1 ? argv[1] : NULL);
    if (!dpy) return 2;
    int w = DisplayWidth(dpy, DefaultScreen(dpy)), h = DisplayHeight(dpy, DefaultScreen(dpy));
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || getsockname(fd, (struct sockaddr *)&sa, &len)) return 1;
    printf("listening %d\n", ntohs(sa.sin_port));
    fflush(stdout);
    int ep = -1;
    if (argc > 2 && strcmp(argv[2], "--epoll") == 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) return 1;
    }
    char buf[65536];
    for (;;) {
        struct epoll_event ready;
        if (ep >= 0 && epoll_wait(ep, &ready, 1, -1) != 1) continue;
        ssize_t n = recvfrom(fd, buf, sizeof buf - 1, ep >= 0 ? MSG_DONTWAIT : 0, NULL, NULL);
        if (n <= 0) continue;
        buf[n] = 0;
        char *t = strstr(buf, "\"Touches\":\"");  // finger 0 first: "0" then XX YY
        if (!t || t[11] != '0') continue;
        int hx = b64(t[12]), lx = b64(t[13]), hy = b64(t[14]), ly = b64(t[15]);
        if (hx < 0 || lx < 0 || hy < 0 || ly < 0) continue;
        long x = (long)(hx * 64 + lx) * w / 4094, y = (long)(hy * 64 + ly) * h / 4094;  // --fit stretch
        XTestFakeMotionEvent(dpy, -1, x < w ? (int)x : w - 1, y < h ? (int)y : h - 1, CurrentTime);
        XFlush(dpy);
    }
}
