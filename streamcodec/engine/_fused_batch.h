/* The batch pass: many documents to ids on native threads, the GIL released once for the batch.
 * Included by _fused.c (it uses fused_pass, fused_1/2/4 and the word cache's lease and sharing,
 * _fused_lease.h and _shared_cache.h, from there).
 *
 *     FusedEncoder.encode_batch(texts, arrow, threads, errors, mode, lengths, watch)
 *
 * Each document's ids must equal ``Encoding.encode_ordinary(text)`` (bytes: of
 * ``text.decode("utf-8", errors)``, encoded as ``Encoding.encode_bytes`` does under
 * "surrogateescape"), the per-text pass of `encode` applied to each in turn:
 * see streamcodec.engine.batch, its Python side and pure twin.
 *
 *   1. With the GIL held, every document becomes (data, kind, length): a str's PEP 393 buffer
 *      (kind 1, 2 or 4), a bytes object's UTF-8 (kind 0), or a row of a pyarrow (large_)string
 *      array read from its offsets and data buffers (`arrow`: their addresses, kind 0). A tuple
 *      of `texts` keeps every str and bytes alive; the caller keeps the arrow array alive.
 *   2. The GIL released once: `threads` pthreads take runs of documents, worker 0 from the
 *      front and the others from the back (batch_claim), each with its own id buffer (kept for
 *      the next batch: batch_ids_take; worker 0's, with room for the whole array, becomes the
 *      array when ids are asked for: its documents' ids are the first). The encoder's word
 *      cache, the primary, is read by all of them and written by none (leased: _fused_lease.h);
 *      each has a private one (from the encoder's pool of them, or made by the thread), asked
 *      after the primary and learning its misses, pooled at the end still learning: what they
 *      learned is offered to the primary when no call reads it (_shared_cache.h); a fresh
 *      primary is taught after the batch's first part too (batch_phase_one). One thread leases
 *      the cache as encode does. A UTF-8 document that is all ASCII is read in place; any other
 *      is decoded (_utf8.h, the one reader) into the thread's buffer, at the narrowest kind.
 *      Invalid UTF-8 stops the batch at the first such document (errors="strict"), or is read
 *      as bytes.decode(errors=...)
 *      reads it: U+FFFD ("replace"), or the escapes that encode_bytes keeps as the bytes
 *      ("surrogateescape"). A str with lone surrogates is read as tiktoken reads it (pairs
 *      joined, lone ones U+FFFD) into the thread's buffer. Each document's id count goes to
 *      `lengths[i + 1]`.
 *   3. The calling thread waits on a condition with a timeout; every WAIT_MS it takes the GIL,
 *      checks for signals, and on one sets a cancel flag that the workers read between
 *      documents and blocks of BLOCK code points: Ctrl-C ends a batch within a second. A
 *      calling thread that handles no signal (`watch` false: not Python's main thread) runs a
 *      one-thread batch itself, the GIL released.
 *   4. Out, by `mode`: counts (`lengths` holds them, no ids kept); ids (the counts' prefix sum
 *      makes `lengths` the offsets; worker 0's buffer becomes one uint32 IdArray, its own ids in
 *      place, and the threads copy the other workers' runs of ids, as ranks, after them: one
 *      copy of all but worker 0's share, in parallel (batch_copy_jobs); the array's buffer goes
 *      back to the encoder's idle ones when the array is freed: batch_array_return); lists
 *      (one list of ints a document, from the threads' buffers, with the GIL).
 * Windows has no pthreads here: the batch runs on the calling thread, the GIL released.
 */
#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#ifndef _WIN32
#include <pthread.h>
#endif

#define WAIT_MS 30                     /* how often the waiting thread checks for signals */
/* Smaller batches run on the calling thread, the GIL held; and a batch takes at most a thread
 * for each INLINE_BYTES of text: a thread costs its start and its private cache's pages, more
 * than the work of a few short documents. */
#define INLINE_BYTES ((size_t)1 << 16)
#define MAX_THREADS 1024

enum { BATCH_COUNTS = 0, BATCH_IDS = 1, BATCH_LISTS = 2 };
enum { BATCH_CANCELLED = 4, BATCH_INVALID = 5, BATCH_WIDER = 6 };

static PyObject *InvalidDocument; /* (document index, byte offset, reason): invalid UTF-8 */

typedef struct {
    const void *data;
    Py_ssize_t len; /* code points (str) or bytes (kind 0) */
    int kind;       /* 1, 2, 4: a str's; 0: UTF-8 */
    int ascii;      /* a str known to be ASCII */
} batch_doc;

typedef struct batch_shared batch_shared;

/* Documents [first, last): a run one thread took. */
typedef struct {
    Py_ssize_t first, last;
} batch_span;

/* A run's ids to copy to their place in the array (BATCH_IDS on threads), from `from`. */
typedef struct {
    batch_span run;
    const uint32_t *from;
} batch_job;

/* One thread's state. Its word cache, a copy of a pooled header written back at the end (the
 * pools' headers lie side by side, and the hit counters, bumped at every piece, would share
 * cache lines between threads): alone, the primary's; beside others, its private cache's
 * (`helper`: from the pool, or new and `blank` until the thread makes it). The padding keeps
 * neighbours' fields apart. */
typedef struct {
    batch_shared *s;
    fused_pass p;
    word_cache cache;
    word_cache *helper;
    int blank;
    void *text; /* a decoded document */
    size_t text_cap;
    batch_span *runs; /* the runs this thread took, in order */
    size_t nruns, runs_cap;
    int front; /* takes runs from the front (worker 0 of threads: its ids are the array's first) */
    int status;
    Py_ssize_t bad_doc, bad_offset; /* where this thread found invalid UTF-8, and why */
    const char *bad_reason;
#ifndef _WIN32
    pthread_t thread;
#endif
    char apart[128];
} batch_worker;

