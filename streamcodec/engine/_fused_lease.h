/* A call's word cache: the encoder's one cache (the primary), written by a call alone, or read
 * by calls at once, each beside a private cache of its own (_shared_cache.h). Included by
 * _fused.c after FusedEncoder; every function here runs with the GIL held.
 *
 * Concurrent calls of one encoder (a thread pool over encode_to_numpy, the corpus tool's jobs,
 * each a one-thread batch of ~1 MB) each took a whole cache from a pool: N first levels of 3-6
 * MB in one L3, N caches learning the same words (two jobs' workers used ~12% more CPU than
 * one). Now the encoder has one primary, and a call leases it (cache_lease) one of three ways:
 *
 *   - LEASE_HELD: no other call holds or reads it, and the encoder is not `sharing` or the
 *     call keeps the GIL (then no other can start before it ends): the call writes it
 *     directly, as one thread alone always did (the fast path, unchanged);
 *   - LEASE_READ: another call reads it, or the encoder is `sharing`: the call attaches to it
 *     read-only (`readers`), with a private cache from the encoder's pool of them (`helpers`),
 *     which learns its misses and keeps them across calls (pooled, not forgotten); a batch on
 *     threads always reads, its threads each with a private cache;
 *   - LEASE_APART: a call holds it (writes it without the GIL): the call reads no primary, only
 *     a private cache (no first level: its sets answer), and the encoder starts `sharing`, so
 *     the calls after it read the primary rather than hold it (one slow call a change of mode);
 *     a long call that holds it reads it from its next block on (lease_share).
 * When the last call lets go (none holds or reads it), what the idle private caches learned is
 * offered to the primary and they are emptied (lease_teach: wc_promote, wc_forget), the GIL
 * released meanwhile, the teaching holding the primary. `sharing` ends after SOLO_CALLS calls
 * in a row that released the GIL and met no other call.
 *
 * Why it is race-free: `held`, `readers`, `sharing` and the pools change with the GIL held; the
 * primary is written only by its holder, a call (then no call reads it: an arrival goes APART)
 * or a teaching: lease_teach (the last call out: neither holder nor reader; a batch's threads
 * are joined before its lease ends) or batch_teach (_fused_batch.h: a batch that is its only
 * reader, its threads joined between its phases). A teaching takes `held` with the GIL, then
 * releases it: an arrival meanwhile goes APART, and cache_info leaves a held primary out; the
 * caches it teaches are out of the pool (lease_teach) or the batch's own (batch_teach), so no
 * other thread touches them; it gives `held` back with the GIL taken again. A private cache is
 * used by one thread at a time (taken from its pool for one call, or one batch thread). Exact:
 * _shared_cache.h, every entry maps a piece's bytes to its ids, whoever learned it.
 */
#ifndef STREAMCODEC_FUSED_LEASE_H
#define STREAMCODEC_FUSED_LEASE_H

#define SOLO_CALLS 8 /* lone calls in a row after which a call holds the primary again */
/* A private cache's bound, of the encoder's cache_bytes (16 MB of the default 32; its sets grow
 * as it learns, so a warm call's stay small). */
#define PRIVATE_SHARE 2

enum { LEASE_HELD, LEASE_READ, LEASE_APART };

typedef struct {
    word_cache *cache;        /* what the call writes: the primary (held), or a private cache */
    const word_cache *shared; /* the primary, read only (LEASE_READ); else NULL */
    int how;
    int lone;          /* no other call held or read the primary when this one began */
    uint64_t arrivals; /* the encoder's calls so far, this one's included */
} cache_lease;

/* Point c's first level at `shared`'s (read only), or at none (NULL), its counters kept. */
static void lease_point(word_cache *c, const word_cache *shared) {
    uint64_t hits = c->first.hits, misses = c->first.misses;
    wc_attach(c, shared);
    c->first.hits = hits;
    c->first.misses = misses;
}

/* A private cache for a call beside `shared` (NULL: none): an idle one, or a new one (NULL
 * with MemoryError). */
static word_cache *lease_helper(FusedEncoder *self, const word_cache *shared) {
    if (self->helpers.n) {
        word_cache *c = self->helpers.items[--self->helpers.n];
        lease_point(c, shared);
        return c;
    }
    word_cache *c = PyMem_Malloc(sizeof *c);
    if (!c || wc_init_private(c, self->cache_bytes / PRIVATE_SHARE, shared,
                              self->api->table_of(self->vocab)) < 0) {
        PyMem_Free(c);
        PyErr_NoMemory();
        return NULL;
    }
    self->helpers.made++;
    return c;
}

