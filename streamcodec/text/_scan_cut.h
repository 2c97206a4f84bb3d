/* The safe cuts of the named patterns for one PEP 393 string kind: included once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 *
 * A cut at p is safe when the pieces that end before p are those of s[:p] read as a whole text,
 * whatever follows (docs/streaming.md has the rules and their proof, for gpt2/r50k/p50k,
 * cl100k_base and o200k_base only). The scanner module's last_cut (_scan_kind.h) serves the
 * stream; the fused pass (streamcodec/engine/_fused_kind.h) cuts a 2- or 4-byte string into
 * stretches that it reads as 1-byte strings at them. Needs Python.h and _unicode_tables.h first.
 */

/* The last p in [lo, hi) where a stream may cut before s[p] (the safe-cut rules of
 * docs/streaming.md, rule 6 when `crlf`), looking back into s[:p]; -1 if none. */
static Py_ssize_t K(last_cut)(const CH *s, Py_ssize_t lo, Py_ssize_t hi, int crlf) {
    for (Py_ssize_t p = hi - 1; p >= lo && p >= 1; p--) {
        Py_UCS4 x = s[p - 1], y = s[p];
        unsigned fx = uc_class(x), fy = uc_class(y);
        int y_newline = y == '\r' || y == '\n', x_newline = x == '\r' || x == '\n';
        int y_surrogate = y >= 0xD800 && y <= 0xDFFF;
        if (!(fx & UC_SPACE) && (fy & UC_SPACE) && !y_newline) return p; /* 1 */
        if ((fx & (UC_LETTER | UC_NUMBER)) && y_newline) return p;      /* 2 */
        if ((fx & UC_LETTER) && !(fy & (UC_LETTER | UC_MARK | UC_SPACE)) && y != '\'' &&
            !y_surrogate)
            return p; /* 3 */
        if ((fx & UC_NUMBER) && !(fy & (UC_NUMBER | UC_SPACE)) && !y_surrogate) return p; /* 4 */
        if (x_newline && !(fy & UC_SPACE) && y != '/') {
            if (p >= 2 && !(uc_class(s[p - 2]) & UC_SPACE)) return p; /* 5 */
            if (crlf && x == '\n' && p >= 3 && s[p - 2] == '\r' &&
                !(uc_class(s[p - 3]) & UC_SPACE))
                return p; /* 6 */
        }
    }
    return -1;
}
