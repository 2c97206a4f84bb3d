/* The compiled core's tables: a vocabulary's tokens, the lookup of a piece's bytes, the index of
 * the backtracking candidates, and the growable id arrays; plain C (no Python).
 *
 *   - sc_lookup      a dict lookup of the ranks (open addressing keyed by the bytes: the inline
 *                    sc_table_lookup of _core_lookup.h, which the fused pass calls itself);
 *   - sc_vocab_new   the tables, built once; read-only after (but for the facts of
 *                    _core_backtrack.c, written atomically, and the candidates' index, built
 *                    by the first long piece), so any number of threads share them.
 *
 * The units above it: _core_merge.c (the rank merge), _core_backtrack.c (long pieces),
 * _core_piece.c (one piece: the whole-piece rule, then one of the two).
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h> /* SwitchToThread; before the core's NONE */
#else
#include <pthread.h>
#include <sched.h>
#endif

#include "_core_internal.h"

#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ hashing and lookup */

int64_t sc_lookup(const sc_vocab *v, const uint8_t *p, size_t n) {
    return sc_table_lookup(&v->table, p, n, sc_head(p, n));
}

const sc_table *sc_table_of(const sc_vocab *v) { return &v->table; }

uint32_t sc_rank(const sc_vocab *v, uint32_t index) { return v->rank[index]; }
const uint32_t *sc_rank_table(const sc_vocab *v) { return v->ranks_are_indices ? NULL : v->rank; }

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

/* ------------------------------------------------------------------ the candidates' index */

/* Whether token a's bytes sort before token b's (a prefix before the longer token). */
static int sorts_before(const sc_vocab *v, uint32_t a, uint32_t b) {
    size_t la = token_len(v, a), lb = token_len(v, b);
    int c = memcmp(v->data + v->off[a], v->data + v->off[b], la < lb ? la : lb);
    return c < 0 || (c == 0 && la < lb);
}

/* Sort a[0:count] by token bytes with tmp[0:count] as room: a bottom-up merge sort (qsort has
 * no portable way to pass the vocabulary). */
