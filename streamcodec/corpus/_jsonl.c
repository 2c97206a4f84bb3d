/* The text field of each JSON line of a block, unescaped into one run of UTF-8, off the GIL.
 *
 *     text_column(data, field, rows, specials) -> (offsets, text) | None
 *     newlines(data) -> int   (the lines a block holds, for the reader that cuts the blocks)
 *     join_documents(ids, offsets, width, bos, eos, out) -> int   (for the shards' writer)
 *
 * `data`: whole lines of JSON Lines (bytes); `field`: the text field's name (UTF-8 bytes);
 * `rows`: the lines it holds (an upper bound on the documents); `specials`: a tuple of bytes
 * (special tokens' texts). The result: `text` holds each document's UTF-8 one after another,
 * document i at text[offsets[i]:offsets[i + 1]] (`offsets`: native int64s, one more than the
 * documents), as the batch pass reads an Arrow large_string array in place (engine/batch.py,
 * FlatTexts).
 *
 * The reference is the Python reader (corpus/jsonlines.py: each line decoded as UTF-8, then
 * json.loads, then the field). This reader reads a block only where it reads it exactly as that
 * one does, and returns None for any block holding anything else, so that every document and
 * every message there is the Python reader's:
 *   - bytes that are not UTF-8 anywhere (Python's strict decoder: no surrogates, no overlong or
 *     out-of-range forms), a raw control character inside a string (json.loads is strict);
 *   - a line that is not one JSON object (json.loads's grammar, with its whitespace " \t\r"; a
 *     byte order mark, NaN and Infinity, a number of more than 64 characters: declined), nested
 *     deeper than 64, or whose field is absent, given twice, or not a string;
 *   - a key with an escape (it could spell the field), a lone surrogate escape (the Python
 *     reader refuses or replaces it);
 *   - the text of a special token inside a document (the Python reader names where).
 * A blank line (only bytes.strip()'s whitespace) is skipped, as the Python reader skips it.
 * Unescaped text is never longer than its JSON, so the text fits in len(data) bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_utf8.h"

#define MAX_DEPTH 64  /* Python's scanner recurses: far deeper lines are its RecursionError */
#define MAX_NUMBER 64 /* int() refuses over 4,300 digits: long numbers are the Python reader's */

typedef struct {
    const unsigned char *p, *end; /* the line, without its newline */
    int depth;
} cursor;

/* Bytes that are plain inside a JSON string: printable ASCII other than '"' and '\\'. */
static int plain_byte(unsigned char b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define BLOCK 16
/* The first byte of p[0:16] that is not plain (16: none); the 16 bytes copied to o if given
 * (the output is never ahead of the input: 16 bytes from o fit where 16 from p do). */
static int plain_run(const unsigned char *p, unsigned char *o) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    if (o) _mm_storeu_si128((__m128i *)o, v);
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i slash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)); /* signed: non-ASCII too */
    int mask = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), low));
    return mask ? __builtin_ctz((unsigned)mask) : 16;
}
#else
#define BLOCK 8
/* As above, 8 bytes at a time (haszero tricks: exact for "any such byte", then byte by byte). */
static int plain_run(const unsigned char *p, unsigned char *o) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t x;
    memcpy(&x, p, 8);
    if (o) memcpy(o, p, 8);
    uint64_t quote = x ^ (ones * '"'), slash = x ^ (ones * '\\');
    uint64_t bad = x & highs;               /* non-ASCII */
    bad |= (x - ones * 0x20) & ~x & highs;  /* a control character */
    bad |= (quote - ones) & ~quote & highs; /* '"' */
    bad |= (slash - ones) & ~slash & highs; /* '\\' */
    int k = 0;
    if (bad)
        while (plain_byte(p[k])) k++;
    return bad ? k : 8;
}
#endif

/* Each byte's value as a hex digit plus one (0: not a digit). A table, not a branch a digit:
 * the digits of escaped code points mix letters and numbers, each branch a mispredicted one
 * (ensure_ascii JSON of non-Latin text is mostly \\uXXXX escapes). */
