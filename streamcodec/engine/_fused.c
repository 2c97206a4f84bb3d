/* streamcodec.engine._fused: ordinary text to ids in one pass, for the patterns the native
 * scanner knows.
 *
 *     FusedEncoder(core, pattern, *, cache_bytes)   core: a streamcodec.pieces._core.Core
 *                                   (cache_bytes: engine.ordinary.DEFAULT_CACHE_BYTES, its home)
 *     .encode(text, start, end, errors) -> list[int]
 *     .encode_array(text, start, end, errors) -> IdArray   (uint32 through the buffer protocol)
 *     .encode_array(text, start, end, errors, pair) -> (IdArray, clean)   (_fused_parts.h)
 *     .count(text, start, end, errors, limit) -> int        (stops once past limit; -1: none)
 *     .cache_info() -> dict
 *     .encode_batch(texts, arrow, threads, errors, mode, lengths, watch)   (_fused_batch.h)
 *
 * Each must equal ``core.encode_pieces(regex.findall(pattern, text[start:end]), errors=errors)``,
 * the composition of the scanner (streamcodec.text._scan, equal to `regex`) and the piece
 * encoder (streamcodec.pieces.piece.PieceEncoder): see streamcodec.engine.ordinary, its twin.
 *
 * The pass, with the GIL released, for each piece: cut it (text/_scan_next.h; a 2- or 4-byte
 * str's stretches below U+0100 are cut as 1-byte strings, _fused_kind.h), UTF-8 it, then
 *   1. the first level (_first_level.h, part of the word cache): a piece of up to 15 bytes that
 *      is a common token, or was met before, gives its ids (one probe of one line);
 *   2. the whole-piece rule: a piece that is a token is that token (one table probe, inline:
 *      pieces/_core_lookup.h; the table's filter first, which most pieces that are no token
 *      leave without the probe);
 *   3. the word cache's sets (_word_cache.h): a piece met before gives its ids (one probe);
 *   4. otherwise the core's rank merge or backtracking, and the ids are offered to the first
 *      level, or, if it turns them away, to the sets.
 * Ids are appended to one uint32 buffer of token indices, which becomes a list (from int
 * objects made once per vocabulary), an array (ranks, no copy), or only a count. An ASCII
 * block's pieces (most of the warm pass) go through a loop of their own, one for each output
 * (_fused_hits.h): the first level probed and answered in registers, the room and the count's
 * limit checked once a block.
 *
 * The text is taken in blocks of BLOCK code points, ending on a piece end: between two blocks
 * the GIL is taken back and signals are checked, so Ctrl-C stops a long encode within a block.
 * A str is immutable and the caller's reference keeps it alive, so the buffer read without the
 * GIL cannot change. The encoder has one word cache, leased to each call with the GIL held:
 * written by a call alone, read by calls at once, each beside a private cache (_fused_lease.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "../_utf8.h"
#include "../pieces/_core.h"
#include "../text/_scan_pattern.h"
#include "../text/_scan_simd.h" /* the block step's level: simd() */
#include "_word_cache.h"
#include "_shared_cache.h"

#define BLOCK (1 << 20)       /* code points between two checks for signals */
#define NOGIL_LENGTH 4096     /* shorter texts keep the GIL: releasing it costs more */

enum { FUSED_REFUSED = 1, FUSED_LIMIT = 2, FUSED_SIGNAL = 3, FUSED_MISSED = 4 /* fused_cached */ };

/* One call's state, used without the GIL. */
typedef struct {
    const sc_api *api;
    const sc_vocab *vocab;
    const sc_table *table;
    word_cache *cache;
    const word_cache *shared; /* the encoder's primary cache, read only, after `cache`'s
                               * first level, for a call that reads it (_fused_lease.h); NULL:
                               * none */
    int pattern, escape, ascii, counting;
    sc_ids out;               /* token indices (counting: one piece's, then dropped) */
    uint64_t count;           /* counting: the ids so far */
    uint64_t limit;           /* counting: stop once count > limit */
    uint8_t *buf;             /* a piece's UTF-8 */
    size_t buf_cap;
    Py_ssize_t refused_start, refused_end;
    Py_ssize_t read; /* the text before it read ahead of the pass (_fused_parts.h) */
    /* encode_array's look for a pair of code units there (_fused_parts.h), while `probing`:
     * `clean`, the answer; `budget`, candidates left */
    Py_UCS4 pair[2];
    int probing;
    Py_ssize_t pair_start, clean, budget;
    /* A 2- or 4-byte str's own UTF-8 (fused_ask_utf8), or NULL; byte utf8_off of it starts code
     * point utf8_at (K(fused_utf8), _fused_kind.h) */
    const uint8_t *utf8;
    Py_ssize_t utf8_len, utf8_at, utf8_off;
    Py_ssize_t wide; /* code units K(fused) read as they are, past one above U+00FF */
    /* The common blocks' loop: their lines asked for ahead or not (fused_choose, _fused_hits.h) */
    int ahead, left;   /* the loop; common blocks left in this epoch */
    unsigned turn;     /* epochs so far */
    uint64_t since, best[2]; /* the epoch's start (cycles); each loop's faster trial's time */
} fused_pass;

