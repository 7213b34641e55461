// ideal-bridge: the honest limit for `make bench`'s end-to-end rows. The same process hops as
// touchbridge (a UDP socket in, an X connection out) and nothing else: recvfrom, a string search for
// finger 0's position in "Touches", XTestFakeMotionEvent, XFlush. No tracker, no gate, no event loop.
//
//   ideal-bridge :N   binds 127.0.0.1:0, prints "listening <port>", then bridges until killed
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
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
    char buf[65536];
    for (;;) {
        ssize_t n = recvfrom(fd, buf, sizeof buf - 1, 0, NULL, NULL);
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
