/* The compiled core's engine: one piece's bytes to token indices, in plain C (no Python).
 * This file: lookups, the rank merge, building, pieces and batches; the backtracking encoder
 * and its rank-order facts are in _core_backtrack.c.
 *
 * It is the twin of the pure-Python path and must equal it id for id:
 *   - sc_lookup             a dict lookup of the ranks (open addressing keyed by the bytes);
 *   - sc_merge_piece        streamcodec.pieces.merge.merge_piece (the rank merge, leftmost on ties);
 *   - sc_backtrack_piece    streamcodec.pieces.bpe.backtrack_piece with streamcodec.pieces.rank_order.RankOrder
 *                           (reachability, splits, valid pairs) and streamcodec.pieces.trie.TokenTrie;
 *   - sc_encode_piece       streamcodec.pieces.bpe.PieceEncoder.__call__ (whole-piece rule first).
 * docs/performance.md ("Backtracking for long pieces") gives the argument that the backtracking
 * search finds exactly the merge result; the code below follows the Python lines one for one.
 */
#include "_core_internal.h"

#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ hashing and lookup */

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t mix(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

static inline uint64_t head_of(const uint8_t *p, size_t n) {
    uint64_t head = 0;
    if (n >= 8) return load64(p);
    for (size_t i = 0; i < n; i++) head |= (uint64_t)p[i] << (8 * i);
    return head;
}

/* The hash of a key from its head (head_of) and, past 8 bytes, the rest in 8-byte words (the
 * last one overlapping). */
static uint64_t hash_key(const uint8_t *p, size_t n, uint64_t head) {
    uint64_t h = (head ^ ((uint64_t)n * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
    size_t i = 8;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ load64(p + i)) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    if (i < n) {
        h = (h ^ load64(p + n - 8)) * 0x94d049bb133111ebull;
        h ^= h >> 29;
    }
    return mix(h);
}

/* Index of one- and two-byte keys in short_index: 256 entries for two-byte keys by first
 * byte, then one entry per single byte. */
#define SHORT_ONE 65536

int64_t sc_lookup(const sc_vocab *v, const uint8_t *p, size_t n) {
    if (n - 1 < 2) {
        uint32_t t = v->short_index[n == 1 ? SHORT_ONE + (uint32_t)p[0] : (uint32_t)p[0] << 8 | p[1]];
        return t == NONE ? -1 : (int64_t)t;
    }
    uint64_t head = head_of(p, n), h = hash_key(p, n, head);
    for (uint64_t i = h & v->mask;; i = (i + 1) & v->mask) {
        const slot *s = &v->slots[i];
        if (!s->idx1) return -1;
        if (s->head == head && s->len == n &&
            (n <= 8 || memcmp(v->data + v->off[s->idx1 - 1] + 8, p + 8, n - 8) == 0))
            return s->idx1 - 1;
    }
}

uint32_t sc_rank(const sc_vocab *v, uint32_t index) { return v->rank[index]; }
size_t sc_size(const sc_vocab *v) { return v->n; }

static inline uint32_t pair_rank(const sc_vocab *v, const uint8_t *p, size_t n) {
    int64_t t = sc_lookup(v, p, n);
    return t < 0 ? NONE : v->rank[t];
}

/* ------------------------------------------------------------------ ids */

int sc_ids_reserve(sc_ids *out, size_t extra) {
    if (out->cap - out->len >= extra) return SC_OK;
    size_t cap = out->cap ? out->cap : 64;
    while (cap - out->len < extra) {
        if (cap > SIZE_MAX / 8) return SC_NOMEM;
        cap *= 2;
    }
    uint32_t *ids = realloc(out->ids, cap * sizeof *ids);
    if (!ids) return SC_NOMEM;
    out->ids = ids;
    out->cap = cap;
    return SC_OK;
}

void sc_ids_free(sc_ids *out) {
    free(out->ids);
    out->ids = NULL;
    out->len = out->cap = 0;
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

/* ------------------------------------------------------------------ building */

sc_vocab *sc_vocab_new(size_t n, const uint8_t *data, const size_t *offsets,
                       const uint32_t *ranks, size_t long_piece) {
    sc_vocab *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->n = n;
    v->long_piece = long_piece;
    size_t total = offsets[n];
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)n + 2) cap *= 2;
    v->data = malloc(total ? total : 1);
    v->off = malloc((n + 1) * sizeof *v->off);
    v->rank = malloc((n ? n : 1) * sizeof *v->rank);
    v->slots = calloc(cap, sizeof *v->slots);
    v->short_index = malloc((SHORT_ONE + 256) * sizeof *v->short_index);
    v->prefix_order = malloc((n ? n : 1) * sizeof *v->prefix_order);
    v->prefix_from = calloc(SHORT_ONE + 1, sizeof *v->prefix_from);
    /* calloc'd: untouched pages cost nothing until a long piece needs a token's facts. */
    v->facts = calloc(n ? n : 1, 1);
    v->split_left = calloc(n ? n : 1, sizeof *v->split_left);
    v->split_right = calloc(n ? n : 1, sizeof *v->split_right);
    if (!v->data || !v->off || !v->rank || !v->slots || !v->short_index || !v->prefix_order ||
        !v->prefix_from ||
        !v->facts || !v->split_left || !v->split_right) {
        sc_vocab_free(v);
        return NULL;
    }
    memcpy(v->data, data, total);
    memcpy(v->off, offsets, (n + 1) * sizeof *v->off);
    memcpy(v->rank, ranks, n * sizeof *v->rank);
    v->mask = cap - 1;
    for (size_t i = 0; i < SHORT_ONE + 256; i++) v->short_index[i] = NONE;
    for (size_t t = 0; t < n; t++) {
        const uint8_t *p = data + offsets[t];
        size_t len = offsets[t + 1] - offsets[t];
        if (len > v->longest) v->longest = len;
        if (len == 1 || len == 2) {
            v->short_index[len == 1 ? SHORT_ONE + (uint32_t)p[0] : (uint32_t)p[0] << 8 | p[1]] = (uint32_t)t;
            continue;
        }
        uint64_t head = head_of(p, len), i = hash_key(p, len, head) & v->mask;
        while (v->slots[i].idx1) i = (i + 1) & v->mask;
        v->slots[i] = (slot){head, (uint32_t)len, (uint32_t)t + 1};
    }
    if (sc__index_prefixes(v) != SC_OK) {
        sc_vocab_free(v);
        return NULL;
    }
    return v;
}

void sc_vocab_free(sc_vocab *v) {
    if (!v) return;
    free(v->data);
    free(v->off);
    free(v->rank);
    free(v->slots);
    free(v->short_index);
    free(v->prefix_order);
    free(v->prefix_from);
    free(v->facts);
    free(v->split_left);
    free(v->split_right);
    free(v);
}


int sc_encode_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    int64_t token = sc_lookup(v, p, n);
    if (token >= 0) {
        if (sc_ids_reserve(out, 1) != SC_OK) return SC_NOMEM;
        out->ids[out->len++] = (uint32_t)token;
        return SC_OK;
    }
    if (n < v->long_piece) return sc_merge_piece(v, p, n, out);
    return sc_backtrack_piece(v, p, n, out);
}

/* ------------------------------------------------------------------ batches */

/* A memo of the batch's multi-token pieces (keyed by their bytes in the batch, ids copied from
 * `out`) was measured and lost: 0.8-1.4x on the corpora, since a merge in C costs about what
 * the memo's probe and copy do (docs/performance.md). So a batch is a plain loop. */
int sc_encode_batch(const sc_vocab *v, const uint8_t *data, const size_t *ends, size_t count,
                    sc_ids *out) {
    size_t start = 0;
    for (size_t k = 0; k < count; start = ends[k++]) {
        int status = sc_encode_piece(v, data + start, ends[k] - start, out);
        if (status != SC_OK) return status;
    }
    return SC_OK;
}