static int fused_grow_buffer(fused_pass *p, size_t need) {
    uint8_t *bigger = realloc(p->buf, need + 256);
    if (!bigger) return SC_NOMEM;
    p->buf = bigger;
    p->buf_cap = need + 256;
    return SC_OK;
}

/* Append n ids (or, counting, count them). */
static inline int fused_emit(fused_pass *p, const uint32_t *ids, size_t n) {
    if (p->counting) {
        p->count += n;
        return p->count > p->limit ? FUSED_LIMIT : SC_OK;
    }
    /* Room is checked here: the core's ids_reserve is a call through the capsule's pointer,
     * which cost more than the rest of a one-token piece's emit; it is made only to grow. */
    if (p->out.cap - p->out.len < n && p->api->ids_reserve(&p->out, n) != SC_OK) return SC_NOMEM;
    memcpy(p->out.ids + p->out.len, ids, n * sizeof *ids);
    p->out.len += n;
    return SC_OK;
}

/* A first-level entry's ids (or, counting, their number): straight-line, as most pieces end
 * here. The entry's four slots are copied whatever its count (room for FL_PACKED is made), the
 * length advanced by the count: no branch on it but one, for a packed entry (more than FL_IDS
 * ids), unpacked. */
static inline int fused_emit_entry(fused_pass *p, const fl_entry *e) {
    uint32_t first = e->ids[0];
    size_t n = first >> 24;
    if (p->counting) {
        p->count += n;
        return p->count > p->limit ? FUSED_LIMIT : SC_OK;
    }
    if (p->out.cap - p->out.len < FL_PACKED &&
        p->api->ids_reserve(&p->out, FL_PACKED) != SC_OK)
        return SC_NOMEM;
    uint32_t *to = p->out.ids + p->out.len;
    if (n > FL_IDS) {
        fl_unpack(e, n, to);
        p->out.len += n;
        return SC_OK;
    }
    to[0] = first & FL_INDEX;
    to[1] = e->ids[1];
    to[2] = e->ids[2];
    to[3] = e->ids[3];
    p->out.len += n;
    return SC_OK;
}

#if defined(__GNUC__)
#define FUSED_COLD __attribute__((noinline))
#else
#define FUSED_COLD
#endif

/* The ids of a piece the word cache holds: a batch thread's own first level (`near`: the
 * tokens and short pieces this thread met that the primary's missed, a line of a table that
 * stays in the core's own cache), its sets (a batch's primary's, read only, then a batch
 * thread's own), or its long store (the primary's, then the thread's); FUSED_MISSED when none
 * does. *words is the piece's key in the sets when *in_sets (for the merge's offer), and *hash
 * the sets' hash of it (0: not computed). */
static inline int fused_cached(fused_pass *p, const uint8_t *b, size_t len, const fl_key *key,
                               wc_key *words, int *in_sets, uint64_t *hash) {
    word_cache *c = p->cache;
    const word_cache *shared = p->shared;
    if (key && c->near.lines) {
        const fl_entry *e = fl_get(&c->near, key);
        if (e || (e = fl_get_pair(&c->near, key))) return fused_emit_entry(p, e);
    }
    /* The sets hold pieces of up to WC_KEY bytes and WC_IDS ids, the long store the others of
     * up to LS_KEY bytes: a piece of more than WC_IDS bytes may be in either. */
    int in_longs = len > WC_IDS && len <= LS_KEY;
    const wc_entry *found = NULL;
    *in_sets = len <= WC_KEY && (c->sets || (shared && shared->sets));
    if (*in_sets) {
        wc_key_set(words, b, len);
        *hash = words->hash;
        if (shared && (found = wc_peek(shared, words))) {
            c->hits++;
            return fused_emit(p, found->ids, found->n);
        }
    }
    if (*in_sets && (found = wc_get(c, words))) return fused_emit(p, found->ids, found->n);
    if (in_longs && (c->longs.arena || (shared && shared->longs.arena))) {
        if (!*hash) *hash = wc_hash(b, len); /* the same hash (wc_key_set's) */
        const ls_record *hit = shared ? ls_find(&shared->longs, b, len, *hash) : NULL;
        c->longs.hits += hit != NULL;
        if (hit || (hit = ls_get(&c->longs, b, len, *hash)))
            return fused_emit(p, ls_ids(hit), hit->n);
    }
    return FUSED_MISSED;
}

