/* The lookup of a piece's bytes among a vocabulary's tokens (a dict lookup of the ranks), inline:
 * the core's sc_lookup (_core_tables.c) is this function, and the fused pass
 * (streamcodec/engine/_fused.c) calls it in its loop, where a call through the capsule per
 * piece cost more than the probe.
 *
 * The table is open addressing keyed by the bytes; keys of one and two bytes are read from a
 * direct index instead. A 16-byte slot holds the key's first 12 bytes (its "head", the first 8,
 * and the next 4, zero-padded), its length and its token index, so a key of up to 12 bytes (99%
 * of the tokens that pieces of text are) compares within the slot's cache line: no read of the
 * token's offset and bytes, two more lines that each wait on the one before. A filter (a bit
 * per hash value, set for every token) is asked first, so most keys that are no token are
 * answered without a probe.
 *
 *     const sc_table *t = sc_table_of(v);        // or, from another module, api->table_of(v)
 *     int64_t index = sc_table_lookup(t, p, n, sc_head(p, n));    // -1: not a token
 *
 * A caller that may read 8 bytes from p (a piece inside a longer text) passes
 * sc_head_padded(p, n) instead: one load for the byte loop. Plain C; no Python.
 */
#ifndef STREAMCODEC_CORE_LOOKUP_H
#define STREAMCODEC_CORE_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t head;  /* the key's first 8 bytes, zero-padded (sc_head) */
    uint32_t next;  /* bytes 8 to 11, zero-padded (sc_next4) */
    uint32_t entry; /* (token index + 1) << 8 | length (255: 255 or more); 0: an empty slot */
} sc_slot;

#define SC_MAX_TOKENS ((1u << 24) - 1) /* token indices fit a slot's 24 bits */
#define SC_INLINE 12                   /* key bytes a slot holds */

/* A slot's entry for token index t of len bytes. */
static inline uint32_t sc_entry(uint32_t t, size_t len) {
    return (t + 1) << 8 | (uint32_t)(len < 255 ? len : 255);
}

/* A vocabulary's lookup table: read-only once built, shared by any number of threads. */
typedef struct {
    const sc_slot *slots; /* keys of 3 bytes or more */
    uint64_t mask;        /* slots - 1 (a power of two) */
    /* Keys of one and two bytes: their token index, or UINT32_MAX. Two-byte keys at
     * first << 8 | second, one-byte keys at SC_SHORT_ONE + byte. */
    const uint32_t *short_index;
    const uint8_t *data; /* all token bytes: token i is data[off[i]:off[i + 1]] */
    const size_t *off;
    /* A bit per value of a hash's top bits, set for the hash of every key in `slots`: a clear
     * bit says "no token" from memory small enough for the CPU's cache (sc_table_may_hold). */
    const uint64_t *filter;
    uint64_t filter_mask; /* bits - 1 (a power of two) */
    size_t n;             /* tokens */
} sc_table;

#define SC_SHORT_ONE 65536

static inline uint64_t sc_load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The head of the key p[:n]: its first 8 bytes, zero-padded. Under 8 bytes, from two loads
 * that overlap (4 and 4 bytes, or 2 and 1), not a byte loop, whose exit (after a number of
 * bytes that varies key to key) was mispredicted about once a key: a merge's pairs. */
static inline uint64_t sc_head(const uint8_t *p, size_t n) {
    if (n >= 8) return sc_load64(p);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || defined(_M_X64) || \
    defined(_M_ARM64)
    if (n >= 4) {
        uint32_t first, last;
        memcpy(&first, p, 4);
        memcpy(&last, p + n - 4, 4); /* bytes n-4..n-1: those before 4 are first's too */
        return first | (uint64_t)last << (8 * (n - 4));
    }
    if (n >= 2) {
        uint16_t first;
        memcpy(&first, p, 2);
        return first | (uint64_t)p[n - 1] << (8 * (n - 1));
    }
    return n ? p[0] : 0;
#else
    uint64_t head = 0;
    for (size_t i = 0; i < n; i++) head |= (uint64_t)p[i] << (8 * i);
    return head;
#endif
}

/* sc_head when p[0:8] may be read whatever n is: one load, masked (on a big-endian machine the
 * load's byte order differs, so it falls back to sc_head). */
static inline uint64_t sc_head_padded(const uint8_t *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || defined(_M_X64) || \
    defined(_M_ARM64)
    uint64_t word = sc_load64(p);
    return n >= 8 ? word : word & (~0ull >> (64 - 8 * n)); /* n >= 1 */
#else
    return sc_head(p, n);
#endif
}

