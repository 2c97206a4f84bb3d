/* The fused pass over one PEP 393 string kind: included by _fused.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 *
 * Each piece is cut by the scanner's step (streamcodec/text/_scan_next.h), or 64 code points at a
 * time by its block step (_scan_block.h; a 1-byte string's block before `stop`, with a first
 * level, is walked by fused_block_count or fused_block_ids, _fused_hits.h), and handed to
 * fused_piece (_fused.c) as soon as it is cut, as UTF-8: a 1-byte string's piece of ASCII code points is
 * its own UTF-8 (read in place), any other is encoded into p->buf (streamcodec/_utf8.h). A 2- or
 * 4-byte string is read as 1-byte strings where it can be (its stretches of code points below
 * 256, cut at safe cuts: K(fused)). No Python object is touched.
 */
#include "../text/_scan_cut.h"
#include "../text/_scan_next.h"
#include "../text/_scan_block.h"

/* The piece s[i:e] of a 1-byte string, all ASCII: its own UTF-8, read in place. */
static inline int K(in_place)(const CH *s, Py_ssize_t i, Py_ssize_t e, Py_ssize_t n,
                              fused_pass *p) {
    const uint8_t *b = (const uint8_t *)s + i;
    size_t len = (size_t)(e - i);
    /* Sixteen bytes from b are the text's while i + 16 <= n: two loads for the key. */
    return fused_piece(p, b, len, i + 16 <= n);
}

/* The piece s[i:e] of a 2- or 4-byte string (or a 1-byte one's past ASCII), encoded into
 * p->buf. FUSED_REFUSED with the piece in p->refused_start and p->refused_end when a lone
 * surrogate has no UTF-8 under p->escape. Each code point's bytes are one word (sc_utf8_word),
 * stored whole, and the key is read with two masked loads (16 bytes of p->buf are readable):
 * a byte loop, sc_head's, mispredicted its exit about once a wide piece. */
static inline int K(encoded)(const CH *s, Py_ssize_t i, Py_ssize_t e, fused_pass *p) {
    size_t most = sc_utf8_most((int)sizeof(CH)) * (size_t)(e - i) + 16;
    if (most > p->buf_cap && fused_grow_buffer(p, most) != SC_OK) return SC_NOMEM;
    uint8_t *out = p->buf;
    for (Py_ssize_t j = i; j < e; j++) {
        int put;
        uint32_t word = sc_utf8_word(s[j], p->escape, &put);
        if (put < 0) {
            p->refused_start = i;
            p->refused_end = e;
            return FUSED_REFUSED;
        }
        sc_utf8_store(out, word);
        out += put;
    }
    return fused_piece(p, p->buf, (size_t)(out - p->buf), 1);
}

/* The pieces of s[:n] from *at (a piece start) until one ends at or past `stop`: *at is left
 * at the next piece start (at the refused piece's start for FUSED_REFUSED). SC_OK, SC_NOMEM,
 * FUSED_LIMIT, or FUSED_REFUSED with the refused piece in p->refused_start and
 * p->refused_end. */
