// The xdg-output-unstable-v1 client glue (generated beside this file by scripts/wayland-protocols.sh
// from Debian wayland-protocols' unstable/xdg-output/xdg-output-unstable-v1.xml) and the address of its
// manager's interface, which Swift cannot take. Only TouchWayland imports this.
#ifndef TOUCHBRIDGE_TB_XDG_OUTPUT_H
#define TOUCHBRIDGE_TB_XDG_OUTPUT_H
#include "xdg-output-unstable-v1-client-protocol.h"

/// `&zxdg_output_manager_v1_interface`: what `wl_registry_bind` binds the xdg-output manager with.
static inline const struct wl_interface *tb_zxdg_output_manager_v1_interface(void) {
    return &zxdg_output_manager_v1_interface;
}
#endif