/* A piece the first level did not answer (key: its key there, or NULL when it has no key: too
 * long, or no first level): its pair line's second way (fl_get_pair: a piece whose own line was
 * full when it was learned), the whole-piece rule and the word cache (fused_cached), or the
 * core's merge, whose answer is offered to the first level (a batch thread's: its own,
 * `near`), the sets or the long store (wc_learn). Out of line: the hit path that inlines the
 * first level stays small.
 *
 * Which is asked first, the vocabulary's table or the cache: a piece with a first-level key
 * that got here is seldom a token (the first level is filled with the short tokens and learns
 * those that lost their line: 16-89 tokens a warm count of the multilingual sample against
 * 9,500 pieces the sets answer; prose and code alike), nor is a long piece that ends past ASCII
 * (a word of Cyrillic or Greek: 247 tokens against 4,500 cached); a long ASCII piece often is
 * (code's indentation: 7,400 tokens against 2,500 cached). Asking the cache first saves the
 * table filter's load, a wait on memory, for most pieces here. Either order is exact: the
 * cache holds a piece's own ids, which the whole-piece rule and the merge would give. */
static FUSED_COLD int fused_slow(fused_pass *p, const uint8_t *b, size_t len, uint64_t head,
                                 const fl_key *key) {
    word_cache *c = p->cache;
    wc_key words;
    int in_sets = 0, status = FUSED_MISSED, cache_first = key || b[len - 1] >= 0x80;
    uint64_t hash = 0;
    const fl_entry *e = key ? fl_get_pair(&c->first, key) : NULL;
    if (e) return fused_emit_entry(p, e);
    if (cache_first) status = fused_cached(p, b, len, key, &words, &in_sets, &hash);
    if (status != FUSED_MISSED) return status;
    int64_t token = sc_table_lookup(p->table, b, len, head);
    if (token >= 0) {
        uint32_t t = (uint32_t)token;
        if (key) wc_learn(c, key, NULL, b, len, &t, 1);
        return fused_emit(p, &t, 1);
    }
    if (!cache_first) status = fused_cached(p, b, len, key, &words, &in_sets, &hash);
    if (status != FUSED_MISSED) return status;
    size_t before = p->out.len;
    c->merges++;
    if (p->api->encode_merged(p->vocab, b, len, &p->out) != SC_OK) return SC_NOMEM;
    size_t n = p->out.len - before;
    wc_learn(c, key, in_sets ? &words : NULL, b, len, p->out.ids + before, n);
    if (!p->counting) return SC_OK;
    p->out.len = before;
    p->count += n;
    return p->count > p->limit ? FUSED_LIMIT : SC_OK;
}

/* A piece of up to FL_KEY bytes whose first-level key is k (the first level has lines): its
 * entry, or the slow path. */
static inline int fused_keyed(fused_pass *p, const uint8_t *b, size_t len, const fl_key *k) {
    const fl_entry *e = fl_get(&p->cache->first, k);
    return e ? fused_emit_entry(p, e) : fused_slow(p, b, len, k->k0, k);
}

/* fused_piece for a piece that 16 bytes cannot be read from (at the text's end): out of line. */
static FUSED_COLD int fused_piece_unpadded(fused_pass *p, const uint8_t *b, size_t len) {
    uint64_t head = sc_head(b, len);
    if (len > FL_KEY || !p->cache->first.lines) return fused_slow(p, b, len, head, NULL);
    fl_key k;
    fl_key_set(&k, b, len, head);
    return fused_keyed(p, b, len, &k);
}

/* One piece's bytes: the first level (a token or a short piece seen before, one line), else the
 * slow path. `padded`: b[0:16] may be read whatever len is, so the key comes from two masked
 * loads with no branch on the length (fl_key_set_padded). */
static inline int fused_piece(fused_pass *p, const uint8_t *b, size_t len, int padded) {
    if (!padded) return fused_piece_unpadded(p, b, len);
    if (len > FL_KEY || !p->cache->first.lines)
        return fused_slow(p, b, len, sc_head_padded(b, len), NULL);
    fl_key k;
    fl_key_set_padded(&k, b, len);
    return fused_keyed(p, b, len, &k);
}

