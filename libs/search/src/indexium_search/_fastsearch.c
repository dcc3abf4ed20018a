/* The search index's per-candidate loops in C, each the port of a Python reference that
 * stays as the fallback (the same steps, the same float4 arithmetic). Built by `make env`
 * (libs/search/build_fastsearch.py) where there is a C compiler.
 *
 * relevances(entries, ordinals, operands, size, ql) -> list[float]
 *
 * SearchIndex.relevance of each ordinal (catalog.rank_expression: tsrank.rank's ts_rank(
 * vector, query, 32) as float4, + 1.0 for the exact name, 0.5 for one starting with ``ql``,
 * + the entry's popularity, summed in that order in float8). ``entries``: the index's list
 * of Entry (attributes keys, lexemes, terms, name, popularity); ``operands``: the tsrank
 * Query's (lexeme, prefix) pairs, ``size`` its size. ~0.3 us a candidate, Python ~3.5.
 *
 * similar_among(query, items, ordinals, threshold) -> dict[int, float]
 *
 * pg_trgm's word_similarity (trigram.py's word_similarity and _iterate) of items[o].name
 * (items[o] itself where it is a str: Words.nearest's words) for each ordinal, keeping those
 * at least ``threshold`` (trigram.similar_among: the search's fuzzy pass over thousands of
 * names, ~0.25 us each; without this module it runs the Python one name at a time).
 *
 * shared_counts(arrays, k) -> (array('I') members, array('H') counts)
 *
 * Of sorted sets of ordinals (``arrays``: buffers of uint32, as BitMap.to_array() gives),
 * the members of at least ``k`` of them, ascending, with how many of them each is in
 * (trigram.in_at_least and Words._sharing: how many of a query's trigrams a name or a word
 * shares). A member of k of the m sets is in one of the m - k + 1 smallest, so only those
 * are walked for members; every set is counted once. Without this module the counting is
 * BitMap layers.
 *
 * union_range(flat, offsets, lo, hi) -> array('I')
 *
 * The union, ascending, of the sets lo..hi-1 of a list of sets laid end to end (``flat``:
 * uint32 ordinals, set i at flat[offsets[i]:offsets[i + 1]]; ``offsets``: uint64, one more
 * than the sets): SearchIndex._prefixed's union of every lexeme a prefix starts, hundreds
 * of one-mod slug lexemes, marked in a kept bit set instead of one BitMap each (~0.4 us of
 * pyroaring's checks a bitmap). Without this module the union is BitMap.union of the postings.
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
        PyErr_SetString(PyExc_ValueError, "similar_among takes ASCII text only");
        return NULL;
    }
    *n = PyUnicode_GET_LENGTH(s);
    return (const unsigned char *)PyUnicode_DATA(s);
}

/* One query's word similarity against names one after another (buffers kept between names). */
typedef struct {
    uint32_t *query, *trg;
    Py_ssize_t ulen1, *scratch, cap;
} Scorer;

