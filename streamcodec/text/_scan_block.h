/* The scanner's block step: the piece ends of 64 code points at once, as a bitmap, for the
 * named shapes whose pieces follow from a code point's neighbours (gpt2, cl100k_base,
 * o200k_base, Llama 3, Qwen 2, Tekken: sc_block_shape). The 64 code points are sorted into class
 * masks (bit k for s[k]): ASCII by compares (AVX-512, AVX2 or SSE2, chosen at run time:
 * _scan_simd.h); in a 2- or 4-byte string, those past ASCII by their
 * Unicode class (one table lookup each; a block with more than SC_WIDE_MOST of them is left to
 * K(next), which is faster there). Bit arithmetic on the masks marks where a piece starts; the
 * caller takes the pieces one after another (sc_walk) and leaves the rest to K(next). Each start
 * rule is argued in docs/performance.md ("The block step"); in short, with s[0] a piece start
 * (the pieces from there are those of s[0:] as a whole text: the patterns look only forward),
 * every piece of ASCII letters, digits, spaces, tabs, CR/LF and punctuation is cut where its
 * class run ends, but for the prefix a letter run takes (one space, tab, or punctuation that
 * starts a piece), digit groups, the whitespace alternatives' give-back and the contractions
 * (the only loop over the text here: over its apostrophes, which are rare). What the masks
 * cannot settle is "hard": a 1-byte string's code point past ASCII (but for
 * sc_block_ends_latin1, which sorts them as a 2-byte string's), o200k's marks not after a
 * letter ([^\s\p{L}\p{N}] holds them too) and capitals after a letter in both of its case classes
 * (Lm, Lo, a mark: whether U* or W+ took it decides), an apostrophe in the block's last three code
 * points (a contraction is told from the two after it), a space or tab before CR/LF
 * (\s*[\r\n] gives back to the run's last newline), o200k's '/' after CR/LF (its trail); the
 * bitmap stops two code points before the first hard one, and before a run of whitespace that
 * reaches it. Without SSE2 (or with -DSTREAMCODEC_NO_SIMD, or at the level "none") there is no
 * block step: sc_block_shape says none and K(next) cuts every piece. Needs Python.h first.
 */
#ifndef STREAMCODEC_SCAN_BLOCK_H
#define STREAMCODEC_SCAN_BLOCK_H

#include <stdint.h>

#include "_scan_pattern.h"
#include "_scan_simd.h"

#define SC_BLOCK 64
/* The most code points past ASCII a 2- or 4-byte string's block is cut with: denser ones
 * (Cyrillic, CJK, Bengali) cut 0.6-0.9x as fast as by K(next) alone. */
#define SC_WIDE_MOST 16
/* sc_block_ends' *hard for a block too dense: K(next) then cuts SC_DENSE_SKIP code points before
 * the next try (a try every 64 cost CJK text about 10%). */
#define SC_DENSE (-1)
#define SC_DENSE_SKIP 256

/* After a block from `base` whose walk stopped at i (hard: sc_block_ends'), where the step of
 * one piece must cut past before the next block: SC_DENSE_SKIP on when the block was too dense;
 * the first hard code point; a block on when the walk settled no piece (text past ASCII every
 * few code points, where blocks would cost more than they save: Latin-1 "\xe9a " repeated was
 * 1.4x slower than with no block step); nowhere when nothing was hard. */
static inline Py_ssize_t sc_block_past(Py_ssize_t base, Py_ssize_t i, int hard) {
    if (hard == SC_DENSE) return base + SC_DENSE_SKIP;
    if (hard == SC_BLOCK) return i > base ? i - 1 : i;
    return base + (i == base ? SC_BLOCK : hard);
}

#ifdef SC_SIMD_BLOCKS

/* The shape of `pattern` when the block step cuts it, else NULL: gpt2's (a space the only prefix,
 * no newline alternative) or one with a letter prefix, a newline alternative and a trail, and
 * no digit barrier; none at the level "none" (_scan_simd.h). */