struct batch_shared {
    const batch_doc *docs;
    Py_ssize_t n, run;
    int64_t *lengths; /* n + 1: lengths[i + 1] is document i's id count */
    uint32_t *out;    /* the ids, in document order (BATCH_IDS, the copy) */
    const uint32_t *rank;
    size_t private_bytes; /* the bound of a thread's private cache */
    int errors;         /* for bytes: 0 strict, 1 replace, 2 surrogateescape */
    int watch;          /* the calling thread handles signals (Python's main thread) */
    const batch_job *jobs; /* BATCH_IDS on threads: the copy's */
    Py_ssize_t njobs;
    char apart[64]; /* the counters, written at every run, away from what is only read */
    /* Runs not taken: [front, back), the GIL-free lock held (batch_claim); the back ones are
     * taken down to `floor` only (a fresh primary's first part: the last 16th), the front ones
     * while it is 0. */
    Py_ssize_t front, back, floor;
    atomic_llong job_next;  /* the next job of the copy no thread took */
    atomic_int cancel;      /* a signal: stop */
    atomic_llong first_bad; /* the first document with invalid UTF-8 (n: none) */
#ifndef _WIN32
    pthread_mutex_t lock;
    pthread_cond_t done;
    int running;
#endif
};

/* A fresh buffer of `bytes` for ids that free() releases (it may become an IdArray's): from 2 MiB
 * on, aligned to a huge page and asking for transparent huge pages (wc_aligned), so all of it
 * gets them where the system gives them on request: 100 MB of ids faulted in 4 kB at a time were
 * 25,000 page faults, a fifth of one thread's time; the part before a 2 MiB boundary of an
 * unaligned buffer, up to 2 MiB, still was. (Windows: _aligned_malloc's need _aligned_free.) */
static void *batch_fresh(size_t bytes) {
#ifndef _WIN32
    if (bytes >= WC_HUGE) return wc_aligned(bytes, WC_HUGE);
#endif
    return malloc(bytes ? bytes : 1);
}

/* The id buffers outlive a batch: made fresh at each call, their pages were faulted in and
 * zeroed by the kernel at each call as the ids were written (two threads, 45 MB: 733-754 faults
 * and 24-68 ms of system time a call). Two kinds are kept apart, each in a pool of its own on
 * the encoder: the threads' (`id_buffers`), and those that become arrays (`id_arrays`: a
 * batch's array on threads, or one thread's buffer, which is the array; a freed array gives its
 * buffer back there, batch_array_return). In one pool, a thread took the idle buffer that fitted
 * the array (the largest), and the array was made afresh at each call. Those idle hold at most
 * ID_POOL_SHARE * cache_bytes together (128 MiB by default: two threads' buffers and the array
 * for 55 MB of text); a buffer past that is freed, and the encoder frees them all with itself. */
#define ID_POOL_SHARE 4

/* Room past which a buffer taken for `ids` is cut back to `ids` (an array its caller keeps; a
 * thread's buffer after a batch twice as large). */
#define BATCH_SPARE(ids) (2 * (ids) + 4096)

/* out's room made at least `cap` ids, its ids kept (realloc, not the core's doubling). */
static int batch_ids_resize(sc_ids *out, size_t cap) {
    if (out->cap >= cap) return SC_OK;
    uint32_t *bigger = realloc(out->ids, cap * sizeof *bigger);
    if (!bigger) return SC_NOMEM;
    out->ids = bigger;
    out->cap = cap;
    return SC_OK;
}

/* A buffer that becomes an array of `total` ids (its caller keeps it) cut back to them past
 * BATCH_SPARE: it was taken for the ids guessed from the last batch, which may have been many
 * more, and its pages written then (kept arrays each held such a buffer). Made if none yet (no
 * text); else kept whole where realloc fails. */
static void batch_ids_fit(sc_ids *out, size_t total) {
    if (out->ids && out->cap <= BATCH_SPARE(total)) return;
    uint32_t *smaller = realloc(out->ids, (total ? total : 1) * sizeof *smaller);
    if (smaller) {
        out->ids = smaller;
        out->cap = total ? total : 1;
    }
}

/* Into *out (empty), an id buffer with room for `ids` from `pool` (the GIL held): its idle one of
 * the least room of at least `ids`, cut back to `ids` past BATCH_SPARE; else its largest, grown;
 * else a fresh one (batch_fresh's huge pages). One buffer is taken for each one given back, so
 * the idle ones stay as many as the batches use at once (a fresh one beside those that did not
 * fit was one more a call, up to their bound: a batch on two threads, then a small one, 3 MB a
 * call). */
static int batch_ids_take(ids_pool *pool, sc_ids *out, size_t ids) {
    size_t room = ids ? ids : 1;
    Py_ssize_t best = -1, largest = -1;
    for (Py_ssize_t i = 0; i < pool->n; i++) {
        size_t cap = pool->items[i].cap;
        if (cap >= room && (best < 0 || cap < pool->items[best].cap)) best = i;
        if (largest < 0 || cap > pool->items[largest].cap) largest = i;
    }
    if (best < 0 && largest < 0) {
        if (!(out->ids = batch_fresh(room * sizeof *out->ids))) return SC_NOMEM;
        out->cap = room;
        out->len = 0;
        return SC_OK;
    }
    Py_ssize_t i = best >= 0 ? best : largest;
    *out = pool->items[i];
    pool->items[i] = pool->items[--pool->n];
    pool->bytes -= out->cap * sizeof *out->ids;
    out->len = 0;
    if (best < 0) return batch_ids_resize(out, room);
    uint32_t *cut = out->cap > BATCH_SPARE(room) ? realloc(out->ids, room * sizeof *out->ids) : NULL;
    if (cut) { /* else kept whole */
        out->ids = cut;
        out->cap = room;
    }
    return SC_OK;
}

/* A buffer given back to `pool` while the idle ones of both pools fit their bound, else freed
 * (the GIL held); first cut back to what was written, or `keep` ids if more, where it has a
 * 16th more room than that: the core doubles a buffer that runs out (ids_reserve), and a
 * thread that took more than its share (the other descheduled a while) gave back twice the
 * room it used, which pushed the idle buffers past their bound (45 MB: the array's buffer then
 * freed and made afresh at every call, 200 page faults and 15 ms of CPU a call). The room cut
 * was never written, its pages never touched. */
