/* streamcodec.text._scan: the named pre-tokenizer patterns cut natively, equal to `regex`.
 *
 *     pieces(text, pattern, start, end) -> list[str]   regex.compile(p).findall(text, start, end)
 *     last_cut(text, pattern, lo, hi) -> int           the stream's SAFE_CUTS[p], searched backward
 *     words(text, pattern, start, end) -> list[str]    Pretokenizer.words (the same for all three)
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

#include "_scan_pattern.h"
#include "_unicode_tables.h"
#include "_scan_ascii.h"
#include "_scan_simd.h" /* the block step's level: simd() */


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

#define KIND_HEADER "text/_scan_kind.h"
#include "../_each_kind.h"

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

static PyMethodDef methods[] = {
    {"pieces", (PyCFunction)(void (*)(void))pieces, METH_FASTCALL,
     "pieces(text, pattern, start, end): the pieces of text[start:end] (regex's findall)."},
    {"words", (PyCFunction)(void (*)(void))words, METH_FASTCALL,
     "words(text, pattern, start, end): Pretokenizer.words(text, start, end)."},
    {"last_cut", (PyCFunction)(void (*)(void))last_cut, METH_FASTCALL,
     "last_cut(text, pattern, lo, hi): the last safe cut p in [lo, hi), or -1."},
    SC_SIMD_METHOD,
    {NULL, NULL, 0, NULL},
};

static int scan_exec(PyObject *module) {
    sc_simd_init();
    return PyModule_AddStringConstant(module, "UNICODE_VERSION", UC_UNICODE_VERSION);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, scan_exec},
#ifdef Py_mod_multiple_interpreters
    /* No state, no static objects: any interpreter may load it. The GIL stays (no Py_mod_gil
     * slot): free-threaded builds are not tested here (docs/performance.md). */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "streamcodec.text._scan",
    .m_doc = "The named pre-tokenizer patterns cut natively (see streamcodec.text.native).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModuleDef_Init(&module_def); }
