/* The word cache of the fused pass: a piece's bytes to its token indices, bounded in bytes.
 *
 * Real text repeats its words, and a piece that is not a token costs a rank merge (tens of
 * table lookups); a piece seen before costs one probe here. A cached answer is always right:
 * the whole-piece rule and the rank merge depend on the piece's bytes alone, not on the text
 * around it (docs/performance.md, "The word cache").
 *
 * Three parts in one bound (`bytes`): the first level (_first_level.h, up to three quarters),
 * filled with the vocabulary's short tokens when it is made, answers a token or a piece of up to
 * 15 bytes and 6 tokens with one probe of one line, and is asked first; the sets below are for
 * what it does not hold (longer pieces, more tokens, pieces its full lines turned away); the
 * long pieces' store (_long_store.h, an eighth) for what the sets' entries cannot hold.
 *
 * The sets' shape (measured against the alternatives in docs/performance.md):
 *   - set-associative: 4 ways of 128-byte entries (two cache lines each: the key, then the ids;
 *     the table aligned to lines), inline, so a hit reads two lines and allocates nothing;
 *     pieces longer than WC_KEY bytes or of more than WC_IDS tokens go to the long pieces'
 *     store (1% of the pieces of multilingual text; 2% with 24-byte keys and 8 ids, which
 *     merged again on every run were a quarter of a warm o200k_base count of it);
 *   - least-recently-used within a set: a hit moves its entry to the front;
 *   - scan-resistant by admission: once the cache has its full size, a piece that would evict
 *     another enters only on its second miss, remembered by a "doorkeeper" array of
 *     fingerprints. A text of words never seen again (a scan) fills the doorkeeper, not the
 *     cache, so the words that repeat stay.
 * It starts small and grows (4x, entries rehashed) while it fills, up to its bound: a fresh
 * cache of the full size would cost a page fault for each page its first words touch, more than
 * encoding a short text takes.
 *
 * One cache is written by one thread at a time (its Encoding's one cache is leased to a call
 * with the GIL held, _fused_lease.h): no lock on the hot path. A call alone writes it; calls at
 * once and a batch's threads read it (the primary), and none writes it while they run; each
 * has a private cache (wc_init_private) that reads the primary's first level through a fixed
 * header of its own, has a small first level of its own ("near": the tokens and short pieces
 * the primary's missed, asked after it), sets and a store; what the private caches learned is
 * offered to the primary when no call reads it, on one thread (wc_promote, _shared_cache.h). Why
 * that is exact and race-free:
 * docs/performance.md, "The word cache", Threads.
 *
 *     word_cache c;
 *     wc_init(&c, 1 << 20, table);                // about 1 MB; table: the vocabulary's
 *     wc_key k; wc_key_set(&k, (const uint8_t *)" hello", 6);
 *     const wc_entry *e = wc_get(&c, &k);        // NULL: a miss
 *     wc_offer(&c, &k, ids, 2);                   // remembered; a second offer stores it
 */
#ifndef STREAMCODEC_WORD_CACHE_H
#define STREAMCODEC_WORD_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <malloc.h> /* _aligned_malloc */
#else
#include <sys/mman.h> /* madvise */
#endif

#include "_first_level.h"

#define WC_KEY 56 /* key bytes an entry holds */
#define WC_IDS 16 /* token indices an entry holds */
#define WC_WAYS 4

typedef struct {
    uint32_t tag; /* hash bits, never 0; 0 marks an empty entry */
    uint8_t len;  /* key bytes */
    uint8_t n;    /* token indices */
    uint16_t unused;
    uint64_t key[WC_KEY / 8]; /* zero-padded, so keys compare word by word */
    uint32_t ids[WC_IDS];
} wc_entry;
_Static_assert(sizeof(wc_entry) == 128, "a word cache entry is two cache lines");

typedef struct {
    uint64_t word[WC_KEY / 8];
    uint8_t len;
    uint64_t hash;
} wc_key;

#define WC_LINE 64                  /* an entry fills two cache lines: aligned, it reads two */
#define WC_HUGE ((size_t)2 << 20)   /* tables this large are aligned to (and ask for) huge pages */

/* `bytes` aligned to `align` (a power of two, a multiple of the pointer's size; WC_HUGE: a huge
 * page, asked for with MADV_HUGEPAGE where the OS has it); NULL when out of memory. calloc
 * aligns to 16 bytes only, so 64-byte entries would straddle two lines. */
