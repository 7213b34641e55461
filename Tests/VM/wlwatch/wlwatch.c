/* wlwatch: the Wayland tests' observer (Tests/VM/guest/waylandtest.py), an independent Wayland
 * client. It shows one fullscreen window and prints, one line each, flushed at once, what the
 * compositor sends it:
 *   ready W H                                   the window is shown at the size the compositor chose (W x H)
 *   seat pointer=0|1 keyboard=0|1 touch=0|1     the seat's capabilities (sway: as devices come and go)
 *   seat touch bound                            the compositor has the wl_touch asked for at touch=1 (the answer
 *                                               to a wl_display.sync sent after wl_seat.get_touch): touches from
 *                                               then on reach this client
 *   global wl_seat V | global zwp_pointer_gestures_v1 | global zwp_tablet_manager_v2
 *   global zwp_virtual_keyboard_manager_v1      (listed, not bound: whether programs may type on one)
 *   enter X Y | leave | motion X Y              wl_pointer (surface coordinates)
 *   button CODE pressed|released                wl_pointer (evdev code: 272 left)
 *   axis vertical|horizontal VALUE              wl_pointer.axis (15 per wheel click on sway)
 *   axis_source wheel|finger|continuous|tilt    axis_discrete vertical|horizontal N    axis_stop AXIS
 *   axis_value120 vertical|horizontal N         (seat version 8: 120 per wheel click)
 *   touch down ID X Y | touch motion ID X Y | touch up ID | touch cancel
 *   key CODE pressed|released sym=0xKEYSYM name=NAME ctrl=0|1 shift=0|1   (evdev code; keysym by the keymap)
 *   keymap                                      a keymap arrived
 *   swipe begin fingers=N | swipe update dx=DX dy=DY | swipe end cancelled=0|1     zwp_pointer_gestures_v1
 *   pinch begin fingers=N | pinch update scale=S | pinch end cancelled=0|1
 *   tablet seat                                 zwp_tablet_manager_v2: the seat's tablet seat was made
 *   tablet added | tablet NAME | tablet removed zwp_tablet_v2 (NAME: the device's, at its done event)
 *   tool N added type=pen|eraser|… caps=…       zwp_tablet_tool_v2 N (numbered from 1 as they come), at done
 *   tool N proximity_in | tool N proximity_out | tool N down | tool N up | tool N removed
 *   tool N motion X Y                           (surface coordinates)
 *   tool N pressure P                           (0…65535)     tool N tilt TX TY   (degrees)
 *   tool N button CODE pressed|released         (evdev code: 331 BTN_STYLUS)
 *   tool N frame                                the end of one group of the tool's events
 *   output X Y W H                              a wl_output: its place in the compositor's layout and its mode
 *   other NAME seat                             a further seat (sway's seats), named; its pointer and keys:
 *   other NAME enter X Y | other NAME motion X Y | other NAME button CODE pressed|released
 *   other NAME key CODE pressed|released        (evdev code) | other NAME keyboard enter
 *   sync N                                      the answer to the Nth line read on stdin (wl_display.sync:
 *                                               every event the compositor sent this client before it came first)
 * WLWATCH_OUTPUT=X,Y: fullscreen on the wl_output at X,Y of the layout (else where the compositor puts it).
 * Built by Tests/VM/test.sh with the glue wayland-scanner generates from Debian wayland-protocols'
 * stable/xdg-shell/xdg-shell.xml, unstable/pointer-gestures/pointer-gestures-unstable-v1.xml and
 * unstable/tablet/tablet-unstable-v2.xml. */
#define _GNU_SOURCE
#include <linux/input-event-codes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>
#include "xdg-shell-client-protocol.h"
#include "pointer-gestures-unstable-v1-client-protocol.h"
#include "tablet-unstable-v2-client-protocol.h"

static struct wl_compositor *compositor;
static struct wl_shm *shm;
static struct xdg_wm_base *wm_base;
static struct wl_seat *seat;
static struct zwp_pointer_gestures_v1 *gestures;
static struct zwp_tablet_manager_v2 *tablet_manager;
static struct wl_surface *surface;
static struct xdg_surface *xdg_surface;
static struct xdg_toplevel *toplevel;
static struct wl_buffer *buffer;
static int width = 640, height = 480, buffer_w, buffer_h, shown, sized;
static struct xkb_context *xkb;
static struct xkb_keymap *keymap;
static struct xkb_state *state;

#define say(...) do { printf(__VA_ARGS__); putchar('\n'); fflush(stdout); } while (0)

static void buffer_release(void *data, struct wl_buffer *b) { (void)data; (void)b; }
static const struct wl_buffer_listener buffer_listener = { buffer_release };