static int scorer_init(Scorer *sc, PyObject *qobj) {
    memset(sc, 0, sizeof(*sc));
    Py_ssize_t qn;
    const unsigned char *q = ascii_of(qobj, &qn);
    if (q == NULL) return -1;
    sc->query = PyMem_Malloc((qn + 1) * sizeof(uint32_t));
    if (sc->query == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n = trigram_list(q, qn, sc->query), u = 0;
    qsort(sc->query, n, sizeof(uint32_t), cmp_u32);  /* the query's distinct trigrams, sorted */
    for (Py_ssize_t i = 0; i < n; i++)
        if (u == 0 || sc->query[u - 1] != sc->query[i]) sc->query[u++] = sc->query[i];
    sc->ulen1 = u;
    return 0;
}

static void scorer_free(Scorer *sc) {
    PyMem_Free(sc->query);
    PyMem_Free(sc->trg);
    PyMem_Free(sc->scratch);
}

static int scorer_score(Scorer *sc, PyObject *name, float *out) {
    Py_ssize_t n;
    const unsigned char *s = ascii_of(name, &n);
    if (s == NULL) return -1;
    if (n + 1 > sc->cap) {
        sc->cap = n + 1 > SMALL ? n + 1 : SMALL;
        PyMem_Free(sc->trg);
        PyMem_Free(sc->scratch);
        sc->trg = PyMem_Malloc(sc->cap * sizeof(uint32_t));
        sc->scratch = PyMem_Malloc(4 * sc->cap * sizeof(Py_ssize_t));
        if (sc->trg == NULL || sc->scratch == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_ssize_t n2 = trigram_list(s, n, sc->trg);
    *out = sc->ulen1 == 0 || n2 == 0 ? 0.0f : iterate(sc->query, sc->ulen1, sc->trg, n2, sc->scratch);
    return 0;
}

static PyObject *s_name;

/* similar_among(query, items, ordinals, threshold) -> dict: {o: word_similarity(query,
 * items[o].name)} for the ordinals whose similarity is at least threshold. */
static PyObject *similar_among(PyObject *self, PyObject *args) {
    PyObject *qobj, *items, *ordinals;
    double threshold;
    if (!PyArg_ParseTuple(args, "UO!Od", &qobj, &PyList_Type, &items, &ordinals, &threshold)) return NULL;
    Scorer sc;
    if (scorer_init(&sc, qobj) < 0) return NULL;
    PyObject *it = PyObject_GetIter(ordinals), *out = it == NULL ? NULL : PyDict_New(), *o;
    while (out != NULL && (o = PyIter_Next(it)) != NULL) {
        Py_ssize_t k = PyLong_AsSsize_t(o);
        PyObject *name = NULL;
        float ws;
        int failed = k == -1 && PyErr_Occurred();
        if (!failed && (k < 0 || k >= PyList_GET_SIZE(items))) {
            PyErr_SetString(PyExc_IndexError, "ordinal outside the items");
            failed = 1;
        }
        if (!failed) {
            PyObject *item = PyList_GET_ITEM(items, k);  /* (a str is its own name) */
            if (PyUnicode_Check(item)) Py_INCREF(name = item);
            else failed = (name = PyObject_GetAttr(item, s_name)) == NULL;
        }
        if (!failed) failed = scorer_score(&sc, name, &ws) < 0;
        Py_XDECREF(name);
        if (!failed && (double)ws >= threshold) {
            PyObject *v = PyFloat_FromDouble(ws);
            failed = v == NULL || PyDict_SetItem(out, o, v) < 0;
            Py_XDECREF(v);
        }
        Py_DECREF(o);
        if (failed) Py_CLEAR(out);
    }
    if (out != NULL && PyErr_Occurred()) Py_CLEAR(out);
    Py_XDECREF(it);
    scorer_free(&sc);
    return out;
}

#define PI2_6 1.64493406685  /* tsrank.PI2_6: calc_rank_or's double constant */

static PyObject *s_keys, *s_lexemes, *s_terms, *s_popularity;

/* tsrank.rank: ts_rank(vector, query, 32) of one entry, in float4 steps. */
static int entry_rank(PyObject *keys, Py_ssize_t n, const float *terms, Py_ssize_t nterms, PyObject *operands,
                      Py_ssize_t size, float *out) {
    double res = 0.0;
    Py_ssize_t nops = PySequence_Fast_GET_SIZE(operands);
    for (Py_ssize_t k = 0; k < nops; k++) {
        PyObject *op = PySequence_Fast_GET_ITEM(operands, k);
        if (!PyTuple_Check(op) || PyTuple_GET_SIZE(op) != 2) {
            PyErr_SetString(PyExc_TypeError, "operands are (lexeme, prefix) pairs");
            return -1;
        }
        PyObject *lexeme = PyTuple_GET_ITEM(op, 0);
        int prefix = PyObject_IsTrue(PyTuple_GET_ITEM(op, 1));
        if (prefix < 0) return -1;
        Py_ssize_t lo = 0, hi = n;  /* bisect_left(keys, lexeme, 0, n) */
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            int c = PyUnicode_Compare(PyTuple_GET_ITEM(keys, mid), lexeme);
            if (c == -1 && PyErr_Occurred()) return -1;
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        Py_ssize_t i = lo;
        if (prefix) {
            for (; i < n; i++) {
                Py_ssize_t m = PyUnicode_Tailmatch(PyTuple_GET_ITEM(keys, i), lexeme, 0, PY_SSIZE_T_MAX, -1);
                if (m < 0) return -1;
                if (!m) break;
                if (i >= nterms) goto short_terms;
                res = (float)(res + (double)terms[i] / PI2_6);
            }
        } else if (i < n) {
            int c = PyUnicode_Compare(PyTuple_GET_ITEM(keys, i), lexeme);
            if (c == -1 && PyErr_Occurred()) return -1;
            if (c == 0) {
                if (i >= nterms) goto short_terms;
                res = (float)(res + (double)terms[i] / PI2_6);
            }
        }
    }
    if (!n || !size) {
        *out = 0.0f;
        return 0;
    }
    res = (float)(res / (double)size);
    float plus_one = (float)(res + 1.0);
    *out = (float)(res / (double)plus_one);
    return 0;
short_terms:
    PyErr_SetString(PyExc_ValueError, "an entry has fewer terms than lexemes");
    return -1;
}

static int relevance_of(PyObject *entry, PyObject *operands, Py_ssize_t size, PyObject *ql, double *out) {
    int ok = -1;
    PyObject *keys = PyObject_GetAttr(entry, s_keys), *lexemes = PyObject_GetAttr(entry, s_lexemes);
    PyObject *terms = PyObject_GetAttr(entry, s_terms), *name = PyObject_GetAttr(entry, s_name);
    PyObject *popularity = PyObject_GetAttr(entry, s_popularity);
    Py_buffer view = {0};
    int viewed = 0;
    if (!keys || !lexemes || !terms || !name || !popularity) goto done;
    if (!PyTuple_Check(keys) || !PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "an entry's keys are a tuple and its name a str");
        goto done;
    }
    Py_ssize_t n = PyLong_AsSsize_t(lexemes);
    if (n == -1 && PyErr_Occurred()) goto done;
    if (n < 0 || n > PyTuple_GET_SIZE(keys)) {
        PyErr_SetString(PyExc_ValueError, "an entry's lexeme count is outside its keys");
        goto done;
    }
    if (PyObject_GetBuffer(terms, &view, PyBUF_FORMAT) < 0) goto done;
    viewed = 1;
    if (view.itemsize != sizeof(float) || view.format == NULL || strcmp(view.format, "f") != 0) {
        PyErr_SetString(PyExc_TypeError, "an entry's terms are an array('f')");
        goto done;
    }
    float rank;
    if (entry_rank(keys, n, (const float *)view.buf, view.len / (Py_ssize_t)sizeof(float), operands, size, &rank) < 0)
        goto done;
    double bonus = 0.0;
    int c = PyUnicode_Compare(name, ql);
    if (c == -1 && PyErr_Occurred()) goto done;
    if (c == 0) bonus = 1.0;
    else {
        Py_ssize_t m = PyUnicode_Tailmatch(name, ql, 0, PY_SSIZE_T_MAX, -1);
        if (m < 0) goto done;
        if (m) bonus = 0.5;
    }
    double pop = PyFloat_AsDouble(popularity);
    if (pop == -1.0 && PyErr_Occurred()) goto done;
    *out = (double)rank + bonus + pop;
    ok = 0;
done:
    if (viewed) PyBuffer_Release(&view);
    Py_XDECREF(keys);
    Py_XDECREF(lexemes);
    Py_XDECREF(terms);
    Py_XDECREF(name);
    Py_XDECREF(popularity);
    return ok;
}

static PyObject *relevances(PyObject *self, PyObject *args) {
    PyObject *entries, *ordinals, *operands, *ql;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "O!OOnU", &PyList_Type, &entries, &ordinals, &operands, &size, &ql)) return NULL;
    operands = PySequence_Fast(operands, "operands must be a sequence");  /* (a new reference) */
    if (operands == NULL) return NULL;
    PyObject *it = PyObject_GetIter(ordinals);
    if (it == NULL) {
        Py_DECREF(operands);
        return NULL;
    }
    PyObject *out = PyList_New(0), *o;
    if (out == NULL) goto fail;
    while ((o = PyIter_Next(it)) != NULL) {
        Py_ssize_t k = PyLong_AsSsize_t(o);
        Py_DECREF(o);
        if (k == -1 && PyErr_Occurred()) goto fail;
        if (k < 0 || k >= PyList_GET_SIZE(entries)) {
            PyErr_SetString(PyExc_IndexError, "ordinal outside the entries");
            goto fail;
        }
        double r;
        if (relevance_of(PyList_GET_ITEM(entries, k), operands, size, ql, &r) < 0) goto fail;
        PyObject *v = PyFloat_FromDouble(r);
        if (v == NULL) goto fail;
        int failed = PyList_Append(out, v) < 0;
        Py_DECREF(v);
        if (failed) goto fail;
    }
    if (PyErr_Occurred()) goto fail;
    Py_DECREF(it);
    Py_DECREF(operands);
    return out;
fail:
    Py_DECREF(it);
    Py_DECREF(operands);
    Py_XDECREF(out);
    return NULL;
}

