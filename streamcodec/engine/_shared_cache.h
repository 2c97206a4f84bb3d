/* One word cache for a batch's threads and for calls at once: the primary, read by all and
 * written by none while they run, and a private cache for each thread, whose misses it learns.
 *
 * N threads, each with a word cache of its own, held N copies of the same common words (each
 * learned N times: N times the misses in a fresh process) and N first levels of the vocabulary
 * (3-6 MB each) in one shared L3: two threads on two cores scaled 1.68x, four small caches 2.0x
 * (docs/performance.md, all cores). Here they share the encoder's one cache:
 *
 *   - a private cache's `first` is a header of the primary's first level marked fixed (its lines
 *     shared, its counters the thread's): a hit there does not swap ways, a miss is not offered
 *     to it (_first_level.h); the primary's sets and long store are read with wc_peek and
 *     ls_find, which write nothing;
 *   - what the primary lacks, the thread finds in, and learns into, its own parts: a small
 *     first level (`near`, empty at first, asked after the primary's: the tokens and short
 *     pieces this thread met that the primary's first level lacks), sets and a long store, all
 *     bounded by the `bytes` given (wc_init_private); the places it stores into are logged;
 *   - when no call reads the primary (the last call out, _fused_lease.h; the threads of a
 *     batch joined), on one thread: each idle private cache's learned entries (those its log
 *     names, or all of them: it keeps learning over calls until then) are offered to the
 *     primary (wc_promote: a free way of its first level, else the sets' and the long store's
 *     doorkeepers' rule; a piece it holds already is skipped), then forgotten (wc_forget: the
 *     logged places cleared, grown sets made small again, the long store freed); the private
 *     caches stay in their pool for the next calls. A fresh primary is taught so after the first part of its
 *     first batch too, where that batch is its only reader (_fused_batch.h).
 * Why it is exact: every entry, wherever it lies, maps a piece's bytes in full to that piece's
 * ids, a function of the bytes alone; which thread learned it, or in which batch, changes no
 * answer. Why it is race-free: _fused_lease.h (the primary written only by its one holder, a
 * call or a teaching, which no call reads meanwhile; each private cache by one thread at a time).
 *
 * Included by _word_cache.h's user after it (_fused.c).
 */
#ifndef STREAMCODEC_SHARED_CACHE_H
#define STREAMCODEC_SHARED_CACHE_H

#include "_word_cache.h"

/* Point a private cache's first level at the primary `shared`'s (fixed; counters from 0), or
 * at none (NULL: a call that reads no primary, _fused_lease.h). */
static void wc_attach(word_cache *c, const word_cache *shared) {
    c->first = shared ? shared->first : (first_level){.lines = NULL};
    c->first.fixed = 1;
    c->first.hits = c->first.misses = 0;
}

/* A batch thread's private cache of at most `bytes` beside the primary `shared` (wc_attach):
 * `bytes` / NEAR_SHARE for `near`, a first level of its own, empty, asked after a miss of the
 * primary's first level and learning what it misses (wc_learn): the tokens and short pieces of
 * this thread's documents that the primary's fixed level lacks, met again and again within a
 * document, which one thread's own level would have learned (a warm call of 45 MB on two
 * threads: 540,000 misses of the levels and sets when `near` only gathered tokens for the
 * batch's end, against one thread's 420,000; 400,000 now). Small enough to stay in a core's own
 * cache (139 kB for the default bound, 2,048 lines; at 4.4 MB, as many lines as the primary's,
 * each write was a miss to the shared L3, and an idle private cache held 4.6 MB); then the long
 * store and the sets (wc_init_rest), and its log. 0, or -1 out of memory. */
