/* The fused pass's common block: a 1-byte string's 64 code points whose piece ends the block
 * step settled (text/_scan_block.h), every piece before the pass's stop, all ASCII (read in
 * place) and with 16 bytes of text from its start. Nearly every piece of ASCII text is cut in
 * such a block, and most are first-level hits (_first_level.h): this loop is the warm pass.
 *
 * One loop, compiled once for each output (fused_block_count, fused_block_ids: the output is a
 * constant, not a branch a piece). Per piece it builds the first-level key in registers (two
 * masked loads), hashes it, compares the line's first way (a fixed level's: both ways, see
 * fused_block_count) and, on a hit, adds the entry's count (count: to a register) or writes
 * its four id slots straight into the output (ids), with no
 * check of room or of the limit: the room for the block's worst case (every piece FL_PACKED
 * ids) is made before it, and the count's limit is asked after it (a count "stops once past
 * its limit": past it by at most one block). Any other piece (a second-way hit, a miss, a
 * piece of more than FL_KEY bytes) goes to fused_piece out of line, with the output's state
 * handed back to fused_pass first and taken again after.
 *
 * The line of a piece met seldom is not in the CPU's cache, and its wait is most of a warm piece
 * of code (docs/performance.md). So the loop can also take keys made some blocks before
 * (fused_probe, which asks for each line then: fused_blocks walks the common blocks ahead), and
 * which of the two loops runs is chosen by timing them (fused_choose): asking ahead pays where
 * the lines are far, and costs where they are near.
 *
 * Must equal fused_piece for each piece in order (the reference: each piece's ids appended, or
 * counted, as fused_emit_entry does); a first-way hit is answered from the same entry, the key
 * and line computed as fl_key_set_padded and fl_line compute them.
 */
#ifndef STREAMCODEC_FUSED_HITS_H
#define STREAMCODEC_FUSED_HITS_H

#include "../text/_scan_block.h"
#include "../text/_scan_utf8.h"

#define FUSED_BLOCK_IDS (SC_BLOCK * FL_PACKED) /* the most ids one block's hits write */

/* Room for `n` more ids in p->out (the capsule's call made only to grow). */
static inline int fused_room(fused_pass *p, size_t n) {
    if (p->out.cap - p->out.len >= n) return SC_OK;
    return p->api->ids_reserve(&p->out, n);
}

/* fused_piece with 16 bytes readable from b, out of line: the common block's rare piece. */
static FUSED_COLD int fused_piece_padded(fused_pass *p, const uint8_t *b, size_t len) {
    return fused_piece(p, b, len, 1);
}

/* The first-level keys and lines of a block's pieces, made some blocks before the pieces are
 * looked up (fused_probe): `line` is the line's address (64-byte aligned) with the piece's start
 * in the block (0-63) in its low bits; the piece's length is k1's top byte. */
typedef struct {
    uint64_t k0[SC_BLOCK], k1[SC_BLOCK];
    uintptr_t line[SC_BLOCK];
    size_t pieces;
} fused_keys;

#define FUSED_LINE_BITS ((uintptr_t)63)

/* The keys and lines of a block's pieces (ends from `block`, sc_walk's), each line asked for
 * (prefetched) now. The same key and line as fl_key_set_padded and fl_line make; a piece of
 * more than FL_KEY bytes (at most SC_BLOCK) gets a key no entry has (its length byte past
 * FL_KEY) and asks for some line, harmlessly. */
static inline __attribute__((always_inline)) void
fused_probe(const fl_entry *lines, int shift, const uint8_t *block, uint64_t ends, fused_keys *to) {
    size_t from = 0, j = 0;
    for (; ends; j++) {
        size_t e = (size_t)__builtin_ctzll(ends);
        ends &= ends - 1;
        size_t len = e - from;
        const uint8_t *b = block + from;
        const uint64_t *mask = FL_KEY_MASKS[len & FL_KEY];
        uint64_t k0 = sc_load64(b) & mask[0];
        uint64_t k1 = (sc_load64(b + 8) & mask[1]) | (uint64_t)len << 56;
        const fl_entry *line = lines + 2 * (fl_hash(k0, k1) >> shift);
        __builtin_prefetch(line);
        to->k0[j] = k0;
        to->k1[j] = k1;
        to->line[j] = (uintptr_t)line | from;
        from = e;
    }
    to->pieces = j;
}

/* The pieces of the common block from s[*at], one output, the first level there (lines): *at
 * left at the last end. SC_OK, SC_NOMEM or FUSED_LIMIT. The pieces are `ends` (bit k: a piece
 * ends at *at + k; sc_walk's), their keys made here, or (`keyed`) `keys`, made by fused_probe
 * some blocks before. */
