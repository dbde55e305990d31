#ifndef PUSHHUB_COPENSSL_SHIM_H
#define PUSHHUB_COPENSSL_SHIM_H
/* SHA256_Init/Update/Final hash from a caller's context without an EVP fetch or allocation
   (experiment bucketing); OpenSSL 3 marks them deprecated, not removed. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <arpa/inet.h>

/* Macros Swift cannot call (they expand to SSL_CTX_ctrl / SSL_ctrl), as functions. */
static inline int pushhub_ctx_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
/* Non-blocking writes: a partial SSL_write returns what it wrote, a retry may pass another
   buffer address (the outbound queue moves), and idle connections release their buffers. */
static inline void pushhub_ssl_modes(SSL *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}
/* TLS 1.3 session tickets are not sent when the handshake ends (OpenSSL's default: two, right
   after the client's Finished) but once, just before the first application data the server
   writes (TLSStream.write): see TLSStream.ticketDue for why. TLS 1.2 is unaffected. */
static inline void pushhub_ctx_session_cache(SSL_CTX *ctx, long size) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, size);
    SSL_CTX_set_num_tickets(ctx, 0);
}
/* A client's expectation of the server's certificate: an IP literal (no brackets) is checked as
   an address; a host name is sent as SNI and checked as a name. 1 when set, 0 when OpenSSL
   refused it (the name is then not checked: the caller must not connect). */
static inline int pushhub_ssl_expect_peer(SSL *ssl, const char *name) {
    unsigned char address[16];
    if (inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1;
    return SSL_set_tlsext_host_name(ssl, name) == 1 && SSL_set1_host(ssl, name) == 1;
}

/* OpenSSL's socket BIO writes with write(2): a peer that went away raises SIGPIPE, which ends a
   process that has not ignored it (the tests' in-process hub, an app using the Swift client).
   This BIO is OpenSSL's socket BIO with one change, sends with MSG_NOSIGNAL, so the write fails
   with EPIPE as the plain path's sends do. Made once per module that calls it (a function's
   static: Swift's importer emits those, not a header's static globals). */
static inline BIO_METHOD **pushhub_socket_method_slot(void) {
    static BIO_METHOD *method;
    return &method;
}
static inline int pushhub_socket_write(BIO *bio, const char *data, int length) {
    errno = 0;
    int sent = (int)send((int)BIO_get_fd(bio, NULL), data, (size_t)length, MSG_NOSIGNAL);
    BIO_clear_retry_flags(bio);
    if (sent <= 0 && BIO_sock_should_retry(sent)) BIO_set_retry_write(bio);
    return sent;
}
static inline void pushhub_make_socket_method(void) {
    const BIO_METHOD *socket = BIO_s_socket();
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                      "socket without SIGPIPE");
    if (method == NULL) return;
    BIO_meth_set_write(method, pushhub_socket_write);
    BIO_meth_set_read(method, BIO_meth_get_read(socket));
    BIO_meth_set_puts(method, BIO_meth_get_puts(socket));
    BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(socket));
    BIO_meth_set_create(method, BIO_meth_get_create(socket));
    BIO_meth_set_destroy(method, BIO_meth_get_destroy(socket));
    *pushhub_socket_method_slot() = method;
}
/* SSL_set_fd with that BIO (the descriptor stays open when the SSL is freed): 1, or 0 on failure. */
static inline int pushhub_ssl_set_socket(SSL *ssl, int fd) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pushhub_make_socket_method);
    BIO_METHOD *method = *pushhub_socket_method_slot();
    BIO *bio = method ? BIO_new(method) : NULL;
    if (bio == NULL) return 0;
    BIO_set_fd(bio, fd, BIO_NOCLOSE);
    SSL_set_bio(ssl, bio, bio);
    return 1;
}

/* ALPN (RFC 7301): the hub speaks HTTP/1.1 only; a client that offers other protocols and not
   http/1.1 gets no ALPN answer rather than a failed handshake. */
static inline int pushhub_alpn_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                             const unsigned char *in, unsigned int inlen, void *arg) {
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto((unsigned char **)out, outlen, http11, sizeof(http11), in, inlen) == OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_OK;
    return SSL_TLSEXT_ERR_NOACK;
}
static inline void pushhub_ctx_alpn_http11(SSL_CTX *ctx) { SSL_CTX_set_alpn_select_cb(ctx, pushhub_alpn_select_http11, NULL); }

/* The reasons OpenSSL queued on this thread, oldest first, joined by "; " ("" when there are
   none); the queue is left empty. The text lives in a per-thread buffer until the next call. */
static inline const char *pushhub_drain_errors(void) {
    static _Thread_local char text[1024];
    size_t used = 0;
    unsigned long code;
    text[0] = 0;
    while ((code = ERR_get_error()) != 0) {
        char reason[256];
        ERR_error_string_n(code, reason, sizeof reason);
        if (used + 1 < sizeof text) {
            int n = snprintf(text + used, sizeof text - used, "%s%s", used ? "; " : "", reason);
            if (n > 0) used = used + (size_t)n < sizeof text ? used + (size_t)n : sizeof text - 1;
        }
    }
    return text;
}
#include "shim_sign.h"
#include "shim_verify.h"
#endif
