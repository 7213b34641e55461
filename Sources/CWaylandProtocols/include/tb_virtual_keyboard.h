// The virtual-keyboard-unstable-v1 client glue (generated beside this file by scripts/wayland-protocols.sh
// from scripts/wayland/virtual-keyboard-unstable-v1.xml) and the address of its manager's interface,
// which Swift cannot take. Only TouchWayland imports this.
#ifndef TOUCHBRIDGE_TB_VIRTUAL_KEYBOARD_H
#define TOUCHBRIDGE_TB_VIRTUAL_KEYBOARD_H
#include "virtual-keyboard-unstable-v1-client-protocol.h"

/// `&zwp_virtual_keyboard_manager_v1_interface`: what `wl_registry_bind` binds the manager with.
static inline const struct wl_interface *tb_zwp_virtual_keyboard_manager_v1_interface(void) {
    return &zwp_virtual_keyboard_manager_v1_interface;
}
#endif