static void batch_ids_give_back(FusedEncoder *self, ids_pool *pool, sc_ids *out, size_t keep) {
    keep = out->len > keep ? out->len : keep;
    uint32_t *cut = out->cap > keep + keep / 16 ? realloc(out->ids, (keep ? keep : 1) * sizeof *cut)
                                                : NULL;
    if (cut) { /* else kept whole */
        out->ids = cut;
        out->cap = keep ? keep : 1;
    }
    size_t bytes = out->cap * sizeof *out->ids;
    size_t idle = self->id_buffers.bytes + self->id_arrays.bytes;
    if (out->ids && idle + bytes <= ID_POOL_SHARE * self->cache_bytes) {
        if (pool->n == pool->cap) {
            Py_ssize_t cap = pool->cap ? 2 * pool->cap : 4;
            sc_ids *bigger = PyMem_Realloc(pool->items, (size_t)cap * sizeof *bigger);
            if (bigger) {
                pool->items = bigger;
                pool->cap = cap;
            }
        }
        if (pool->n < pool->cap) {
            pool->items[pool->n++] = *out;
            pool->bytes += bytes;
            *out = (sc_ids){NULL, 0, 0};
            return;
        }
    }
    self->api->ids_free(out);
}

static int batch_room(batch_worker *w, size_t bytes) {
    if (bytes <= w->text_cap) return SC_OK;
    void *bigger = realloc(w->text, bytes);
    if (!bigger) return SC_NOMEM;
    w->text = bigger;
    w->text_cap = bytes;
    return SC_OK;
}

/* n UCS4 code points at buf stored in place as UCS2 where the greatest, `most`, fits: the kind
 * they take (4 or 2). Never 1: the callers' code points past Latin-1 always include U+FFFD or
 * an escape (a document whose only bytes from F0 on are invalid; a str's lone surrogate). */
static int batch_narrow(void *buf, size_t n, uint32_t most) {
    if (most >= 0x10000) return 4;
    const uint32_t *wide = buf;
    for (size_t k = 0; k < n; k++) ((Py_UCS2 *)buf)[k] = (Py_UCS2)wide[k];
    return 2;
}

#define KIND_HEADER "engine/_fused_decode.h"
#include "../_each_kind.h" /* batch_utf8_1, _2, _4 */

/* The kind that holds the code points of UTF-8 bytes whose greatest byte is `top` (not ASCII):
 * a lead byte from F0 on may start a code point past the BMP (4); from C4 one past Latin-1 (2);
 * C2 and C3 start Latin-1's (1); bytes before C2 start none, each one U+FFFD or an escape (2). */
static int batch_kind_of(uint8_t top) { return top >= 0xf0 ? 4 : top >= 0xc4 || top < 0xc2 ? 2 : 1; }

/* The greatest byte of b[:n] (a pass the compiler vectorizes): under 0x80, all ASCII. */
static uint8_t batch_top_byte(const uint8_t *b, size_t n) {
    uint8_t top = 0;
    for (size_t j = 0; j < n; j++) top = b[j] > top ? b[j] : top;
    return top;
}

/* Decode document i's UTF-8 (its greatest byte `top`) into w->text: its kind (1, 2, 4) and
 * *len its code points; 0 for invalid UTF-8 (first_bad lowered to i, where and why kept in w),
 * or SC_NOMEM. Decoded straight into the kind the bytes allow (_fused_decode.h); a Latin-1
 * document with invalid bytes again at kind 2, and one whose only bytes from F0 on are invalid
 * narrowed to 2 after. */
static int batch_decode(batch_worker *w, Py_ssize_t i, const uint8_t *b, size_t n, uint8_t top,
                        Py_ssize_t *len) {
    batch_shared *s = w->s;
    int kind = batch_kind_of(top), status = SC_OK;
    size_t k = 0, bad = 0;
    uint32_t most = 0;
    do { /* only Latin-1 is ever too narrow (batch_kind_of: a code point past the BMP needs a
          * lead byte from F0, which picks kind 4): read again at kind 2 */
        if (status == BATCH_WIDER) kind = 2;
        if (batch_room(w, (size_t)kind * n + 4) != SC_OK) return SC_NOMEM;
        status = kind == 1   ? batch_utf8_1(b, n, s->errors, w->text, &k, &most, &bad)
                 : kind == 2 ? batch_utf8_2(b, n, s->errors, w->text, &k, &most, &bad)
                             : batch_utf8_4(b, n, s->errors, w->text, &k, &most, &bad);
    } while (status == BATCH_WIDER);
    if (status == BATCH_INVALID) {
        uint32_t c;
        w->bad_doc = i;
        w->bad_offset = (Py_ssize_t)bad;
        w->bad_reason = sc_utf8_reason(b + bad, n - bad, sc_utf8_get(b + bad, n - bad, &c));
        long long seen = atomic_load(&s->first_bad);
        while (i < seen && !atomic_compare_exchange_weak(&s->first_bad, &seen, i)) {
        }
        return 0;
    }
    *len = (Py_ssize_t)k;
    return kind == 4 ? batch_narrow(w->text, k, most) : kind;
}

/* A str's code points as tiktoken reads them (replace_lone_surrogates: a surrogate pair
 * joined, a lone surrogate U+FFFD) into w->text: its kind, or SC_NOMEM. */
static int batch_replace_surrogates(batch_worker *w, const batch_doc *d, Py_ssize_t *len) {
    if (batch_room(w, 4 * (size_t)d->len + 4) != SC_OK) return SC_NOMEM;
    uint32_t *out = w->text, most = 0;
    Py_ssize_t k = 0;
    for (Py_ssize_t j = 0; j < d->len; j++) {
        uint32_t c = PyUnicode_READ(d->kind, d->data, j);
        if (c >= 0xd800 && c <= 0xdfff) {
            uint32_t low = j + 1 < d->len ? PyUnicode_READ(d->kind, d->data, j + 1) : 0;
            if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
                c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
                j++;
            } else {
                c = 0xfffd;
            }
        }
        out[k++] = c;
        most = c > most ? c : most;
    }
    *len = k;
    return batch_narrow(out, (size_t)k, most);
}

