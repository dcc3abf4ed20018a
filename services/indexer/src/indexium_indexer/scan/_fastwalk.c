/* The scan's per-entry hot path in C: walk the plain local entries of one window, inflate
 * each class, run the constant-pool prefilter (rules.NEEDLES), and hand back only the
 * classes that name a rule's API.
 *
 * An optimisation only, never a second implementation of the rules: zipstream.ZipWalk
 * calls walk_batch_start() when this module was built (`make env`), and walks in Python
 * otherwise. The batch takes only the entries whose handling has no branch: a local
 * header without zip64 sizes whose size is known (from the header, or from the indexer
 * for one written with a data descriptor), wholly inside the window with its descriptor,
 * a `.class` that is stored or deflated and inflates cleanly within its limits, or any
 * other entry that is skipped by its size. At anything else (a nested jar, an encrypted
 * class, a corrupt stream, a descriptor that disagrees, a limit crossed, the end of the
 * window) it stops *before* that entry, and the Python walk takes it: so every error and
 * every limit is still raised by the Python code, with its messages.
 *
 * The same module reads the structure of the classes that pass (class_pool, class_rest)
 * and finds their methods worth walking (hot_methods), for classfile.py and rules.py.
 *
 * The window is walked and inflated without the GIL (the hashing thread runs meanwhile), by
 * the walk's thread and, for a window of many classes, helper threads (see "one batch"
 * below); each class that passes is handed to Python (name, flags, bytes) as soon as it is
 * read, in file order, and the (offset, fingerprint) pairs of the walked entries once the
 * batch ends. tests/unit/scan/test_fastwalk.py runs both walks over the same jars.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#ifdef HAVE_LIBDEFLATE /* build_fastwalk.py defines it where libdeflate's header is */
#include <libdeflate.h>
#define INFLATER "libdeflate " LIBDEFLATE_VERSION_STRING
#else
#define INFLATER "zlib"
#endif

#define LOCAL_SIZE 30
#define FLAG_ENCRYPTED 0x1
#define FLAG_DESCRIPTOR 0x8
#define MAX_NEEDLES 256
#define KEPT_MAX (1 << 20) /* class bytes one batch keeps before it hands them over */

static unsigned char *needle_text[MAX_NEEDLES];
static int needle_len[MAX_NEEDLES];
static int needle_flags[MAX_NEEDLES]; /* hot_methods' sets: 1 owner, 2 type, 4 name, 8 string */
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
    PyObject *seq = PySequence_Fast(arg, "needles must be a sequence of (bytes, flags)");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_NEEDLES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many needles");
        return NULL;
    }
    if (n_needles) { /* set once: a batch reads them without the GIL, so they are never freed */
        int same = n == n_needles;
        for (Py_ssize_t i = 0; same && i < n; i++) {
            PyObject *item;
            int flags;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Si", &item, &flags)) {
                Py_DECREF(seq);
                return NULL;
            }
            same = PyBytes_GET_SIZE(item) == needle_len[i] && flags == needle_flags[i] &&
                   memcmp(PyBytes_AS_STRING(item), needle_text[i], (size_t)needle_len[i]) == 0;
        }
        Py_DECREF(seq);
        if (same) Py_RETURN_NONE; /* rules.py imported again */
        PyErr_SetString(PyExc_RuntimeError, "the needles are set already, to others");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *item;
        char *text;
        Py_ssize_t len;
        int flags;
        if (!PyArg_ParseTuple(pair, "Si", &item, &flags) || PyBytes_AsStringAndSize(item, &text, &len) < 0) {
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
        needle_flags[n_needles] = flags;
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
    uint64_t csize;
    size_t next_at; /* the window position after this entry (and its descriptor) */
    const unsigned char *body; /* a class's stored or deflated bytes; NULL: not a class */
    uint32_t usize; /* the local header's size (a hint for the inflater) */
    atomic_int state; /* a class: 0 not read yet, 1 read, -1 not for the batch, -2 out of memory */
    size_t got; /* its inflated bytes */
    unsigned char *data; /* a passing class's bytes (malloc), or NULL */
    size_t dlen;
    int stored; /* data points into the window, not malloc */
} Walked;

/* Inflate one raw deflate stream into *out (grown as needed, at most limit + 1 bytes).
 * 1: done, *got bytes; 0: not for the batch (corrupt, truncated, larger than limit). */
static int inflate_class(z_stream *z, void *ld, const unsigned char *in, uint32_t csize, uint32_t usize_hint,
                         size_t limit, unsigned char **out, size_t *cap, size_t *got) {
#ifdef HAVE_LIBDEFLATE
    /* One-shot, into a buffer of the size the local header gives (~30% less CPU a class than
     * zlib): only a stream that ends within csize and inflates to at most that size succeeds,
     * and its bytes are the stream's own whichever inflater reads it. Anything else (no size,
     * a wrong one, a damaged stream) is left to zlib below, which decides as it always did. */
    if (ld != NULL && usize_hint > 0 && (size_t)usize_hint <= limit) {
        if (*cap < usize_hint) {
            unsigned char *grown = realloc(*out, usize_hint);
            if (grown != NULL) {
                *out = grown;
                *cap = usize_hint;
            }
        }
        size_t done;
        if (*cap >= usize_hint &&
            libdeflate_deflate_decompress(ld, in, csize, *out, usize_hint, &done) == LIBDEFLATE_SUCCESS) {
            *got = done;
            return 1;
        }
    }
#else
    (void)ld;
#endif
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

/* ZipWalk._print: hash((raw_name, method, compressed size)), the interpreter's keyed hash.
 * Computed as CPython's tuple hash does (xxHash's rounds over the items' hashes: the bytes'
 * keyed hash, the ints' own values), without making the bytes and the tuple: two of each per
 * entry (its local header, its directory record) were a tenth of the walk's non-inflate time.
 * The module checks at import that it gives the interpreter's own hash on sample keys, and
 * makes the tuple when it does not (another interpreter's hash: print_direct is 0). */
static int print_direct;

#if SIZEOF_VOID_P == 8
#define XXPRIME_1 ((Py_uhash_t)11400714785074694791ULL)
#define XXPRIME_2 ((Py_uhash_t)14029467366897019727ULL)
#define XXPRIME_5 ((Py_uhash_t)2870177450012600261ULL)
#define XXROTATE(x) ((x << 31) | (x >> 33))
#else
#define XXPRIME_1 ((Py_uhash_t)2654435761UL)
#define XXPRIME_2 ((Py_uhash_t)2246822519UL)
#define XXPRIME_5 ((Py_uhash_t)374761393UL)
#define XXROTATE(x) ((x << 13) | (x >> 19))
#endif

static Py_uhash_t direct_print(const unsigned char *name, size_t n, unsigned method, uint64_t csize) {
    Py_uhash_t lanes[3] = {(Py_uhash_t)_Py_HashBytes(name, (Py_ssize_t)n), (Py_uhash_t)method,
                           (Py_uhash_t)(csize % _PyHASH_MODULUS)};
    Py_uhash_t acc = XXPRIME_5;
    for (int i = 0; i < 3; i++) {
        acc += lanes[i] * XXPRIME_2;
        acc = XXROTATE(acc);
        acc *= XXPRIME_1;
    }
    acc += 3 ^ (XXPRIME_5 ^ 3527539UL);
    if (acc == (Py_uhash_t)-1) return 1546275796;
    return acc;
}

static int tuple_print(const unsigned char *name, size_t n, unsigned method, uint64_t csize, uint64_t *out) {
    PyObject *key = Py_BuildValue("(y#IK)", (const char *)name, (Py_ssize_t)n, method, (unsigned long long)csize);
    if (key == NULL) return 0;
    Py_hash_t hv = PyObject_Hash(key);
    Py_DECREF(key);
    if (hv == -1 && PyErr_Occurred()) return 0;
    *out = (uint64_t)hv;
    return 1;
}

/* 1 and *out set, or 0 with an exception. */
static int entry_print(const unsigned char *name, size_t n, unsigned method, uint64_t csize, uint64_t *out) {
    if (print_direct) {
        *out = (uint64_t)direct_print(name, n, method, csize);
        return 1;
    }
    return tuple_print(name, n, method, csize, out);
}

static int check_direct_print(void) {
    static const struct { const char *name; size_t n; unsigned method; uint64_t csize; } samples[] = {
        {"", 0, 0, 0}, {"com/example/A.class", 19, 8, 1234}, {"META-INF/MANIFEST.MF", 20, 0, 4294967295ULL},
        {"a", 1, 65535, 1}, {"\xff\xfe/\x80.class", 10, 12, 2305843009213693951ULL}};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        uint64_t slow;
        if (!tuple_print((const unsigned char *)samples[i].name, samples[i].n, samples[i].method, samples[i].csize,
                         &slow))
            return -1;
        if ((uint64_t)direct_print((const unsigned char *)samples[i].name, samples[i].n, samples[i].method,
                                   samples[i].csize) != slow)
            return 0;
    }
    return 1;
}

/* ---- one batch: its headers walked, its classes read by one or more threads, in order ----
 *
 * walk_batch_start() walks the window's local headers (cheap: sizes and names) and makes the
 * batch's classes jobs, which threads take in turn from a shared counter: helpers it starts
 * (C, no GIL) for a window of many classes, and the walk's own thread, which also goes
 * through the jobs in file order (Batch.next_hit) and hands each class that passes the
 * prefilter to Python as soon as it is read, so the rules check one class while the helpers
 * inflate the next ones. The file's order and every stop (a class not for the batch, the
 * inflate budget, the bytes a batch keeps) are decided by that in-order pass alone, so the
 * answer is the same whoever read which class: a thread only stops taking jobs past a point
 * the batch is sure to end at (``cut``), to bound the work and memory spent on entries it
 * gives back. On a 2-core machine the hashing thread leaves most of a core idle: the helper
 * takes it, and the walk's thread, in Python between classes, helps with the jobs whenever
 * the next class in order is not read yet. */