static void draw(void) {
    if (buffer && buffer_w == width && buffer_h == height) goto attach;
    if (buffer) wl_buffer_destroy(buffer);
    int stride = width * 4, size = stride * height;
    int fd = memfd_create("wlwatch", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, size) < 0) { perror("wlwatch: memfd"); exit(1); }
    uint32_t *pixels = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pixels == MAP_FAILED) { perror("wlwatch: mmap"); exit(1); }
    for (int i = 0; i < width * height; i++) pixels[i] = 0xff203040;
    munmap(pixels, size);
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, size);
    buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_XRGB8888);
    wl_buffer_add_listener(buffer, &buffer_listener, NULL);
    wl_shm_pool_destroy(pool);
    close(fd);
    buffer_w = width; buffer_h = height;
attach:
    wl_surface_attach(surface, buffer, 0, 0);
    wl_surface_damage(surface, 0, 0, width, height);
    wl_surface_commit(surface);
}

static void xdg_surface_configure(void *data, struct xdg_surface *s, uint32_t serial) {
    (void)data;
    xdg_surface_ack_configure(s, serial);
    draw();
    /* Ready once the compositor chose the size (sway's first configure says 0x0: "you choose"). */
    if (!shown && sized) { shown = 1; say("ready %d %d", width, height); }
}
static const struct xdg_surface_listener xdg_surface_listener = { xdg_surface_configure };

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h, struct wl_array *states) {
    (void)data; (void)t; (void)states;
    if (w > 0 && h > 0) { width = w; height = h; sized = 1; }
}
static void toplevel_close(void *data, struct xdg_toplevel *t) { (void)data; (void)t; exit(0); }
/* configure_bounds and wm_capabilities (versions 4, 5) are never sent: xdg_wm_base is bound at version 1. */
static const struct xdg_toplevel_listener toplevel_listener = { toplevel_configure, toplevel_close, NULL, NULL };

static void wm_ping(void *data, struct xdg_wm_base *b, uint32_t serial) { (void)data; xdg_wm_base_pong(b, serial); }
static const struct xdg_wm_base_listener wm_listener = { wm_ping };

static const char *axis_name(uint32_t a) { return a == WL_POINTER_AXIS_VERTICAL_SCROLL ? "vertical" : "horizontal"; }