#define FUSED_WINDOW 4096 /* code units of a 2- or 4-byte string read as 1-byte at a time */
#define FUSED_AFTER 32    /* code units read as they are past one above U+00FF */
#define FUSED_WIDE_SHARE 16 /* a str read through its UTF-8 has one unit in it read as it is */

#include "_fused_hits.h"

#define KIND_HEADER "engine/_fused_kind.h"
#include "../_each_kind.h"
#include "_fused_parts.h"

/* ------------------------------------------------------------------ the ids as an array */

/* uint32 ids that numpy (or memoryview, array, ...) reads through the buffer protocol, with no
 * copy: numpy.frombuffer(ids, dtype=numpy.uint32). */
typedef struct {
    PyObject_HEAD uint32_t *ids;
    Py_ssize_t len;
    size_t cap;     /* ids the buffer has room for */
    PyObject *home; /* the encoder whose idle id buffers take it back (a batch's array, or a
                     * large one of encode_array: array_made); else NULL */
} IdArray;

static void batch_array_return(IdArray *array);

static void id_array_dealloc(IdArray *self) {
    if (self->home)
        batch_array_return(self); /* _fused_batch.h */
    else
        free(self->ids);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int id_array_getbuffer(IdArray *self, Py_buffer *view, int flags) {
    static Py_ssize_t itemsize = sizeof(uint32_t);
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->ids, self->len * itemsize, 0, flags) < 0)
        return -1;
    view->itemsize = itemsize;
    view->format = (flags & PyBUF_FORMAT) ? "I" : NULL;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) ? &self->len : NULL;
    view->strides = (flags & PyBUF_STRIDES) ? &view->itemsize : NULL;
    return 0;
}

static Py_ssize_t id_array_length(IdArray *self) { return self->len; }

static PyBufferProcs id_array_buffer = {(getbufferproc)id_array_getbuffer, NULL};
static PySequenceMethods id_array_sequence = {.sq_length = (lenfunc)id_array_length};

static PyTypeObject IdArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "streamcodec.engine._fused.IdArray",
    .tp_basicsize = sizeof(IdArray),
    .tp_dealloc = (destructor)id_array_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "uint32 token ids, read through the buffer protocol (numpy.frombuffer).",
    .tp_as_buffer = &id_array_buffer,
    .tp_as_sequence = &id_array_sequence,
};

/* ------------------------------------------------------------------ the encoder */

/* Word caches not in use, taken and given back with the GIL held. */
typedef struct {
    word_cache **items;
    Py_ssize_t n, cap, made; /* made: caches of this pool alive, in use or not */
} cache_pool;

/* Put c in the pool; out of memory, drop it (the memory stays bounded). */
static void pool_put(cache_pool *pool, word_cache *c) {
    if (pool->n == pool->cap) {
        Py_ssize_t cap = pool->cap ? 2 * pool->cap : 4;
        word_cache **bigger = PyMem_Realloc(pool->items, (size_t)cap * sizeof *bigger);
        if (!bigger) {
            wc_free(c);
            PyMem_Free(c);
            pool->made--;
            return;
        }
        pool->items = bigger;
        pool->cap = cap;
    }
    pool->items[pool->n++] = c;
}

static void pool_free(cache_pool *pool) {
    for (Py_ssize_t i = 0; i < pool->n; i++) {
        wc_free(pool->items[i]);
        PyMem_Free(pool->items[i]);
    }
    PyMem_Free(pool->items);
}

/* The hits, misses, merges and bytes of a cache, added to *sums. */
static void cache_sums(const word_cache *c, uint64_t sums[4]) {
    sums[0] += c->hits + c->first.hits + c->longs.hits;
    sums[1] += c->misses + c->first.misses;
    sums[2] += c->merges;
    sums[3] += wc_bytes(c);
}

/* ... of a pool's idle caches. */
static void pool_sums(const cache_pool *pool, uint64_t sums[4]) {
    for (Py_ssize_t i = 0; i < pool->n; i++) cache_sums(pool->items[i], sums);
}

/* A batch's threads' id buffers not in use, kept for the next batch (_fused_batch.h). */
typedef struct {
    sc_ids *items;
    Py_ssize_t n, cap;
    size_t bytes;       /* their room, in bytes */
    double per_unit[4]; /* the last batch's ids per unit of each kind (batch_unit); 0: none yet */
} ids_pool;