static atomic_ullong helpers_started; /* for tests and the bench: helper threads ever started */

#define MIN_JOBS_PER_THREAD 24 /* deflated classes a helper must have to be worth starting */
#define MAX_THREADS 8

typedef struct {
    Walked *walked;
    size_t *jobs; /* indices into walked of the class entries, in file order */
    size_t n_jobs;
    size_t limit; /* largest class */
    long long inflated_room; /* the budget's inflated bytes left */
    atomic_size_t next; /* the next job to take */
    atomic_size_t cut; /* jobs from here on are past where the batch ends: not taken */
    atomic_llong inflated;
    atomic_size_t kept;
} Jobs;

typedef struct { /* one thread's inflaters */
    z_stream z;
    int z_ready;
    void *ld;
    unsigned char *scratch;
    size_t cap;
} Inflater;

static void inflater_open(Inflater *in) {
    memset(in, 0, sizeof *in);
    in->z_ready = inflateInit2(&in->z, -MAX_WBITS) == Z_OK;
#ifdef HAVE_LIBDEFLATE
    in->ld = libdeflate_alloc_decompressor(); /* NULL (no memory): zlib alone */
#endif
}

static void inflater_close(Inflater *in) {
    free(in->scratch);
    in->scratch = NULL;
    if (in->z_ready) inflateEnd(&in->z);
    in->z_ready = 0;
#ifdef HAVE_LIBDEFLATE
    if (in->ld != NULL) libdeflate_free_decompressor(in->ld);
    in->ld = NULL;
#endif
}

static void cut_at(Jobs *J, size_t i) {
    size_t now = atomic_load(&J->cut);
    while (i < now && !atomic_compare_exchange_weak(&J->cut, &now, i)) {
    }
}

/* Read job i (taken by this thread): its state is published last (release). */
static void do_job(Jobs *J, size_t i, Inflater *in) {
    Walked *w = &J->walked[J->jobs[i]];
    size_t got = 0;
    int state = 1;
    if (w->method == 0) {
        if (has_needles(w->body, (size_t)w->csize)) {
            w->data = (unsigned char *)w->body;
            w->dlen = (size_t)w->csize;
            w->stored = 1;
        }
    } else if (!in->z_ready ||
               !inflate_class(&in->z, in->ld, w->body, (uint32_t)w->csize, w->usize, J->limit, &in->scratch,
                              &in->cap, &got)) {
        state = -1; /* the batch ends at this class, or before */
    } else if (has_needles(in->scratch, got)) {
        w->data = malloc(got ? got : 1);
        if (w->data == NULL) {
            state = -2;
        } else {
            memcpy(w->data, in->scratch, got);
            w->dlen = got;
        }
    }
    w->got = got;
    if (state != 1) {
        cut_at(J, i);
    } else if (atomic_fetch_add(&J->inflated, (long long)got) + (long long)got > J->inflated_room ||
               atomic_fetch_add(&J->kept, w->dlen) + w->dlen >= KEPT_MAX) {
        cut_at(J, i + 1); /* the batch ends at the next class at the latest */
    }
    atomic_store_explicit(&w->state, state, memory_order_release);
}

static void *helper_main(void *arg) {
    Jobs *J = arg;
    Inflater in;
    inflater_open(&in);
    for (;;) {
        size_t i = atomic_fetch_add(&J->next, 1);
        if (i >= atomic_load(&J->cut)) break; /* (cut starts at n_jobs) */
        do_job(J, i, &in);
    }
    inflater_close(&in);
    return NULL;
}

typedef struct {
    PyObject_HEAD
    Py_buffer view, kview, sview;
    int has_keys;
    Jobs J; /* its walked entries and jobs, and what the threads share */
    size_t n_walked;
    pthread_t helpers[MAX_THREADS];
    int started;
    Inflater in; /* the walk's own thread's */
    size_t q; /* the next job of the in-order pass */
    size_t pos0; /* where the batch started in the window */
    long long inflated, n_classes;
    size_t kept_total;
    size_t keep; /* entries the batch takes, once ended */
    int ended, failed, finished;
    int busy; /* a call runs without the GIL: another thread's call is refused */
} Batch;

static PyTypeObject BatchType;

/* Stop the helpers (no new job) and wait for them. */
static void batch_join(Batch *b) {
    if (!b->started) return;
    cut_at(&b->J, 0);
    Py_BEGIN_ALLOW_THREADS
    for (int t = 0; t < b->started; t++) pthread_join(b->helpers[t], NULL);
    Py_END_ALLOW_THREADS
    b->started = 0;
}

static void batch_free_data(Batch *b) { /* the bytes still held: hits not handed over */
    for (size_t k = 0; k < b->n_walked; k++) {
        Walked *w = &b->J.walked[k];
        if (w->data != NULL && !w->stored) free(w->data);
        w->data = NULL;
    }
}

static void batch_dealloc(Batch *b) {
    batch_join(b);
    if (b->J.walked != NULL) batch_free_data(b);
    free(b->J.walked);
    free(b->J.jobs);
    inflater_close(&b->in);
    PyBuffer_Release(&b->view);
    if (b->has_keys) {
        PyBuffer_Release(&b->kview);
        PyBuffer_Release(&b->sview);
    }
    PyObject_Free(b);
}

/* The in-order pass, without the GIL: on to the next class that passes the prefilter (its
 * Walked, 1) or to the batch's end (0, ended set). */
static Walked *batch_advance(Batch *b) {
    Jobs *J = &b->J;
    while (!b->ended) {
        if (b->q == J->n_jobs) { /* every class read and taken: the batch takes every entry walked */
            b->keep = b->n_walked;
            b->ended = 1;
            break;
        }
        size_t at_entry = J->jobs[b->q];
        Walked *w = &J->walked[at_entry];
        int state;
        unsigned spins = 0;
        while ((state = atomic_load_explicit(&w->state, memory_order_acquire)) == 0) {
            if (b->q >= atomic_load(&J->cut)) break; /* past where the batch ends: not read */
            size_t i = atomic_fetch_add(&J->next, 1); /* help: jobs are taken in order */
            if (i < atomic_load(&J->cut)) {
                do_job(J, i, &b->in);
            } else if (++spins % 64 == 0) {
                sched_yield(); /* a helper took job q and reads it (a few µs), unless it lost its core */
            }
        }
        if (state == -2) b->failed = 1;
        if (state != 1 || J->inflated_room - b->inflated - (long long)w->got < 0) {
            b->keep = at_entry;
            b->ended = 1;
            break;
        }
        b->inflated += (long long)w->got;
        b->n_classes++;
        b->kept_total += w->dlen;
        b->q++;
        if (b->kept_total >= KEPT_MAX) { /* memory: the batch ends after this class */
            b->keep = at_entry + 1;
            b->ended = 1;
        }
        if (w->data != NULL) return w;
    }
    cut_at(J, 0);
    return NULL;
}

/* Batch.next_hit() -> (raw_name, flags, bytes) of the next class that passes, or None at the end. */
static int batch_enter(Batch *b) {
    if (b->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the batch is in use by another thread");
        return 0;
    }
    b->busy = 1;
    return 1;
}

static PyObject *batch_next_hit(Batch *b, PyObject *unused) {
    if (b->finished || b->ended) Py_RETURN_NONE;
    if (!batch_enter(b)) return NULL;
    Walked *w;
    Py_BEGIN_ALLOW_THREADS
    w = batch_advance(b);
    Py_END_ALLOW_THREADS
    b->busy = 0;
    if (b->failed) return PyErr_NoMemory();
    if (w == NULL) Py_RETURN_NONE;
    PyObject *hit = Py_BuildValue("(y#Iy#)", (const char *)w->name, (Py_ssize_t)w->nlen, (unsigned int)w->flags,
                                  (const char *)w->data, (Py_ssize_t)w->dlen);
    if (!w->stored) free(w->data); /* handed over: the batch still counts its size (KEPT_MAX) */
    w->data = NULL;
    return hit;
}

/* Batch.finish() -> (pos, entries, classes, inflated, walked): the rest of the in-order pass
 * (hits not asked for are dropped), the helpers joined. walked: bytes of (offset, fingerprint)
 * u64 pairs (native order, as array('Q') reads them). */
static PyObject *batch_finish(Batch *b, PyObject *unused) {
    if (b->finished) {
        PyErr_SetString(PyExc_RuntimeError, "the batch is finished already");
        return NULL;
    }
    if (!batch_enter(b)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    while (batch_advance(b) != NULL) {
    }
    Py_END_ALLOW_THREADS
    batch_join(b);
    b->busy = 0;
    b->finished = 1;
    if (b->failed) return PyErr_NoMemory();
    batch_free_data(b);
    size_t n = b->keep;
    size_t at = n ? b->J.walked[n - 1].next_at : b->pos0;
    PyObject *prints = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 16));
    if (prints == NULL) return NULL;
    uint64_t *pairs = (uint64_t *)PyBytes_AS_STRING(prints);
    for (size_t i = 0; i < n; i++) {
        Walked *w = &b->J.walked[i];
        pairs[2 * i] = w->offset;
        if (!entry_print(w->name, w->nlen, w->method, w->csize, &pairs[2 * i + 1])) {
            Py_DECREF(prints);
            return NULL;
        }
    }
    PyObject *result = Py_BuildValue("(nnLLN)", (Py_ssize_t)at, (Py_ssize_t)n, b->n_classes, b->inflated, prints);
    return result;
}

