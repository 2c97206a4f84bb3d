/* The first level of the fused pass's cache: one probe of one cache line answers the common
 * piece, a token or a piece of a few tokens.
 *
 * A piece of up to FL_KEY (15) bytes is a 16-byte key: its bytes, zero-padded, with its length
 * in the last byte (so no two pieces share a key, and an empty entry, all zeros, matches none).
 * An entry is the key and up to FL_IDS (4) token indices, or FL_PACKED (6) packed narrower
 * (fl_put: four or five CJK characters, or two emoji, are 5-6 tokens in 15 bytes; two thirds of
 * the short pieces of more than 4 ids of the multilingual sample), 32 bytes; a line of 64 bytes
 * holds two, and a piece's hash names one line, so a lookup reads one line (the table is aligned to
 * lines, and to 2 MiB huge pages when it is that large) and nothing else. When the table is made,
 * each line's first way takes the vocabulary's lowest-index token of up to FL_KEY bytes that
 * hashes there (the lower indices, merged first, are the common ones); the second ways, and
 * first ways left free, take the text's pieces and tokens as the slow path (the vocabulary's
 * table, the word cache, the merge) answers them. The table has a line for every second token
 * at most: small enough to stay in the CPU's cache after it is filled, so a fresh encoder gains
 * too (sizes measured in docs/performance.md).
 *
 * Why an answer is always right: a piece's ids are a function of its bytes alone (the word
 * cache's argument, docs/performance.md), and an entry's key is the piece's bytes in full, its
 * length included: a hash match alone never serves an answer. A token missing from the table
 * (its line went to another, or it was evicted) is found by the slow path, as before. Packed
 * ids are stored only when every index fits its field (fl_fits), so they read back the same.
 *
 * Scan resistance, as the word cache's: a piece takes a free way at once (of its line, else
 * the second way of its pair line, the other 64 bytes of its 128: fl_pair, which the slow path
 * asks after a miss), but evicts only on its second miss, remembered by a doorkeeper of
 * fingerprints, one a line. A hit in the second way swaps it to the first; an admitted piece
 * replaces the second (least recently used).
 *
 * One table is written by one thread at a time (it is part of a word_cache, _word_cache.h, which
 * owns its memory): on hits (the swap) and misses (the offer), with no lock. A batch's threads
 * read one table together through headers of their own marked `fixed` (_word_cache.h's
 * wc_init_private): no swap, no offer, their own counters, so nothing shared is written while
 * they run (docs/performance.md, "The word cache", Threads).
 */
#ifndef STREAMCODEC_FIRST_LEVEL_H
#define STREAMCODEC_FIRST_LEVEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../pieces/_core_lookup.h"

#define FL_KEY 15 /* key bytes (the 16th is the length) */
#define FL_IDS 4  /* token indices an entry holds in a slot each */
#define FL_PACKED 6 /* ... and packed: 5 (4 of them in 24 bits), 6 (5 in 19 bits) */
#define FL_INDEX 0xFFFFFFu /* ids[0]: the first index; its top byte, how many there are */

typedef struct {
    uint64_t k0, k1; /* bytes 0-7; bytes 8-14 and the length in the top byte */
    uint32_t ids[FL_IDS];
} fl_entry;
_Static_assert(sizeof(fl_entry) == 32, "two first-level entries fill a cache line");

typedef struct {
    uint64_t k0, k1, hash;
} fl_key;

typedef struct {
    fl_entry *lines; /* 2 entries a line; NULL: no first level */
    uint32_t *door;  /* a fingerprint a line: pieces missed once */
    int shift;       /* 64 - log2(lines): a line is hash >> shift */
    int fixed;       /* another's table, read only: no swap on a hit, no offer */
    uint64_t hits, misses;
} first_level;

