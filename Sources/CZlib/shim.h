#ifndef PUSHHUB_CZLIB_SHIM_H
#define PUSHHUB_CZLIB_SHIM_H
/* zlib for permessage-deflate (RFC 7692): raw DEFLATE streams. deflateInit2 and inflateInit2 are
   macros Swift cannot call; these pass the version and struct size as zlib's own macros do. */
#include <zlib.h>

static inline int pushhub_deflate_init(z_stream *stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, -window_bits, mem_level, Z_DEFAULT_STRATEGY);
}
static inline int pushhub_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, -window_bits);
}
#endif