/* shared_counts's counters: kept between calls (grown as ordinals grow), all zero between them. */
static uint16_t *s_counts;
static size_t s_counts_len;
static PyObject *s_array;  /* array.array */

static int cmp_view_len(const void *x, const void *y) {
    Py_ssize_t a = ((const Py_buffer *)x)->len, b = ((const Py_buffer *)y)->len;
    return (a > b) - (a < b);
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* A kept buffer (all zero between calls) of at least ``need`` items of ``size`` bytes: grown
 * zeroed when shorter (its old contents are all zero, so nothing is copied); -1 and
 * MemoryError when it cannot be. */
static int kept_at_least(void **buf, size_t *len, size_t need, size_t size) {
    if (need <= *len) return 0;
    void *grown = PyMem_Calloc(need, size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(*buf);
    *buf = grown;
    *len = need;
    return 0;
}

static PyObject *array_of(const char *typecode, const void *data, Py_ssize_t len) {
    PyObject *raw = PyBytes_FromStringAndSize(data, len);
    if (raw == NULL) return NULL;
    PyObject *out = PyObject_CallFunction(s_array, "sO", typecode, raw);
    Py_DECREF(raw);
    return out;
}

static PyObject *shared_counts(PyObject *self, PyObject *args) {
    PyObject *arrays;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "On", &arrays, &k)) return NULL;
    PyObject *seq = PySequence_Fast(arrays, "arrays must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq), got = 0, nfound = 0;
    PyObject *result = NULL;
    Py_buffer *views = PyMem_Calloc(m ? m : 1, sizeof(Py_buffer));
    uint64_t *found = NULL;
    uint32_t *members = NULL;
    uint16_t *counts = NULL;
    if (views == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (k < 1 || m > UINT16_MAX) {
        PyErr_SetString(PyExc_ValueError, "k must be at least 1, and the sets at most 65535");
        goto done;
    }
    size_t top = 0;
    for (; got < m; got++) {
        Py_buffer *v = &views[got];
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), v, PyBUF_FORMAT) < 0) goto done;
        if (v->itemsize != 4 || v->format == NULL || strcmp(v->format, "I") != 0) {
            got++;
            PyErr_SetString(PyExc_TypeError, "the sets are buffers of uint32 (array('I'))");
            goto done;
        }
        Py_ssize_t n = v->len / 4;
        if (n && (size_t)((const uint32_t *)v->buf)[n - 1] + 1 > top) top = (size_t)((const uint32_t *)v->buf)[n - 1] + 1;
    }
    if (kept_at_least((void **)&s_counts, &s_counts_len, top, sizeof(uint16_t)) < 0) goto done;
    if (k <= m) {
        /* Count; an ordinal past the last one of its set means the set is not sorted. */
        int unsorted = 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            const uint32_t *a = views[i].buf;
            for (Py_ssize_t j = 0, n = views[i].len / 4; j < n; j++) {
                if (a[j] < top) s_counts[a[j]]++;
                else unsorted = 1;
            }
        }
        qsort(views, m, sizeof(Py_buffer), cmp_view_len);
        Py_ssize_t cap = 1;
        for (Py_ssize_t i = 0; i < m - k + 1; i++) cap += views[i].len / 4;
        found = unsorted ? NULL : PyMem_Malloc(cap * sizeof(uint64_t));
        if (found != NULL) {
            for (Py_ssize_t i = 0; i < m - k + 1; i++) {
                const uint32_t *a = views[i].buf;
                for (Py_ssize_t j = 0, n = views[i].len / 4; j < n; j++) {
                    uint16_t c = s_counts[a[j]];
                    if (c >= k) {
                        found[nfound++] = ((uint64_t)a[j] << 16) | c;
                        s_counts[a[j]] = 0;  /* (taken: not again from another set) */
                    }
                }
            }
        }
        for (Py_ssize_t i = 0; i < m; i++) {  /* every counter back to zero */
            const uint32_t *a = views[i].buf;
            for (Py_ssize_t j = 0, n = views[i].len / 4; j < n; j++)
                if (a[j] < top) s_counts[a[j]] = 0;
        }
        if (unsorted) {
            PyErr_SetString(PyExc_ValueError, "each set's ordinals must be in ascending order");
            goto done;
        }
        if (found == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        qsort(found, nfound, sizeof(uint64_t), cmp_u64);
    }
    members = PyMem_Malloc((nfound ? nfound : 1) * sizeof(uint32_t));
    counts = PyMem_Malloc((nfound ? nfound : 1) * sizeof(uint16_t));
    if (members == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nfound; i++) {
        members[i] = (uint32_t)(found[i] >> 16);
        counts[i] = (uint16_t)(found[i] & 0xFFFF);
    }
    PyObject *am = array_of("I", members, nfound * (Py_ssize_t)sizeof(uint32_t));
    PyObject *ac = am == NULL ? NULL : array_of("H", counts, nfound * (Py_ssize_t)sizeof(uint16_t));
    if (ac != NULL) result = PyTuple_Pack(2, am, ac);
    Py_XDECREF(am);
    Py_XDECREF(ac);