static inline const sc_pattern *sc_block_shape(int pattern) {
    if (pattern < 0 || pattern >= PATTERN_COUNT || pattern == CUT_WORDS ||
        pattern == PATTERN_DEEPSEEK_V3 || sc_simd_level() == SC_SIMD_NONE)
        return NULL;
    const sc_pattern *p = &SC_PATTERNS[pattern];
    if (p->barrier != SC_BARRIER_NONE) return NULL;
    if (p->letters == SC_LETTERS_SPACE)
        return p->trail == SC_TRAIL_NONE && !p->newline && !p->digits ? p : NULL;
    return p->trail != SC_TRAIL_NONE && p->newline && p->digits ? p : NULL;
}

/* 16 code units of width 2 or 4 from s as bytes, each past ASCII made 0x80 (so sc_classify
 * reads it as `high`, in no ASCII class). */
static inline __m128i sc_narrow16(const void *s, int width) {
    __m128i zero = _mm_setzero_si128();
    if (width == 2) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)s + 1);
        __m128i ha = _mm_cmpeq_epi16(_mm_srli_epi16(a, 7), zero); /* below 0x80 */
        __m128i hb = _mm_cmpeq_epi16(_mm_srli_epi16(b, 7), zero);
        __m128i x = _mm_set1_epi16(0x80);
        a = _mm_or_si128(_mm_and_si128(a, ha), _mm_andnot_si128(ha, x));
        b = _mm_or_si128(_mm_and_si128(b, hb), _mm_andnot_si128(hb, x));
        return _mm_packus_epi16(a, b);
    }
    __m128i x = _mm_set1_epi32(0x80), w[4];
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)s + k);
        __m128i low = _mm_cmpeq_epi32(_mm_srli_epi32(v, 7), zero);
        w[k] = _mm_or_si128(_mm_and_si128(v, low), _mm_andnot_si128(low, x));
    }
    return _mm_packus_epi16(_mm_packs_epi32(w[0], w[1]), _mm_packs_epi32(w[2], w[3]));
}

/* The masks of the code points past ASCII of a 2- or 4-byte string's block, from their Unicode
 * classes (the same table K(next) reads): each is a letter, a digit, whitespace (`tab`: none is
 * the space or CR/LF) or, in none of them, punctuation; o200k's marks are letters (its U and W
 * hold them). One table lookup a code point past ASCII, no branch on its class. */
static inline void sc_classify_high(const void *s, int width, const sc_pattern *p,
                                    sc_masks *m) {
    unsigned letters = p->letters == SC_LETTERS_CASES ? O200K_UPPER | O200K_LOWER : UC_LETTER;
    for (uint64_t h = m->high; h; h &= h - 1) {
        int k = __builtin_ctzll(h);
        unsigned f = uc_class(PyUnicode_READ(width, s, k));
        m->letter |= (uint64_t)((f & letters) != 0) << k;
        m->lower |= (uint64_t)((f & (O200K_UPPER | O200K_LOWER)) == UC_LOWER) << k;
        m->upper |= (uint64_t)((f & (O200K_UPPER | O200K_LOWER)) == UC_UPPER) << k;
        m->both |= (uint64_t)((f & (UC_OTHER_LETTER | UC_MARK)) != 0) << k;
        m->mark |= (uint64_t)((f & UC_MARK) != 0) << k;
        m->digit |= (uint64_t)((f & UC_NUMBER) != 0) << k;
        m->tab |= (uint64_t)((f & UC_SPACE) != 0) << k;
    }
}

/* Where digit pieces start in the runs of `digit`: every run start, then every `most` digits
 * (most 0: the run is one piece). */
static inline uint64_t sc_digit_starts(uint64_t digit, int most) {
    uint64_t starts = digit & ~(digit << 1), whole = digit;
    if (!most) return starts;
    for (int k = 1; k < most; k++) whole &= digit << k; /* `most` digits end here */
    for (uint64_t t = starts; (t = (t << most) & whole);) starts |= t;
    return starts;
}