/* The pass over one document's code points, block by block (the cancel flag read between). */
static int batch_pass(batch_worker *w, const void *data, int kind, Py_ssize_t len) {
    int status = SC_OK;
    for (Py_ssize_t at = 0; at < len && status == SC_OK;) {
        Py_ssize_t stop = len - at > BLOCK ? at + BLOCK : len;
        switch (kind) {
        case 1: status = fused_1(data, &at, stop, len, &w->p); break;
        case 2: status = fused_2(data, &at, stop, len, &w->p); break;
        default: status = fused_4(data, &at, stop, len, &w->p);
        }
        if (status == SC_OK && atomic_load_explicit(&w->s->cancel, memory_order_relaxed))
            return BATCH_CANCELLED;
    }
    return status;
}

/* Document i's ids appended to the thread's buffer (or counted), its count in lengths[i + 1]. */
static int batch_one(batch_worker *w, Py_ssize_t i) {
    const batch_doc *d = &w->s->docs[i];
    fused_pass *p = &w->p;
    size_t before = p->out.len;
    uint64_t counted = p->count;
    const void *data = d->data;
    int kind = d->kind, status;
    Py_ssize_t len = d->len;
    p->ascii = d->ascii;
    p->escape = kind == 0 && w->s->errors == 2;
    if (kind == 0) {
        uint8_t top = batch_top_byte(data, (size_t)len);
        p->ascii = top < 0x80;
        kind = p->ascii ? 1 : batch_decode(w, i, data, (size_t)len, top, &len);
        if (kind < 1) return kind ? SC_NOMEM : BATCH_INVALID;
        data = p->ascii ? data : w->text;
    }
    status = batch_pass(w, data, kind, len);
    if (status == FUSED_REFUSED) { /* a str's lone surrogate: again, read as tiktoken reads it */
        p->out.len = before;
        p->count = counted;
        kind = batch_replace_surrogates(w, d, &len);
        if (kind < 1) return kind;
        p->ascii = p->escape = 0;
        status = batch_pass(w, w->text, kind, len);
    }
    w->s->lengths[i + 1] = (int64_t)(p->counting ? p->count - counted : p->out.len - before);
    return status;
}

/* The next run for w into *run, recorded in w->runs: from the front for the front worker (not
 * in a first part), else from the back, down to the floor. 0: none left (or no memory). */
static int batch_claim(batch_worker *w, batch_span *run) {
    batch_shared *s = w->s;
    if (w->nruns == w->runs_cap) {
        size_t cap = w->runs_cap ? 2 * w->runs_cap : 64;
        batch_span *bigger = realloc(w->runs, cap * sizeof *bigger);
        if (!bigger) {
            w->status = SC_NOMEM;
            return 0;
        }
        w->runs = bigger;
        w->runs_cap = cap;
    }
#ifndef _WIN32
    pthread_mutex_lock(&s->lock);
#endif
    Py_ssize_t low = s->front > s->floor ? s->front : s->floor;
    if (w->front ? s->floor == 0 && s->front < s->back : s->back > low) {
        if (w->front) {
            run->first = s->front;
            run->last = s->back - s->front > s->run ? s->front + s->run : s->back;
            s->front = run->last;
        } else {
            run->last = s->back;
            run->first = s->back - low > s->run ? s->back - s->run : low;
            s->back = run->first;
        }
        w->runs[w->nruns++] = *run;
    } else {
        run->first = run->last = 0;
    }
#ifndef _WIN32
    pthread_mutex_unlock(&s->lock);
#endif
    return run->last > run->first;
}

/* Phase one (a thread's body): take runs of documents until none is left, or a stop. */
static void batch_encode_runs(batch_worker *w) {
    batch_shared *s = w->s;
    if (w->blank) {
        if (wc_init_private(&w->cache, s->private_bytes, w->p.shared, w->p.table) < 0) {
            w->status = SC_NOMEM;
            atomic_store(&s->cancel, 1);
            return;
        }
        w->blank = 0;
    }
    batch_span run;
    while (!atomic_load_explicit(&s->cancel, memory_order_relaxed) && batch_claim(w, &run)) {
        for (Py_ssize_t i = run.first; i < run.last; i++) {
            if (i > atomic_load(&s->first_bad)) return; /* an earlier document is invalid */
            int status = batch_one(w, i);
            if (status != SC_OK) {
                w->status = status;
                if (status != BATCH_INVALID) atomic_store(&s->cancel, 1);
                return;
            }
        }
    }
}

/* Phase two (BATCH_IDS on threads, a thread's body): jobs taken from a counter, each a run's
 * ids, as ranks, to their place in the final array (the front worker's are there already:
 * theirs only made ranks, in place). */
static void batch_copy_jobs(batch_worker *w) {
    batch_shared *s = w->s;
    for (long long j; (j = atomic_fetch_add(&s->job_next, 1)) < s->njobs;) {
        const batch_job *job = &s->jobs[j];
        size_t n = (size_t)(s->lengths[job->run.last] - s->lengths[job->run.first]);
        uint32_t *to = s->out + s->lengths[job->run.first];
        if (s->rank)
            for (size_t k = 0; k < n; k++) to[k] = s->rank[job->from[k]];
        else if (n && to != job->from)
            memcpy(to, job->from, n * sizeof *to);
        if (atomic_load_explicit(&s->cancel, memory_order_relaxed)) return;
    }
}

/* The copy's jobs (BATCH_IDS on threads; the GIL held, `lengths` the offsets): every run of the
 * workers but the front one, from their buffers; the front one's in place, if ids need ranks.
 * NULL: no memory. */
static batch_job *batch_jobs(batch_shared *s, batch_worker *w, int threads) {
    size_t count = 0;
    for (int t = 0; t < threads; t++) count += w[t].nruns;
    batch_job *jobs = PyMem_Malloc((count ? count : 1) * sizeof *jobs);
    if (!jobs) return NULL;
    s->njobs = 0;
    for (int t = 0; t < threads; t++) {
        if (w[t].front && !s->rank) continue;
        const uint32_t *from = w[t].front ? s->out : w[t].p.out.ids;
        for (size_t r = 0; r < w[t].nruns; r++) {
            batch_span run = w[t].runs[r];
            jobs[s->njobs++] = (batch_job){run, w[t].front ? s->out + s->lengths[run.first] : from};
            from += s->lengths[run.last] - s->lengths[run.first];
        }
    }
    return jobs;
}

