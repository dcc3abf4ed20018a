/* The central directory's record walk (CentralDirectory._walk in zipfmt.py) in C.
 *
 * Built by `make env` (libs/jar/build_cdwalk.py) where there is a C compiler; without it
 * zipfmt walks in Python with the same results. Opening a 20,000-entry directory is this
 * loop 20,000 times: in Python ~0.5 us a record, most of a grid jar's read CPU.
 *
 * walk(data, pos, stop, end, short, starts, index, streamed, meta) -> int
 *
 * Walks the records of ``data`` (bytes) from ``pos`` while ``pos < stop``, exactly as the
 * Python loop does: each record must start no later than ``end - 46`` and carry the
 * central-header signature; its start is appended to ``starts`` (list), its raw name
 * (clamped to ``data``, as a slice is) stored in ``index`` (dict) when at most ``short``
 * bytes long, its start appended to ``streamed`` (list) when flag bit 3 (data descriptor)
 * is set, and to ``meta`` (list) when its name starts with "META-INF/". Returns where the walk ended (>= 0), -1 for a record past ``end - 46``
 * ("truncated central directory") or -2 for a bad signature ("bad central directory
 * record"): the caller raises CorruptZip with the same text as the Python walk.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define HEADER 46
#define SIG 0x02014B50u
#define FLAG_DESCRIPTOR 0x0008u
#define META "META-INF/"  /* zipfmt._META_PREFIX */
#define META_SIZE 9

static inline uint32_t u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t u16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static PyObject *walk(PyObject *self, PyObject *args) {
    PyObject *data, *starts, *index, *streamed, *meta;
    Py_ssize_t pos, stop, end, shortest;
    if (!PyArg_ParseTuple(args, "SnnnnO!O!O!O!", &data, &pos, &stop, &end, &shortest, &PyList_Type, &starts,
                          &PyDict_Type, &index, &PyList_Type, &streamed, &PyList_Type, &meta))
        return NULL;
    const unsigned char *buf = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    Py_ssize_t last_start = end - HEADER;
    if (end > size) return PyErr_Format(PyExc_ValueError, "end %zd beyond the data (%zd bytes)", end, size);
    while (pos < stop) {
        if (pos > last_start) return PyLong_FromLong(-1);
        if (pos < 0) return PyErr_Format(PyExc_ValueError, "negative position %zd", pos);
        const unsigned char *r = buf + pos;
        if (u32(r) != SIG) return PyLong_FromLong(-2);
        uint32_t flags = u16(r + 8), nlen = u16(r + 28), elen = u16(r + 30), clen = u16(r + 32);
        PyObject *at = PyLong_FromSsize_t(pos);  /* one int object for the list, dict and list */
        if (at == NULL) return NULL;
        int failed = PyList_Append(starts, at) < 0;
        if (!failed && (Py_ssize_t)nlen <= shortest) {
            Py_ssize_t lo = pos + HEADER, hi = lo + nlen;
            if (lo > size) lo = size;
            if (hi > size) hi = size;
            PyObject *name = PyBytes_FromStringAndSize((const char *)buf + lo, hi - lo);
            failed = name == NULL || PyDict_SetItem(index, name, at) < 0;
            Py_XDECREF(name);
        }
        if (!failed && (flags & FLAG_DESCRIPTOR)) failed = PyList_Append(streamed, at) < 0;
        if (!failed && nlen >= META_SIZE && pos + HEADER + META_SIZE <= size
            && memcmp(buf + pos + HEADER, META, META_SIZE) == 0)
            failed = PyList_Append(meta, at) < 0;
        Py_DECREF(at);
        if (failed) return NULL;
        pos += HEADER + (Py_ssize_t)nlen + elen + clen;
    }
    return PyLong_FromSsize_t(pos);
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "Walk central directory records (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cdwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cdwalk(void) { return PyModule_Create(&module); }
