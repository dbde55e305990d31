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
#endif