static inline __attribute__((always_inline)) int
fused_block(fused_pass *p, const uint8_t *s, Py_ssize_t *at, uint64_t ends, const fused_keys *keys,
            const int counting, const int fixed, const int keyed) {
    first_level *f = &p->cache->first;
    const fl_entry *lines = f->lines;
    const int shift = f->shift;
    const Py_ssize_t base = *at;
    Py_ssize_t i = base;
    size_t j = 0, pieces = keyed ? keys->pieces : 0;
    /* keyed: the pieces that missed are counted, not the hits (j less them): one add a miss,
     * not one a hit, which the loop kept in memory */
    uint64_t count = 0, hits = 0, missed = 0;
    uint32_t *to = NULL;
    int status = SC_OK;
#ifdef SC_SIMD_BLOCKS
    const __m128i index_mask = _mm_setr_epi32((int)FL_INDEX, -1, -1, -1);
#endif
    if (!counting) {
        if (fused_room(p, FUSED_BLOCK_IDS) != SC_OK) return SC_NOMEM;
        to = p->out.ids + p->out.len;
    }
    while (keyed ? j < pieces : ends != 0) {
        const uint8_t *b;
        size_t len;
        uint64_t k0, k1;
        const fl_entry *line;
        if (keyed) {
            k0 = keys->k0[j];
            k1 = keys->k1[j];
            line = (const fl_entry *)(keys->line[j] & ~FUSED_LINE_BITS);
            j++;
        } else {
            Py_ssize_t e = base + __builtin_ctzll(ends);
            ends &= ends - 1;
            b = s + i;
            len = (size_t)(e - i);
            i = e;
            if (len > FL_KEY) goto slow;
            const uint64_t *mask = FL_KEY_MASKS[len];
            k0 = sc_load64(b) & mask[0];
            k1 = (sc_load64(b + 8) & mask[1]) | (uint64_t)len << 56;
            line = lines + 2 * (fl_hash(k0, k1) >> shift);
        }
        if ((line->k0 == k0 && line->k1 == k1) ||
            (fixed && (++line)->k0 == k0 && line->k1 == k1)) {
            uint32_t first = line->ids[0];
            size_t n = first >> 24;
            if (!keyed) hits++;
            if (counting) {
                count += n;
            } else {
                if (n > FL_IDS) {
                    fl_unpack(line, n, to);
                } else {
#ifdef SC_SIMD_BLOCKS
                    __m128i ids = _mm_loadu_si128((const __m128i *)line->ids);
                    _mm_storeu_si128((__m128i *)to, _mm_and_si128(ids, index_mask));
#else
                    to[0] = first & FL_INDEX;
                    to[1] = line->ids[1];
                    to[2] = line->ids[2];
                    to[3] = line->ids[3];
#endif
                }
                to += n;
            }
            continue;
        }
        if (keyed) {
            b = s + base + (keys->line[j - 1] & FUSED_LINE_BITS);
            len = (size_t)(k1 >> 56);
        }
        if (keyed) missed++;
    slow:
        if (counting) {
            p->count += count;
            count = 0;
        } else {
            p->out.len = (size_t)(to - p->out.ids);
        }
        status = fused_piece_padded(p, b, len);
        if (status != SC_OK) break;
        if (!counting) {
            if (fused_room(p, FUSED_BLOCK_IDS) != SC_OK) {
                status = SC_NOMEM;
                break;
            }
            to = p->out.ids + p->out.len;
        }
    }
    f->hits += keyed ? j - missed : hits;
    if (counting) {
        p->count += count;
        if (status == SC_OK && p->count > p->limit) status = FUSED_LIMIT;
    } else if (status == SC_OK) {
        p->out.len = (size_t)(to - p->out.ids);
    }
    if (keyed && j) i = base + (Py_ssize_t)((keys->line[j - 1] & FUSED_LINE_BITS) + (keys->k1[j - 1] >> 56));
    *at = i;
    return status;
}

/* A fixed first level (a batch's primary, read by its threads together, _first_level.h) swaps
 * no hit forward, so an entry in a line's second way would go out of line at every use (1.1
 * million a warm call of 45 MB on two threads, about 50 M instructions); its loop asks the
 * second way too. One thread's level keeps the loop it had (its swap brings a hit forward).
 * The loops of each output, for pieces keyed here or by fused_probe. */
#define FUSED_BLOCK_LOOPS(name, counting, keyed)                                                \
    static int name(fused_pass *p, const uint8_t *s, Py_ssize_t *at, uint64_t ends,             \
                    const fused_keys *keys) {                                                   \
        return p->cache->first.fixed ? fused_block(p, s, at, ends, keys, counting, 1, keyed)    \
                                     : fused_block(p, s, at, ends, keys, counting, 0, keyed);   \
    }
FUSED_BLOCK_LOOPS(fused_block_count, 1, 0)
FUSED_BLOCK_LOOPS(fused_block_ids, 0, 0)
FUSED_BLOCK_LOOPS(fused_keyed_count, 1, 1)
FUSED_BLOCK_LOOPS(fused_keyed_ids, 0, 1)

/* Blocks walked ahead of the one looked up: the first-level lines of a block's pieces are asked
 * for FUSED_AHEAD - 1 blocks, some 30-40 pieces, before they are read. */
#define FUSED_AHEAD 4

