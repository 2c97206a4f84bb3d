/* The compiled core's engine: one piece's bytes to token indices, in plain C (no Python).
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
#include "_core.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX  /* no token; also "no merge" as a pair rank (ranks are below it) */
#define STACK_PARTS 512  /* merges of pieces up to this long keep their state on the stack */

typedef struct {
    uint64_t head; /* the key's first 8 bytes (zero-padded): most keys compare without memcmp */
    uint32_t len;
    uint32_t idx1; /* token index + 1; 0 marks an empty slot */
} slot;

struct sc_vocab {
    size_t n, longest, long_piece;
    uint8_t *data;  /* all token bytes */
    size_t *off;    /* token i is data[off[i]:off[i + 1]] */
    uint32_t *rank; /* the id of token i */
    slot *slots;
    uint64_t mask;
    uint32_t *short_index; /* keys of one and two bytes: their token index, or NONE */
    uint32_t *longest_from; /* by first two bytes: the length of the longest such token */
    /* The facts of RankOrder, computed per token on first use by any thread (facts.c below):
     * a FACT_* bit set says the matching split or verdict is written. */
    uint8_t *facts;
    uint32_t *split_left, *split_right; /* NONE when the token has no split */
};

enum { FACT_SPLIT = 1, FACT_REACHABLE = 2, FACT_ORDER = 4, FACT_ORDERED = 8 };

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

static inline size_t token_len(const sc_vocab *v, uint32_t t) { return v->off[t + 1] - v->off[t]; }

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

/* streamcodec.pieces.merge.merge_parts: merge the lowest-ranked adjacent pair (leftmost on ties) while
 * there are at least `parts` + 1 parts. starts[0..n] receives the part boundaries (n + 1
 * entries), pair[] the pair ranks; returns the number of parts. */