#define HEX_DIGITS(first, base) \
    [first] = base + 1, [first + 1] = base + 2, [first + 2] = base + 3, [first + 3] = base + 4, \
    [first + 4] = base + 5, [first + 5] = base + 6
static const unsigned char hex_value[256] = {
    HEX_DIGITS('0', 0), ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    HEX_DIGITS('a', 10), HEX_DIGITS('A', 10),
};

static int hex4(const unsigned char *p, uint32_t *value) {
    uint32_t a = hex_value[p[0]], b = hex_value[p[1]], c = hex_value[p[2]], d = hex_value[p[3]];
    if (!(a && b && c && d)) return 0;
    *value = (a - 1) << 12 | (b - 1) << 8 | (c - 1) << 4 | (d - 1);
    return 1;
}

/* The byte each one-character escape stands for ('\\' then this byte), 0 for the others: a
 * load, not a switch's indirect jump, which mispredicts where escapes of each kind mix. */
static const unsigned char unescaped[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
    ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
};

/* The string at c->p (its opening quote), as json.loads reads it: unescaped into *out when out
 * is given (else only checked); *escaped says whether it held an escape. 0: declined. */
static int scan_string(cursor *c, unsigned char **out, int *escaped) {
    const unsigned char *p = c->p + 1, *end = c->end;
    unsigned char *o = out ? *out : NULL;
    int any = 0;
    for (;;) {
        int k = BLOCK;
        while (k == BLOCK && end - p >= BLOCK) {
            k = plain_run(p, o);
            p += k;
            if (o) o += k;
        }
        while (p < end && plain_byte(*p)) {
            if (o) *o++ = *p;
            p++;
        }
        if (p >= end) return 0; /* no closing quote on the line */
        unsigned char b = *p;
        if (b == '"') break;
        if (b < 0x20) return 0; /* a raw control character: json.loads (strict) refuses it */
        if (b != '\\') {
            uint32_t cp; /* strict: what bytes.decode("utf-8") takes, else declined */
            int n = sc_utf8_get(p, (size_t)(end - p), &cp);
            if (n <= 0) return 0;
            if (o) {
                memcpy(o, p, (size_t)n);
                o += n;
            }
            p += n;
            continue;
        }
        any = 1;
        do { /* a run of escapes (\\uXXXX\\uXXXX..., \\n\\n) read on, not back to the plain scan */
            if (end - p < 2) return 0;
            unsigned char simple = unescaped[p[1]];
            if (simple) {
                if (o) *o++ = simple;
                p += 2;
                continue;
            }
            uint32_t cp;
            if (p[1] != 'u' || end - p < 6 || !hex4(p + 2, &cp)) return 0;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return 0; /* a lone low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {         /* only with its low half */
                uint32_t low;
                if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &low) ||
                    low < 0xDC00 || low > 0xDFFF)
                    return 0;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            p += 6;
            if (o) o += sc_utf8_put(o, cp, 0); /* no lone surrogate comes here */
        } while (p < end && *p == '\\');
    }
    c->p = p + 1;
    if (out) *out = o;
    if (escaped) *escaped = any;
    return 1;
}

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

static int is_digit(const cursor *c, const unsigned char *p) {
    return p < c->end && *p >= '0' && *p <= '9';
}

/* A number as json.loads's scanner reads one (no NaN, no Infinity). */
static int scan_number(cursor *c) {
    const unsigned char *p = c->p, *start = p;
    if (p < c->end && *p == '-') p++;
    if (!is_digit(c, p)) return 0;
    if (*p++ != '0')
        while (is_digit(c, p)) p++;
    if (p < c->end && *p == '.') {
        if (!is_digit(c, ++p)) return 0;
        while (is_digit(c, p)) p++;
    }
    if (p < c->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < c->end && (*p == '+' || *p == '-')) p++;
        if (!is_digit(c, p)) return 0;
        while (is_digit(c, p)) p++;
    }
    if (p - start > MAX_NUMBER) return 0;
    c->p = p;
    return 1;
}

