// The live view under GNOME and KDE: frames of the ScreenCast portal's PipeWire stream, read with
// libpipewire-0.3.so.0 loaded at run time (dlopen), so that a daemon that never views a portal session
// never maps it. PipeWire's own types stay inside the shim (shim.c, built against PipeWire's headers):
// Swift sees one opaque stream.
#ifndef TB_PIPEWIRE_H
#define TB_PIPEWIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// One stream of a screen cast, on a PipeWire loop of its own that the caller dispatches.
typedef struct tb_pw_cast tb_pw_cast;

/// What `tb_pw_cast_dispatch` saw.
enum {
    /// A newer frame is held (`tb_pw_cast_frame`).
    TB_PW_NEW_FRAME = 1,
    /// The stream failed or ended (`tb_pw_cast_error` says why).
    TB_PW_FAILED = 2,
};

/// Loads libpipewire-0.3.so.0 and finds the functions used (once). NULL when loaded, else why not.
const char *tb_pw_load(void);

/// Connects to PipeWire over `remote` (the portal's OpenPipeWireRemote descriptor: taken, closed on
/// failure too) and asks node `node` for raw 32-bit frames (BGRx or BGRA: cairo's RGB24 in memory) in
/// shared memory; streaming until `tb_pw_cast_set_active` pauses it. NULL on failure, with why in `error`.
tb_pw_cast *tb_pw_cast_open(int remote, uint32_t node, char *error, size_t error_size);

/// The descriptor that is readable when the stream's loop has work (`tb_pw_cast_dispatch`).
int tb_pw_cast_descriptor(tb_pw_cast *cast);

/// Runs what is ready on the stream's loop, without waiting: TB_PW_ flags.
int tb_pw_cast_dispatch(tb_pw_cast *cast);

/// Why the stream failed; "" while it has not.
const char *tb_pw_cast_error(tb_pw_cast *cast);

/// Lets frames come (true) or pauses the stream (false: the frame held stays held).
int tb_pw_cast_set_active(tb_pw_cast *cast, bool active);

/// The newest frame held: its pixels, size and bytes a row; 0 when there is none, 1 when there is.
int tb_pw_cast_frame(tb_pw_cast *cast, void **pixels, int32_t *width, int32_t *height, int32_t *stride);

/// The negotiated format in words ("BGRx 1280x800"), "" before negotiation.
const char *tb_pw_cast_format(tb_pw_cast *cast);

/// The states the stream went through and the sizes it was given, oldest first ("connecting paused
/// (1280x800) streaming"), and the frames held since it opened, for the log.
const char *tb_pw_cast_states(tb_pw_cast *cast, uint64_t *frames);

/// Disconnects the stream, gives back its buffers, closes the loop and the remote. The pointer is gone.
void tb_pw_cast_close(tb_pw_cast *cast);

#endif
