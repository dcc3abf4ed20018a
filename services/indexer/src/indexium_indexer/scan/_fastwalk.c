/* The scan's per-entry hot path in C: walk the plain local entries of one window, inflate
 * each class, run the constant-pool prefilter (rules.NEEDLES), and hand back only the
 * classes that name a rule's API.
 *
 * An optimisation only, never a second implementation of the rules: zipstream.ZipWalk
 * calls walk_batch() when this module was built (`make env`), and walks in Python
 * otherwise. The batch takes only the entries whose handling has no branch: a local
 * header without a data descriptor or zip64 sizes, wholly inside the window, a `.class`
 * that is stored or deflated and inflates cleanly within its limits, or any other entry
 * that is skipped by its size. At anything else (a nested jar, an encrypted class, a
 * corrupt stream, a limit crossed, the end of the window, an offset the indexer sent a
 * size for) it stops *before* that entry, and the Python walk takes it: so every error
 * and every limit is still raised by the Python code, with its messages.
 *
 * The window is walked and inflated without the GIL (the hashing thread runs meanwhile);
 * the GIL is taken back once per batch to make the results: the (offset, fingerprint)
 * pairs of the walked entries and the (name, flags, bytes) of the classes that passed.
 * tests/unit/scan/test_fastwalk.py runs both walks over the same jars.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#define LOCAL_SIZE 30
#define FLAG_ENCRYPTED 0x1
#define FLAG_DESCRIPTOR 0x8
#define MAX_NEEDLES 256
#define KEPT_MAX (1 << 20) /* class bytes one batch keeps before it hands them over */

static unsigned char *needle_text[MAX_NEEDLES];
static int needle_len[MAX_NEEDLES];
static int n_needles;
static unsigned char needle_lengths[256]; /* 1 where some needle has this length */

static inline uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t u32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* The same answer as rules._NEEDLE_RE.search(data) is not None: a Utf8 entry's tag (1), a
 * length below 256 (high byte 0), the length byte, then one of the names of that length. */
static int has_needles(const unsigned char *d, size_t n) {
    if (n < 3) return 0;
    const unsigned char *p = d, *end = d + n - 2;
    while (p < end) {
        p = memchr(p, 1, (size_t)(end - p));
        if (p == NULL) return 0;
        if (p[1] == 0 && needle_lengths[p[2]]) {
            int len = p[2];
            size_t left = (size_t)(d + n - (p + 3));
            if ((size_t)len <= left) {
                for (int i = 0; i < n_needles; i++) {
                    if (needle_len[i] == len && memcmp(p + 3, needle_text[i], (size_t)len) == 0) return 1;
                }
            }
        }
        p++;
    }
    return 0;
}

static PyObject *set_needles(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "needles must be a sequence of bytes");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_NEEDLES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many needles");
        return NULL;
    }
    for (int i = 0; i < n_needles; i++) PyMem_Free(needle_text[i]);
    n_needles = 0;
    memset(needle_lengths, 0, sizeof needle_lengths);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        char *text;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(item, &text, &len) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
        if (len <= 0 || len > 255) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a needle is 1 to 255 bytes");
            return NULL;
        }
        needle_text[n_needles] = PyMem_Malloc((size_t)len);
        if (needle_text[n_needles] == NULL) {
            Py_DECREF(seq);
            return PyErr_NoMemory();
        }
        memcpy(needle_text[n_needles], text, (size_t)len);
        needle_len[n_needles] = (int)len;
        needle_lengths[len] = 1;
        n_needles++;
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

typedef struct {
    uint64_t offset;
    const unsigned char *name;
    uint16_t nlen, flags, method;
    uint32_t csize;
    unsigned char *data; /* a passing class's bytes (malloc), or NULL */
    size_t dlen;
    int stored; /* data points into the window, not malloc */
} Walked;

/* Inflate one raw deflate stream into *out (grown as needed, at most limit + 1 bytes).
 * 1: done, *got bytes; 0: not for the batch (corrupt, truncated, larger than limit). */