static PyMethodDef batch_methods[] = {
    {"next_hit", (PyCFunction)batch_next_hit, METH_NOARGS, "The next class that passes the prefilter, or None."},
    {"finish", (PyCFunction)batch_finish, METH_NOARGS, "(pos, entries, classes, inflated, walked)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_fastwalk.Batch",
    .tp_basicsize = sizeof(Batch),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_methods = batch_methods,
    .tp_doc = "One window's run of plain entries (walk_batch_start).",
};

/* walk_batch_start(buf, pos, base, keys, sizes, entries_left, inflated_left, class_limit,
 * min_offset, threads=1) -> Batch | None
 *
 * buf[pos:] is the reader's window, base the stream offset of buf[0]; keys and sizes (None,
 * or array('Q') of equal length, keys increasing) are the compressed sizes the indexer sent
 * (ZipWalk's ``sizes``: they override the local header's, and give the size of an entry
 * written with a data descriptor, whose descriptor is then checked here). No entry before
 * ``min_offset`` is taken (headers only go forward). ``threads``: at most this many read the
 * batch's classes (see above). None: not even the first entry is one for the batch. */
static PyObject *walk_batch_start(PyObject *self, PyObject *args) {
    Py_ssize_t pos;
    unsigned long long base, min_offset;
    long long entries_left, inflated_left;
    Py_ssize_t class_limit;
    PyObject *keys_obj, *sizes_obj;
    int threads = 1;
    if (n_needles == 0) { /* an empty prefilter would pass no class: rules.py sets them on import */
        PyErr_SetString(PyExc_RuntimeError, "set_needles() first");
        return NULL;
    }
    Batch *b = PyObject_New(Batch, &BatchType);
    if (b == NULL) return NULL;
    /* everything batch_dealloc reads, before anything can fail */
    memset((char *)b + sizeof(PyObject), 0, sizeof(Batch) - sizeof(PyObject));
    if (!PyArg_ParseTuple(args, "y*nKOOLLnK|i", &b->view, &pos, &base, &keys_obj, &sizes_obj, &entries_left,
                          &inflated_left, &class_limit, &min_offset, &threads)) {
        b->view.obj = NULL;
        Py_DECREF(b);
        return NULL;
    }
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    const uint64_t *keys = NULL, *known_sizes = NULL;
    size_t n_keys = 0;
    if (keys_obj != Py_None) {
        if (PyObject_GetBuffer(keys_obj, &b->kview, PyBUF_SIMPLE) < 0) { Py_DECREF(b); return NULL; }
        if (PyObject_GetBuffer(sizes_obj, &b->sview, PyBUF_SIMPLE) < 0) {
            PyBuffer_Release(&b->kview);
            Py_DECREF(b);
            return NULL;
        }
        b->has_keys = 1;
        if (b->kview.len != b->sview.len || b->kview.len % 8) {
            Py_DECREF(b);
            PyErr_SetString(PyExc_ValueError, "keys and sizes: u64 arrays of one length");
            return NULL;
        }
        keys = b->kview.buf;
        known_sizes = b->sview.buf;
        n_keys = (size_t)b->kview.len / 8;
    }
    const unsigned char *buf = b->view.buf;
    size_t size = (size_t)b->view.len;
    size_t limit = (size_t)class_limit;
    if (pos < 0 || (size_t)pos > size || class_limit < 0) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_ValueError, "bad window");
        return NULL;
    }
    size_t cap_walked = 512, n_walked = 0, n_jobs = 0, n_deflated = 0;
    Walked *walked = malloc(cap_walked * sizeof *walked);
    size_t *jobs = malloc(cap_walked * sizeof *jobs);
    b->J.walked = walked;
    b->J.jobs = jobs;
    if (walked == NULL || jobs == NULL) {
        Py_DECREF(b);
        return PyErr_NoMemory();
    }
    int failed = 0;
    size_t at = (size_t)pos;
    size_t j = 0; /* the first key at or after the window's first entry (bisect_left) */
    if (n_keys) {
        size_t lo = 0, hi = n_keys;
        while (lo < hi) { size_t mid = (lo + hi) / 2; if (keys[mid] < base + at) lo = mid + 1; else hi = mid; }
        j = lo;
    }

    Py_BEGIN_ALLOW_THREADS
    /* The headers: every entry the batch may take, up to the first that is not for it. */
    for (;;) {
        if (size - at < LOCAL_SIZE) break;
        const unsigned char *h = buf + at;
        if (!(h[0] == 'P' && h[1] == 'K' && h[2] == 3 && h[3] == 4)) break;
        uint64_t offset = base + at;
        if (offset < min_offset) break;
        if (entries_left - (long long)n_walked <= 0) break;
        uint16_t flags = u16(h + 6), method = u16(h + 8);
        uint32_t csize = u32(h + 18), usize = u32(h + 22);
        uint16_t nlen = u16(h + 26), elen = u16(h + 28);
        if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu) break;
        /* ZipWalk._local's size_of(offset): the size the indexer sent (the last of equal keys) */
        int has_known = 0;
        uint64_t known = 0;
        while (j < n_keys && keys[j] < offset) j++;
        if (j < n_keys && keys[j] == offset) {
            size_t k = j;
            while (k + 1 < n_keys && keys[k + 1] == offset) k++;
            has_known = 1;
            known = known_sizes[k];
        }
        uint64_t csz;
        if (flags & FLAG_DESCRIPTOR) {
            if (!has_known) break; /* its end is found by inflating it: the Python walk */
            csz = known;
        } else {
            csz = has_known ? known : csize;
        }
        size_t header = LOCAL_SIZE + (size_t)nlen + elen;
        if (size - at < header || csz > size - at - header) break;
        size_t after = at + header + (size_t)csz, descriptor = 0;
        if (flags & FLAG_DESCRIPTOR) { /* ZipWalk._descriptor, without zip64 (those stopped above) */
            if (size - after < 16) break;
            const unsigned char *q = buf + after;
            size_t sig = (q[0] == 'P' && q[1] == 'K' && q[2] == 7 && q[3] == 8) ? 4 : 0;
            if (u32(q + sig + 4) != (uint32_t)csz) break;
            descriptor = sig + 12;
        }
        const unsigned char *name = h + LOCAL_SIZE;
        int is_class = ends_with(name, nlen, ".class", 6, 0);
        if (is_class) {
            if ((flags & FLAG_ENCRYPTED) || (method != 0 && method != 8)) break;
            if (csz > limit + (limit >> 2) + 1024) break;
            if (method == 0 && csz > limit) break;
        } else if (ends_with(name, nlen, ".jar", 4, 1)) {
            break; /* nested archives: the Python walk */
        }
        if (n_walked == cap_walked) {
            Walked *grown = realloc(walked, 2 * cap_walked * sizeof *walked);
            if (grown == NULL) { failed = 1; break; }
            walked = grown;
            size_t *more = realloc(jobs, 2 * cap_walked * sizeof *jobs);
            if (more == NULL) { failed = 1; break; }
            jobs = more;
            cap_walked *= 2;
        }
        Walked *w = &walked[n_walked];
        memset(w, 0, sizeof *w);
        w->offset = offset;
        w->name = name;
        w->nlen = nlen;
        w->flags = flags;
        w->method = method;
        w->csize = csz;
        w->next_at = after + descriptor;
        w->body = is_class ? h + header : NULL;
        w->usize = usize;
        atomic_init(&w->state, 0);
        if (is_class) {
            jobs[n_jobs++] = n_walked;
            n_deflated += method != 0;
        }
        n_walked++;
        at = after + descriptor;
        min_offset = offset + 1;
    }
    Py_END_ALLOW_THREADS
    b->J.walked = walked;
    b->J.jobs = jobs;
    b->n_walked = n_walked;
    if (failed) {
        Py_DECREF(b);
        return PyErr_NoMemory();
    }
    if (n_walked == 0) {
        Py_DECREF(b);
        Py_RETURN_NONE;
    }
    b->pos0 = (size_t)pos;
    Jobs *J = &b->J;
    J->n_jobs = n_jobs;
    J->limit = limit;
    J->inflated_room = inflated_left;
    atomic_init(&J->next, 0);
    atomic_init(&J->cut, n_jobs);
    atomic_init(&J->inflated, 0);
    atomic_init(&J->kept, 0);
    if (n_jobs) {
        inflater_open(&b->in);
        while (b->started < threads - 1 && n_deflated >= (size_t)(b->started + 2) * MIN_JOBS_PER_THREAD &&
               pthread_create(&b->helpers[b->started], NULL, helper_main, J) == 0)
            b->started++; /* a helper that cannot start: the walk's thread reads its share */
        if (b->started) atomic_fetch_add(&helpers_started, (unsigned long long)b->started);
    }
    return (PyObject *)b;
}

/* walk_batch(same arguments as walk_batch_start) -> (pos, entries, classes, inflated, walked, hits):
 * the whole batch at once, hits as a list. */
