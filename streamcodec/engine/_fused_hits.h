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
 * Must equal fused_piece for each piece in order (the reference: each piece's ids appended, or
 * counted, as fused_emit_entry does); a first-way hit is answered from the same entry, the key
 * and line computed as fl_key_set_padded and fl_line compute them.
 */
#ifndef STREAMCODEC_FUSED_HITS_H
#define STREAMCODEC_FUSED_HITS_H

#include "../text/_scan_block.h"

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

/* The pieces of the common block from s[*at], their ends `ends` (bit k: a piece ends at
 * *at + k; sc_walk's), one output, the first level there (lines): *at left at the last end.
 * SC_OK, SC_NOMEM or FUSED_LIMIT. */
static inline __attribute__((always_inline)) int
fused_block(fused_pass *p, const uint8_t *s, Py_ssize_t *at, uint64_t ends, const int counting,
            const int fixed) {
    first_level *f = &p->cache->first;
    const fl_entry *lines = f->lines;
    const int shift = f->shift;
    const Py_ssize_t base = *at;
    Py_ssize_t i = base;
    uint64_t count = 0, hits = 0;
    uint32_t *to = NULL;
    int status = SC_OK;
#ifdef SC_SIMD_BLOCKS
    const __m128i index_mask = _mm_setr_epi32((int)FL_INDEX, -1, -1, -1);
#endif
    if (!counting) {
        if (fused_room(p, FUSED_BLOCK_IDS) != SC_OK) return SC_NOMEM;
        to = p->out.ids + p->out.len;
    }
    while (ends) {
        Py_ssize_t e = base + __builtin_ctzll(ends);
        ends &= ends - 1;
        const uint8_t *b = s + i;
        size_t len = (size_t)(e - i);
        i = e;
        if (len <= FL_KEY) {
            const uint64_t *mask = FL_KEY_MASKS[len];
            uint64_t k0 = sc_load64(b) & mask[0];
            uint64_t k1 = (sc_load64(b + 8) & mask[1]) | (uint64_t)len << 56;
            const fl_entry *line = lines + 2 * (fl_hash(k0, k1) >> shift);
            if ((line->k0 == k0 && line->k1 == k1) ||
                (fixed && (++line)->k0 == k0 && line->k1 == k1)) {
                uint32_t first = line->ids[0];
                size_t n = first >> 24;
                hits++;
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
        }
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
    f->hits += hits;
    if (counting) {
        p->count += count;
        if (status == SC_OK && p->count > p->limit) status = FUSED_LIMIT;
    } else if (status == SC_OK) {
        p->out.len = (size_t)(to - p->out.ids);
    }
    *at = i;
    return status;
}

/* A fixed first level (a batch's primary, read by its threads together, _first_level.h) swaps
 * no hit forward, so an entry in a line's second way would go out of line at every use (1.1
 * million a warm call of 45 MB on two threads, about 50 M instructions); its loop asks the
 * second way too. One thread's level keeps the loop it had (its swap brings a hit forward). */
static int fused_block_count(fused_pass *p, const uint8_t *s, Py_ssize_t *at, uint64_t ends) {
    return p->cache->first.fixed ? fused_block(p, s, at, ends, 1, 1)
                                 : fused_block(p, s, at, ends, 1, 0);
}

static int fused_block_ids(fused_pass *p, const uint8_t *s, Py_ssize_t *at, uint64_t ends) {
    return p->cache->first.fixed ? fused_block(p, s, at, ends, 0, 1)
                                 : fused_block(p, s, at, ends, 0, 0);
}

#endif