/* The hash of a key's words k0 (bytes 0-7) and k1 (bytes 8-14, the length in the top byte):
 * one multiply (Fibonacci hashing of k0 ^ k1; two multiplies and a shift before, 5 fewer
 * instructions a piece), whose top bits, which depend on every bit of k0 ^ k1, name the line
 * (fl_line); bits 16-47 are the doorkeeper's fingerprint (fl_tag), below the line's bits up to
 * 2^16 lines (more only weakens the fingerprint). k0 ^ k1 is the key itself for a piece of up to
 * 7 bytes (k0's top byte is 0, k1 holds only the length); longer pieces may share it, which only
 * puts them in one line: an answer still needs the whole key (fl_same). */
static inline uint64_t fl_hash(uint64_t k0, uint64_t k1) {
    return (k0 ^ k1) * 0x9e3779b97f4a7c15ull;
}

/* The doorkeeper's fingerprint of a hash (never 0, the empty slot). */
static inline uint32_t fl_tag(uint64_t hash) { return (uint32_t)(hash >> 16) | 1u; }

/* The key of the words k0 and k1 (fl_hash's). */
static inline void fl_key_words(fl_key *k, uint64_t k0, uint64_t k1) {
    k->k0 = k0;
    k->k1 = k1;
    k->hash = fl_hash(k0, k1);
}

/* The key of p[:n] (1 <= n <= FL_KEY; head = sc_head(p, n)): bytes 8 onwards come from one load
 * of the key's last 8 bytes, which lie within it. */
static inline void fl_key_set(fl_key *k, const uint8_t *p, size_t n, uint64_t head) {
    uint64_t rest = 0;
    if (n > 8) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || defined(_M_X64) || \
    defined(_M_ARM64)
        rest = sc_load64(p + n - 8) >> (8 * (16 - n));
#else
        for (size_t i = 8; i < n; i++) rest |= (uint64_t)p[i] << (8 * (i - 8));
#endif
    }
    fl_key_words(k, head, rest | (uint64_t)n << 56);
}

/* The masks of a key's two words by its length n (FL_KEY_MASKS[n]: bytes 0-7 of the key, then
 * bytes 8-14). */
static const uint64_t FL_KEY_MASKS[FL_KEY + 1][2] = {
    {0, 0},
    {0xffull, 0},
    {0xffffull, 0},
    {0xffffffull, 0},
    {0xffffffffull, 0},
    {0xffffffffffull, 0},
    {0xffffffffffffull, 0},
    {0xffffffffffffffull, 0},
    {~0ull, 0},
    {~0ull, 0xffull},
    {~0ull, 0xffffull},
    {~0ull, 0xffffffull},
    {~0ull, 0xffffffffull},
    {~0ull, 0xffffffffffull},
    {~0ull, 0xffffffffffffull},
    {~0ull, 0xffffffffffffffull},
};

/* fl_key_set when p[0:16] may be read whatever n is (1 <= n <= FL_KEY): two loads, each masked
 * to the key's bytes in it by a table row, with no branch on n (a piece's length, which varies
 * piece to piece, mispredicted the two branches of sc_head_padded and fl_key_set). */
static inline void fl_key_set_padded(fl_key *k, const uint8_t *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || defined(_M_X64) || \
    defined(_M_ARM64)
    const uint64_t *mask = FL_KEY_MASKS[n];
    fl_key_words(k, sc_load64(p) & mask[0], (sc_load64(p + 8) & mask[1]) | (uint64_t)n << 56);
#else
    fl_key_set(k, p, n, sc_head(p, n));
#endif
}

static inline fl_entry *fl_line(const first_level *f, const fl_key *k) {
    return f->lines + 2 * (k->hash >> f->shift);
}

static inline int fl_same(const fl_entry *e, const fl_key *k) {
    return e->k0 == k->k0 && e->k1 == k->k1;
}

#if defined(__GNUC__)
#define FL_COLD __attribute__((noinline))
#else
#define FL_COLD
#endif

/* A hit in the second way of a fixed table, left where it is: out of line, so that fl_get
 * inlined in the hit path compiles as it did before fixed tables (inline, it cost a spill: one
 * store more at every first-level hit, 1.3% more instructions a cold count). */
static FL_COLD const fl_entry *fl_second(first_level *f, const fl_entry *line) {
    f->hits++;
    return line + 1;
}

