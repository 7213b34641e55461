// view-reference: the live view's floor and its changing screen, for `make bench`'s view rows. Not a
// SwiftPM target: run.py compiles it with cc (-lX11 -lXext -lturbojpeg) into its temporary folder.
//
//   view-reference loop :N COUNT REPS W H   REPS times: COUNT frames of XShmGetImage of the whole screen
//                                           into one shared image, then tjCompress2 of its top-left WxH
//                                           (BGRX, 4:2:0, quality 70, the fast DCT: touchbridge's settings)
//                                           and nothing else (no scaling, no cursor, no socket); prints
//                                           "cpu_ns_per_frame C wall_ns_per_frame T jpeg_bytes B" per rep,
//                                           C the process's CPU time (CLOCK_PROCESS_CPUTIME_ID)
//   view-reference change :N HZ             changes the whole screen HZ times a second until killed: a
//                                           picture of gradients, stripes and noise (a JPEG's work is
//                                           like a desktop's, not a flat colour's), copied onto the root
//                                           window from a pixmap twice as wide, shifted by 8 px a change;
//                                           XSync after each; prints "changing" once the first is done
//   view-reference paint :N                 paints that picture once, unshifted, XSync, prints "painted"
//   view-reference mark :N                  paints that picture, XSync, prints "ready"; then for each line
//                                           RRGGBB on stdin: the picture shifted by 8 px more, a 240x240
//                                           square of that colour on the screen's centre, XSync, and prints
//                                           the time the screen had changed (CLOCK_REALTIME, ns: a browser's
//                                           performance.timeOrigin is on that clock)
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <turbojpeg.h>

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static Display *open_display(const char *name) {
    Display *dpy = XOpenDisplay(name);
    if (!dpy) {
        fprintf(stderr, "view-reference: cannot open display %s\n", name);
        exit(2);
    }
    return dpy;
}

static int loop(Display *dpy, int count, int reps, int w, int h) {
    int screen = DefaultScreen(dpy);
    int sw = DisplayWidth(dpy, screen), sh = DisplayHeight(dpy, screen);
    Window root = RootWindow(dpy, screen);
    if (!XShmQueryExtension(dpy) || w > sw || h > sh) {
        fprintf(stderr, "view-reference: no MIT-SHM, or %dx%d larger than the screen\n", w, h);
        return 2;
    }
    XShmSegmentInfo shm = {0};
    XImage *image = XShmCreateImage(dpy, DefaultVisual(dpy, screen), DefaultDepth(dpy, screen), ZPixmap, NULL, &shm,
                                    sw, sh);
    shm.shmid = shmget(IPC_PRIVATE, (size_t)image->bytes_per_line * sh, IPC_CREAT | 0600);
    shm.shmaddr = image->data = shmat(shm.shmid, NULL, 0);
    shm.readOnly = False;
    XShmAttach(dpy, &shm);
    XSync(dpy, False);
    shmctl(shm.shmid, IPC_RMID, NULL);  // gone with the process, whatever happens
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC), bytes = 0;
        for (int i = 0; i < count; i++) {
            if (!XShmGetImage(dpy, root, image, 0, 0, AllPlanes)) {
                fprintf(stderr, "view-reference: XShmGetImage failed\n");
                return 1;
            }
            if (tjCompress2(tj, (unsigned char *)image->data, w, image->bytes_per_line, h, TJPF_BGRX, &jpeg, &size,
                            TJSAMP_420, 70, TJFLAG_FASTDCT) != 0) {
                fprintf(stderr, "view-reference: tjCompress2: %s\n", tjGetErrorStr2(tj));
                return 1;
            }
            bytes += size;
        }
        uint64_t c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = clock_ns(CLOCK_MONOTONIC);
        printf("cpu_ns_per_frame %llu wall_ns_per_frame %llu jpeg_bytes %llu\n", (unsigned long long)((c1 - c0) / count),
               (unsigned long long)((t1 - t0) / count), (unsigned long long)(bytes / count));
        fflush(stdout);
    }
    tjFree(jpeg);
    tjDestroy(tj);
    XShmDetach(dpy, &shm);
    XDestroyImage(image);
    shmdt(shm.shmaddr);
    return 0;
}

