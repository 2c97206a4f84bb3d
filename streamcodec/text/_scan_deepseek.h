/* DeepSeek V3/R1's pre-tokenizer, one kind's copy (included by _scan_kind.h, with CH and K):
 * the pattern streamcodec.formats.hf_sequences.DEEPSEEK_V3_PATTERN (= known_patterns'), which is
 * its tokenizer.json's three Splits as one pattern. Alternatives in order (B, a barrier: a digit
 * or a CJK character, sc_cjk; LM = [\p{L}\p{M}], PS = [\p{P}\p{S}]):
 *   \p{N}{1,3}
 *   inside CJK:  (CJK not L/P/S)? (CJK LM)+ | (CJK PS)+ | CJK characters none of those match
 *   elsewhere:   [ASCII punctuation][A-Za-z]+ | [^\r\n\p{L}\p{P}\p{S}]? LM+ | ' '? PS+ [\r\n]*
 *                | \s*[\r\n]+ | \s+(?![^\s\p{N}CJK]) | \s+ | characters none of those match
 * where no class of the last line takes a barrier. Each optional prefix is greedy but never in
 * the run after it, so it is tried once either way, as in K(prefix_letters). */

#define DS_LM (UC_LETTER | UC_MARK)
#define DS_PS (UC_PUNCT | UC_SYMBOL)

/* The end of the run from i of code points in a class of `flags`, CJK ones if `cjk`, else none
 * (no class of `flags` holds a digit, so the run never takes a barrier). */
static inline Py_ssize_t K(ds_run)(const CH *s, Py_ssize_t i, Py_ssize_t n, unsigned flags,
                                   int cjk) {
    if (sizeof(CH) == 1 && !cjk) i = ascii_run((const uint8_t *)s, i, n, flags); /* not CJK */
    while (i < n && (uc_class(s[i]) & flags) && sc_cjk(s[i]) == cjk) i++;
    return i;
}

/* Inside CJK at i (s[i] is CJK): the end of the piece of the first line, or 0. */
static inline Py_ssize_t K(ds_in_cjk)(const CH *s, Py_ssize_t i, Py_ssize_t n) {
    unsigned f = uc_class(s[i]);
    if (!(f & (UC_LETTER | DS_PS)) && i + 1 < n && sc_cjk(s[i + 1]) &&
        (uc_class(s[i + 1]) & DS_LM))
        return K(ds_run)(s, i + 2, n, DS_LM, 1);
    if (f & DS_LM) return K(ds_run)(s, i + 1, n, DS_LM, 1);
    if (f & DS_PS) return K(ds_run)(s, i + 1, n, DS_PS, 1);
    return 0;
}

static inline int K(ascii_letter)(Py_UCS4 c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

/* Elsewhere at i (s[i] no barrier): the end of the piece of the second line, or 0. */
static inline Py_ssize_t K(ds_third)(const CH *s, Py_ssize_t i, Py_ssize_t n) {
    Py_UCS4 c = s[i];
    unsigned f = uc_class(c);
    int ascii_punct = (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
                      (c >= '{' && c <= '~');
    if (ascii_punct && i + 1 < n && K(ascii_letter)(s[i + 1])) {
        Py_ssize_t k = i + 2;
        while (k < n && K(ascii_letter)(s[k])) k++;
        return k;
    }
    if (!(f & (UC_LETTER | DS_PS)) && c != '\r' && c != '\n' && i + 1 < n && !sc_cjk(s[i + 1]) &&
        (uc_class(s[i + 1]) & DS_LM))
        return K(ds_run)(s, i + 2, n, DS_LM, 0);
    if (f & DS_LM) return K(ds_run)(s, i + 1, n, DS_LM, 0);
    Py_ssize_t j = i;
    if (c == ' ' && i + 1 < n && !sc_cjk(s[i + 1]) && (uc_class(s[i + 1]) & DS_PS)) j = i + 1;
    if (uc_class(s[j]) & DS_PS) {
        Py_ssize_t k = K(ds_run)(s, j + 1, n, DS_PS, 0);
        while (k < n && (s[k] == '\r' || s[k] == '\n')) k++;
        return k;
    }
    if (f & UC_SPACE) return K(spaces)(s, i, n, &SC_PATTERNS[PATTERN_DEEPSEEK_V3]);
    return 0;
}

/* The end of the piece at i (see the top). */
static Py_ssize_t K(deepseek_next)(const CH *s, Py_ssize_t i, Py_ssize_t n) {
    Py_UCS4 c = s[i];
    Py_ssize_t k = i + 1;
    if (uc_class(c) & UC_NUMBER) {
        while (k < n && k < i + 3 && (uc_class(s[k]) & UC_NUMBER)) k++;
        return k;
    }
    if (sc_cjk(c)) {
        Py_ssize_t e = K(ds_in_cjk)(s, i, n);
        if (e) return e;
        while (k < n && sc_cjk(s[k]) && !K(ds_in_cjk)(s, k, n)) k++;
        return k;
    }
    Py_ssize_t e = K(ds_third)(s, i, n);
    if (e) return e;
    while (k < n && !(uc_class(s[k]) & UC_NUMBER) && !sc_cjk(s[k]) && !K(ds_third)(s, k, n)) k++;
    return k;
}

#undef DS_LM
#undef DS_PS