/* sc_block_ends from the block's masks m, the code points in no class (`bad`) marked hard;
 * `cont`: the continuation bytes of a block of UTF-8 (_scan_utf8.h), else 0. */
static inline __attribute__((always_inline)) uint64_t
sc_block_rules(const void *s, int width, const sc_pattern *p, sc_masks m, uint64_t bad,
               uint64_t cont, int *hard) {
    uint64_t L = m.letter, D = m.digit, S = m.space, N = m.newline, X = m.space | m.tab;
    uint64_t W = X | N;
    uint64_t P = ~(L | D | W | bad); /* the rest of ASCII: [^\s\p{L}\p{N}] */
    uint64_t starts;
    if (p->letters == SC_LETTERS_SPACE) {
        /* ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+': a space takes the run after
         * it; a whitespace run gives its last code point to what follows. */
        starts = (L & ~(L << 1) & ~(S << 1)) | (D & ~(D << 1) & ~(S << 1)) |
                 (P & ~(P << 1) & ~(S << 1)) | (W & ~(W << 1)) | (W & ~(W >> 1));
    } else {
        /* A punctuation run's start, unless a space before it takes it (' ?'): it is the
         * prefix of a letter run right after it. */
        uint64_t Pa = P & ~(P << 1) & ~(S << 1), Pl = Pa;
        for (int k = 0; cont && k < 3; k++) Pl |= (Pl << 1) & cont; /* to its last byte */
        starts = (L & ~(L << 1) & ~(X << 1) & ~(Pl << 1)) | sc_digit_starts(D, p->digits) |
                 Pa | (W & ~(W << 1) & ~(N & (P << 1))) /* CR/LF after punctuation: its trail */
                 | ((N << 1) & ~N) /* after the newlines of a whitespace run, or a trail */
                 | (X & ~(W >> 1)); /* a space or tab before the whitespace run ends */
        if (p->letters == SC_LETTERS_CASES) {
            /* U*W+|U+W*: a capital after a lower-case letter; after a letter in both classes
             * (Lm, Lo, a mark), U* may have taken it or W+, and the U run's end decides: hard.
             * A mark is a letter there but punctuation too ([^\s\p{L}\p{N}]): one not after
             * a letter is hard. */
            starts |= m.upper & (m.lower << 1);
            bad |= (m.upper & (m.both << 1)) | (m.mark & ~(L << 1));
        }
        bad |= N & (X << 1); /* a run's last CR/LF is past a space or tab */
        if (p->trail == SC_TRAIL_NEWLINES_SLASH) bad |= m.slash & (N << 1);
    }
    if (p->contraction != SC_CONTRACTION_NONE && m.apostrophe) {
        /* Where a contraction is tried: as an alternative of its own (gpt2, cl100k), at an
         * apostrophe that starts a piece, after anything but punctuation (the run goes on) or a
         * space (' ?'); as o200k's suffix, at one after a letter, unless that letter ends a
         * suffix already (a word takes one). A contraction takes the next 1 or 2 code points
         * whatever their starts (and, as a suffix, its apostrophe): they must be in the block. */
        int suffix = p->contraction == SC_CONTRACTION_SUFFIX, taken = -1;
        uint64_t at = m.apostrophe & (suffix ? L << 1 : ~(P << 1) & ~(S << 1));
        bad |= at & (7ull << 61);
        for (at &= ~(7ull << 61); at; at &= at - 1) {
            int j = __builtin_ctzll(at);
            int length = sc_contraction_length(PyUnicode_READ(width, s, j + 1),
                                               PyUnicode_READ(width, s, j + 2),
                                               p->contraction != SC_CONTRACTION_CASED);
            if (!length || (suffix && j == taken)) continue;
            starts &= ~(((1ull << length) - 2 + (uint64_t)suffix) << j);
            starts |= 1ull << (j + length);
            taken = j + length;
        }
    }
    int limit = bad ? __builtin_ctzll(bad) : SC_BLOCK;
    *hard = limit;
    int cap = limit - 2; /* a start is told by its code point and the next one */
    if (p->letters != SC_LETTERS_SPACE && limit >= 1 && (W >> (limit - 1) & 1)) {
        /* Whitespace runs to the hard code point: where its newlines end is not known. */
        uint64_t before = ~W & ((1ull << (limit - 1)) - 1);
        int run = before ? 64 - __builtin_clzll(before) : 0;
        if (run < cap) cap = run;
    }
    return cap < 1 ? 0 : starts & ((2ull << cap) - 2);
}

