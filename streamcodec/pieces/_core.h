/* The compiled core's C-level API: one piece's bytes to token ids with a vocabulary's tables.
 *
 * Everything here is plain C: no Python object is touched, so these functions run without the
 * GIL and from any number of threads on one shared, built vocabulary (it is read-only once
 * built). Each function names the Python function it must equal.
 *
 *     sc_vocab *v = ...;                          // from sc_core_vocab() (see below)
 *     sc_ids out = {0};
 *     if (sc_encode_piece(v, (const uint8_t *)"hello", 5, &out) == 0) { ... out.ids ... }
 *     sc_ids_free(&out);
 *
 * Ids in an sc_ids are token *indices* (dense, 0..n-1); sc_rank() turns one into its rank (the
 * token id). Another extension module reaches these functions through the capsule
 * "streamcodec.pieces._core._C_API" (an sc_api, below), so it links nothing of ours.
 */
#ifndef STREAMCODEC_CORE_H
#define STREAMCODEC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "_core_lookup.h"

typedef struct sc_vocab sc_vocab;

/* A growable array of token indices. */
typedef struct {
    uint32_t *ids;
    size_t len, cap;
} sc_ids;

enum { SC_OK = 0, SC_NOMEM = -1, SC_DUPLICATE = -2 };

/* Build *out from `n` tokens: token i has bytes data[offsets[i]:offsets[i+1]] and rank ranks[i]
 * (distinct, at most 2**32 - 2); every single byte must be a token; n at most SC_MAX_TOKENS
 * (_core_lookup.h). SC_OK, SC_NOMEM (or n is larger), or SC_DUPLICATE when two tokens have the
 * same bytes (a dict's keys cannot; a packed vocabulary's could: then *out is NULL). */
int sc_vocab_new(sc_vocab **out, size_t n, const uint8_t *data, const size_t *offsets,
                 const uint32_t *ranks, size_t long_piece);
void sc_vocab_free(sc_vocab *v);

/* The index of the token whose bytes are data[:len], or -1 (a dict lookup of ranks). */
int64_t sc_lookup(const sc_vocab *v, const uint8_t *data, size_t len);
/* The table sc_lookup reads, for callers that inline the lookup (sc_table_lookup). */
const sc_table *sc_table_of(const sc_vocab *v);
uint32_t sc_rank(const sc_vocab *v, uint32_t index);
/* The ranks by token index, or NULL when every token's index is its rank (then ids need no
 * mapping: tiktoken's vocabularies, whose ranks are 0..n-1 in order). */
const uint32_t *sc_rank_table(const sc_vocab *v);

/* Append the ids of one piece to `out`: streamcodec.pieces.piece.PieceEncoder.__call__ (the whole-piece
 * rule, then merge_piece below the long-piece length, backtrack_piece from it; both equal
 * streamcodec.reference.rank_merge). SC_OK or SC_NOMEM (then `out` holds what it held before).
 * Any number of threads may encode with one vocabulary at once. */
int sc_encode_piece(const sc_vocab *v, const uint8_t *data, size_t len, sc_ids *out);

/* sc_encode_piece for a piece that is known not to be a token (it skips the whole-piece rule's
 * lookup). */
int sc_encode_merged(const sc_vocab *v, const uint8_t *data, size_t len, sc_ids *out);

/* streamcodec.pieces.merge.merge_piece: the rank merge without the whole-piece rule. */
int sc_merge_piece(const sc_vocab *v, const uint8_t *data, size_t len, sc_ids *out);

/* streamcodec.pieces.backtrack.backtrack_piece (at any length). */
int sc_backtrack_piece(const sc_vocab *v, const uint8_t *data, size_t len, sc_ids *out);

int sc_ids_reserve(sc_ids *out, size_t extra);
void sc_ids_free(sc_ids *out);

/* What the capsule "streamcodec.pieces._core._C_API" points to: the fused pass
 * (streamcodec/engine/_fused.c) reaches the core through it, and links nothing of ours.
 * `vocab_of` and `id_objects` take a streamcodec.pieces._core.Core object, need the GIL, and
 * return what it owns (borrowed: keep the Core alive), or NULL with a Python error set.
 * `id_objects(core)[i]` is the int object (a PyObject *) of token index i's rank, made once. */
typedef struct {
    int version; /* 3 */
    sc_vocab *(*vocab_of)(void *core);
    void *const *(*id_objects)(void *core);
    const uint32_t *(*rank_table)(const sc_vocab *); /* sc_rank_table */
    const sc_table *(*table_of)(const sc_vocab *);
    int (*encode_merged)(const sc_vocab *, const uint8_t *, size_t, sc_ids *);
    int (*ids_reserve)(sc_ids *, size_t);
    void (*ids_free)(sc_ids *);
} sc_api;

#endif