static void p_enter(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)p; (void)serial; (void)s;
    say("enter %.2f %.2f", wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void p_leave(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s) { (void)d; (void)p; (void)serial; (void)s; say("leave"); }
static void p_motion(void *d, struct wl_pointer *p, uint32_t time, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)p; (void)time;
    say("motion %.2f %.2f", wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void p_button(void *d, struct wl_pointer *p, uint32_t serial, uint32_t time, uint32_t button, uint32_t st) {
    (void)d; (void)p; (void)serial; (void)time;
    say("button %u %s", button, st == WL_POINTER_BUTTON_STATE_PRESSED ? "pressed" : "released");
}
static void p_axis(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis, wl_fixed_t value) {
    (void)d; (void)p; (void)time;
    say("axis %s %.4f", axis_name(axis), wl_fixed_to_double(value));
}
static void p_frame(void *d, struct wl_pointer *p) { (void)d; (void)p; }
static void p_axis_source(void *d, struct wl_pointer *p, uint32_t source) {
    (void)d; (void)p;
    static const char *names[] = { "wheel", "finger", "continuous", "tilt" };
    say("axis_source %s", source < 4 ? names[source] : "other");
}
static void p_axis_stop(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis) { (void)d; (void)p; (void)time; say("axis_stop %s", axis_name(axis)); }
static void p_axis_discrete(void *d, struct wl_pointer *p, uint32_t axis, int32_t n) { (void)d; (void)p; say("axis_discrete %s %d", axis_name(axis), n); }
static void p_axis_value120(void *d, struct wl_pointer *p, uint32_t axis, int32_t v) { (void)d; (void)p; say("axis_value120 %s %d", axis_name(axis), v); }
static const struct wl_pointer_listener pointer_listener = {
    p_enter, p_leave, p_motion, p_button, p_axis, p_frame, p_axis_source, p_axis_stop, p_axis_discrete, p_axis_value120,
};

static void t_down(void *d, struct wl_touch *t, uint32_t serial, uint32_t time, struct wl_surface *s, int32_t id, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)t; (void)serial; (void)time; (void)s;
    say("touch down %d %.2f %.2f", id, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void t_up(void *d, struct wl_touch *t, uint32_t serial, uint32_t time, int32_t id) { (void)d; (void)t; (void)serial; (void)time; say("touch up %d", id); }
static void t_motion(void *d, struct wl_touch *t, uint32_t time, int32_t id, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)t; (void)time;
    say("touch motion %d %.2f %.2f", id, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void t_frame(void *d, struct wl_touch *t) { (void)d; (void)t; }
static void t_cancel(void *d, struct wl_touch *t) { (void)d; (void)t; say("touch cancel"); }
static void t_shape(void *d, struct wl_touch *t, int32_t id, wl_fixed_t a, wl_fixed_t b) { (void)d; (void)t; (void)id; (void)a; (void)b; }
static void t_orientation(void *d, struct wl_touch *t, int32_t id, wl_fixed_t o) { (void)d; (void)t; (void)id; (void)o; }
static const struct wl_touch_listener touch_listener = { t_down, t_up, t_motion, t_frame, t_cancel, t_shape, t_orientation };

static void k_keymap(void *d, struct wl_keyboard *k, uint32_t format, int32_t fd, uint32_t size) {
    (void)d; (void)k;
    if (format != WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1) { close(fd); return; }
    char *text = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (text == MAP_FAILED) return;
    /* sway sends the same keymap again for every keyboard configured: compiled once (slow in the VM,
       seconds under load, and the client binds a new seat only after). */
    static char *last;
    size_t len = strnlen(text, size);
    if (keymap && last && strlen(last) == len && memcmp(last, text, len) == 0) {
        munmap(text, size);
        xkb_state_unref(state);
        state = xkb_state_new(keymap);
        say("keymap");
        return;
    }
    struct xkb_keymap *km = xkb_keymap_new_from_buffer(xkb, text, len, XKB_KEYMAP_FORMAT_TEXT_V1, 0);
    free(last);
    last = km ? strndup(text, len) : NULL;
    munmap(text, size);
    if (!km) { say("keymap-error"); return; }
    if (state) xkb_state_unref(state);
    if (keymap) xkb_keymap_unref(keymap);
    keymap = km;
    state = xkb_state_new(km);
    say("keymap");
}
static void k_enter(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s, struct wl_array *keys) { (void)d; (void)k; (void)serial; (void)s; (void)keys; say("keyboard enter"); }
static void k_leave(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s) { (void)d; (void)k; (void)serial; (void)s; say("keyboard leave"); }
static void k_key(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t time, uint32_t key, uint32_t st) {
    (void)d; (void)k; (void)serial; (void)time;
    xkb_keysym_t sym = state ? xkb_state_key_get_one_sym(state, key + 8) : 0;
    char name[64] = "?";
    if (sym) xkb_keysym_get_name(sym, name, sizeof name);
    int ctrl = state && xkb_state_mod_name_is_active(state, XKB_MOD_NAME_CTRL, XKB_STATE_MODS_EFFECTIVE) > 0;
    int shift = state && xkb_state_mod_name_is_active(state, XKB_MOD_NAME_SHIFT, XKB_STATE_MODS_EFFECTIVE) > 0;
    say("key %u %s sym=0x%x name=%s ctrl=%d shift=%d", key, st == WL_KEYBOARD_KEY_STATE_PRESSED ? "pressed" : "released",
        sym, name, ctrl, shift);
}
static void k_modifiers(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t dep, uint32_t lat, uint32_t lock, uint32_t group) {
    (void)d; (void)k; (void)serial;
    if (state) xkb_state_update_mask(state, dep, lat, lock, 0, 0, group);
}
static void k_repeat(void *d, struct wl_keyboard *k, int32_t rate, int32_t delay) { (void)d; (void)k; (void)rate; (void)delay; }
static const struct wl_keyboard_listener keyboard_listener = { k_keymap, k_enter, k_leave, k_key, k_modifiers, k_repeat };

static void sw_begin(void *d, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial, uint32_t time, struct wl_surface *s, uint32_t fingers) {
    (void)d; (void)g; (void)serial; (void)time; (void)s; say("swipe begin fingers=%u", fingers);
}
static void sw_update(void *d, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t time, wl_fixed_t dx, wl_fixed_t dy) {
    (void)d; (void)g; (void)time; say("swipe update dx=%.3f dy=%.3f", wl_fixed_to_double(dx), wl_fixed_to_double(dy));
}
static void sw_end(void *d, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial, uint32_t time, int32_t cancelled) {
    (void)d; (void)g; (void)serial; (void)time; say("swipe end cancelled=%d", cancelled);
}
static const struct zwp_pointer_gesture_swipe_v1_listener swipe_listener = { sw_begin, sw_update, sw_end };
static void pi_begin(void *d, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial, uint32_t time, struct wl_surface *s, uint32_t fingers) {
    (void)d; (void)g; (void)serial; (void)time; (void)s; say("pinch begin fingers=%u", fingers);
}
static void pi_update(void *d, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t time, wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t scale, wl_fixed_t rotation) {
    (void)d; (void)g; (void)time; (void)dx; (void)dy; (void)rotation; say("pinch update scale=%.4f", wl_fixed_to_double(scale));
}
static void pi_end(void *d, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial, uint32_t time, int32_t cancelled) {
    (void)d; (void)g; (void)serial; (void)time; say("pinch end cancelled=%d", cancelled);
}
static const struct zwp_pointer_gesture_pinch_v1_listener pinch_listener = { pi_begin, pi_update, pi_end };

/* The tablet protocol: a tablet seat for the seat; its tablets and tools (pads are not watched). */
struct tool { int n; uint32_t type; char caps[64]; };
static int tools_seen;

static const char *tool_type_name(uint32_t t) {
    switch (t) {
    case ZWP_TABLET_TOOL_V2_TYPE_PEN: return "pen";
    case ZWP_TABLET_TOOL_V2_TYPE_ERASER: return "eraser";
    case ZWP_TABLET_TOOL_V2_TYPE_BRUSH: return "brush";
    case ZWP_TABLET_TOOL_V2_TYPE_PENCIL: return "pencil";
    case ZWP_TABLET_TOOL_V2_TYPE_AIRBRUSH: return "airbrush";
    case ZWP_TABLET_TOOL_V2_TYPE_FINGER: return "finger";
    case ZWP_TABLET_TOOL_V2_TYPE_MOUSE: return "mouse";
    case ZWP_TABLET_TOOL_V2_TYPE_LENS: return "lens";
    default: return "other";
    }
}
static void tt_type(void *d, struct zwp_tablet_tool_v2 *t, uint32_t type) { (void)t; ((struct tool *)d)->type = type; }
static void tt_serial(void *d, struct zwp_tablet_tool_v2 *t, uint32_t hi, uint32_t lo) { (void)d; (void)t; (void)hi; (void)lo; }
static void tt_wacom(void *d, struct zwp_tablet_tool_v2 *t, uint32_t hi, uint32_t lo) { (void)d; (void)t; (void)hi; (void)lo; }
static void tt_capability(void *d, struct zwp_tablet_tool_v2 *t, uint32_t cap) {
    (void)t;
    static const char *names[] = { "?", "tilt", "pressure", "distance", "rotation", "slider", "wheel" };
    struct tool *tool = d;
    size_t used = strlen(tool->caps);
    snprintf(tool->caps + used, sizeof tool->caps - used, "%s%s", used ? "," : "", cap < 7 ? names[cap] : "other");
}
static void tt_done(void *d, struct zwp_tablet_tool_v2 *t) {
    (void)t;
    struct tool *tool = d;
    say("tool %d added type=%s caps=%s", tool->n, tool_type_name(tool->type), tool->caps[0] ? tool->caps : "-");
}
static void tt_removed(void *d, struct zwp_tablet_tool_v2 *t) { say("tool %d removed", ((struct tool *)d)->n); zwp_tablet_tool_v2_destroy(t); free(d); }
static void tt_proximity_in(void *d, struct zwp_tablet_tool_v2 *t, uint32_t serial, struct zwp_tablet_v2 *tab, struct wl_surface *s) {
    (void)t; (void)serial; (void)tab; (void)s; say("tool %d proximity_in", ((struct tool *)d)->n);
}
static void tt_proximity_out(void *d, struct zwp_tablet_tool_v2 *t) { (void)t; say("tool %d proximity_out", ((struct tool *)d)->n); }
static void tt_down(void *d, struct zwp_tablet_tool_v2 *t, uint32_t serial) { (void)t; (void)serial; say("tool %d down", ((struct tool *)d)->n); }
static void tt_up(void *d, struct zwp_tablet_tool_v2 *t) { (void)t; say("tool %d up", ((struct tool *)d)->n); }
static void tt_motion(void *d, struct zwp_tablet_tool_v2 *t, wl_fixed_t x, wl_fixed_t y) {
    (void)t; say("tool %d motion %.2f %.2f", ((struct tool *)d)->n, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void tt_pressure(void *d, struct zwp_tablet_tool_v2 *t, uint32_t p) { (void)t; say("tool %d pressure %u", ((struct tool *)d)->n, p); }
static void tt_distance(void *d, struct zwp_tablet_tool_v2 *t, uint32_t v) { (void)d; (void)t; (void)v; }
static void tt_tilt(void *d, struct zwp_tablet_tool_v2 *t, wl_fixed_t x, wl_fixed_t y) {
    (void)t; say("tool %d tilt %.2f %.2f", ((struct tool *)d)->n, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void tt_rotation(void *d, struct zwp_tablet_tool_v2 *t, wl_fixed_t v) { (void)d; (void)t; (void)v; }
static void tt_slider(void *d, struct zwp_tablet_tool_v2 *t, int32_t v) { (void)d; (void)t; (void)v; }
static void tt_wheel(void *d, struct zwp_tablet_tool_v2 *t, wl_fixed_t deg, int32_t clicks) { (void)d; (void)t; (void)deg; (void)clicks; }
static void tt_button(void *d, struct zwp_tablet_tool_v2 *t, uint32_t serial, uint32_t button, uint32_t st) {
    (void)t; (void)serial;
    say("tool %d button %u %s", ((struct tool *)d)->n, button, st == ZWP_TABLET_TOOL_V2_BUTTON_STATE_PRESSED ? "pressed" : "released");
}
static void tt_frame(void *d, struct zwp_tablet_tool_v2 *t, uint32_t time) { (void)t; (void)time; say("tool %d frame", ((struct tool *)d)->n); }
static const struct zwp_tablet_tool_v2_listener tool_listener = {
    .type = tt_type, .hardware_serial = tt_serial, .hardware_id_wacom = tt_wacom, .capability = tt_capability,
    .done = tt_done, .removed = tt_removed, .proximity_in = tt_proximity_in, .proximity_out = tt_proximity_out,
    .down = tt_down, .up = tt_up, .motion = tt_motion, .pressure = tt_pressure, .distance = tt_distance,
    .tilt = tt_tilt, .rotation = tt_rotation, .slider = tt_slider, .wheel = tt_wheel, .button = tt_button, .frame = tt_frame,
};

static void tab_name(void *d, struct zwp_tablet_v2 *t, const char *name) { (void)t; snprintf(d, 128, "%s", name); }
static void tab_id(void *d, struct zwp_tablet_v2 *t, uint32_t vid, uint32_t pid) { (void)d; (void)t; (void)vid; (void)pid; }
static void tab_path(void *d, struct zwp_tablet_v2 *t, const char *path) { (void)d; (void)t; (void)path; }
static void tab_done(void *d, struct zwp_tablet_v2 *t) { (void)t; say("tablet %s", (char *)d); }
static void tab_removed(void *d, struct zwp_tablet_v2 *t) { say("tablet removed"); zwp_tablet_v2_destroy(t); free(d); }
static const struct zwp_tablet_v2_listener tablet_listener = {
    .name = tab_name, .id = tab_id, .path = tab_path, .done = tab_done, .removed = tab_removed,
};

static void ts_tablet_added(void *d, struct zwp_tablet_seat_v2 *s, struct zwp_tablet_v2 *t) {
    (void)d; (void)s;
    char *name = calloc(1, 128);
    if (!name) { perror("wlwatch: calloc"); exit(1); }
    strcpy(name, "?");
    say("tablet added");
    zwp_tablet_v2_add_listener(t, &tablet_listener, name);
}
static void ts_tool_added(void *d, struct zwp_tablet_seat_v2 *s, struct zwp_tablet_tool_v2 *t) {
    (void)d; (void)s;
    struct tool *tool = calloc(1, sizeof *tool);
    if (!tool) { perror("wlwatch: calloc"); exit(1); }
    tool->n = ++tools_seen;
    zwp_tablet_tool_v2_add_listener(t, &tool_listener, tool);
}
/* Pads get no listener: their events are dropped. */
static void ts_pad_added(void *d, struct zwp_tablet_seat_v2 *s, struct zwp_tablet_pad_v2 *p) { (void)d; (void)s; (void)p; say("pad added"); }
static const struct zwp_tablet_seat_v2_listener tablet_seat_listener = { ts_tablet_added, ts_tool_added, ts_pad_added };

static struct wl_display *display;
static struct wl_pointer *pointer;
static struct wl_keyboard *keyboard;
static struct wl_touch *touch;
static void touch_bound(void *d, struct wl_callback *cb, uint32_t t) { (void)d; (void)t; say("seat touch bound"); wl_callback_destroy(cb); }
static const struct wl_callback_listener touch_bound_listener = { touch_bound };

static void seat_caps(void *d, struct wl_seat *s, uint32_t caps) {
    (void)d;
    say("seat pointer=%d keyboard=%d touch=%d", !!(caps & WL_SEAT_CAPABILITY_POINTER), !!(caps & WL_SEAT_CAPABILITY_KEYBOARD),
        !!(caps & WL_SEAT_CAPABILITY_TOUCH));
    if ((caps & WL_SEAT_CAPABILITY_POINTER) && !pointer) {
        pointer = wl_seat_get_pointer(s);
        wl_pointer_add_listener(pointer, &pointer_listener, NULL);
        if (gestures) {
            zwp_pointer_gesture_swipe_v1_add_listener(zwp_pointer_gestures_v1_get_swipe_gesture(gestures, pointer), &swipe_listener, NULL);
            zwp_pointer_gesture_pinch_v1_add_listener(zwp_pointer_gestures_v1_get_pinch_gesture(gestures, pointer), &pinch_listener, NULL);
        }
    }
    if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !keyboard) {
        keyboard = wl_seat_get_keyboard(s);
        wl_keyboard_add_listener(keyboard, &keyboard_listener, NULL);
    }
    /* The touch capability gone, the wl_touch is inert (wl_seat: a client asks for a new one when the
     * capability comes back, as toolkits do); Mutter sends nothing to the old one after that. */
    if (!(caps & WL_SEAT_CAPABILITY_TOUCH) && touch) {
        if (wl_touch_get_version(touch) >= WL_TOUCH_RELEASE_SINCE_VERSION) wl_touch_release(touch);
        else wl_touch_destroy(touch);
        touch = NULL;
    }
    if ((caps & WL_SEAT_CAPABILITY_TOUCH) && !touch) {
        touch = wl_seat_get_touch(s);
        wl_touch_add_listener(touch, &touch_listener, NULL);
        /* The `touch=1` line above is printed before this request leaves: a touch in between finds no
         * wl_touch of this client. The sync's answer comes after the compositor has made it. */
        wl_callback_add_listener(wl_display_sync(display), &touch_bound_listener, NULL);
    }
}
static void seat_name(void *d, struct wl_seat *s, const char *name) { (void)d; (void)s; (void)name; }
static const struct wl_seat_listener seat_listener = { seat_caps, seat_name };

/* Further seats: each one's pointer, its lines prefixed with the seat's name. Nothing else is asked of
 * them (no gestures: wlroots 0.15 takes a pointer that went for one that is there). */
struct other { struct wl_seat *seat; struct wl_pointer *pointer; struct wl_keyboard *keyboard; char name[64]; };
#define MAX_OTHERS 8
static struct other others[MAX_OTHERS];
static int n_others;
static void op_enter(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s, wl_fixed_t x, wl_fixed_t y) {
    (void)p; (void)serial; (void)s;
    say("other %s enter %.2f %.2f", ((struct other *)d)->name, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void op_leave(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s) { (void)d; (void)p; (void)serial; (void)s; }
static void op_motion(void *d, struct wl_pointer *p, uint32_t time, wl_fixed_t x, wl_fixed_t y) {
    (void)p; (void)time;
    say("other %s motion %.2f %.2f", ((struct other *)d)->name, wl_fixed_to_double(x), wl_fixed_to_double(y));
}
static void op_button(void *d, struct wl_pointer *p, uint32_t serial, uint32_t time, uint32_t button, uint32_t st) {
    (void)p; (void)serial; (void)time;
    say("other %s button %u %s", ((struct other *)d)->name, button, st == WL_POINTER_BUTTON_STATE_PRESSED ? "pressed" : "released");
}
static void op_axis(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis, wl_fixed_t v) { (void)d; (void)p; (void)time; (void)axis; (void)v; }
static void op_frame(void *d, struct wl_pointer *p) { (void)d; (void)p; }
static void op_axis_source(void *d, struct wl_pointer *p, uint32_t source) { (void)d; (void)p; (void)source; }
static void op_axis_stop(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis) { (void)d; (void)p; (void)time; (void)axis; }
static void op_axis_discrete(void *d, struct wl_pointer *p, uint32_t axis, int32_t n) { (void)d; (void)p; (void)axis; (void)n; }
static void op_axis_value120(void *d, struct wl_pointer *p, uint32_t axis, int32_t v) { (void)d; (void)p; (void)axis; (void)v; }
static const struct wl_pointer_listener other_pointer_listener = {
    op_enter, op_leave, op_motion, op_button, op_axis, op_frame, op_axis_source, op_axis_stop, op_axis_discrete, op_axis_value120,
};
static void ok_keymap(void *d, struct wl_keyboard *k, uint32_t format, int32_t fd, uint32_t size) { (void)d; (void)k; (void)format; (void)size; close(fd); }
static void ok_enter(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s, struct wl_array *keys) {
    (void)k; (void)serial; (void)s; (void)keys;
    say("other %s keyboard enter", ((struct other *)d)->name);
}
static void ok_leave(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s) { (void)d; (void)k; (void)serial; (void)s; }
static void ok_key(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t time, uint32_t key, uint32_t st) {
    (void)k; (void)serial; (void)time;
    say("other %s key %u %s", ((struct other *)d)->name, key, st == WL_KEYBOARD_KEY_STATE_PRESSED ? "pressed" : "released");
}
static void ok_modifiers(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t dep, uint32_t lat, uint32_t lock, uint32_t group) {
    (void)d; (void)k; (void)serial; (void)dep; (void)lat; (void)lock; (void)group;
}
static void ok_repeat(void *d, struct wl_keyboard *k, int32_t rate, int32_t delay) { (void)d; (void)k; (void)rate; (void)delay; }
static const struct wl_keyboard_listener other_keyboard_listener = { ok_keymap, ok_enter, ok_leave, ok_key, ok_modifiers, ok_repeat };

static void other_caps(void *d, struct wl_seat *s, uint32_t caps) {
    struct other *o = d;
    if ((caps & WL_SEAT_CAPABILITY_POINTER) && !o->pointer) {
        o->pointer = wl_seat_get_pointer(s);
        wl_pointer_add_listener(o->pointer, &other_pointer_listener, o);
    } else if (!(caps & WL_SEAT_CAPABILITY_POINTER) && o->pointer) {
        if (wl_pointer_get_version(o->pointer) >= WL_POINTER_RELEASE_SINCE_VERSION) wl_pointer_release(o->pointer);
        else wl_pointer_destroy(o->pointer);
        o->pointer = NULL;
    }
    if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !o->keyboard) {
        o->keyboard = wl_seat_get_keyboard(s);
        wl_keyboard_add_listener(o->keyboard, &other_keyboard_listener, o);
    } else if (!(caps & WL_SEAT_CAPABILITY_KEYBOARD) && o->keyboard) {
        if (wl_keyboard_get_version(o->keyboard) >= WL_KEYBOARD_RELEASE_SINCE_VERSION) wl_keyboard_release(o->keyboard);
        else wl_keyboard_destroy(o->keyboard);
        o->keyboard = NULL;
    }
}
static void other_name(void *d, struct wl_seat *s, const char *name) {
    (void)s;
    snprintf(((struct other *)d)->name, sizeof ((struct other *)d)->name, "%s", name);
    say("other %s seat", name);
}
static const struct wl_seat_listener other_seat_listener = { other_caps, other_name };

/* Outputs: their place (geometry) and current mode, printed at their done event (bound at version 2). */
#define MAX_OUTPUTS 8
static struct out { struct wl_output *o; int x, y, w, h; } outputs[MAX_OUTPUTS];
static int n_outputs;
static void o_geometry(void *d, struct wl_output *o, int32_t x, int32_t y, int32_t pw, int32_t ph, int32_t sub,
                       const char *make, const char *model, int32_t transform) {
    (void)o; (void)pw; (void)ph; (void)sub; (void)make; (void)model; (void)transform;
    struct out *u = d; u->x = x; u->y = y;
}
static void o_mode(void *d, struct wl_output *o, uint32_t flags, int32_t w, int32_t h, int32_t refresh) {
    (void)o; (void)refresh;
    struct out *u = d;
    if (flags & WL_OUTPUT_MODE_CURRENT) { u->w = w; u->h = h; }
}
static void o_done(void *d, struct wl_output *o) { (void)o; struct out *u = d; say("output %d %d %d %d", u->x, u->y, u->w, u->h); }
static void o_scale(void *d, struct wl_output *o, int32_t f) { (void)d; (void)o; (void)f; }
static const struct wl_output_listener output_listener = { o_geometry, o_mode, o_done, o_scale };

static int syncs;
static void sync_done(void *d, struct wl_callback *cb, uint32_t t) { (void)t; say("sync %d", (int)(intptr_t)d); wl_callback_destroy(cb); }
static const struct wl_callback_listener sync_listener = { sync_done };

static void global(void *d, struct wl_registry *r, uint32_t name, const char *iface, uint32_t version) {
    (void)d;
    if (!strcmp(iface, wl_compositor_interface.name)) compositor = wl_registry_bind(r, name, &wl_compositor_interface, 4);
    else if (!strcmp(iface, wl_shm_interface.name)) shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
    else if (!strcmp(iface, xdg_wm_base_interface.name)) {
        wm_base = wl_registry_bind(r, name, &xdg_wm_base_interface, 1);
        xdg_wm_base_add_listener(wm_base, &wm_listener, NULL);
    } else if (!strcmp(iface, wl_seat_interface.name) && !seat) {
        seat = wl_registry_bind(r, name, &wl_seat_interface, version < 8 ? version : 8);
        say("global wl_seat %u", version);
    } else if (!strcmp(iface, wl_seat_interface.name) && n_others < MAX_OTHERS) {
        struct other *o = &others[n_others++];
        snprintf(o->name, sizeof o->name, "?");
        o->seat = wl_registry_bind(r, name, &wl_seat_interface, version < 8 ? version : 8);
        wl_seat_add_listener(o->seat, &other_seat_listener, o);
    } else if (!strcmp(iface, zwp_pointer_gestures_v1_interface.name) && !gestures) {
        /* The first: sway before 1.10 offers one more for every further seat, and the first seat's
         * gestures come only through the first (touchbridge's --sway-seats). */
        gestures = wl_registry_bind(r, name, &zwp_pointer_gestures_v1_interface, 1);
        say("global zwp_pointer_gestures_v1");
    } else if (!strcmp(iface, wl_output_interface.name) && n_outputs < MAX_OUTPUTS) {
        struct out *u = &outputs[n_outputs++];
        u->o = wl_registry_bind(r, name, &wl_output_interface, version < 2 ? version : 2);
        wl_output_add_listener(u->o, &output_listener, u);
    } else if (!strcmp(iface, "zwp_virtual_keyboard_manager_v1")) {
        say("global zwp_virtual_keyboard_manager_v1");
    } else if (!strcmp(iface, zwp_tablet_manager_v2_interface.name)) {
        tablet_manager = wl_registry_bind(r, name, &zwp_tablet_manager_v2_interface, 1);
        say("global zwp_tablet_manager_v2");
    }
}
static void global_remove(void *d, struct wl_registry *r, uint32_t name) { (void)d; (void)r; (void)name; }
static const struct wl_registry_listener registry_listener = { global, global_remove };

int main(void) {
    display = wl_display_connect(NULL);
    if (!display) { fprintf(stderr, "wlwatch: cannot connect to the compositor\n"); return 1; }
    xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!compositor || !shm || !wm_base || !seat) { fprintf(stderr, "wlwatch: the compositor lacks a global\n"); return 1; }
    /* The seat's listener after every global is bound (the gestures manager included). */
    wl_seat_add_listener(seat, &seat_listener, NULL);
    if (tablet_manager) {
        zwp_tablet_seat_v2_add_listener(zwp_tablet_manager_v2_get_tablet_seat(tablet_manager, seat), &tablet_seat_listener, NULL);
        say("tablet seat");
    }
    surface = wl_compositor_create_surface(compositor);
    xdg_surface = xdg_wm_base_get_xdg_surface(wm_base, surface);
    xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, NULL);
    toplevel = xdg_surface_get_toplevel(xdg_surface);
    xdg_toplevel_add_listener(toplevel, &toplevel_listener, NULL);
    xdg_toplevel_set_title(toplevel, "wlwatch");
    struct wl_output *on = NULL;
    const char *at = getenv("WLWATCH_OUTPUT");
    if (at && *at) {
        int x, y;
        wl_display_roundtrip(display); /* the outputs' events */
        if (sscanf(at, "%d,%d", &x, &y) != 2) { fprintf(stderr, "wlwatch: WLWATCH_OUTPUT=%s is not X,Y\n", at); return 1; }
        for (int i = 0; i < n_outputs; i++)
            if (outputs[i].x == x && outputs[i].y == y) on = outputs[i].o;
        if (!on) { fprintf(stderr, "wlwatch: no output at %d,%d\n", x, y); return 1; }
    }
    xdg_toplevel_set_fullscreen(toplevel, on);
    wl_surface_commit(surface);
    /* The compositor's events, and stdin's lines: each one a wl_display.sync, answered by `sync N`. */
    int stdin_open = 1;
    char line[256];
    for (;;) {
        while (wl_display_prepare_read(display) != 0)
            if (wl_display_dispatch_pending(display) < 0) goto end;
        wl_display_flush(display);
        struct pollfd fds[2] = { { wl_display_get_fd(display), POLLIN, 0 }, { 0, POLLIN, 0 } };
        if (poll(fds, stdin_open ? 2 : 1, -1) < 0) { wl_display_cancel_read(display); continue; }
        if (fds[0].revents & POLLIN) { if (wl_display_read_events(display) < 0) goto end; }
        else wl_display_cancel_read(display);
        if (fds[0].revents & (POLLERR | POLLHUP)) goto end;
        if (wl_display_dispatch_pending(display) < 0) goto end;
        if (stdin_open && (fds[1].revents & (POLLIN | POLLHUP))) {
            ssize_t n = read(0, line, sizeof line);
            if (n <= 0) { stdin_open = 0; continue; }
            for (ssize_t i = 0; i < n; i++)
                if (line[i] == '\n') {
                    struct wl_callback *cb = wl_display_sync(display);
                    wl_callback_add_listener(cb, &sync_listener, (void *)(intptr_t)++syncs);
                }
        }
    }
end:
    fprintf(stderr, "wlwatch: the connection ended\n");
    return 0;
}
