// The web server's TLS over the system's OpenSSL 3, loaded with dlopen (see tb_tls.h). Each connection's
// TLS runs over two memory BIOs: what the network gave goes into one, what it must send comes out of the
// other, so the caller (a NIO handler) does all the I/O.
#include "tb_tls.h"
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// OpenSSL's types, opaque here.
typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_method_st SSL_METHOD;
typedef struct bio_st BIO;
typedef struct bio_method_st BIO_METHOD;
typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;
typedef int pem_password_cb(char *buf, int size, int rwflag, void *userdata);

// OpenSSL 3's constants (openssl/ssl.h, openssl/tls1.h), stable across its ABI.
#define SSL_ERROR_WANT_READ 2
#define SSL_ERROR_WANT_WRITE 3
#define SSL_ERROR_ZERO_RETURN 6
#define SSL_CTRL_EXTRA_CHAIN_CERT 14
#define SSL_CTRL_MODE 33
#define SSL_CTRL_SET_MIN_PROTO_VERSION 123
#define SSL_MODE_RELEASE_BUFFERS 0x00000010L
#define TLS1_2_VERSION 0x0303
#define SSL_OP_NO_COMPRESSION ((uint64_t)1 << 17)
#define SSL_OP_NO_RENEGOTIATION ((uint64_t)1 << 30)

struct tb_symbol {
    const char *name;
    void **pointer;
};
#define TB_SYMBOL(function) { #function, (void **)&p_##function }

static const SSL_METHOD *(*p_TLS_server_method)(void);
static SSL_CTX *(*p_SSL_CTX_new)(const SSL_METHOD *);
static void (*p_SSL_CTX_free)(SSL_CTX *);
static long (*p_SSL_CTX_ctrl)(SSL_CTX *, int, long, void *);
static uint64_t (*p_SSL_CTX_set_options)(SSL_CTX *, uint64_t);
static int (*p_SSL_CTX_use_certificate)(SSL_CTX *, X509 *);
static int (*p_SSL_CTX_use_PrivateKey)(SSL_CTX *, EVP_PKEY *);
static int (*p_SSL_CTX_check_private_key)(const SSL_CTX *);
static SSL *(*p_SSL_new)(SSL_CTX *);
static void (*p_SSL_free)(SSL *);
static void (*p_SSL_set_bio)(SSL *, BIO *, BIO *);
static void (*p_SSL_set_accept_state)(SSL *);
static int (*p_SSL_do_handshake)(SSL *);
static int (*p_SSL_is_init_finished)(const SSL *);
static int (*p_SSL_read)(SSL *, void *, int);
static int (*p_SSL_write)(SSL *, const void *, int);
static int (*p_SSL_get_error)(const SSL *, int);
static int (*p_SSL_shutdown)(SSL *);
static const BIO_METHOD *(*p_BIO_s_mem)(void);
static BIO *(*p_BIO_new)(const BIO_METHOD *);
static BIO *(*p_BIO_new_mem_buf)(const void *, int);
static int (*p_BIO_free)(BIO *);
static int (*p_BIO_write)(BIO *, const void *, int);
static int (*p_BIO_read)(BIO *, void *, int);
static size_t (*p_BIO_ctrl_pending)(BIO *);
static X509 *(*p_PEM_read_bio_X509)(BIO *, X509 **, pem_password_cb *, void *);
static EVP_PKEY *(*p_PEM_read_bio_PrivateKey)(BIO *, EVP_PKEY **, pem_password_cb *, void *);
static void (*p_X509_free)(X509 *);
static void (*p_EVP_PKEY_free)(EVP_PKEY *);
static unsigned long (*p_ERR_get_error)(void);
static unsigned long (*p_ERR_peek_last_error)(void);
static void (*p_ERR_error_string_n)(unsigned long, char *, size_t);
static void (*p_ERR_clear_error)(void);

static void *libssl;
static char load_error[512];