static PyObject *walk_batch(PyObject *self, PyObject *args) {
    PyObject *started = walk_batch_start(self, args);
    if (started == NULL) return NULL;
    Py_ssize_t pos = 0;
    if (started == Py_None) { /* nothing taken: the window's position, as before */
        Py_DECREF(started);
        PyObject *first = PyTuple_GetItem(args, 1);
        if (first == NULL) return NULL;
        pos = PyLong_AsSsize_t(first);
        if (pos == -1 && PyErr_Occurred()) return NULL;
        return Py_BuildValue("(nnLLyN)", pos, (Py_ssize_t)0, 0LL, 0LL, "", PyList_New(0));
    }
    Batch *b = (Batch *)started;
    PyObject *hits = PyList_New(0), *hit, *done = NULL, *result = NULL;
    if (hits == NULL) goto out;
    while ((hit = batch_next_hit(b, NULL)) != Py_None) {
        if (hit == NULL) goto out;
        int rc = PyList_Append(hits, hit);
        Py_DECREF(hit);
        if (rc < 0) goto out;
    }
    Py_DECREF(hit);
    done = batch_finish(b, NULL);
    if (done == NULL) goto out;
    PyObject *p0 = PyTuple_GET_ITEM(done, 0), *p1 = PyTuple_GET_ITEM(done, 1), *p2 = PyTuple_GET_ITEM(done, 2),
             *p3 = PyTuple_GET_ITEM(done, 3), *p4 = PyTuple_GET_ITEM(done, 4);
    result = PyTuple_Pack(6, p0, p1, p2, p3, p4, hits);
out:
    Py_XDECREF(done);
    Py_XDECREF(hits);
    Py_DECREF(b);
    return result;
}

static PyObject *helpers_count(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(atomic_load(&helpers_started));
}

/* ---- class files: the structure classfile._parse reads, for the classes that pass the prefilter ----
 *
 * class_pool(data) -> (count, tags, offsets, end) | None and class_rest(data, pool, Method, ...)
 * -> (major, access, name, super name, interfaces, methods, [(method, annotation types)],
 * annotation types, bootstrap methods) | None read what classfile._parse reads, with every
 * check it makes (names as str, decoded as ConstantPool.utf8 decodes ASCII).
 * Like the walk they take only what has no branch to an error: at anything _parse would
 * raise on (and at names that are not ASCII, whose decoding Python does) they answer None
 * and parse_class runs _parse, which raises with its own message. */

static const unsigned char pool_steps[256] = {
    [3] = 4, [4] = 4, [5] = 8, [6] = 8, [7] = 2, [8] = 2, [9] = 4, [10] = 4, [11] = 4, [12] = 4,
    [15] = 3, [16] = 2, [17] = 4, [18] = 4, [19] = 2, [20] = 2,
};

static inline unsigned be16(const unsigned char *p) { return ((unsigned)p[0] << 8) | p[1]; }
static inline uint32_t be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static PyObject *class_pool(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "bytes expected");
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(arg);
    size_t n = (size_t)PyBytes_GET_SIZE(arg);
    if (n < 10 || be32(d) != 0xCAFEBABEu) Py_RETURN_NONE;
    unsigned count = be16(d + 8);
    PyObject *tags = PyByteArray_FromStringAndSize(NULL, count);
    if (tags == NULL) return NULL;
    unsigned char *t = (unsigned char *)PyByteArray_AS_STRING(tags);
    if (count) memset(t, 0, count);
    size_t *offs = count ? calloc(count, sizeof *offs) : NULL;
    if (count && offs == NULL) { Py_DECREF(tags); return PyErr_NoMemory(); }
    size_t pos = 10;
    unsigned i = 1;
    int ok = 1;
    while (i < count) {
        if (pos >= n) { ok = 0; break; }
        unsigned tag = d[pos++];
        t[i] = (unsigned char)tag;
        offs[i] = pos;
        if (tag == 1) {
            if (pos + 2 > n) { ok = 0; break; }
            pos += 2 + be16(d + pos);
        } else {
            unsigned size = pool_steps[tag];
            if (!size) { ok = 0; break; }
            pos += size;
            if (size == 8 && i + 1 < count) {
                i++;
                offs[i] = pos - 8;
            }
        }
        i++;
    }
    if (!ok || pos > n) {
        free(offs);
        Py_DECREF(tags);
        Py_RETURN_NONE;
    }
    PyObject *offsets = PyList_New(count);
    if (offsets == NULL) { free(offs); Py_DECREF(tags); return NULL; }
    for (unsigned k = 0; k < count; k++) {
        PyObject *v = PyLong_FromSize_t(offs[k]);
        if (v == NULL) { free(offs); Py_DECREF(tags); Py_DECREF(offsets); return NULL; }
        PyList_SET_ITEM(offsets, k, v);
    }
    free(offs);
    return Py_BuildValue("(INNn)", count, tags, offsets, (Py_ssize_t)pos);
}

typedef struct {
    const unsigned char *d;
    size_t n;
    unsigned count;
    const unsigned char *tags;
    PyObject *offsets; /* list of int */
} Pool;