static int K(fused_units)(const CH *s, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t n,
                          fused_pass *p) {
    int status = SC_OK;
    Py_ssize_t i = *at;
    /* 1-byte strings: the first byte at or after i that is not ASCII (a piece before it is all
     * ASCII), found again only once i passes it, not piece by piece. */
    Py_ssize_t high = sizeof(CH) == 1 && !p->ascii ? -1 : n;
    /* 64 code points at a time where the block step can (_scan_block.h); K(next) from where
     * it stops until a piece ends past `past`.
     * Not in the stretches past U+00FF that K(fused) hands over for the named patterns: some 32
     * code units each, too short for a block to pay (warm count of the multilingual sample 0.9x
     * with it, cl100k_base). */
    const sc_pattern *shape =
        sizeof(CH) == 1 || p->pattern > PATTERN_O200K ? sc_block_shape(p->pattern) : NULL;
    Py_ssize_t past = i - 1;
    const fl_entry *lines = p->cache->first.lines;
    sc_walk w;
    /* A 1-byte string past ASCII has its Latin-1 code points cut by the block step too
     * (sc_walk_start_latin1), and its pieces with one of them encoded, not read in place: the
     * keyed block loop (fused_common) takes only blocks of ASCII. Where they were hard, text
     * with an accented letter every few words was cut piece by piece, the block started again
     * after each (the Latin-1 pieces of the multilingual sample: 679 instructions a piece,
     * 2.19 M against 3.52 M a warm count, cl100k_base; docs/performance.md, issue 27,
     * 2026-11-28). */
    int latin1 = sizeof(CH) == 1 && !p->ascii;
    while (i < stop && status == SC_OK) {
        if (latin1 ? sc_walk_start_latin1(&w, shape, (const uint8_t *)s, i, past, n)
                   : sc_walk_start(&w, shape, s, sizeof *s, i, past, n)) {
            if (sizeof(CH) == 1 && lines && !w.high && i + SC_BLOCK <= stop &&
                i + SC_BLOCK + 16 <= n) {
                /* The common block: every piece starts before `stop` and has 16 bytes of text
                 * from its start, and an ASCII piece read in place is never refused: one loop
                 * for each output, the first-level hits inline; where the timed choice asks for
                 * lines ahead, the common blocks after it too (fused_common, _fused_hits.h). */
                status = fused_common(p, (const uint8_t *)s, &i, &past, &w, shape, stop, n, 0);
                continue;
            } else {
                for (Py_ssize_t e; i < stop && status == SC_OK && (e = sc_walk_next(&w)) >= 0;) {
                    status = sizeof(CH) == 1 && !sc_walk_high(&w, i, e) ? K(in_place)(s, i, e, n, p)
                                                                        : K(encoded)(s, i, e, p);
                    if (status != FUSED_REFUSED) i = e;
                }
            }
            past = sc_walk_past(&w, i);
            continue;
        }
        Py_ssize_t e = K(next)(s, i, n, p->pattern);
        if (sizeof(CH) == 1 && high < i) high = ascii_end((const uint8_t *)s, i, n);
        status = sizeof(CH) == 1 && e <= high ? K(in_place)(s, i, e, n, p) : K(encoded)(s, i, e, p);
        if (status != FUSED_REFUSED) i = e;
    }
    *at = i;
    return status;
}

/* s[i:end] (2 or 4 bytes a code unit) copied as bytes to `to` up to its first code unit past
 * U+00FF: where the copy stopped, *latin1 set when a unit copied is past ASCII. Sixteen units a
 * step: with SSE2, loaded, checked (no high byte) and packed to bytes in a few instructions. */
static inline Py_ssize_t K(narrow)(const CH *s, Py_ssize_t i, Py_ssize_t end, uint8_t *to,
                                   int *latin1) {
    Py_ssize_t q = i;
    int past_ascii = 0;
#ifdef SC_SIMD_BLOCKS
    const __m128i zero = _mm_setzero_si128();
    __m128i seen = zero;
    for (; q + 16 <= end; q += 16) {
        const __m128i *v = (const __m128i *)(s + q);
        __m128i all, bytes;
        if (sizeof(CH) == 2) {
            __m128i a = _mm_loadu_si128(v), b = _mm_loadu_si128(v + 1);
            all = _mm_srli_epi16(_mm_or_si128(a, b), 8);
            bytes = _mm_packus_epi16(a, b);
        } else {
            __m128i a = _mm_loadu_si128(v), b = _mm_loadu_si128(v + 1);
            __m128i c = _mm_loadu_si128(v + 2), d = _mm_loadu_si128(v + 3);
            all = _mm_srli_epi32(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)), 8);
            bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
        }
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(all, zero)) != 0xFFFF) break; /* past U+00FF */
        _mm_storeu_si128((__m128i *)(to + (q - i)), bytes);
        seen = _mm_or_si128(seen, bytes);
    }
    past_ascii = _mm_movemask_epi8(seen) != 0;
#endif
    for (; q < end && s[q] <= 0xFF; q++) {
        to[q - i] = (uint8_t)s[q];
        past_ascii |= s[q] >= 0x80;
    }
    *latin1 = past_ascii;
    return q;
}

/* The UTF-8 bytes of s[i:e]. */
static inline Py_ssize_t K(utf8_bytes)(const CH *s, Py_ssize_t i, Py_ssize_t e) {
    Py_ssize_t bytes = e - i;
    for (; i < e; i++) bytes += (s[i] >= 0x80) + (s[i] >= 0x800) + (s[i] >= 0x10000);
    return bytes;
}