const char *tb_tls_load(void) {
    static const struct tb_symbol symbols[] = {
        TB_SYMBOL(TLS_server_method), TB_SYMBOL(SSL_CTX_new), TB_SYMBOL(SSL_CTX_free), TB_SYMBOL(SSL_CTX_ctrl),
        TB_SYMBOL(SSL_CTX_set_options), TB_SYMBOL(SSL_CTX_use_certificate), TB_SYMBOL(SSL_CTX_use_PrivateKey),
        TB_SYMBOL(SSL_CTX_check_private_key), TB_SYMBOL(SSL_new), TB_SYMBOL(SSL_free), TB_SYMBOL(SSL_set_bio),
        TB_SYMBOL(SSL_set_accept_state), TB_SYMBOL(SSL_do_handshake), TB_SYMBOL(SSL_is_init_finished),
        TB_SYMBOL(SSL_read), TB_SYMBOL(SSL_write), TB_SYMBOL(SSL_get_error), TB_SYMBOL(SSL_shutdown),
        TB_SYMBOL(BIO_s_mem), TB_SYMBOL(BIO_new), TB_SYMBOL(BIO_new_mem_buf), TB_SYMBOL(BIO_free),
        TB_SYMBOL(BIO_write), TB_SYMBOL(BIO_read), TB_SYMBOL(BIO_ctrl_pending), TB_SYMBOL(PEM_read_bio_X509),
        TB_SYMBOL(PEM_read_bio_PrivateKey), TB_SYMBOL(X509_free), TB_SYMBOL(EVP_PKEY_free), TB_SYMBOL(ERR_get_error),
        TB_SYMBOL(ERR_peek_last_error), TB_SYMBOL(ERR_error_string_n), TB_SYMBOL(ERR_clear_error),
    };
    if (libssl) return NULL;
    void *handle = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "cannot load libssl.so.3 (%s): install libssl3", dlerror());
        return load_error;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        // libcrypto's functions through libssl's handle: dlsym searches the libraries it loaded too.
        if (!(*symbols[i].pointer = dlsym(handle, symbols[i].name))) {
            snprintf(load_error, sizeof load_error, "libssl.so.3 lacks %s", symbols[i].name);
            dlclose(handle);
            return load_error;
        }
    }
    libssl = handle;
    return NULL;
}

const char *tb_tls_error(char *buffer, size_t size) {
    unsigned long code = p_ERR_peek_last_error();
    if (code == 0) snprintf(buffer, size, "no reason given");
    else p_ERR_error_string_n(code, buffer, size);
    p_ERR_clear_error();
    return buffer;
}

/// No passphrase is ever asked for: OpenSSL's default would read one from the terminal.
static int no_passphrase(char *buf, int size, int rwflag, void *userdata) {
    (void)buf; (void)size; (void)rwflag; (void)userdata;
    return 0;
}

struct tb_tls_context { SSL_CTX *ctx; };

static tb_tls_context *context_failed(SSL_CTX *ctx, const char *what, char *error, size_t error_size) {
    char reason[256];
    snprintf(error, error_size, "%s: %s", what, tb_tls_error(reason, sizeof reason));
    if (ctx) p_SSL_CTX_free(ctx);
    return NULL;
}

tb_tls_context *tb_tls_context_new(const char *certificates, size_t certificates_size,
                                   const char *key, size_t key_size, char *error, size_t error_size) {
    if (certificates_size > INT32_MAX || key_size > INT32_MAX) {
        snprintf(error, error_size, "too large");
        return NULL;
    }
    p_ERR_clear_error();
    SSL_CTX *ctx = p_SSL_CTX_new(p_TLS_server_method());
    if (!ctx) return context_failed(NULL, "cannot make a TLS context", error, error_size);
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    // Each idle connection gives its read and write buffers back (34 KB each).
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_RELEASE_BUFFERS, NULL);
    p_SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);

    BIO *bio = p_BIO_new_mem_buf(certificates, (int)certificates_size);
    if (!bio) return context_failed(ctx, "out of memory", error, error_size);
    X509 *leaf = p_PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
    if (!leaf) {
        p_BIO_free(bio);
        return context_failed(ctx, "no PEM certificate", error, error_size);
    }
    int used = p_SSL_CTX_use_certificate(ctx, leaf);
    p_X509_free(leaf);
    if (used != 1) {
        p_BIO_free(bio);
        return context_failed(ctx, "the certificate is not usable", error, error_size);
    }
    // The chain: every further certificate in the file (the context owns each one added).
    X509 *next;
    while ((next = p_PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)) != NULL) {
        if (p_SSL_CTX_ctrl(ctx, SSL_CTRL_EXTRA_CHAIN_CERT, 0, next) != 1) {
            p_X509_free(next);
            p_BIO_free(bio);
            return context_failed(ctx, "a chain certificate is not usable", error, error_size);
        }
    }
    p_BIO_free(bio);
    p_ERR_clear_error();  // the end of the file, reached by the loop above

    bio = p_BIO_new_mem_buf(key, (int)key_size);
    if (!bio) return context_failed(ctx, "out of memory", error, error_size);
    EVP_PKEY *pkey = p_PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    p_BIO_free(bio);
    if (!pkey) return context_failed(ctx, "no unencrypted PEM private key", error, error_size);
    used = p_SSL_CTX_use_PrivateKey(ctx, pkey);
    p_EVP_PKEY_free(pkey);
    if (used != 1) return context_failed(ctx, "the private key is not usable", error, error_size);
    if (p_SSL_CTX_check_private_key(ctx) != 1) {
        // OpenSSL's own reason here is "no certificate assigned" (a key that does not match drops the
        // certificate), which says less than this.
        snprintf(error, error_size, "the private key does not match the certificate");
        p_ERR_clear_error();
        p_SSL_CTX_free(ctx);
        return NULL;
    }

    tb_tls_context *context = malloc(sizeof *context);
    if (!context) return context_failed(ctx, "out of memory", error, error_size);
    context->ctx = ctx;
    return context;
}