/* BATCH_IDS with one thread, which wrote every document's ids in order: its buffer becomes the
 * array (as ranks, in place; cut back by batch_ids_fit, and *cap the room kept), so
 * the ids are neither copied nor their pages faulted in twice. NULL: no memory. */
static uint32_t *batch_hand_over(batch_shared *s, batch_worker *w, size_t total, size_t *cap) {
    sc_ids *out = &w->p.out;
    if (s->rank) {
        Py_BEGIN_ALLOW_THREADS
        for (size_t k = 0; k < total; k++) out->ids[k] = s->rank[out->ids[k]];
        Py_END_ALLOW_THREADS
    }
    batch_ids_fit(out, total);
    uint32_t *ids = out->ids;
    *cap = out->cap;
    out->ids = NULL;
    out->len = out->cap = 0;
    return ids;
}

/* A batch's IdArray freed (the GIL held): its buffer goes back to its encoder's idle arrays'
 * buffers (batch_ids_give_back, within their bound; cut to an eighth more than its ids, the
 * room the next such batch asks for), for the next batch's array: a fresh array's pages were
 * faulted in at each call (45 MB of ids: 200-230 faults on two threads, and on this VM a fresh
 * huge page's first write sometimes costs ~10 ms of system time). */
static void batch_array_return(IdArray *array) {
    size_t len = (size_t)array->len;
    sc_ids out = {array->ids, len, array->cap};
    FusedEncoder *home = (FusedEncoder *)array->home;
    batch_ids_give_back(home, &home->id_arrays, &out, len + len / 8 + 64);
    Py_DECREF(array->home);
}

/* A single call's array (encode_array) takes its buffer from the same pool, and gives it back
 * when freed, from ARRAY_POOLED ids on: grown by doubling afresh at each call, the buffer of a
 * warm call of 4 MB of code (937 K ids) was copied by realloc at each of its 14 doublings (a
 * memmove of 4 MB in all) and its pages faulted in until glibc's mmap threshold rose past it. A
 * smaller array stays the heap's (malloc reuses its memory at once; the pool is searched
 * whole at each take, so it holds few buffers). The room asked for is the ids guessed from the
 * last array's ids a unit (batch_unit's units; a third of a unit before any): a text like the
 * last takes the buffer it gave back, which has an eighth more room than those ids. A buffer of
 * more than `cache_bytes` is freed, not kept: an encoder that made one huge array holds no more
 * than its word cache's bound again for it (a batch's, within the pools' bound, are kept). */
#define ARRAY_POOLED ((size_t)1 << 16)

/* batch_unit of a str (a code point of it, or a byte of UTF-8 where all are ASCII). */
static int array_unit(PyObject *text) {
    int kind = PyUnicode_KIND(text);
    return PyUnicode_IS_ASCII(text) ? 0 : kind == PyUnicode_4BYTE_KIND ? 3 : kind;
}

/* Into *out (empty): an idle array's buffer with room for the ids `units` of `unit` are guessed
 * to make, when there is one and the guess reaches ARRAY_POOLED; else nothing (the pass grows
 * its own). The GIL held. */
static int array_take(FusedEncoder *self, int unit, size_t units, sc_ids *out) {
    double per = self->id_arrays.per_unit[unit];
    size_t guess = (size_t)((double)units * (per > 0 ? per : 1.0 / 3));
    if (!self->id_arrays.n || guess < ARRAY_POOLED) return SC_OK;
    return batch_ids_take(&self->id_arrays, out, guess);
}

/* A single call's array made: its ids a unit learned, its buffer the pool's when freed if it
 * is large enough and not too large (array_take). The GIL held. */
static void array_made(FusedEncoder *self, IdArray *array, int unit, size_t units) {
    if (units) self->id_arrays.per_unit[unit] = (double)array->len / (double)units;
    int kept = array->cap >= ARRAY_POOLED && array->cap * sizeof(uint32_t) <= self->cache_bytes;
    array->home = kept ? Py_NewRef((PyObject *)self) : NULL;
}

typedef void (*batch_body)(batch_worker *);

#ifndef _WIN32
typedef struct {
    batch_worker *w;
    batch_body body;
} batch_start;

static void *batch_thread(void *arg) {
    batch_start *start = arg;
    batch_worker *w = start->w;
    start->body(w);
    pthread_mutex_lock(&w->s->lock);
    w->s->running--;
    pthread_cond_signal(&w->s->done);
    pthread_mutex_unlock(&w->s->lock);
    return NULL;
}
#endif

/* Run body on each of the n workers' threads (the GIL held on entry and return; released
 * between, taken back every WAIT_MS to check signals). 0, or -1 with the signal's exception.
 * One worker, called from a thread that handles no signal (not the main one: a corpus
 * worker), runs here with the GIL released: no thread made and joined for each call. */
static int batch_run_threads(batch_shared *s, batch_worker *w, int n, batch_body body) {
    int signalled = 0;
#ifndef _WIN32
    if (n == 1 && !s->watch)
#endif
    {
        Py_BEGIN_ALLOW_THREADS
        for (int t = 0; t < n; t++) body(&w[t]);
        Py_END_ALLOW_THREADS
        return 0;
    }
#ifndef _WIN32
    batch_start starts[MAX_THREADS];
    int started = 0;
    PyThreadState *save = PyEval_SaveThread();
    s->running = n; /* before any thread can end */
    for (; started < n; started++) {
        starts[started] = (batch_start){&w[started], body};
        if (pthread_create(&w[started].thread, NULL, batch_thread, &starts[started]) != 0) break;
    }
    if (started < n) { /* no more threads: this one does the rest, signals unchecked */
        for (int t = started; t < n; t++) body(&w[t]);
        pthread_mutex_lock(&s->lock);
        s->running -= n - started;
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_lock(&s->lock);
    while (s->running > 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WAIT_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&s->done, &s->lock, &until) != ETIMEDOUT || signalled) continue;
        pthread_mutex_unlock(&s->lock);
        PyEval_RestoreThread(save);
        if (PyErr_CheckSignals() < 0) {
            signalled = 1;
            atomic_store(&s->cancel, 1);
        }
        save = PyEval_SaveThread();
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    for (int t = 0; t < started; t++) pthread_join(w[t].thread, NULL);
    PyEval_RestoreThread(save);
#endif
    return signalled ? -1 : 0;
}

