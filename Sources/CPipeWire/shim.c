// The screen cast's stream (see tb_pipewire.h): libpipewire-0.3.so.0 through dlopen, one pointer per
// function, resolved once; PipeWire's inline helpers (the loop's methods, the POD builder and parser)
// come from its headers and need no library.
#include "tb_pipewire.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>

static void *library;
static char load_error[512];

static __typeof__(pw_init) *p_pw_init;
static __typeof__(pw_loop_new) *p_pw_loop_new;
static __typeof__(pw_loop_destroy) *p_pw_loop_destroy;
static __typeof__(pw_context_new) *p_pw_context_new;
static __typeof__(pw_context_destroy) *p_pw_context_destroy;
static __typeof__(pw_context_connect_fd) *p_pw_context_connect_fd;
static __typeof__(pw_core_disconnect) *p_pw_core_disconnect;
static __typeof__(pw_properties_new) *p_pw_properties_new;
static __typeof__(pw_stream_new) *p_pw_stream_new;
static __typeof__(pw_stream_add_listener) *p_pw_stream_add_listener;
static __typeof__(pw_stream_connect) *p_pw_stream_connect;
static __typeof__(pw_stream_disconnect) *p_pw_stream_disconnect;
static __typeof__(pw_stream_destroy) *p_pw_stream_destroy;
static __typeof__(pw_stream_dequeue_buffer) *p_pw_stream_dequeue_buffer;
static __typeof__(pw_stream_queue_buffer) *p_pw_stream_queue_buffer;
static __typeof__(pw_stream_update_params) *p_pw_stream_update_params;
static __typeof__(pw_stream_set_active) *p_pw_stream_set_active;

struct tb_symbol {
    const char *name;
    void **pointer;
};
#define TB_SYMBOL(function) { #function, (void **)&p_##function }

const char *tb_pw_load(void) {
    if (library) return NULL;
    const struct tb_symbol symbols[] = {
        TB_SYMBOL(pw_init), TB_SYMBOL(pw_loop_new), TB_SYMBOL(pw_loop_destroy), TB_SYMBOL(pw_context_new),
        TB_SYMBOL(pw_context_destroy), TB_SYMBOL(pw_context_connect_fd), TB_SYMBOL(pw_core_disconnect),
        TB_SYMBOL(pw_properties_new), TB_SYMBOL(pw_stream_new), TB_SYMBOL(pw_stream_add_listener),
        TB_SYMBOL(pw_stream_connect), TB_SYMBOL(pw_stream_disconnect), TB_SYMBOL(pw_stream_destroy),
        TB_SYMBOL(pw_stream_dequeue_buffer), TB_SYMBOL(pw_stream_queue_buffer), TB_SYMBOL(pw_stream_update_params),
        TB_SYMBOL(pw_stream_set_active),
    };
    void *handle = dlopen("libpipewire-0.3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "cannot load libpipewire-0.3.so.0 (%s): install libpipewire-0.3-0", dlerror());
        return load_error;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        if (!(*symbols[i].pointer = dlsym(handle, symbols[i].name))) {
            snprintf(load_error, sizeof load_error, "libpipewire-0.3.so.0 lacks %s", symbols[i].name);
            dlclose(handle);
            return load_error;
        }
    }
    library = handle;
    p_pw_init(NULL, NULL);
    return NULL;
}

struct tb_pw_cast {
    struct pw_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    struct spa_hook core_listener;
    /// The newest usable frame, dequeued and not yet given back.
    struct pw_buffer *held;
    int32_t width, height;
    uint32_t format;
    /// TB_PW_ flags gathered by the callbacks of one dispatch.
    int flags;
    char error[256];
    char format_text[64];
    /// The states the stream went through and the sizes it was given, oldest first ("connecting paused
    /// (1280x800) streaming"; "(no format)" when the format was taken back), for the log.
    char states[96];
    /// Frames held since the start.
    uint64_t frames;
    /// The node streamed, to connect to again.
    uint32_t node;
    /// The producer took its format back after giving one and gave no other in the same dispatch (the
    /// monitor turned): the stream is connected again then, at most `TB_PW_RECONNECTS` times.
    bool format_lost;
    int reconnects;
    /// Whether frames are wanted (`tb_pw_cast_set_active`): a stream connected again keeps it.
    bool active;
};