static int inflate_class(z_stream *z, const unsigned char *in, uint32_t csize, uint32_t usize_hint,
                         size_t limit, unsigned char **out, size_t *cap, size_t *got) {
    if (inflateReset(z) != Z_OK) return 0;
    size_t want = (size_t)usize_hint + 1;
    if (want > limit + 1) want = limit + 1;
    if (want < 4096) want = 4096;
    if (*cap < want) {
        unsigned char *grown = realloc(*out, want);
        if (grown == NULL) return 0;
        *out = grown;
        *cap = want;
    }
    z->next_in = (Bytef *)in;
    z->avail_in = csize;
    size_t have = 0;
    for (;;) {
        size_t room = *cap - have;
        if (have + room > limit + 1) room = limit + 1 - have;
        z->next_out = *out + have;
        z->avail_out = (uInt)room;
        int rc = inflate(z, Z_NO_FLUSH);
        have += room - z->avail_out;
        if (rc == Z_STREAM_END) break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) return 0;
        if (have > limit) return 0;
        if (z->avail_out == 0) { /* more output: grow (never past limit + 1) */
            if (have >= limit + 1) return 0;
            size_t bigger = *cap * 2;
            if (bigger > limit + 1) bigger = limit + 1;
            if (bigger <= *cap) return 0;
            unsigned char *grown = realloc(*out, bigger);
            if (grown == NULL) return 0;
            *out = grown;
            *cap = bigger;
            continue;
        }
        return 0; /* input ran out before the end of the stream: truncated */
    }
    if (have > limit) return 0;
    *got = have;
    return 1;
}

static int ends_with(const unsigned char *name, size_t n, const char *tail, size_t t, int fold) {
    if (n < t) return 0;
    const unsigned char *p = name + n - t;
    for (size_t i = 0; i < t; i++) {
        unsigned char c = p[i];
        if (fold && c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)tail[i]) return 0;
    }
    return 1;
}

/* walk_batch(buf, pos, base, stop, entries_left, inflated_left, class_limit, min_offset)
 * -> (pos, entries, classes, inflated, walked, hits)
 *
 * buf[pos:] is the reader's window, base the stream offset of buf[0]; no entry at or past
 * the stream offset ``stop`` is taken, nor one before ``min_offset`` (headers only go
 * forward). walked: bytes of (offset, fingerprint) u64 pairs (native order, as array('Q')
 * reads them); hits: [(raw_name, flags, class bytes)]. */