static size_t merge_parts(const sc_vocab *v, const uint8_t *p, size_t n, size_t parts,
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

/* Scratch for merge_parts: on the stack for short pieces, else on the heap. */
typedef struct {
    size_t stack_starts[STACK_PARTS + 1];
    uint32_t stack_pair[STACK_PARTS];
    size_t *starts;
    uint32_t *pair;
} merge_scratch;

static int scratch_init(merge_scratch *s, size_t n) {
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

static void scratch_free(merge_scratch *s) {
    if (s->starts != s->stack_starts) {
        free(s->starts);
        free(s->pair);
    }
}

int sc_merge_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    merge_scratch s;
    if (sc_ids_reserve(out, n) != SC_OK || scratch_init(&s, n) != SC_OK) return SC_NOMEM;
    size_t count = merge_parts(v, p, n, 1, s.starts, s.pair);
    /* Every part is a token: a merged part by construction, a single byte because the vocabulary
     * has all 256 (sc_vocab_new's contract; the module checks it). */
    for (size_t i = 0; i < count; i++)
        out->ids[out->len++] = (uint32_t)sc_lookup(v, p + s.starts[i], s.starts[i + 1] - s.starts[i]);
    scratch_free(&s);
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
    v->longest_from = calloc(SHORT_ONE, sizeof *v->longest_from);
    /* calloc'd: untouched pages cost nothing until a long piece needs a token's facts. */
    v->facts = calloc(n ? n : 1, 1);
    v->split_left = calloc(n ? n : 1, sizeof *v->split_left);
    v->split_right = calloc(n ? n : 1, sizeof *v->split_right);
    if (!v->data || !v->off || !v->rank || !v->slots || !v->short_index || !v->longest_from ||
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
        if (len >= 2 && v->longest_from[(uint32_t)p[0] << 8 | p[1]] < len)
            v->longest_from[(uint32_t)p[0] << 8 | p[1]] = (uint32_t)len;
        if (len == 1 || len == 2) {
            v->short_index[len == 1 ? SHORT_ONE + (uint32_t)p[0] : (uint32_t)p[0] << 8 | p[1]] = (uint32_t)t;
            continue;
        }
        uint64_t head = head_of(p, len), i = hash_key(p, len, head) & v->mask;
        while (v->slots[i].idx1) i = (i + 1) & v->mask;
        v->slots[i] = (slot){head, (uint32_t)len, (uint32_t)t + 1};
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
    free(v->longest_from);
    free(v->facts);
    free(v->split_left);
    free(v->split_right);
    free(v);
}

/* ------------------------------------------------------------------ rank-order facts */

/* Scratch of one backtracking call: two tokens' bytes, and the merge state over them. */
typedef struct {
    uint8_t *bytes;
    merge_scratch merge;
} work;

/* The facts are written by whichever thread needs them first (the tables are shared and the
 * GIL is not held): the split is stored, then its bit is set with release order, and a reader
 * that sees the bit (acquire) sees the split. Two threads may compute the same fact at once;
 * they write the same values. */
static inline uint8_t facts_of(const sc_vocab *v, uint32_t t) {
    return __atomic_load_n(&v->facts[t], __ATOMIC_ACQUIRE);
}

static inline void add_facts(const sc_vocab *v, uint32_t t, uint8_t bits) {
    __atomic_fetch_or(&v->facts[t], bits, __ATOMIC_RELEASE);
}

/* A split half, read or written atomically (relaxed): a second thread may be writing the same
 * value while the first reads it, which must not be a data race. */
static inline uint32_t half(const uint32_t *halves, uint32_t t) {
    return __atomic_load_n(&halves[t], __ATOMIC_RELAXED);
}

static inline void set_half(uint32_t *halves, uint32_t t, uint32_t value) {
    __atomic_store_n(&halves[t], value, __ATOMIC_RELAXED);
}

/* RankOrder.is_reachable and RankOrder.split: the merge loop's state at two parts is the split,
 * and a token is reachable when its merge gets there (the two parts then join into the token
 * itself: their join is its bytes). Returns the facts. */
static uint8_t split_facts(const sc_vocab *v, uint32_t t, work *w) {
    uint8_t facts = facts_of(v, t);
    if (facts & FACT_SPLIT) return facts;
    const uint8_t *p = v->data + v->off[t];
    size_t len = token_len(v, t);
    uint32_t left = NONE, right = NONE;
    int reachable = len == 1;
    if (len > 1 && merge_parts(v, p, len, 2, w->merge.starts, w->merge.pair) == 2) {
        reachable = 1;
        left = (uint32_t)sc_lookup(v, p, w->merge.starts[1]);
        right = (uint32_t)sc_lookup(v, p + w->merge.starts[1], len - w->merge.starts[1]);
    }
    set_half(v->split_left, t, left);
    set_half(v->split_right, t, right);
    add_facts(v, t, (uint8_t)(FACT_SPLIT | (reachable ? FACT_REACHABLE : 0)));
    return facts_of(v, t);
}

static inline int is_reachable(const sc_vocab *v, uint32_t t, work *w) {
    return (split_facts(v, t, w) & FACT_REACHABLE) != 0;
}

/* RankOrder.is_ordered: reachable, and its split parts rank below it and are ordered too. */
static int is_ordered(const sc_vocab *v, uint32_t t, work *w) {
    uint8_t facts = split_facts(v, t, w);
    if (facts & FACT_ORDER) return (facts & FACT_ORDERED) != 0;
    uint32_t l = half(v->split_left, t), r = half(v->split_right, t);
    int ordered = l == NONE ? token_len(v, t) == 1
                            : v->rank[l] < v->rank[t] && v->rank[r] < v->rank[t] &&
                                  is_ordered(v, l, w) && is_ordered(v, r, w);
    add_facts(v, t, (uint8_t)(FACT_ORDER | (ordered ? FACT_ORDERED : 0)));
    return ordered;
}

/* RankOrder._valid_by_splits: undo merges at the boundary in reverse rank order, and ask at
 * each step whether the two parts touching it would join before the merge just undone. */
static int valid_by_splits(const sc_vocab *v, uint32_t left, uint32_t right, work *w) {
    uint64_t deadline = UINT64_MAX; /* None */
    for (;;) {
        size_t ll = token_len(v, left), rl = token_len(v, right);
        memcpy(w->bytes, v->data + v->off[left], ll);
        memcpy(w->bytes + ll, v->data + v->off[right], rl);
        int64_t joined = sc_lookup(v, w->bytes, ll + rl);
        if (joined >= 0 && v->rank[joined] < deadline) {
            split_facts(v, (uint32_t)joined, w);
            if (half(v->split_left, (uint32_t)joined) == left &&
                half(v->split_right, (uint32_t)joined) == right)
                return 0;
        }
        /* Both are ordered, so their facts are known. */
        uint32_t ls = half(v->split_left, left), rs = half(v->split_left, right);
        if (ls != NONE && (rs == NONE || v->rank[left] > v->rank[right])) {
            deadline = v->rank[left];
            left = half(v->split_right, left);
        } else if (rs != NONE) {
            deadline = (uint64_t)v->rank[right] + 1;
            right = rs;
        } else {
            return 1;
        }
    }
}

/* RankOrder.is_valid_pair: whether the bytes of `left` then `right` merge to [left, right]. */
static int valid_pair(const sc_vocab *v, uint32_t left, uint32_t right, work *w) {
    if (is_ordered(v, left, w) && is_ordered(v, right, w)) return valid_by_splits(v, left, right, w);
    size_t ll = token_len(v, left), rl = token_len(v, right);
    memcpy(w->bytes, v->data + v->off[left], ll);
    memcpy(w->bytes + ll, v->data + v->off[right], rl);
    /* The parts' bytes decide their tokens: [left, right] is two parts split after `left`. */
    return merge_parts(v, w->bytes, ll + rl, 1, w->merge.starts, w->merge.pair) == 2 &&
           w->merge.starts[1] == ll;
}

/* ------------------------------------------------------------------ backtracking */

/* The longest reachable token that p[0:n] starts with and that is shorter than `below` bytes,
 * or NONE: TokenTrie.candidates filtered by reachability, one at a time. Lengths are tried
 * downwards from the longest token with the same first two bytes, each a table lookup. */
static uint32_t candidate(const sc_vocab *v, const uint8_t *p, size_t n, size_t below, work *w) {
    size_t top = n >= 2 ? v->longest_from[(uint32_t)p[0] << 8 | p[1]] : 0;
    if (top > n) top = n;
    if (top >= below) top = below - 1;
    for (size_t len = top; len >= 2; len--) {
        int64_t t = sc_lookup(v, p, len);
        if (t >= 0 && is_reachable(v, (uint32_t)t, w)) return (uint32_t)t;
    }
    if (below > 1 && n >= 1) {
        int64_t t = sc_lookup(v, p, 1);
        if (t >= 0 && is_reachable(v, (uint32_t)t, w)) return (uint32_t)t;
    }
    return NONE;
}

int sc_backtrack_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    size_t base = out->len; /* the tokens taken so far are out->ids[base:] */
    uint8_t *dead = calloc(n / 8 + 1, 1);
    size_t scratch = 2 * v->longest + 1;
    work w = {malloc(scratch), {.starts = NULL}};
    int status = SC_NOMEM;
    if (!dead || !w.bytes || scratch_init(&w.merge, scratch) != SC_OK) {
        w.merge.starts = w.merge.stack_starts; /* nothing on the heap to free */
        goto done;
    }
    size_t pos = 0;
    uint32_t token = candidate(v, p, n, SIZE_MAX, &w);
    while (pos < n) {
        /* Take the longest candidate that ends on a live position and pairs with the last. */
        while (token != NONE) {
            size_t end = pos + token_len(v, token);
            if (!(dead[end >> 3] >> (end & 7) & 1) &&
                (out->len == base || valid_pair(v, out->ids[out->len - 1], token, &w)))
                break;
            token = candidate(v, p + pos, n - pos, token_len(v, token), &w);
        }
        if (token == NONE) {
            /* Every candidate failed: no encoding has a boundary here. Step back. */
            dead[pos >> 3] |= (uint8_t)(1u << (pos & 7));
            if (out->len == base) goto done; /* unreachable with all single bytes as tokens */
            uint32_t last = out->ids[--out->len];
            pos -= token_len(v, last);
            token = candidate(v, p + pos, n - pos, token_len(v, last), &w);
            continue;
        }
        if (sc_ids_reserve(out, 1) != SC_OK) goto done;
        out->ids[out->len++] = token;
        pos += token_len(v, token);
        token = candidate(v, p + pos, n - pos, SIZE_MAX, &w);
    }
    status = SC_OK;
done:
    if (status != SC_OK) out->len = base;
    free(dead);
    free(w.bytes);
    scratch_free(&w.merge);
    return status;
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
