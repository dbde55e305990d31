#ifndef PUSHHUB_COPENSSL_SHIM_H
#define PUSHHUB_COPENSSL_SHIM_H
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#endif