static int scan_literal(cursor *c, const char *word, size_t n) {
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

static int scan_value(cursor *c);

/* The members of an object or the items of an array, c->p just past its opening bracket.
 * With field (the line's own object), the field's string is unescaped into *out; *found says
 * whether it was. */
static int scan_members(cursor *c, unsigned char close, const char *field, Py_ssize_t field_len,
                        unsigned char **out, int *found) {
    if (++c->depth > MAX_DEPTH) return 0;
    skip_space(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        c->depth--;
        return 1;
    }
    for (;;) {
        if (close == '}') {
            const unsigned char *key = c->p + 1;
            int escaped;
            if (c->p >= c->end || *c->p != '"' || !scan_string(c, NULL, &escaped)) return 0;
            int is_field = field != NULL && c->p - 1 - key == field_len &&
                           memcmp(key, field, (size_t)field_len) == 0;
            if (field != NULL && escaped) return 0; /* it could spell the field */
            skip_space(c);
            if (c->p >= c->end || *c->p != ':') return 0;
            c->p++;
            skip_space(c);
            if (is_field) {
                /* once only (json.loads keeps the last), and a string */
                if (*found || c->p >= c->end || *c->p != '"' || !scan_string(c, out, NULL))
                    return 0;
                *found = 1;
            } else if (!scan_value(c)) {
                return 0;
            }
        } else if (!scan_value(c)) {
            return 0;
        }
        skip_space(c);
        if (c->p >= c->end) return 0;
        if (*c->p == close) break;
        if (*c->p != ',') return 0;
        c->p++;
        skip_space(c);
    }
    c->p++;
    c->depth--;
    return 1;
}

static int scan_value(cursor *c) {
    if (c->p >= c->end) return 0;
    switch (*c->p) {
    case '"': return scan_string(c, NULL, NULL);
    case '{': c->p++; return scan_members(c, '}', NULL, 0, NULL, NULL);
    case '[': c->p++; return scan_members(c, ']', NULL, 0, NULL, NULL);
    case 't': return scan_literal(c, "true", 4);
    case 'f': return scan_literal(c, "false", 5);
    case 'n': return scan_literal(c, "null", 4);
    default: return scan_number(c);
    }
}

static int blank(const unsigned char *p, const unsigned char *end) {
    for (; p < end; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\r' || *p == 0x0B || *p == 0x0C)) return 0;
    return 1;
}

typedef struct {
    const unsigned char *text;
    size_t len;
} special;

/* The special tokens, and what finds a place where one may start: its first byte (the one
 * byte they all start with, or 256: several), the first two bytes of each (a bit set). */
typedef struct {
    special *list;
    Py_ssize_t count;
    int only_first;
    unsigned char first[256];
    unsigned char pairs[8192];
} special_set;

static int starts_special(const special_set *s, const unsigned char *p, const unsigned char *end) {
    if (end - p >= 2 && !(s->pairs[(p[0] << 8 | p[1]) >> 3] & 1 << (p[1] & 7))) {
        for (Py_ssize_t k = 0; k < s->count; k++) /* a token of one byte has no pair */
            if (s->list[k].len == 1 && s->list[k].text[0] == p[0]) return 1;
        return 0;
    }
    for (Py_ssize_t k = 0; k < s->count; k++)
        if (s->list[k].len <= (size_t)(end - p) && memcmp(p, s->list[k].text, s->list[k].len) == 0)
            return 1;
    return 0;
}

/* Whether one of the special tokens is inside text[0:n]. */
static int holds_special(const special_set *s, const unsigned char *text, size_t n) {
    const unsigned char *p = text, *end = text + n;
    if (s->only_first < 256) {
        while (p < end && (p = memchr(p, s->only_first, (size_t)(end - p))) != NULL) {
            if (starts_special(s, p, end)) return 1;
            p++;
        }
        return 0;
    }
    for (; p < end; p++)
        if (s->first[*p] && starts_special(s, p, end)) return 1;
    return 0;
}

/* Every line of data[0:n]: its field's text into text, the ends into ends; the documents
 * (-1: declined). */
static Py_ssize_t read_block(const unsigned char *data, size_t n, const char *field,
                             Py_ssize_t field_len, const special_set *specials, int64_t *ends,
                             Py_ssize_t most, unsigned char *text) {
    const unsigned char *p = data, *stop = data + n;
    unsigned char *o = text;
    Py_ssize_t rows = 0;
    while (p < stop) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(stop - p));
        const unsigned char *end = nl ? nl : stop;
        if (!blank(p, end)) {
            cursor c = {p, end, 0};
            unsigned char *begin = o;
            int found = 0;
            skip_space(&c);
            if (rows >= most || c.p >= c.end || *c.p != '{') return -1;
            c.p++;
            if (!scan_members(&c, '}', field, field_len, &o, &found) || !found) return -1;
            skip_space(&c);
            if (c.p != c.end) return -1; /* more than one object */
            if (specials->count && holds_special(specials, begin, (size_t)(o - begin)))
                return -1;
            ends[rows++] = o - text;
        }
        p = nl ? nl + 1 : stop;
    }
    return rows;
}