/* The entry of k, or NULL (f has lines). A hit in the second way moves to the first (not in a
 * fixed table, read by other threads too: its hit stays where it is). An empty
 * entry (all zeros) matches no key, whose length byte is not 0: the line is read and compared
 * whether it holds anything or not (a bit a line that said so, asked first, was one more
 * dependent load on every hit, and most lines hold a token). */
static inline const fl_entry *fl_get(first_level *f, const fl_key *k) {
    fl_entry *line = fl_line(f, k);
    if (fl_same(line, k)) {
        f->hits++;
        return line;
    }
    if (fl_same(line + 1, k)) {
        if (f->fixed) return fl_second(f, line);
        fl_entry hit = line[1];
        line[1] = line[0];
        line[0] = hit;
        f->hits++;
        return line;
    }
    f->misses++;
    return NULL;
}

/* The other line of k's 128 bytes (lines >= 2, in pairs): its second way takes a piece whose own
 * line is full (fl_offer), and the slow path asks it after a miss (fl_get_pair). A model of the
 * multilingual sample's pieces found 3,258 of them beyond their line's second way
 * (cl100k_base), 1,184 with the two lines' second ways as one set (docs/performance.md). */
static inline fl_entry *fl_pair(const first_level *f, const fl_key *k) {
    return f->lines + (2 * (k->hash >> f->shift) ^ 2);
}

/* The entry of k in its pair line's second way, or NULL; asked after fl_get missed (its miss is
 * taken back on a hit). */
static inline const fl_entry *fl_get_pair(first_level *f, const fl_key *k) {
    const fl_entry *e = fl_pair(f, k) + 1;
    if (!fl_same(e, k)) return NULL;
    f->hits++;
    f->misses--;
    return e;
}

/* The bits of each index after the first in ids[1..3] of an entry of n > FL_IDS ids. */
static inline unsigned fl_width(size_t n) { return n == 5 ? 24 : 19; }

/* Whether n ids fit an entry: up to FL_IDS, or FL_PACKED whose indices after the first fit
 * fl_width(n) bits (the first has 24, as every index). */
static inline int fl_fits(const uint32_t *ids, size_t n) {
    if (n <= FL_IDS) return 1;
    if (n > FL_PACKED) return 0;
    uint32_t any = 0;
    for (size_t i = 1; i < n; i++) any |= ids[i];
    return any >> fl_width(n) == 0;
}

/* Store k's ids (fl_fits) in e, a way of k's line: the count in ids[0]'s top byte and the first
 * index below it; then up to FL_IDS - 1 indices a slot each, or, for more, the others as one
 * 96-bit little-endian field of fl_width(n) bits each across ids[1..3]. */
static inline void fl_put(fl_entry *e, const fl_key *k, const uint32_t *ids, size_t n) {
    e->k0 = k->k0;
    e->k1 = k->k1;
    e->ids[0] = (uint32_t)n << 24 | ids[0];
    if (n <= FL_IDS) {
        for (size_t i = 1; i < FL_IDS; i++) e->ids[i] = i < n ? ids[i] : 0;
        return;
    }
    uint64_t low = 0, high = 0; /* bits 0-63 and 64-95 of the field */
    for (size_t i = 1; i < n; i++) {
        unsigned at = (unsigned)(i - 1) * fl_width(n);
        if (at < 64) low |= (uint64_t)ids[i] << at;
        if (at + fl_width(n) > 64)
            high |= at < 64 ? (uint64_t)ids[i] >> (64 - at) : (uint64_t)ids[i] << (at - 64);
    }
    e->ids[1] = (uint32_t)low;
    e->ids[2] = (uint32_t)(low >> 32);
    e->ids[3] = (uint32_t)high;
}

/* The ids of an entry of n > FL_IDS (fl_put's field read back) into to[0..n-1]. */
static inline void fl_unpack(const fl_entry *e, size_t n, uint32_t *to) {
    uint64_t low = e->ids[1] | (uint64_t)e->ids[2] << 32, high = e->ids[3];
    unsigned width = fl_width(n);
    to[0] = e->ids[0] & FL_INDEX;
    for (size_t i = 1; i < n; i++) {
        unsigned at = (unsigned)(i - 1) * width;
        uint64_t bits = at >= 64 ? high >> (at - 64) : low >> at | (at ? high << (64 - at) : 0);
        to[i] = (uint32_t)bits & ((1u << width) - 1);
    }
}

