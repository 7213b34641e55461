// xobserve: an independent X client for touchbridge's integration tests and benchmarks.
//
// It is not touchbridge code and shares nothing with it: it opens its own connection, selects the
// XInput2 raw events on the root window and prints, one line per event, what the X server delivered,
// stamped with CLOCK_MONOTONIC (nanoseconds, comparable with clock_gettime(CLOCK_MONOTONIC) in any
// other process on the machine).
//
// Usage: xobserve [-display :N]        (also --display :N, --display=:N; default $DISPLAY)
//
// Output (stdout, flushed per line):
//   ready                                                  selected and synced; observing from now on
//   motion <t_ns> dev=<id> src=<id> x=<root x> y=<root y> [rx=<v0>] [ry=<v1>]
//   press <t_ns> dev=<id> src=<id> button=<n>
//   release <t_ns> dev=<id> src=<id> button=<n>
//   keypress <t_ns> dev=<id> src=<id> key=<keycode>
//   keyrelease <t_ns> dev=<id> src=<id> key=<keycode>
//   pointer <t_ns> x=<root x> y=<root y> buttons=<mask>   answer to `query`
//   pointer <t_ns> dev=<id> x=<root x> y=<root y> buttons=<mask>   answer to `query <id>`
//   synced <t_ns>                                          answer to `sync`
//   warped <t_ns> x=<x> y=<y>                              answer to `warp X Y`
//   error <text>                                           a command it did not understand
//   xgone                                                  the X connection died (exit status 3)
//
// In `motion`, x/y are the root position from XQueryPointer made right after the raw event was
// read (so under a fast stream it can already include later motion); rx/ry are the raw event's own
// valuators 0 and 1 when the event carries them (for an absolute XTest motion: the target pixel).
// `buttons` has bit n-1 set while button n (1...5) is held.
//
// Commands (stdin, one per line):
//   query        print a `pointer` line
//   query ID     print a `pointer` line for master pointer ID (XIQueryPointer), e.g. an extra MPX master
//   sync         XSync, print every event that arrived before it, then `synced`: a barrier that
//                says "everything the server delivered before this point has been printed"
//   warp X Y     XWarpPointer the core pointer to X,Y on the root window (not a device event: it
//                produces no raw event), XSync, print `warped`
//   quit         exit 0
// EOF on stdin: exit 0.
//
// Exit status: 0 quit/EOF, 1 usage, 2 cannot open the display or no XInput 2.2, 3 X connection lost,
// 4 stdout gone.

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/extensions/XInput2.h>

static Display *dpy;
static Window root;
static int xi_opcode;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Print one line and flush it. A reader that went away ends the program.
static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(stdout, fmt, ap);
    va_end(ap);
    if (r < 0 || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) _exit(4);
}

static int io_error_handler(Display *d) {
    (void)d;
    fputs("xgone\n", stdout);
    fflush(stdout);
    _exit(3);
}

static int error_handler(Display *d, XErrorEvent *e) {
    char text[256];
    XGetErrorText(d, e->error_code, text, sizeof text);
    fprintf(stderr, "xobserve: X error: %s (request %d.%d)\n", text, e->request_code, e->minor_code);
    return 0;
}

static void set_bit(unsigned char *mask, int event) { mask[event >> 3] |= (unsigned char)(1u << (event & 7)); }

// The value of valuator `axis` in a raw event, if the event carries it.
static int raw_valuator(const XIRawEvent *re, int axis, double *out) {
    if (axis >= re->valuators.mask_len * 8) return 0;
    const double *v = re->valuators.values;
    for (int i = 0; i <= axis; i++) {
        if (!(re->valuators.mask[i >> 3] & (1u << (i & 7)))) continue;
        if (i == axis) { *out = *v; return 1; }
        v++;
    }
    return 0;
}

static void query_pointer(int *x, int *y, unsigned *buttons) {
    Window r, child;
    int wx, wy;
    unsigned mask = 0;
    *x = *y = 0;
    XQueryPointer(dpy, root, &r, &child, x, y, &wx, &wy, &mask);
    *buttons = (mask >> 8) & 0x1f; // Button1Mask is 1<<8 ... Button5Mask is 1<<12
}

