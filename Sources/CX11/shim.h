#ifndef TOUCHBRIDGE_CX11_SHIM_H
#define TOUCHBRIDGE_CX11_SHIM_H
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/extensions/XInput2.h>
#include <X11/extensions/Xrandr.h>
#endif
