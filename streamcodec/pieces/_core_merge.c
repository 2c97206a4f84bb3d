/* The compiled core's rank merge: streamcodec.pieces.merge.merge_piece, in plain C (no Python).
 * It follows the Python lines one for one: merge the lowest-ranked adjacent pair, leftmost on
 * ties, until no pair is a token (docs/specification.md).
 */
#include "_core_internal.h"

#include <stdlib.h>
#include <string.h>

/* The rank of a token index t (-1: none), NONE for none. */
static inline uint32_t rank_of(const sc_vocab *v, int64_t t) {
    if (t < 0) return NONE;
    return v->ranks_are_indices ? (uint32_t)t : v->rank[t];
}

/* The rank of the token p[:n], or NONE (sc_lookup, inline). A join longer than every token is
 * none, unhashed: a long merge's parts grow past them. */
static inline uint32_t pair_rank(const sc_vocab *v, const uint8_t *p, size_t n) {
    if (n > v->longest) return NONE;
    return rank_of(v, sc_table_lookup(&v->table, p, n, sc_head(p, n)));
}

/* The join p[a:b] asked for (pair_ask: its filter word and first slot prefetched), as
 * pair_rank would look it up. */
typedef struct {
    size_t a, n;
    uint64_t head, hash;
    int asked; /* 0: longer than every token (NONE, unhashed, as pair_rank) */
} pair_key;

static inline pair_key pair_ask(const sc_vocab *v, const uint8_t *p, size_t a, size_t b) {
    pair_key k = {a, b - a, 0, 0, b - a <= v->longest};
    if (k.asked) {
        k.head = sc_head(p + a, k.n);
        k.hash = sc_table_hash(p + a, k.n, k.head);
        if (k.n > 2) sc_table_prefetch(&v->table, k.hash); /* 1 or 2 bytes: short_index */
    }
    return k;
}

/* pair_rank of a join asked for by pair_ask: after a merge both new joins are asked for before
 * either is read, so that their two waits on the vocabulary's table overlap (one after the
 * other, they were half of a cold call's merge time). */
static inline uint32_t pair_answer(const sc_vocab *v, const uint8_t *p, const pair_key *k) {
    if (!k->asked) return NONE;
    return rank_of(v, sc_table_lookup_hashed(&v->table, p + k->a, k->n, k->head, k->hash));
}

/* ------------------------------------------------------------------ the same merge, by heap */

/* The parts of a long merge: a list over their start offsets (next, prev), and each part's pair
 * with the next as a key (rank << 32 | start) in a min-heap, so that its least key is the pair
 * the loop below would merge: the lowest rank, leftmost on ties. A merge then costs O(log n)
 * where the loop's scan costs O(n), and a piece's n - 1 merges O(n log n) where the loop's cost
 * O(n^2): what a megabyte of one byte repeated needs (tiktoken merges large pieces so too).
 * A changed pair pushes a new key and leaves the old one, which is skipped when popped (its rank
 * is no longer its part's): the heap moves keys only, in one array, four children to a node (a
 * half line each), where an indexed heap also wrote each moved key's place: 2.4 against 2.0
 * at each doubling from 512 K bytes, its arrays past the caches. */
typedef struct {
    uint32_t *rank; /* the pair rank of part i and the next (NONE: none, or i is no part) */
    uint32_t *next, *prev;
    uint64_t *keys; /* the heap: keys[(k - 1) / 4] <= keys[k] */
    size_t size, cap;
} pair_heap;

#define KIDS 4

static void sift_down(pair_heap *h, size_t at) {
    uint64_t key = h->keys[at];
    for (size_t first; (first = KIDS * at + 1) < h->size;) {
        size_t least = first, end = first + KIDS < h->size ? first + KIDS : h->size;
        for (size_t k = first + 1; k < end; k++)
            if (h->keys[k] < h->keys[least]) least = k;
        if (h->keys[least] > key) break;
        h->keys[at] = h->keys[least];
        at = least;
    }
    h->keys[at] = key;
}

