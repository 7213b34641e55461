// The sd-bus and libei shims: dlopen of libsystemd.so.0 and of libei.so.1, one pointer per function,
// resolved once (see tb_portal.h).
#include "tb_portal.h"
#include <dlfcn.h>
#include <stdio.h>

static void *libei;
static char load_error[512];
static void *libsystemd;
static char sd_load_error[512];

/// A function a loader looks up: its name, and the pointer its address goes to.
struct tb_symbol {
    const char *name;
    void **pointer;
};
#define TB_SYMBOL(function) { #function, (void **)&p_##function }

/// Once: dlopen(library), then dlsym of every symbol into its pointer; `*loaded` keeps the handle. NULL
/// when every symbol is there, else why not, in `error`: the library missing (with `install`, what to
/// install) or a symbol missing (with `too_old`, appended).
static const char *tb_load(const char *library, const char *install, const char *too_old, void **loaded,
                           const struct tb_symbol *symbols, size_t count, char *error, size_t error_size) {
    if (*loaded) return NULL;
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(error, error_size, "cannot load %s (%s): %s", library, dlerror(), install);
        return error;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*symbols[i].pointer = dlsym(handle, symbols[i].name))) {
            snprintf(error, error_size, "%s lacks %s%s", library, symbols[i].name, too_old);
            dlclose(handle);
            return error;
        }
    }
    *loaded = handle;
    return NULL;
}