#define NEAR_SHARE 64
static int wc_init_private(word_cache *c, size_t bytes, const word_cache *shared,
                           const sc_table *t) {
    memset(c, 0, sizeof *c);
    wc_attach(c, shared);
    if (!(c->log = malloc(WC_LOG * sizeof *c->log))) return -1;
    if ((shared && shared->first.lines && wc_first_init(&c->near, bytes / NEAR_SHARE, t, 0) < 0) ||
        wc_init_rest(c, bytes, fl_bytes(&c->near)) < 0) {
        wc_free(c);
        return -1;
    }
    return 0;
}

/* Whether `to` holds the piece b[:len] already (its keys: wc_learn's). */
static int wc_holds(const word_cache *to, const fl_key *key, const wc_key *words,
                    const uint8_t *b, size_t len) {
    if (key && to->first.lines) {
        const fl_entry *line = fl_line(&to->first, key);
        const fl_entry *pair = fl_pair(&to->first, key) + 1; /* fl_offer's second chance */
        if (fl_same(line, key) || fl_same(line + 1, key) || fl_same(pair, key)) return 1;
    }
    if (words && wc_peek(to, words)) return 1;
    return len > WC_IDS && len <= LS_KEY &&
           ls_find(&to->longs, b, len, words ? words->hash : wc_hash(b, len));
}

/* Offer the piece key[:len] (key: zero-padded to a whole word past len) to `to`, unless it
 * holds it: to a free way of its first level's line (or its pair line's, fl_put_free); a full
 * line keeps what it has (the threads' hits are not swapped forward in a fixed level, so
 * nothing tells its colder way, and evicting one blindly at each batch's end lost hot entries:
 * a warm call's misses grew from 425,000 to 495,000 over ten calls of 45 MB on two threads);
 * else the sets or the long store (wc_learn). One id is a token (a merge gives two or more),
 * for the first level alone. */
static void wc_learn_bytes(word_cache *to, const uint8_t *key, size_t len, const uint32_t *ids,
                           size_t n) {
    fl_key k, *first = NULL;
    wc_key words, *sets = NULL;
    if (len <= FL_KEY) fl_key_set(first = &k, key, len, sc_head(key, len));
    if (len <= WC_KEY && n > 1) wc_key_set(sets = &words, key, len);
    if (wc_holds(to, first, sets, key, len)) return;
    if (first && to->first.lines && fl_fits(ids, n) && fl_put_free(&to->first, first, ids, n) >= 0)
        return;
    wc_learn(to, NULL, sets, key, len, ids, n);
}

/* The piece and ids of a first-level entry (not empty) offered to `to`. */
static void wc_learn_line_entry(word_cache *to, const fl_entry *e) {
    uint8_t key[16];
    for (int j = 0; j < 8; j++) {
        key[j] = (uint8_t)(e->k0 >> (8 * j));
        key[8 + j] = (uint8_t)(e->k1 >> (8 * j));
    }
    uint32_t ids[FL_PACKED];
    size_t n = e->ids[0] >> 24;
    if (n > FL_IDS) {
        fl_unpack(e, n, ids);
    } else {
        ids[0] = e->ids[0] & FL_INDEX;
        for (size_t j = 1; j < FL_IDS; j++) ids[j] = e->ids[j];
    }
    wc_learn_bytes(to, key, (size_t)(e->k1 >> 56), ids, n);
}

enum { WC_OFFER, WC_CLEAR, WC_CLEAR_NEAR }; /* what wc_places does with each place */

/* A place of a private cache (a near line, or a set with WC_LOG_SET): its entries offered to
 * `to` (WC_OFFER), or cleared (WC_CLEAR; WC_CLEAR_NEAR: near lines only). */
static void wc_place(word_cache *to, word_cache *from, uint32_t place, int forget) {
    if (place & WC_LOG_SET) {
        if (forget == WC_CLEAR_NEAR) return;
        wc_entry *set = from->sets + (size_t)(place & ~WC_LOG_SET) * WC_WAYS;
        for (int w = 0; w < WC_WAYS; w++) {
            if (!set[w].tag) continue;
            if (!forget) {
                wc_learn_bytes(to, (const uint8_t *)set[w].key, set[w].len, set[w].ids, set[w].n);
                continue;
            }
            set[w].tag = 0;
            from->filled--;
        }
        return;
    }
    fl_entry *line = from->near.lines + 2 * (size_t)place;
    for (int w = 0; w < 2; w++) {
        if (line[w].k1 && !forget) wc_learn_line_entry(to, &line[w]);
        if (forget) memset(&line[w], 0, sizeof line[w]);
    }
}

