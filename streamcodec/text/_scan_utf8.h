/* The block step over UTF-8: the piece ends of 64 bytes of a str's own UTF-8 at once, for the
 * fused pass of a 2- or 4-byte str that has it (engine/_fused_kind.h's K(fused_utf8)), so that
 * wide text keeps the block step and its pieces are read in place, their keys loaded from the
 * bytes, as a 1-byte str's ASCII pieces are.
 *
 * The masks are a byte's, not a code point's: each byte of a code point past ASCII gets its code
 * point's classes (decoded at its lead byte, one table lookup: sc_classify_high's classes), so a
 * run of letters is a run of bytes and _scan_block.h's rules, which look at a code point and the
 * one before it, read the byte before a lead byte as the code point before. Three rules look
 * further, and are kept exact this way:
 *   - a rule that looks at the code point after (the whitespace runs' give-back, W >> 1): a
 *     whitespace code point past ASCII is hard (the bitmap stops before it), so the one before
 *     a settled start is ASCII and the next byte is the next code point;
 *   - the digit groups (\p{N}{1,3}) count code points: a digit past ASCII is hard;
 *   - the prefix of a letter run, a punctuation code point that starts its run (Pa << 1): the
 *     rules spread it over its continuation bytes (sc_block_rules' `cont`), so it is seen from
 *     the byte after its last;
 * and a contraction's apostrophe with a byte past ASCII in the two after it is hard (uc_fold's
 * U+017F is an `s`). The ends are then those sc_block_ends gives the same code points in a 2-
 * or 4-byte str, at their byte offsets. Needs Python.h first.
 */
#ifndef STREAMCODEC_SCAN_UTF8_H
#define STREAMCODEC_SCAN_UTF8_H

#include "_scan_block.h"

#ifdef SC_SIMD_BLOCKS
/* The continuation bytes (0x80-0xBF) of s[0:64]: bit k for s[k]. */
static inline uint64_t sc_utf8_cont(const uint8_t *s) {
    uint64_t cont = 0;
    for (int at = 0; at < SC_BLOCK; at += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + at));
        cont |= sc_bits(_mm_cmplt_epi8(v, _mm_set1_epi8((char)0xC0)), at);
    }
    return cont;
}

/* The code point whose UTF-8 (valid: the str's own) starts at s[0] past ASCII; *len its bytes. */
static inline uint32_t sc_utf8_decode(const uint8_t *s, int *len) {
    uint32_t b = s[0];
    if (b < 0xE0) {
        *len = 2;
        return (b & 0x1F) << 6 | (s[1] & 0x3Fu);
    }
    if (b < 0xF0) {
        *len = 3;
        return (b & 0x0F) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu);
    }
    *len = 4;
    return (b & 0x07) << 18 | (s[1] & 0x3Fu) << 12 | (s[2] & 0x3Fu) << 6 | (s[3] & 0x3Fu);
}

/* sc_block_ends_utf8 after the sort of its ASCII bytes (m): the code points past ASCII sorted
 * by class, the rules. */
static inline __attribute__((always_inline)) uint64_t
sc_utf8_rules(const uint8_t *s, const sc_pattern *p, sc_masks m, int *hard, uint64_t *cont) {
    uint64_t bad = 0, follow = 0;
    *cont = 0;
    if (m.high) {
        unsigned letters = p->letters == SC_LETTERS_CASES ? O200K_UPPER | O200K_LOWER : UC_LETTER;
        uint64_t c = *cont = sc_utf8_cont(s);
        for (uint64_t h = m.high & ~c; h; h &= h - 1) {
            int k = __builtin_ctzll(h), len;
            unsigned f = uc_class(sc_utf8_decode(s + k, &len));
            uint64_t all = ((1ull << len) - 1) << k; /* bytes past s[63] drop out */
            if (f & (UC_SPACE | UC_NUMBER)) {
                bad |= 1ull << k;
                continue;
            }
            m.letter |= (f & letters) ? all : 0;
            m.lower |= (f & (O200K_UPPER | O200K_LOWER)) == UC_LOWER ? all : 0;
            m.upper |= (f & (O200K_UPPER | O200K_LOWER)) == UC_UPPER ? all : 0;
            m.both |= (f & (UC_OTHER_LETTER | UC_MARK)) ? all : 0;
            m.mark |= (f & UC_MARK) ? all : 0;
        }
        follow = m.high >> 1 | m.high >> 2;
    }
    /* an apostrophe before a byte past ASCII: its contraction is told from code points */
    bad |= m.apostrophe & follow;
    return sc_block_rules(s, 1, p, m, bad, *cont, hard);
}

#ifdef SC_SIMD_WIDE
/* sc_block_ends_utf8 at the level avx512: its ASCII bytes sorted in one register. */
static SC_AVX512 uint64_t sc_block_ends_utf8_avx512(const uint8_t *s, const sc_pattern *p,
                                                    int *hard, uint64_t *cont) {
    sc_masks m;
    sc_classify_avx512(s, &m);
    return sc_utf8_rules(s, p, m, hard, cont);
}
#endif

/* sc_block_ends of the 64 bytes s[0:64] of valid UTF-8 (s[0] a piece start, the text going on
 * past s[63]; a code point may run past s[63]): bit b set where a piece ends at byte b. *cont
 * gets the continuation bytes. */
static inline uint64_t sc_block_ends_utf8(const uint8_t *s, const sc_pattern *p, int *hard,
                                          uint64_t *cont) {
#ifdef SC_SIMD_WIDE
    if (sc_simd_level() == SC_SIMD_AVX512) return sc_block_ends_utf8_avx512(s, p, hard, cont);
#endif
    sc_masks m;
    sc_classify_sse2(s, &m);
    return sc_utf8_rules(s, p, m, hard, cont);
}

/* sc_walk_start over UTF-8 u[0:n] from byte i (sc_block_ends_utf8): w->high gets the block's
 * continuation bytes. */
static inline __attribute__((always_inline)) int
sc_walk_start_utf8(sc_walk *w, const sc_pattern *shape, const uint8_t *u, Py_ssize_t i,
                   Py_ssize_t past, Py_ssize_t n) {
    if (!sc_walk_at(w, shape, i, past, n)) return 0;
    w->ends = sc_block_ends_utf8(u + i, shape, &w->hard, &w->high);
    return 1;
}
#else
static inline int sc_walk_start_utf8(sc_walk *w, const sc_pattern *shape, const uint8_t *u,
                                     Py_ssize_t i, Py_ssize_t past, Py_ssize_t n) {
    (void)w, (void)shape, (void)u, (void)i, (void)past, (void)n;
    return 0;
}
#endif

/* The code points of the UTF-8 u[0:len]: its bytes that are no continuation byte. */
static inline Py_ssize_t sc_utf8_points(const uint8_t *u, Py_ssize_t len) {
    Py_ssize_t points = len, k = 0;
#ifdef SC_SIMD_BLOCKS
    for (; k + 16 <= len; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(u + k));
        points -= __builtin_popcount((unsigned)_mm_movemask_epi8(
            _mm_cmplt_epi8(v, _mm_set1_epi8((char)0xC0))));
    }
#endif
    for (; k < len; k++) points -= (int8_t)u[k] < -64;
    return points;
}

#endif