#ifdef SC_SIMD_WIDE
/* sc_block_ends of a 1-byte string's block at the level avx512: one call a block, the masks in
 * registers from the sort to the rules. */
static SC_AVX512 uint64_t sc_block_ends_avx512(const uint8_t *s, const sc_pattern *p, int *hard) {
    sc_masks m;
    sc_classify_avx512(s, &m);
    return sc_block_rules(s, 1, p, m, m.high, 0, hard);
}
#endif

/* The piece ends certain in s[0:64] (`width` bytes a code point), s[0] a piece start of a text
 * that goes on past s[63]: bit b set for each b in [1, 62] where a piece of the shape p
 * (sc_block_shape's) ends, all of them up to the last one set (0: none), each the end K(next)
 * gives (regex's match there). *hard gets the offset of the first hard code point, or 64. A
 * 1-byte string's block is sorted at the level in use (_scan_simd.h); a wider one's, narrowed
 * to bytes, by SSE2 (its code points past ASCII by their class, one by one). */
static inline __attribute__((always_inline)) uint64_t
sc_block_ends(const void *s, int width, const sc_pattern *p, int *hard) {
    sc_masks m;
    if (width == 1) {
#ifdef SC_SIMD_WIDE
        if (sc_simd_level() == SC_SIMD_AVX512) return sc_block_ends_avx512(s, p, hard);
#endif
        sc_classify_sse2(s, &m);
        return sc_block_rules(s, 1, p, m, m.high, 0, hard);
    }
    uint8_t narrow[SC_BLOCK];
    uint64_t high = 0;
    for (int at = 0; at < SC_BLOCK; at += 16) {
        __m128i v = sc_narrow16((const char *)s + (size_t)at * (size_t)width, width);
        _mm_storeu_si128((__m128i *)(narrow + at), v);
        high |= sc_bits(v, at);
    }
    if (__builtin_popcountll(high) > SC_WIDE_MOST) { /* K(next) is faster there */
        *hard = SC_DENSE;
        return 0;
    }
    sc_classify_sse2(narrow, &m);
    if (high) sc_classify_high(s, width, p, &m);
    return sc_block_rules(s, width, p, m, 0, 0, hard);
}

/* sc_block_ends of a 1-byte string's block with its code points past ASCII (Latin-1) sorted by
 * their class as a wider string's are (sc_classify_high), not hard; *high gets them (bit k for
 * s[k]): the caller reads a piece with one of them as UTF-8 of its own, not in place. The
 * ends are a 2-byte string's of the same code points. */
static inline uint64_t sc_block_ends_latin1(const uint8_t *s, const sc_pattern *p, int *hard,
                                            uint64_t *high) {
    sc_masks m;
    sc_classify_sse2(s, &m);
    *high = m.high;
    if (__builtin_popcountll(m.high) > SC_WIDE_MOST) { /* K(next) is faster there */
        *hard = SC_DENSE;
        return 0;
    }
    if (m.high) sc_classify_high(s, 1, p, &m);
    return sc_block_rules(s, 1, p, m, 0, 0, hard);
}
#else
static inline const sc_pattern *sc_block_shape(int pattern) {
    (void)pattern;
    return NULL;
}