static int (*p_sd_bus_call)(sd_bus *, sd_bus_message *, uint64_t, sd_bus_error *, sd_bus_message **);
int tb_sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply) { return p_sd_bus_call(bus, m, usec, ret_error, reply); }
static void (*p_sd_bus_error_free)(sd_bus_error *);
void tb_sd_bus_error_free(sd_bus_error *e) { p_sd_bus_error_free(e); }
static sd_bus * (*p_sd_bus_flush_close_unref)(sd_bus *);
sd_bus * tb_sd_bus_flush_close_unref(sd_bus *bus) { return p_sd_bus_flush_close_unref(bus); }
static int (*p_sd_bus_get_unique_name)(sd_bus *, const char **);
int tb_sd_bus_get_unique_name(sd_bus *bus, const char **unique) { return p_sd_bus_get_unique_name(bus, unique); }
static int (*p_sd_bus_match_signal)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *, const char *, sd_bus_message_handler_t, void *);
int tb_sd_bus_match_signal(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface, const char *member, sd_bus_message_handler_t callback, void *userdata) { return p_sd_bus_match_signal(bus, ret, sender, path, interface, member, callback, userdata); }
static int (*p_sd_bus_message_append_basic)(sd_bus_message *, char, const void *);
int tb_sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p) { return p_sd_bus_message_append_basic(m, type, p); }
static int (*p_sd_bus_message_close_container)(sd_bus_message *);
int tb_sd_bus_message_close_container(sd_bus_message *m) { return p_sd_bus_message_close_container(m); }
static int (*p_sd_bus_message_enter_container)(sd_bus_message *, char, const char *);
int tb_sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) { return p_sd_bus_message_enter_container(m, type, contents); }
static int (*p_sd_bus_message_exit_container)(sd_bus_message *);
int tb_sd_bus_message_exit_container(sd_bus_message *m) { return p_sd_bus_message_exit_container(m); }
static int (*p_sd_bus_message_new_method_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *, const char *);
int tb_sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member) { return p_sd_bus_message_new_method_call(bus, m, destination, path, interface, member); }
static int (*p_sd_bus_message_open_container)(sd_bus_message *, char, const char *);
int tb_sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents) { return p_sd_bus_message_open_container(m, type, contents); }
static int (*p_sd_bus_message_peek_type)(sd_bus_message *, char *, const char **);
int tb_sd_bus_message_peek_type(sd_bus_message *m, char *type, const char **contents) { return p_sd_bus_message_peek_type(m, type, contents); }
static int (*p_sd_bus_message_read_basic)(sd_bus_message *, char, void *);
int tb_sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) { return p_sd_bus_message_read_basic(m, type, p); }
static sd_bus_message * (*p_sd_bus_message_ref)(sd_bus_message *);
sd_bus_message * tb_sd_bus_message_ref(sd_bus_message *m) { return p_sd_bus_message_ref(m); }
static int (*p_sd_bus_message_rewind)(sd_bus_message *, int);
int tb_sd_bus_message_rewind(sd_bus_message *m, int complete) { return p_sd_bus_message_rewind(m, complete); }
static int (*p_sd_bus_message_seal)(sd_bus_message *, uint64_t, uint64_t);
int tb_sd_bus_message_seal(sd_bus_message *m, uint64_t cookie, uint64_t timeout_usec) { return p_sd_bus_message_seal(m, cookie, timeout_usec); }
static int (*p_sd_bus_message_skip)(sd_bus_message *, const char *);
int tb_sd_bus_message_skip(sd_bus_message *m, const char *types) { return p_sd_bus_message_skip(m, types); }
static sd_bus_message * (*p_sd_bus_message_unref)(sd_bus_message *);
sd_bus_message * tb_sd_bus_message_unref(sd_bus_message *m) { return p_sd_bus_message_unref(m); }
static int (*p_sd_bus_new)(sd_bus **);
int tb_sd_bus_new(sd_bus **ret) { return p_sd_bus_new(ret); }
static int (*p_sd_bus_process)(sd_bus *, sd_bus_message **);
int tb_sd_bus_process(sd_bus *bus, sd_bus_message **r) { return p_sd_bus_process(bus, r); }
static int (*p_sd_bus_set_address)(sd_bus *, const char *);
int tb_sd_bus_set_address(sd_bus *bus, const char *address) { return p_sd_bus_set_address(bus, address); }
static int (*p_sd_bus_set_bus_client)(sd_bus *, int);
int tb_sd_bus_set_bus_client(sd_bus *bus, int b) { return p_sd_bus_set_bus_client(bus, b); }
static sd_bus_slot * (*p_sd_bus_slot_unref)(sd_bus_slot *);
sd_bus_slot * tb_sd_bus_slot_unref(sd_bus_slot *slot) { return p_sd_bus_slot_unref(slot); }
static int (*p_sd_bus_start)(sd_bus *);
int tb_sd_bus_start(sd_bus *bus) { return p_sd_bus_start(bus); }
static sd_bus * (*p_sd_bus_unref)(sd_bus *);
sd_bus * tb_sd_bus_unref(sd_bus *bus) { return p_sd_bus_unref(bus); }
static int (*p_sd_bus_wait)(sd_bus *, uint64_t);
int tb_sd_bus_wait(sd_bus *bus, uint64_t timeout_usec) { return p_sd_bus_wait(bus, timeout_usec); }

/// sd-bus's functions, each with its pointer.
static const struct tb_symbol sd_bus_symbols[] = {
    TB_SYMBOL(sd_bus_call),
    TB_SYMBOL(sd_bus_error_free),
    TB_SYMBOL(sd_bus_flush_close_unref),
    TB_SYMBOL(sd_bus_get_unique_name),
    TB_SYMBOL(sd_bus_match_signal),
    TB_SYMBOL(sd_bus_message_append_basic),
    TB_SYMBOL(sd_bus_message_close_container),
    TB_SYMBOL(sd_bus_message_enter_container),
    TB_SYMBOL(sd_bus_message_exit_container),
    TB_SYMBOL(sd_bus_message_new_method_call),
    TB_SYMBOL(sd_bus_message_open_container),
    TB_SYMBOL(sd_bus_message_peek_type),
    TB_SYMBOL(sd_bus_message_read_basic),
    TB_SYMBOL(sd_bus_message_ref),
    TB_SYMBOL(sd_bus_message_rewind),
    TB_SYMBOL(sd_bus_message_seal),
    TB_SYMBOL(sd_bus_message_skip),
    TB_SYMBOL(sd_bus_message_unref),
    TB_SYMBOL(sd_bus_new),
    TB_SYMBOL(sd_bus_process),
    TB_SYMBOL(sd_bus_set_address),
    TB_SYMBOL(sd_bus_set_bus_client),
    TB_SYMBOL(sd_bus_slot_unref),
    TB_SYMBOL(sd_bus_start),
    TB_SYMBOL(sd_bus_unref),
    TB_SYMBOL(sd_bus_wait),
};

