/* streamcodec.pieces._core: the compiled twin of the pure-Python piece encoder.
 *
 * Core(ranks) copies a vocabulary into the core's tables (_core_tables.c); its methods turn
 * pieces into ids exactly as the Python functions they name do. A batch call works in three
 * steps, so Python's per-piece overhead is paid once per batch and other threads run meanwhile:
 *   1. with the GIL: each str piece's UTF-8 bytes are copied into one buffer;
 *   2. without the GIL: the core encodes every piece (it touches no Python object);
 *   3. with the GIL: the ids become a list, from int objects made once per vocabulary.
 *
 *     >>> from streamcodec.pieces._core import Core
 *     >>> core = Core({bytes([b]): b for b in range(256)} | {b"ab": 256}, long_piece=512)
 *     >>> core.encode_pieces(["ab", "abc"])
 *     [256, 256, 99]
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../_utf8.h"
#include "_core.h"

typedef struct {
    PyObject_HEAD sc_vocab *vocab;
    PyObject **ids; /* the int object of each token index's rank */
    Py_ssize_t n_ids; /* how many of them are set */
} Core;

/* ------------------------------------------------------------------ construction */

/* The tables from `n` tokens in flat arrays (sc_vocab_new's), once the ids are made: 0, or -1
 * with ValueError (a single byte missing, two tokens alike) or MemoryError. */
static int core_build(Core *self, size_t n, const uint8_t *data, const size_t *offsets,
                      const uint32_t *rank, int bytes_seen, Py_ssize_t long_piece) {
    if (bytes_seen != 256) {
        PyErr_SetString(PyExc_ValueError, "the compiled core needs every single byte to be a token");
        return -1;
    }
    int status = sc_vocab_new(&self->vocab, n, data, offsets, rank, (size_t)long_piece);
    if (status == SC_DUPLICATE) PyErr_SetString(PyExc_ValueError, "two tokens have the same bytes");
    else if (status != SC_OK) PyErr_NoMemory();
    return status == SC_OK ? 0 : -1;
}

/* Copy `ranks` (bytes -> int) into flat arrays; raise ValueError if the core cannot take the
 * vocabulary (the caller then keeps the Python path) or TypeError for a bad mapping. */
static int core_fill(Core *self, PyObject *ranks, Py_ssize_t long_piece) {
    Py_ssize_t n = PyDict_Size(ranks);
    size_t total = 0;
    if ((size_t)n > SC_MAX_TOKENS) {
        PyErr_Format(PyExc_ValueError, "the compiled core takes at most %u tokens", SC_MAX_TOKENS);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int have_byte[256] = {0}, bytes_seen = 0, status = -1;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
        if (!PyBytes_Check(key) || !PyLong_Check(value)) {
            PyErr_Format(PyExc_TypeError, "mergeable_ranks maps bytes to int, not %.100s to %.100s",
                         Py_TYPE(key)->tp_name, Py_TYPE(value)->tp_name);
            return -1;
        }
        total += (size_t)PyBytes_GET_SIZE(key);
    }
    uint8_t *data = PyMem_Malloc(total ? total : 1);
    size_t *offsets = PyMem_Malloc(((size_t)n + 1) * sizeof *offsets);
    uint32_t *rank = PyMem_Malloc((n ? (size_t)n : 1) * sizeof *rank);
    self->ids = PyMem_Calloc(n ? (size_t)n : 1, sizeof *self->ids);
    if (!data || !offsets || !rank || !self->ids) {
        PyErr_NoMemory();
        goto done;
    }
    size_t i = 0, at = 0;
    pos = 0;
    offsets[0] = 0;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
        unsigned long long r = PyLong_AsUnsignedLongLong(value);
        if (r == (unsigned long long)-1 && PyErr_Occurred()) PyErr_Clear();
        if (r >= UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "the compiled core takes ranks from 0 to 2**32 - 2");
            goto done;
        }
        Py_ssize_t len = PyBytes_GET_SIZE(key);
        if (len == 1 && !have_byte[(uint8_t)PyBytes_AS_STRING(key)[0]]++) bytes_seen++;
        memcpy(data + at, PyBytes_AS_STRING(key), (size_t)len);
        at += (size_t)len;
        offsets[i + 1] = at;
        rank[i] = (uint32_t)r;
        self->ids[i] = PyLong_CheckExact(value) ? Py_NewRef(value) : PyLong_FromUnsignedLong((unsigned long)r);
        if (!self->ids[i]) goto done;
        self->n_ids = (Py_ssize_t)++i;
    }
    status = core_build(self, (size_t)n, data, offsets, rank, bytes_seen, long_piece);