/* The special tokens of a tuple of non-empty bytes, into s (its list allocated); -1: an error. */
static int special_tokens(PyObject *tokens, special_set *s) {
    memset(s, 0, sizeof *s);
    s->count = PyTuple_GET_SIZE(tokens);
    s->only_first = 256;
    s->list = PyMem_Malloc(sizeof(special) * (size_t)(s->count ? s->count : 1));
    if (s->list == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int firsts = 0;
    for (Py_ssize_t k = 0; k < s->count; k++) {
        PyObject *token = PyTuple_GET_ITEM(tokens, k);
        if (!PyBytes_Check(token) || PyBytes_GET_SIZE(token) == 0) {
            PyErr_SetString(PyExc_TypeError, "specials: a tuple of non-empty bytes");
            return -1;
        }
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(token);
        s->list[k] = (special){text, (size_t)PyBytes_GET_SIZE(token)};
        firsts += !s->first[text[0]];
        s->first[text[0]] = 1;
        s->only_first = firsts == 1 ? text[0] : 256;
        if (s->list[k].len >= 2) s->pairs[(text[0] << 8 | text[1]) >> 3] |= 1 << (text[1] & 7);
    }
    return 0;
}

static PyObject *text_column(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer data;
    const char *field;
    Py_ssize_t field_len, most;
    PyObject *tokens;
    if (!PyArg_ParseTuple(args, "y*y#nO!:text_column", &data, &field, &field_len, &most,
                          &PyTuple_Type, &tokens))
        return NULL;
    PyObject *result = NULL, *offsets = NULL, *text = NULL;
    special_set *specials = PyMem_Malloc(sizeof(special_set));
    if (specials == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    specials->list = NULL;
    if (special_tokens(tokens, specials) < 0) goto done;
    if (most < 0) {
        PyErr_SetString(PyExc_ValueError, "rows: at least 0");
        goto done;
    }
    offsets = PyBytes_FromStringAndSize(NULL, (most + 1) * (Py_ssize_t)sizeof(int64_t));
    text = PyBytes_FromStringAndSize(NULL, data.len);
    if (offsets == NULL || text == NULL) goto done;
    int64_t *bounds = (int64_t *)PyBytes_AS_STRING(offsets);
    bounds[0] = 0;
    Py_ssize_t rows;
    Py_BEGIN_ALLOW_THREADS
    rows = read_block(data.buf, (size_t)data.len, field, field_len, specials, bounds + 1, most,
                      (unsigned char *)PyBytes_AS_STRING(text));
    Py_END_ALLOW_THREADS
    if (rows < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t length = (Py_ssize_t)bounds[rows]; /* read before the resize moves it */
    if (_PyBytes_Resize(&offsets, (rows + 1) * (Py_ssize_t)sizeof(int64_t)) < 0 ||
        _PyBytes_Resize(&text, length) < 0)
        goto done;
    result = PyTuple_Pack(2, offsets, text);
done:
    if (specials != NULL) PyMem_Free(specials->list);
    PyMem_Free(specials);
    Py_XDECREF(offsets);
    Py_XDECREF(text);
    PyBuffer_Release(&data);
    return result;
}

/* newlines(data) -> int: data.count(b"\n"), the GIL released (bytes.count holds it, and reads
 * a byte at a time: a quarter of a millisecond a megabyte, on the reader's thread). */
static PyObject *newlines(PyObject *module, PyObject *arg) {
    (void)module;
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    const char *at = data.buf, *end = at + data.len;
    while (at < end && (at = memchr(at, '\n', (size_t)(end - at))) != NULL) {
        count++;
        at++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(count);
}

/* join_documents(ids, offsets, width, bos, eos, out) -> int: a task's documents as the shard
 * holds them, into `out` (writable, from its start): each document's ids, ids[offsets[i] *
 * width:offsets[i + 1] * width] (`ids`: bytes of ids `width` bytes wide; `offsets`: native
 * int64s), between the bytes `bos` and `eos`; the bytes written. The reference is the writer's
 * parts (corpus/shards.py, TokenShard._parts: the same bytes, in pieces): one buffer a task is
 * hashed and written by one call each, not one a piece (three a document), the GIL released
 * for the copy. */
static PyObject *join_documents(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer ids, offsets, bos, eos, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*w*:join_documents", &ids, &offsets, &width, &bos, &eos,
                          &out))
        return NULL;
    PyObject *result = NULL;
    const int64_t *bounds = offsets.buf;
    Py_ssize_t n = offsets.len / (Py_ssize_t)sizeof(int64_t) - 1, total = 0;
    if (width < 1 || offsets.len % (Py_ssize_t)sizeof(int64_t) || n < 0) {
        PyErr_SetString(PyExc_ValueError, "join_documents: width >= 1, offsets int64s (1 or more)");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) { /* each run inside ids, in order: no read out of it */
        if (bounds[i] < 0 || bounds[i] > bounds[i + 1] || bounds[i + 1] > ids.len / width) {
            PyErr_Format(PyExc_ValueError, "join_documents: offsets[%zd:%zd] outside the ids", i,
                         i + 2);
            goto done;
        }
        total += (Py_ssize_t)(bounds[i + 1] - bounds[i]) * width + bos.len + eos.len;
    }
    if (total > out.len) {
        PyErr_Format(PyExc_ValueError, "join_documents: %zd bytes do not fit in %zd", total,
                     out.len);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    char *o = out.buf;
    const char *from = ids.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t size = (size_t)(bounds[i + 1] - bounds[i]) * (size_t)width;
        memcpy(o, bos.buf, (size_t)bos.len);
        o += bos.len;
        memcpy(o, from + bounds[i] * width, size);
        o += size;
        memcpy(o, eos.buf, (size_t)eos.len);
        o += eos.len;
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(total);
done:
    PyBuffer_Release(&ids);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&bos);
    PyBuffer_Release(&eos);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"newlines", newlines, METH_O, "newlines(data) -> int: data.count(b'\\n'), off the GIL."},
    {"join_documents", join_documents, METH_VARARGS,
     "join_documents(ids, offsets, width, bos, eos, out) -> int: each document's ids between bos "
     "and eos, into out (the bytes written)."},
    {"text_column", text_column, METH_VARARGS,
     "text_column(data, field, rows, specials) -> (offsets, text) | None: the field of each JSON "
     "line of data as one run of UTF-8 (None: the block is the Python reader's)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "streamcodec.corpus._jsonl",
    "JSON Lines' text fields read off the GIL (corpus/_jsonl.c).", -1, methods, NULL, NULL, NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__jsonl(void) { return PyModule_Create(&module); }