static void heapify(pair_heap *h) {
    for (size_t at = h->size / KIDS + 1; at-- > 0;)
        if (at < h->size) sift_down(h, at);
}

/* Give part i's pair the rank `rank`, and the heap its key. The heap holds at most twice the
 * parts: when full, its stale keys are dropped (at most half of them are live), so a merge's
 * pushes cost O(log n) amortized. */
static void heap_set(pair_heap *h, uint32_t i, uint32_t rank) {
    h->rank[i] = rank;
    if (rank == NONE) return;
    if (h->size == h->cap) {
        size_t live = 0;
        for (size_t k = 0; k < h->size; k++)
            if (h->rank[(uint32_t)h->keys[k]] == h->keys[k] >> 32) h->keys[live++] = h->keys[k];
        h->size = live;
        heapify(h);
    }
    size_t at = h->size++;
    uint64_t key = (uint64_t)rank << 32 | i;
    for (size_t up; at > 0 && h->keys[up = (at - 1) / KIDS] > key; at = up) h->keys[at] = h->keys[up];
    h->keys[at] = key;
}

/* A heap for a merge of n bytes (n < NONE), its arrays in one block; 0 when its memory cannot
 * be had. */
static int heap_new(pair_heap *h, size_t n) {
    uint64_t *keys = malloc(2 * n * sizeof *keys + 3 * n * sizeof *h->rank);
    uint32_t *lists = (uint32_t *)(keys + 2 * n);
    *h = (pair_heap){lists, lists + n, lists + 2 * n, keys, 0, 2 * n};
    return keys != NULL;
}

/* merge_parts by heap: the same merges, the parts left as the list from 0 (h->next); returns
 * their number. */
static size_t merge_heap(const sc_vocab *v, const uint8_t *p, size_t n, size_t parts,
                         pair_heap *h) {
    for (uint32_t i = 0; i < n; i++) {
        h->next[i] = i + 1;
        h->prev[i] = i ? i - 1 : NONE;
        h->rank[i] = i + 1 < n ? pair_rank(v, p + i, 2) : NONE;
        if (h->rank[i] != NONE) h->keys[h->size++] = (uint64_t)h->rank[i] << 32 | i;
    }
    heapify(h);
    size_t count = n;
    while (count > parts && h->size) {
        uint64_t key = h->keys[0];
        h->keys[0] = h->keys[--h->size];
        sift_down(h, 0);
        uint32_t i = (uint32_t)key;
        if (h->rank[i] != key >> 32) continue; /* stale */
        /* The right part of the least pair joins it. */
        uint32_t right = h->next[i], after = h->next[right];
        h->rank[right] = NONE;
        h->next[i] = after;
        if (after < n) h->prev[after] = i;
        count--;
        heap_set(h, i, after < n ? pair_rank(v, p + i, h->next[after] - i) : NONE);
        uint32_t before = h->prev[i];
        if (before != NONE) heap_set(h, before, pair_rank(v, p + before, h->next[i] - before));
    }
    return count;
}

/* ------------------------------------------------------------------ the rank merge */

/* streamcodec.pieces.merge.merge_parts (described in _core_internal.h); by heap from HEAP_MERGE
 * bytes on (the loop's, if the heap's memory cannot be had). */
