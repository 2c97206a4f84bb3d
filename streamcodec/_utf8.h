/* The one UTF-8 encoder of the compiled code: a code point to the bytes str.encode("utf-8",
 * errors) gives it, errors being "strict" or "surrogateescape". The piece encoder
 * (pieces/_core.c, str pieces to bytes) and the fused pass (engine/_fused_kind.h, each piece as
 * it is cut) both write through it, so they cannot disagree on a byte.
 *
 *     uint8_t buf[4];
 *     int n = sc_utf8_put(buf, 0x20AC, 0);   // 3: E2 82 AC
 */
#ifndef STREAMCODEC_UTF8_H
#define STREAMCODEC_UTF8_H

#include <stdint.h>

/* Write c's UTF-8 at out (at most 4 bytes) and return how many; -1 for a lone surrogate the
 * mode refuses (`escape`: surrogateescape, which turns U+DC80..U+DCFF back into the byte
 * 0x80..0xFF it escapes; every other surrogate is refused by both modes). */
static inline int sc_utf8_put(uint8_t *out, uint32_t c, int escape) {
    if (c < 0x80) {
        out[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (uint8_t)(0xc0 | c >> 6);
        out[1] = (uint8_t)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
        if (!escape || c < 0xdc80 || c > 0xdcff) return -1;
        out[0] = (uint8_t)(c - 0xdc00);
        return 1;
    }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xe0 | c >> 12);
        out[1] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
        out[2] = (uint8_t)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (uint8_t)(0xf0 | c >> 18);
    out[1] = (uint8_t)(0x80 | (c >> 12 & 0x3f));
    out[2] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
    out[3] = (uint8_t)(0x80 | (c & 0x3f));
    return 4;
}

/* The most UTF-8 bytes a code point of a PEP 393 kind (1, 2 or 4 bytes a code point) takes:
 * Latin-1 needs 2, the BMP 3. Buffers are sized by kind, not by 4. */
static inline size_t sc_utf8_most(int kind_bytes) { return kind_bytes == 1 ? 2 : kind_bytes == 2 ? 3 : 4; }

#endif
