/* The compiled core's backtracking encoder for long pieces, and the rank-order facts it rests on.
 *
 * The twin of streamcodec.pieces.backtrack.backtrack_piece, with streamcodec.pieces.rank_order.RankOrder
 * (reachability, splits, orderedness, valid pairs) and streamcodec.pieces.trie.TokenTrie
 * (candidates). docs/performance.md ("Backtracking for long pieces") gives the argument that the
 * search finds exactly the merge result; the code follows the Python lines one for one.
 */
#include "_core_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ rank-order facts */

/* Scratch of one backtracking call: two tokens' bytes, the merge state over them, and the
 * stack of is_ordered's walk, for tokens of up to `cap` bytes. It grows with the candidates met
 * (room(), below), not with the vocabulary's longest token. `status` is SC_NOMEM once growing
 * failed. */
typedef struct {
    uint8_t *bytes;
    merge_scratch merge;
    uint32_t *stack;
    size_t cap;
    int status;
} work;

/* Make room in `w` for two tokens of `len` bytes each (a pair's bytes, or their merge). */
static int room(work *w, size_t len) {
    if (len <= w->cap) return SC_OK;
    size_t cap = len > 2 * w->cap ? len : 2 * w->cap;
    uint8_t *bytes = realloc(w->bytes, 2 * cap + 1);
    if (bytes) w->bytes = bytes;
    uint32_t *stack = realloc(w->stack, (cap + 1) * sizeof *stack);
    if (stack) w->stack = stack;
    sc__scratch_free(&w->merge);
    if (!bytes || !stack || sc__scratch_init(&w->merge, 2 * cap + 1) != SC_OK) {
        w->merge.starts = w->merge.stack_starts; /* nothing on the heap to free */
        return w->status = SC_NOMEM;
    }
    w->cap = cap;
    return SC_OK;
}

/* The facts are written by whichever thread needs them first (the tables are shared and the
 * GIL is not held): the split is stored, then its bit is set with release order, and a reader
 * that sees the bit (acquire) sees the split. Two threads may compute the same fact at once;
 * they write the same values. */
static inline uint8_t facts_of(const sc_vocab *v, uint32_t t) {
    return atomic_load_explicit(&v->facts[t], memory_order_acquire);
}

static inline void add_facts(const sc_vocab *v, uint32_t t, uint8_t bits) {
    atomic_fetch_or_explicit(&v->facts[t], bits, memory_order_release);
}

/* A split half, read or written atomically (relaxed): a second thread may be writing the same
 * value while the first reads it, which must not be a data race. */
static inline uint32_t half(sc_atomic_u32 *halves, uint32_t t) {
    return atomic_load_explicit(&halves[t], memory_order_relaxed);
}