/* K(fused_units) for a 2- or 4-byte string read through its own UTF-8 (p->utf8, byte
 * p->utf8_off the start of code point *at): the block step cuts the UTF-8 (_scan_utf8.h), wide
 * text included, its pieces read in place (their keys loaded from the bytes) and the common
 * blocks' lines asked for ahead (fused_common) as a 1-byte string's; K(next) cuts the str where
 * the block step stops, its piece's bytes taken from the UTF-8. Keys from the str's bytes, not
 * encoded; no window narrowed (docs/performance.md, "The wide path", issue 27). */
static int K(fused_utf8)(const CH *s, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t n,
                         fused_pass *p) {
    const uint8_t *u = p->utf8;
    Py_ssize_t un = p->utf8_len, i = *at, o = p->utf8_off, past = o - 1;
    const sc_pattern *shape = sc_block_shape(p->pattern);
    const fl_entry *lines = p->cache->first.lines;
    int status = SC_OK;
    sc_walk w;
    while (i < stop && status == SC_OK) {
        if (sc_walk_start_utf8(&w, shape, u, o, past, un)) {
            if (lines && i + SC_BLOCK <= stop && o + SC_BLOCK + 16 <= un) {
                /* A piece that starts before byte o + (stop - i) starts before code point stop. */
                Py_ssize_t from = o;
                status = fused_common(p, u, &o, &past, &w, shape, o + (stop - i), un, 1);
                i += sc_utf8_points(u + from, o - from);
                continue;
            }
            for (Py_ssize_t e; i < stop && status == SC_OK && (e = sc_walk_next(&w)) >= 0; o = e) {
                status = fused_piece(p, u + o, (size_t)(e - o), o + 16 <= un);
                i += (e - o) - __builtin_popcountll(sc_walk_high(&w, o, e)); /* code points */
            }
            past = sc_walk_past(&w, o);
            continue;
        }
        Py_ssize_t e = K(next)(s, i, n, p->pattern), len = K(utf8_bytes)(s, i, e);
        status = fused_piece(p, u + o, (size_t)len, o + 16 <= un);
        i = e;
        o += len;
    }
    *at = i;
    p->utf8_at = i;
    p->utf8_off = o;
    return status;
}

/* K(fused_units), but a 2- or 4-byte string's stretches of code points below 256 (most of a text
 * with a curly quote or an emoji) are read as 1-byte strings: copied, FUSED_WINDOW at most at a
 * time, and handed to fused_units_1, whose ASCII pieces are read in place and whose scanner skips
 * runs eight code points at a time. A stretch is cut at the last safe cut before it ends
 * (_scan_cut.h, the named patterns only): the pieces of the text between a piece start i and a
 * safe cut c are those of s[i:c] read as a whole text, so the copy has the same pieces. Where no
 * such stretch begins (a code point past U+00FF at i, or no safe cut), the code units are read
 * as they are, one piece at a time, to a little past the code point that ended the stretch. */
static int K(fused)(const CH *s, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t n, fused_pass *p) {
    if (sizeof(CH) > 1 && p->utf8 && *at == p->utf8_at) return K(fused_utf8)(s, at, stop, n, p);
    if (sizeof(CH) == 1 || p->pattern > PATTERN_O200K) return K(fused_units)(s, at, stop, n, p);
    uint8_t narrow[FUSED_WINDOW];
    int ascii = p->ascii, crlf = p->pattern != PATTERN_GPT2, status = SC_OK;
    Py_ssize_t i = *at;
    while (i < stop && status == SC_OK) {
        Py_ssize_t end = n - i > FUSED_WINDOW ? i + FUSED_WINDOW : n;
        int latin1;
        Py_ssize_t q = K(narrow)(s, i, end, narrow, &latin1);
        Py_ssize_t cut = q == n ? n : K(last_cut)(s, i + 1, q, crlf);
        if (cut > i) {
            Py_ssize_t j = 0;
            p->ascii = !latin1; /* else fused_units_1 finds where ASCII ends */
            status = fused_units_1(narrow, &j, (stop < cut ? stop : cut) - i, cut - i, p);
            p->ascii = ascii;
            i += j;
        } else {
            Py_ssize_t past = q + FUSED_AFTER < stop ? q + FUSED_AFTER : stop, from = i;
            status = K(fused_units)(s, &i, past, n, p);
            p->wide += i - from;
        }
    }
    *at = i;
    return status;
}
