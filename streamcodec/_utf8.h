/* The one UTF-8 encoder and reader of the compiled code. sc_utf8_word: a code point to the bytes
 * str.encode("utf-8", errors) gives it, as one word, errors being "strict" or "surrogateescape";
 * sc_utf8_put writes them. The piece encoder (pieces/_core.c, str pieces to bytes) and the fused
 * pass (engine/_fused_kind.h, each piece as it is cut, its first-level key built from the words)
 * both encode through it, so they cannot disagree on a byte. sc_utf8_get:
 * the next code point of UTF-8 bytes as bytes.decode("utf-8") reads it (the batch pass,
 * engine/_fused_batch.h, decodes documents given as bytes with it).
 *
 *     uint8_t buf[4];
 *     int n = sc_utf8_put(buf, 0x20AC, 0);   // 3: E2 82 AC
 *     uint32_t c;
 *     n = sc_utf8_get(buf, 3, &c);           // 3: c == 0x20AC
 */
#ifndef STREAMCODEC_UTF8_H
#define STREAMCODEC_UTF8_H

#include <stdint.h>

/* c's UTF-8 as one little-endian word (byte k at bits 8k: the order of a key's bytes,
 * _first_level.h), its length (1..4) in *len; *len = -1 for a lone surrogate the mode refuses
 * (`escape`: surrogateescape, which turns U+DC80..U+DCFF back into the byte 0x80..0xFF it
 * escapes; every other surrogate is refused by both modes). */
static inline uint32_t sc_utf8_word(uint32_t c, int escape, int *len) {
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0x800) {
        *len = 2;
        return (0xc0 | c >> 6) | (0x80 | (c & 0x3f)) << 8;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
        *len = escape && c >= 0xdc80 && c <= 0xdcff ? 1 : -1;
        return c - 0xdc00;
    }
    if (c < 0x10000) {
        *len = 3;
        return (0xe0 | c >> 12) | (0x80 | (c >> 6 & 0x3f)) << 8 | (0x80 | (c & 0x3f)) << 16;
    }
    *len = 4;
    return (0xf0 | c >> 18) | (0x80 | (c >> 12 & 0x3f)) << 8 | (0x80 | (c >> 6 & 0x3f)) << 16 |
           (uint32_t)(0x80 | (c & 0x3f)) << 24;
}

/* The word's four bytes at out (one store where the compiler merges them): out[:4] must be
 * writable whatever the code point's length. */
static inline void sc_utf8_store(uint8_t *out, uint32_t word) {
    out[0] = (uint8_t)word;
    out[1] = (uint8_t)(word >> 8);
    out[2] = (uint8_t)(word >> 16);
    out[3] = (uint8_t)(word >> 24);
}

/* Write c's UTF-8 at out (at most 4 bytes) and return how many; -1 for a lone surrogate the
 * mode refuses (sc_utf8_word). */
static inline int sc_utf8_put(uint8_t *out, uint32_t c, int escape) {
    int len;
    uint32_t word = sc_utf8_word(c, escape, &len);
    for (int k = 0; k < len; k++) out[k] = (uint8_t)(word >> 8 * k);
    return len;
}

/* The code point of the UTF-8 sequence at s[:n] (n >= 1) into *c, and its length 1..4. Bytes
 * that start no valid sequence give minus the length of their maximal subpart (1..3): the bytes
 * that bytes.decode("utf-8", "replace") turns into one U+FFFD. Each lead byte admits the
 * second-byte range that rules out overlong forms, surrogates and code points past U+10FFFF, as
 * CPython's decoder does. */
static inline int sc_utf8_get(const uint8_t *s, size_t n, uint32_t *c) {
    uint8_t b = s[0], lo = 0x80, hi = 0xbf;
    if (b < 0x80) {
        *c = b;
        return 1;
    }
    int need;
    uint32_t v;
    if (b < 0xc2 || b > 0xf4) return -1;
    if (b < 0xe0) {
        need = 1;
        v = b & 0x1fu;
    } else if (b < 0xf0) {
        need = 2;
        v = b & 0x0fu;
        if (b == 0xe0) lo = 0xa0;
        if (b == 0xed) hi = 0x9f;
    } else {
        need = 3;
        v = b & 0x07u;
        if (b == 0xf0) lo = 0x90;
        if (b == 0xf4) hi = 0x8f;
    }
    for (int k = 1; k <= need; k++) {
        if ((size_t)k >= n || s[k] < lo || s[k] > hi) return -k;
        v = v << 6 | (s[k] & 0x3fu);
        lo = 0x80;
        hi = 0xbf;
    }
    *c = v;
    return need + 1;
}

/* Why sc_utf8_get refused the bytes at s[:n] (it returned -k): CPython's reason. */
static inline const char *sc_utf8_reason(const uint8_t *s, size_t n, int k) {
    if (s[0] < 0xc2 || s[0] > 0xf4) return "invalid start byte";
    return (size_t)-k >= n ? "unexpected end of data" : "invalid continuation byte";
}

/* The most UTF-8 bytes a code point of a PEP 393 kind (1, 2 or 4 bytes a code point) takes:
 * Latin-1 needs 2, the BMP 3. Buffers are sized by kind, not by 4. */
static inline size_t sc_utf8_most(int kind_bytes) { return kind_bytes == 1 ? 2 : kind_bytes == 2 ? 3 : 4; }

#endif
