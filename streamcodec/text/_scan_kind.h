/* The scanner module's loops for one PEP 393 string kind: included by _scan.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 * K(next), the step that cuts one piece, is _scan_next.h's; K(last_cut) is _scan_cut.h's.
 */
#include "_scan_cut.h"
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