/* Store k's ids (fl_fits) in a free way of its line, else in the free second way of its pair
 * line (fl_pair): the line stored in, or -1 (none free). */
static inline ptrdiff_t fl_put_free(first_level *f, const fl_key *k, const uint32_t *ids,
                                    size_t n) {
    fl_entry *line = fl_line(f, k), *pair = fl_pair(f, k);
    if (line[0].k1 == 0 || line[1].k1 == 0) {
        fl_put(line[0].k1 == 0 ? line : line + 1, k, ids, n);
        return (line - f->lines) / 2;
    }
    if (pair[1].k1) return -1;
    fl_put(pair + 1, k, ids, n);
    return (pair - f->lines) / 2;
}

/* Offer k's ids (1 <= n) after a miss: a free way takes them (fl_put_free); a full line only on
 * the second offer the doorkeeper remembers. The line they were stored in, or -1 (ids that do
 * not fit, fl_fits, a first offer to a full line, or a fixed table). */
static inline ptrdiff_t fl_offer(first_level *f, const fl_key *k, const uint32_t *ids, size_t n) {
    if (f->fixed || !fl_fits(ids, n)) return -1;
    ptrdiff_t stored = fl_put_free(f, k, ids, n);
    if (stored >= 0) return stored;
    fl_entry *line = fl_line(f, k);
    uint32_t tag = fl_tag(k->hash), *door = &f->door[k->hash >> f->shift];
    if (*door != tag) {
        *door = tag;
        return -1;
    }
    *door = 0;
    fl_put(line + 1, k, ids, n);
    return (line - f->lines) / 2;
}

/* The bytes of a first level of `lines` lines: entries and doorkeeper. */
static size_t fl_size(size_t lines) { return lines * (2 * sizeof(fl_entry) + sizeof(uint32_t)); }

/* The lines of a first level within `bytes` for a vocabulary of n tokens: a power of two, at
 * most n / 2 rounded up (a line for every second token: measured against a line for every token
 * and more, the smaller table wins cold, where its lines are still in the CPU's cache, and
 * warm alike, docs/performance.md); fewer than 2: none. */
static size_t fl_lines_for(size_t bytes, size_t n) {
    size_t lines = 1;
    while (fl_size(2 * lines) <= bytes && lines < n / 2) lines *= 2;
    return lines < 2 ? 0 : lines;
}

/* Set f up over zeroed memory: lines * 2 entries, lines doorkeeper slots (lines >= 2). */
static void fl_setup(first_level *f, size_t lines, fl_entry *entries, uint32_t *door) {
    int bits = 0;
    while (((size_t)1 << bits) < lines) bits++;
    /* A hash's top bits name its line: bits is at least 1 (lines >= 2), so the shift is < 64. */
    *f = (first_level){entries, door, 64 - bits, 0, 0, 0};
}

/* Fill a table just set up: each line's first way with the lowest-index token of up to FL_KEY
 * bytes that hashes to it (the lower indices, merged first, are the common ones); the second
 * way is left to the text's pieces and the tokens the slow path finds. */
static void fl_fill(first_level *f, const sc_table *t) {
    for (size_t i = 0; i < t->n; i++) {
        size_t n = t->off[i + 1] - t->off[i];
        if (n == 0 || n > FL_KEY) continue;
        const uint8_t *p = t->data + t->off[i];
        fl_key k;
        fl_key_set(&k, p, n, sc_head(p, n));
        fl_entry *line = fl_line(f, &k);
        uint32_t index = (uint32_t)i;
        if (line[0].k1 == 0) fl_put(line, &k, &index, 1);
    }
}

static size_t fl_bytes(const first_level *f) {
    return f->lines ? fl_size((size_t)1 << (64 - f->shift)) : 0;
}

#endif