/// How many times a stream whose format was taken back is connected again.
#define TB_PW_RECONNECTS 8

static void failed(struct tb_pw_cast *c, const char *what, const char *detail) {
    if (!c->error[0]) snprintf(c->error, sizeof c->error, "%s%s%s", what, detail && *detail ? ": " : "", detail ? detail : "");
    c->flags |= TB_PW_FAILED;
}

static void give_back(struct tb_pw_cast *c) {
    if (c->held) p_pw_stream_queue_buffer(c->stream, c->held);
    c->held = NULL;
}

static const char *state_name(enum pw_stream_state state) {
    switch (state) {
    case PW_STREAM_STATE_ERROR: return "error";
    case PW_STREAM_STATE_UNCONNECTED: return "unconnected";
    case PW_STREAM_STATE_CONNECTING: return "connecting";
    case PW_STREAM_STATE_PAUSED: return "paused";
    case PW_STREAM_STATE_STREAMING: return "streaming";
    }
    return "?";
}

/// One word more in the stream's history (its states, and the formats it was given).
static void note_state(struct tb_pw_cast *c, const char *word) {
    size_t used = strlen(c->states);
    // The newest states are what matter: an overflowing history keeps its last part.
    if (used > sizeof c->states - 24) {
        memmove(c->states, c->states + used - 40, 41);
        used = strlen(c->states);
    }
    snprintf(c->states + used, sizeof c->states - used, "%s%s", used ? " " : "", word);
}

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct tb_pw_cast *c = data;
    note_state(c, state_name(state));
    // Connected again after the producer took its format back, and the node is gone: Mutter 48 ends a
    // monitor's stream when the monitor turns (seen in the VM), and the portal session gives no other.
    if (state == PW_STREAM_STATE_ERROR && c->reconnects > 0)
        failed(c, "the screen cast ended, its node gone (GNOME ends it when the monitor turns, or the sharing was stopped): touchbridge started again shares the screen anew", error);
    else if (state == PW_STREAM_STATE_ERROR) failed(c, "the screen cast's stream failed", error);
    else if (state == PW_STREAM_STATE_UNCONNECTED && old != PW_STREAM_STATE_UNCONNECTED) failed(c, "the screen cast's stream ended", error);
}

/// The format the producer chose: its size kept, and the buffers asked for (shared memory, mapped here).
static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct tb_pw_cast *c = data;
    if (id != SPA_PARAM_Format) return;
    if (param == NULL) {
        note_state(c, "(no format)");
        if (c->width > 0) c->format_lost = true;
        return;
    }
    uint32_t media_type = 0, media_subtype = 0;
    struct spa_video_info_raw info;
    memset(&info, 0, sizeof info);
    if (spa_format_parse(param, &media_type, &media_subtype) < 0 || media_type != SPA_MEDIA_TYPE_video
        || media_subtype != SPA_MEDIA_SUBTYPE_raw || spa_format_video_raw_parse(param, &info) < 0
        || (info.format != SPA_VIDEO_FORMAT_BGRx && info.format != SPA_VIDEO_FORMAT_BGRA)
        || info.size.width == 0 || info.size.height == 0 || info.size.width > 16384 || info.size.height > 16384) {
        failed(c, "the screen cast offers no 32-bit raw frames", NULL);
        return;
    }
    give_back(c);
    c->format_lost = false;
    c->format = info.format;
    c->width = (int32_t)info.size.width;
    c->height = (int32_t)info.size.height;
    snprintf(c->format_text, sizeof c->format_text, "%s %dx%d", c->format == SPA_VIDEO_FORMAT_BGRA ? "BGRA" : "BGRx", c->width, c->height);
    char word[24];
    snprintf(word, sizeof word, "(%dx%d)", c->width, c->height);
    note_state(c, word);
    uint8_t pod[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(pod, sizeof pod);
    int32_t stride = c->width * 4;
    const struct spa_pod *params[1];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 8),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(stride * c->height),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemPtr) | (1 << SPA_DATA_MemFd)));
    p_pw_stream_update_params(c->stream, params, 1);
}