/* Every document of texts (a sequence of str and bytes) or of the arrow arrays into docs;
 * *keep holds the texts alive. Returns the number, or -1 with an error set. */
static Py_ssize_t batch_collect(PyObject *texts, PyObject *arrow, PyObject **keep,
                                batch_doc **docs, size_t *bytes) {
    Py_ssize_t n = 0;
    *bytes = 0;
    if (arrow != Py_None) {
        /* (offsets address, data address, rows, first row, 8-byte offsets) */
        unsigned long long offsets_at, data_at;
        Py_ssize_t rows, first;
        int wide;
        if (!PyArg_ParseTuple(arrow, "KKnnp:arrow", &offsets_at, &data_at, &rows, &first, &wide))
            return -1;
        *docs = PyMem_Malloc((size_t)(rows ? rows : 1) * sizeof **docs);
        if (!*docs) return PyErr_NoMemory(), -1;
        const int32_t *o32 = (const int32_t *)(uintptr_t)offsets_at + first;
        const int64_t *o64 = (const int64_t *)(uintptr_t)offsets_at + first;
        /* An array of empty strings may have no data buffer: no offset is added to NULL. */
        const uint8_t *data = data_at ? (const uint8_t *)(uintptr_t)data_at : (const uint8_t *)"";
        for (Py_ssize_t i = 0; i < rows; i++) {
            int64_t start = wide ? o64[i] : o32[i], end = wide ? o64[i + 1] : o32[i + 1];
            (*docs)[i] = (batch_doc){data + start, (Py_ssize_t)(end - start), 0, 0};
            *bytes += (size_t)(end - start);
        }
        *keep = Py_NewRef(texts);
        return rows;
    }
    if (!(*keep = PySequence_Tuple(texts))) return -1;
    n = PyTuple_GET_SIZE(*keep);
    *docs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof **docs);
    if (!*docs) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PyTuple_GET_ITEM(*keep, i);
        batch_doc *d = &(*docs)[i];
        if (PyUnicode_Check(text)) {
            *d = (batch_doc){PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text),
                             PyUnicode_KIND(text), PyUnicode_IS_ASCII(text)};
            *bytes += (size_t)d->len * (size_t)d->kind;
        } else if (PyBytes_Check(text)) {
            *d = (batch_doc){PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text), 0, 0};
            *bytes += (size_t)d->len;
        } else {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %.100s: each text is a str or UTF-8 bytes",
                         i, Py_TYPE(text)->tp_name);
            return -1;
        }
    }
    return n;
}

/* The list of lists (BATCH_LISTS), from the threads' buffers (token indices). */
static PyObject *batch_lists(FusedEncoder *self, batch_shared *s, batch_worker *w, int threads) {
    PyObject *lists = PyList_New(s->n);
    PyObject *const *objects = (PyObject *const *)self->id_objects;
    for (int t = 0; lists && t < threads; t++) {
        const uint32_t *from = w[t].p.out.ids;
        for (size_t r = 0; r < w[t].nruns; r++) {
            for (Py_ssize_t i = w[t].runs[r].first; i < w[t].runs[r].last; i++) {
                Py_ssize_t n = (Py_ssize_t)s->lengths[i + 1];
                PyObject *list = PyList_New(n);
                if (!list) {
                    Py_CLEAR(lists);
                    return NULL;
                }
                for (Py_ssize_t k = 0; k < n; k++) PyList_SET_ITEM(list, k, Py_NewRef(objects[from[k]]));
                PyList_SET_ITEM(lists, i, list);
                if (n) from += n;
            }
        }
    }
    return lists;
}

/* What each thread's private cache learned offered to the primary and forgotten
 * (_shared_cache.h), the threads joined, the batch the primary's one reader: the GIL released
 * meanwhile, the primary marked held, so that a call that comes meanwhile goes apart rather than
 * read it (as lease_teach, _fused_lease.h). */
static void batch_teach(FusedEncoder *self, batch_worker *w, int threads) {
    word_cache *primary = self->primary;
    self->held = 1;
    Py_BEGIN_ALLOW_THREADS
    for (int t = 0; t < threads; t++) {
        if (!w[t].helper || w[t].blank) continue;
        wc_promote(primary, &w[t].cache);
        wc_forget(&w[t].cache);
    }
    Py_END_ALLOW_THREADS
    self->held = 0;
}

/* Phase one on the threads. A fresh primary (it never merged a piece: a new encoder's first
 * batch) is taught first: the back workers encode the last FIRST_PART of the documents (worker
 * 0, at the front, waits: its documents must start at the first), what they learned is
 * promoted, then they all do the rest. Each thread learning the common words of all its
 * documents alone was the first batch's cost: 16 threads merged 3.6x the pieces one did
 * (cl100k_base, 45 MB); a first part makes that part's learning the only one repeated. */
#define FIRST_PART 16 /* 1/16 of the documents */
static int batch_phase_one(FusedEncoder *self, batch_shared *s, const cache_lease *lease,
                           batch_worker *w, int threads) {
    word_cache *primary = self->primary;
    if (threads > 1 && lease->shared && self->readers == 1 && primary->merges == 0 &&
        s->n / FIRST_PART > (Py_ssize_t)threads * s->run)
        s->floor = s->n - s->n / FIRST_PART; /* the back workers' (the front one waits) */
    int failed = batch_run_threads(s, w, threads, batch_encode_runs);
    /* The rest after an invalid document in the last part too (not after a signal or no memory:
     * they set cancel): one before it is the first, which the error names. */
    if (!failed && s->floor != 0 && !atomic_load(&s->cancel)) {
        if (self->readers == 1) batch_teach(self, w, threads); /* else a call came to read it */
        s->floor = 0;
        failed = batch_run_threads(s, w, threads, batch_encode_runs);
    }
    for (int t = 0; t < threads; t++) failed |= w[t].status != SC_OK;
    return failed;
}

/* The batch's end for the caches (the GIL held), failed or not (every entry is right): one
 * thread's header written back to the cache it leased; or the threads' private caches pooled,
 * still learning (the last call out teaches the primary: lease_give). */
