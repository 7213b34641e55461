// xtest-reference: the X server's own floor for `make bench`. A minimal client doing what any
// injector must: XTestFakeMotionEvent + XFlush, nothing else.
//
//   xtest-reference loop :N COUNT REPS       time COUNT moves (each followed by XFlush, then one XSync),
//                                            REPS times; prints one "ns_per_event <v>" line per rep
//   xtest-reference stream :N COUNT HZ LOG   COUNT moves at HZ, to the pixels of bench pattern
//                                            (see run.py), writing "<i> <t_ns>" per move to LOG, the
//                                            CLOCK_MONOTONIC stamp just before XTestFakeMotionEvent
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static Display *open_display(const char *name) {
    Display *dpy = XOpenDisplay(name);
    if (!dpy) {
        fprintf(stderr, "xtest-reference: cannot open display %s\n", name);
        exit(2);
    }
    return dpy;
}

// The raw wire values of move i of the benchmark pattern (kept in step with run.py).
static void pattern_raw(int i, int *rx, int *ry) {
    *rx = 300 + (i % 600) * 5;
    *ry = 600 + ((i / 600) % 100) * 25;
}

// touchbridge's screen mapping: px = min(W-1, raw*W/4094).
static int map(int raw, int extent) {
    long v = (long)raw * extent / 4094;
    return v > extent - 1 ? extent - 1 : (int)v;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "loop") == 0) {
        Display *dpy = open_display(argv[2]);
        int count = atoi(argv[3]), reps = atoi(argv[4]);
        int k = 0;
        for (int r = -2; r < reps; r++) {  // two warm-up rounds
            uint64_t t0 = now_ns();
            for (int i = 0; i < count; i++) {
                k++;
                XTestFakeMotionEvent(dpy, -1, 100 + k % 1000, 100 + k % 700, CurrentTime);
                XFlush(dpy);
            }
            XSync(dpy, False);
            uint64_t t1 = now_ns();
            if (r >= 0) printf("ns_per_event %.1f\n", (double)(t1 - t0) / count);
        }
        XCloseDisplay(dpy);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "stream") == 0) {
        Display *dpy = open_display(argv[2]);
        int count = atoi(argv[3]);
        double hz = atof(argv[4]);
        int width = DisplayWidth(dpy, DefaultScreen(dpy)), height = DisplayHeight(dpy, DefaultScreen(dpy));
        uint64_t *stamps = calloc((size_t)count, sizeof(uint64_t));
        uint64_t start = now_ns() + 1000000;
        for (int i = 0; i < count; i++) {
            uint64_t deadline = start + (uint64_t)(i * 1e9 / hz);
            struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
            int rx, ry;
            pattern_raw(i, &rx, &ry);
            stamps[i] = now_ns();
            XTestFakeMotionEvent(dpy, -1, map(rx, width), map(ry, height), CurrentTime);
            XFlush(dpy);
        }
        XSync(dpy, False);
        FILE *log = fopen(argv[5], "w");
        if (!log) return 1;
        for (int i = 0; i < count; i++) fprintf(log, "%d %llu\n", i, (unsigned long long)stamps[i]);
        fclose(log);
        XCloseDisplay(dpy);
        return 0;
    }
    fprintf(stderr, "usage: xtest-reference loop :N COUNT REPS | stream :N COUNT HZ LOG\n");
    return 64;
}
