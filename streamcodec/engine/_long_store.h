/* The word cache's store for long pieces: a piece of up to LS_KEY bytes with any number of
 * token indices, in entries of its own length.
 *
 * The word cache's sets hold a key of up to 56 bytes and 16 ids in a fixed entry; text in
 * scripts past Latin has pieces with more (seven CJK characters or emoji are 21-28 bytes and
 * 14-28 tokens), and each was merged again on every run: 1% of the pieces of the multilingual
 * sample, a ninth of its tokens, 11-14% of a warm count of it (docs/performance.md). Here an
 * entry is a record in an arena, as long as its key and ids need:
 *
 *   - the arena, a ring of LS_SEGMENT-byte segments: records are appended to the current
 *     segment; when one does not fit, the next segment is cleared (each of its records is
 *     dropped from the index) and written from its start. A record never straddles two segments,
 *     and the oldest segment is the one reused: first in, first out.
 *   - the index: buckets of LS_WAYS slots (a cache line), each slot a tag of the key's hash and
 *     the record's place; a full bucket gives up the slot of its oldest record (the record stays
 *     in the arena, unreachable, until its segment is cleared).
 *   - scan-resistant as the sets are: once the arena has been round once (every record stored
 *     now replaces another), a piece is stored only on its second miss, remembered by a
 *     doorkeeper of fingerprints, one a slot.
 *   - bounded in bytes: index, doorkeeper, segments' fill and arena within the share of the
 *     cache's `bytes` it is given, allocated when the first long piece is stored (prose and
 *     code, which have none, never pay for it).
 *
 * Why an answer is always right: a piece's ids are a function of its bytes alone (the word
 * cache's argument); a record holds its piece's bytes in full and is served only after they
 * and the length compare equal, and a slot is cleared before its record's segment is written
 * again, so a slot names a live record or nothing. One store is written by one thread at a time
 * (it is part of a word_cache, _word_cache.h, which includes this after its allocators); a
 * batch's threads read the primary's together with ls_find, which writes nothing.
 */
#ifndef STREAMCODEC_LONG_STORE_H
#define STREAMCODEC_LONG_STORE_H

#include <stdint.h>
#include <string.h>

#define LS_KEY 256       /* key bytes at most (engine.cache.MAX_KEY_LENGTH on the pure path) */
#define LS_WAYS 8        /* slots a bucket: one cache line */
#define LS_SEGMENT 4096  /* arena bytes a segment: the largest record (8 + 256 + 1024) fits */
#define LS_SEGMENT_WORDS (LS_SEGMENT / 8)
#define LS_SLOT_BYTES 64 /* the index has a slot for every 64 arena bytes (records of the
                           * multilingual sample are ~130: half the slots stay free)... */
#define LS_BUCKET_BYTES (LS_WAYS * (sizeof(ls_slot) + sizeof(uint32_t))) /* ...and a door */

typedef struct {
    uint32_t tag; /* hash bits, never 0; 0 marks an empty slot */
    uint32_t at;  /* the record's first 8-byte word in the arena */
} ls_slot;

/* A record's first word; then the key's bytes (len, in whole words), then the ids (two a word). */
typedef struct {
    uint32_t bucket; /* the index's bucket of its slot */
    uint16_t len;    /* key bytes */
    uint16_t n;      /* token indices */
} ls_record;
_Static_assert(sizeof(ls_record) == 8, "a record's header is one word");

typedef struct {
    uint64_t *arena;  /* segments * LS_SEGMENT_WORDS words; NULL until the first record */
    ls_slot *slots;   /* buckets * LS_WAYS */
    uint32_t *door;   /* a fingerprint a slot: pieces missed once */
    uint32_t *fill;   /* words written in each segment */
    size_t segments;  /* 0: no store (its share was too small) */
    size_t segment;   /* the segment being written */
    uint64_t bucket_mask;
    int round;        /* the arena has been round once: a record now replaces another */
    uint64_t hits;
} long_store;

/* The bytes of a store of `buckets` buckets and `segments` segments. */
static size_t ls_size(size_t buckets, size_t segments) {
    return buckets * LS_BUCKET_BYTES + segments * (LS_SEGMENT + sizeof(uint32_t));
}

/* The most a store takes, whatever its share of the cache's bound: its index and segments' fill
 * are zeroed when its first record is stored (a ninth of its bytes), and a record's place is a
 * 32-bit word number (a 32 GB arena at most). A share of 128 GB (cache_bytes=2**40) zeroed 12 GB
 * at once for each thread of a batch that met a long piece (22 GB resident on four), and its
 * places would have wrapped. 64 MiB: the share of a 512 MiB cache (4 MiB by default). */
#define LS_MOST ((size_t)64 << 20)

/* Plan a store within `bytes` (at most LS_MOST; nothing allocated yet): a bucket for every
 * LS_WAYS * LS_SLOT_BYTES arena bytes, a power of two; too small for a segment and a bucket:
 * none. */
static void ls_plan(long_store *s, size_t bytes) {
    memset(s, 0, sizeof *s);
    bytes = bytes < LS_MOST ? bytes : LS_MOST;
    size_t buckets = 1;
    while (ls_size(2 * buckets, 2 * buckets * LS_WAYS * LS_SLOT_BYTES / LS_SEGMENT) <= bytes)
        buckets *= 2;
    if (ls_size(buckets, 1) > bytes) return;
    s->segments = (bytes - buckets * LS_BUCKET_BYTES) / (LS_SEGMENT + sizeof(uint32_t));
    s->bucket_mask = buckets - 1;
}

/* The bytes a store holds now (0 until its first record). */
static size_t ls_bytes(const long_store *s) {
    return s->arena ? ls_size((size_t)s->bucket_mask + 1, s->segments) : 0;
}

