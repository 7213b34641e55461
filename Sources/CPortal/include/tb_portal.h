// The portal output's C layer: sd-bus (`libsystemd.so.0`) for the RemoteDesktop portal, and libei
// (`libei.so.1`: Debian 12 has none) as an input sender, both loaded at run time with dlopen, so that a
// daemon on another backend maps neither library nor what they pull in (libsystemd brings libgcrypt,
// liblz4, libzstd, liblzma and libcap: 0.8 MB resident). Only the functions touchbridge uses are
// declared here, by hand (tb_sd_bus_*, tb_ei_*), each calling the function of the same name without the
// tb_ prefix once tb_sd_bus_load() or tb_ei_load() found it; sd-bus.h gives the types and constants.
// The variadic seat binding is done here, since Swift cannot call a variadic C function. Only
// TouchPortal's EIContext.swift calls the tb_ei_* functions, only its DBusConnection.swift the
// tb_sd_bus_* ones.
#ifndef TB_PORTAL_H
#define TB_PORTAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/// Loads libsystemd.so.0 and resolves every tb_sd_bus_* function below. NULL when it is ready (also on
/// later calls); else why not, in words (a static buffer). No tb_sd_bus_* function but this one may be
/// called before it returned NULL.
const char *tb_sd_bus_load(void);

int tb_sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply);
void tb_sd_bus_error_free(sd_bus_error *e);
sd_bus *tb_sd_bus_flush_close_unref(sd_bus *bus);
int tb_sd_bus_get_unique_name(sd_bus *bus, const char **unique);
int tb_sd_bus_match_signal(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface, const char *member, sd_bus_message_handler_t callback, void *userdata);
int tb_sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p);
int tb_sd_bus_message_close_container(sd_bus_message *m);
int tb_sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents);
int tb_sd_bus_message_exit_container(sd_bus_message *m);
int tb_sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member);
int tb_sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents);
int tb_sd_bus_message_peek_type(sd_bus_message *m, char *type, const char **contents);
int tb_sd_bus_message_read_basic(sd_bus_message *m, char type, void *p);
sd_bus_message *tb_sd_bus_message_ref(sd_bus_message *m);
int tb_sd_bus_message_rewind(sd_bus_message *m, int complete);
int tb_sd_bus_message_seal(sd_bus_message *m, uint64_t cookie, uint64_t timeout_usec);
int tb_sd_bus_message_skip(sd_bus_message *m, const char *types);
sd_bus_message *tb_sd_bus_message_unref(sd_bus_message *m);
int tb_sd_bus_new(sd_bus **ret);
int tb_sd_bus_process(sd_bus *bus, sd_bus_message **r);
int tb_sd_bus_set_address(sd_bus *bus, const char *address);
int tb_sd_bus_set_bus_client(sd_bus *bus, int b);
sd_bus_slot *tb_sd_bus_slot_unref(sd_bus_slot *slot);
int tb_sd_bus_start(sd_bus *bus);
sd_bus *tb_sd_bus_unref(sd_bus *bus);
int tb_sd_bus_wait(sd_bus *bus, uint64_t timeout_usec);

struct ei;
struct ei_event;
struct ei_seat;
struct ei_device;
struct ei_touch;
struct ei_region;
struct ei_keymap;

// libei 1.x's values (enum ei_event_type, enum ei_device_capability, enum ei_keymap_type).
enum {
    TB_EI_EVENT_CONNECT = 1,
    TB_EI_EVENT_DISCONNECT = 2,
    TB_EI_EVENT_SEAT_ADDED = 3,
    TB_EI_EVENT_SEAT_REMOVED = 4,
    TB_EI_EVENT_DEVICE_ADDED = 5,
    TB_EI_EVENT_DEVICE_REMOVED = 6,
    TB_EI_EVENT_DEVICE_PAUSED = 7,
    TB_EI_EVENT_DEVICE_RESUMED = 8,
    TB_EI_EVENT_KEYBOARD_MODIFIERS = 9,
};
enum {
    TB_EI_CAP_POINTER = 1 << 0,
    TB_EI_CAP_POINTER_ABSOLUTE = 1 << 1,
    TB_EI_CAP_KEYBOARD = 1 << 2,
    TB_EI_CAP_TOUCH = 1 << 3,
    TB_EI_CAP_SCROLL = 1 << 4,
    TB_EI_CAP_BUTTON = 1 << 5,
};

