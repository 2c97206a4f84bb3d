/* streamcodec.text._scan: the named pre-tokenizer patterns cut natively, equal to `regex`.
 *
 *     pieces(text, pattern, start, end) -> list[str]   regex.compile(p).findall(text, start, end)
 *     last_cut(text, pattern, lo, hi) -> int           the stream's SAFE_CUTS[p], searched backward
 *     words(text, pattern, start, end) -> list[str]    Pretokenizer.words (the same for all three)
 *     encode(text, pattern, start, end, core, errors)  the ids, each piece merged by the compiled
 *         -> list[int]                                 core (streamcodec.pieces._core) once cut
 *
 * `pattern` is a number of _scan_pattern.h (0 gpt2/r50k/p50k, 1 cl100k_base, 2 o200k_base, 4...
 * the open models' patterns): streamcodec/text/known_patterns.py recognizes a pattern string
 * and names its number; streamcodec/text/native.py, the Python side, names the Python functions
 * these equal.
 *
 * The scanner reads the str's own PEP 393 buffer (1, 2 or 4 bytes a code point; lone surrogates
 * are code points there like any other), with no copy. It releases the GIL while it scans a long
 * text: a str is immutable and the caller's reference keeps it alive until the call returns, so
 * no other thread can change or free the buffer; the scan writes only to its own malloc'd array.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "../pieces/_core.h"
#include "_scan_pattern.h"
#include "_unicode_tables.h"
#include "_scan_ascii.h"


/* encode(): a piece's str.encode raises (a lone surrogate the errors mode refuses). */
enum { ENCODE_REFUSED = 1 };

/* Texts at least this long are scanned without the GIL (releasing it costs about as much as
 * scanning a few hundred characters). */
#define NOGIL_LENGTH 4096

static int grow(Py_ssize_t **out, Py_ssize_t *cap) {
    Py_ssize_t new_cap = *cap ? *cap * 2 : 256;
    Py_ssize_t *bigger = realloc(*out, (size_t)new_cap * sizeof(Py_ssize_t));
    if (!bigger) return -1;
    *out = bigger;
    *cap = new_cap;
    return 0;
}

#define CH Py_UCS1
#define K(name) name##_1
#include "_scan_kind.h"
#undef CH
#undef K
#define CH Py_UCS2
#define K(name) name##_2
#include "_scan_kind.h"
#undef CH
#undef K
#define CH Py_UCS4
#define K(name) name##_4
#include "_scan_kind.h"
#undef CH
#undef K

/* The piece ends of text[start:end] into a new malloc'd array (*ends, freed by the caller). */
static Py_ssize_t scan_ends(int kind, const void *data, Py_ssize_t start, Py_ssize_t end,
                            int pattern, Py_ssize_t **ends) {
    Py_ssize_t cap = 0, count;
    *ends = NULL;
    PyThreadState *save = end - start >= NOGIL_LENGTH ? PyEval_SaveThread() : NULL;
    switch (kind) {
    case PyUnicode_1BYTE_KIND: count = scan_1(data, start, end, pattern, ends, &cap); break;
    case PyUnicode_2BYTE_KIND: count = scan_2(data, start, end, pattern, ends, &cap); break;
    default: count = scan_4(data, start, end, pattern, ends, &cap); break;
    }
    if (save) PyEval_RestoreThread(save);
    return count;
}

/* An index as regex takes pos and endpos: negative ones count from the end, then clamped. */
static Py_ssize_t clamp(Py_ssize_t index, Py_ssize_t length) {
    if (index < 0) index += length;
    return index < 0 ? 0 : index > length ? length : index;
}

/* Parse (text, pattern, start, end), start and end as regex's pos and endpos. */
static int parse_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected,
                      const char *name, PyObject **text, int *pattern, Py_ssize_t *start,
                      Py_ssize_t *end) {
    if (nargs != expected) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected,
                     nargs);
        return -1;
    }
    if (!PyUnicode_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s() needs a str, not %.100s", name,
                     Py_TYPE(args[0])->tp_name);
        return -1;
    }
    *text = args[0];
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(*text) < 0) return -1;
#endif
    long p = PyLong_AsLong(args[1]);
    if (p == -1 && PyErr_Occurred()) return -1;
    if (p < 0 || p >= PATTERN_COUNT || p == CUT_WORDS) {
        PyErr_Format(PyExc_ValueError, "%s(): unknown pattern number %ld", name, p);
        return -1;
    }
    *pattern = (int)p;
    *start = PyLong_AsSsize_t(args[2]);
    if (*start == -1 && PyErr_Occurred()) return -1;
    *end = PyLong_AsSsize_t(args[3]);
    if (*end == -1 && PyErr_Occurred()) return -1;
    Py_ssize_t length = PyUnicode_GET_LENGTH(*text);
    *start = clamp(*start, length);
    *end = clamp(*end, length);
    if (*start > *end) *start = *end;
    return 0;
}

/* The strs text[start:ends[0]], text[ends[0]:ends[1]], ... (frees ends). */
static PyObject *substrings(PyObject *text, Py_ssize_t start, Py_ssize_t *ends, Py_ssize_t count) {
    PyObject *list = count < 0 ? PyErr_NoMemory() : PyList_New(count);
    for (Py_ssize_t k = 0; list && k < count; k++) {
        PyObject *piece = PyUnicode_Substring(text, k ? ends[k - 1] : start, ends[k]);
        if (!piece) Py_CLEAR(list);
        else PyList_SET_ITEM(list, k, piece);
    }
    free(ends);
    return list;
}

