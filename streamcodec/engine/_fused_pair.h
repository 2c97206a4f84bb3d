/* The disallowed special tokens' check, fused into encode_array's pass: where every such token
 * starts with the same two ASCII characters (tiktoken's `<|`), the text is looked through for
 * that pair a part at a time, each part just before the pass encodes it. Included by _fused.c.
 *
 * The check before the pass (text/specials.py's refuse_disallowed: str.find of `|`, a Python
 * step at each one) read the whole text once more from memory: 0.16 ms a warm encode_to_numpy
 * of 1.6 MB of prose, 0.4-0.5 ms of 4 MB of code, 4-5% of the call. Looked through PAIR_PART
 * code units at a time, the part is in the CPU's cache when the pass reads it, and the check
 * costs its memchr alone.
 *
 * The answer, p->clean: a place before which the pair does not start in text[start:end] (where
 * it first starts; where the look gave up, its budget of candidates spent, as clean_before's;
 * `end` when it is nowhere). The caller's regex search from there (refuse_disallowed's `start`)
 * finds the same leftmost token as one over the whole text: each token starts with the pair.
 */
#ifndef STREAMCODEC_FUSED_PAIR_H
#define STREAMCODEC_FUSED_PAIR_H

#define PAIR_PART 65536 /* code units looked through at a time, just before they are encoded */
#define PAIR_BUDGET 64  /* candidates that are no pair before the look gives up (and one more
                         * for every 4096 code units, as text/specials.py's PROBE_BUDGET) */

/* Look for the pair (its second unit at i, its first at i - 1, start <= i - 1) with i in
 * [from, to): a memchr of the second unit's low byte (ASCII, not NUL), each hit checked as code
 * units (a byte of a wider unit that is no such unit fails the check). */
static void pair_look(const void *data, int kind, Py_ssize_t from, Py_ssize_t to, fused_pass *p) {
    const char *bytes = data, *at, *stop = bytes + to * kind;
    if (from < p->pair_start + 1) from = p->pair_start + 1;
    for (at = bytes + from * kind; at < stop;) {
        const char *hit = memchr(at, (int)p->pair[1], (size_t)(stop - at));
        if (!hit) break;
        at = hit + 1;
        Py_ssize_t i = (hit - bytes) / kind;
        if (PyUnicode_READ(kind, data, i) == p->pair[1] &&
            PyUnicode_READ(kind, data, i - 1) == p->pair[0]) {
            p->clean = i - 1;
            p->probing = 0;
            return;
        }
        if (--p->budget <= 0) { /* no pair starts before i (each candidate was checked) */
            p->clean = i;
            p->probing = 0;
            return;
        }
    }
}

/* The pass over text[*at:stop] (fused_1, fused_2 or fused_4), the text looked through for the
 * pair before it a part at a time while p->probing. */
static int pair_parts(const void *data, int kind, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t end,
                      fused_pass *p) {
    while (*at < stop) {
        Py_ssize_t part = p->probing && stop - *at > PAIR_PART ? *at + PAIR_PART : stop;
        if (p->probing && p->probed < part) {
            pair_look(data, kind, p->probed, part, p);
            p->probed = part;
        }
        int status;
        switch (kind) {
        case PyUnicode_1BYTE_KIND: status = fused_1(data, at, part, end, p); break;
        case PyUnicode_2BYTE_KIND: status = fused_2(data, at, part, end, p); break;
        default: status = fused_4(data, at, part, end, p);
        }
        if (status != SC_OK) return status;
    }
    return SC_OK;
}

#endif