/* Each of n private caches' learning offered to the primary, and they emptied. */
static void lease_teach_each(word_cache *primary, word_cache *const *caches, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        wc_promote(primary, caches[i]);
        wc_forget(caches[i]);
    }
}

/* The idle private caches' learning offered to the primary, and they emptied (none holds or
 * reads the primary: the last call out), the GIL released while they teach: with it held, a
 * Python thread beside a cold batch of 45 MB on two threads waited up to 49-143 ms at the
 * batch's end. Meanwhile the teaching holds the primary (`held`: an arrival goes apart and
 * reads none; cache_info leaves it out) and the caches taught are out of the pool (an arrival
 * makes its own). Where none learned a piece (a warm call's), only their counters are added,
 * the GIL kept: no switch of threads at each call's end. */
static void lease_teach(FusedEncoder *self) {
    cache_pool taught = self->helpers;
    int learned = 0;
    for (Py_ssize_t i = 0; i < taught.n; i++) learned |= wc_learned(taught.items[i]);
    if (!learned) {
        lease_teach_each(self->primary, taught.items, taught.n);
        return;
    }
    self->helpers = (cache_pool){.made = taught.made};
    self->held = 1;
    Py_BEGIN_ALLOW_THREADS
    lease_teach_each(self->primary, taught.items, taught.n);
    Py_END_ALLOW_THREADS
    self->held = 0;
    /* A call that came meanwhile found the pool empty and made a private cache: as many of
     * those taught (emptied) are freed, so that teaching adds none (it added one at many
     * teachings, without bound: three threads of learning calls made 10-49). */
    Py_ssize_t extra = self->helpers.made - taught.made;
    for (Py_ssize_t i = 0; i < taught.n; i++) {
        if (i < extra) {
            wc_free(taught.items[i]);
            PyMem_Free(taught.items[i]);
            self->helpers.made--;
        } else {
            pool_put(&self->helpers, taught.items[i]);
        }
    }
    PyMem_Free(taught.items);
}

/* The primary leased for a call (lease_give ends it): held, read or apart (above). `many`: a
 * batch on threads, which never holds it and takes no private cache here (each thread takes
 * one: batch_encode_runs); `gil`: the call keeps the GIL until it ends. 0, or -1 with
 * MemoryError (nothing leased). */
static int lease_take(FusedEncoder *self, cache_lease *l, int many, int gil) {
    l->lone = !self->held && !self->readers;
    l->arrivals = ++self->arrivals;
    l->cache = NULL;
    l->shared = NULL;
    if (self->held) {
        self->sharing = 1;
        self->solo = 0;
        l->how = LEASE_APART;
    } else if (many || self->readers || (self->sharing && !gil)) {
        l->how = LEASE_READ;
        l->shared = self->primary;
    } else {
        self->held = 1;
        l->how = LEASE_HELD;
        l->cache = self->primary;
        return 0;
    }
    if (!many && !(l->cache = lease_helper(self, l->shared))) return -1;
    self->readers += l->how == LEASE_READ;
    return 0;
}

/* A held lease made a read one, between two blocks of a long call (the GIL held, its pass
 * paused, so nothing writes the primary now): a call went apart meanwhile, and every call
 * after it would while this one held the primary; now they read it. 0, or -1 out of memory
 * (still held; no error set). */
static int lease_share(FusedEncoder *self, cache_lease *l) {
    word_cache *c = lease_helper(self, self->primary);
    if (!c) {
        PyErr_Clear();
        return -1;
    }
    self->held = 0;
    self->readers++;
    l->how = LEASE_READ;
    l->cache = c;
    l->shared = self->primary;
    l->lone = 0;
    return 0;
}

/* The lease ended (`gil`: the call kept the GIL, so it met no other), its private cache
 * pooled; the last call out teaches the primary. */
static void lease_give(FusedEncoder *self, cache_lease *l, int gil) {
    if (l->how == LEASE_HELD)
        self->held = 0;
    else if (l->cache)
        pool_put(&self->helpers, l->cache);
    self->readers -= l->how == LEASE_READ;
    if (!gil && self->sharing) {
        int lone = l->lone && self->arrivals == l->arrivals;
        self->solo = lone ? self->solo + 1 : 0;
        if (self->solo >= SOLO_CALLS) self->sharing = 0;
    }
    if (!self->held && !self->readers) lease_teach(self);
}

#endif
