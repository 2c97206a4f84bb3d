/* The shapes of the pre-tokenizer patterns the native scanner cuts: what K(next)'s `pattern`
 * number stands for. streamcodec.text.known_patterns parses a pattern string into these fields
 * (its Shape; the two tables must agree, tests/test_known_patterns.py checks them) and names the
 * number; _scan_kind.h's K(shape_next) cuts any shape, always inlined with a constant shape.
 *
 * Every shape's alternatives come in this order, each field choosing one spelling:
 *   contraction  letters  numbers  punctuation+trail  whitespace
 */
#ifndef STREAMCODEC_SCAN_PATTERN_H
#define STREAMCODEC_SCAN_PATTERN_H

#include <stdint.h>

#include "_unicode_tables.h"

#define UC_LETTER (UC_UPPER | UC_LOWER | UC_OTHER_LETTER)
/* o200k_base's case classes: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}]. */
#define O200K_UPPER (UC_UPPER | UC_OTHER_LETTER | UC_MARK)
#define O200K_LOWER (UC_LOWER | UC_OTHER_LETTER | UC_MARK)

/* The letter classes of c that o200k's case alternatives tell apart: UC_UPPER (Lu, Lt: only in
 * U), UC_LOWER (Ll: only in W), or others (in both, or none). */
static inline unsigned sc_case(uint32_t c) {
    return uc_class(c) & (O200K_UPPER | O200K_LOWER);
}

/* The contraction alternative: none; '(?:[sdmt]|ll|ve|re) (CASED); '(?i:[sdmt]|ll|ve|re)
 * (FOLDED); or (?i:'s|'t|'re|'ve|'m|'ll|'d)? after each letter alternative (SUFFIX, o200k). */
enum { SC_CONTRACTION_NONE, SC_CONTRACTION_CASED, SC_CONTRACTION_FOLDED, SC_CONTRACTION_SUFFIX };
/* The letter alternatives: " ?\p{L}+" (SPACE, and then " ?" before numbers and punctuation too);
 * "[^\r\n\p{L}\p{N}]?\p{L}+" (PREFIX); o200k's two case alternatives (CASES). */
enum { SC_LETTERS_SPACE, SC_LETTERS_PREFIX, SC_LETTERS_CASES };
/* The trail after " ?[^\s\p{L}\p{N}]+": none, [\r\n]*, or [\r\n/]*. */
enum { SC_TRAIL_NONE, SC_TRAIL_NEWLINES, SC_TRAIL_NEWLINES_SLASH };

typedef struct {
    unsigned char contraction; /* SC_CONTRACTION_* */
    unsigned char letters;     /* SC_LETTERS_* */
    unsigned char digits;      /* 0: " ?\p{N}+" (with SC_LETTERS_SPACE); k: \p{N}{1,k} */
    unsigned char trail;       /* SC_TRAIL_* */
    unsigned char newline;     /* \s*[\r\n]+ (or its twin \s*[\r\n]) before \s+(?!\S) */
    unsigned char dollar;      /* \s++$ before that newline alternative */
    unsigned char barrier;     /* SC_BARRIER_*: where the whitespace alternatives see an end */
} sc_pattern;

/* What ends a text for \s+(?!\S) besides the end: nothing; a digit (HF's Digits first:
 * \p{N} alone, then \s+(?![^\s\p{N}])); a digit or a CJK character (DeepSeek V3). */
enum { SC_BARRIER_NONE, SC_BARRIER_DIGITS, SC_BARRIER_DIGITS_CJK };

/* DeepSeek V3's CJK ranges [一-龥぀-ゟ゠-ヿ]: U+4E00..U+9FA5 and U+3040..U+30FF. */
static inline int sc_cjk(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x30FF);
}

/* The length of the contraction after an apostrophe followed by the code points a and b (0 for
 * none, as past the text's end): 's 't 'm 'd 2, 'll 've 're 3; under regex's IGNORECASE when
 * `folded`, else ASCII lower case only. No two of them match at one place. */
static inline int sc_contraction_length(uint32_t a, uint32_t b, int folded) {
    char x = folded ? uc_fold(a) : a < 0x80 ? (char)a : 0;
    if (x == 's' || x == 'd' || x == 'm' || x == 't') return 2;
    char y = folded ? uc_fold(b) : b < 0x80 ? (char)b : 0;
    return (x == 'l' && y == 'l') || (x == 'v' && y == 'e') || (x == 'r' && y == 'e') ? 3 : 0;
}

/* The pattern numbers (K(next)'s `pattern`); CUT_WORDS cuts Pretokenizer.words instead. */
enum {
    PATTERN_GPT2 = 0,   /* gpt2/r50k/p50k; HF ByteLevel; whisper */
    PATTERN_CL100K = 1, /* cl100k_base as tiktoken writes it today */
    PATTERN_O200K = 2,  /* o200k_base, o200k_harmony */
    CUT_WORDS = 3,
    PATTERN_LLAMA3 = 4, /* Llama 3, cl100k_base's earlier spelling */
    PATTERN_QWEN2 = 5,  /* Qwen 2/2.5/3 */
    PATTERN_TEKKEN = 6, /* Mistral Tekken */
    PATTERN_DIGITS_GPT2 = 7, /* StarCoder 2, SmolLM: Digits(individual_digits), then GPT-2's */
    PATTERN_DEEPSEEK_V3 = 8, /* DeepSeek V3/R1's three Splits as one pattern: no shape, its own
                                scanner (_scan_deepseek.h) */
    PATTERN_COUNT = 9
};

static const sc_pattern SC_PATTERNS[PATTERN_COUNT] = {
    [PATTERN_GPT2] = {SC_CONTRACTION_CASED, SC_LETTERS_SPACE, 0, SC_TRAIL_NONE, 0, 0, 0},
    [PATTERN_CL100K] = {SC_CONTRACTION_FOLDED, SC_LETTERS_PREFIX, 3, SC_TRAIL_NEWLINES, 1, 1, 0},
    [PATTERN_O200K] = {SC_CONTRACTION_SUFFIX, SC_LETTERS_CASES, 3, SC_TRAIL_NEWLINES_SLASH, 1, 0,
                       0},
    [CUT_WORDS] = {0, 0, 0, 0, 0, 0, 0},
    [PATTERN_LLAMA3] = {SC_CONTRACTION_FOLDED, SC_LETTERS_PREFIX, 3, SC_TRAIL_NEWLINES, 1, 0, 0},
    [PATTERN_QWEN2] = {SC_CONTRACTION_FOLDED, SC_LETTERS_PREFIX, 1, SC_TRAIL_NEWLINES, 1, 0, 0},
    [PATTERN_TEKKEN] = {SC_CONTRACTION_NONE, SC_LETTERS_CASES, 1, SC_TRAIL_NEWLINES_SLASH, 1, 0,
                        0},
    [PATTERN_DIGITS_GPT2] = {SC_CONTRACTION_CASED, SC_LETTERS_SPACE, 1, SC_TRAIL_NONE, 0, 0,
                             SC_BARRIER_DIGITS},
    /* Its whitespace alternatives only: \s*[\r\n]+ | \s+(?![^\s\p{N}CJK]) | \s+ */
    [PATTERN_DEEPSEEK_V3] = {0, 0, 0, 0, 1, 0, SC_BARRIER_DIGITS_CJK},
};

#endif
