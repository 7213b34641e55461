// The C side of touchbridge's Wayland desktop: libwayland-client and libxkbcommon, and static inline
// helpers for what Swift cannot take the address of (the interfaces are `extern const` structs).
// Only TouchWayland (and CWaylandProtocols) import this. Debian: libwayland-dev libxkbcommon-dev.
#ifndef TOUCHBRIDGE_CWAYLAND_SHIM_H
#define TOUCHBRIDGE_CWAYLAND_SHIM_H
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

/// `&wl_output_interface`: what `wl_registry_bind` binds a `wl_output` with.
static inline const struct wl_interface *tb_wl_output_interface(void) { return &wl_output_interface; }
/// `&wl_seat_interface`: what `wl_registry_bind` binds a `wl_seat` with.
static inline const struct wl_interface *tb_wl_seat_interface(void) { return &wl_seat_interface; }

/// glibc's `memfd_create` (declared by <sys/mman.h> only under _GNU_SOURCE, which Swift's Glibc module
/// lacks): an anonymous file for the keymap a virtual keyboard sends.
int memfd_create(const char *name, unsigned int flags);
/// `memfd_create(name, MFD_CLOEXEC)` (MFD_CLOEXEC is 1).
static inline int tb_memfd_create(const char *name) { return memfd_create(name, 1U); }
#endif