/// Where a buffer's picture starts, or NULL when it holds none that can be read (no data mapped, an
/// empty or corrupted chunk, rows that do not fit).
static uint8_t *picture_of(struct tb_pw_cast *c, struct pw_buffer *b, int32_t *stride_out) {
    struct spa_buffer *s = b->buffer;
    if (c->width <= 0 || s == NULL || s->n_datas < 1) return NULL;
    struct spa_data *d = &s->datas[0];
    if (d->data == NULL || d->chunk == NULL || d->maxsize == 0) return NULL;
    if (d->chunk->size == 0 || (d->chunk->flags & SPA_CHUNK_FLAG_CORRUPTED)) return NULL;
    int32_t stride = d->chunk->stride > 0 ? d->chunk->stride : c->width * 4;
    if (stride < c->width * 4) return NULL;
    uint64_t offset = d->chunk->offset % d->maxsize;
    if (offset + (uint64_t)stride * (uint64_t)c->height > d->maxsize) return NULL;
    *stride_out = stride;
    return (uint8_t *)d->data + offset;
}

/// Frames came: the newest usable one is held, every other given back at once.
static void on_process(void *data) {
    struct tb_pw_cast *c = data;
    struct pw_buffer *b, *newest = NULL;
    while ((b = p_pw_stream_dequeue_buffer(c->stream)) != NULL) {
        int32_t stride;
        if (picture_of(c, b, &stride) == NULL) {
            p_pw_stream_queue_buffer(c->stream, b);
            continue;
        }
        if (newest) p_pw_stream_queue_buffer(c->stream, newest);
        newest = b;
    }
    if (!newest) return;
    give_back(c);
    c->held = newest;
    c->frames++;
    c->flags |= TB_PW_NEW_FRAME;
}

static void on_remove_buffer(void *data, struct pw_buffer *buffer) {
    struct tb_pw_cast *c = data;
    if (c->held == buffer) c->held = NULL;
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct tb_pw_cast *c = data;
    if (id == PW_ID_CORE) failed(c, res == -EPIPE ? "PipeWire closed the screen cast's connection" : "PipeWire refused the screen cast", message);
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
    .remove_buffer = on_remove_buffer,
    .process = on_process,
};

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
};

/// A stream of `c->node`: raw 32-bit frames of any size in shared memory. -1, with `error` written, when
/// it cannot be made or connected.
static int connect_stream(struct tb_pw_cast *c, char *error, size_t error_size) {
    struct pw_properties *props = p_pw_properties_new(PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                                                      PW_KEY_MEDIA_ROLE, "Screen", NULL);
    c->stream = p_pw_stream_new(c->core, "touchbridge view", props);
    if (!c->stream) {
        snprintf(error, error_size, "cannot make a PipeWire stream (%s)", strerror(errno));
        return -1;
    }
    p_pw_stream_add_listener(c->stream, &c->stream_listener, &stream_events, c);
    uint8_t pod[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(pod, sizeof pod);
    struct spa_rectangle size = SPA_RECTANGLE(1920, 1080), smallest = SPA_RECTANGLE(1, 1), largest = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction rate = SPA_FRACTION(30, 1), slowest = SPA_FRACTION(0, 1), fastest = SPA_FRACTION(60, 1);
    const struct spa_pod *params[1];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(3, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&size, &smallest, &largest),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&rate, &slowest, &fastest));
    enum pw_stream_flags flags = PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_DONT_RECONNECT;
    if (!c->active) flags |= PW_STREAM_FLAG_INACTIVE;
    int r = p_pw_stream_connect(c->stream, PW_DIRECTION_INPUT, c->node, flags, params, 1);
    if (r < 0) {
        snprintf(error, error_size, "cannot connect to the screen cast's node %u (%s)", c->node, strerror(-r));
        return -1;
    }
    return 0;
}

/// The stream goes (its held frame given back first); the connection stays.
static void drop_stream(struct tb_pw_cast *c) {
    if (!c->stream) return;
    give_back(c);
    spa_hook_remove(&c->stream_listener);
    p_pw_stream_disconnect(c->stream);
    p_pw_stream_destroy(c->stream);
    c->stream = NULL;
}