static void batch_promote(FusedEncoder *self, cache_lease *lease, batch_worker *w, int threads) {
    if (threads == 1) {
        *lease->cache = w[0].cache;
        return;
    }
    for (int t = 0; t < threads; t++) {
        if (!w[t].helper) continue;
        if (w[t].blank) { /* never made: the batch failed before its thread */
            PyMem_Free(w[t].helper);
            self->helpers.made--;
            continue;
        }
        *w[t].helper = w[t].cache;
        pool_put(&self->helpers, w[t].helper);
    }
}

/* A document's unit of length, the index of its ratio in ids_pool.per_unit: a byte of UTF-8 (an
 * ASCII str's code points are those bytes), else a code point of a 1-, 2- or 4-byte str. A
 * batch's ids are guessed from the last batch's ratio of each unit, never one unit's ratio
 * times another's length: the ids of a code point of CJK are three times those of its UTF-8
 * byte (a bytes batch after a str batch took three times the room its ids needed, or a third
 * of it the other way round), and a str's kind tells its script roughly. Each length is known
 * without reading the text (a str's UTF-8 length is not). */
static int batch_unit(const batch_doc *d) {
    return d->kind == 0 || d->ascii ? 0 : d->kind == 4 ? 3 : d->kind;
}

/* The ids that `units` (the texts' length in each unit) are guessed to make. */
static double batch_guess(const ids_pool *pool, const size_t units[4]) {
    double ids = 0;
    for (int u = 0; u < 4; u++)
        ids += (double)units[u] * (pool->per_unit[u] > 0 ? pool->per_unit[u] : 1.0 / 3);
    return ids;
}

/* Each unit's ratio of ids learned from a batch that succeeded; those it had none of kept. */
static void batch_learn(ids_pool *pool, const batch_shared *s, const size_t units[4]) {
    int64_t ids[4] = {0, 0, 0, 0};
    for (Py_ssize_t i = 0; i < s->n; i++) ids[batch_unit(&s->docs[i])] += s->lengths[i + 1];
    for (int u = 0; u < 4; u++)
        if (units[u]) pool->per_unit[u] = (double)ids[u] / (double)units[u];
}

/* A MemoryError naming what the batch could not allocate, and how large. */
static void batch_nomem(const char *what, size_t bytes) {
    PyErr_Format(PyExc_MemoryError,
                 "encode_batch: out of memory for %s (%zu bytes); fewer threads or smaller "
                 "batches need less", what, bytes);
}

/* The error of a failed batch (phase one): a signal's is set already. */
static void batch_error(batch_shared *s, batch_worker *w, int threads) {
    if (PyErr_Occurred()) return;
    long long bad = atomic_load(&s->first_bad);
    for (int t = 0; bad < s->n && t < threads; t++) {
        if (w[t].status != BATCH_INVALID || w[t].bad_doc != bad) continue;
        PyObject *args = Py_BuildValue("(Lns)", bad, w[t].bad_offset, w[t].bad_reason);
        if (args) PyErr_SetObject(InvalidDocument, args);
        Py_XDECREF(args);
        return;
    }
    /* which of a thread's buffers failed is not kept: name them, and only the cache's bound */
    PyErr_Format(PyExc_MemoryError,
                 "encode_batch: out of memory in a batch thread (its ids, its decoded text or its "
                 "private word cache of up to %zu bytes); fewer threads or smaller batches need "
                 "less", s->private_bytes);
}

static PyObject *fused_encode_batch(FusedEncoder *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!self->core) {
        PyErr_SetString(PyExc_RuntimeError, "FusedEncoder.__init__ was not called");
        return NULL;
    }
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "encode_batch() takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    long threads = PyLong_AsLong(args[2]), mode = PyLong_AsLong(args[4]);
    int watch = PyObject_IsTrue(args[6]);
    const char *errors = PyUnicode_Check(args[3]) ? PyUnicode_AsUTF8(args[3]) : NULL;
    if (watch < 0 || PyErr_Occurred()) return NULL;
    int how = !errors ? -1 : !strcmp(errors, "strict") ? 0 : !strcmp(errors, "replace") ? 1
                           : !strcmp(errors, "surrogateescape") ? 2 : -1;
    if (how < 0 || threads < 1 || mode < BATCH_COUNTS || mode > BATCH_LISTS) {
        PyErr_SetString(PyExc_ValueError, "encode_batch: errors is 'strict', 'replace' or "
                                          "'surrogateescape', threads >= 1, mode 0, 1 or 2");
        return NULL;
    }
    Py_buffer lengths_view;
    if (PyObject_GetBuffer(args[5], &lengths_view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *keep = NULL, *result = NULL;
    batch_doc *docs = NULL;
    batch_worker *w = NULL;
    cache_lease lease;
    int leased = 0;
    size_t bytes, reserve = 0; /* reserve: the ids a thread's buffer has room for at first */
    batch_shared s;
    memset(&s, 0, sizeof s);
    Py_ssize_t n = batch_collect(args[0], args[1], &keep, &docs, &bytes);
    if (n < 0) goto done;
    if (lengths_view.len != (n + 1) * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "encode_batch: lengths must hold len(texts) + 1 int64s");
        goto done;
    }
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > n) threads = n ? (long)n : 1;
    size_t units[4] = {0, 0, 0, 0}; /* the texts' length in each unit (batch_unit) */
    for (Py_ssize_t i = 0; i < n; i++) units[batch_unit(&docs[i])] += (size_t)docs[i].len;
    if ((size_t)threads > bytes / INLINE_BYTES) /* a thread for each INLINE_BYTES, at least one */
        threads = bytes < INLINE_BYTES ? 1 : (long)(bytes / INLINE_BYTES);
    s.docs = docs;
    s.n = n;
    s.lengths = lengths_view.buf;
    s.lengths[0] = 0;
    s.errors = how;
    s.watch = watch;
    s.rank = self->api->rank_table(self->vocab);
    s.private_bytes = self->cache_bytes / PRIVATE_SHARE;
    s.run = n / ((Py_ssize_t)threads * 16);
    s.run = s.run < 1 ? 1 : s.run > 64 ? 64 : s.run;
    s.back = n;
    atomic_init(&s.job_next, 0);
    atomic_init(&s.cancel, 0);
    atomic_init(&s.first_bad, n);
    /* A thread's share of the ids expected (batch_guess: by the last batch's ids a unit; 3
     * units an id before the first), an eighth more: seldom grown (the threads share the
     * documents by time, not by ids; a buffer grown is faulted in again past its room). */
    double guess = batch_guess(&self->id_buffers, units);
    reserve = (size_t)(guess * 1.125 / (double)threads) + 64;
    size_t whole = (size_t)(guess * 1.0625) + 64; /* the array's */
    if (lease_take(self, &lease, threads > 1, bytes < INLINE_BYTES) < 0) goto done;
    leased = 1;
    if (!(w = PyMem_Calloc((size_t)threads, sizeof *w))) {
        batch_nomem("the batch threads' state", (size_t)threads * sizeof *w);
        goto done;
    }
    for (int t = 0; t < threads; t++) {
        w[t].s = &s;
        fused_pass *p = &w[t].p;
        p->api = self->api;
        p->vocab = self->vocab;
        p->table = self->api->table_of(self->vocab);
        p->pattern = self->pattern;
        p->counting = mode == BATCH_COUNTS;
        p->limit = UINT64_MAX;
        p->cache = &w[t].cache;
        p->shared = lease.shared;
        if (threads == 1) {
            w[t].cache = *lease.cache;
        } else if (self->helpers.n) {
            w[t].helper = self->helpers.items[--self->helpers.n];
            lease_point(w[t].helper, lease.shared);
            w[t].cache = *w[t].helper;
        } else if ((w[t].helper = PyMem_Calloc(1, sizeof *w[t].helper))) {
            w[t].blank = 1;
            self->helpers.made++;
        } else {
            batch_nomem("a batch thread's private word cache", sizeof *w[t].helper);
            goto done;
        }
        /* The front worker's buffer becomes the array (alone: batch_hand_over; on threads, its
         * documents' ids are the array's first, and the others' are copied after them): from
         * the arrays' pool, with room for all the ids expected. */
        w[t].front = t == 0;
        int arrayed = w[t].front && mode == BATCH_IDS;
        size_t room = arrayed ? whole : reserve;
        if (mode != BATCH_COUNTS &&
            batch_ids_take(arrayed ? &self->id_arrays : &self->id_buffers, &p->out, room) != SC_OK) {
            batch_nomem("a batch thread's ids", room * sizeof(uint32_t));
            goto done;
        }
    }
    int failed = 0;
