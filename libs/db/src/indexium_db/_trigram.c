/* pg_trgm's word_similarity over many ASCII names at once, in C (trigram.py's
 * word_similarity and _iterate, which are the reference: the same steps, the same float4
 * arithmetic). Built by `make env` (libs/db/build_trigram.py) where there is a C compiler;
 * without it trigram.word_similarities runs the Python one name at a time (~20 us each).
 *
 * word_similarities(query, names) -> list[float]
 *
 * ``query`` and every name must be ASCII (the caller's condition for in-process similarity:
 * under the C ctype a word character is an ASCII letter or digit); a name that is not
 * raises ValueError. A trigram is three bytes of "  word " (words lower-cased, padded as
 * generate_trgm_only pads them), held as a 24-bit integer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SMALL 256

static inline int is_word(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static inline unsigned char lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* generate_trgm_only: every word's trigrams in order, duplicates kept; out holds n + 1. */
static Py_ssize_t trigram_list(const unsigned char *s, Py_ssize_t n, uint32_t *out) {
    Py_ssize_t k = 0, i = 0;
    while (i < n) {
        while (i < n && !is_word(s[i])) i++;
        if (i >= n) break;
        uint32_t a = ' ', b = ' ';
        while (i < n && is_word(s[i])) {
            uint32_t c = lower(s[i++]);
            out[k++] = a << 16 | b << 8 | c;
            a = b;
            b = c;
        }
        out[k++] = a << 16 | b << 8 | ' ';
    }
    return k;
}

/* CALCSML's DIVUNION: ((float4) count) / ((float4) (len1 + len2 - count)) */
static inline float sml(Py_ssize_t count, Py_ssize_t len1, Py_ssize_t len2) {
    Py_ssize_t d = len1 + len2 - count;
    return d ? (float)count / (float)d : 0.0f;
}

