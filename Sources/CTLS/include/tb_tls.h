// TLS for the web server (--tls-cert, --tls-key): the system's OpenSSL 3 (libssl.so.3, Debian's libssl3 or
// libssl3t64, on every Debian system), loaded at run time with dlopen only when TLS is asked for, behind a
// few functions that keep one server connection's TLS in memory: the network's bytes in, plaintext out,
// plaintext in, the network's bytes out. No header of OpenSSL is needed to build (the few types are opaque
// here). Only TouchWeb's TLSServerHandler.swift imports it.
#ifndef TB_TLS_H
#define TB_TLS_H
#include <stddef.h>

/// A server's TLS settings: its certificate chain and private key, TLS 1.2 and later.
typedef struct tb_tls_context tb_tls_context;
/// One connection's TLS.
typedef struct tb_tls tb_tls;

/// Loads libssl.so.3 and every function below needs (once). NULL when it is there, else why not.
const char *tb_tls_load(void);

/// A context from PEM text: `certificates` (the server's certificate, then its chain) and `key` (an
/// unencrypted private key). NULL on failure, with why in `error` (at most `error_size` bytes).
tb_tls_context *tb_tls_context_new(const char *certificates, size_t certificates_size,
                                   const char *key, size_t key_size, char *error, size_t error_size);
void tb_tls_context_free(tb_tls_context *context);

/// A server connection's TLS, waiting for the client's hello. NULL when out of memory.
tb_tls *tb_tls_new(tb_tls_context *context);
void tb_tls_free(tb_tls *tls);

/// The network's bytes, for `tb_tls_read` to take. 0, or -1 when they could not be kept.
int tb_tls_feed(tb_tls *tls, const void *bytes, size_t size);

/// What `tb_tls_read` and `tb_tls_write` say besides a count.
enum {
    TB_TLS_WANTS_INPUT = 0,   // nothing (more) until the network's next bytes
    TB_TLS_CLOSED = -1,       // the peer's close_notify
    TB_TLS_FAILED = -2,       // a protocol error: the connection must go (tb_tls_error says why)
};

/// Advances the handshake, then decrypts: >0 plaintext bytes in `buffer`, else one of the above.
long tb_tls_read(tb_tls *tls, void *buffer, size_t capacity);
/// 1 once the handshake is done.
int tb_tls_ready(const tb_tls *tls);
/// Encrypts all of `bytes` (after the handshake): `size`, or TB_TLS_FAILED.
long tb_tls_write(tb_tls *tls, const void *bytes, size_t size);
/// A close_notify, once, to go out with the next `tb_tls_take`.
void tb_tls_close(tb_tls *tls);

/// How many bytes wait to go to the network, and takes up to `capacity` of them.
size_t tb_tls_pending(const tb_tls *tls);
long tb_tls_take(tb_tls *tls, void *buffer, size_t capacity);

/// Why the last call failed, in OpenSSL's words (into `buffer`, which it returns).
const char *tb_tls_error(char *buffer, size_t size);

#endif