// The changing screen's picture, twice the screen's width: gradients, 16-px stripes, and a noisy band.
static Pixmap picture(Display *dpy, int sw, int sh, GC gc) {
    int screen = DefaultScreen(dpy);
    int pw = 2 * sw;
    Pixmap pixmap = XCreatePixmap(dpy, RootWindow(dpy, screen), pw, sh, DefaultDepth(dpy, screen));
    uint32_t *pixels = malloc((size_t)pw * sh * 4);
    uint32_t seed = 12345;
    for (int y = 0; y < sh; y++) {
        for (int x = 0; x < pw; x++) {
            uint32_t r = (uint32_t)(x % sw) * 255 / sw, g = (uint32_t)y * 255 / sh, b = ((x / 16 + y / 16) & 1) ? 200 : 40;
            if (y % 270 > 200) {  // a band of noise, text-like detail
                seed = seed * 1103515245u + 12345u;
                uint32_t n = (seed >> 16) & 0xff;
                r = g = b = n > 128 ? 240 : 20;
            }
            pixels[(size_t)y * pw + x] = r << 16 | g << 8 | b;
        }
    }
    XImage *image = XCreateImage(dpy, DefaultVisual(dpy, screen), DefaultDepth(dpy, screen), ZPixmap, 0, (char *)pixels,
                                 pw, sh, 32, pw * 4);
    XPutImage(dpy, pixmap, gc, image, 0, 0, 0, 0, pw, sh);
    XDestroyImage(image);  // frees pixels
    XSync(dpy, False);
    return pixmap;
}

// The screen to change: its size, its root window, a GC drawing over the root's children, and the picture.
struct scene {
    int sw, sh;
    Window root;
    GC gc;
    Pixmap pixmap;
};

static struct scene open_scene(Display *dpy) {
    int screen = DefaultScreen(dpy);
    struct scene s = {.sw = DisplayWidth(dpy, screen), .sh = DisplayHeight(dpy, screen), .root = RootWindow(dpy, screen)};
    s.gc = XCreateGC(dpy, s.root, 0, NULL);
    XSetSubwindowMode(dpy, s.gc, IncludeInferiors);
    s.pixmap = picture(dpy, s.sw, s.sh, s.gc);
    return s;
}

static int change(Display *dpy, double hz, int once) {
    struct scene s = open_scene(dpy);
    int sw = s.sw, sh = s.sh;
    Window root = s.root;
    GC gc = s.gc;
    Pixmap pixmap = s.pixmap;
    uint64_t start = clock_ns(CLOCK_MONOTONIC), period = (uint64_t)(1e9 / hz);
    for (uint64_t i = 0;; i++) {
        XCopyArea(dpy, pixmap, root, gc, once ? 0 : (int)((i * 8) % (uint64_t)sw), 0, sw, sh, 0, 0);
        XSync(dpy, False);
        if (once) {
            printf("painted\n");
            fflush(stdout);
            return 0;
        }
        if (i == 0) {
            printf("changing\n");
            fflush(stdout);
        }
        uint64_t next = start + (i + 1) * period;
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u), .tv_nsec = (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

static int mark(Display *dpy) {
    struct scene s = open_scene(dpy);
    int sw = s.sw, sh = s.sh;
    Window root = s.root;
    GC gc = s.gc;
    Pixmap pixmap = s.pixmap;
    XCopyArea(dpy, pixmap, root, gc, 0, 0, sw, sh, 0, 0);
    XSync(dpy, False);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    for (uint64_t i = 1; fgets(line, sizeof line, stdin); i++) {
        unsigned long rgb = strtoul(line, NULL, 16);
        XCopyArea(dpy, pixmap, root, gc, (int)((i * 8) % (uint64_t)sw), 0, sw, sh, 0, 0);
        XSetForeground(dpy, gc, rgb);
        XFillRectangle(dpy, root, gc, sw / 2 - 120, sh / 2 - 120, 240, 240);
        XSync(dpy, False);
        printf("%llu\n", (unsigned long long)clock_ns(CLOCK_REALTIME));
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && !strcmp(argv[1], "loop"))
        return loop(open_display(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
    if (argc == 4 && !strcmp(argv[1], "change")) return change(open_display(argv[2]), atof(argv[3]), 0);
    if (argc == 3 && !strcmp(argv[1], "paint")) return change(open_display(argv[2]), 1, 1);
    if (argc == 3 && !strcmp(argv[1], "mark")) return mark(open_display(argv[2]));
    fprintf(stderr, "usage: view-reference loop :N COUNT REPS W H | change :N HZ | paint :N | mark :N\n");
    return 2;
}
