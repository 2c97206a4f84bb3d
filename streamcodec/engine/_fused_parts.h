/* The pass over a text a part at a time, each part read just before the pass encodes it: a
 * 2-byte str's for every output, and any str's for encode_array's disallowed special tokens'
 * check, which is fused into that read. Included by _fused.c.
 *
 * The read ahead. The pass reads a 2-byte str once, in order, copying windows of it narrowed to
 * bytes (K(narrow)), but between two windows it waits on the first level's lines (a line a
 * piece, 4-8 MiB of table), and the CPU's prefetchers keep up with the text badly. A part of
 * FUSED_PART code units read first, a load a cache line (2,048 independent loads, which the CPU
 * overlaps), is in its L2 when the pass comes: warm calls of 1.6 MB of prose and 4 MB of code
 * (2-byte strs) 1.04-1.07x, count and array alike (in-process A/B; docs/performance.md, the
 * eighth session). A 1-byte str (read in place by the block step, 64 bytes a load, which the
 * prefetchers follow) and a 4-byte one were 0.96-0.98x with it: the part's lines push the first
 * level's out of the cache. Not read ahead.
 *
 * The check. Where every disallowed special token starts with the same two ASCII characters
 * (tiktoken's `<|`), the part is read by looking for that pair (a memchr). The check before the
 * pass (text/specials.py's refuse_disallowed: str.find of `|`, a Python step at each one) read
 * the whole text once more from memory: 0.16 ms a warm encode_to_numpy of 1.6 MB of prose,
 * 0.4-0.5 ms of 4 MB of code, 4-5% of the call. The answer, p->clean: a place before which the
 * pair does not start in text[start:end] (where it first starts; where the look gave up, its
 * budget of candidates spent, as clean_before's; `end` when it is nowhere). The caller's regex
 * search from there (refuse_disallowed's `start`) finds the same leftmost token as one over the
 * whole text: each token starts with the pair.
 */
#ifndef STREAMCODEC_FUSED_PARTS_H
#define STREAMCODEC_FUSED_PARTS_H

#define FUSED_PART 65536 /* code units read at a time, just before they are encoded */
#define PAIR_BUDGET 64   /* candidates that are no pair before the look gives up (and one more
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

/* text[from:to] read, a load a cache line: its lines in the CPU's cache for the pass. */
static void part_read(const void *data, int kind, Py_ssize_t from, Py_ssize_t to) {
    const volatile char *b = (const char *)data + from * kind, *stop = (const char *)data + to * kind;
    for (; b < stop; b += 64) (void)*b;
}

/* The pass over text[*at:stop] (fused_1, fused_2 or fused_4), a part at a time where the part is
 * read first (a 2-byte str, or looked through for the pair while p->probing); text before
 * p->read was read. */
static int fused_parts(const void *data, int kind, Py_ssize_t *at, Py_ssize_t stop, Py_ssize_t end,
                       fused_pass *p) {
    while (*at < stop) {
        int ahead = p->probing || (kind == PyUnicode_2BYTE_KIND && !p->utf8);
        Py_ssize_t part = ahead && stop - *at > FUSED_PART ? *at + FUSED_PART : stop;
        if (ahead && p->read < part) {
            if (p->probing)
                pair_look(data, kind, p->read, part, p);
            else
                part_read(data, kind, p->read, part);
            p->read = part;
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
