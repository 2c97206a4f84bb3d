/* One piece's bytes to token indices: streamcodec.pieces.piece.PieceEncoder.__call__. A piece
 * that is a token is that token (the whole-piece rule: tiktoken's, and what BPE's merges give
 * too, docs/performance.md); otherwise the rank merge below the long-piece length, and the
 * backtracking search from it (both equal streamcodec.reference.rank_merge).
 */
#include "_core_internal.h"

int sc_encode_piece(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    int64_t token = sc_lookup(v, p, n);
    if (token >= 0) {
        if (sc_ids_reserve(out, 1) != SC_OK) return SC_NOMEM;
        out->ids[out->len++] = (uint32_t)token;
        return SC_OK;
    }
    return sc_encode_merged(v, p, n, out);
}

int sc_encode_merged(const sc_vocab *v, const uint8_t *p, size_t n, sc_ids *out) {
    return n < v->long_piece ? sc_merge_piece(v, p, n, out) : sc_backtrack_piece(v, p, n, out);
}
