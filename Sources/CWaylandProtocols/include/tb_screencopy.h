// The wlr-screencopy-unstable-v1 client glue (generated beside this file by scripts/wayland-protocols.sh
// from scripts/wayland/wlr-screencopy-unstable-v1.xml) and the addresses of the interfaces the live view
// binds, which Swift cannot take. Only TouchWayland imports this.
#ifndef TOUCHBRIDGE_TB_SCREENCOPY_H
#define TOUCHBRIDGE_TB_SCREENCOPY_H
#include "wlr-screencopy-unstable-v1-client-protocol.h"

/// `&zwlr_screencopy_manager_v1_interface`: what `wl_registry_bind` binds the screen copy manager with.
static inline const struct wl_interface *tb_zwlr_screencopy_manager_v1_interface(void) {
    return &zwlr_screencopy_manager_v1_interface;
}
/// `&wl_shm_interface`: what `wl_registry_bind` binds the shared-memory global with.
static inline const struct wl_interface *tb_wl_shm_interface(void) { return &wl_shm_interface; }
#endif