static PyObject *walk_batch(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    unsigned long long base, stop, min_offset;
    long long entries_left, inflated_left;
    Py_ssize_t class_limit;
    if (!PyArg_ParseTuple(args, "y*nKKLLnK", &view, &pos, &base, &stop, &entries_left, &inflated_left,
                          &class_limit, &min_offset))
        return NULL;
    const unsigned char *buf = view.buf;
    size_t size = (size_t)view.len;
    size_t limit = (size_t)class_limit;
    if (pos < 0 || (size_t)pos > size || class_limit < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "bad window");
        return NULL;
    }
    size_t cap_walked = 512, n_walked = 0;
    Walked *walked = malloc(cap_walked * sizeof *walked);
    unsigned char *scratch = NULL;
    size_t scratch_cap = 0;
    long long n_classes = 0, inflated = 0;
    size_t kept_total = 0;
    int failed = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    int z_ready = 0;
    size_t at = (size_t)pos;
    if (walked == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }

    Py_BEGIN_ALLOW_THREADS
    if (inflateInit2(&z, -MAX_WBITS) == Z_OK) z_ready = 1;
    while (z_ready && !failed) {
        if (size - at < LOCAL_SIZE) break;
        const unsigned char *h = buf + at;
        if (!(h[0] == 'P' && h[1] == 'K' && h[2] == 3 && h[3] == 4)) break;
        uint64_t offset = base + at;
        if (offset >= stop || offset < min_offset) break;
        if (kept_total >= KEPT_MAX) break; /* memory: a batch holds about one class at most */
        if (entries_left - (long long)n_walked <= 0) break;
        uint16_t flags = u16(h + 6), method = u16(h + 8);
        uint32_t csize = u32(h + 18), usize = u32(h + 22);
        uint16_t nlen = u16(h + 26), elen = u16(h + 28);
        if (flags & FLAG_DESCRIPTOR) break;
        if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu) break;
        size_t header = LOCAL_SIZE + (size_t)nlen + elen;
        if (size - at < header + csize) break;
        const unsigned char *name = h + LOCAL_SIZE;
        const unsigned char *data = h + header;
        unsigned char *kept = NULL;
        size_t kept_len = 0;
        int kept_in_window = 0;
        if (ends_with(name, nlen, ".class", 6, 0)) {
            if ((flags & FLAG_ENCRYPTED) || (method != 0 && method != 8)) break;
            if ((size_t)csize > limit + (limit >> 2) + 1024) break;
            if (method == 0) {
                if (csize > limit) break;
                if (has_needles(data, csize)) {
                    kept = (unsigned char *)data;
                    kept_len = csize;
                    kept_in_window = 1;
                }
            } else {
                size_t got;
                if (!inflate_class(&z, data, csize, usize, limit, &scratch, &scratch_cap, &got)) break;
                if (inflated_left - inflated - (long long)got < 0) break;
                inflated += (long long)got;
                if (has_needles(scratch, got)) {
                    kept = malloc(got ? got : 1);
                    if (kept == NULL) { failed = 1; break; }
                    memcpy(kept, scratch, got);
                    kept_len = got;
                }
            }
            n_classes++;
        } else if (ends_with(name, nlen, ".jar", 4, 1)) {
            break; /* nested archives: the Python walk */
        }
        if (n_walked == cap_walked) {
            Walked *grown = realloc(walked, 2 * cap_walked * sizeof *walked);
            if (grown == NULL) { free(kept_in_window ? NULL : kept); failed = 1; break; }
            walked = grown;
            cap_walked *= 2;
        }
        Walked *w = &walked[n_walked++];
        w->offset = offset;
        w->name = name;
        w->nlen = nlen;
        w->flags = flags;
        w->method = method;
        w->csize = csize;
        w->data = kept;
        w->dlen = kept_len;
        w->stored = kept_in_window;
        at += header + csize;
        min_offset = offset + 1;
        kept_total += kept_len;
    }
    if (z_ready) inflateEnd(&z);
    Py_END_ALLOW_THREADS
    free(scratch);

    PyObject *result = NULL, *prints = NULL, *hits = NULL;
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    prints = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_walked * 16));
    hits = PyList_New(0);
    if (prints == NULL || hits == NULL) goto done;
    uint64_t *pairs = (uint64_t *)PyBytes_AS_STRING(prints);
    for (size_t i = 0; i < n_walked; i++) {
        Walked *w = &walked[i];
        /* ZipWalk._print: hash((raw_name, method, compressed size)), the interpreter's keyed hash */
        PyObject *raw = PyBytes_FromStringAndSize((const char *)w->name, w->nlen);
        if (raw == NULL) goto done;
        PyObject *key = Py_BuildValue("(OII)", raw, (unsigned int)w->method, (unsigned int)w->csize);
        if (key == NULL) { Py_DECREF(raw); goto done; }
        Py_hash_t hv = PyObject_Hash(key);
        Py_DECREF(key);
        if (hv == -1 && PyErr_Occurred()) { Py_DECREF(raw); goto done; }
        pairs[2 * i] = w->offset;
        pairs[2 * i + 1] = (uint64_t)hv;
        if (w->data != NULL) {
            PyObject *hit = Py_BuildValue("(NIy#)", raw, (unsigned int)w->flags, (const char *)w->data,
                                          (Py_ssize_t)w->dlen);
            if (hit == NULL) goto done;
            int rc = PyList_Append(hits, hit);
            Py_DECREF(hit);
            if (rc < 0) goto done;
        } else {
            Py_DECREF(raw);
        }
    }
    result = Py_BuildValue("(nnLLOO)", (Py_ssize_t)at, (Py_ssize_t)n_walked, n_classes, inflated, prints, hits);
done:
    Py_XDECREF(prints);
    Py_XDECREF(hits);
    for (size_t i = 0; i < n_walked; i++) {
        if (walked[i].data != NULL && !walked[i].stored) free(walked[i].data);
    }
    free(walked);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"set_needles", set_needles, METH_O, "Set the Utf8 names the prefilter searches for."},
    {"walk_batch", walk_batch, METH_VARARGS, "Walk the plain entries of one window (see the file's comment)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastwalk(void) { return PyModule_Create(&module); }