typedef struct {
    PyObject_HEAD PyObject *core; /* keeps the vocabulary and the id objects alive */
    const sc_api *api;
    sc_vocab *vocab;
    void *const *id_objects;
    int pattern;
    size_t cache_bytes;
    word_cache *primary; /* the word cache, leased to the calls (_fused_lease.h) */
    int held, sharing, solo; /* its lease: held by a call; calls read it; lone calls in a row */
    Py_ssize_t readers;      /* calls that read it */
    uint64_t arrivals;       /* calls so far */
    cache_pool helpers; /* private caches not in use (_shared_cache.h), kept learning */
    ids_pool id_buffers; /* a batch's threads' id buffers not in use */
    ids_pool id_arrays;  /* and buffers for its ids array (_fused_batch.h) */
    const void *last_text; /* the str of the last call (compared, never dereferenced) */
    Py_ssize_t last_length, last_wide; /* its length; its fused_pass.wide, read as it is */
} FusedEncoder;

static int array_unit(PyObject *text); /* a single call's array's pooled buffer: _fused_batch.h */
static int array_take(FusedEncoder *self, int unit, size_t units, sc_ids *out);
static void array_made(FusedEncoder *self, IdArray *array, int unit, size_t units);

static const sc_api *core_api(void) {
    const sc_api *api = PyCapsule_Import("streamcodec.pieces._core._C_API", 0);
    if (api && api->version != 3) {
        PyErr_Format(PyExc_ImportError, "streamcodec.pieces._core: C API %d, not 3", api->version);
        return NULL;
    }
    return api;
}

static int fused_init(FusedEncoder *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"core", "pattern", "cache_bytes", NULL};
    PyObject *core;
    int pattern;
    Py_ssize_t cache_bytes = PY_SSIZE_T_MIN; /* required: its default is engine.ordinary's alone */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oi|$n:FusedEncoder", kwlist, &core, &pattern,
                                     &cache_bytes))
        return -1;
    if (cache_bytes == PY_SSIZE_T_MIN) {
        PyErr_SetString(PyExc_TypeError, "FusedEncoder() needs cache_bytes=");
        return -1;
    }
    if (self->core) {
        PyErr_SetString(PyExc_RuntimeError, "FusedEncoder is already initialized");
        return -1;
    }
    if (pattern < 0 || pattern >= PATTERN_COUNT || pattern == CUT_WORDS) {
        PyErr_Format(PyExc_ValueError, "unknown pattern number %d", pattern);
        return -1;
    }
    if (cache_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "cache_bytes must be >= 0 (0: no word cache)");
        return -1;
    }
    const sc_api *api = core_api();
    sc_vocab *vocab = api ? api->vocab_of(core) : NULL;
    void *const *id_objects = vocab ? api->id_objects(core) : NULL;
    if (!id_objects) return -1;
    self->api = api;
    self->vocab = vocab;
    self->id_objects = id_objects;
    self->pattern = pattern;
    self->cache_bytes = (size_t)cache_bytes;
    self->core = Py_NewRef(core);
    /* The cache now: filling its first level with the vocabulary is the encoder's build, not
     * its first call's. */
    word_cache *c = PyMem_Malloc(sizeof *c);
    if (!c || wc_init(c, self->cache_bytes, self->api->table_of(vocab)) < 0) {
        PyMem_Free(c);
        PyErr_NoMemory();
        return -1;
    }
    self->primary = c;
    return 0;
}

static void fused_dealloc(FusedEncoder *self) {
    if (self->primary) wc_free(self->primary);
    PyMem_Free(self->primary);
    pool_free(&self->helpers);
    ids_pool *pools[2] = {&self->id_buffers, &self->id_arrays};
    for (int k = 0; k < 2; k++) {
        for (Py_ssize_t i = 0; i < pools[k]->n; i++) self->api->ids_free(&pools[k]->items[i]);
        PyMem_Free(pools[k]->items);
    }
    Py_XDECREF(self->core);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#include "_fused_lease.h"

/* Parse (text, start, end, errors[, limit]) with start and end as regex's pos and endpos. */
static int parse(FusedEncoder *self, PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected,
                 const char *name, PyObject **text, Py_ssize_t *start, Py_ssize_t *end,
                 fused_pass *p) {
    if (!self->core) {
        PyErr_SetString(PyExc_RuntimeError, "FusedEncoder.__init__ was not called");
        return -1;
    }
    if (nargs != expected) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected, nargs);
        return -1;
    }
    if (!PyUnicode_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s() needs a str, not %.100s", name, Py_TYPE(args[0])->tp_name);
        return -1;
    }
    *text = args[0];
#if PY_VERSION_HEX < 0x030C0000
    /* Before 3.12 a str made by the legacy C API may not be in its PEP 393 form yet. */
    if (PyUnicode_READY(*text) < 0) return -1;