void tb_tls_context_free(tb_tls_context *context) {
    if (!context) return;
    p_SSL_CTX_free(context->ctx);
    free(context);
}

struct tb_tls {
    SSL *ssl;
    BIO *network_in;   // owned by ssl
    BIO *network_out;  // owned by ssl
    int closed;
};

tb_tls *tb_tls_new(tb_tls_context *context) {
    tb_tls *tls = calloc(1, sizeof *tls);
    if (!tls) return NULL;
    tls->ssl = p_SSL_new(context->ctx);
    tls->network_in = p_BIO_new(p_BIO_s_mem());
    tls->network_out = p_BIO_new(p_BIO_s_mem());
    if (!tls->ssl || !tls->network_in || !tls->network_out) {
        if (tls->network_in) p_BIO_free(tls->network_in);
        if (tls->network_out) p_BIO_free(tls->network_out);
        if (tls->ssl) p_SSL_free(tls->ssl);
        free(tls);
        return NULL;
    }
    p_SSL_set_bio(tls->ssl, tls->network_in, tls->network_out);
    p_SSL_set_accept_state(tls->ssl);
    return tls;
}

void tb_tls_free(tb_tls *tls) {
    if (!tls) return;
    p_SSL_free(tls->ssl);  // and both BIOs
    free(tls);
}

int tb_tls_feed(tb_tls *tls, const void *bytes, size_t size) {
    const char *at = bytes;
    while (size > 0) {
        int chunk = size > INT32_MAX ? INT32_MAX : (int)size;
        int written = p_BIO_write(tls->network_in, at, chunk);
        if (written <= 0) return -1;
        at += written;
        size -= (size_t)written;
    }
    return 0;
}

/// What SSL_get_error says of a call that returned `result`.
static long outcome(tb_tls *tls, int result) {
    switch (p_SSL_get_error(tls->ssl, result)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:  // a memory BIO never refuses a write; kept for completeness
        p_ERR_clear_error();
        return TB_TLS_WANTS_INPUT;
    case SSL_ERROR_ZERO_RETURN:
        p_ERR_clear_error();
        return TB_TLS_CLOSED;
    default:
        return TB_TLS_FAILED;
    }
}

long tb_tls_read(tb_tls *tls, void *buffer, size_t capacity) {
    if (!p_SSL_is_init_finished(tls->ssl)) {
        int result = p_SSL_do_handshake(tls->ssl);
        if (result != 1) return outcome(tls, result);
    }
    int result = p_SSL_read(tls->ssl, buffer, capacity > INT32_MAX ? INT32_MAX : (int)capacity);
    return result > 0 ? result : outcome(tls, result);
}

int tb_tls_ready(const tb_tls *tls) { return p_SSL_is_init_finished(tls->ssl) == 1; }

long tb_tls_write(tb_tls *tls, const void *bytes, size_t size) {
    const char *at = bytes;
    size_t left = size;
    while (left > 0) {
        int chunk = left > INT32_MAX ? INT32_MAX : (int)left;
        int result = p_SSL_write(tls->ssl, at, chunk);
        if (result <= 0) return TB_TLS_FAILED;
        at += result;
        left -= (size_t)result;
    }
    return (long)size;
}

void tb_tls_close(tb_tls *tls) {
    if (tls->closed || !p_SSL_is_init_finished(tls->ssl)) return;
    tls->closed = 1;
    p_SSL_shutdown(tls->ssl);  // 0: our close_notify is written, theirs not yet read; not waited for
    p_ERR_clear_error();
}

size_t tb_tls_pending(const tb_tls *tls) { return p_BIO_ctrl_pending(tls->network_out); }

long tb_tls_take(tb_tls *tls, void *buffer, size_t capacity) {
    int result = p_BIO_read(tls->network_out, buffer, capacity > INT32_MAX ? INT32_MAX : (int)capacity);
    return result > 0 ? result : 0;
}
