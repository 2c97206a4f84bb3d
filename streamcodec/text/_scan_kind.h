/* The scanner module's loops for one PEP 393 string kind: included by _scan.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 * K(next), the step that cuts one piece, is _scan_next.h's.
 */
#include "_scan_next.h"

/* The ends of the pieces (or words) of s[start:n], appended to `out` (grown as needed); the
 * count, or -1 when out of memory. No Python object is touched: callers may release the GIL. */
static Py_ssize_t K(scan)(const CH *s, Py_ssize_t start, Py_ssize_t n, int pattern,
                          Py_ssize_t **out, Py_ssize_t *cap) {
    Py_ssize_t count = 0;
    for (Py_ssize_t i = start; i < n;) {
        Py_ssize_t e = K(next)(s, i, n, pattern);
        if (count == *cap && grow(out, cap) < 0) return -1;
        (*out)[count++] = e;
        i = e;
    }
    return count;
}

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