tb_pw_cast *tb_pw_cast_open(int remote, uint32_t node, char *error, size_t error_size) {
    const char *why = tb_pw_load();
    if (why) {
        snprintf(error, error_size, "%s", why);
        close(remote);
        return NULL;
    }
    struct tb_pw_cast *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(error, error_size, "out of memory");
        close(remote);
        return NULL;
    }
    c->loop = p_pw_loop_new(NULL);
    if (c->loop) c->context = p_pw_context_new(c->loop, NULL, 0);
    if (!c->context) {
        snprintf(error, error_size, "cannot make a PipeWire context (%s)", strerror(errno));
        close(remote);
        tb_pw_cast_close(c);
        return NULL;
    }
    pw_loop_enter(c->loop);
    // From here the core owns the remote descriptor.
    c->core = p_pw_context_connect_fd(c->context, remote, NULL, 0);
    if (!c->core) {
        snprintf(error, error_size, "cannot connect to PipeWire over the portal's descriptor (%s)", strerror(errno));
        tb_pw_cast_close(c);
        return NULL;
    }
    pw_core_add_listener(c->core, &c->core_listener, &core_events, c);
    c->node = node;
    c->active = true;
    if (connect_stream(c, error, error_size) < 0) {
        tb_pw_cast_close(c);
        return NULL;
    }
    return c;
}

int tb_pw_cast_descriptor(tb_pw_cast *c) { return pw_loop_get_fd(c->loop); }

/// The stream, the connection and the context go; the loop stays, empty, so that its descriptor (which
/// the caller may still be watching) never becomes readable again.
static void end_stream(struct tb_pw_cast *c) {
    drop_stream(c);
    if (c->core) {
        spa_hook_remove(&c->core_listener);
        p_pw_core_disconnect(c->core);
        c->core = NULL;
    }
    if (c->context) {
        p_pw_context_destroy(c->context);
        c->context = NULL;
        pw_loop_leave(c->loop);
    }
}

int tb_pw_cast_dispatch(tb_pw_cast *c) {
    c->flags = 0;
    int r = pw_loop_iterate(c->loop, 0);
    if (r < 0 && r != -EINTR && r != -EAGAIN) failed(c, "the screen cast's loop failed", strerror(-r));
    // The producer took its format back and gave none (Mutter 48, its monitor turned: the link stayed
    // paused with no format): a stream connected again is given the one the producer has now.
    if (c->format_lost && !(c->flags & TB_PW_FAILED)) {
        c->format_lost = false;
        char why[160];
        drop_stream(c);
        if (++c->reconnects > TB_PW_RECONNECTS) failed(c, "the screen cast's format was taken back too often", NULL);
        else if (connect_stream(c, why, sizeof why) < 0) failed(c, "the screen cast could not connect again", why);
        else note_state(c, "reconnected");
    }
    int flags = c->flags;
    if (flags & TB_PW_FAILED) end_stream(c);
    return flags;
}

const char *tb_pw_cast_error(tb_pw_cast *c) { return c->error; }

int tb_pw_cast_set_active(tb_pw_cast *c, bool active) {
    if (!c->stream) return 0;
    int r = p_pw_stream_set_active(c->stream, active);
    if (r >= 0) c->active = active;
    return r;
}

int tb_pw_cast_frame(tb_pw_cast *c, void **pixels, int32_t *width, int32_t *height, int32_t *stride) {
    if (!c->held) return 0;
    uint8_t *p = picture_of(c, c->held, stride);
    if (!p) return 0;
    *pixels = p;
    *width = c->width;
    *height = c->height;
    return 1;
}

const char *tb_pw_cast_format(tb_pw_cast *c) { return c->format_text; }

const char *tb_pw_cast_states(tb_pw_cast *c, uint64_t *frames) {
    *frames = c->frames;
    return c->states;
}

void tb_pw_cast_close(tb_pw_cast *c) {
    if (!c) return;
    if (c->loop) end_stream(c);
    if (c->loop) p_pw_loop_destroy(c->loop);
    free(c);
}
