/* The compiled core's rank merge: streamcodec.pieces.merge.merge_piece, in plain C (no Python).
 * It follows the Python lines one for one: merge the lowest-ranked adjacent pair, leftmost on
 * ties, until no pair is a token (docs/specification.md).
 */
#include "_core_internal.h"

#include <stdlib.h>
#include <string.h>

/* The rank of the token p[:n], or NONE (sc_lookup, inline). */
static inline uint32_t pair_rank(const sc_vocab *v, const uint8_t *p, size_t n) {
    int64_t t = sc_table_lookup(&v->table, p, n, sc_head(p, n));
    if (t < 0) return NONE;
    return v->ranks_are_indices ? (uint32_t)t : v->rank[t];
}

/* ------------------------------------------------------------------ the rank merge */

/* streamcodec.pieces.merge.merge_parts (described in _core_internal.h). */
size_t sc__merge_parts(const sc_vocab *v, const uint8_t *p, size_t n, size_t parts,
                       size_t *starts, uint32_t *pair) {
    for (size_t i = 0; i <= n; i++) starts[i] = i;
    size_t count = n;
    for (size_t i = 0; i + 1 < count; i++) pair[i] = pair_rank(v, p + i, 2);
    while (count >= parts + 1 && count >= 2) {
        uint32_t best = NONE;
        size_t at = 0;
        for (size_t i = 0; i + 1 < count; i++) {
            if (pair[i] < best) {
                best = pair[i];
                at = i;
            }
        }
        if (best == NONE) break;
        /* Part at + 1 joins part at. */
        memmove(starts + at + 1, starts + at + 2, (count - at - 1) * sizeof *starts);
        memmove(pair + at, pair + at + 1, (count - at - 2) * sizeof *pair);
        count--;
        if (at > 0) pair[at - 1] = pair_rank(v, p + starts[at - 1], starts[at + 1] - starts[at - 1]);
        if (at + 1 < count) pair[at] = pair_rank(v, p + starts[at], starts[at + 2] - starts[at]);
    }
    return count;
}

int sc__scratch_init(merge_scratch *s, size_t n) {
    if (n <= STACK_PARTS) {
        s->starts = s->stack_starts;
        s->pair = s->stack_pair;
        return SC_OK;
    }
    s->starts = malloc((n + 1) * sizeof *s->starts);
    s->pair = malloc(n * sizeof *s->pair);
    if (!s->starts || !s->pair) {
        free(s->starts);
        free(s->pair);
        return SC_NOMEM;
    }
    return SC_OK;
}

void sc__scratch_free(merge_scratch *s) {
    if (s->starts != s->stack_starts) {
        free(s->starts);
        free(s->pair);
    }
}

int sc_merge_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    merge_scratch s;
    if (sc_ids_reserve(out, n) != SC_OK || sc__scratch_init(&s, n) != SC_OK) return SC_NOMEM;
    size_t count = sc__merge_parts(v, p, n, 1, s.starts, s.pair);
    /* Every part is a token: a merged part by construction, a single byte because the vocabulary
     * has all 256 (sc_vocab_new's contract; the module checks it). */
    for (size_t i = 0; i < count; i++)
        out->ids[out->len++] = (uint32_t)sc_lookup(v, p + s.starts[i], s.starts[i + 1] - s.starts[i]);
    sc__scratch_free(&s);
    return SC_OK;
}
