// The C side of touchbridge's X11 output: the headers it needs and static inline wrappers for the
// few things Xlib offers only as macros, which Swift cannot import. Only TouchX11 imports this.
// Debian: libx11-dev libxtst-dev libxi-dev libxrandr-dev libxext-dev libcairo2-dev; the XTest input
// requests through the display's xcb connection: libx11-xcb-dev libxcb-xtest0-dev. The live view:
// MIT-SHM (libxext-dev), libxfixes-dev; XDamage and TurboJPEG are loaded at run time (CCapture).
#ifndef TOUCHBRIDGE_CX11_SHIM_H
#define TOUCHBRIDGE_CX11_SHIM_H
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>
#include <X11/Xlib-xcb.h>
#include <xcb/xcb.h>
#include <xcb/xtest.h>
#include <X11/extensions/XInput2.h>
#include <X11/extensions/Xrandr.h>
#include <X11/extensions/shape.h>
#include <cairo/cairo.h>
#include <cairo/cairo-xlib.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xfixes.h>
#include <sys/ipc.h>
#include <sys/shm.h>

/// `XISetMask` is a macro.
static inline void tb_xi_set_mask(unsigned char *mask, int event) { XISetMask(mask, event); }
/// `XIMaskLen` is a macro.
static inline int tb_xi_mask_len(int event) { return XIMaskLen(event); }
/// `xcb_test_id`, libxcb-xtest's key for the XTEST extension, is a global of a type xcb.h leaves
/// incomplete, which Swift cannot import: its address.
static inline xcb_extension_t *tb_xcb_test_extension(void) { return &xcb_test_id; }
/// `XDestroyImage` is a macro (the image's own destroy function).
static inline int tb_destroy_image(XImage *image) { return XDestroyImage(image); }
#endif