static int pool_offset(const Pool *p, unsigned index, size_t *out) {
    PyObject *v = PyList_GET_ITEM(p->offsets, index);
    size_t at = PyLong_AsSize_t(v);
    if (at == (size_t)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    *out = at;
    return 1;
}

/* A Utf8 entry _parse decodes: in range, tagged Utf8, and ASCII (else Python decodes it). */
static int ascii_utf8(const Pool *p, unsigned index) {
    if (!(index > 0 && index < p->count && p->tags[index] == 1)) return 0;
    size_t at;
    if (!pool_offset(p, index, &at) || at + 2 > p->n) return 0;
    size_t len = be16(p->d + at);
    if (at + 2 + len > p->n) return 0;
    for (size_t k = 0; k < len; k++) if (p->d[at + 2 + k] & 0x80) return 0;
    return 1;
}

static int class_entry(const Pool *p, unsigned index) {
    if (!(index > 0 && index < p->count && p->tags[index] == 7)) return 0;
    size_t at;
    if (!pool_offset(p, index, &at) || at + 2 > p->n) return 0;
    return ascii_utf8(p, be16(p->d + at));
}

/* 1 when the attribute name at ``index`` is a Utf8 entry; *which: 1 Code, 2 annotations,
 * 3 BootstrapMethods, 0 another (as ConstantPool.attribute_name). */
static int attribute_kind(const Pool *p, unsigned index, int *which) {
    if (!(index > 0 && index < p->count && p->tags[index] == 1)) return 0;
    size_t at;
    if (!pool_offset(p, index, &at) || at + 2 > p->n) return 0;
    size_t len = be16(p->d + at);
    const unsigned char *s = p->d + at + 2;
    if (at + 2 + len > p->n) return 0;  /* Python slices short here and compares: not a known name */
    *which = 0;
    if (len == 4 && memcmp(s, "Code", 4) == 0) *which = 1;
    else if ((len == 25 && memcmp(s, "RuntimeVisibleAnnotations", 25) == 0) ||
             (len == 27 && memcmp(s, "RuntimeInvisibleAnnotations", 27) == 0)) *which = 2;
    else if (len == 16 && memcmp(s, "BootstrapMethods", 16) == 0) *which = 3;
    return 1;
}

/* The text of a Utf8 entry ascii_utf8 accepted, as ConstantPool.utf8 decodes it (ASCII: the same). */
static PyObject *utf8_str(const Pool *p, unsigned index) {
    size_t at;
    if (!pool_offset(p, index, &at)) return NULL;
    return PyUnicode_DecodeASCII((const char *)p->d + at + 2, (Py_ssize_t)be16(p->d + at), NULL);
}

static PyObject *class_str(const Pool *p, unsigned index) { /* ConstantPool.class_name, class_entry accepted */
    size_t at;
    if (!pool_offset(p, index, &at)) return NULL;
    return utf8_str(p, be16(p->d + at));
}

static int element_value(const Pool *p, size_t *pos, int depth);

/* classfile._annotation: the type checked, the pairs walked; 0 where _parse would raise. */
static int annotation(const Pool *p, size_t *pos, int depth, unsigned *type) {
    if (*pos + 4 > p->n) return 0;
    unsigned type_index = be16(p->d + *pos), pairs = be16(p->d + *pos + 2);
    *pos += 4;
    for (unsigned k = 0; k < pairs; k++) {
        *pos += 2;
        if (!element_value(p, pos, depth)) return 0;
    }
    if (!ascii_utf8(p, type_index)) return 0;
    *type = type_index;
    return 1;
}

static int element_value(const Pool *p, size_t *pos, int depth) {
    if (depth > 64) return 0;
    if (*pos >= p->n) return 0;
    unsigned char tag = p->d[(*pos)++];
    unsigned dummy;
    switch (tag) {
    case 'B': case 'C': case 'D': case 'F': case 'I': case 'J': case 'S': case 'Z': case 's': case 'c':
        *pos += 2;
        return 1;
    case 'e':
        *pos += 4;
        return 1;
    case '@':
        return annotation(p, pos, depth + 1, &dummy);
    case '[': {
        if (*pos + 2 > p->n) return 0;
        unsigned count = be16(p->d + *pos);
        *pos += 2;
        for (unsigned k = 0; k < count; k++)
            if (!element_value(p, pos, depth + 1)) return 0;
        return 1;
    }
    default:
        return 0;
    }
}

/* classfile._annotation_types over [pos, end): appends the outer types (str) to ``out``. */
static int annotation_types(const Pool *p, size_t pos, size_t end, PyObject *out) {
    if (pos + 2 > p->n) return 0;
    unsigned count = be16(p->d + pos);
    pos += 2;
    for (unsigned k = 0; k < count; k++) {
        unsigned type;
        if (!annotation(p, &pos, 0, &type)) return 0;
        PyObject *v = utf8_str(p, type);
        if (v == NULL || PyList_Append(out, v) < 0) { Py_XDECREF(v); return -1; }
        Py_DECREF(v);
    }
    return pos <= end ? 1 : 0;
}

static PyObject *s_access, *s_pool, *s_name_index, *s_desc_index, *s_name, *s_descriptor, *s_code,
    *s_handlers, *s_annotations, *s_code_at;

/* Where classfile.Method keeps each of its __slots__, in the order of slot_names below, read
 * once from its member descriptors: writing them directly (as the descriptors' own __set__
 * does) instead of through ten PyObject_SetAttr calls a method, which were a fifth of the
 * C reading's time. Any descriptor other than a plain object slot: the SetAttr path. */
enum { SL_ACCESS, SL_POOL, SL_NAME_INDEX, SL_DESC_INDEX, SL_NAME, SL_DESCRIPTOR, SL_CODE, SL_CODE_AT, SL_HANDLERS,
       SL_ANNOTATIONS, N_SLOTS };
static PyTypeObject *slots_type; /* the type slot_offsets is for (a strong reference) */
static Py_ssize_t slot_offsets[N_SLOTS];
static int slots_usable;

static void find_slots(PyTypeObject *type) {
    PyObject *names[N_SLOTS] = {s_access, s_pool, s_name_index, s_desc_index, s_name, s_descriptor, s_code,
                                s_code_at, s_handlers, s_annotations};
    slots_usable = 0;
    Py_XDECREF(slots_type);
    Py_INCREF(type);
    slots_type = type;
    for (int i = 0; i < N_SLOTS; i++) {
        PyObject *descr = _PyType_Lookup(type, names[i]); /* borrowed */
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return;
        PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
        if (def->type != T_OBJECT_EX || (def->flags & READONLY) || def->offset <= 0) return;
        slot_offsets[i] = def->offset;
    }
    slots_usable = 1;
}

static inline void put_slot(PyObject *m, int slot, PyObject *v) { /* v: a new reference, stolen */
    PyObject **p = (PyObject **)((char *)m + slot_offsets[slot]);
    PyObject *old = *p;
    *p = v;
    Py_XDECREF(old);
}

static int set_slots(PyObject *m, unsigned access, PyObject *pool, unsigned name_index, unsigned desc_index,
                     PyObject *code, PyObject *handlers, Py_ssize_t code_at) {
    if (Py_TYPE(m) != slots_type) find_slots(Py_TYPE(m));
    if (slots_usable) {
        PyObject *a = PyLong_FromUnsignedLong(access), *ni = PyLong_FromUnsignedLong(name_index),
                 *di = PyLong_FromUnsignedLong(desc_index), *ca = PyLong_FromSsize_t(code_at);
        PyObject *empty = PyTuple_New(0);
        if (!(a && ni && di && ca && empty)) {
            Py_XDECREF(a); Py_XDECREF(ni); Py_XDECREF(di); Py_XDECREF(ca); Py_XDECREF(empty);
            return -1;
        }
        put_slot(m, SL_ACCESS, a);
        put_slot(m, SL_POOL, Py_NewRef(pool));
        put_slot(m, SL_NAME_INDEX, ni);
        put_slot(m, SL_DESC_INDEX, di);
        put_slot(m, SL_NAME, Py_NewRef(Py_None));
        put_slot(m, SL_DESCRIPTOR, Py_NewRef(Py_None));
        put_slot(m, SL_CODE, Py_NewRef(code));
        put_slot(m, SL_CODE_AT, ca);
        put_slot(m, SL_HANDLERS, Py_NewRef(handlers));
        put_slot(m, SL_ANNOTATIONS, empty);
        return 0;
    }
    PyObject *a = PyLong_FromUnsignedLong(access), *ni = PyLong_FromUnsignedLong(name_index),
             *di = PyLong_FromUnsignedLong(desc_index), *ca = PyLong_FromSsize_t(code_at);
    PyObject *empty = PyTuple_New(0);
    int rc = -1;
    if (a && ni && di && ca && empty && PyObject_SetAttr(m, s_access, a) == 0 && PyObject_SetAttr(m, s_pool, pool) == 0 &&
        PyObject_SetAttr(m, s_name_index, ni) == 0 && PyObject_SetAttr(m, s_desc_index, di) == 0 &&
        PyObject_SetAttr(m, s_name, Py_None) == 0 && PyObject_SetAttr(m, s_descriptor, Py_None) == 0 &&
        PyObject_SetAttr(m, s_code, code) == 0 && PyObject_SetAttr(m, s_code_at, ca) == 0 &&
        PyObject_SetAttr(m, s_handlers, handlers) == 0 && PyObject_SetAttr(m, s_annotations, empty) == 0)
        rc = 0;
    Py_XDECREF(a); Py_XDECREF(ni); Py_XDECREF(di); Py_XDECREF(ca); Py_XDECREF(empty);
    return rc;
}

#define NEED(k) do { if ((k) > n) goto fallback; } while (0)

static PyObject *class_rest(PyObject *self, PyObject *args) {
    PyObject *data, *pool, *method_type, *tags_obj, *offsets;
    Py_ssize_t start, count_arg;
    if (!PyArg_ParseTuple(args, "SOOnOOn", &data, &pool, &method_type, &count_arg, &tags_obj, &offsets, &start))
        return NULL;
    if (!PyByteArray_Check(tags_obj) || !PyList_Check(offsets) || !PyType_Check(method_type)) {
        PyErr_SetString(PyExc_TypeError, "bad pool");
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data);
    size_t n = (size_t)PyBytes_GET_SIZE(data);
    Pool p = {d, n, (unsigned)count_arg, (const unsigned char *)PyByteArray_AS_STRING(tags_obj), offsets};
    if (PyList_GET_SIZE(offsets) != count_arg || PyByteArray_GET_SIZE(tags_obj) != count_arg) {
        PyErr_SetString(PyExc_ValueError, "bad pool");
        return NULL;
    }
    PyObject *interfaces = NULL, *methods = NULL, *method_ann = NULL, *class_ann = NULL, *bootstrap = NULL;
    PyObject *name = NULL, *super_name = NULL;
    PyObject *result = NULL;
    size_t pos = (size_t)start;
    NEED(pos + 8);
    unsigned access = be16(d + pos), this_index = be16(d + pos + 2), super_index = be16(d + pos + 4),
             n_interfaces = be16(d + pos + 6);
    pos += 8;
    NEED(pos + 2 * (size_t)n_interfaces);
    interfaces = PyTuple_New(n_interfaces);
    if (interfaces == NULL) goto error;
    for (unsigned k = 0; k < n_interfaces; k++) {
        unsigned index = be16(d + pos + 2 * k);
        if (!class_entry(&p, index)) goto fallback;
    }
    if (!class_entry(&p, this_index)) goto fallback;
    if (super_index && !class_entry(&p, super_index)) goto fallback;
    for (unsigned k = 0; k < n_interfaces; k++) {
        PyObject *text = class_str(&p, be16(d + pos + 2 * k));
        if (text == NULL) goto error;
        PyTuple_SET_ITEM(interfaces, k, text);
    }
    pos += 2 * (size_t)n_interfaces;
    name = class_str(&p, this_index);
    if (name == NULL) goto error;
    if (super_index) {
        if ((super_name = class_str(&p, super_index)) == NULL) goto error;
    } else {
        super_name = Py_None;
        Py_INCREF(super_name);
    }

    NEED(pos + 2);
    unsigned n_fields = be16(d + pos);
    pos += 2;
    for (unsigned k = 0; k < n_fields; k++) {
        NEED(pos + 8);
        unsigned n_attrs = be16(d + pos + 6);
        pos += 8;
        for (unsigned a = 0; a < n_attrs; a++) {
            NEED(pos + 6);
            pos += 6 + (size_t)be32(d + pos + 2);
            NEED(pos);
        }
    }

    NEED(pos + 2);
    unsigned n_methods = be16(d + pos);
    pos += 2;
    methods = PyList_New(0);
    method_ann = PyList_New(0);
    if (methods == NULL || method_ann == NULL) goto error;
    for (unsigned k = 0; k < n_methods; k++) {
        NEED(pos + 8);
        unsigned m_access = be16(d + pos), name_index = be16(d + pos + 2), desc_index = be16(d + pos + 4),
                 n_attrs = be16(d + pos + 6);
        pos += 8;
        if (!(name_index > 0 && name_index < p.count && desc_index > 0 && desc_index < p.count)) goto fallback;
        PyObject *code = NULL, *handlers = NULL, *ann = NULL;
        Py_ssize_t code_at = -1;
        int bad = 0;
        for (unsigned a = 0; a < n_attrs && !bad; a++) {
            if (pos + 6 > n) { bad = 1; break; }
            unsigned attr_index = be16(d + pos);
            size_t length = be32(d + pos + 2), body = pos + 6;
            pos = body + length;
            if (pos > n) { bad = 1; break; }
            int which;
            if (!attribute_kind(&p, attr_index, &which)) { bad = 1; break; }
            if (which == 1) {
                if (body + 8 > n) { bad = 1; break; }
                size_t code_length = be32(d + body + 4), cstart = body + 8, code_end = cstart + code_length;
                if (code_end + 2 > pos) { bad = 1; break; }
                if (d[code_end] || d[code_end + 1]) {
                    unsigned n_handlers = be16(d + code_end);
                    size_t hp = code_end + 2;
                    if (hp + 8 * (size_t)n_handlers > pos) { bad = 1; break; }
                    PyObject *h = PyTuple_New(n_handlers);
                    if (h == NULL) { bad = 2; break; }
                    for (unsigned e = 0; e < n_handlers; e++)
                        PyTuple_SET_ITEM(h, e, PyLong_FromUnsignedLong(be16(d + hp + 8 * e + 4)));
                    Py_XSETREF(handlers, h);
                }
                PyObject *c = PyBytes_FromStringAndSize((const char *)d + cstart, (Py_ssize_t)code_length);
                if (c == NULL) { bad = 2; break; }
                Py_XSETREF(code, c);
                code_at = (Py_ssize_t)cstart;
            } else if (which == 2) {
                if (ann == NULL && (ann = PyList_New(0)) == NULL) { bad = 2; break; }
                int rc = annotation_types(&p, body, pos, ann);
                if (rc <= 0) { bad = rc < 0 ? 2 : 1; break; }
            }
        }
        if (!bad) {
            PyObject *m = ((PyTypeObject *)method_type)->tp_alloc((PyTypeObject *)method_type, 0);
            if (m == NULL ||
                set_slots(m, m_access, pool, name_index, desc_index, code ? code : Py_None,
                          handlers ? handlers : (handlers = PyTuple_New(0)), code_at) < 0 ||
                PyList_Append(methods, m) < 0) {
                bad = 2;
            } else if (ann != NULL && PyList_GET_SIZE(ann)) {
                PyObject *pair = Py_BuildValue("(IO)", k, ann);
                if (pair == NULL || PyList_Append(method_ann, pair) < 0) bad = 2;
                Py_XDECREF(pair);
            }
            Py_XDECREF(m);
        }
        Py_XDECREF(code);
        Py_XDECREF(handlers);
        Py_XDECREF(ann);
        if (bad == 1) goto fallback;
        if (bad == 2) goto error;
    }

    class_ann = PyList_New(0);
    if (class_ann == NULL) goto error;
    NEED(pos + 2);
    unsigned n_attrs = be16(d + pos);
    pos += 2;
    for (unsigned a = 0; a < n_attrs; a++) {
        NEED(pos + 6);
        unsigned attr_index = be16(d + pos);
        size_t length = be32(d + pos + 2), body = pos + 6;
        if (body + length > n) goto fallback;
        pos = body + length;
        int which;
        if (!attribute_kind(&p, attr_index, &which)) goto fallback;
        if (which == 2) {
            int rc = annotation_types(&p, body, body + length, class_ann);
            if (rc < 0) goto error;
            if (rc == 0) goto fallback;
        } else if (which == 3) {
            size_t bp = body, end = body + length;
            if (bp + 2 > n) goto fallback;
            unsigned count = be16(d + bp);
            bp += 2;
            PyObject *list = PyList_New(0);
            if (list == NULL) goto error;
            for (unsigned b = 0; b < count; b++) {
                if (bp + 4 > n) { Py_DECREF(list); goto fallback; }
                unsigned handle = be16(d + bp), n_args = be16(d + bp + 2);
                bp += 4;
                if (bp + 2 * (size_t)n_args > n) { Py_DECREF(list); goto fallback; }
                PyObject *argt = PyTuple_New(n_args);
                if (argt == NULL) { Py_DECREF(list); goto error; }
                for (unsigned e = 0; e < n_args; e++)
                    PyTuple_SET_ITEM(argt, e, PyLong_FromUnsignedLong(be16(d + bp + 2 * e)));
                bp += 2 * (size_t)n_args;
                PyObject *pair = Py_BuildValue("(IN)", handle, argt);
                if (pair == NULL || PyList_Append(list, pair) < 0) { Py_XDECREF(pair); Py_DECREF(list); goto error; }
                Py_DECREF(pair);
            }
            if (bp > end) { Py_DECREF(list); goto fallback; }
            Py_XSETREF(bootstrap, list);
        }
    }
    if (pos > n) goto fallback;
    if (bootstrap == NULL && (bootstrap = PyList_New(0)) == NULL) goto error;
    result = Py_BuildValue("(IIOOOOOOO)", be16(d + 6), access, name, super_name, interfaces, methods,
                           method_ann, class_ann, bootstrap);
    goto error; /* the common exit: drop the parts */
fallback:
    if (PyErr_Occurred()) goto error;
    result = Py_None;
    Py_INCREF(result);
error:
    Py_XDECREF(name);
    Py_XDECREF(super_name);
    Py_XDECREF(interfaces);
    Py_XDECREF(methods);
    Py_XDECREF(method_ann);
    Py_XDECREF(class_ann);
    Py_XDECREF(bootstrap);
    return result;
}

/* ---- rules.hot_methods for classes parsed by parse_class ------------------------------------------
 *
 * hot_methods(data, pool data, pool end, tags, offsets, methods, bootstrap) -> [method index] | None:
 * the same answer as rules.hot_methods, step by step (needles in the pool, the entries naming
 * them, the member references using those, then each method's code for their indices). None
 * when a method was not made by parse_class (code_at < 0): the Python version handles that. */

static int needle_at(const unsigned char *d, size_t p, size_t end, int *flags, size_t *len_out) {
    /* rules._NEEDLE_RE at p, the match wholly before end (finditer's endpos) */
    if (p + 3 > end || d[p] != 1 || d[p + 1] != 0 || !needle_lengths[d[p + 2]]) return 0;
    size_t len = d[p + 2];
    if (p + 3 + len > end) return 0;
    for (int i = 0; i < n_needles; i++) {
        if ((size_t)needle_len[i] == len && memcmp(d + p + 3, needle_text[i], len) == 0) {
            *flags = needle_flags[i];
            *len_out = len;
            return 1;
        }
    }
    return 0;
}

typedef struct { unsigned *v; size_t n, cap; } Set;

static int set_has(const Set *s, unsigned x) {
    for (size_t i = 0; i < s->n; i++) if (s->v[i] == x) return 1;
    return 0;
}
static int set_add(Set *s, unsigned x) {
    if (set_has(s, x)) return 1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        unsigned *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL) return 0;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 1;
}

