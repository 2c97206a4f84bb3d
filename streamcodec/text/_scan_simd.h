/* The block step's first stage: 64 bytes sorted into class masks (bit k for s[k]), with the
 * widest instructions the processor has, chosen at run time. The masks are the same whatever
 * the instructions; _scan_block.h's rules read them.
 *
 * Levels: "avx512" (AVX-512BW: the 64 bytes in one register, each class one or two compares
 * straight into a 64-bit mask; a function of its own, called once a block), "sse2" (16 bytes a
 * compare, inline in the walk; every x86-64 processor has it), "none" (no block step: K(next)
 * cuts every piece, as in a build with -DSTREAMCODEC_NO_SIMD or for another processor). AVX2
 * (32 bytes a compare, called once a block) measured no faster than the inline SSE2
 * (docs/performance.md), so it is not a level. The best level the processor and the build
 * allow is taken when the module is loaded (sc_simd_init); simd(level) lowers it, for the tests
 * (every level must give the same pieces, on one machine) and for A/B timings. The level is
 * read once a block, relaxed: a change reaches running calls at their next block, and every
 * level cuts the same pieces.
 *
 * A range of bytes [lo, hi] is one compare of x - lo below hi - lo + 1, unsigned (AVX-512 has
 * that compare; SSE2 compares signed bytes, so both sides are moved by 128): a byte past ASCII
 * is in no range of ASCII bytes. Needs Python.h first.
 */
#ifndef STREAMCODEC_SCAN_SIMD_H
#define STREAMCODEC_SCAN_SIMD_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The class masks of 64 code points: bit k for s[k]. `letter` is the shape's (\p{L}; o200k's
 * U|W, marks included), `tab` the rest of \s but the space and CR/LF, `upper` and `lower` the
 * letters only in o200k's U or only in its W, `both` the letters in both (Lm, Lo, marks), `mark`
 * the marks; `high` every code point past ASCII. The sorts below fill the ASCII classes and
 * `high`; a wider string's code points past ASCII are sorted by their Unicode class
 * (_scan_block.h's sc_classify_high). */
typedef struct {
    uint64_t letter, lower, upper, both, mark, digit, space, tab, newline, apostrophe, slash, high;
} sc_masks;

enum { SC_SIMD_NONE, SC_SIMD_SSE2, SC_SIMD_AVX512, SC_SIMD_LEVELS };
static const char *const SC_SIMD_NAMES[SC_SIMD_LEVELS] = {"none", "sse2", "avx512"};

static _Atomic int sc_simd; /* the level in use (sc_simd_init; simd() lowers it) */

static inline int sc_simd_level(void) {
    return atomic_load_explicit(&sc_simd, memory_order_relaxed);
}

#if defined(__SSE2__) && defined(__GNUC__) && !defined(STREAMCODEC_NO_SIMD)
#define SC_SIMD_BLOCKS 1
#include <emmintrin.h>
#if defined(__x86_64__) || defined(__i386__)
#define SC_SIMD_WIDE 1 /* an AVX-512BW function beside the SSE2 build (a target attribute) */
#include <immintrin.h>
#endif

/* Bytes of v in [lo, hi] (1 <= lo <= hi < 128; bytes past ASCII never in). */
static inline __m128i sc_between(__m128i v, char lo, char hi) {
    __m128i moved = _mm_add_epi8(v, _mm_set1_epi8((char)(128 - lo)));
    return _mm_cmplt_epi8(moved, _mm_set1_epi8((char)(hi - lo + 1 - 128)));
}

static inline uint64_t sc_bits(__m128i m, int at) {
    return (uint64_t)(unsigned)_mm_movemask_epi8(m) << at;
}

/* The ASCII classes and `high` of s[0:64], 16 bytes a step. */
static inline void sc_classify_sse2(const uint8_t *s, sc_masks *m) {
    *m = (sc_masks){0};
    for (int at = 0; at < 64; at += 16) {
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
    m->upper = m->letter & ~m->lower;
}

#ifdef SC_SIMD_WIDE
#define SC_AVX512 __attribute__((target("avx512bw"), noinline))
#define SC_AVX512_INLINE __attribute__((target("avx512bw"), always_inline)) inline

/* sc_classify_sse2, all 64 bytes at once, each class a mask register. */
static SC_AVX512_INLINE void sc_classify_avx512(const uint8_t *s, sc_masks *m) {
    __m512i v = _mm512_loadu_si512((const void *)s);
    __m512i folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
#define SC_IN(x, lo, hi)                                                                       \
    _mm512_cmplt_epu8_mask(_mm512_sub_epi8((x), _mm512_set1_epi8(lo)),                         \
                           _mm512_set1_epi8((char)((hi) - (lo) + 1)))
#define SC_IS(c) _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c))
    uint64_t newline = SC_IS('\n') | SC_IS('\r'), letter = SC_IN(folded, 'a', 'z');
    uint64_t lower = SC_IN(v, 'a', 'z');
    *m = (sc_masks){.letter = letter,
                    .lower = lower,
                    .upper = letter & ~lower,
                    .digit = SC_IN(v, '0', '9'),
                    .space = SC_IS(' '),
                    .tab = SC_IN(v, '\t', '\r') & ~newline,
                    .newline = newline,
                    .apostrophe = SC_IS('\''),
                    .slash = SC_IS('/'),
                    .high = _mm512_movepi8_mask(v)};
#undef SC_IN
#undef SC_IS
}
#endif

#endif

/* The best level this build and processor run. */
static int sc_simd_best(void) {
#ifdef SC_SIMD_WIDE
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bw")) return SC_SIMD_AVX512;
#endif
#ifdef SC_SIMD_BLOCKS
    return SC_SIMD_SSE2;
#else
    return SC_SIMD_NONE;
#endif
}

/* At the module's load: the best level. */
static void sc_simd_init(void) { atomic_store(&sc_simd, sc_simd_best()); }

/* simd() -> the level's name; simd(name): use that level from now on (at most the best), and
 * return the one before. */
static PyObject *sc_simd_method(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "simd() takes at most one argument, a level's name");
        return NULL;
    }
    int was = sc_simd_level();
    if (nargs == 1) {
        const char *name = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
        if (!name) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "simd(): a level's name");
            return NULL;
        }
        int level = 0, best = sc_simd_best();
        while (level < SC_SIMD_LEVELS && strcmp(name, SC_SIMD_NAMES[level])) level++;
        if (level == SC_SIMD_LEVELS) {
            PyErr_Format(PyExc_ValueError, "simd(%R): the level is one of none, sse2, avx512",
                         args[0]);
            return NULL;
        }
        if (level > best) {
            PyErr_Format(PyExc_ValueError, "simd(%R): this build and processor run %s at most",
                         args[0], SC_SIMD_NAMES[best]);
            return NULL;
        }
        atomic_store_explicit(&sc_simd, level, memory_order_relaxed);
    }
    return PyUnicode_FromString(SC_SIMD_NAMES[was]);
}

#define SC_SIMD_METHOD                                                                         \
    {"simd", (PyCFunction)(void (*)(void))sc_simd_method, METH_FASTCALL,                       \
     "simd([level]): the block step's instruction set (none, sse2, avx512); with a "           \
     "level, use it from now on (at most the processor's best) and return the one before."}

#endif