static inline uint64_t sc_block_ends(const void *s, int width, const sc_pattern *p, int *hard) {
    (void)s, (void)width, (void)p;
    *hard = 0;
    return 0;
}

static inline uint64_t sc_block_ends_latin1(const uint8_t *s, const sc_pattern *p, int *hard,
                                            uint64_t *high) {
    (void)s, (void)p;
    *hard = 0;
    *high = 0;
    return 0;
}
#endif

/* A walk over the piece ends of one block, in order: K(scan) (text/_scan_kind.h) and the fused
 * pass (engine/_fused_kind.h) both take a block's pieces through it, from a piece start i:
 *
 *     sc_walk w;
 *     if (sc_walk_start(&w, shape, s, sizeof *s, i, past, n)) {
 *         for (Py_ssize_t e; (e = sc_walk_next(&w)) >= 0; i = e) ...the piece s[i:e]...
 *         past = sc_walk_past(&w, i);     // K(next) cuts until a piece ends past it
 *     }
 */
typedef struct {
    uint64_t ends;
    uint64_t high; /* sc_walk_high: Latin-1 code points, or continuation bytes of UTF-8 */
    Py_ssize_t base;
    int hard;
} sc_walk;

/* Whether the block step starts a block at i (the pattern has a block shape, i is past where the
 * last piece's step must cut, 64 code units are left): w->base set. Each sc_walk_start* asks it. */
static inline __attribute__((always_inline)) int
sc_walk_at(sc_walk *w, const sc_pattern *shape, Py_ssize_t i, Py_ssize_t past, Py_ssize_t n) {
    if (!shape || i <= past || n - i < SC_BLOCK) return 0;
    w->base = i;
    return 1;
}

/* Whether a block is cut at i (a shape with a block step, i past `past`, 64 code points left):
 * then w holds its ends. */
static inline __attribute__((always_inline)) int
sc_walk_start(sc_walk *w, const sc_pattern *shape, const void *s, int width, Py_ssize_t i,
              Py_ssize_t past, Py_ssize_t n) {
    if (!sc_walk_at(w, shape, i, past, n)) return 0;
    w->high = 0;
    w->ends = sc_block_ends((const char *)s + (size_t)i * (size_t)width, width, shape, &w->hard);
    return 1;
}

/* sc_walk_start for a 1-byte string past ASCII, its Latin-1 code points cut as a 2-byte
 * string's (sc_block_ends_latin1): a piece in [base, base + 64) holds one where w->high says. */
static inline __attribute__((always_inline)) int
sc_walk_start_latin1(sc_walk *w, const sc_pattern *shape, const uint8_t *s, Py_ssize_t i,
                     Py_ssize_t past, Py_ssize_t n) {
    if (!sc_walk_at(w, shape, i, past, n)) return 0;
    w->ends = sc_block_ends_latin1(s + i, shape, &w->hard, &w->high);
    return 1;
}

/* The bits of w->high in the piece s[i:e] of the walk's block (e - i < 64): not 0 where it holds
 * a code point past ASCII (sc_walk_start_latin1); its continuation bytes over UTF-8
 * (sc_walk_start_utf8). */
static inline uint64_t sc_walk_high(const sc_walk *w, Py_ssize_t i, Py_ssize_t e) {
    return w->high >> (i - w->base) & ((1ull << (e - i)) - 1);
}

/* The next piece end of the walk, or -1 when the block has no more. */
static inline Py_ssize_t sc_walk_next(sc_walk *w) {
    if (!w->ends) return -1;
    Py_ssize_t e = w->base + __builtin_ctzll(w->ends);
    w->ends &= w->ends - 1;
    return e;
}

/* Where the step of one piece must cut past before the next block, the walk stopped at i. */
static inline Py_ssize_t sc_walk_past(const sc_walk *w, Py_ssize_t i) {
    return sc_block_past(w->base, i, w->hard);
}

#endif
