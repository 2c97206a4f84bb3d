/* The scanner's block step for 1-byte strings: the piece ends of 64 code points at once, as a
 * bitmap, for the named shapes whose ASCII pieces follow from a code point's neighbours (gpt2,
 * cl100k_base, o200k_base, Llama 3, Qwen 2, Tekken: sc_block_shape). SSE2 sorts the 64 bytes
 * into class masks (bit k for s[k]); bit arithmetic on the masks marks where a piece starts; the
 * caller takes the pieces one after another (ctz) and leaves the rest to K(next). Each start
 * rule is argued in docs/performance.md ("The block step"); in short, with s[0] a piece start
 * (the pieces from there are those of s[0:] as a whole text: the patterns look only forward),
 * every piece of ASCII letters, digits, spaces, tabs, CR/LF and punctuation is cut where its
 * class run ends, but for the prefix a letter run takes (one space, tab, or punctuation that
 * starts a piece), digit groups, the whitespace alternatives' give-back and the contractions
 * (the only loop over the text here: over its apostrophes, which are rare). What the masks
 * cannot settle is "hard": a byte past ASCII, an apostrophe in the block's last three code
 * points (a contraction is told from the two after it), a space or tab before CR/LF
 * (\s*[\r\n] gives back to the run's last newline), o200k's '/' after CR/LF (its trail); the
 * bitmap stops two code points before the first hard one, and before a run of whitespace that
 * reaches it. Without SSE2 (or with -DSTREAMCODEC_NO_SIMD) there is no block step:
 * sc_block_shape says none and K(next) cuts every piece, as before. Needs Python.h first.
 */
#ifndef STREAMCODEC_SCAN_BLOCK_H
#define STREAMCODEC_SCAN_BLOCK_H

#include <stdint.h>

#include "_scan_pattern.h"

#define SC_BLOCK 64

/* After a block from `base` whose walk stopped at i (hard: sc_block_ends'), where the step of
 * one piece must cut past before the next block: the first hard code point; a block on when the
 * walk settled no piece (text past ASCII every few code points, where blocks would cost more than
 * they save: Latin-1 "\xe9a " repeated was 1.4x slower than with no block step); nowhere when
 * nothing was hard. */
static inline Py_ssize_t sc_block_past(Py_ssize_t base, Py_ssize_t i, int hard) {
    if (hard == SC_BLOCK) return i > base ? i - 1 : i;
    return base + (i == base ? SC_BLOCK : hard);
}

#if defined(__SSE2__) && defined(__GNUC__) && !defined(STREAMCODEC_NO_SIMD)
#include <emmintrin.h>

/* The shape of `pattern` when the block step cuts it, else NULL: gpt2's (a space the only prefix,
 * no newline alternative) or one with a letter prefix, a newline alternative and a trail, and
 * no digit barrier. */
static inline const sc_pattern *sc_block_shape(int pattern) {
    if (pattern < 0 || pattern >= PATTERN_COUNT || pattern == CUT_WORDS ||
        pattern == PATTERN_DEEPSEEK_V3)
        return NULL;
    const sc_pattern *p = &SC_PATTERNS[pattern];
    if (p->barrier != SC_BARRIER_NONE) return NULL;
    if (p->letters == SC_LETTERS_SPACE)
        return p->trail == SC_TRAIL_NONE && !p->newline && !p->digits ? p : NULL;
    return p->trail != SC_TRAIL_NONE && p->newline && p->digits ? p : NULL;
}

/* The class masks of 64 ASCII-or-not bytes: bit k for s[k]. */
typedef struct {
    uint64_t letter, lower, digit, space, tab, newline, apostrophe, slash, high;
} sc_masks;

/* Bytes of v in [lo, hi] (lo >= 1): a signed compare, so bytes past ASCII are never in. */
static inline __m128i sc_between(__m128i v, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}

static inline uint64_t sc_bits(__m128i m, int at) {
    return (uint64_t)(unsigned)_mm_movemask_epi8(m) << at;
}

static inline void sc_classify(const uint8_t *s, sc_masks *m) {
    *m = (sc_masks){0};
    for (int at = 0; at < SC_BLOCK; at += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + at));
        __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* A-Z to a-z */
        __m128i newline = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                                       _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
        m->letter |= sc_bits(sc_between(folded, 'a', 'z'), at);
        m->lower |= sc_bits(sc_between(v, 'a', 'z'), at);
        m->digit |= sc_bits(sc_between(v, '0', '9'), at);
        m->space |= sc_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), at);
        m->newline |= sc_bits(newline, at);
        /* \t \v \f: the rest of ASCII's \s */
        m->tab |= sc_bits(_mm_andnot_si128(newline, sc_between(v, '\t', '\r')), at);
        m->apostrophe |= sc_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\'')), at);
        m->slash |= sc_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')), at);
        m->high |= sc_bits(v, at);
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

/* The piece ends certain in s[0:64], s[0] a piece start of a text that goes on past s[63]: bit b
 * set for each b in [1, 62] where a piece of the shape p (sc_block_shape's) ends, all of them up
 * to the last one set (0: none), each the end K(next) gives (regex's match there). *hard gets
 * the offset of the first hard code point, or 64. */
static inline uint64_t sc_block_ends(const uint8_t *s, const sc_pattern *p, int *hard) {
    sc_masks m;
    sc_classify(s, &m);
    uint64_t L = m.letter, D = m.digit, S = m.space, N = m.newline, X = m.space | m.tab;
    uint64_t W = X | N;
    uint64_t bad = m.high;
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
        uint64_t Pa = P & ~(P << 1) & ~(S << 1);
        starts = (L & ~(L << 1) & ~(X << 1) & ~(Pa << 1)) | sc_digit_starts(D, p->digits) |
                 Pa | (W & ~(W << 1) & ~(N & (P << 1))) /* CR/LF after punctuation: its trail */
                 | ((N << 1) & ~N) /* after the newlines of a whitespace run, or a trail */
                 | (X & ~(W >> 1)); /* a space or tab before the whitespace run ends */
        if (p->letters == SC_LETTERS_CASES) starts |= L & ~m.lower & (m.lower << 1);
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
            int length = sc_contraction_length(s[j + 1], s[j + 2],
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
#else
static inline const sc_pattern *sc_block_shape(int pattern) {
    (void)pattern;
    return NULL;
}

static inline uint64_t sc_block_ends(const uint8_t *s, const sc_pattern *p, int *hard) {
    (void)s, (void)p;
    *hard = 0;
    return 0;
}
#endif

#endif