/* ConstantPool.find_refs: entries of ``tag`` whose first (second) u2 field is in ``targets``. */
static int find_refs(const unsigned char *d, const unsigned char *tags, const size_t *offs, unsigned count,
                     unsigned tag, const Set *targets, int second, Set *out) {
    if (!targets->n) return 1;
    for (unsigned i = 1; i < count; i++) {
        if (tags[i] != tag) continue;
        if (set_has(targets, be16(d + offs[i] + (second ? 2 : 0))) && !set_add(out, i)) return 0;
    }
    return 1;
}

static PyObject *hot_methods(PyObject *self, PyObject *args) {
    PyObject *data_obj, *pool_data, *tags_obj, *offsets, *methods, *bootstrap;
    Py_ssize_t pool_end;
    if (!PyArg_ParseTuple(args, "SSnOOOO", &data_obj, &pool_data, &pool_end, &tags_obj, &offsets, &methods,
                          &bootstrap))
        return NULL;
    if (!PyByteArray_Check(tags_obj) || !PyList_Check(offsets) || !PyList_Check(methods) || !PyList_Check(bootstrap) ||
        PyByteArray_GET_SIZE(tags_obj) != PyList_GET_SIZE(offsets)) {
        PyErr_SetString(PyExc_TypeError, "bad arguments");
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    size_t dn = (size_t)PyBytes_GET_SIZE(data_obj);
    const unsigned char *pd = (const unsigned char *)PyBytes_AS_STRING(pool_data);
    size_t pn = (size_t)PyBytes_GET_SIZE(pool_data);
    const unsigned char *tags = (const unsigned char *)PyByteArray_AS_STRING(tags_obj);
    unsigned count = (unsigned)PyList_GET_SIZE(offsets);
    size_t end = pool_end < 0 ? 0 : (size_t)pool_end;
    if (end > dn) end = dn;
    if ((size_t)pool_end > pn) {
        PyErr_SetString(PyExc_ValueError, "pool end past the pool's bytes");
        return NULL;
    }
    PyObject *result = NULL;
    size_t *offs = count ? malloc(count * sizeof *offs) : NULL;
    Set owners = {0}, types = {0}, names = {0}, strings = {0}, owners_only = {0}, type_classes = {0}, classes = {0},
        nats = {0}, refs = {0}, constants = {0}, patterns2 = {0}, handles = {0};
    size_t *starts = NULL, *ends = NULL, *index_of = NULL;
    unsigned char *marked = NULL;
    if (count && offs == NULL) { PyErr_NoMemory(); goto done; }
    for (unsigned i = 0; i < count; i++) {
        offs[i] = PyLong_AsSize_t(PyList_GET_ITEM(offsets, i));
        if (offs[i] == (size_t)-1 && PyErr_Occurred()) goto done;
        if (i && tags[i] && offs[i] + 4 > pn) goto python; /* not a pool parse_class made */
    }
    /* the needles in the pool, leftmost first and not overlapping (finditer) */
    for (size_t p = 0; p < end;) {
        int flags;
        size_t len;
        const unsigned char *tag = memchr(d + p, 1, end - p); /* a match starts with a Utf8 tag */
        if (tag == NULL) break;
        p = (size_t)(tag - d);
        if (!needle_at(d, p, end, &flags, &len)) { p++; continue; }
        /* ConstantPool.utf8_at(p): the Utf8 entry whose tag byte is at p */
        size_t lo = 1, hi = count; /* bisect_left(offsets, p + 1, 1) */
        while (lo < hi) { size_t mid = (lo + hi) / 2; if (offs[mid] < p + 1) lo = mid + 1; else hi = mid; }
        if (lo < count && offs[lo] == p + 1 && tags[lo] == 1) {
            unsigned index = (unsigned)lo;
            if (((flags & 1) && !set_add(&owners, index)) || ((flags & 2) && !set_add(&types, index)) ||
                ((flags & 4) && !set_add(&names, index)) || ((flags & 8) && !set_add(&strings, index))) {
                PyErr_NoMemory();
                goto done;
            }
        }
        p += 3 + len;
    }
    for (size_t i = 0; i < owners.n; i++)
        if (!set_has(&types, owners.v[i]) && !set_add(&owners_only, owners.v[i])) { PyErr_NoMemory(); goto done; }
    if (!find_refs(pd, tags, offs, count, 7, &types, 0, &type_classes) ||
        !find_refs(pd, tags, offs, count, 7, &types, 0, &classes) ||
        !find_refs(pd, tags, offs, count, 7, &owners_only, 0, &classes) ||
        !find_refs(pd, tags, offs, count, 12, &names, 0, &nats) ||
        !find_refs(pd, tags, offs, count, 10, &classes, 0, &refs) ||
        !find_refs(pd, tags, offs, count, 11, &classes, 0, &refs) ||
        !find_refs(pd, tags, offs, count, 10, &nats, 1, &refs) ||
        !find_refs(pd, tags, offs, count, 11, &nats, 1, &refs) ||
        !find_refs(pd, tags, offs, count, 8, &strings, 0, &constants)) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < type_classes.n; i++)
        if (!set_add(&constants, type_classes.v[i])) { PyErr_NoMemory(); goto done; }
    /* patterns: u2 of every ref and constant, ldc of the constants below 256 (as 0x12 xx, a
     * two-byte pattern too), and with lambdas naming a ref every InvokeDynamic entry's u2 */
    for (size_t i = 0; i < refs.n; i++) if (!set_add(&patterns2, refs.v[i])) { PyErr_NoMemory(); goto done; }
    for (size_t i = 0; i < constants.n; i++) {
        if (!set_add(&patterns2, constants.v[i])) { PyErr_NoMemory(); goto done; }
        if (constants.v[i] < 256 && !set_add(&patterns2, 0x1200u | constants.v[i])) { PyErr_NoMemory(); goto done; }
    }
    if (refs.n && PyList_GET_SIZE(bootstrap)) {
        for (unsigned h = 1; h < count; h++)
            if (tags[h] == 15 && set_has(&refs, be16(pd + offs[h] + 1)) && !set_add(&handles, h)) {
                PyErr_NoMemory();
                goto done;
            }
        int any = 0;
        for (Py_ssize_t b = 0; b < PyList_GET_SIZE(bootstrap) && !any; b++) {
            PyObject *pair = PyList_GET_ITEM(bootstrap, b);
            PyObject *bargs = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 ? PyTuple_GET_ITEM(pair, 1) : NULL;
            if (bargs == NULL || !PyTuple_Check(bargs)) { PyErr_SetString(PyExc_TypeError, "bad bootstrap"); goto done; }
            for (Py_ssize_t a = 0; a < PyTuple_GET_SIZE(bargs); a++) {
                long v = PyLong_AsLong(PyTuple_GET_ITEM(bargs, a));
                if (v == -1 && PyErr_Occurred()) goto done;
                if (v >= 0 && v < 65536 && set_has(&handles, (unsigned)v)) { any = 1; break; }
            }
        }
        if (any)
            for (unsigned i = 1; i < count; i++)
                if (tags[i] == 18 && !set_add(&patterns2, i)) { PyErr_NoMemory(); goto done; }
    }
    result = PyList_New(0);
    if (result == NULL || !patterns2.n) goto done;
    /* the methods with code, their code's place in the file (increasing: parse order) */
    Py_ssize_t n_methods = PyList_GET_SIZE(methods), n_code = 0;
    starts = malloc((n_methods + 1) * sizeof *starts);
    ends = malloc((n_methods + 1) * sizeof *ends);
    index_of = malloc((n_methods + 1) * sizeof *index_of);
    if (!starts || !ends || !index_of) { Py_CLEAR(result); PyErr_NoMemory(); goto done; }
    for (Py_ssize_t k = 0; k < n_methods; k++) {
        PyObject *m = PyList_GET_ITEM(methods, k);
        PyObject *code = PyObject_GetAttr(m, s_code);
        if (code == NULL) { Py_CLEAR(result); goto done; }
        int has = code != Py_None && PyObject_IsTrue(code);
        Py_ssize_t clen = has && PyBytes_Check(code) ? PyBytes_GET_SIZE(code) : -1;
        Py_DECREF(code);
        if (!has) continue;
        PyObject *at = PyObject_GetAttr(m, s_code_at);
        if (at == NULL) { Py_CLEAR(result); goto done; }
        Py_ssize_t code_at = PyLong_AsSsize_t(at);
        Py_DECREF(at);
        if (code_at == -1 && PyErr_Occurred()) { Py_CLEAR(result); goto done; }
        if (clen < 0 || code_at < 0 || (n_code && (size_t)code_at < ends[n_code - 1])) {
            /* not made by parse_class (its methods' code in increasing, disjoint ranges): Python */
            Py_CLEAR(result);
            goto python;
        }
        starts[n_code] = (size_t)code_at;
        ends[n_code] = (size_t)code_at + (size_t)clen;
        index_of[n_code] = (size_t)k;
        n_code++;
    }
    if (!n_code) goto done;
    size_t lo = starts[0], hi = ends[n_code - 1];
    if (hi > pn) hi = pn;
    (void)lo;
    marked = calloc((size_t)n_code, 1);
    if (marked == NULL) { Py_CLEAR(result); PyErr_NoMemory(); goto done; }
    /* A pattern found at ``at`` marks the method whose code holds it whole: the methods' code
     * lies in the file in increasing, disjoint ranges, so that is one pass over each method's
     * code (up to hi, as the search over [lo, hi) had it) for all patterns at once, a table of
     * first bytes in front, instead of a search per pattern over the whole range. */
    unsigned char first[256] = {0};
    for (size_t q = 0; q < patterns2.n; q++) first[(patterns2.v[q] >> 8) & 0xFF] = 1;
    for (Py_ssize_t i = 0; i < n_code; i++) {
        size_t stop = ends[i] < hi ? ends[i] : hi;
        for (size_t at = starts[i]; at + 2 <= stop && !marked[i]; at++) {
            if (!first[pd[at]]) continue;
            unsigned v = ((unsigned)pd[at] << 8) | pd[at + 1];
            if (set_has(&patterns2, v)) marked[i] = 1;
        }
    }
    for (Py_ssize_t i = 0; i < n_code; i++) {
        if (!marked[i]) continue;
        PyObject *v = PyLong_FromSize_t(index_of[i]);
        if (v == NULL || PyList_Append(result, v) < 0) { Py_XDECREF(v); Py_CLEAR(result); goto done; }
        Py_DECREF(v);
    }
    goto done;
python:
    result = Py_None;
    Py_INCREF(result);
done:
    free(offs); free(starts); free(ends); free(index_of); free(marked);
    free(owners.v); free(types.v); free(names.v); free(strings.v); free(owners_only.v); free(type_classes.v);
    free(classes.v); free(nats.v); free(refs.v); free(constants.v); free(patterns2.v); free(handles.v);
    return result;
}