#endif
    Py_ssize_t length = PyUnicode_GET_LENGTH(*text);
    *start = PyLong_AsSsize_t(args[1]);
    *end = *start == -1 && PyErr_Occurred() ? -1 : PyLong_AsSsize_t(args[2]);
    if (*end == -1 && PyErr_Occurred()) return -1;
    *start = *start < 0 ? 0 : *start > length ? length : *start;
    *end = *end < *start ? *start : *end > length ? length : *end;
    const char *errors = PyUnicode_Check(args[3]) ? PyUnicode_AsUTF8(args[3]) : NULL;
    if (!errors || (strcmp(errors, "strict") && strcmp(errors, "surrogateescape"))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "errors must be 'strict' or 'surrogateescape'");
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->api = self->api;
    p->vocab = self->vocab;
    p->table = self->api->table_of(self->vocab);
    p->pattern = self->pattern;
    p->escape = errors[0] == 's' && errors[1] == 'u';
    p->ascii = PyUnicode_IS_ASCII(*text);
    p->limit = UINT64_MAX;
    return 0;
}

/* A 2- or 4-byte str encoded again by this encoder, whole (the same object and length as the
 * last call's; another str at a freed one's place only costs its UTF-8), whose last pass read
 * at least one code unit in FUSED_WIDE_SHARE as it is (past a code point above U+00FF): it is
 * read through its own UTF-8, which the str keeps once asked for (K(fused_utf8)). Text of
 * ASCII with a curly quote here and there (prose and code as 2-byte strs) keeps its 1-byte
 * windows, which it reads as fast. A first call does not ask: the str would keep its UTF-8 (up
 * to 4 bytes a code point) for one pass. A str with a lone surrogate has no UTF-8 and is read
 * as it is. */
static void fused_ask_utf8(FusedEncoder *self, PyObject *text, Py_ssize_t start, Py_ssize_t end,
                           fused_pass *p) {
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int again = (const void *)text == self->last_text && length == self->last_length;
    self->last_text = text;
    self->last_length = length;
    if (!again) self->last_wide = -1; /* known after this call */
    if (!again || self->last_wide < length / FUSED_WIDE_SHARE ||
        PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND || start != 0 || end != length)
        return;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (!utf8) {
        PyErr_Clear();
        return;
    }
    p->utf8 = (const uint8_t *)utf8;
    p->utf8_len = size;
}

/* Run the pass over text[start:end] block by block (see the module comment). SC_OK, or -1
 * with a Python error set (p->out is the caller's to free either way). */
static int run(FusedEncoder *self, PyObject *text, Py_ssize_t start, Py_ssize_t end,
               fused_pass *p) {
    int kind = PyUnicode_KIND(text), status = SC_OK;
    const void *data = PyUnicode_DATA(text);
    int nogil = end - start >= NOGIL_LENGTH;
    fused_ask_utf8(self, text, start, end, p);
    cache_lease lease;
    if (lease_take(self, &lease, 0, !nogil) < 0) return -1;
    p->cache = lease.cache;
    p->shared = lease.shared;
    p->read = start;
    for (Py_ssize_t at = start; at < end && status == SC_OK;) {
        Py_ssize_t stop = end - at > BLOCK ? at + BLOCK : end;
        PyThreadState *save = nogil ? PyEval_SaveThread() : NULL;
        status = fused_parts(data, kind, &at, stop, end, p);
        if (save) PyEval_RestoreThread(save);
        if (status == SC_OK && at < end && PyErr_CheckSignals() < 0) status = FUSED_SIGNAL;
        /* only with blocks to come: a stopped pass's pending exception must not be cleared */
        if (status == SC_OK && at < end && nogil && lease.how == LEASE_HELD && self->sharing &&
            lease_share(self, &lease) == 0) {
            p->cache = lease.cache; /* another call went apart: it, and those after, read it */
            p->shared = lease.shared;
        }
    }
    if (!p->utf8 && start == 0 && end == PyUnicode_GET_LENGTH(text)) self->last_wide = p->wide;
    /* the pass's last piece may have ended past the last part looked through */
    if (status == SC_OK && p->probing) pair_look(data, kind, p->read, end, p);
    lease_give(self, &lease, !nogil);
    free(p->buf);
    if (status == SC_OK || status == FUSED_LIMIT) return SC_OK;
    if (status == FUSED_SIGNAL) return -1; /* the signal handler's exception is set */
    if (status == SC_NOMEM) {
        PyErr_NoMemory();
        return -1;
    }
    /* FUSED_REFUSED: let str.encode raise its own UnicodeEncodeError for the piece. */
    PyObject *piece = PyUnicode_Substring(text, p->refused_start, p->refused_end);
    PyObject *ok = piece ? PyUnicode_AsEncodedString(piece, "utf-8", p->escape ? "surrogateescape" : "strict") : NULL;
    if (ok) PyErr_SetString(PyExc_SystemError, "str.encode accepted a refused piece");
    Py_XDECREF(ok);
    Py_XDECREF(piece);
    return -1;
}