/* Bytes 8 to 11 of the key p[:n], zero-padded (0 when n <= 8). */
static inline uint32_t sc_next4(const uint8_t *p, size_t n) {
    if (n <= 8) return 0;
    uint32_t word;
    if (n >= 12) {
        memcpy(&word, p + 8, 4);
        return word;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || defined(_M_X64) || \
    defined(_M_ARM64)
    memcpy(&word, p + n - 4, 4); /* bytes n-4..n-1 (n > 8: within the key); drop those before 8 */
    return word >> (8 * (12 - n));
#else
    word = 0;
    for (size_t i = 8; i < n; i++) word |= (uint32_t)p[i] << (8 * (i - 8));
    return word;
#endif
}

/* The hash of a key from its head and, past 8 bytes, the rest in 8-byte words (the last one
 * overlapping). */
static inline uint64_t sc_hash(const uint8_t *p, size_t n, uint64_t head) {
    uint64_t h = (head ^ ((uint64_t)n * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
    size_t i = 8;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ sc_load64(p + i)) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    if (i < n) {
        h = (h ^ sc_load64(p + n - 8)) * 0x94d049bb133111ebull;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    return h ^ h >> 32;
}

/* Whether a key of 3 bytes or more whose sc_hash is `hash` may be in `slots` (0: it is not).
 * Asked before every probe: half of a merge's lookups and, in other scripts, many pieces of text
 * are no token, and the filter answers them from the CPU's cache. */
static inline int sc_table_may_hold(const sc_table *t, uint64_t hash) {
    uint64_t bit = (hash >> 32) & t->filter_mask;
    return (int)(t->filter[bit >> 6] >> (bit & 63) & 1);
}

/* The index of the token of 3 bytes or more whose bytes are p[:n] (head = sc_head(p, n),
 * hash = sc_hash(p, n, head)), or -1. */
static inline int64_t sc_table_find(const sc_table *t, const uint8_t *p, size_t n, uint64_t head,
                                    uint64_t hash) {
    uint32_t next = sc_next4(p, n), len = (uint32_t)(n < 255 ? n : 255);
    for (uint64_t i = hash & t->mask;; i = (i + 1) & t->mask) {
        const sc_slot *s = &t->slots[i];
        if (!s->entry) return -1;
        if (s->head != head || s->next != next || (s->entry & 255) != len) continue;
        uint32_t index = (s->entry >> 8) - 1;
        if (n <= SC_INLINE) return index;
        /* Past the slot's bytes: the token's own, its length in full (255 means "255 or more"). */
        if (t->off[index + 1] - t->off[index] == n &&
            memcmp(t->data + t->off[index] + SC_INLINE, p + SC_INLINE, n - SC_INLINE) == 0)
            return index;
    }
}

/* The hash sc_table_lookup needs for p[:n] (head = sc_head(p, n)): sc_hash's, none for 1 or 2
 * bytes (their tokens are in short_index). */
static inline uint64_t sc_table_hash(const uint8_t *p, size_t n, uint64_t head) {
    return n > 2 ? sc_hash(p, n, head) : 0;
}

/* Ask for (prefetch) the filter word and the first slot of the key whose sc_table_hash is
 * `hash`, so that lookups known together wait on memory together (the rank merge's two new
 * pairs, which otherwise wait one after the other). */
static inline void sc_table_prefetch(const sc_table *t, uint64_t hash) {
#if defined(__GNUC__)
    __builtin_prefetch(&t->filter[((hash >> 32) & t->filter_mask) >> 6]);
    __builtin_prefetch(&t->slots[hash & t->mask]);
#else
    (void)t;
    (void)hash;
#endif
}

/* The index of the token whose bytes are p[:n] (head = sc_head(p, n), hash = sc_table_hash(p, n,
 * head)), or -1. */
static inline int64_t sc_table_lookup_hashed(const sc_table *t, const uint8_t *p, size_t n,
                                             uint64_t head, uint64_t hash) {
    if (n - 1 < 2) { /* n is 1 or 2 */
        uint32_t index = t->short_index[n == 1 ? SC_SHORT_ONE + (uint32_t)p[0]
                                                : (uint32_t)p[0] << 8 | p[1]];
        return index == UINT32_MAX ? -1 : (int64_t)index;
    }
    return sc_table_may_hold(t, hash) ? sc_table_find(t, p, n, head, hash) : -1;
}

/* The index of the token whose bytes are p[:n] (head = sc_head(p, n)), or -1. */
static inline int64_t sc_table_lookup(const sc_table *t, const uint8_t *p, size_t n,
                                      uint64_t head) {
    return sc_table_lookup_hashed(t, p, n, head, sc_table_hash(p, n, head));
}

#endif