static void *wc_aligned(size_t bytes, size_t align) {
    void *p;
#ifdef _WIN32
    p = _aligned_malloc(bytes, align);
    if (!p) return NULL;
#else
    if (posix_memalign(&p, align, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (align == WC_HUGE) madvise(p, bytes, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
#endif
    return p;
}

/* `bytes` zeroed, aligned to a cache line, and to a huge page from WC_HUGE on (fewer TLB misses
 * on a table of megabytes read at random). */
static void *wc_aligned_zeroed(size_t bytes) {
    void *p = wc_aligned(bytes, bytes >= WC_HUGE ? WC_HUGE : WC_LINE);
    return p ? memset(p, 0, bytes) : NULL;
}

static void wc_aligned_free(void *p) {
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

static inline uint64_t wc_rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* A key's hash: its length, then its 8-byte words (the last zero-padded) mixed in one by one. */
static inline uint64_t wc_mix(uint64_t h, uint64_t word) {
    return wc_rotl(h ^ word * 0x9e3779b97f4a7c15ull, 31) * 0xc2b2ae3d27d4eb4full;
}

static inline uint64_t wc_finish(uint64_t h) {
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ h >> 32;
}

/* The hash of p[:len], any length (wc_key_set's for a key it holds). */
static inline uint64_t wc_hash(const uint8_t *p, size_t len) {
    uint64_t h = len, last = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) h = wc_mix(h, sc_load64(p + i));
    if (i == len) return wc_finish(h);
    memcpy(&last, p + i, len - i);
    return wc_finish(wc_mix(h, last));
}

#include "_long_store.h"

typedef struct {
    first_level first; /* asked first: tokens and short pieces, one line (_first_level.h) */
    first_level near;  /* a private cache's own first level, after `first` (fixed); else none */
    long_store longs;  /* pieces the sets' entries cannot hold (_long_store.h) */
    wc_entry *sets;    /* WC_WAYS entries a set */
    uint32_t *door;    /* fingerprints of pieces missed once */
    uint64_t set_mask; /* sets - 1 (a power of two) */
    uint64_t door_mask;
    size_t max_sets, filled; /* the bound; entries in use */
    uint64_t hits, misses, merges; /* merges: pieces no level held (the core merged them) */
    uint32_t *log;   /* a private cache's: the near lines and sets it stored into (_shared_cache.h) */
    size_t logged;   /* ...how many (past WC_LOG: more than it holds) */
} word_cache;

#define WC_FIRST_SETS 256 /* 128 KiB to start with */
#define WC_SET_BYTES (WC_WAYS * (sizeof(wc_entry) + sizeof(uint32_t)))

/* Allocate `sets` sets (and as many doorkeeper slots as entries): 0, or -1 out of memory. */
static int wc_alloc(word_cache *c, size_t sets) {
    wc_entry *entries = wc_aligned_zeroed(sets * WC_WAYS * sizeof *entries);
    uint32_t *door = wc_aligned_zeroed(sets * WC_WAYS * sizeof *door);
    if (!entries || !door) {
        wc_aligned_free(entries);
        wc_aligned_free(door);
        return -1;
    }
    c->sets = entries;
    c->door = door;
    c->set_mask = sets - 1;
    c->door_mask = sets * WC_WAYS - 1;
    return 0;
}

static void wc_free(word_cache *c);

/* A first level within `bytes` for a vocabulary of t's size, filled with t's short tokens or
 * (fill 0) empty: 0, or -1 out of memory. */
static int wc_first_init(first_level *f, size_t bytes, const sc_table *t, int fill) {
    size_t lines = fl_lines_for(bytes, t->n);
    if (!lines) return 0;
    fl_entry *entries = wc_aligned_zeroed(lines * 2 * sizeof *entries);
    uint32_t *door = wc_aligned_zeroed(lines * sizeof *door);
    if (!entries || !door) {
        wc_aligned_free(entries);
        wc_aligned_free(door);
        return -1;
    }
    fl_setup(f, lines, entries, door);
    if (fill) fl_fill(f, t);
    return 0;
}

/* The rest of a cache of at most `bytes` whose first levels took `taken`: an eighth of `bytes`
 * for the long pieces' store (allocated when it stores its first), what is left for the sets;
 * too small for one set: no sets (every lookup misses). 0, or -1 out of memory (c freed). */
static int wc_init_rest(word_cache *c, size_t bytes, size_t taken) {
    ls_plan(&c->longs, bytes / 8);
    bytes -= taken;
    bytes -= c->longs.segments ? ls_size((size_t)c->longs.bucket_mask + 1, c->longs.segments) : 0;
    if (bytes < WC_SET_BYTES) return 0;
    size_t sets = 1;
    while (2 * sets * WC_SET_BYTES <= bytes) sets *= 2;
    c->max_sets = sets;
    if (wc_alloc(c, sets < WC_FIRST_SETS ? sets : WC_FIRST_SETS) == 0) return 0;
    wc_free(c);
    return -1;
}

/* A cache of at most `bytes` (entries and doorkeepers together): up to three quarters for the
 * first level (filled with t's short tokens), then the store and the sets (wc_init_rest).
 * 0 on success, -1 when out of memory. */
static int wc_init(word_cache *c, size_t bytes, const sc_table *t) {
    memset(c, 0, sizeof *c);
    if (wc_first_init(&c->first, bytes / 4 * 3, t, 1) < 0) return -1;
    return wc_init_rest(c, bytes, fl_bytes(&c->first));
}

static void wc_free(word_cache *c) {
    if (!c->first.fixed) {
        wc_aligned_free(c->first.lines);
        wc_aligned_free(c->first.door);
    }
    wc_aligned_free(c->near.lines);
    wc_aligned_free(c->near.door);
    free(c->log);
    wc_aligned_free(c->sets);
    wc_aligned_free(c->door);
    ls_free(&c->longs);
    memset(c, 0, sizeof *c);
}

/* The bytes a cache holds now. */
static size_t wc_bytes(const word_cache *c) {
    return (c->first.fixed ? 0 : fl_bytes(&c->first)) + fl_bytes(&c->near) + ls_bytes(&c->longs) +
           (c->sets ? (size_t)(c->set_mask + 1) * WC_SET_BYTES : 0);
}

/* The 8-byte words a key of len bytes fills (the rest are zero). */
static inline size_t wc_words(size_t len) { return (len + 7) / 8; }

/* Fill k from a piece of len <= WC_KEY bytes: the padded words and their hash. */
static inline void wc_key_set(wc_key *k, const uint8_t *p, size_t len) {
    memset(k->word, 0, sizeof k->word);
    memcpy(k->word, p, len);
    k->len = (uint8_t)len;
    uint64_t h = len;
    for (size_t w = 0; w < wc_words(len); w++) h = wc_mix(h, k->word[w]);
    k->hash = wc_finish(h);
}

static inline uint32_t wc_tag(const wc_key *k) { return (uint32_t)(k->hash >> 32) | 1u; }

static inline int wc_same(const wc_entry *e, const wc_key *k, uint32_t tag) {
    if (e->tag != tag || e->len != k->len) return 0;
    uint64_t differ = 0; /* the words past the length are zero in both */
    for (size_t w = 0; w < wc_words(k->len); w++) differ |= e->key[w] ^ k->word[w];
    return !differ;
}

/* The way of k in its set (k's set in *at), or -1: c read, not written. */
static inline int wc_find(const word_cache *c, const wc_key *k, wc_entry **at) {
    if (!c->sets) return -1;
    wc_entry *set = *at = c->sets + (k->hash & c->set_mask) * WC_WAYS;
    uint32_t tag = wc_tag(k);
    for (int w = 0; w < WC_WAYS; w++)
        if (wc_same(&set[w], k, tag)) return w;
    return -1;
}

/* The entry of k (moved to the front of its set), or NULL. */
static inline const wc_entry *wc_get(word_cache *c, const wc_key *k) {
    wc_entry *set;
    int w = wc_find(c, k, &set);
    if (w < 0) {
        c->misses++;
        return NULL;
    }
    c->hits++;
    if (w) {
        wc_entry hit = set[w];
        memmove(set + 1, set, (size_t)w * sizeof *set);
        set[0] = hit;
    }
    return set;
}

/* The entry of k in a cache other threads read too (a batch's primary), or NULL: nothing
 * written, no counter (the caller counts the hit in its own cache). */
static inline const wc_entry *wc_peek(const word_cache *c, const wc_key *k) {
    wc_entry *set;
    int w = wc_find(c, k, &set);
    return w < 0 ? NULL : set + w;
}

/* Grow 4x (up to the bound), each entry rehashed into the set its hash now names, in its LRU
 * order: an old set's entries land in sets that only it feeds, so none is lost. The doorkeeper
 * starts over. Out of memory: the cache stays as it is. */
static void wc_grow(word_cache *c) {
    size_t sets = (size_t)(c->set_mask + 1) * 4;
    word_cache old = *c;
    if (wc_alloc(c, sets < c->max_sets ? sets : c->max_sets) < 0) {
        *c = old;
        return;
    }
    for (size_t i = 0; i <= old.set_mask * WC_WAYS + WC_WAYS - 1; i++) {
        const wc_entry *e = &old.sets[i];
        if (!e->tag) continue;
        wc_key k;
        wc_key_set(&k, (const uint8_t *)e->key, e->len);
        wc_entry *set = c->sets + (k.hash & c->set_mask) * WC_WAYS;
        int w = 0;
        while (set[w].tag) w++;
        set[w] = *e;
    }
    wc_aligned_free(old.sets);
    wc_aligned_free(old.door);
}

/* Offer k's ids after a miss: stored at the front of its set. When that evicts an entry (the
 * set is full) and the cache has its full size, only if k was offered before and the
 * doorkeeper still remembers it; else it is remembered. (While the cache grows, a full set
 * evicts at once.) The entry evicted goes to the long pieces' store if it may hold it (more
 * than WC_IDS bytes), which the sets' misses of such pieces ask: at half full, when the cache
 * grows, one set in twenty of four ways has overflowed, and its pieces were merged again on
 * every run (532 a warm run of the multilingual sample, cl100k_base). */
static inline void wc_offer(word_cache *c, const wc_key *k, const uint32_t *ids, size_t n) {
    if (!c->sets || n > WC_IDS) return;
    uint32_t tag = wc_tag(k), *door = &c->door[(k->hash >> 8) & c->door_mask];
    wc_entry *set = c->sets + (k->hash & c->set_mask) * WC_WAYS;
    int room = !set[WC_WAYS - 1].tag, growing = (size_t)c->set_mask + 1 < c->max_sets;
    if (!room && !growing && *door != tag) {
        *door = tag;
        return;
    }
    if (*door == tag) *door = 0;
    c->filled += room;
    const wc_entry *last = &set[WC_WAYS - 1];
    if (!room && last->len > WC_IDS) {
        const uint8_t *key = (const uint8_t *)last->key;
        ls_offer(&c->longs, key, last->len, wc_hash(key, last->len), last->ids, last->n);
    }
    memmove(set + 1, set, (WC_WAYS - 1) * sizeof *set);
    set[0].tag = tag;
    set[0].len = k->len;
    set[0].n = (uint8_t)n;
    memcpy(set[0].key, k->word, sizeof k->word);
    memcpy(set[0].ids, ids, n * sizeof *ids);
    size_t sets = (size_t)c->set_mask + 1;
    if (sets < c->max_sets && c->filled > sets * WC_WAYS / 2) wc_grow(c);
}

#define WC_LOG 16384            /* lines and sets a private cache's log holds */
#define WC_LOG_SET 0x80000000u  /* a log entry names a set (else a near line) */
#define WC_LOG_ALL 0xFFFFFFFFu  /* the sets grew: their places moved */

/* Note a place a private cache stored into (WC_LOG_ALL: every place). */
static inline void wc_log(word_cache *c, uint32_t place) {
    if (place == WC_LOG_ALL) c->logged = WC_LOG;
    if (c->logged < WC_LOG) c->log[c->logged] = place;
    c->logged++;
}

/* Offer a piece's ids (b[:len], n >= 1) after a miss: to the first level (key: the piece's key
 * there, or NULL: none), else the sets (words: its key there, or NULL: longer than WC_KEY, or no
 * sets), else the long pieces' store. A private cache (its first level a batch's primary's,
 * fixed) offers to its own first level, `near`, instead, asked after the primary's (the
 * batch's end teaches what it holds to the primary), and a piece with a key in the sets to
 * them too: `near` is offered every token the primary's level misses, so its lines turn over
 * within a call, and a merged piece evicted from it before the batch's end was not taught, and
 * merged again at the next call (two threads, 45 MB: 1,100 merges at the fifth call, 860 at
 * the eighth; now 810 and 620; one thread 250 and 130). */
static inline void wc_learn(word_cache *c, const fl_key *key, const wc_key *words,
                            const uint8_t *b, size_t len, const uint32_t *ids, size_t n) {
    first_level *first = c->first.fixed ? &c->near : &c->first;
    ptrdiff_t line = key && first->lines ? fl_offer(first, key, ids, n) : -1;
    if (line >= 0) {
        if (c->log) wc_log(c, (uint32_t)line);
        if (!c->first.fixed || !words) return;
    }
    if (words && c->sets && n <= WC_IDS) {
        uint64_t sets = c->set_mask;
        wc_offer(c, words, ids, n);
        if (c->log) wc_log(c, c->set_mask != sets ? WC_LOG_ALL : WC_LOG_SET | (uint32_t)(words->hash & sets));
    } else if (len > WC_IDS && len <= LS_KEY)
        ls_offer(&c->longs, b, len, words ? words->hash : wc_hash(b, len), ids, n);
}

#endif