// The position and buttons of master pointer `deviceid` (XIQueryPointer). Returns 0 if it is no pointer.
static int query_device_pointer(int deviceid, int *x, int *y, unsigned *buttons) {
    Window r, child;
    double rx = 0, ry = 0, wx, wy;
    XIButtonState bs = {0};
    XIModifierState mods;
    XIGroupState group;
    *x = *y = 0;
    *buttons = 0;
    if (!XIQueryPointer(dpy, deviceid, root, &r, &child, &rx, &ry, &wx, &wy, &bs, &mods, &group)) return 0;
    *x = (int)rx;
    *y = (int)ry;
    for (int b = 1; b <= 5 && b < bs.mask_len * 8; b++)
        if (bs.mask[b >> 3] & (1u << (b & 7))) *buttons |= 1u << (b - 1);
    XFree(bs.mask);
    return 1;
}

static void handle_event(XEvent *ev) {
    if (ev->type != GenericEvent || ev->xcookie.extension != xi_opcode) return;
    if (!XGetEventData(dpy, &ev->xcookie)) return;
    uint64_t t = now_ns();
    XIRawEvent *re = ev->xcookie.data;
    switch (ev->xcookie.evtype) {
    case XI_RawMotion: {
        int x, y;
        unsigned buttons;
        query_pointer(&x, &y, &buttons);
        char extra[96] = "";
        double v;
        size_t n = 0;
        if (raw_valuator(re, 0, &v)) n += (size_t)snprintf(extra + n, sizeof extra - n, " rx=%.0f", v);
        if (raw_valuator(re, 1, &v)) snprintf(extra + n, sizeof extra - n, " ry=%.0f", v);
        emit("motion %llu dev=%d src=%d x=%d y=%d%s", (unsigned long long)t, re->deviceid, re->sourceid, x, y,
             extra);
        break;
    }
    case XI_RawButtonPress:
    case XI_RawButtonRelease:
        emit("%s %llu dev=%d src=%d button=%d", ev->xcookie.evtype == XI_RawButtonPress ? "press" : "release",
             (unsigned long long)t, re->deviceid, re->sourceid, re->detail);
        break;
    case XI_RawKeyPress:
    case XI_RawKeyRelease:
        emit("%s %llu dev=%d src=%d key=%d", ev->xcookie.evtype == XI_RawKeyPress ? "keypress" : "keyrelease",
             (unsigned long long)t, re->deviceid, re->sourceid, re->detail);
        break;
    default:
        break;
    }
    XFreeEventData(dpy, &ev->xcookie);
}

// Handle every event Xlib has queued or can read without blocking.
static void drain_events(void) {
    while (XPending(dpy) > 0) {
        XEvent ev;
        XNextEvent(dpy, &ev);
        handle_event(&ev);
    }
}

static void sync_and_drain(void) {
    XSync(dpy, False);
    drain_events();
}

// Returns 1 to quit.
static int handle_command(char *line) {
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t')) *--end = 0;
    while (*line == ' ' || *line == '\t') line++;
    if (*line == 0) return 0;
    if (strcmp(line, "quit") == 0) return 1;
    if (strcmp(line, "query") == 0) {
        // Print the events that came before the answer first, so the output stays in server order.
        drain_events();
        int x, y;
        unsigned buttons;
        query_pointer(&x, &y, &buttons);
        uint64_t t = now_ns();
        drain_events();
        emit("pointer %llu x=%d y=%d buttons=%u", (unsigned long long)t, x, y, buttons);
        return 0;
    }
    if (strcmp(line, "sync") == 0) {
        sync_and_drain();
        emit("synced %llu", (unsigned long long)now_ns());
        return 0;
    }
    int qdev;
    if (sscanf(line, "query %d", &qdev) == 1) {
        drain_events();
        int x, y;
        unsigned buttons;
        int ok = query_device_pointer(qdev, &x, &y, &buttons);
        uint64_t t = now_ns();
        drain_events();
        if (ok) emit("pointer %llu dev=%d x=%d y=%d buttons=%u", (unsigned long long)t, qdev, x, y, buttons);
        else emit("error no pointer device %d", qdev);
        return 0;
    }
    int wx, wy;
    if (sscanf(line, "warp %d %d", &wx, &wy) == 2) {
        XWarpPointer(dpy, None, root, 0, 0, 0, 0, wx, wy);
        sync_and_drain();
        emit("warped %llu x=%d y=%d", (unsigned long long)now_ns(), wx, wy);
        return 0;
    }
    emit("error unknown command: %s", line);
    return 0;
}

