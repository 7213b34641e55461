// xi2watch: the VM tests' X observer. An independent libXi client (not touchbridge code) that
// selects, on the root window for every master device, XI 2.2 touch events, XI 2.4 gesture events,
// device motion (with its valuators, so smooth-scroll valuators show), buttons and keys, and prints
// one line per event:
//   ready
//   added src=<id> / enabled src=<id> / removed src=<id>   a slave device appeared / was enabled (X
//                                                      reads it from now on) / went (hot-plug)
//   device src=<id> name=<name> [scroll=<valuator>:<vertical|horizontal>:<increment> ...]  (first event of a slave)
//   touch <begin|update|end> src=<id> id=<touch id> x=<root x> y=<root y>
//   motion src=<id> x=<root x> y=<root y> [v<n>=<value> ...]
//   press|release src=<id> button=<n>
//   keypress|keyrelease src=<id> key=<keycode> sym=0x<keysym> mods=0x<effective modifiers>
//                                                      (the keysym as a client translates it: the core
//                                                      keyboard's XKB map read at that event, with the
//                                                      event's effective modifiers and group)
//   pinch|swipe <begin|update|end> src=<id> fingers=<n> scale=<s> dx=<dx> dy=<dy> [cancelled]
//   pointer x=<root x> y=<root y> buttons=<mask>      answer to `query` (bit n-1: button n held)
//   synced                                             answer to `sync`
// Commands on stdin: query, sync, quit. Compiled on the host against libXi (Tests/VM/test.sh).
#define _GNU_SOURCE
#include <X11/Xlib.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XInput2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int seen[4096];

static void describe(Display *dpy, int src) {
    if (src < 0 || src >= 4096 || seen[src]) return;
    seen[src] = 1;
    int n = 0;
    XIDeviceInfo *info = XIQueryDevice(dpy, src, &n);
    if (!info || n < 1) { printf("device src=%d name=?\n", src); return; }
    printf("device src=%d name=", src);
    for (const char *c = info[0].name; *c; c++) putchar(*c == ' ' ? '_' : *c);
    for (int i = 0; i < info[0].num_classes; i++) {
        if (info[0].classes[i]->type == XIScrollClass) {
            XIScrollClassInfo *s = (XIScrollClassInfo *)info[0].classes[i];
            printf(" scroll=%d:%s:%.1f", s->number, s->scroll_type == XIScrollTypeVertical ? "vertical" : "horizontal",
                   s->increment);
        }
    }
    putchar('\n');
    XIFreeDeviceInfo(info);
}

static const char *phase(int evtype) {
    switch (evtype) {
    case XI_TouchBegin: case XI_GesturePinchBegin: case XI_GestureSwipeBegin: return "begin";
    case XI_TouchUpdate: case XI_GesturePinchUpdate: case XI_GestureSwipeUpdate: return "update";
    default: return "end";
    }
}

/* A device can go between XIQueryDevice and a request about it (`pointers` while devices come and go): the
 * server's BadDevice is not a reason to stop watching. */
static int ignore_error(Display *dpy, XErrorEvent *e) { (void)dpy; (void)e; return 0; }

