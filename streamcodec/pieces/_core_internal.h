/* Internal to the compiled core: the vocabulary's layout and the helpers its C units share. They
 * stack without a cycle: _core_tables.c (lookups, building) <- _core_merge.c (the rank merge) <-
 * _core_backtrack.c (rank-order facts, long pieces) <- _core_piece.c (one piece). Not part of
 * the C-level API (_core.h). */
#ifndef STREAMCODEC_CORE_INTERNAL_H
#define STREAMCODEC_CORE_INTERNAL_H

#include <stdatomic.h>

#include "_core.h"

/* The facts below are shared by threads without the GIL: C11 atomics (MSVC builds them with
 * /experimental:c11atomics, setup.py). */
typedef _Atomic uint8_t sc_atomic_u8;
typedef _Atomic uint32_t sc_atomic_u32;
typedef _Atomic long sc_atomic_long;

#define NONE UINT32_MAX  /* no token; also "no merge" as a pair rank (ranks are below it) */
#define STACK_PARTS 512  /* merges of pieces up to this long keep their state on the stack */
#define HEAP_MERGE 128   /* merges of this many bytes or more keep their pairs in a heap (faster from ~96) */

struct sc_vocab {
    size_t n, longest, long_piece;
    uint8_t *data;  /* all token bytes */
    size_t *off;    /* token i is data[off[i]:off[i + 1]] */
    uint32_t *rank; /* the id of token i */
    int ranks_are_indices; /* rank[i] == i for every token (tiktoken's vocabularies) */
    sc_table table; /* the lookup (_core_lookup.h); its arrays are owned here */
    sc_slot *slots;
    uint32_t *short_index;
    uint64_t *filter;
    /* The tokens of two bytes or more sorted by their bytes (a shorter token before the longer
     * ones it starts), and where each two-byte start's run begins in it (prefix_from[k] to
     * prefix_from[k + 1]): a trie's walk by binary search, for the backtracking candidates.
     * Sorted by the first long piece (sc__prefix_index): most runs have none, and the sort was
     * half of the tables' build; *prefix_state says how far it is (PREFIXES_*, or the builder's
     * process image while a thread builds it: sc__prefix_index). */
    uint32_t *prefix_order, *prefix_from;
    sc_atomic_long *prefix_state;
    /* The facts of RankOrder, computed per token on first use by any thread (_core_backtrack.c):
     * a FACT_* bit set says the matching split or verdict is written. */
    sc_atomic_u8 *facts;
    sc_atomic_u32 *split_left, *split_right; /* NONE when the token has no split */
    sc_atomic_u32 *shorter; /* the next candidate after a token: its longest reachable prefix */
};

enum { PREFIXES_NONE = 0, PREFIXES_READY = -1 }; /* building: a process image's number, from 1 */

/* The candidates' index (prefix_order, prefix_from), built once by the first thread that asks,
 * the others waiting for it: SC_OK, or SC_NOMEM (then the next caller tries again). */
int sc__prefix_index(const sc_vocab *v);

enum { FACT_SPLIT = 1, FACT_REACHABLE = 2, FACT_ORDER = 4, FACT_ORDERED = 8, FACT_SHORTER = 16 };

static inline size_t token_len(const sc_vocab *v, uint32_t t) { return v->off[t + 1] - v->off[t]; }

/* Scratch for merge_parts: on the stack for short pieces, else on the heap. */
typedef struct {
    size_t stack_starts[STACK_PARTS + 1];
    uint32_t stack_pair[STACK_PARTS], stack_made[STACK_PARTS];
    size_t *starts;
    uint32_t *pair, *made;
} merge_scratch;

int sc__scratch_init(merge_scratch *s, size_t n);
void sc__scratch_free(merge_scratch *s);

/* streamcodec.pieces.merge.merge_parts: merge the lowest-ranked adjacent pair (leftmost on ties)
 * while there are at least `parts` + 1 parts. starts[0..n] receives the part boundaries (n + 1
 * entries), pair[] the pair ranks; returns the number of parts. `made` (n entries, or NULL:
 * not wanted): made[k] the rank of the merge that made part k, NONE for a single byte; set only
 * when n < HEAP_MERGE (a longer merge, by heap, leaves it unset). */
size_t sc__merge_parts(const sc_vocab *v, const uint8_t *p, size_t n, size_t parts,
                       size_t *starts, uint32_t *pair, uint32_t *made);

#endif