int main(int argc, char **argv) {
    const char *display_name = NULL;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-display") == 0 || strcmp(argv[i], "--display") == 0 || strcmp(argv[i], "-d") == 0) &&
            i + 1 < argc) {
            display_name = argv[++i];
        } else if (strncmp(argv[i], "--display=", 10) == 0) {
            display_name = argv[i] + 10;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fprintf(stdout, "usage: %s [-display :N]\n", argv[0]);
            return 0;
        } else {
            fprintf(stderr, "usage: %s [-display :N]\n", argv[0]);
            return 1;
        }
    }

    signal(SIGPIPE, SIG_IGN);

    dpy = XOpenDisplay(display_name);
    if (!dpy) {
        fprintf(stderr, "xobserve: cannot open display %s\n", display_name ? display_name : XDisplayName(NULL));
        return 2;
    }
    XSetIOErrorHandler(io_error_handler);
    XSetErrorHandler(error_handler);

    int event, error;
    if (!XQueryExtension(dpy, "XInputExtension", &xi_opcode, &event, &error)) {
        fprintf(stderr, "xobserve: the server has no XInputExtension\n");
        return 2;
    }
    int major = 2, minor = 2;
    if (XIQueryVersion(dpy, &major, &minor) != Success || major < 2 || (major == 2 && minor < 2)) {
        fprintf(stderr, "xobserve: XInput 2.2 needed, the server has %d.%d\n", major, minor);
        return 2;
    }

    root = DefaultRootWindow(dpy);
    unsigned char mask_bits[(XI_LASTEVENT >> 3) + 1];
    memset(mask_bits, 0, sizeof mask_bits);
    set_bit(mask_bits, XI_RawMotion);
    set_bit(mask_bits, XI_RawButtonPress);
    set_bit(mask_bits, XI_RawButtonRelease);
    set_bit(mask_bits, XI_RawKeyPress);
    set_bit(mask_bits, XI_RawKeyRelease);
    XIEventMask mask = {.deviceid = XIAllMasterDevices, .mask_len = sizeof mask_bits, .mask = mask_bits};
    XISelectEvents(dpy, root, &mask, 1);
    XSync(dpy, False);
    emit("ready");

    struct pollfd fds[2] = {
        {.fd = ConnectionNumber(dpy), .events = POLLIN},
        {.fd = STDIN_FILENO, .events = POLLIN},
    };
    char buf[4096];
    size_t used = 0;
    for (;;) {
        drain_events(); // also flushes the output buffer
        int n = poll(fds, 2, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("xobserve: poll");
            return 3;
        }
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            // Let Xlib notice: reading a closed connection ends in the IO error handler.
            XSync(dpy, False);
            io_error_handler(dpy);
        }
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(STDIN_FILENO, buf + used, sizeof buf - 1 - used);
            if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (r <= 0) {
                // EOF: handle a last unterminated command, then leave.
                buf[used] = 0;
                if (used > 0) handle_command(buf);
                XCloseDisplay(dpy);
                return 0;
            }
            used += (size_t)r;
            buf[used] = 0;
            char *start = buf;
            char *nl;
            while ((nl = memchr(start, '\n', (size_t)(buf + used - start))) != NULL) {
                *nl = 0;
                if (handle_command(start)) {
                    XCloseDisplay(dpy);
                    return 0;
                }
                start = nl + 1;
            }
            used = (size_t)(buf + used - start);
            memmove(buf, start, used);
            if (used == sizeof buf - 1) used = 0; // an absurdly long line: drop it
        }
    }
}