/* cd_batch(buf, pos, offsets, prints, next_record) -> (pos, records, next_record)
 *
 * ZipWalk._central_directory's common case for a run of records: each one in the window,
 * without zip64 values, pointing at the local header walked in the same place of the order
 * with the same fingerprint, and followed in the window by the next record's signature.
 * It stops before any other record (the last one among them), which the Python loop takes.
 * ``pos`` is where the Python loop stands: at a record's body, after its signature. */
static PyObject *cd_batch(PyObject *self, PyObject *args) {
    Py_buffer view, oview, pview;
    Py_ssize_t pos, next;
    if (!PyArg_ParseTuple(args, "y*ny*y*n", &view, &pos, &oview, &pview, &next)) return NULL;
    PyObject *result = NULL;
    const unsigned char *buf = view.buf;
    size_t size = (size_t)view.len, at = (size_t)pos, i = (size_t)next, records = 0;
    const uint64_t *offsets = oview.buf, *prints = pview.buf;
    size_t n_offsets = (size_t)oview.len / 8;
    if (pos < 0 || (size_t)pos > size || next < 0 || oview.len != pview.len) {
        PyErr_SetString(PyExc_ValueError, "bad arguments");
        goto done;
    }
    for (;;) { /* at: a record's body, its signature already read (as the Python loop has it) */
        if (size - at < 42 + 4) break;
        const unsigned char *h = buf + at;
        uint16_t method = u16(h + 6);
        uint32_t csize = u32(h + 16), usize = u32(h + 20), offset = u32(h + 38);
        size_t nlen = u16(h + 24), elen = u16(h + 26), clen = u16(h + 28);
        if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu || offset == 0xFFFFFFFFu) break;
        size_t record = 42 + nlen + elen + clen;
        if (size - at < record + 4) break;
        const unsigned char *q = h + record;
        if (!(q[0] == 'P' && q[1] == 'K' && q[2] == 1 && q[3] == 2)) break;
        if (i >= n_offsets || offsets[i] != offset) break;
        uint64_t hv;
        if (!entry_print(h + 42, nlen, method, csize, &hv)) goto done;
        if (prints[i] != hv) break;
        i++;
        records++;
        at += record + 4; /* and the next signature */
    }
    result = Py_BuildValue("(nnn)", (Py_ssize_t)at, (Py_ssize_t)records, (Py_ssize_t)i);
done:
    PyBuffer_Release(&view);
    PyBuffer_Release(&oview);
    PyBuffer_Release(&pview);
    return result;
}

/* ---- bytecode._quick for one method's code ------------------------------------------------------
 *
 * quick_facts(code, pool data, tags, offsets, MemberRef, lengths, max_recorded)
 *   -> (calls, types, strings) | None
 *
 * The calls (set of MemberRef), types and ldc strings (sets of str) bytecode._quick collects,
 * when its walk of ``code`` reaches the end with every step ordinary: each instruction of a
 * fixed length (``lengths``: bytecode._LEN) inside the code, every constant it reads present,
 * of the tag _quick expects and with ASCII names, no invokedynamic and no call whose arguments
 * matter. At anything else it answers None and _quick runs in Python from the start: it then
 * returns None for the walker, or raises with its own message, as it always did. */