static void ls_free(long_store *s) {
    wc_aligned_free(s->arena);
    wc_aligned_free(s->slots);
    wc_aligned_free(s->door);
    wc_aligned_free(s->fill);
    s->arena = NULL;
    s->slots = NULL;
    s->door = NULL;
    s->fill = NULL;
}

/* Allocate a planned store: a zeroed index, and the arena, written before it is read, so its
 * pages are touched as it fills; small pages, as it is written in order: a fresh huge page is
 * zeroed (or compacted for) in the encode that first touches it, 1-2 ms of a first encode.
 * 0, or -1 out of memory (the store stays empty). */
static int ls_alloc(long_store *s) {
    size_t buckets = (size_t)s->bucket_mask + 1;
    if ((s->slots = wc_aligned_zeroed(buckets * LS_WAYS * sizeof *s->slots)) &&
        (s->door = wc_aligned_zeroed(buckets * LS_WAYS * sizeof *s->door)) &&
        (s->fill = wc_aligned_zeroed(s->segments * sizeof *s->fill)) &&
        (s->arena = wc_aligned(s->segments * LS_SEGMENT, WC_LINE)))
        return 0; /* each asked only once the one before it was given: a failure costs nothing */
    ls_free(s);
    return -1;
}

static inline const ls_record *ls_at(const long_store *s, uint32_t at) {
    return (const ls_record *)(s->arena + at);
}

/* A record's ids. */
static inline const uint32_t *ls_ids(const ls_record *r) {
    return (const uint32_t *)((const uint64_t *)(r + 1) + (r->len + 7) / 8);
}

/* The words of a record of a len-byte key and n ids: its header, the key, the ids. */
static inline uint32_t ls_words(size_t len, size_t n) {
    return (uint32_t)(1 + (len + 7) / 8 + (n + 1) / 2);
}

static inline uint32_t ls_tag(uint64_t hash) { return (uint32_t)(hash >> 32) | 1u; }

/* The record of the piece b[:len] (hash: wc_hash's of it), or NULL: s read, not written (a
 * batch's threads read the primary cache's store together). */
static inline const ls_record *ls_find(const long_store *s, const uint8_t *b, size_t len,
                                       uint64_t hash) {
    if (!s->arena) return NULL;
    const ls_slot *bucket = s->slots + (hash & s->bucket_mask) * LS_WAYS;
    uint32_t tag = ls_tag(hash);
    for (int w = 0; w < LS_WAYS; w++) {
        if (bucket[w].tag != tag) continue;
        const ls_record *r = ls_at(s, bucket[w].at);
        if (r->len == len && memcmp(r + 1, b, len) == 0) return r;
    }
    return NULL;
}

/* ls_find, a hit counted. */
static inline const ls_record *ls_get(long_store *s, const uint8_t *b, size_t len,
                                      uint64_t hash) {
    const ls_record *r = ls_find(s, b, len, hash);
    s->hits += r != NULL;
    return r;
}

/* Clear segment k for writing: each of its records leaves the index (its slot, if the bucket
 * still names it). */
static void ls_clear(long_store *s, size_t k) {
    uint32_t at = (uint32_t)(k * LS_SEGMENT_WORDS), end = at + s->fill[k];
    while (at < end) {
        const ls_record *r = ls_at(s, at);
        ls_slot *bucket = s->slots + (size_t)r->bucket * LS_WAYS;
        for (int w = 0; w < LS_WAYS; w++)
            if (bucket[w].tag && bucket[w].at == at) bucket[w].tag = 0;
        at += ls_words(r->len, r->n);
    }
    s->fill[k] = 0;
}

/* Offer the piece b[:len]'s ids (len <= LS_KEY, n >= 1; hash: wc_hash's) after a miss: stored,
 * unless the arena has been round once and the doorkeeper does not remember the piece (then
 * it is remembered). Out of memory: not stored. */
static void ls_offer(long_store *s, const uint8_t *b, size_t len, uint64_t hash,
                     const uint32_t *ids, size_t n) {
    if (!s->segments || (!s->arena && ls_alloc(s) < 0)) return;
    size_t index = (size_t)(hash & s->bucket_mask);
    uint32_t tag = ls_tag(hash);
    uint32_t *door = &s->door[(hash >> 16) & ((s->bucket_mask + 1) * LS_WAYS - 1)];
    if (s->round && *door != tag) {
        *door = tag;
        return;
    }
    if (*door == tag) *door = 0;
    size_t words = ls_words(len, n);
    if (s->fill[s->segment] + words > LS_SEGMENT_WORDS) {
        s->segment = (s->segment + 1) % s->segments;
        s->round |= s->segment == 0;
        ls_clear(s, s->segment);
    }
    uint32_t at = (uint32_t)(s->segment * LS_SEGMENT_WORDS + s->fill[s->segment]);
    s->fill[s->segment] += (uint32_t)words;
    /* A free slot, else the one of the oldest record (the farthest behind the writing place). */
    ls_slot *bucket = s->slots + index * LS_WAYS, *slot = bucket;
    uint64_t ring = (uint64_t)s->segments * LS_SEGMENT_WORDS, oldest = 0;
    for (int w = 0; w < LS_WAYS; w++) {
        if (!bucket[w].tag) {
            slot = &bucket[w];
            break;
        }
        uint64_t age = (at + ring - bucket[w].at) % ring;
        if (age > oldest) {
            oldest = age;
            slot = &bucket[w];
        }
    }
    uint64_t *record = s->arena + at;
    *(ls_record *)record = (ls_record){(uint32_t)index, (uint16_t)len, (uint16_t)n};
    memcpy(record + 1, b, len);
    memcpy(record + 1 + (len + 7) / 8, ids, n * sizeof *ids);
    *slot = (ls_slot){tag, at};
}

#endif
