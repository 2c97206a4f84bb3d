/* The fused pass over one PEP 393 string kind: included by _fused.c once per kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix.
 *
 * Each piece is cut by the scanner's step (streamcodec/text/_scan_next.h) and handed to
 * fused_piece (_fused.c) as soon as it is cut, as UTF-8: a 1-byte string's piece of ASCII code
 * points is its own UTF-8 (read in place), any other is encoded into p->buf
 * (streamcodec/_utf8.h). No Python object is touched.
 */
#include "../text/_scan_next.h"

/* The pieces of s[:n] from *at (a piece start) until one ends at or past `stop`: *at is left
 * at the next piece start. SC_OK, SC_NOMEM, FUSED_LIMIT, or FUSED_REFUSED with the refused
 * piece in p->refused_start and p->refused_end. */
static int K(fused)(const CH *s, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t n, fused_pass *p) {
    int status = SC_OK;
    Py_ssize_t i = *at;
    while (i < stop && status == SC_OK) {
        Py_ssize_t e = K(next)(s, i, n, p->pattern);
        const uint8_t *b = (const uint8_t *)s + i;
        size_t len = (size_t)(e - i);
        if (sizeof(CH) == 1 && (p->ascii || fused_ascii(b, len))) {
            /* Eight bytes from b are the text's while e + 8 <= n: one load for the head. */
            status = fused_piece(p, b, len, e + 8 <= n ? sc_head_padded(b, len) : sc_head(b, len));
        } else {
            size_t most = sc_utf8_most((int)sizeof(CH)) * len;
            if (most > p->buf_cap && fused_grow_buffer(p, most) != SC_OK) return SC_NOMEM;
            uint8_t *out = p->buf;
            for (Py_ssize_t j = i; j < e; j++) {
                int put = sc_utf8_put(out, s[j], p->escape);
                if (put < 0) {
                    p->refused_start = i;
                    p->refused_end = e;
                    *at = i;
                    return FUSED_REFUSED;
                }
                out += put;
            }
            /* Bytes just stored one by one: a byte loop reads them back faster than one 8-byte
             * load, which cannot be forwarded from several smaller stores and waits for them. */
            len = (size_t)(out - p->buf);
            status = fused_piece(p, p->buf, len, sc_head(p->buf, len));
        }
        i = e;
    }
    *at = i;
    return status;
}
