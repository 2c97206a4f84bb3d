/* The scanner module's loops for one PEP 393 string kind: included by _scan.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 * K(next), the step that cuts one piece, is _scan_next.h's; K(last_cut) is _scan_cut.h's; the
 * block step (64 code points at a time, any kind) is _scan_block.h's.
 */
#include "_scan_cut.h"
#include "_scan_next.h"
#include "_scan_block.h"

/* The ends of the pieces (or words) of s[start:n], appended to `out` (grown as needed); the
 * count, or -1 when out of memory. 64 code points at a time where the block step can
 * (_scan_block.h), K(next) one piece at a time from where it stops to past the first code point
 * it could not settle. No Python object is touched: callers may release the GIL. */
static Py_ssize_t K(scan)(const CH *s, Py_ssize_t start, Py_ssize_t n, int pattern,
                          Py_ssize_t **out, Py_ssize_t *cap) {
    Py_ssize_t count = 0, past = start - 1; /* K(next) cuts until a piece ends past `past` */
    const sc_pattern *shape = sc_block_shape(pattern);
    sc_walk w;
    for (Py_ssize_t i = start; i < n;) {
        if (sc_walk_start(&w, shape, s, sizeof *s, i, past, n)) {
            for (Py_ssize_t e; (e = sc_walk_next(&w)) >= 0; i = e) {
                if (count == *cap && grow(out, cap) < 0) return -1;
                (*out)[count++] = e;
            }
            past = sc_walk_past(&w, i);
            continue;
        }
        Py_ssize_t e = K(next)(s, i, n, pattern);
        if (count == *cap && grow(out, cap) < 0) return -1;
        (*out)[count++] = e;
        i = e;
    }
    return count;
}
