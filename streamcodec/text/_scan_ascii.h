/* SWAR fast paths of the scanner for 1-byte strings (PEP 393's Latin-1 kind, which holds all
 * ASCII text): eight code points at a time through one 64-bit word, for the runs the patterns
 * take most often (letters, digits, spaces, punctuation). Each function returns how far, from i, the run
 * certainly goes: only whole words of ASCII code points all in the run's class are skipped, and
 * the caller's exact loop (uc_class on each code point) goes on from there, so the pieces are the
 * same with or without them. Plain C: no instruction set to choose at run time; on a big-endian
 * or non-GCC/Clang compiler the functions skip nothing (the portable fallback). */
#ifndef STREAMCODEC_SCAN_ASCII_H
#define STREAMCODEC_SCAN_ASCII_H

#include <stdint.h>
#include <string.h>

#include "_unicode_tables.h"

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SCAN_SWAR 1
#define SWAR_ONES 0x0101010101010101ull
#define SWAR_HIGH 0x8080808080808080ull

/* Bit 7 of each byte of the word w (bytes < 0x80 only, masked by the caller) set where the byte
 * is in [lo, hi]: v + (128 - lo) reaches 128 iff v >= lo, v + (127 - hi) iff v > hi, and no
 * sum carries into the next byte (both stay below 256). */
static inline uint64_t swar_between(uint64_t w, unsigned lo, unsigned hi) {
    uint64_t at_least_lo = w + (128 - lo) * SWAR_ONES;
    uint64_t above_hi = w + (127 - hi) * SWAR_ONES;
    return at_least_lo & ~above_hi & SWAR_HIGH;
}

/* Bit 7 of each byte of the 8 code points at s set where it is ASCII and in a class of `flags`
 * (A-Z are UC_UPPER, a-z UC_LOWER, 0-9 UC_NUMBER, the space UC_SPACE in _unicode_tables.h, and
 * the printable others UC_PUNCT or UC_SYMBOL: taken when both are asked for). */
static inline uint64_t swar_in_class(const uint8_t *s, unsigned flags) {
    uint64_t word;
    memcpy(&word, s, 8);
    uint64_t low = word & ~SWAR_HIGH, in = 0;
    if (flags & UC_UPPER) in |= swar_between(low, 'A', 'Z');
    if (flags & UC_LOWER) in |= swar_between(low, 'a', 'z');
    if (flags & UC_NUMBER) in |= swar_between(low, '0', '9');
    if (flags & UC_SPACE) in |= swar_between(low, ' ', ' ');
    if ((flags & (UC_PUNCT | UC_SYMBOL)) == (UC_PUNCT | UC_SYMBOL)) /* ASCII's are all P or S */
        in |= swar_between(low, '!', '/') | swar_between(low, ':', '@') |
              swar_between(low, '[', '`') | swar_between(low, '{', '~');
    return in & ~word; /* not ASCII: not taken here */
}

/* The end of the prefix of s[i:n] certainly in the run of `flags` (see the top). */
static inline Py_ssize_t ascii_run(const uint8_t *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    while (i + 8 <= n) {
        uint64_t out = ~swar_in_class(s + i, flags) & SWAR_HIGH;
        if (out) return i + (__builtin_ctzll(out) >> 3);
        i += 8;
    }
    return i;
}

/* Whether the run of `flags` surely ends at i, where ascii_run stopped: on a byte of a whole
 * word (i + 8 <= n: it had not run out of words) that is ASCII. For ASCII, swar_in_class is
 * uc_class & flags exactly unless the flags hold UC_SPACE (of \s it takes only the space), so
 * that byte is out of the class. tests/test_scan.py walks every code point after every run. */
static inline int ascii_run_ends(const uint8_t *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    return !(flags & UC_SPACE) && i + 8 <= n && s[i] < 0x80;
}

/* The first index in s[i:n] of a byte that is not ASCII, or n. */
static inline Py_ssize_t ascii_end(const uint8_t *s, Py_ssize_t i, Py_ssize_t n) {
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy(&word, s + i, 8);
        if (word & SWAR_HIGH) return i + (__builtin_ctzll(word & SWAR_HIGH) >> 3);
    }
    while (i < n && s[i] < 0x80) i++;
    return i;
}
#else
static inline Py_ssize_t ascii_end(const uint8_t *s, Py_ssize_t i, Py_ssize_t n) {
    while (i < n && s[i] < 0x80) i++;
    return i;
}

static inline Py_ssize_t ascii_run(const uint8_t *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    (void)s, (void)n, (void)flags;
    return i;
}

static inline int ascii_run_ends(const uint8_t *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    (void)s, (void)i, (void)n, (void)flags;
    return 0;
}
#endif

#endif