static Py_ssize_t ref_offsets[3]; /* MemberRef's owner, name, descriptor slots */
static PyTypeObject *ref_type;
static int ref_usable;

static void find_ref_slots(PyTypeObject *type) {
    static const char *texts[3] = {"owner", "name", "descriptor"};
    ref_usable = 0;
    Py_XDECREF(ref_type);
    Py_INCREF(type);
    ref_type = type;
    for (int i = 0; i < 3; i++) {
        PyObject *key = PyUnicode_InternFromString(texts[i]);
        if (key == NULL) { PyErr_Clear(); return; }
        PyObject *descr = _PyType_Lookup(type, key);
        Py_DECREF(key);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return;
        PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
        if (def->type != T_OBJECT_EX || def->offset <= 0) return;
        ref_offsets[i] = def->offset;
    }
    ref_usable = 1;
}

/* ConstantPool.member(index) when every entry it reads is in place (0: not for C). */
static int member_parts(const Pool *p, unsigned index, unsigned *owner, unsigned *name, unsigned *desc) {
    if (!(index > 0 && index < p->count)) return 0;
    unsigned tag = p->tags[index];
    if (tag != 9 && tag != 10 && tag != 11) return 0;
    size_t at;
    if (!pool_offset(p, index, &at) || at + 4 > p->n) return 0;
    unsigned cls = be16(p->d + at), nat = be16(p->d + at + 2);
    if (!(nat > 0 && nat < p->count && p->tags[nat] == 12)) return 0;
    size_t nat_at;
    if (!pool_offset(p, nat, &nat_at) || nat_at + 4 > p->n) return 0;
    *name = be16(p->d + nat_at);
    *desc = be16(p->d + nat_at + 2);
    if (!ascii_utf8(p, *name) || !ascii_utf8(p, *desc) || !class_entry(p, cls)) return 0;
    *owner = cls;
    return 1;
}

static int utf8_is(const Pool *p, unsigned index, const char *text) { /* ascii_utf8 accepted it */
    size_t at;
    if (!pool_offset(p, index, &at)) return 0;
    size_t len = be16(p->d + at);
    return len == strlen(text) && memcmp(p->d + at + 2, text, len) == 0;
}

static int utf8_starts(const Pool *p, unsigned index, const char *text) {
    size_t at;
    if (!pool_offset(p, index, &at)) return 0;
    size_t len = be16(p->d + at), t = strlen(text);
    return len >= t && memcmp(p->d + at + 2, text, t) == 0;
}

static PyObject *quick_facts(PyObject *self, PyObject *args) {
    PyObject *code_obj, *data_obj, *tags_obj, *offsets, *type_obj, *lengths_obj;
    Py_ssize_t max_recorded;
    if (!PyArg_ParseTuple(args, "OOOOOOn", &code_obj, &data_obj, &tags_obj, &offsets, &type_obj, &lengths_obj,
                          &max_recorded))
        return NULL;
    if (!PyBytes_Check(code_obj) || !PyBytes_Check(data_obj)) Py_RETURN_NONE; /* not parse_class's */
    if (!PyByteArray_Check(tags_obj) || !PyList_Check(offsets) || !PyType_Check(type_obj) ||
        !PyByteArray_Check(lengths_obj) || PyByteArray_GET_SIZE(lengths_obj) != 256 ||
        PyByteArray_GET_SIZE(tags_obj) != PyList_GET_SIZE(offsets)) {
        PyErr_SetString(PyExc_TypeError, "bad arguments");
        return NULL;
    }
    if ((PyTypeObject *)type_obj != ref_type) find_ref_slots((PyTypeObject *)type_obj);
    if (!ref_usable) Py_RETURN_NONE;
    Pool p = {(const unsigned char *)PyBytes_AS_STRING(data_obj), (size_t)PyBytes_GET_SIZE(data_obj),
              (unsigned)PyList_GET_SIZE(offsets), (const unsigned char *)PyByteArray_AS_STRING(tags_obj), offsets};
    const unsigned char *code = (const unsigned char *)PyBytes_AS_STRING(code_obj);
    const unsigned char *lengths = (const unsigned char *)PyByteArray_AS_STRING(lengths_obj);
    size_t end = (size_t)PyBytes_GET_SIZE(code_obj), pc = 0;
    PyObject *calls = PySet_New(NULL), *types = PySet_New(NULL), *strings = PySet_New(NULL), *result = NULL;
    if (calls == NULL || types == NULL || strings == NULL) goto done;
    while (pc < end) {
        unsigned op = code[pc], n = lengths[op];
        if (n == 0 || pc + n > end) goto python; /* a switch, wide, an invalid opcode, a cut one */
        if (op >= 0xB6 && op <= 0xB9) {
            unsigned owner, name, desc;
            if (!member_parts(&p, be16(code + pc + 1), &owner, &name, &desc)) goto python;
            if (utf8_is(&p, name, "forName") || utf8_is(&p, name, "loadClass") || utf8_is(&p, name, "decode"))
                goto python; /* _VALUE_SENSITIVE: the walker's */
            if (utf8_is(&p, name, "<init>")) {
                size_t cat;
                if (!pool_offset(&p, owner, &cat)) goto python;
                if (utf8_is(&p, be16(p.d + cat), "java/lang/String") &&
                    (utf8_starts(&p, desc, "([B") || utf8_starts(&p, desc, "([C")))
                    goto python;
            }
            PyObject *ref = ref_type->tp_alloc(ref_type, 0);
            if (ref == NULL) goto done;
            PyObject *parts[3] = {class_str(&p, owner), utf8_str(&p, name), utf8_str(&p, desc)};
            for (int i = 0; i < 3; i++) *(PyObject **)((char *)ref + ref_offsets[i]) = parts[i];
            if (!parts[0] || !parts[1] || !parts[2]) { Py_DECREF(ref); goto done; }
            int rc = PySet_Add(calls, ref);
            Py_DECREF(ref);
            if (rc < 0) goto done;
        } else if (op == 0xBB || op == 0xBD || op == 0xC5) {
            unsigned index = be16(code + pc + 1);
            if (!class_entry(&p, index)) goto python;
            PyObject *t = class_str(&p, index);
            if (t == NULL || PySet_Add(types, t) < 0) { Py_XDECREF(t); goto done; }
            Py_DECREF(t);
        } else if (op == 0x12 || op == 0x13) {
            unsigned index = op == 0x12 ? code[pc + 1] : be16(code + pc + 1);
            if (!(index > 0 && index < p.count)) goto python;
            unsigned tag = p.tags[index];
            size_t at;
            if (tag == 8) { /* String: recorded while fewer than max_recorded */
                if (!pool_offset(&p, index, &at) || at + 2 > p.n || !ascii_utf8(&p, be16(p.d + at))) goto python;
                if (PySet_GET_SIZE(strings) < max_recorded) {
                    PyObject *t = utf8_str(&p, be16(p.d + at));
                    if (t == NULL || PySet_Add(strings, t) < 0) { Py_XDECREF(t); goto done; }
                    Py_DECREF(t);
                }
            } else if (tag == 7) {
                if (!class_entry(&p, index)) goto python;
                PyObject *t = class_str(&p, index);
                if (t == NULL || PySet_Add(types, t) < 0) { Py_XDECREF(t); goto done; }
                Py_DECREF(t);
            } else if (tag == 3) {
                if (!pool_offset(&p, index, &at) || at + 4 > p.n) goto python;
            }
        } else if (op == 0xBA) {
            goto python; /* _quick leaves invokedynamic to the walker */
        }
        pc += n;
    }
    result = PyTuple_Pack(3, calls, types, strings);
    goto done;
python:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(calls);
    Py_XDECREF(types);
    Py_XDECREF(strings);
    return result;
}

static PyMethodDef methods[] = {
    {"set_needles", set_needles, METH_O, "Set the Utf8 names the prefilter searches for."},
    {"walk_batch", walk_batch, METH_VARARGS, "Walk the plain entries of one window (see the file's comment)."},
    {"walk_batch_start", walk_batch_start, METH_VARARGS, "Start a batch over one window: a Batch, or None."},
    {"helpers_started", helpers_count, METH_NOARGS, "Helper threads walk_batch has started in this process."},
    {"cd_batch", cd_batch, METH_VARARGS, "Check a run of central directory records (see above)."},
    {"class_pool", class_pool, METH_O, "Constant-pool tags and offsets of a class file, or None."},
    {"hot_methods", hot_methods, METH_VARARGS, "rules.hot_methods for a class parsed by parse_class."},
    {"class_rest", class_rest, METH_VARARGS, "The rest of a class file's structure, or None."},
    {"quick_facts", quick_facts, METH_VARARGS, "bytecode._quick's facts of one method's code, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastwalk(void) {
    static PyObject **names[] = {&s_access, &s_pool, &s_name_index, &s_desc_index, &s_name, &s_descriptor,
                                 &s_code, &s_handlers, &s_annotations, &s_code_at};
    static const char *texts[] = {"access", "_pool", "_name_index", "_desc_index", "_name", "_descriptor",
                                  "code", "handlers", "annotations", "code_at"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *names[i] = PyUnicode_InternFromString(texts[i]);
        if (*names[i] == NULL) return NULL;
    }
    int direct = check_direct_print();
    if (direct < 0) return NULL;
    print_direct = direct;
    if (PyType_Ready(&BatchType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddStringConstant(m, "INFLATER", INFLATER) < 0 ||
                      PyModule_AddIntConstant(m, "DIRECT_PRINTS", direct) < 0))
        Py_CLEAR(m);
    return m;
}
