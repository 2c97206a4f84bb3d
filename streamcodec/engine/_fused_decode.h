/* A document's UTF-8 decoded straight into code units of one PEP 393 kind (CH), as
 * bytes.decode("utf-8", errors) reads it: the batch pass's bytes, pyarrow and flat documents
 * that are not all ASCII (_fused_batch.h, batch_decode, which picks the kind from the greatest
 * byte first). Included once per kind by ../_each_kind.h: batch_utf8_1, _2, _4.
 *
 * ASCII is read 16 bytes at a time and widened in place of a decode (a code document with one
 * non-ASCII byte is 99.99% ASCII: read a code point at a time into UCS-4 and narrowed after,
 * 0.7 ns a byte, a third of the encoding's own time); every other sequence goes through
 * sc_utf8_get (_utf8.h), the one reader, so the two paths cannot disagree on a code point.
 * The reference it must equal: bytes.decode("utf-8", errors), per code point. */

/* b[:n] into out (room for n code units): SC_OK with *len code units and *most the greatest
 * past ASCII;
 * BATCH_WIDER for a code point CH cannot hold (the caller decodes again, wider); BATCH_INVALID
 * for invalid UTF-8 under errors 0 ("strict"), *bad its byte offset. errors 1 ("replace") reads
 * each maximal invalid subpart as U+FFFD; 2 ("surrogateescape") each of its bytes as its escape,
 * U+DC80..U+DCFF. */
static int K(batch_utf8)(const uint8_t *restrict b, size_t n, int errors, CH *restrict out,
                         size_t *len, uint32_t *most, size_t *bad) {
    const uint32_t room = (uint32_t)(CH)-1;
    size_t k = 0, at = 0;
    uint32_t top = 0;
    while (at < n) {
        if (b[at] < 0x80) { /* an ASCII run: 16 bytes at a time, then to its end */
            for (; at + 16 <= n; at += 16, k += 16) {
                uint64_t word[2];
                memcpy(word, b + at, 16);
                if ((word[0] | word[1]) & 0x8080808080808080ull) break;
                for (int j = 0; j < 16; j++) out[k + (size_t)j] = b[at + (size_t)j];
            }
            while (at < n && b[at] < 0x80) out[k++] = b[at++];
            continue;
        }
        uint32_t c;
        int got = sc_utf8_get(b + at, n - at, &c);
        if (got < 0) {
            if (!errors) {
                *bad = at;
                return BATCH_INVALID;
            }
            got = -got;
            if (errors == 2) { /* each byte its escape */
                if (room < 0xdcff) return BATCH_WIDER;
                for (int j = 0; j < got; j++) out[k++] = (CH)(0xdc00u + b[at + (size_t)j]);
                top = 0xdcff > top ? 0xdcff : top;
                at += (size_t)got;
                continue;
            }
            c = 0xfffd;
        }
        if (c > room) return BATCH_WIDER;
        out[k++] = (CH)c;
        top = c > top ? c : top;
        at += (size_t)got;
    }
    *len = k;
    *most = top;
    return SC_OK;
}