static PyObject *pieces(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    int pattern;
    Py_ssize_t start, end, *ends;
    if (parse_args(args, nargs, 4, "pieces", &text, &pattern, &start, &end) < 0) return NULL;
    Py_ssize_t count = scan_ends(PyUnicode_KIND(text), PyUnicode_DATA(text), start, end,
                                 pattern, &ends);
    return substrings(text, start, ends, count);
}

static PyObject *words(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    int pattern;
    Py_ssize_t start, end, *ends;
    if (parse_args(args, nargs, 4, "words", &text, &pattern, &start, &end) < 0) return NULL;
    Py_ssize_t count = scan_ends(PyUnicode_KIND(text), PyUnicode_DATA(text), start, end,
                                 CUT_WORDS, &ends);
    return substrings(text, start, ends, count);
}

static PyObject *last_cut(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    int pattern;
    Py_ssize_t lo, hi, cut;
    if (parse_args(args, nargs, 4, "last_cut", &text, &pattern, &lo, &hi) < 0) return NULL;
    if (pattern > PATTERN_O200K) { /* the rules are proven for the three named patterns only */
        PyErr_Format(PyExc_ValueError, "last_cut(): no proven safe cuts for pattern %d", pattern);
        return NULL;
    }
    const void *data = PyUnicode_DATA(text);
    int crlf = pattern != PATTERN_GPT2;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND: cut = last_cut_1(data, lo, hi, crlf); break;
    case PyUnicode_2BYTE_KIND: cut = last_cut_2(data, lo, hi, crlf); break;
    default: cut = last_cut_4(data, lo, hi, crlf); break;
    }
    return PyLong_FromSsize_t(cut);
}

/* The core's C API (streamcodec/pieces/_core.h), imported on first use. */
static const sc_api *core_api(void) {
    static const sc_api *api = NULL;
    if (!api) {
        api = PyCapsule_Import("streamcodec.pieces._core._C_API", 0);
        if (api && api->version < 1) {
            PyErr_SetString(PyExc_ImportError, "streamcodec.pieces._core: C API too old");
            api = NULL;
        }
    }
    return api;
}

/* The ids of text[start:end] with `core`'s vocabulary, as a list of ints. */
static PyObject *encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    int pattern;
    Py_ssize_t start, end, refused = 0;
    if (parse_args(args, nargs, 6, "encode", &text, &pattern, &start, &end) < 0) return NULL;
    const char *errors = PyUnicode_Check(args[5]) ? PyUnicode_AsUTF8(args[5]) : NULL;
    if (!errors || (strcmp(errors, "strict") && strcmp(errors, "surrogateescape"))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "errors must be 'strict' or 'surrogateescape'");
        return NULL;
    }
    const sc_api *api = core_api();
    sc_vocab *vocab = api ? api->vocab_of(args[4]) : NULL;
    if (!vocab) return NULL;
    int kind = PyUnicode_KIND(text), escape = errors[0] == 's' && errors[1] == 'u', status;
    const void *data = PyUnicode_DATA(text);
    sc_ids ids = {0};
    PyThreadState *save = end - start >= NOGIL_LENGTH ? PyEval_SaveThread() : NULL;
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        status = encode_1(data, start, end, pattern, escape, api, vocab, &ids, &refused);
        break;
    case PyUnicode_2BYTE_KIND:
        status = encode_2(data, start, end, pattern, escape, api, vocab, &ids, &refused);
        break;
    default: status = encode_4(data, start, end, pattern, escape, api, vocab, &ids, &refused);
    }
    if (save) PyEval_RestoreThread(save);
    PyObject *list = NULL;
    if (status == ENCODE_REFUSED) {
        /* The first piece str.encode refuses: let it raise its own UnicodeEncodeError. */
        Py_ssize_t e = refused;
        switch (kind) {
        case PyUnicode_1BYTE_KIND: e = next_1(data, refused, end, pattern); break;
        case PyUnicode_2BYTE_KIND: e = next_2(data, refused, end, pattern); break;
        default: e = next_4(data, refused, end, pattern);
        }
        PyObject *piece = PyUnicode_Substring(text, refused, e);
        PyObject *ok = piece ? PyUnicode_AsEncodedString(piece, "utf-8", errors) : NULL;
        if (ok) PyErr_SetString(PyExc_SystemError, "str.encode accepted a refused piece");
        Py_XDECREF(ok);
        Py_XDECREF(piece);
    } else if (status != SC_OK) {
        PyErr_NoMemory();
    } else if ((list = PyList_New((Py_ssize_t)ids.len))) {
        for (size_t k = 0; k < ids.len; k++) {
            PyObject *id = PyLong_FromUnsignedLong(api->rank(vocab, ids.ids[k]));
            if (!id) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)k, id);
        }
    }
    api->ids_free(&ids);
    return list;
}

static PyMethodDef methods[] = {
    {"pieces", (PyCFunction)(void (*)(void))pieces, METH_FASTCALL,
     "pieces(text, pattern, start, end): the pieces of text[start:end] (regex's findall)."},
    {"encode", (PyCFunction)(void (*)(void))encode, METH_FASTCALL,
     "encode(text, pattern, start, end, core, errors): the ids of text[start:end]."},
    {"words", (PyCFunction)(void (*)(void))words, METH_FASTCALL,
     "words(text, pattern, start, end): Pretokenizer.words(text, start, end)."},
    {"last_cut", (PyCFunction)(void (*)(void))last_cut, METH_FASTCALL,
     "last_cut(text, pattern, lo, hi): the last safe cut p in [lo, hi), or -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "streamcodec.text._scan",
    "The named pre-tokenizer patterns cut natively (see streamcodec.text.native).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void) {
    PyObject *module = PyModule_Create(&module_def);
    if (module && PyModule_AddStringConstant(module, "UNICODE_VERSION", UC_UNICODE_VERSION) < 0)
        Py_CLEAR(module);
    return module;
}