static PyObject *fused_encode(FusedEncoder *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text, *list = NULL;
    Py_ssize_t start, end;
    fused_pass p;
    if (parse(self, args, nargs, 4, "encode", &text, &start, &end, &p) < 0) return NULL;
    if (run(self, text, start, end, &p) == SC_OK && (list = PyList_New((Py_ssize_t)p.out.len))) {
        PyObject *const *objects = (PyObject *const *)self->id_objects;
        for (size_t k = 0; k < p.out.len; k++)
            PyList_SET_ITEM(list, (Py_ssize_t)k, Py_NewRef(objects[p.out.ids[k]]));
    }
    self->api->ids_free(&p.out);
    return list;
}

/* The pair of encode_array's fifth argument (a str of two ASCII characters, not NUL) set to be
 * looked for in text[start:end] (_fused_parts.h). */
static int pair_parse(PyObject *pair, Py_ssize_t start, Py_ssize_t end, fused_pass *p) {
    if (!PyUnicode_Check(pair) || PyUnicode_GET_LENGTH(pair) != 2 || !PyUnicode_IS_ASCII(pair) ||
        !PyUnicode_READ_CHAR(pair, 0) || !PyUnicode_READ_CHAR(pair, 1)) {
        PyErr_SetString(PyExc_ValueError, "encode_array: the pair must be two ASCII characters, not NUL");
        return -1;
    }
    p->pair[0] = PyUnicode_READ_CHAR(pair, 0);
    p->pair[1] = PyUnicode_READ_CHAR(pair, 1);
    p->probing = 1;
    p->pair_start = start;
    p->clean = end;
    p->budget = PAIR_BUDGET + (end - start) / 4096;
    return 0;
}

static PyObject *fused_encode_array(FusedEncoder *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_ssize_t start, end;
    fused_pass p;
    int paired = nargs == 5;
    if (parse(self, args, nargs, paired ? 5 : 4, "encode_array", &text, &start, &end, &p) < 0 ||
        (paired && pair_parse(args[4], start, end, &p) < 0))
        return NULL;
    int unit = array_unit(text);
    size_t units = (size_t)(end - start);
    if (array_take(self, unit, units, &p.out) != SC_OK) return PyErr_NoMemory();
    IdArray *array = NULL;
    if (run(self, text, start, end, &p) == SC_OK &&
        (array = PyObject_New(IdArray, &IdArrayType))) {
        const uint32_t *rank = self->api->rank_table(self->vocab);
        if (rank) { /* else the indices are the ranks */
            Py_BEGIN_ALLOW_THREADS
            for (size_t k = 0; k < p.out.len; k++) p.out.ids[k] = rank[p.out.ids[k]];
            Py_END_ALLOW_THREADS
        }
        array->ids = p.out.ids; /* the array owns the buffer now */
        array->len = (Py_ssize_t)p.out.len;
        array->cap = p.out.cap;
        array_made(self, array, unit, units);
        p.out.ids = NULL;
    }
    self->api->ids_free(&p.out);
    if (!paired || !array) return (PyObject *)array;
    return Py_BuildValue("(Nn)", (PyObject *)array, p.clean);
}

static PyObject *fused_count(FusedEncoder *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_ssize_t start, end;
    fused_pass p;
    if (parse(self, args, nargs, 5, "count", &text, &start, &end, &p) < 0) return NULL;
    long long limit = PyLong_AsLongLong(args[4]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    p.counting = 1;
    p.limit = limit < 0 ? UINT64_MAX : (uint64_t)limit;
    int status = run(self, text, start, end, &p);
    self->api->ids_free(&p.out);
    return status == SC_OK ? PyLong_FromUnsignedLongLong(p.count) : NULL;
}

static PyObject *fused_cache_info(FusedEncoder *self, PyObject *unused) {
    uint64_t sums[4] = {0, 0, 0, 0}, helpers[4] = {0, 0, 0, 0};
    if (!self->held) cache_sums(self->primary, sums); /* held: written without the GIL */
    pool_sums(&self->helpers, helpers); /* counted once: what was promoted left them */
    for (int k = 0; k < 3; k++) sums[k] += helpers[k];
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:n,s:K,s:n,s:n,s:K,s:i}", "hits",
                         (unsigned long long)sums[0], "misses", (unsigned long long)sums[1],
                         "merges", (unsigned long long)sums[2], "bytes",
                         (unsigned long long)sums[3], "caches", (Py_ssize_t)1,
                         "private_bytes", (unsigned long long)helpers[3], "private_caches",
                         self->helpers.made, "bytes_each", (Py_ssize_t)self->cache_bytes,
                         "id_buffer_bytes", (unsigned long long)(self->id_buffers.bytes + self->id_arrays.bytes),
                         "sharing", self->sharing);
}

