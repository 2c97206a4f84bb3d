/* The scanner's step for one PEP 393 string kind: included once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 *
 * K(next)(s, i, n, pattern) returns the end of the piece that starts at i in the text s[:n],
 * i < n: the match `regex` finds at i with the pattern numbered `pattern` (_scan_pattern.h,
 * streamcodec.text.known_patterns), n standing for the end of the text ($, lookaheads). Every pattern matches at every position and
 * never matches the empty string, so the pieces of s[start:n] are start = e0 < e1 = next(e0) < ...
 * How each alternative's backtracking reduces to the scans below is argued in docs/performance.md
 * ("The native scanner"); tests/test_scan.py and the fuzz targets check it against regex.
 * Needs Python.h first. Included by _scan_kind.h (the scanner module) and by the fused pass
 * (streamcodec/engine/_fused_kind.h), which cuts each piece with it.
 */
#include "_scan_ascii.h"
#include "_scan_pattern.h"

/* The end of the run of code points from i whose class has one of the `flags` (1-byte strings
 * skip whole ASCII words of the run first, and often know the end from there: _scan_ascii.h). */
static inline Py_ssize_t K(run)(const CH *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    if (sizeof(CH) == 1) {
        i = ascii_run((const uint8_t *)s, i, n, flags);
        if (ascii_run_ends((const uint8_t *)s, i, n, flags)) return i;
    }
    while (i < n && (uc_class(s[i]) & flags)) i++;
    return i;
}

/* The end of the run from i of code points with none of the `flags` (1-byte strings skip whole
 * words of ASCII punctuation and symbols first when `flags` are the punctuation run's
 * complement, letters, numbers and whitespace: no such code point is in one of them). */
static inline Py_ssize_t K(run_not)(const CH *s, Py_ssize_t i, Py_ssize_t n, unsigned flags) {
    if (sizeof(CH) == 1 && flags == (UC_LETTER | UC_NUMBER | UC_SPACE))
        i = ascii_run((const uint8_t *)s, i, n, UC_PUNCT | UC_SYMBOL);
    while (i < n && !(uc_class(s[i]) & flags)) i++;
    return i;
}

/* The whitespace alternatives at i, where s[i] is whitespace and the run ends at k:
 *   gpt2                \s++$ | \s+(?!\S) | \s        (or \s+(?!\S) | \s+)
 *   newline, dollar     \s++$ | \s*[\r\n] | \s+(?!\S) | \s
 *   newline             \s*[\r\n]+ | \s+(?!\S) | \s+
 * \s++$ takes the run when it ends the text; \s*[\r\n] and \s*[\r\n]+ give back to the last CR
 * or LF of the run and end after it; \s+(?!\S) takes the run at the text's end, else gives back
 * its last character (which a following \S would refuse), if that leaves one; \s and \s+ take
 * the one character left. */
static inline Py_ssize_t K(spaces)(const CH *s, Py_ssize_t i, Py_ssize_t n, const sc_pattern *p) {
    Py_ssize_t k = i, last_newline = -1;
    if (sizeof(CH) == 1) k = ascii_run((const uint8_t *)s, i, n, UC_SPACE); /* spaces: no CR/LF */
    while (k < n && (uc_class(s[k]) & UC_SPACE)) {
        if (s[k] == '\r' || s[k] == '\n') last_newline = k;
        k++;
    }
    /* With a barrier, a digit (or CJK character) after the run ends the text, as
     * (?![^\s\p{N}]) sees it. */
    int end = k == n || (p->barrier && ((uc_class(s[k]) & UC_NUMBER) ||
                                        (p->barrier == SC_BARRIER_DIGITS_CJK && sc_cjk(s[k]))));
    if (end && (p->dollar || !p->newline)) return k;
    if (p->newline && last_newline >= 0) return last_newline + 1;
    if (end) return k;
    return k - 1 > i ? k - 1 : i + 1;
}

/* The contraction at i: '(?:[sdmt]|ll|ve|re), under regex's IGNORECASE when `folded` (which
 * (?i:'s|'t|'re|'ve|'m|'ll|'d) also is: no two of them match at one place); its end, or 0. */
static inline Py_ssize_t K(contraction)(const CH *s, Py_ssize_t i, Py_ssize_t n, int folded) {
    if (i + 1 >= n || s[i] != '\'') return 0;
    int length = sc_contraction_length(s[i + 1], i + 2 < n ? s[i + 2] : 0, folded);
    return length ? i + length : 0;
}

/* [^\r\n\p{L}\p{N}]?\p{L}+ at i (c = s[i], f its class): the end, or -1. The prefix is greedy
 * but no letter, so at most one of its two tries can match. Always inlined: the named patterns'
 * commonest piece, which the compiler's limits put out of line in the wide strs' pass. */
static inline __attribute__((always_inline)) Py_ssize_t
K(prefix_letters)(const CH *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 c, unsigned f) {
    if (f & UC_LETTER) return K(run)(s, i + 1, n, UC_LETTER);
    if (!(f & UC_NUMBER) && c != '\r' && c != '\n' && i + 1 < n &&
        (uc_class(s[i + 1]) & UC_LETTER))
        return K(run)(s, i + 2, n, UC_LETTER);
    return -1;
}

/* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ at j: the end of the W+ run, or -1.
 * U* first takes its whole run [j, k); W+ then needs a W at k, or, giving back, at the last
 * position of the run that is in both (Lm, Lo, M); W+ takes its whole run from there. */
static inline Py_ssize_t K(o200k_lower)(const CH *s, Py_ssize_t j, Py_ssize_t n) {
    Py_ssize_t k = j, m = -1;
    unsigned g = 0;
    while (k < n && ((g = uc_class(s[k])) & O200K_UPPER)) {
        if (g & O200K_LOWER) m = k;
        k++;
    }
    if (k < n && (g & O200K_LOWER)) m = k;
    return m < 0 ? -1 : K(run)(s, m + 1, n, O200K_LOWER);
}

/* o200k's letter alternatives at i (P = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
 * W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C = (?i:'s|'t|'re|'ve|'m|'ll|'d) when `suffix`, else nothing):
 *   P?U*W+C? | P?U+W*C?
 * P? is greedy: each alternative is tried with P, then without. The end, or -1. */
static inline Py_ssize_t K(case_letters)(const CH *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 c,
                                         unsigned f, int suffix) {
    int prefix = !(f & (UC_LETTER | UC_NUMBER)) && c != '\r' && c != '\n';
    Py_ssize_t e = -1;
    if (prefix && i + 1 < n) e = K(o200k_lower)(s, i + 1, n);
    if (e < 0 && (f & (O200K_UPPER | O200K_LOWER))) e = K(o200k_lower)(s, i, n);
    if (e < 0 && prefix && i + 1 < n && (uc_class(s[i + 1]) & O200K_UPPER))
        e = K(run)(s, K(run)(s, i + 2, n, O200K_UPPER), n, O200K_LOWER);
    if (e < 0 && (f & O200K_UPPER))
        e = K(run)(s, K(run)(s, i + 1, n, O200K_UPPER), n, O200K_LOWER);
    if (e < 0 || !suffix) return e;
    Py_ssize_t t = K(contraction)(s, e, n, 1);
    return t ? t : e;
}

/* The punctuation run [^\s\p{L}\p{N}]+ from j + 1 on, then the shape's trail: [\r\n]* or
 * [\r\n/]* (neither is in the run's class, so the run gives nothing back to it). */
static inline Py_ssize_t K(punctuation)(const CH *s, Py_ssize_t j, Py_ssize_t n, int trail) {
    Py_ssize_t k = K(run_not)(s, j + 1, n, UC_LETTER | UC_NUMBER | UC_SPACE);
    if (trail != SC_TRAIL_NONE)
        while (k < n && (s[k] == '\r' || s[k] == '\n' || (trail == SC_TRAIL_NEWLINES_SLASH &&
                                                          s[k] == '/')))
            k++;
    return k;
}

/* For the case shapes (o200k_base, Tekken), the commonest pieces of text first: a lower-case
 * letter (Ll), or a capital (Lu, Lt) and a lower-case one, alone or after one space, taken with
 * a few tests of code units (ASCII) or two class lookups (past ASCII: Cyrillic, Greek...) before
 * K(shape_next) tries the alternatives in order (for these shapes, K(case_letters) is their
 * longest code); the end, or -1 for any other piece (and for the other shapes, whose letter
 * alternative is short already). The same end as the alternatives give: no contraction or
 * digit barrier starts at a letter or a space in these shapes; a space before a letter is the
 * prefix P = [^\r\n\p{L}\p{N}], tried first; U*W+ at a letter only in W takes no capital, and
 * at a letter only in U before one only in W takes that one capital, then the run of W (K(run),
 * as K(o200k_lower) runs it); at a letter or mark in both U and W, the run of those (U* takes
 * it; W+ then takes the run of W after it, or its last one if none follows), unless a capital
 * ends it; then the contraction suffix, as K(case_letters) takes it. */
static inline __attribute__((always_inline)) Py_ssize_t
K(cased_word)(const CH *s, Py_ssize_t i, Py_ssize_t n, const sc_pattern *p) {
    if (p->letters != SC_LETTERS_CASES) return -1;
    Py_ssize_t j = s[i] == ' ' && i + 1 < n ? i + 1 : i;
    unsigned c = s[j];
    if (c - 'a' < 26u) {
        j += 1;
    } else if (c - 'A' < 26u && j + 1 < n && (unsigned)s[j + 1] - 'a' < 26u) {
        j += 2;
    } else if (c < 0x80) {
        return -1;
    } else if (sc_case(c) == UC_LOWER) {
        j += 1;
    } else if (sc_case(c) == UC_UPPER && j + 1 < n && sc_case(s[j + 1]) == UC_LOWER) {
        j += 2;
    } else if (sc_case(c) & (UC_OTHER_LETTER | UC_MARK)) {
        /* In both U and W (Lm, Lo, M: CJK, kana, Arabic, Devanagari...): U* takes their run,
         * then W+ the run of W from its end, or gives back its last one; a capital would
         * lengthen U*, so that piece is left to the alternatives. */
        j = K(run)(s, j + 1, n, UC_OTHER_LETTER | UC_MARK);
        if (j < n && (uc_class(s[j]) & UC_UPPER)) return -1;
    } else {
        return -1;
    }
    Py_ssize_t e = K(run)(s, j, n, O200K_LOWER);
    if (p->contraction != SC_CONTRACTION_SUFFIX) return e;
    Py_ssize_t t = K(contraction)(s, e, n, 1);
    return t ? t : e;
}