size_t sc__merge_parts(const sc_vocab *v, const uint8_t *p, size_t n, size_t parts,
                       size_t *starts, uint32_t *pair, uint32_t *made) {
    pair_heap h;
    if (n >= HEAP_MERGE && n < NONE && heap_new(&h, n)) {
        size_t count = merge_heap(v, p, n, parts, &h), k = 0;
        for (uint32_t i = 0; i < n; i = h.next[i]) starts[k++] = i;
        starts[k] = n;
        free(h.keys);
        return count;
    }
    for (size_t i = 0; i <= n; i++) starts[i] = i;
    if (made)
        for (size_t i = 0; i < n; i++) made[i] = NONE;
    size_t count = n;
    for (size_t i = 0; i + 1 < count; i++) pair[i] = pair_rank(v, p + i, 2);
    while (count >= parts + 1 && count >= 2) {
        /* The least of (rank, place): the lowest rank, leftmost on ties; a min of one word a
         * pair, no branch (a branch on each pair's rank mispredicted once a merge or more). */
        uint64_t least = UINT64_MAX;
        for (size_t i = 0; i + 1 < count; i++) {
            uint64_t key = (uint64_t)pair[i] << 32 | i;
            least = key < least ? key : least;
        }
        uint32_t best = (uint32_t)(least >> 32);
        size_t at = (uint32_t)least;
        if (best == NONE) break;
        /* Part at + 1 joins part at: the parts after it move down one, in a loop (a call of
         * memmove a merge cost more than the few words it moves: its size checks mispredict). */
        for (size_t k = at; k + 2 < count; k++) {
            pair[k] = pair[k + 1];
            starts[k + 1] = starts[k + 2];
        }
        starts[count - 1] = starts[count];
        if (made) {
            made[at] = best;
            for (size_t k = at + 1; k + 1 < count; k++) made[k] = made[k + 1];
        }
        count--;
        pair_key left, right;
        if (at > 0) left = pair_ask(v, p, starts[at - 1], starts[at + 1]);
        if (at + 1 < count) right = pair_ask(v, p, starts[at], starts[at + 2]);
        if (at > 0) pair[at - 1] = pair_answer(v, p, &left);
        if (at + 1 < count) pair[at] = pair_answer(v, p, &right);
    }
    return count;
}

int sc__scratch_init(merge_scratch *s, size_t n) {
    if (n <= STACK_PARTS) {
        s->starts = s->stack_starts;
        s->pair = s->stack_pair;
        s->made = s->stack_made;
        return SC_OK;
    }
    s->starts = malloc((n + 1) * sizeof *s->starts);
    s->pair = malloc(n * sizeof *s->pair);
    s->made = malloc(n * sizeof *s->made);
    if (!s->starts || !s->pair || !s->made) {
        free(s->starts);
        free(s->pair);
        free(s->made);
        return SC_NOMEM;
    }
    return SC_OK;
}

void sc__scratch_free(merge_scratch *s) {
    if (s->starts != s->stack_starts) {
        free(s->starts);
        free(s->pair);
        free(s->made);
    }
}

int sc_merge_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    if (n >= HEAP_MERGE && n < NONE) {
        /* The heap's parts, read off its list: no array of starts beside it. */
        pair_heap h;
        if (!heap_new(&h, n)) return SC_NOMEM;
        size_t count = merge_heap(v, p, n, 1, &h);
        int status = sc_ids_reserve(out, count);
        for (uint32_t i = 0; status == SC_OK && i < n; i = h.next[i])
            out->ids[out->len++] = (uint32_t)sc_lookup(v, p + i, h.next[i] - i);
        free(h.keys);
        return status;
    }
    merge_scratch s;
    if (sc_ids_reserve(out, n) != SC_OK || sc__scratch_init(&s, n) != SC_OK) return SC_NOMEM;
    size_t count = sc__merge_parts(v, p, n, 1, s.starts, s.pair, s.made); /* n < HEAP_MERGE */
    /* Every part is a token: a merged part by construction, a single byte because the vocabulary
     * has all 256 (sc_vocab_new's contract; the module checks it). A merged part is the token
     * its merge's rank names where ranks are indices (not looked up again); any other, by its
     * bytes. */
    for (size_t i = 0; i < count; i++)
        out->ids[out->len++] =
            s.made[i] != NONE && v->ranks_are_indices
                ? s.made[i]
                : (uint32_t)sc_lookup(v, p + s.starts[i], s.starts[i + 1] - s.starts[i]);
    sc__scratch_free(&s);
    return SC_OK;
}