const char *tb_sd_bus_load(void) {
    return tb_load("libsystemd.so.0", "install libsystemd0", "", &libsystemd, sd_bus_symbols,
                   sizeof sd_bus_symbols / sizeof *sd_bus_symbols, sd_load_error, sizeof sd_load_error);
}


static struct ei *(*p_ei_new_sender)(void *);
struct ei * tb_ei_new_sender(void) { return p_ei_new_sender(NULL); }
static struct ei * (*p_ei_unref)(struct ei *);
struct ei * tb_ei_unref(struct ei *ei) { return p_ei_unref(ei); }
static void (*p_ei_configure_name)(struct ei *, const char *);
void tb_ei_configure_name(struct ei *ei, const char *name) { p_ei_configure_name(ei, name); }
static int (*p_ei_setup_backend_fd)(struct ei *, int);
int tb_ei_setup_backend_fd(struct ei *ei, int fd) { return p_ei_setup_backend_fd(ei, fd); }
static int (*p_ei_get_fd)(struct ei *);
int tb_ei_get_fd(struct ei *ei) { return p_ei_get_fd(ei); }
static void (*p_ei_dispatch)(struct ei *);
void tb_ei_dispatch(struct ei *ei) { p_ei_dispatch(ei); }
static struct ei_event * (*p_ei_get_event)(struct ei *);
struct ei_event * tb_ei_get_event(struct ei *ei) { return p_ei_get_event(ei); }
static uint64_t (*p_ei_now)(struct ei *);
uint64_t tb_ei_now(struct ei *ei) { return p_ei_now(ei); }
static void (*p_ei_disconnect)(struct ei *);
void tb_ei_disconnect(struct ei *ei) { p_ei_disconnect(ei); }
static int (*p_ei_event_get_type)(struct ei_event *);
int tb_ei_event_get_type(struct ei_event *event) { return p_ei_event_get_type(event); }
static struct ei_event * (*p_ei_event_unref)(struct ei_event *);
struct ei_event * tb_ei_event_unref(struct ei_event *event) { return p_ei_event_unref(event); }
static struct ei_seat * (*p_ei_event_get_seat)(struct ei_event *);
struct ei_seat * tb_ei_event_get_seat(struct ei_event *event) { return p_ei_event_get_seat(event); }
static struct ei_device * (*p_ei_event_get_device)(struct ei_event *);
struct ei_device * tb_ei_event_get_device(struct ei_event *event) { return p_ei_event_get_device(event); }
static struct ei_device * (*p_ei_device_ref)(struct ei_device *);
struct ei_device * tb_ei_device_ref(struct ei_device *device) { return p_ei_device_ref(device); }
static struct ei_device * (*p_ei_device_unref)(struct ei_device *);
struct ei_device * tb_ei_device_unref(struct ei_device *device) { return p_ei_device_unref(device); }
static const char * (*p_ei_device_get_name)(struct ei_device *);
const char * tb_ei_device_get_name(struct ei_device *device) { return p_ei_device_get_name(device); }
static bool (*p_ei_device_has_capability)(struct ei_device *, uint32_t);
bool tb_ei_device_has_capability(struct ei_device *device, uint32_t capability) { return p_ei_device_has_capability(device, capability); }
static struct ei_region * (*p_ei_device_get_region)(struct ei_device *, size_t);
struct ei_region * tb_ei_device_get_region(struct ei_device *device, size_t index) { return p_ei_device_get_region(device, index); }
static uint32_t (*p_ei_region_get_x)(struct ei_region *);
uint32_t tb_ei_region_get_x(struct ei_region *region) { return p_ei_region_get_x(region); }
static uint32_t (*p_ei_region_get_y)(struct ei_region *);
uint32_t tb_ei_region_get_y(struct ei_region *region) { return p_ei_region_get_y(region); }
static uint32_t (*p_ei_region_get_width)(struct ei_region *);
uint32_t tb_ei_region_get_width(struct ei_region *region) { return p_ei_region_get_width(region); }
static uint32_t (*p_ei_region_get_height)(struct ei_region *);
uint32_t tb_ei_region_get_height(struct ei_region *region) { return p_ei_region_get_height(region); }
static struct ei_keymap * (*p_ei_device_keyboard_get_keymap)(struct ei_device *);
struct ei_keymap * tb_ei_device_keyboard_get_keymap(struct ei_device *device) { return p_ei_device_keyboard_get_keymap(device); }
static int (*p_ei_keymap_get_type)(struct ei_keymap *);
int tb_ei_keymap_get_type(struct ei_keymap *keymap) { return p_ei_keymap_get_type(keymap); }
static int (*p_ei_keymap_get_fd)(struct ei_keymap *);
int tb_ei_keymap_get_fd(struct ei_keymap *keymap) { return p_ei_keymap_get_fd(keymap); }
static size_t (*p_ei_keymap_get_size)(struct ei_keymap *);
size_t tb_ei_keymap_get_size(struct ei_keymap *keymap) { return p_ei_keymap_get_size(keymap); }
static void (*p_ei_device_start_emulating)(struct ei_device *, uint32_t);
void tb_ei_device_start_emulating(struct ei_device *device, uint32_t sequence) { p_ei_device_start_emulating(device, sequence); }
static void (*p_ei_device_stop_emulating)(struct ei_device *);
void tb_ei_device_stop_emulating(struct ei_device *device) { p_ei_device_stop_emulating(device); }
static void (*p_ei_device_frame)(struct ei_device *, uint64_t);
void tb_ei_device_frame(struct ei_device *device, uint64_t time) { p_ei_device_frame(device, time); }
static void (*p_ei_device_pointer_motion)(struct ei_device *, double, double);
void tb_ei_device_pointer_motion(struct ei_device *device, double x, double y) { p_ei_device_pointer_motion(device, x, y); }
static void (*p_ei_device_pointer_motion_absolute)(struct ei_device *, double, double);
void tb_ei_device_pointer_motion_absolute(struct ei_device *device, double x, double y) { p_ei_device_pointer_motion_absolute(device, x, y); }
static void (*p_ei_device_button_button)(struct ei_device *, uint32_t, bool);
void tb_ei_device_button_button(struct ei_device *device, uint32_t button, bool is_press) { p_ei_device_button_button(device, button, is_press); }
static void (*p_ei_device_scroll_delta)(struct ei_device *, double, double);
void tb_ei_device_scroll_delta(struct ei_device *device, double x, double y) { p_ei_device_scroll_delta(device, x, y); }
static void (*p_ei_device_scroll_discrete)(struct ei_device *, int32_t, int32_t);
void tb_ei_device_scroll_discrete(struct ei_device *device, int32_t x, int32_t y) { p_ei_device_scroll_discrete(device, x, y); }
static void (*p_ei_device_keyboard_key)(struct ei_device *, uint32_t, bool);
void tb_ei_device_keyboard_key(struct ei_device *device, uint32_t keycode, bool is_press) { p_ei_device_keyboard_key(device, keycode, is_press); }
static struct ei_touch * (*p_ei_device_touch_new)(struct ei_device *);
struct ei_touch * tb_ei_device_touch_new(struct ei_device *device) { return p_ei_device_touch_new(device); }
static void (*p_ei_touch_down)(struct ei_touch *, double, double);
void tb_ei_touch_down(struct ei_touch *touch, double x, double y) { p_ei_touch_down(touch, x, y); }
static void (*p_ei_touch_motion)(struct ei_touch *, double, double);
void tb_ei_touch_motion(struct ei_touch *touch, double x, double y) { p_ei_touch_motion(touch, x, y); }
static void (*p_ei_touch_up)(struct ei_touch *);
void tb_ei_touch_up(struct ei_touch *touch) { p_ei_touch_up(touch); }
static struct ei_touch * (*p_ei_touch_unref)(struct ei_touch *);
struct ei_touch * tb_ei_touch_unref(struct ei_touch *touch) { return p_ei_touch_unref(touch); }
static void (*p_ei_seat_bind_capabilities)(struct ei_seat *, ...);
void tb_ei_seat_bind_capabilities(struct ei_seat *seat, uint32_t c) {
    // The variadic call, with each capability asked for or skipped, NULL-terminated.
    void (*bind)(struct ei_seat *, ...) = p_ei_seat_bind_capabilities;
    int caps[6];
    int n = 0;
    for (int bit = 0; bit < 6; bit++) {
        if (c & (1u << bit)) caps[n++] = 1 << bit;
    }
    switch (n) {
    case 0: return;
    case 1: bind(seat, caps[0], NULL); break;
    case 2: bind(seat, caps[0], caps[1], NULL); break;
    case 3: bind(seat, caps[0], caps[1], caps[2], NULL); break;
    case 4: bind(seat, caps[0], caps[1], caps[2], caps[3], NULL); break;
    case 5: bind(seat, caps[0], caps[1], caps[2], caps[3], caps[4], NULL); break;
    default: bind(seat, caps[0], caps[1], caps[2], caps[3], caps[4], caps[5], NULL); break;
    }
}