static void sort_tokens(const sc_vocab *v, uint32_t *a, uint32_t *tmp, size_t count) {
    uint32_t *src = a, *dst = tmp;
    for (size_t width = 1; width < count; width *= 2) {
        for (size_t lo = 0; lo < count; lo += 2 * width) {
            size_t mid = lo + width < count ? lo + width : count;
            size_t hi = mid + width < count ? mid + width : count, i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = sorts_before(v, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        uint32_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != a) memcpy(a, src, count * sizeof *a);
}

static inline uint32_t start_of(const sc_vocab *v, uint32_t t) {
    const uint8_t *p = v->data + v->off[t];
    return (uint32_t)p[0] << 8 | p[1];
}

/* Fill prefix_order and prefix_from (the index of the backtracking candidates; prefix_from all
 * zero before): SC_OK, or SC_NOMEM with nothing written. */
static int index_prefixes(const sc_vocab *v) {
    uint32_t *tmp = malloc((v->n ? v->n : 1) * sizeof *tmp), *from = v->prefix_from;
    if (!tmp) return SC_NOMEM;
    /* Bucket by the first two bytes (a counting sort: from[k + 1] counts, then ends, then starts
     * bucket k), then sort each bucket. */
    for (uint32_t t = 0; t < v->n; t++)
        if (token_len(v, t) >= 2) from[start_of(v, t) + 1]++;
    for (size_t k = 1; k <= 65536; k++) from[k] += from[k - 1];
    size_t count = from[65536];
    for (uint32_t t = 0; t < v->n; t++)
        if (token_len(v, t) >= 2) v->prefix_order[--from[start_of(v, t) + 1]] = t;
    memmove(from, from + 1, 65536 * sizeof *from);
    from[65536] = (uint32_t)count;
    for (size_t k = 0; k < 65536; k++)
        sort_tokens(v, v->prefix_order + from[k], tmp, from[k + 1] - from[k]);
    free(tmp);
    return SC_OK;
}

/* Which process image this is: 1, then one more in the child of each fork (pthread_atfork). A
 * thread building the index marks it with this number, so a fork while another thread builds
 * it, which copies a build that never finishes in the child, is told from a build under way
 * here: the child's number is above every number in the memory it inherits. Written only in a
 * child before it has a second thread. (Windows has no fork.) */
static long this_image = 1;
#ifndef _WIN32
static pthread_once_t watching_forks = PTHREAD_ONCE_INIT;
static void next_image(void) { this_image++; }
static void watch_forks(void) { pthread_atfork(NULL, NULL, next_image); }
#endif

/* Give the core to another thread: on two cores a waiter that spins can hold the one its builder
 * needs. */
static void let_others_run(void) {
#ifdef _WIN32
    SwitchToThread();
#else
    sched_yield();
#endif
}

int sc__prefix_index(const sc_vocab *v) {
    long state = atomic_load_explicit(v->prefix_state, memory_order_acquire);
    if (state == PREFIXES_READY) return SC_OK;
#ifndef _WIN32
    pthread_once(&watching_forks, watch_forks); /* before any build this process marks */
#endif
    while (state != PREFIXES_READY) {
        if (state == this_image) { /* another thread builds it */
            let_others_run();
            state = atomic_load_explicit(v->prefix_state, memory_order_acquire);
            continue;
        }
        /* Nobody builds it, or an older image's thread did when it forked: this thread builds
         * it (from a zeroed prefix_from where a copied build left it half written). On a lost
         * race state holds the winner's mark. */
        if (atomic_compare_exchange_strong_explicit(v->prefix_state, &state, this_image,
                                                    memory_order_acquire, memory_order_acquire)) {
            if (state != PREFIXES_NONE)
                memset(v->prefix_from, 0, (65536 + 1) * sizeof *v->prefix_from);
            int status = index_prefixes(v);
            atomic_store_explicit(v->prefix_state, status == SC_OK ? PREFIXES_READY : PREFIXES_NONE,
                                  memory_order_release);
            return status;
        }
    }
    return SC_OK;
}

/* ------------------------------------------------------------------ building */

int sc_vocab_new(sc_vocab **out, size_t n, const uint8_t *data, const size_t *offsets,
                 const uint32_t *ranks, size_t long_piece) {
    *out = NULL;
    if (n > SC_MAX_TOKENS) return SC_NOMEM;
    sc_vocab *v = calloc(1, sizeof *v);
    if (!v) return SC_NOMEM;
    v->n = n;
    v->long_piece = long_piece;
    size_t total = offsets[n];
    uint64_t cap = 16; /* slots: a load of at most one half keeps misses short */
    while (cap < 2 * (uint64_t)n + 2) cap *= 2;
    v->data = malloc(total ? total : 1);
    v->off = malloc((n + 1) * sizeof *v->off);
    v->rank = malloc((n ? n : 1) * sizeof *v->rank);
    v->slots = calloc(cap, sizeof *v->slots);
    v->short_index = malloc((SC_SHORT_ONE + 256) * sizeof *v->short_index);
    v->prefix_order = malloc((n ? n : 1) * sizeof *v->prefix_order);
    v->prefix_from = calloc(65536 + 1, sizeof *v->prefix_from);
    v->prefix_state = calloc(1, sizeof *v->prefix_state); /* PREFIXES_NONE */
    /* calloc'd: untouched pages cost nothing until a long piece needs a token's facts. */
    v->facts = calloc(n ? n : 1, 1);
    v->split_left = calloc(n ? n : 1, sizeof *v->split_left);
    v->split_right = calloc(n ? n : 1, sizeof *v->split_right);
    v->shorter = calloc(n ? n : 1, sizeof *v->shorter);
    if (!v->data || !v->off || !v->rank || !v->slots || !v->short_index || !v->prefix_order ||
        !v->prefix_from || !v->prefix_state ||
        !v->facts || !v->split_left || !v->split_right || !v->shorter) {
        sc_vocab_free(v);
        return SC_NOMEM;
    }
    memcpy(v->data, data, total);
    memcpy(v->off, offsets, (n + 1) * sizeof *v->off);
    memcpy(v->rank, ranks, n * sizeof *v->rank);
    v->ranks_are_indices = 1;
    for (size_t t = 0; t < n && v->ranks_are_indices; t++) v->ranks_are_indices = ranks[t] == t;
    /* The filter: 16 bits a token (a clear bit for 94% of the keys that are no token). */
    uint64_t filter_bits = 64;
    while (filter_bits < 16 * (uint64_t)n) filter_bits *= 2;
    v->filter = calloc(filter_bits / 64, sizeof *v->filter);
    if (!v->filter) {
        sc_vocab_free(v);
        return SC_NOMEM;
    }
    v->table = (sc_table){v->slots, cap - 1, v->short_index, v->data, v->off, v->filter,
                          filter_bits - 1, n};
    for (size_t i = 0; i < SC_SHORT_ONE + 256; i++) v->short_index[i] = NONE;
    for (size_t t = 0; t < n; t++) {
        const uint8_t *p = data + offsets[t];
        size_t len = offsets[t + 1] - offsets[t];
        if (len > v->longest) v->longest = len;
        int status = SC_OK;
        if (len == 1 || len == 2) {
            uint32_t *index = &v->short_index[len == 1 ? SC_SHORT_ONE + (uint32_t)p[0] : (uint32_t)p[0] << 8 | p[1]];
            if (*index != NONE) status = SC_DUPLICATE;
            *index = (uint32_t)t;
        } else {
            uint64_t head = sc_head(p, len), hash = sc_hash(p, len, head);
            uint64_t bit = (hash >> 32) & v->table.filter_mask, i = hash & v->table.mask;
            v->filter[bit >> 6] |= 1ull << (bit & 63);
            sc_slot slot = {head, sc_next4(p, len), sc_entry((uint32_t)t, len)};
            /* The probe sc_table_find makes, to the empty slot: any equal token is on it. */
            for (; v->slots[i].entry; i = (i + 1) & v->table.mask) {
                const sc_slot *s = &v->slots[i];
                uint32_t other = (s->entry >> 8) - 1;
                if (s->head == slot.head && s->next == slot.next && (s->entry & 255) == (slot.entry & 255) &&
                    token_len(v, other) == len &&
                    memcmp(data + offsets[other], p, len) == 0)
                    status = SC_DUPLICATE;
            }
            v->slots[i] = slot;
        }
        if (status != SC_OK) {
            sc_vocab_free(v);
            return status;
        }
    }
    *out = v;
    return SC_OK;
}

void sc_vocab_free(sc_vocab *v) {
    if (!v) return;
    free(v->data);
    free(v->off);
    free(v->rank);
    free(v->slots);
    free(v->filter);
    free(v->short_index);
    free(v->prefix_order);
    free(v->prefix_from);
    free((void *)v->prefix_state);
    free(v->facts);
    free(v->split_left);
    free(v->split_right);
    free(v->shorter);
    free(v);
}
