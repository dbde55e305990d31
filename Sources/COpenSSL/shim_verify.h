#ifndef PUSHHUB_COPENSSL_SHIM_VERIFY_H
#define PUSHHUB_COPENSSL_SHIM_VERIFY_H
/* Client tokens signed with public keys (DESIGN §18): public keys from PEM (a key or a
   certificate) and from JWK members (RFC 7517/7518/8037), and JWS signature checks through
   EVP_DigestVerify. Included from shim.h's end, after shim_sign.h (its passphrase callback). */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

static inline int pushhub_key_type_ed25519(void) { return EVP_PKEY_ED25519; }

/* The public key in `length` bytes of PEM: "PUBLIC KEY" (SubjectPublicKeyInfo) or "RSA PUBLIC
   KEY" (PKCS#1), or NULL (the reasons on OpenSSL's error queue). */
static inline EVP_PKEY *pushhub_read_public_key(const void *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = NULL;
    OSSL_DECODER_CTX *decoder =
        OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", NULL, NULL, EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    if (decoder != NULL) {
        if (OSSL_DECODER_from_bio(decoder, bio) != 1) key = NULL;
        OSSL_DECODER_CTX_free(decoder);
    }
    BIO_free(bio);
    return key;
}

/* The public key of the first certificate in `length` bytes of PEM, or NULL. */
static inline EVP_PKEY *pushhub_read_certificate_key(const void *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    X509 *certificate = PEM_read_bio_X509(bio, NULL, pushhub_no_passphrase, NULL);
    BIO_free(bio);
    if (certificate == NULL) return NULL;
    EVP_PKEY *key = X509_get_pubkey(certificate);
    X509_free(certificate);
    return key;
}

/* A key made by `EVP_PKEY_fromdata` of type `name` ("RSA", "EC") from `params`, or NULL. */
static inline EVP_PKEY *pushhub_public_key_from_params(const char *name, OSSL_PARAM_BLD *builder) {
    EVP_PKEY *key = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(builder);
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, name, NULL);
    if (params != NULL && context != NULL && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    OSSL_PARAM_free(params);
    return key;
}

/* An RSA public key from its modulus and public exponent, big-endian unsigned (a JWK's n and e,
   RFC 7518 §6.3.1), or NULL. */
static inline EVP_PKEY *pushhub_rsa_public_key(const unsigned char *n, int nLength, const unsigned char *e,
                                               int eLength) {
    BIGNUM *modulus = BN_bin2bn(n, nLength, NULL);
    BIGNUM *exponent = BN_bin2bn(e, eLength, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    EVP_PKEY *key = NULL;
    if (modulus != NULL && exponent != NULL && builder != NULL
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, modulus) == 1
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, exponent) == 1)
        key = pushhub_public_key_from_params("RSA", builder);
    OSSL_PARAM_BLD_free(builder);
    BN_free(modulus);
    BN_free(exponent);
    return key;
}

/* An EC P-256 public key from its affine coordinates, 32 big-endian bytes each (a JWK's x and y,
   RFC 7518 §6.2.1), or NULL: OpenSSL refuses a point that is not on the curve, and the key is
   then checked as a whole (not the point at infinity, of the group's order). */
static inline EVP_PKEY *pushhub_ec_p256_public_key(const unsigned char *x, const unsigned char *y) {
    unsigned char point[65];
    point[0] = 0x04; /* uncompressed (SEC 1 §2.3.3) */
    memcpy(point + 1, x, 32);
    memcpy(point + 33, y, 32);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    EVP_PKEY *key = NULL;
    if (builder != NULL && OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) == 1
        && OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point) == 1)
        key = pushhub_public_key_from_params("EC", builder);
    OSSL_PARAM_BLD_free(builder);
    if (key == NULL) return NULL;
    EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int valid = check != NULL && EVP_PKEY_public_check(check) == 1;
    EVP_PKEY_CTX_free(check);
    if (!valid) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* An Ed25519 public key from its 32 bytes (a JWK's x, RFC 8037 §2), or NULL. */
static inline EVP_PKEY *pushhub_ed25519_public_key(const unsigned char *x) {
    return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
}

/* A JWS ECDSA signature r‖s (RFC 7518 §3.4: `half` big-endian bytes each) as the DER OpenSSL
   verifies (SEQUENCE { r INTEGER, s INTEGER }) in `der` (room for 2 * half + 8 bytes). The DER's
   length, or 0 on failure. Zero values convert: the verification refuses them. */
static inline int pushhub_ecdsa_raw_to_der(const unsigned char *raw, int half, unsigned char *der) {
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, half, NULL);
    BIGNUM *s = BN_bin2bn(raw + half, half, NULL);
    if (signature == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(signature, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(signature);
        return 0;
    }
    unsigned char *cursor = der;
    int length = i2d_ECDSA_SIG(signature, &cursor);
    ECDSA_SIG_free(signature);
    return length > 0 ? length : 0;
}

/* A verification context for `key` (EVP_DigestVerifyInit done once): with SHA-256 (RSASSA-
   PKCS1-v1_5 for an RSA key, ECDSA in DER for an EC key) when `sha256`, else the key's own scheme
   (Ed25519). NULL when OpenSSL cannot verify with the key. Never used itself, only copied
   (`pushhub_verify`): initialising costs more than the verification of a short token and takes
   OpenSSL's method-store locks, a copy does neither. */
static inline EVP_MD_CTX *pushhub_verifier_new(EVP_PKEY *key, int sha256) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return NULL;
    if (EVP_DigestVerifyInit(context, NULL, sha256 ? EVP_sha256() : NULL, NULL, key) != 1) {
        EVP_MD_CTX_free(context);
        ERR_clear_error();
        return NULL;
    }
    return context;
}

/* Whether `signature` is the key's over `data`, with a copy of `verifier` (which only reads it,
   so threads may verify with one verifier at once). 1 valid, 0 not (or a failure; the error
   queue is cleared either way). */
static inline int pushhub_verify(const EVP_MD_CTX *verifier, const unsigned char *data, size_t count,
                                 const unsigned char *signature, size_t length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return 0;
    int valid = EVP_MD_CTX_copy_ex(context, verifier) == 1
        && EVP_DigestVerify(context, signature, length, data, count) == 1;
    EVP_MD_CTX_free(context);
    ERR_clear_error();
    return valid;
}
#endif