done:
    PyMem_Free(data);
    PyMem_Free(offsets);
    PyMem_Free(rank);
    return status;
}

/* A run's (first, count) of a packed vocabulary, read exactly ("K" wraps -1 and 2**64 into
 * range): 0, or -1 with an error set (a ValueError where either is below 0 or past 32 bits, the
 * file's "<II"; streamcodec.pieces.packed.PackedRanks refuses those first). */
static int read_run(PyObject *run, const char *format, unsigned long long *first,
                    unsigned long long *count) {
    PyObject *a, *b;
    if (!PyArg_ParseTuple(run, format, &PyLong_Type, &a, &PyLong_Type, &b)) return -1;
    *first = PyLong_AsUnsignedLongLong(a);
    if (PyErr_Occurred()) PyErr_Clear(); /* below 0 or past 64 bits: 2**64 - 1, refused below */
    *count = PyLong_AsUnsignedLongLong(b);
    if (PyErr_Occurred()) PyErr_Clear();
    if (*first > UINT32_MAX || *count > UINT32_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "a run (first, count) holds ranks from 0 to 2**32 - 1, not (%R, %R)", a, b);
        return -1;
    }
    return 0;
}

/* Core.packed: the tables straight from a packed vocabulary (token k is the next lengths[k]
 * bytes of blob, its rank the next of the runs' (first, count) ranges), with no dict between:
 * streamcodec.pieces.packed.PackedRanks, whose ranks() is the dict Core(ranks) would take. */
static int core_fill_packed(Core *self, Py_buffer *lengths, Py_buffer *blob, PyObject *runs,
                            Py_ssize_t long_piece) {
    const uint8_t *size = lengths->buf;
    size_t n = (size_t)lengths->len, at = 0, k = 0;
    int have_byte[256] = {0}, bytes_seen = 0, status = -1;
    if (n > SC_MAX_TOKENS) {
        PyErr_Format(PyExc_ValueError, "the compiled core takes at most %u tokens", SC_MAX_TOKENS);
        return -1;
    }
    size_t *offsets = PyMem_Malloc((n + 1) * sizeof *offsets);
    uint32_t *rank = PyMem_Malloc((n ? n : 1) * sizeof *rank);
    self->ids = PyMem_Calloc(n ? n : 1, sizeof *self->ids);
    if (!offsets || !rank || !self->ids) {
        PyErr_NoMemory();
        goto done;
    }
    offsets[0] = 0;
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(runs); r++) {
        unsigned long long first, count;
        if (read_run(PyList_GET_ITEM(runs, r), "O!O!:Core.packed", &first, &count) < 0) goto done;
        if (count > n - k || (count && (first >= UINT32_MAX || count > UINT32_MAX - first))) {
            PyErr_SetString(PyExc_ValueError, count > n - k ? "the sizes disagree"
                                                            : "the compiled core takes ranks from 0 to 2**32 - 2");
            goto done;
        }
        for (unsigned long long j = 0; j < count; j++, k++) {
            if (size[k] > (size_t)blob->len - at) {
                PyErr_SetString(PyExc_ValueError, "the sizes disagree");
                goto done;
            }
            if (size[k] == 1 && !have_byte[((const uint8_t *)blob->buf)[at]]++) bytes_seen++;
            at += size[k];
            offsets[k + 1] = at;
            rank[k] = (uint32_t)(first + j);
            if (!(self->ids[k] = PyLong_FromUnsignedLong((unsigned long)rank[k]))) goto done;
            self->n_ids = (Py_ssize_t)k + 1;
        }
    }
    if (k != n || at != (size_t)blob->len) {
        PyErr_SetString(PyExc_ValueError, "the sizes disagree");
        goto done;
    }
    status = core_build(self, n, blob->buf, offsets, rank, bytes_seen, long_piece);