/* The common block walked at *at (w, its pieces' ends), and up to `budget` - 1 common blocks
 * after it, each walked FUSED_AHEAD - 1 blocks before its pieces are looked up and its lines
 * asked for then (fused_probe): the out-of-order window (some ten pieces) is too short to hide
 * the wait for a line that is not in the CPU's cache. The walks are the ones K(fused_units)
 * would make (the same starts and `past`, the next block from the last piece end of the one
 * before), made earlier; *at and *past are left as it would leave them after the last block
 * looked up, *budget less the blocks looked up. */
static inline __attribute__((always_inline)) int
fused_blocks(fused_pass *p, const uint8_t *s, Py_ssize_t *at, Py_ssize_t *past, const sc_walk *w,
             const sc_pattern *shape, Py_ssize_t stop, Py_ssize_t n, int *budget, const int utf8) {
    const fl_entry *lines = p->cache->first.lines;
    const int shift = p->cache->first.shift;
    sc_walk ring[FUSED_AHEAD];
    fused_keys keys[FUSED_AHEAD];
    unsigned head = 0, queued = 1;
    int more = 1, status, walked = 1;
    ring[0] = *w;
    fused_probe(lines, shift, s + *at, w->ends, &keys[0]);
    Py_ssize_t next = w->ends ? w->base + 63 - __builtin_clzll(w->ends) : *at;
    Py_ssize_t after = sc_walk_past(w, next);
    do {
        while (more && queued < FUSED_AHEAD) {
            unsigned slot = (head + queued) % FUSED_AHEAD;
            sc_walk *ahead = &ring[slot];
            if (walked >= *budget ||
                !(next + SC_BLOCK <= stop && next + SC_BLOCK + 16 <= n &&
                  (utf8 ? sc_walk_start_utf8(ahead, shape, s, next, after, n)
                        : sc_walk_start(ahead, shape, s, 1, next, after, n)) &&
                  ahead->ends)) {
                more = 0;
                break;
            }
            fused_probe(lines, shift, s + next, ahead->ends, &keys[slot]);
            queued++;
            walked++;
            next = ahead->base + 63 - __builtin_clzll(ahead->ends);
            after = sc_walk_past(ahead, next);
        }
        const sc_walk *walk = &ring[head];
        status = p->counting ? fused_keyed_count(p, s, at, 0, &keys[head])
                             : fused_keyed_ids(p, s, at, 0, &keys[head]);
        *past = sc_walk_past(walk, *at);
        head = (head + 1) % FUSED_AHEAD;
        --*budget;
    } while (--queued && status == SC_OK);
    return status;
}

/* Which loop takes the common blocks, chosen by timing them (fused_choose): the lines asked for
 * ahead pay where they are not in the CPU's cache (a text of many distinct pieces, a machine
 * whose other work fills the cache: 1.13-1.47x), and cost where they are (a quiet machine's
 * prose: 0.87-0.92x): docs/performance.md. Each round, FUSED_TRIALS epochs of FUSED_EPOCH
 * common blocks try the two loops in turn, and the rest of the round's FUSED_ROUND epochs use
 * the one whose faster trial was faster. fused_ahead_mode (the module's ahead()): -1 this
 * choice, 0 or 1 that loop always (tests). */
#define FUSED_EPOCH 256
#define FUSED_TRIALS 4
#define FUSED_ROUND 32
static int fused_ahead_mode = -1;

#if defined(__x86_64__) && defined(__GNUC__)
#include <x86intrin.h>
#define FUSED_CLOCK() __rdtsc()
#endif

/* At an epoch's end (p->left spent): its time to its loop's trials, the next epoch's loop. */
static FUSED_COLD void fused_choose(fused_pass *p) {
    p->left = FUSED_EPOCH;
#ifdef FUSED_CLOCK
    uint64_t now = FUSED_CLOCK();
    unsigned turn = p->turn++ % FUSED_ROUND;
    if (p->since && turn >= 1 && turn <= FUSED_TRIALS) { /* the epoch that ended was a trial */
        uint64_t took = now - p->since, *best = &p->best[p->ahead];
        *best = *best && *best < took ? *best : took;
    }
    if (turn < FUSED_TRIALS) {
        if (turn == 0) p->best[0] = p->best[1] = 0;
        p->ahead = (int)(turn & 1);
    } else if (turn == FUSED_TRIALS) {
        p->ahead = p->best[1] < p->best[0];
    }
    p->since = now;
#else
    p->ahead = 0;
#endif
    if (fused_ahead_mode >= 0) p->ahead = fused_ahead_mode;
}

/* The common block walked at *at (w), and, with the lines asked for ahead, the common blocks
 * after it: the loop of the pass's output, and of this epoch (fused_choose). */
static inline __attribute__((always_inline)) int fused_common(fused_pass *p, const uint8_t *s, Py_ssize_t *at, Py_ssize_t *past,
                               const sc_walk *w, const sc_pattern *shape, Py_ssize_t stop,
                               Py_ssize_t n, const int utf8) {
    if (p->left <= 0) fused_choose(p);
    if (p->ahead) return fused_blocks(p, s, at, past, w, shape, stop, n, &p->left, utf8);
    p->left--;
    int status = p->counting ? fused_block_count(p, s, at, w->ends, NULL)
                             : fused_block_ids(p, s, at, w->ends, NULL);
    *past = sc_walk_past(w, *at);
    return status;
}

#endif