done:
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    PyMem_Free(found);
    PyMem_Free(members);
    PyMem_Free(counts);
    Py_DECREF(seq);
    return result;
}

/* union_range's bit set: kept between calls (grown as ordinals grow), all zero between them. */
static uint64_t *s_bits;
static size_t s_bits_len;  /* in words */

static PyObject *union_range(PyObject *self, PyObject *args) {
    PyObject *flat_obj, *offsets_obj;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "OOnn", &flat_obj, &offsets_obj, &lo, &hi)) return NULL;
    Py_buffer flat, offsets;
    if (PyObject_GetBuffer(flat_obj, &flat, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(offsets_obj, &offsets, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&flat);
        return NULL;
    }
    PyObject *result = NULL;
    uint32_t *out = NULL;
    if (flat.itemsize != 4 || flat.format == NULL || strcmp(flat.format, "I") != 0
            || offsets.itemsize != 8 || offsets.format == NULL || strcmp(offsets.format, "Q") != 0) {
        PyErr_SetString(PyExc_TypeError, "flat is a buffer of uint32 (array('I')), offsets of uint64 (array('Q'))");
        goto done;
    }
    const uint32_t *a = flat.buf;
    const uint64_t *off = offsets.buf;
    Py_ssize_t nflat = flat.len / 4, nsets = offsets.len / 8 - 1;
    if (lo < 0 || hi < lo || hi > nsets) {
        PyErr_SetString(PyExc_ValueError, "lo and hi must be 0 <= lo <= hi <= len(offsets) - 1");
        goto done;
    }
    uint64_t start = off[lo], stop = off[hi];
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (off[i] > off[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "offsets must not decrease");
            goto done;
        }
    }
    if (stop > (uint64_t)nflat) {
        PyErr_SetString(PyExc_ValueError, "offsets point past the end of flat");
        goto done;
    }
    if (start == stop) {  /* no ordinal: the empty array */
        result = array_of("I", NULL, 0);
        goto done;
    }
    uint32_t top = 0;
    for (uint64_t j = start; j < stop; j++)
        if (a[j] > top) top = a[j];
    size_t words = (size_t)top / 64 + 1;
    if (kept_at_least((void **)&s_bits, &s_bits_len, words, sizeof(uint64_t)) < 0) goto done;
    size_t first = words, last = 0;
    for (uint64_t j = start; j < stop; j++) {
        size_t w = a[j] / 64;
        s_bits[w] |= (uint64_t)1 << (a[j] % 64);
        if (w < first) first = w;
        if (w > last) last = w;
    }
    Py_ssize_t n = 0;
    for (size_t w = first; w <= last; w++) n += __builtin_popcountll(s_bits[w]);
    out = PyMem_Malloc(n * sizeof(uint32_t));
    if (out == NULL) {
        memset(s_bits + first, 0, (last - first + 1) * sizeof(uint64_t));
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t got = 0;
    for (size_t w = first; w <= last; w++) {
        uint64_t bits = s_bits[w];
        while (bits) {
            out[got++] = (uint32_t)(w * 64 + __builtin_ctzll(bits));
            bits &= bits - 1;
        }
        s_bits[w] = 0;
    }
    result = array_of("I", out, got * (Py_ssize_t)sizeof(uint32_t));
done:
    PyMem_Free(out);
    PyBuffer_Release(&flat);
    PyBuffer_Release(&offsets);
    return result;
}

static PyMethodDef methods[] = {
    {"relevances", relevances, METH_VARARGS, "SearchIndex.relevance of each ordinal."},
    {"similar_among", similar_among, METH_VARARGS, "{o: word_similarity(query, items[o].name)} at least threshold."},
    {"shared_counts", shared_counts, METH_VARARGS, "Members of at least k of the sorted sets, with their counts."},
    {"union_range", union_range, METH_VARARGS, "The union, ascending, of the sets lo..hi-1 laid end to end."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastsearch", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastsearch(void) {
    s_keys = PyUnicode_InternFromString("keys");
    s_lexemes = PyUnicode_InternFromString("lexemes");
    s_terms = PyUnicode_InternFromString("terms");
    s_name = PyUnicode_InternFromString("name");
    s_popularity = PyUnicode_InternFromString("popularity");
    if (!s_keys || !s_lexemes || !s_terms || !s_name || !s_popularity) return NULL;
    PyObject *array_module = PyImport_ImportModule("array");
    if (array_module == NULL) return NULL;
    s_array = PyObject_GetAttrString(array_module, "array");
    Py_DECREF(array_module);
    if (s_array == NULL) return NULL;
    return PyModule_Create(&module);
}