int main(int argc, char **argv) {
    Display *dpy = XOpenDisplay(argc > 1 ? argv[1] : NULL);
    if (!dpy) { fprintf(stderr, "xi2watch: cannot open display\n"); return 2; }
    int opcode, ev, err, major = 2, minor = 4;
    if (!XQueryExtension(dpy, "XInputExtension", &opcode, &ev, &err) || XIQueryVersion(dpy, &major, &minor) != Success
        || major < 2 || (major == 2 && minor < 4)) {
        fprintf(stderr, "xi2watch: no XInput 2.4 (%d.%d)\n", major, minor);
        return 2;
    }
    XSetErrorHandler(ignore_error);
    Window root = DefaultRootWindow(dpy);
    unsigned char bits[XIMaskLen(XI_LASTEVENT)] = {0};
    int types[] = {XI_TouchBegin, XI_TouchUpdate, XI_TouchEnd, XI_Motion, XI_ButtonPress, XI_ButtonRelease,
                   XI_KeyPress, XI_KeyRelease, XI_GesturePinchBegin, XI_GesturePinchUpdate, XI_GesturePinchEnd,
                   XI_GestureSwipeBegin, XI_GestureSwipeUpdate, XI_GestureSwipeEnd};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) XISetMask(bits, types[i]);
    unsigned char hbits[XIMaskLen(XI_LASTEVENT)] = {0};
    XISetMask(hbits, XI_HierarchyChanged);
    XIEventMask masks[2] = {{XIAllMasterDevices, sizeof bits, bits}, {XIAllDevices, sizeof hbits, hbits}};
    XISelectEvents(dpy, root, masks, 2);
    XSync(dpy, False);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    struct pollfd fds[2] = {{ConnectionNumber(dpy), POLLIN, 0}, {0, POLLIN, 0}};
    char line[256];
    int synced_pending = 0;
    for (;;) {
        while (XPending(dpy)) {
            XEvent e;
            XNextEvent(dpy, &e);
            if (e.type != GenericEvent || e.xcookie.extension != opcode || !XGetEventData(dpy, &e.xcookie)) continue;
            int t = e.xcookie.evtype;
            if (t == XI_HierarchyChanged) {
                XIHierarchyEvent *h = e.xcookie.data;
                for (int i = 0; i < h->num_info; i++) {
                    if (h->info[i].flags & XISlaveAdded) { seen[h->info[i].deviceid] = 0; printf("added src=%d\n", h->info[i].deviceid); describe(dpy, h->info[i].deviceid); }
                    if (h->info[i].flags & XIDeviceEnabled) printf("enabled src=%d\n", h->info[i].deviceid);
                    if (h->info[i].flags & XISlaveRemoved) printf("removed src=%d\n", h->info[i].deviceid);
                }
            } else if (t >= XI_GesturePinchBegin && t <= XI_GestureSwipeEnd) {
                XIGesturePinchEvent *p = e.xcookie.data;  // swipe shares the leading fields
                describe(dpy, p->sourceid);
                if (t <= XI_GesturePinchEnd) {
                    printf("pinch %s src=%d fingers=%d scale=%.4f dx=%.2f dy=%.2f%s\n", phase(t), p->sourceid,
                           p->detail, p->scale, p->delta_x, p->delta_y,
                           (p->flags & XIGesturePinchEventCancelled) ? " cancelled" : "");
                } else {
                    XIGestureSwipeEvent *s = e.xcookie.data;
                    printf("swipe %s src=%d fingers=%d scale=1 dx=%.2f dy=%.2f%s\n", phase(t), s->sourceid, s->detail,
                           s->delta_x, s->delta_y, (s->flags & XIGestureSwipeEventCancelled) ? " cancelled" : "");
                }
            } else {
                XIDeviceEvent *d = e.xcookie.data;
                describe(dpy, d->sourceid);
                switch (t) {
                case XI_TouchBegin: case XI_TouchUpdate: case XI_TouchEnd:
                    printf("touch %s src=%d id=%d x=%.2f y=%.2f dev=%d\n", phase(t), d->sourceid, d->detail, d->root_x, d->root_y,
                           d->deviceid);
                    break;
                case XI_Motion: {
                    printf("motion src=%d x=%.2f y=%.2f", d->sourceid, d->root_x, d->root_y);
                    double *v = d->valuators.values;
                    for (int i = 0; i < d->valuators.mask_len * 8; i++)
                        if (XIMaskIsSet(d->valuators.mask, i)) printf(" v%d=%.4f", i, *v++);
                    printf(" dev=%d\n", d->deviceid);
                    break;
                }
                case XI_ButtonPress: case XI_ButtonRelease:
                    printf("%s src=%d button=%d%s dev=%d\n", t == XI_ButtonPress ? "press" : "release", d->sourceid, d->detail,
                           (d->flags & XIPointerEmulated) ? " emulated" : "", d->deviceid);
                    break;
                case XI_KeyPress: case XI_KeyRelease: {
                    // The map as it is now (a fresh read: setxkbmap may just have changed it).
                    unsigned int state = (d->mods.effective & 0xff) | ((d->group.effective & 3) << 13), used = 0;
                    KeySym sym = NoSymbol;
                    XkbDescPtr xkb = XkbGetMap(dpy, XkbKeyTypesMask | XkbKeySymsMask, XkbUseCoreKbd);
                    if (xkb) { XkbTranslateKeyCode(xkb, d->detail, state, &used, &sym); XkbFreeKeyboard(xkb, 0, True); }
                    printf("%s src=%d key=%d sym=0x%lx mods=0x%x\n", t == XI_KeyPress ? "keypress" : "keyrelease",
                           d->sourceid, d->detail, (unsigned long)sym, d->mods.effective & 0xff);
                    break;
                }
                }
            }
            XFreeEventData(dpy, &e.xcookie);
        }
        if (synced_pending) { printf("synced\n"); synced_pending = 0; }
        if (poll(fds, 2, -1) < 0) continue;
        if (fds[1].revents & (POLLIN | POLLHUP)) {
            if (!fgets(line, sizeof line, stdin) || strncmp(line, "quit", 4) == 0) break;
            if (strncmp(line, "query", 5) == 0) {
                Window r, c; int rx, ry, wx, wy; unsigned int m;
                XQueryPointer(dpy, root, &r, &c, &rx, &ry, &wx, &wy, &m);
                printf("pointer x=%d y=%d buttons=%u\n", rx, ry, (m >> 8) & 0x1f);
            } else if (strncmp(line, "pointers", 8) == 0) {
                // Every master pointer with where its cursor is, every slave with its master:
                // `master id=N x=X y=Y name=NAME`, `slave id=N master=M enabled=E name=NAME`, `pointers-end`.
                int n = 0;
                XIDeviceInfo *all = XIQueryDevice(dpy, XIAllDevices, &n);
                for (int i = 0; i < n; i++) {
                    XIDeviceInfo *d = &all[i];
                    char name[128];
                    snprintf(name, sizeof name, "%s", d->name);
                    for (char *c = name; *c; c++) if (*c == ' ') *c = '_';
                    if (d->use == XIMasterPointer) {
                        Window r, c; double rx = 0, ry = 0, wx, wy;
                        XIButtonState b = {0, NULL}; XIModifierState mods; XIGroupState g;
                        if (!XIQueryPointer(dpy, d->deviceid, root, &r, &c, &rx, &ry, &wx, &wy, &b, &mods, &g)) continue;
                        free(b.mask);
                        printf("master id=%d x=%d y=%d name=%s\n", d->deviceid, (int)rx, (int)ry, name);
                    } else if (d->use == XISlavePointer || d->use == XISlaveKeyboard || d->use == XIFloatingSlave) {
                        printf("slave id=%d master=%d enabled=%d name=%s\n", d->deviceid,
                               d->use == XIFloatingSlave ? 0 : d->attachment, d->enabled, name);
                    }
                }
                if (all) XIFreeDeviceInfo(all);
                printf("pointers-end\n");
            } else if (strncmp(line, "sync", 4) == 0) {
                XSync(dpy, False);  // every event before this point is now queued: print them, then `synced`
                synced_pending = 1;
            }
        }
    }
    XCloseDisplay(dpy);
    return 0;
}
