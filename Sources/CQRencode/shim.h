// libqrencode (Debian: libqrencode-dev), for the pairing URL's QR code in the terminal.
#ifndef TOUCHBRIDGE_CQRENCODE_SHIM_H
#define TOUCHBRIDGE_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