#ifndef _WIN32
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.done, NULL);
#endif
    if (bytes < INLINE_BYTES) /* too little to be worth a thread: here, the GIL held */
        batch_encode_runs(&w[0]);
    else
        failed = batch_phase_one(self, &s, &lease, w, (int)threads);
    for (int t = 0; t < threads; t++) failed |= w[t].status != SC_OK;
    if (!failed) batch_learn(&self->id_buffers, &s, units); /* for the next batch's guess */
    if (failed) {
        batch_error(&s, w, threads);
    } else if (mode == BATCH_COUNTS) {
        result = Py_NewRef(Py_None);
    } else if (mode == BATCH_LISTS) {
        result = batch_lists(self, &s, w, threads);
    } else {
        for (Py_ssize_t i = 0; i < n; i++) s.lengths[i + 1] += s.lengths[i];
        size_t total = (size_t)s.lengths[n];
        IdArray *array = PyObject_New(IdArray, &IdArrayType);
        if (array) {
            sc_ids room = {NULL, 0, 0};
            array->len = (Py_ssize_t)total;
            array->home = NULL;
            batch_job *jobs = NULL;
            if (threads == 1) {
                array->ids = batch_hand_over(&s, &w[0], total, &room.cap);
            } else if (batch_ids_resize(&w[0].p.out, total ? total : 1) == SC_OK) {
                batch_ids_fit(&w[0].p.out, total);
                room = w[0].p.out; /* the front worker's ids in place, the others' after */
                w[0].p.out = (sc_ids){NULL, 0, 0};
                array->ids = s.out = room.ids;
                if (!(jobs = batch_jobs(&s, w, (int)threads))) array->ids = NULL;
            } else {
                array->ids = NULL;
            }
            array->cap = room.cap;
            if (!array->ids) {
                if (room.ids) batch_ids_give_back(self, &self->id_arrays, &room, room.cap);
                Py_CLEAR(array);
                batch_nomem("the batch's ids", total * sizeof(uint32_t));
            } else if (threads > 1) {
                s.jobs = jobs;
                if (batch_run_threads(&s, w, (int)threads, batch_copy_jobs) < 0) Py_CLEAR(array);
            }
            PyMem_Free(jobs);
            if (array) array->home = Py_NewRef((PyObject *)self);
        }
        result = (PyObject *)array;
    }
#ifndef _WIN32
    pthread_mutex_destroy(&s.lock);
    pthread_cond_destroy(&s.done);
#endif
done:
    if (leased && w) batch_promote(self, &lease, w, (int)threads);
    if (leased) lease_give(self, &lease, bytes < INLINE_BYTES);
    for (int t = 0; w && t < threads; t++) {
        if (mode == BATCH_IDS && w[t].front) /* none left if the array took them */
            batch_ids_give_back(self, &self->id_arrays, &w[t].p.out, w[t].p.out.cap);
        else if (mode != BATCH_COUNTS)
            batch_ids_give_back(self, &self->id_buffers, &w[t].p.out, reserve);
        else
            self->api->ids_free(&w[t].p.out);
        free(w[t].p.buf);
        free(w[t].text);
        free(w[t].runs);
    }
    PyMem_Free(w);
    PyMem_Free(docs);
    Py_XDECREF(keep);
    PyBuffer_Release(&lengths_view);
    return result;
}

static int batch_exec(PyObject *module) {
    InvalidDocument = PyErr_NewException("streamcodec.engine._fused.InvalidDocument",
                                         PyExc_ValueError, NULL);
    return InvalidDocument ? PyModule_AddObjectRef(module, "InvalidDocument", InvalidDocument) : -1;
}