done:
    PyMem_Free(offsets);
    PyMem_Free(rank);
    return status;
}

static void core_clear_ids(Core *self) {
    if (!self->ids) return;
    for (Py_ssize_t i = 0; i < self->n_ids; i++) Py_DECREF(self->ids[i]);
    PyMem_Free(self->ids);
    self->ids = NULL;
    self->n_ids = 0;
}

static int core_init(Core *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"ranks", "long_piece", NULL};
    PyObject *ranks;
    Py_ssize_t long_piece = PY_SSIZE_T_MIN; /* required: pieces.piece.LONG_PIECE is its home */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|$n:Core", kwlist, &PyDict_Type, &ranks,
                                     &long_piece))
        return -1;
    if (long_piece == PY_SSIZE_T_MIN) {
        PyErr_SetString(PyExc_TypeError, "Core() needs long_piece= (pieces.piece.LONG_PIECE)");
        return -1;
    }
    if (self->vocab || self->ids) {
        PyErr_SetString(PyExc_RuntimeError, "Core is already initialized");
        return -1;
    }
    if (long_piece < 0) {
        PyErr_SetString(PyExc_ValueError, "long_piece must be >= 0");
        return -1;
    }
    if (core_fill(self, ranks, long_piece) < 0) {
        core_clear_ids(self);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(core_packed_doc,
"packed(lengths, blob, runs, /, *, long_piece)\n--\n\n"
"Core(ranks, long_piece=long_piece) for the ranks of a packed vocabulary (token k is the next\n"
"lengths[k] bytes of blob, its rank the next of the runs' (first, count) ranges), built with no\n"
"dict between: equals Core(streamcodec.pieces.packed.PackedRanks(...).ranks()). ValueError as\n"
"Core's, and where the sizes disagree or two tokens have the same bytes.");

static PyObject *core_packed(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"", "", "", "long_piece", NULL};
    Py_buffer lengths, blob;
    PyObject *runs;
    Py_ssize_t long_piece;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*O!$n:packed", kwlist, &lengths, &blob,
                                     &PyList_Type, &runs, &long_piece))
        return NULL;
    Core *self = NULL;
    if (long_piece < 0) PyErr_SetString(PyExc_ValueError, "long_piece must be >= 0");
    else self = (Core *)type->tp_alloc(type, 0);
    if (self && core_fill_packed(self, &lengths, &blob, runs, long_piece) < 0) Py_CLEAR(self);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&blob);
    return (PyObject *)self;
}

