#ifndef PUSHHUB_COPENSSL_SHIM_SIGN_H
#define PUSHHUB_COPENSSL_SHIM_SIGN_H
/* Push provider credentials (DESIGN §17): PEM private keys and SHA-256 signatures for the JWS the
   hub sends to APNs (ES256) and Google's OAuth endpoint (RS256). Included from shim.h's end. */
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <string.h>

/* A passphrase callback that has none: an encrypted key fails to load instead of OpenSSL's
   default callback asking on the terminal. */
static inline int pushhub_no_passphrase(char *buffer, int size, int writing, void *context) {
    (void)buffer;
    (void)size;
    (void)writing;
    (void)context;
    return -1;
}

/* The private key in `length` bytes of PEM (PKCS#8 "PRIVATE KEY", or the traditional "EC PRIVATE
   KEY" / "RSA PRIVATE KEY"), or NULL (the reasons are on OpenSSL's error queue). */
static inline EVP_PKEY *pushhub_read_private_key(const void *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, pushhub_no_passphrase, NULL);
    BIO_free(bio);
    return key;
}

/* EVP_PKEY_EC or EVP_PKEY_RSA (or another type's id) for a loaded key. */
static inline int pushhub_key_type(const EVP_PKEY *key) { return EVP_PKEY_get_base_id(key); }
static inline int pushhub_key_type_ec(void) { return EVP_PKEY_EC; }
static inline int pushhub_key_type_rsa(void) { return EVP_PKEY_RSA; }

/* The key's size in bits (256 for P-256, the modulus's for RSA). */
static inline int pushhub_key_bits(const EVP_PKEY *key) { return EVP_PKEY_get_bits(key); }

/* An EC key's curve as OpenSSL names it ("prime256v1" for P-256); "" when it has none. The
   text lives in a per-thread buffer until the next call. */
static inline const char *pushhub_key_curve(const EVP_PKEY *key) {
    static _Thread_local char name[80];
    size_t length = 0;
    name[0] = 0;
    if (EVP_PKEY_get_group_name(key, name, sizeof name, &length) != 1) name[0] = 0;
    return name;
}

/* Signs SHA-256(data) with the key: an ECDSA signature in DER for an EC key, RSASSA-PKCS1-v1_5
   for an RSA key. `*length` is the buffer's size on entry, the signature's on return; 1 on
   success, 0 on failure (the reasons on OpenSSL's error queue). */
static inline int pushhub_sign_sha256(EVP_PKEY *key, const unsigned char *data, size_t count,
                                      unsigned char *signature, size_t *length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return 0;
    int ok = EVP_DigestSignInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestSign(context, signature, length, data, count) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}

/* An ECDSA signature in DER (SEQUENCE { r INTEGER, s INTEGER }) as JWS wants it (RFC 7518
   §3.4): r and s as big-endian unsigned integers of `half` bytes each, r first, in `out`
   (2 * half bytes). 1 on success, 0 when the DER does not parse or a value does not fit. */
static inline int pushhub_ecdsa_der_to_raw(const unsigned char *der, long count, unsigned char *out, int half) {
    const unsigned char *cursor = der;
    ECDSA_SIG *signature = d2i_ECDSA_SIG(NULL, &cursor, count);
    if (signature == NULL) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(signature, &r, &s);
    int ok = cursor == der + count && BN_bn2binpad(r, out, half) == half && BN_bn2binpad(s, out + half, half) == half;
    ECDSA_SIG_free(signature);
    return ok;
}
#endif
