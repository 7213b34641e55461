// The live view's libraries, loaded at run time (dlopen): libXdamage.so.1 (what changed on the screen) and
// libturbojpeg.so.0 (the frames' JPEG). A daemon that never views, or a machine without them, maps
// neither: touchbridge starts without them and the page says there is no picture. The types and
// constants come from the headers (Debian: libxdamage-dev, libturbojpeg0-dev); no library is linked.
// Only TouchX11 imports this.
#ifndef TOUCHBRIDGE_TB_CAPTURE_H
#define TOUCHBRIDGE_TB_CAPTURE_H
#include <X11/Xlib.h>
#include <X11/extensions/Xdamage.h>
#include <turbojpeg.h>

/// Loads both libraries and every function below, once: NULL when they are there, else why not
/// (which library is missing and the package that has it). Safe to call again; not thread-safe.
const char *tb_capture_load(void);

/// `XDamageNotify` is a macro: the damage event's offset from the extension's first event (a constant,
/// no library needed).
static inline int tb_damage_notify(void) { return XDamageNotify; }

Bool tb_XDamageQueryExtension(Display *display, int *event_base, int *error_base);
Damage tb_XDamageCreate(Display *display, Drawable drawable, int level);
void tb_XDamageSubtract(Display *display, Damage damage, XserverRegion repair, XserverRegion parts);
void tb_XDamageDestroy(Display *display, Damage damage);

tjhandle tb_tjInitCompress(void);
int tb_tjCompress2(tjhandle handle, const unsigned char *source, int width, int pitch, int height, int pixel_format,
                   unsigned char **jpeg, unsigned long *jpeg_size, int subsampling, int quality, int flags);
char *tb_tjGetErrorStr2(tjhandle handle);
void tb_tjFree(unsigned char *buffer);
int tb_tjDestroy(tjhandle handle);

#endif