static void core_dealloc(Core *self) {
    core_clear_ids(self);
    sc_vocab_free(self->vocab);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int core_ready(Core *self) {
    if (self->vocab) return 0;
    PyErr_SetString(PyExc_RuntimeError, "Core.__init__ was not called");
    return -1;
}

/* ------------------------------------------------------------------ str pieces to bytes */

typedef struct {
    uint8_t *data;
    size_t len, cap;
    size_t *ends; /* piece i is data[ends[i - 1]:ends[i]] (ends[-1] = 0) */
} piece_buffer;

static int buffer_reserve(piece_buffer *b, size_t extra) {
    if (b->cap - b->len >= extra) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < extra) {
        if (cap > SIZE_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    uint8_t *data = PyMem_Realloc(b->data, cap);
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* Append the UTF-8 bytes of `piece` as str.encode("utf-8", errors) gives them, errors being
 * "strict" or "surrogateescape"; on a surrogate that mode refuses, raise str.encode's error. */
static int append_utf8(piece_buffer *b, PyObject *piece, int escape) {
    if (!PyUnicode_Check(piece)) {
        PyErr_Format(PyExc_TypeError, "pieces must be str, not %.100s", Py_TYPE(piece)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(piece) < 0) return -1;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(piece);
    if (PyUnicode_IS_ASCII(piece)) {
        if (buffer_reserve(b, (size_t)n) < 0) return -1;
        memcpy(b->data + b->len, PyUnicode_DATA(piece), (size_t)n);
        b->len += (size_t)n;
        return 0;
    }
    int kind = PyUnicode_KIND(piece);
    size_t most = sc_utf8_most(kind);
    if ((size_t)n > SIZE_MAX / most || buffer_reserve(b, most * (size_t)n) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    const void *src = PyUnicode_DATA(piece);
    uint8_t *out = b->data + b->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        int len = sc_utf8_put(out, PyUnicode_READ(kind, src, i), escape);
        if (len < 0) {
            /* Let str.encode raise its own UnicodeEncodeError for this piece. */
            PyObject *ok = PyUnicode_AsEncodedString(piece, "utf-8", escape ? "surrogateescape" : "strict");
            Py_XDECREF(ok);
            if (!ok) return -1;
            PyErr_SetString(PyExc_SystemError, "str.encode accepted a lone surrogate");
            return -1;
        }
        out += len;
    }
    b->len = (size_t)(out - b->data);
    return 0;
}

/* ------------------------------------------------------------------ encoding a batch */

typedef int (*piece_encoder)(const sc_vocab *, const uint8_t *, size_t, sc_ids *);

/* Encode every piece of `b` with `encode` (the GIL released) and return the ids as a list. */
static PyObject *encode_buffer(Core *self, piece_buffer *b, Py_ssize_t count, piece_encoder encode) {
    sc_ids out = {0};
    int status = sc_ids_reserve(&out, b->len / 3 + 16);
    const sc_vocab *vocab = self->vocab;
    Py_BEGIN_ALLOW_THREADS
    size_t start = 0;
    for (Py_ssize_t i = 0; i < count && status == SC_OK; start = b->ends[i++])
        status = encode(vocab, b->data + start, b->ends[i] - start, &out);
    Py_END_ALLOW_THREADS
    PyObject *list = status == SC_OK ? PyList_New((Py_ssize_t)out.len) : PyErr_NoMemory();
    if (list) {
        for (size_t i = 0; i < out.len; i++) PyList_SET_ITEM(list, (Py_ssize_t)i, Py_NewRef(self->ids[out.ids[i]]));
    }
    sc_ids_free(&out);
    return list;
}

static int parse_errors(const char *errors) {
    if (!strcmp(errors, "strict")) return 0;
    if (!strcmp(errors, "surrogateescape")) return 1;
    PyErr_Format(PyExc_ValueError, "errors must be 'strict' or 'surrogateescape', not %.100s",
                 errors);
    return -1;
}

PyDoc_STRVAR(encode_pieces_doc,
"encode_pieces(pieces, /, *, errors='strict')\n--\n\n"
"The ids of every str piece, joined: equals ``[i for p in pieces for i in\n"
"PieceEncoder(ranks)(p.encode('utf-8', errors))]`` (streamcodec.pieces.piece.PieceEncoder.__call__).\n"
"The GIL is released while the pieces are encoded.");

static PyObject *core_encode_pieces(Core *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"", "errors", NULL};
    PyObject *pieces;
    const char *errors = "strict";
    if (core_ready(self) < 0 ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "O!|$s:encode_pieces", kwlist, &PyList_Type,
                                     &pieces, &errors))
        return NULL;
    int escape = parse_errors(errors);
    if (escape < 0) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(pieces);
    piece_buffer b = {0};
    PyObject *result = NULL;
    b.ends = PyMem_Malloc((count ? (size_t)count : 1) * sizeof *b.ends);
    if (!b.ends) {
        PyErr_NoMemory();
        goto done;
    }
    /* The list may change while an item is encoded (a str subclass's hooks cannot run here, but
     * stay safe): re-read its length on every step. */
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i >= PyList_GET_SIZE(pieces)) {
            PyErr_SetString(PyExc_RuntimeError, "the list of pieces changed during encoding");
            goto done;
        }
        if (append_utf8(&b, PyList_GET_ITEM(pieces, i), escape) < 0) goto done;
        b.ends[i] = b.len;
    }
    result = encode_buffer(self, &b, count, sc_encode_piece);
done:
    PyMem_Free(b.data);
    PyMem_Free(b.ends);
    return result;
}

