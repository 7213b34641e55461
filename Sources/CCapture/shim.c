// The live view's shims: dlopen of libXdamage.so.1 and libturbojpeg.so.0, one pointer per function,
// resolved once (see tb_capture.h).
#include "tb_capture.h"
#include <dlfcn.h>
#include <stdio.h>

static void *libxdamage;
static void *libturbojpeg;
static char load_error[512];

/// A function the loader looks up: its name, and the pointer its address goes to.
struct tb_symbol {
    const char *name;
    void **pointer;
};
#define TB_SYMBOL(function) { #function, (void **)&p_##function }

static Bool (*p_XDamageQueryExtension)(Display *, int *, int *);
Bool tb_XDamageQueryExtension(Display *display, int *event_base, int *error_base) { return p_XDamageQueryExtension(display, event_base, error_base); }
static Damage (*p_XDamageCreate)(Display *, Drawable, int);
Damage tb_XDamageCreate(Display *display, Drawable drawable, int level) { return p_XDamageCreate(display, drawable, level); }
static void (*p_XDamageSubtract)(Display *, Damage, XserverRegion, XserverRegion);
void tb_XDamageSubtract(Display *display, Damage damage, XserverRegion repair, XserverRegion parts) { p_XDamageSubtract(display, damage, repair, parts); }
static void (*p_XDamageDestroy)(Display *, Damage);
void tb_XDamageDestroy(Display *display, Damage damage) { p_XDamageDestroy(display, damage); }

static tjhandle (*p_tjInitCompress)(void);
tjhandle tb_tjInitCompress(void) { return p_tjInitCompress(); }
static int (*p_tjCompress2)(tjhandle, const unsigned char *, int, int, int, int, unsigned char **, unsigned long *, int, int, int);
int tb_tjCompress2(tjhandle handle, const unsigned char *source, int width, int pitch, int height, int pixel_format,
                   unsigned char **jpeg, unsigned long *jpeg_size, int subsampling, int quality, int flags) {
    return p_tjCompress2(handle, source, width, pitch, height, pixel_format, jpeg, jpeg_size, subsampling, quality, flags);
}
static char * (*p_tjGetErrorStr2)(tjhandle);
char *tb_tjGetErrorStr2(tjhandle handle) { return p_tjGetErrorStr2(handle); }
static void (*p_tjFree)(unsigned char *);
void tb_tjFree(unsigned char *buffer) { p_tjFree(buffer); }
static int (*p_tjDestroy)(tjhandle);
int tb_tjDestroy(tjhandle handle) { return p_tjDestroy(handle); }

/// dlopen(library), then dlsym of every symbol into its pointer; `*loaded` keeps the handle. NULL when
/// every symbol is there, else why not.
static const char *load(const char *library, const char *package, void **loaded, const struct tb_symbol *symbols, size_t count) {
    if (*loaded) return NULL;
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "cannot load %s (%s): install %s", library, dlerror(), package);
        return load_error;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*symbols[i].pointer = dlsym(handle, symbols[i].name))) {
            snprintf(load_error, sizeof load_error, "%s lacks %s", library, symbols[i].name);
            dlclose(handle);
            return load_error;
        }
    }
    *loaded = handle;
    return NULL;
}

const char *tb_capture_load(void) {
    static const struct tb_symbol damage[] = {
        TB_SYMBOL(XDamageQueryExtension), TB_SYMBOL(XDamageCreate), TB_SYMBOL(XDamageSubtract), TB_SYMBOL(XDamageDestroy),
    };
    static const struct tb_symbol jpeg[] = {
        TB_SYMBOL(tjInitCompress), TB_SYMBOL(tjCompress2), TB_SYMBOL(tjGetErrorStr2), TB_SYMBOL(tjFree), TB_SYMBOL(tjDestroy),
    };
    const char *error = load("libXdamage.so.1", "libxdamage1", &libxdamage, damage, sizeof damage / sizeof damage[0]);
    if (error) return error;
    return load("libturbojpeg.so.0", "libturbojpeg0", &libturbojpeg, jpeg, sizeof jpeg / sizeof jpeg[0]);
}