/// Loads libei.so.1 and resolves every function below. NULL when it is ready (also on later calls);
/// else why not, in words (a static buffer). No tb_ei_* function but this one may be called before it
/// returned NULL.
const char *tb_ei_load(void);

struct ei *tb_ei_new_sender(void);
struct ei *tb_ei_unref(struct ei *ei);
void tb_ei_configure_name(struct ei *ei, const char *name);
int tb_ei_setup_backend_fd(struct ei *ei, int fd);
int tb_ei_get_fd(struct ei *ei);
void tb_ei_dispatch(struct ei *ei);
struct ei_event *tb_ei_get_event(struct ei *ei);
uint64_t tb_ei_now(struct ei *ei);
void tb_ei_disconnect(struct ei *ei);

int tb_ei_event_get_type(struct ei_event *event);
struct ei_event *tb_ei_event_unref(struct ei_event *event);
struct ei_seat *tb_ei_event_get_seat(struct ei_event *event);
struct ei_device *tb_ei_event_get_device(struct ei_event *event);

/// ei_seat_bind_capabilities with every capability in `capabilities` (TB_EI_CAP_* bits), NULL-terminated.
void tb_ei_seat_bind_capabilities(struct ei_seat *seat, uint32_t capabilities);

struct ei_device *tb_ei_device_ref(struct ei_device *device);
struct ei_device *tb_ei_device_unref(struct ei_device *device);
const char *tb_ei_device_get_name(struct ei_device *device);
bool tb_ei_device_has_capability(struct ei_device *device, uint32_t capability);
struct ei_region *tb_ei_device_get_region(struct ei_device *device, size_t index);
uint32_t tb_ei_region_get_x(struct ei_region *region);
uint32_t tb_ei_region_get_y(struct ei_region *region);
uint32_t tb_ei_region_get_width(struct ei_region *region);
uint32_t tb_ei_region_get_height(struct ei_region *region);
struct ei_keymap *tb_ei_device_keyboard_get_keymap(struct ei_device *device);
int tb_ei_keymap_get_type(struct ei_keymap *keymap);
int tb_ei_keymap_get_fd(struct ei_keymap *keymap);
size_t tb_ei_keymap_get_size(struct ei_keymap *keymap);

void tb_ei_device_start_emulating(struct ei_device *device, uint32_t sequence);
void tb_ei_device_stop_emulating(struct ei_device *device);
void tb_ei_device_frame(struct ei_device *device, uint64_t time);
void tb_ei_device_pointer_motion(struct ei_device *device, double x, double y);
void tb_ei_device_pointer_motion_absolute(struct ei_device *device, double x, double y);
void tb_ei_device_button_button(struct ei_device *device, uint32_t button, bool is_press);
void tb_ei_device_scroll_delta(struct ei_device *device, double x, double y);
void tb_ei_device_scroll_discrete(struct ei_device *device, int32_t x, int32_t y);
void tb_ei_device_keyboard_key(struct ei_device *device, uint32_t keycode, bool is_press);
struct ei_touch *tb_ei_device_touch_new(struct ei_device *device);
void tb_ei_touch_down(struct ei_touch *touch, double x, double y);
void tb_ei_touch_motion(struct ei_touch *touch, double x, double y);
void tb_ei_touch_up(struct ei_touch *touch);
struct ei_touch *tb_ei_touch_unref(struct ei_touch *touch);

#endif