/* One bytes-like piece through `encode`. Only bytes are immutable: another thread may write
 * into a bytearray, memoryview or mmap while the GIL is released, and the merge reads the
 * piece more than once, so any other buffer is copied first, with the GIL held. */
static PyObject *encode_one(Core *self, PyObject *arg, piece_encoder encode) {
    if (core_ready(self) < 0) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    size_t end = (size_t)view.len;
    uint8_t *copy = NULL;
    if (!PyBytes_CheckExact(arg)) {
        copy = PyMem_Malloc(end ? end : 1);
        if (!copy) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        memcpy(copy, view.buf, end);
    }
    piece_buffer b = {.data = copy ? copy : view.buf, .len = end, .cap = end, .ends = &end};
    PyObject *result = encode_buffer(self, &b, 1, encode);
    PyMem_Free(copy);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(encode_piece_doc,
"encode_piece(data, /)\n--\n\n"
"The ids of one piece's bytes: equals streamcodec.pieces.piece.PieceEncoder.__call__ (the whole-piece\n"
"rule, then the rank merge or the backtracking encoder).");

static PyObject *core_encode_piece(Core *self, PyObject *arg) { return encode_one(self, arg, sc_encode_piece); }

PyDoc_STRVAR(merge_piece_doc,
"merge_piece(data, /)\n--\n\nEquals streamcodec.pieces.merge.merge_piece (no whole-piece rule).");

static PyObject *core_merge_piece(Core *self, PyObject *arg) { return encode_one(self, arg, sc_merge_piece); }

PyDoc_STRVAR(backtrack_piece_doc,
"backtrack_piece(data, /)\n--\n\n"
"Equals streamcodec.pieces.backtrack.backtrack_piece (no whole-piece rule), at any length.");

static PyObject *core_backtrack_piece(Core *self, PyObject *arg) {
    return encode_one(self, arg, sc_backtrack_piece);
}

static PyMethodDef core_methods[] = {
    {"packed", (PyCFunction)(void (*)(void))core_packed, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     core_packed_doc},
    {"encode_pieces", (PyCFunction)(void (*)(void))core_encode_pieces, METH_VARARGS | METH_KEYWORDS,
     encode_pieces_doc},
    {"encode_piece", (PyCFunction)core_encode_piece, METH_O, encode_piece_doc},
    {"merge_piece", (PyCFunction)core_merge_piece, METH_O, merge_piece_doc},
    {"backtrack_piece", (PyCFunction)core_backtrack_piece, METH_O, backtrack_piece_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(core_doc,
"Core(ranks, *, long_piece)\n--\n\n"
"A vocabulary (token bytes -> rank) in the compiled core's tables. Raises ValueError when the\n"
"core cannot take it (a rank outside 0..2**32-2, a single byte missing): the Python path can.\n"
"Thread-safe: the tables are read-only once built.");

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "streamcodec.pieces._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_dealloc = (destructor)core_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = core_doc,
    .tp_methods = core_methods,
    .tp_init = (initproc)core_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ the C-level API */

static sc_vocab *api_vocab_of(void *object) {
    if (!PyObject_TypeCheck((PyObject *)object, &CoreType)) {
        PyErr_SetString(PyExc_TypeError, "expected a streamcodec.pieces._core.Core");
        return NULL;
    }
    Core *self = object;
    if (core_ready(self) < 0) return NULL;
    return self->vocab;
}

static void *const *api_id_objects(void *object) {
    return api_vocab_of(object) ? (void *const *)((Core *)object)->ids : NULL;
}

static sc_api core_api = {3,           api_vocab_of,     api_id_objects, sc_rank_table,
                          sc_table_of, sc_encode_merged, sc_ids_reserve, sc_ids_free};

static int core_exec(PyObject *module) {
    if (PyType_Ready(&CoreType) < 0) return -1;
    PyObject *capsule = PyCapsule_New(&core_api, "streamcodec.pieces._core._C_API", NULL);
    int failed = !capsule || PyModule_AddObjectRef(module, "Core", (PyObject *)&CoreType) < 0 ||
                 PyModule_AddObjectRef(module, "_C_API", capsule) < 0;
    Py_XDECREF(capsule);
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ the shipped ranks */

PyDoc_STRVAR(rank_dict_doc,
"rank_dict(lengths, blob, runs, /)\n--\n\n"
"A packed vocabulary's ranks (streamcodec.vocabularies: token k is the next lengths[k] bytes of\n"
"blob, its rank the next of the runs' (first, count) ranges) as a dict, token bytes -> rank; None\n"
"where the sizes disagree or a token repeats (a damaged file); ValueError where a run's numbers\n"
"are below 0 or past 32 bits (PackedRanks refuses those first). Equals the Python path of\n"
"streamcodec.vocabularies.unpack_ranks: one call in C, not a Python step per token (the\n"
"command's start: 100,000 tokens).");

static PyObject *core_rank_dict(PyObject *module, PyObject *args) {
    Py_buffer lengths, blob;
    PyObject *runs, *ranks = NULL;
    if (!PyArg_ParseTuple(args, "y*y*O!:rank_dict", &lengths, &blob, &PyList_Type, &runs)) return NULL;
    const uint8_t *size = lengths.buf, *data = blob.buf;
    Py_ssize_t k = 0, at = 0, n = lengths.len;
    if (!(ranks = PyDict_New())) goto done;
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(runs); r++) {
        unsigned long long first, count; /* "<II" each: their sum fits, on any platform */
        if (read_run(PyList_GET_ITEM(runs, r), "O!O!:rank_dict", &first, &count) < 0) goto failed;
        for (unsigned long long j = 0; j < count; j++, k++) {
            if (k >= n || at + size[k] > blob.len) goto damaged;
            PyObject *token = PyBytes_FromStringAndSize((const char *)data + at, size[k]);
            PyObject *rank = token ? PyLong_FromUnsignedLongLong(first + j) : NULL;
            int failed = !rank || PyDict_SetItem(ranks, token, rank) < 0;
            Py_XDECREF(token);
            Py_XDECREF(rank);
            if (failed) goto failed;
            at += size[k];
        }
    }
    if (k == n && at == blob.len && PyDict_GET_SIZE(ranks) == n) goto done;
damaged:
    Py_DECREF(ranks);
    ranks = Py_NewRef(Py_None);
    goto done;
failed:
    Py_CLEAR(ranks);
done:
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&blob);
    return ranks;
}

static PyMethodDef module_methods[] = {
    {"rank_dict", core_rank_dict, METH_VARARGS, rank_dict_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
#ifdef Py_mod_multiple_interpreters
    /* Core is a static type: one interpreter only. The GIL stays (no Py_mod_gil slot). */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "streamcodec.pieces._core",
    .m_doc = "The compiled core: pre-token pieces to ids, equal to streamcodec's Python twin.",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = core_slots,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