/// libei's functions, each with its pointer.
static const struct tb_symbol ei_symbols[] = {
    TB_SYMBOL(ei_new_sender),
    TB_SYMBOL(ei_unref),
    TB_SYMBOL(ei_configure_name),
    TB_SYMBOL(ei_setup_backend_fd),
    TB_SYMBOL(ei_get_fd),
    TB_SYMBOL(ei_dispatch),
    TB_SYMBOL(ei_get_event),
    TB_SYMBOL(ei_now),
    TB_SYMBOL(ei_disconnect),
    TB_SYMBOL(ei_event_get_type),
    TB_SYMBOL(ei_event_unref),
    TB_SYMBOL(ei_event_get_seat),
    TB_SYMBOL(ei_event_get_device),
    TB_SYMBOL(ei_device_ref),
    TB_SYMBOL(ei_device_unref),
    TB_SYMBOL(ei_device_get_name),
    TB_SYMBOL(ei_device_has_capability),
    TB_SYMBOL(ei_device_get_region),
    TB_SYMBOL(ei_region_get_x),
    TB_SYMBOL(ei_region_get_y),
    TB_SYMBOL(ei_region_get_width),
    TB_SYMBOL(ei_region_get_height),
    TB_SYMBOL(ei_device_keyboard_get_keymap),
    TB_SYMBOL(ei_keymap_get_type),
    TB_SYMBOL(ei_keymap_get_fd),
    TB_SYMBOL(ei_keymap_get_size),
    TB_SYMBOL(ei_device_start_emulating),
    TB_SYMBOL(ei_device_stop_emulating),
    TB_SYMBOL(ei_device_frame),
    TB_SYMBOL(ei_device_pointer_motion),
    TB_SYMBOL(ei_device_pointer_motion_absolute),
    TB_SYMBOL(ei_device_button_button),
    TB_SYMBOL(ei_device_scroll_delta),
    TB_SYMBOL(ei_device_scroll_discrete),
    TB_SYMBOL(ei_device_keyboard_key),
    TB_SYMBOL(ei_device_touch_new),
    TB_SYMBOL(ei_touch_down),
    TB_SYMBOL(ei_touch_motion),
    TB_SYMBOL(ei_touch_up),
    TB_SYMBOL(ei_touch_unref),
    TB_SYMBOL(ei_seat_bind_capabilities),
};

const char *tb_ei_load(void) {
    return tb_load("libei.so.1",
                   "install libei1 (Debian 13 and later; GNOME 45 and Plasma 6.1 or later offer the portal input)",
                   ": it is older than libei 1.0", &libei, ei_symbols, sizeof ei_symbols / sizeof *ei_symbols,
                   load_error, sizeof load_error);
}

