/* The scanner module's loops for one PEP 393 string kind: included by _scan.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 * K(next), the step that cuts one piece, is _scan_next.h's; K(last_cut) is _scan_cut.h's; the
 * block step of 1-byte strings is _scan_block.h's.
 */
#include "_scan_cut.h"
#include "_scan_next.h"
#include "_scan_block.h"

/* The ends of the pieces (or words) of s[start:n], appended to `out` (grown as needed); the
 * count, or -1 when out of memory. A 1-byte string takes 64 code points at a time where the block
 * step can (_scan_block.h), K(next) one piece at a time from where it stops to past the first
 * code point it could not settle. No Python object is touched: callers may release the GIL. */
static Py_ssize_t K(scan)(const CH *s, Py_ssize_t start, Py_ssize_t n, int pattern,
                          Py_ssize_t **out, Py_ssize_t *cap) {
    Py_ssize_t count = 0, past = start - 1; /* K(next) cuts until a piece ends past `past` */
    const sc_pattern *shape = sizeof(CH) == 1 ? sc_block_shape(pattern) : NULL;
    for (Py_ssize_t i = start; i < n;) {
        Py_ssize_t e;
        if (shape && i > past && n - i >= SC_BLOCK) {
            int hard;
            Py_ssize_t base = i;
            for (uint64_t ends = sc_block_ends((const uint8_t *)s + i, shape, &hard); ends;
                 ends &= ends - 1) {
                if (count == *cap && grow(out, cap) < 0) return -1;
                (*out)[count++] = i = base + __builtin_ctzll(ends);
            }
            past = sc_block_past(base, i, hard);
            continue;
        }
        e = K(next)(s, i, n, pattern);
        if (count == *cap && grow(out, cap) < 0) return -1;
        (*out)[count++] = e;
        i = e;
    }
    return count;
}