/* Each place `from` stored into since its last promotion, offered to `to` or cleared. */
static void wc_places(word_cache *to, word_cache *from, int forget) {
    if (from->logged <= WC_LOG) {
        for (size_t i = 0; i < from->logged; i++) wc_place(to, from, from->log[i], forget);
        return;
    }
    size_t lines = from->near.lines ? (size_t)1 << (64 - from->near.shift) : 0;
    for (size_t i = 0; i < lines; i++) wc_place(to, from, (uint32_t)i, forget);
    for (size_t i = 0; from->sets && forget != WC_CLEAR_NEAR && i <= from->set_mask; i++)
        wc_place(to, from, WC_LOG_SET | (uint32_t)i, forget);
}

/* A batch's end, on one thread: what a private cache learned (near, sets, long store) offered
 * to the primary `to` (wc_learn_bytes: a free way of its first level; else the sets' and the
 * store's doorkeepers' rule: a piece two threads learned, or one learned in two batches, is
 * admitted where a full set would turn a first offer away; a piece `to` holds is skipped), and
 * its counters added to the primary's. */
static void wc_promote(word_cache *to, word_cache *from) {
    wc_places(to, from, WC_OFFER);
    const long_store *longs = &from->longs;
    for (size_t k = 0; longs->arena && k < longs->segments; k++) {
        uint32_t at = (uint32_t)(k * LS_SEGMENT_WORDS), end = at + longs->fill[k];
        while (at < end) {
            const ls_record *r = ls_at(longs, at);
            wc_learn_bytes(to, (const uint8_t *)(r + 1), r->len, ls_ids(r), r->n);
            at += ls_words(r->len, r->n);
        }
    }
    /* near is asked only after a miss of the primary's first level: a near hit is a hit */
    to->first.hits += from->first.hits + from->near.hits;
    to->first.misses += from->first.misses - from->near.hits;
    to->hits += from->hits;
    to->misses += from->misses;
    to->merges += from->merges;
    to->longs.hits += from->longs.hits;
}

/* Whether a private cache learned a piece since its last promotion (else wc_promote adds only
 * its counters). */
static int wc_learned(const word_cache *c) {
    return c->logged || c->longs.arena || (c->sets && c->set_mask + 1 > WC_FIRST_SETS);
}

/* After wc_promote: the private cache emptied of what it learned, its counters and log from 0.
 * Sets that grew (a first batch learns all its words) are made small again and the long store
 * freed, so a warm batch's threads probe small tables, and the idle caches hold little: its
 * near level and sets of the first size are cleared where the log says, and kept. */
static void wc_forget(word_cache *c) {
    word_cache grown = *c;
    if (c->sets && c->set_mask + 1 > WC_FIRST_SETS && wc_alloc(c, WC_FIRST_SETS) == 0) {
        /* made small again: the grown sets are freed, not cleared place by place first */
        wc_aligned_free(grown.sets);
        wc_aligned_free(grown.door);
        c->filled = 0;
        wc_places(NULL, c, WC_CLEAR_NEAR);
    } else {
        wc_places(NULL, c, WC_CLEAR); /* sets of the first size, or grown ones kept (no memory) */
    }
    long_store *longs = &c->longs;
    if (longs->arena) {
        ls_free(longs);
        longs->segment = 0;
        longs->round = 0;
    }
    c->first.hits = c->first.misses = c->near.hits = c->near.misses = 0;
    c->hits = c->misses = c->merges = longs->hits = 0;
    c->logged = 0;
}

#endif