#include "_fused_batch.h"

static PyMethodDef fused_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))fused_encode, METH_FASTCALL,
     "encode(text, start, end, errors): the ids of text[start:end] as a list."},
    {"encode_array", (PyCFunction)(void (*)(void))fused_encode_array, METH_FASTCALL,
     "encode_array(text, start, end, errors[, pair]): the ids as an IdArray (uint32, no copy); "
     "with a pair (two ASCII characters), (ids, clean): the pair starts nowhere in "
     "text[start:end] before clean (_fused_parts.h)."},
    {"count", (PyCFunction)(void (*)(void))fused_count, METH_FASTCALL,
     "count(text, start, end, errors, limit): how many ids; stops once past limit (-1: none)."},
    {"cache_info", (PyCFunction)fused_cache_info, METH_NOARGS,
     "cache_info(): hits, misses (both levels) and merges of the word cache and the idle private "
     "ones, its bytes; caches made (one); the idle private caches' bytes and number; the idle id "
     "buffers' bytes; sharing: whether calls read it rather than hold it (_fused_lease.h)."},
    {"encode_batch", (PyCFunction)(void (*)(void))fused_encode_batch, METH_FASTCALL,
     "encode_batch(texts, arrow, threads, errors, mode, lengths, watch): many texts on native "
     "threads (_fused_batch.h)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FusedEncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "streamcodec.engine._fused.FusedEncoder",
    .tp_basicsize = sizeof(FusedEncoder),
    .tp_dealloc = (destructor)fused_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FusedEncoder(core, pattern, *, cache_bytes): ordinary text to ids in one pass.",
    .tp_methods = fused_methods,
    .tp_init = (initproc)fused_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ the module */

static const char *const FUSED_AHEAD_NAMES[] = {"off", "on", "timed"};

/* ahead([mode]) -> the mode before: "timed" (fused_choose), or "on" / "off" (that loop always;
 * for tests). */
static PyObject *fused_ahead_method(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    int was = fused_ahead_mode < 0 ? 2 : fused_ahead_mode;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "ahead() takes at most one argument");
        return NULL;
    }
    if (nargs == 1) {
        const char *name = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
        int mode = -2;
        for (int k = 0; name && k < 3; k++)
            if (!strcmp(name, FUSED_AHEAD_NAMES[k])) mode = k == 2 ? -1 : k;
        if (mode == -2) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "ahead() takes 'timed', 'on' or 'off'");
            return NULL;
        }
        fused_ahead_mode = mode;
    }
    return PyUnicode_FromString(FUSED_AHEAD_NAMES[was]);
}

static PyMethodDef fused_module_methods[] = {
    SC_SIMD_METHOD,
    {"ahead", (PyCFunction)(void (*)(void))fused_ahead_method, METH_FASTCALL,
     "ahead([mode]): whether the common blocks' first-level lines are asked for blocks ahead: "
     "'timed' (chosen by timing both loops), 'on' or 'off'; returns the mode before."},
    {NULL, NULL, 0, NULL}};

static int fused_exec(PyObject *module) {
    sc_simd_init();
    if (PyType_Ready(&FusedEncoderType) < 0 || PyType_Ready(&IdArrayType) < 0) return -1;
    if (PyModule_AddObjectRef(module, "FusedEncoder", (PyObject *)&FusedEncoderType) < 0 ||
        PyModule_AddObjectRef(module, "IdArray", (PyObject *)&IdArrayType) < 0 ||
        PyModule_AddIntConstant(module, "MAX_KEY", WC_KEY) < 0 ||
        PyModule_AddIntConstant(module, "WINDOW", FUSED_WINDOW) < 0 || batch_exec(module) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot fused_slots[] = {
    {Py_mod_exec, fused_exec},
#ifdef Py_mod_multiple_interpreters
    /* The types are static: one interpreter only (and the GIL stays: no Py_mod_gil slot). */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef fused_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "streamcodec.engine._fused",
    .m_doc = "Ordinary text to ids in one pass: scanner, word cache and core (see engine.ordinary).",
    .m_size = 0,
    .m_methods = fused_module_methods,
    .m_slots = fused_slots,
};

PyMODINIT_FUNC PyInit__fused(void) { return PyModuleDef_Init(&fused_module); }
