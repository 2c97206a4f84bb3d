/* ThreadSanitizer run of the compiled core's shared state (tools/tsan.sh builds and runs it).
 *
 * Threads share one built vocabulary: its tables are read-only, but the rank-order facts of the
 * backtracking encoder (_core_backtrack.c) are written by whichever thread needs them first,
 * with C11 atomics, and the candidates' index is built by the first thread with a long piece
 * while the others wait (sc__prefix_index: the expected ids below come from the rank merge,
 * which needs no index, so the threads race to build it). This program builds a vocabulary by merging random pairs over a small
 * alphabet (so long pieces need many facts), then has THREADS threads encode the same long
 * pieces at once, each checked against sc_merge_piece (the rank merge, which shares nothing).
 * TSan reports any data race; a wrong id exits 1. (The word cache needs no such run: each call
 * owns its cache, taken from the pool under the GIL.)
 *
 * Then two forks, the threads joined: one after the index is built (the child uses it), and one
 * while a thread of this process builds it, simulated by that thread's mark on a fresh
 * vocabulary (1: this process image has not forked) and a half-written index. The child
 * inherits a build that never finishes there and must build the index itself: it spun forever
 * before. Each child encodes the long pieces under an alarm; a hang or a wrong id exits 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../streamcodec/pieces/_core_internal.h"

#define THREADS 4
#define PIECES 24
#define PIECE_LEN 700 /* past LONG_PIECE: the backtracking encoder and its facts */
#define LONG_PIECE 512 /* pieces this long backtrack (the library's is pieces.piece.LONG_PIECE) */
#define MERGES 3000

static sc_vocab *vocab;
static uint8_t pieces[PIECES][PIECE_LEN];
static sc_ids expected[PIECES];

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t next_random(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)state;
}

static void *encode_all(void *rounds) {
    for (int round = 0; round < *(int *)rounds; round++) {
        for (int k = 0; k < PIECES; k++) {
            sc_ids out = {0};
            if (sc_encode_piece(vocab, pieces[k], PIECE_LEN, &out) != SC_OK ||
                out.len != expected[k].len ||
                memcmp(out.ids, expected[k].ids, out.len * sizeof *out.ids) != 0) {
                fprintf(stderr, "piece %d: the threads' ids differ from the rank merge\n", k);
                exit(1);
            }
            sc_ids_free(&out);
        }
    }
    return NULL;
}

/* Encode the long pieces in a child of a fork, under an alarm: 0 where it gives the ids. */
static int in_a_child(const char *what) {
    fflush(stdout); /* not written twice */
    pid_t child = fork();
    if (child == 0) {
        alarm(20);
        int once = 1;
        encode_all(&once); /* exits 1 on a wrong id */
        _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "a fork %s: the child %s\n", what,
                WIFSIGNALED(status) ? "hung (killed by its alarm)" : "failed");
        return 1;
    }
    return 0;
}

int main(void) {
    /* 256 single bytes, then tokens made by joining two earlier tokens over "abcd". */
    size_t n = 256, total = 256;
    uint8_t *data = malloc(256 + MERGES * 64);
    size_t *offsets = malloc((256 + MERGES + 1) * sizeof *offsets);
    uint32_t *ranks = malloc((256 + MERGES) * sizeof *ranks);
    for (size_t b = 0; b < 256; b++) {
        data[b] = (uint8_t)b;
        offsets[b] = b;
        ranks[b] = (uint32_t)b;
    }
    offsets[256] = 256;
    for (int m = 0; m < MERGES; m++) {
        uint32_t left = next_random() % n, right = next_random() % n;
        if (left < 256) left = 'a' + left % 4;
        if (right < 256) right = 'a' + right % 4;
        size_t ll = offsets[left + 1] - offsets[left], rl = offsets[right + 1] - offsets[right];
        if (ll + rl > 64) continue;
        uint8_t joined[64];
        memcpy(joined, data + offsets[left], ll);
        memcpy(joined + ll, data + offsets[right], rl);
        int seen = 0;
        for (size_t t = 0; t < n && !seen; t++)
            seen = offsets[t + 1] - offsets[t] == ll + rl && !memcmp(data + offsets[t], joined, ll + rl);
        if (seen) continue;
        memcpy(data + total, joined, ll + rl);
        total += ll + rl;
        ranks[n] = (uint32_t)n;
        offsets[++n] = total;
    }
    if (sc_vocab_new(&vocab, n, data, offsets, ranks, LONG_PIECE) != SC_OK) return 1;
    for (int k = 0; k < PIECES; k++) {
        for (int i = 0; i < PIECE_LEN; i++) pieces[k][i] = (uint8_t)('a' + next_random() % 4);
        if (sc_merge_piece(vocab, pieces[k], PIECE_LEN, &expected[k]) != SC_OK) return 1;
    }
    pthread_t threads[THREADS];
    int rounds = 4;
    for (int t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, encode_all, &rounds);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    printf("tsan_core: %zu tokens, %d threads x %d long pieces: ids equal the rank merge\n", n,
           THREADS, PIECES);
    if (in_a_child("after the index is built")) return 1;
    sc_vocab_free(vocab);
    if (sc_vocab_new(&vocab, n, data, offsets, ranks, LONG_PIECE) != SC_OK) return 1;
    atomic_store(vocab->prefix_state, 1); /* this image's thread builds it (sc__prefix_index) */
    vocab->prefix_from[300] = 7;          /* and has written part of it */
    if (in_a_child("while another thread builds the index")) return 1;
    printf("tsan_core: forks after and during the index's build: the children's ids are exact\n");
    for (int k = 0; k < PIECES; k++) sc_ids_free(&expected[k]);
    sc_vocab_free(vocab);
    free(data);
    free(offsets);
    free(ranks);
    return 0;
}