static inline void set_half(sc_atomic_u32 *halves, uint32_t t, uint32_t value) {
    atomic_store_explicit(&halves[t], value, memory_order_relaxed);
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
    if (len > 1 && sc__merge_parts(v, p, len, 2, w->merge.starts, w->merge.pair, NULL) == 2) {
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

/* RankOrder.is_ordered: reachable, and its split parts rank below it and are ordered too. The
 * split tree is walked with w->stack, not by recursion: a chain of merges is as deep as the
 * token is long, and the stack holds a path from t down, each token shorter than the one before
 * it, so room(w, len(t)) made it deep enough. */
static int is_ordered(const sc_vocab *v, uint32_t t, work *w) {
    size_t depth = 0;
    w->stack[depth++] = t;
    while (depth) {
        uint32_t u = w->stack[depth - 1];
        if (split_facts(v, u, w) & FACT_ORDER) {
            depth--;
            continue;
        }
        uint32_t l = half(v->split_left, u), r = half(v->split_right, u);
        int ordered;
        if (l == NONE) {
            ordered = token_len(v, u) == 1;
        } else if (v->rank[l] >= v->rank[u] || v->rank[r] >= v->rank[u]) {
            ordered = 0;
        } else {
            uint8_t lf = split_facts(v, l, w), rf = split_facts(v, r, w);
            if (!(lf & FACT_ORDER) || !(rf & FACT_ORDER)) { /* a part first */
                w->stack[depth++] = !(lf & FACT_ORDER) ? l : r;
                continue;
            }
            ordered = (lf & FACT_ORDERED) && (rf & FACT_ORDERED);
        }
        add_facts(v, u, (uint8_t)(FACT_ORDER | (ordered ? FACT_ORDERED : 0)));
        depth--;
    }
    return (facts_of(v, t) & FACT_ORDERED) != 0;
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
    return sc__merge_parts(v, w->bytes, ll + rl, 1, w->merge.starts, w->merge.pair, NULL) == 2 &&
           w->merge.starts[1] == ll;
}

/* ------------------------------------------------------------------ backtracking */

/* The first index in order[lo:hi] whose token's byte `d` is at least `byte` (all of them are
 * longer than d bytes and agree before it, so they are sorted by that byte). */
static size_t first_with(const sc_vocab *v, size_t lo, size_t hi, size_t d, unsigned byte) {
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->data[v->off[v->prefix_order[mid]] + d] < byte)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The longest token, of two bytes or more and shorter than `below`, that p[0:n] starts with, or
 * NONE: TokenTrie.candidates' walk. The run of tokens starting with p[0:d] is narrowed one byte
 * at a time by binary search, so the walk stops where the trie's would, whatever the length of
 * the longest token. */
static uint32_t longest_prefix(const sc_vocab *v, const uint8_t *p, size_t n, size_t below) {
    if (n < 2 || below <= 2) return NONE;
    size_t limit = n < below - 1 ? n : below - 1; /* the longest length allowed */
    uint32_t key = (uint32_t)p[0] << 8 | p[1], found = NONE;
    size_t lo = v->prefix_from[key], hi = v->prefix_from[key + 1];
    for (size_t d = 2; lo < hi; d++) {
        /* order[lo:hi] are the tokens starting with p[0:d]; p[0:d] itself, if one, comes first. */
        if (token_len(v, v->prefix_order[lo]) == d) found = v->prefix_order[lo++];
        if (d == limit) break;
        lo = first_with(v, lo, hi, d, p[d]);
        hi = first_with(v, lo, hi, d, p[d] + 1u);
    }
    return found;
}

/* The longest token that p[0:n] starts with and that is shorter than `below` bytes, single
 * bytes included, reachable or not; NONE if none. */
static uint32_t longest_token(const sc_vocab *v, const uint8_t *p, size_t n, size_t below) {
    uint32_t t = longest_prefix(v, p, n, below);
    if (t != NONE || below <= 1 || n == 0) return t;
    int64_t one = sc_lookup(v, p, 1);
    return one >= 0 ? (uint32_t)one : NONE;
}

/* The candidate after `t` at a position: the longest reachable token shorter than t that t's
 * bytes start with (the text there starts with t's bytes, so these are its shorter candidates),
 * or NONE; TokenTrie.candidates' next entry that is reachable. Kept per token once found
 * (FACT_SHORTER, stored as the splits are): a trie walk per candidate tried made a position's
 * cost the square of the longest token it starts (a vocabulary of every run "a" * k). The chain
 * of unreachable prefixes is followed on w->stack (each is shorter than t), all of them sharing
 * the answer: the prefixes of t shorter than an unreachable prefix are that prefix's. */
static uint32_t shorter(const sc_vocab *v, uint32_t t, work *w) {
    if (facts_of(v, t) & FACT_SHORTER) return half(v->shorter, t);
    if (room(w, token_len(v, t)) != SC_OK) return NONE;
    size_t depth = 0;
    uint32_t u = t, found;
    for (;;) {
        w->stack[depth++] = u;
        found = longest_token(v, v->data + v->off[u], token_len(v, u), token_len(v, u));
        if (found == NONE || is_reachable(v, found, w)) break;
        if (facts_of(v, found) & FACT_SHORTER) {
            found = half(v->shorter, found);
            break;
        }
        u = found;
    }
    while (depth) {
        u = w->stack[--depth];
        set_half(v->shorter, u, found);
        add_facts(v, u, FACT_SHORTER);
    }
    return found;
}

/* The first candidate at p: the longest reachable token that p[0:n] starts with, or NONE. */
static uint32_t candidate(const sc_vocab *v, const uint8_t *p, size_t n, work *w) {
    uint32_t t = longest_token(v, p, n, SIZE_MAX);
    if (t == NONE || room(w, token_len(v, t)) != SC_OK) return NONE;
    return is_reachable(v, t, w) ? t : shorter(v, t, w);
}

/* The candidates a search may try, per byte of its piece and beyond that, before it gives way to
 * the rank merge by heap (_core_merge.c), whose ids are the same. Pieces of real text try 0.01-4
 * candidates a byte; a run of one byte that starts many tokens tries 10-50 (o200k_base's
 * runs of "-": 48, each try a valid-pair walk), and the heap's merge costs about 2 tries a byte
 * (o200k_base, 100 KB pieces: 7-65 MB/s; the search 0.4-140). The pure twin's tries are mostly
 * memo hits: it gives way at 64 (streamcodec.pieces.backtrack.TRIES_PER_BYTE). */
#define TRIES_PER_BYTE 2
#define TRIES_BEYOND 64

int sc_backtrack_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    size_t base = out->len; /* the tokens taken so far are out->ids[base:] */
    size_t tries = n < (SIZE_MAX - TRIES_BEYOND) / TRIES_PER_BYTE ? TRIES_PER_BYTE * n + TRIES_BEYOND : SIZE_MAX;
    uint8_t *dead = calloc(n / 8 + 1, 1);
    work w = {NULL, {.starts = NULL}, NULL, 0, SC_OK};
    w.merge.starts = w.merge.stack_starts; /* nothing on the heap yet */
    int status = SC_NOMEM, merge = 0;
    if (!dead || room(&w, 64) != SC_OK || sc__prefix_index(v) != SC_OK) goto done;
    size_t pos = 0;
    uint32_t token = candidate(v, p, n, &w);
    while (pos < n) {
        /* Take the longest candidate that ends on a live position and pairs with the last. */
        while (token != NONE) {
            if (!tries--) {
                merge = 1;
                goto done;
            }
            size_t end = pos + token_len(v, token);
            if (!(dead[end >> 3] >> (end & 7) & 1) &&
                (out->len == base || valid_pair(v, out->ids[out->len - 1], token, &w)))
                break;
            token = shorter(v, token, &w);
        }
        if (token == NONE) {
            if (w.status != SC_OK) goto done;
            /* Every candidate failed: no encoding has a boundary here. Step back. */
            dead[pos >> 3] |= (uint8_t)(1u << (pos & 7));
            if (out->len == base) goto done; /* unreachable with all single bytes as tokens */
            uint32_t last = out->ids[--out->len];
            pos -= token_len(v, last);
            token = shorter(v, last, &w);
            continue;
        }
        if (sc_ids_reserve(out, 1) != SC_OK) goto done;
        out->ids[out->len++] = token;
        pos += token_len(v, token);
        token = candidate(v, p + pos, n - pos, &w);
    }
    status = SC_OK;
done:
    if (status != SC_OK) out->len = base;
    free(dead);
    free(w.bytes);
    free(w.stack);
    sc__scratch_free(&w.merge);
    return merge ? sc_merge_piece(v, p, n, out) : status;
}