/* The piece at i for a pattern of shape p (_scan_pattern.h), alternatives in order:
 *   contraction | letters | numbers | ' ?[^\s\p{L}\p{N}]+' trail | whitespace
 * Always inlined by K(next) with a constant shape, so each pattern gets its own straight code.
 * SC_LETTERS_SPACE (GPT-2): ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+': a space goes with what
 * follows it unless that is whitespace (or, with a digit barrier, a digit: the end of its part
 * of the text). */
static inline __attribute__((always_inline)) Py_ssize_t
K(shape_next)(const CH *s, Py_ssize_t i, Py_ssize_t n, const sc_pattern *p) {
    Py_UCS4 c = s[i];
    Py_ssize_t e = K(cased_word)(s, i, n, p);
    if (e >= 0) return e;
    unsigned f = uc_class(c);
    if (p->barrier && (f & UC_NUMBER)) return i + 1; /* SC_LETTERS_SPACE only: HF's Digits */
    if (c == '\'' && (p->contraction == SC_CONTRACTION_CASED ||
                      p->contraction == SC_CONTRACTION_FOLDED)) {
        Py_ssize_t e = K(contraction)(s, i, n, p->contraction == SC_CONTRACTION_FOLDED);
        if (e) return e;
    }
    Py_ssize_t j = i;
    if (p->letters == SC_LETTERS_SPACE) {
        unsigned after = p->barrier ? UC_SPACE | UC_NUMBER : UC_SPACE;
        if (c == ' ' && i + 1 < n && !(uc_class(s[i + 1]) & after)) f = uc_class(s[j = i + 1]);
        if (f & UC_LETTER) return K(run)(s, j + 1, n, UC_LETTER);
        if (f & UC_NUMBER) return K(run)(s, j + 1, n, UC_NUMBER);
        if (!(f & UC_SPACE)) return K(punctuation)(s, j, n, p->trail);
        return K(spaces)(s, i, n, p);
    }
    e = p->letters == SC_LETTERS_PREFIX
                       ? K(prefix_letters)(s, i, n, c, f)
                       : K(case_letters)(s, i, n, c, f, p->contraction == SC_CONTRACTION_SUFFIX);
    if (e >= 0) return e;
    if (f & UC_NUMBER) {
        Py_ssize_t k = i + 1;
        while (k < n && k < i + p->digits && (uc_class(s[k]) & UC_NUMBER)) k++;
        return k;
    }
    if (c == ' ' && i + 1 < n && !(uc_class(s[i + 1]) & (UC_SPACE | UC_LETTER | UC_NUMBER)))
        j = i + 1;
    if (!(uc_class(s[j]) & UC_SPACE)) return K(punctuation)(s, j, n, p->trail);
    return K(spaces)(s, i, n, p);
}

/* streamcodec.text.pretokenize.Pretokenizer.words: a word at i ends before the next space
 * (U+0020) that follows a character other than whitespace. */
static Py_ssize_t K(word_next)(const CH *s, Py_ssize_t i, Py_ssize_t n) {
    for (Py_ssize_t j = i + 1; j < n; j++)
        if (s[j] == ' ' && !(uc_class(s[j - 1]) & UC_SPACE)) return j;
    return n;
}

#include "_scan_deepseek.h"

#define SHAPE_CASE(number)                                                                       \
    case number: return K(shape_next)(s, i, n, &SC_PATTERNS[number]);

/* The end of the piece (or, for CUT_WORDS, word) at i: the match `regex` finds at i with the
 * pattern numbered `pattern` (_scan_pattern.h). */
static inline Py_ssize_t K(next)(const CH *s, Py_ssize_t i, Py_ssize_t n, int pattern) {
    switch (pattern) {
        SHAPE_CASE(PATTERN_GPT2)
        SHAPE_CASE(PATTERN_CL100K)
        SHAPE_CASE(PATTERN_O200K)
        SHAPE_CASE(PATTERN_LLAMA3)
        SHAPE_CASE(PATTERN_QWEN2)
        SHAPE_CASE(PATTERN_TEKKEN)
        SHAPE_CASE(PATTERN_DIGITS_GPT2)
    case PATTERN_DEEPSEEK_V3: return K(deepseek_next)(s, i, n);
    default: return K(word_next)(s, i, n);
    }
}

#undef SHAPE_CASE