static int in_sorted(const uint32_t *set, Py_ssize_t n, uint32_t t) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (set[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && set[lo] == t;
}

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* trigram.py's _iterate over one name's trigrams; scratch holds 4 * n2 entries. */
static float iterate(const uint32_t *query, Py_ssize_t ulen1, const uint32_t *trg2, Py_ssize_t n2, Py_ssize_t *scratch) {
    Py_ssize_t *idx = scratch, *lastpos = scratch + n2, *found = scratch + 2 * n2;
    uint32_t *distinct = (uint32_t *)(scratch + 3 * n2);
    Py_ssize_t nids = 0;
    for (Py_ssize_t i = 0; i < n2; i++) {  /* each distinct trigram an index, in first-seen order */
        Py_ssize_t j = 0;
        while (j < nids && distinct[j] != trg2[i]) j++;
        if (j == nids) {
            distinct[nids] = trg2[i];
            found[nids] = in_sorted(query, ulen1, trg2[i]);
            lastpos[nids] = -1;
            nids++;
        }
        idx[i] = j;
    }
    Py_ssize_t ulen2 = 0, count = 0, lower_ = -1, upper = 0;
    float smlr_max = 0.0f;
    for (Py_ssize_t i = 0; i < n2; i++) {
        Py_ssize_t t = idx[i];
        int hit = (int)found[t];
        if (lower_ >= 0 || hit) {
            if (lastpos[t] < 0) {
                ulen2++;
                if (hit) count++;
            }
            lastpos[t] = i;
        }
        if (!hit) continue;
        upper = i;
        if (lower_ == -1) {
            lower_ = i;
            ulen2 = 1;
        }
        float smlr_cur = sml(count, ulen1, ulen2);
        Py_ssize_t tmp_count = count, tmp_ulen2 = ulen2, prev_lower = lower_;
        for (Py_ssize_t tmp_lower = lower_; tmp_lower <= upper; tmp_lower++) {
            if (sml(tmp_count, ulen1, tmp_count) <= smlr_cur) break;
            float smlr_tmp = sml(tmp_count, ulen1, tmp_ulen2);
            if (smlr_tmp > smlr_cur) {
                smlr_cur = smlr_tmp;
                ulen2 = tmp_ulen2;
                lower_ = tmp_lower;
                count = tmp_count;
            }
            Py_ssize_t tt = idx[tmp_lower];
            if (lastpos[tt] == tmp_lower) {
                tmp_ulen2--;
                if (found[tt]) tmp_count--;
            }
        }
        if (smlr_cur > smlr_max) {
            smlr_max = smlr_cur;
            if (smlr_max == 1.0f) return 1.0f;
        }
        for (Py_ssize_t tmp_lower = prev_lower; tmp_lower < lower_; tmp_lower++) {
            Py_ssize_t tt = idx[tmp_lower];
            if (lastpos[tt] == tmp_lower) lastpos[tt] = -1;
        }
    }
    return smlr_max;
}

static const unsigned char *ascii_of(PyObject *s, Py_ssize_t *n) {
    if (!PyUnicode_Check(s) || !PyUnicode_IS_ASCII(s)) {
        PyErr_SetString(PyExc_ValueError, "word_similarities takes ASCII text only");
        return NULL;
    }
    *n = PyUnicode_GET_LENGTH(s);
    return (const unsigned char *)PyUnicode_DATA(s);
}

static PyObject *word_similarities(PyObject *self, PyObject *args) {
    PyObject *qobj, *names;
    if (!PyArg_ParseTuple(args, "UO", &qobj, &names)) return NULL;
    PyObject *seq = PySequence_Fast(names, "names must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t qn, count = PySequence_Fast_GET_SIZE(seq);
    const unsigned char *q = ascii_of(qobj, &qn);
    PyObject *out = q == NULL ? NULL : PyList_New(count);
    uint32_t *query = NULL, *trg = NULL;
    Py_ssize_t *scratch = NULL, cap = 0;
    if (out == NULL) goto fail;
    query = PyMem_Malloc((qn + 1) * sizeof(uint32_t));
    if (query == NULL) goto nomem;
    Py_ssize_t ulen1 = trigram_list(q, qn, query);
    qsort(query, ulen1, sizeof(uint32_t), cmp_u32);  /* the query's distinct trigrams, sorted */
    Py_ssize_t u = 0;
    for (Py_ssize_t i = 0; i < ulen1; i++)
        if (u == 0 || query[u - 1] != query[i]) query[u++] = query[i];
    ulen1 = u;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t n;
        const unsigned char *s = ascii_of(PySequence_Fast_GET_ITEM(seq, k), &n);
        if (s == NULL) goto fail;
        if (n + 1 > cap) {
            cap = n + 1 > SMALL ? n + 1 : SMALL;
            PyMem_Free(trg);
            PyMem_Free(scratch);
            trg = PyMem_Malloc(cap * sizeof(uint32_t));
            scratch = PyMem_Malloc(4 * cap * sizeof(Py_ssize_t));
            if (trg == NULL || scratch == NULL) goto nomem;
        }
        Py_ssize_t n2 = trigram_list(s, n, trg);
        float ws = ulen1 == 0 || n2 == 0 ? 0.0f : iterate(query, ulen1, trg, n2, scratch);
        PyObject *v = PyFloat_FromDouble((double)ws);
        if (v == NULL) goto fail;
        PyList_SET_ITEM(out, k, v);
    }
    PyMem_Free(query);
    PyMem_Free(trg);
    PyMem_Free(scratch);
    Py_DECREF(seq);
    return out;
nomem:
    PyErr_NoMemory();
fail:
    PyMem_Free(query);
    PyMem_Free(trg);
    PyMem_Free(scratch);
    Py_XDECREF(out);
    Py_DECREF(seq);
    return NULL;
}

static PyMethodDef methods[] = {
    {"word_similarities", word_similarities, METH_VARARGS, "pg_trgm word_similarity(query, name) of each name."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trigram", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trigram(void) { return PyModule_Create(&module); }
