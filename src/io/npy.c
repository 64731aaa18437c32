/* npy.c — NumPy .npy files, read and written by tessera's own code.
 *
 * Format (numpy.lib.format): magic "\x93NUMPY", major, minor, a header
 * length (u16 for 1.0, u32 for 2.0/3.0), then a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 * spaces and a newline, then the raw data. We read little- and big-endian
 * data of every tessera dtype that NumPy has ('<f2' is f16; bf16 has no
 * NumPy type, so the writer refuses it), C order only, and refuse anything
 * else with a message that says what. */
#include "core/core.h"
#include "core/tensor.h"

#include <stdio.h>
#include <string.h>

static const struct {
    char kind;
    int size;
    ts_dtype dt;
} codes[] = {
    {'b', 1, TS_DTYPE_BOOL}, {'i', 1, TS_DTYPE_I8},  {'u', 1, TS_DTYPE_U8},
    {'i', 2, TS_DTYPE_I16},  {'u', 2, TS_DTYPE_U16}, {'i', 4, TS_DTYPE_I32},
    {'u', 4, TS_DTYPE_U32},  {'i', 8, TS_DTYPE_I64}, {'u', 8, TS_DTYPE_U64},
    {'f', 2, TS_DTYPE_F16},  {'f', 4, TS_DTYPE_F32}, {'f', 8, TS_DTYPE_F64},
};

/* Find `key` in the header dict and return a pointer just after its ':'. */
static const char *dict_value(const char *h, size_t n, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = 0; i + k + 2 < n; i++) {
        if ((h[i] == '\'' || h[i] == '"') && memcmp(h + i + 1, key, k) == 0 && h[i + 1 + k] == h[i]) {
            const char *p = h + i + k + 2;
            while (p < h + n && (*p == ' ' || *p == ':')) p++;
            return p;
        }
    }
    return NULL;
}

static ts_status parse_descr(const char *p, const char *end, ts_dtype *dt, bool *swap, ts_err *err)
{
    if (!p || p + 4 > end || (*p != '\'' && *p != '"'))
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: header has no 'descr' string");
    char q = *p++;
    char order = *p++;
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: descr has unknown byte order '%c'", order);
    char kind = *p++;
    int size = 0;
    while (p < end && *p >= '0' && *p <= '9' && size < 100) size = size * 10 + (*p++ - '0');
    if (p >= end || *p != q)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: descr is not a plain scalar type (structured arrays are not supported)");
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].kind == kind && codes[i].size == size) {
            *dt = codes[i].dt;
            *swap = order == '>' && size > 1;
            return TS_OK;
        }
    return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: element type '%c%d' is not supported", kind, size);
}

static ts_status parse_shape(const char *p, const char *end, int *rank, int64_t *shape, ts_err *err)
{
    if (!p || p >= end || *p != '(') return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: header has no 'shape' tuple");
    p++;
    *rank = 0;
    for (;;) {
        while (p < end && (*p == ' ' || *p == ',')) p++;
        if (p >= end) return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: shape tuple is not closed");
        if (*p == ')') return TS_OK;
        if (*p < '0' || *p > '9') return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: shape entry is not a number");
        if (*rank == TS_MAX_RANK) return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: rank over %d", TS_MAX_RANK);
        int64_t v = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (v > (INT64_MAX - 9) / 10) return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: shape entry overflows");
            v = v * 10 + (*p++ - '0');
        }
        if (p < end && *p == 'L') p++;  /* Python 2 longs */
        shape[(*rank)++] = v;
    }
}

static void swap_bytes(unsigned char *d, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char t = d[i + a];
            d[i + a] = d[i + b];
            d[i + b] = t;
        }
}

ts_status ts_npy_read_mem(const void *buf, size_t len, ts_tensor **out, ts_err *err)
{
    const unsigned char *b = buf;
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: not a .npy file (bad magic)");
    int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: truncated header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: format version %d is not supported", major);
    }
    if (hlen > len - hstart) return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: header runs past the end of the file");
    const char *h = (const char *)b + hstart, *hend = h + hlen;
    ts_dtype dt = TS_DTYPE_U8;   /* set by parse_descr; gcc -O2 cannot see it */
    bool swap = false;
    TS_TRY(parse_descr(dict_value(h, hlen, "descr"), hend, &dt, &swap, err));
    const char *fo = dict_value(h, hlen, "fortran_order");
    if (!fo || (size_t)(hend - fo) < 4) return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: header has no 'fortran_order'");
    if (memcmp(fo, "True", 4) == 0) return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: Fortran-order arrays are not supported");
    if ((size_t)(hend - fo) < 5 || memcmp(fo, "False", 5) != 0)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: 'fortran_order' is neither True nor False");
    int rank = 0;
    int64_t shape[TS_MAX_RANK];
    TS_TRY(parse_shape(dict_value(h, hlen, "shape"), hend, &rank, shape, err));
    /* size the data before allocating: a corrupt shape must be a
     * truncation error, not a terabyte allocation */
    int64_t numel;
    size_t nbytes, data_at = hstart + hlen;
    TS_TRY(ts_shape_numel(rank, shape, &numel, err));
    if (!ts_size_mul((size_t)numel, ts_dtype_size(dt), &nbytes))
        return ts_err_set(err, TS_ERR_OOM, "npy: tensor size overflows");
    if (len - data_at < nbytes)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "npy: data is truncated (%zu of %zu bytes)", len - data_at, nbytes);
    ts_tensor *t;
    TS_TRY(ts_tensor_new(dt, rank, shape, &t, err));
    memcpy(t->data, b + data_at, t->nbytes);
    if (swap) swap_bytes(t->data, t->nbytes, ts_dtype_size(dt));
    *out = t;
    return TS_OK;
}

/* Read a whole file through the allocation hook. */
static ts_status slurp(const char *path, unsigned char **data, size_t *len, ts_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ts_err_set(err, TS_ERR_IO, "cannot open '%s'", path);
    size_t cap = 4096, n = 0;
    unsigned char *buf = ts_mem_alloc(cap);
    ts_status s = buf ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory reading '%s'", path);
    while (s == TS_OK) {
        if (n == cap) {
            unsigned char *bigger = cap < SIZE_MAX / 2 ? ts_mem_realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                s = ts_err_set(err, TS_ERR_OOM, "out of memory reading '%s'", path);
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) s = ts_err_set(err, TS_ERR_IO, "error reading '%s'", path);
            break;
        }
    }
    fclose(f);
    if (s != TS_OK) {
        ts_mem_free(buf);
        return s;
    }
    *data = buf;
    *len = n;
    return TS_OK;
}

ts_status ts_npy_read(const char *path, ts_tensor **out, ts_err *err)
{
    unsigned char *data = NULL;
    size_t len = 0;
    TS_TRY(slurp(path, &data, &len, err));
    ts_status s = ts_npy_read_mem(data, len, out, err);
    ts_mem_free(data);
    if (s != TS_OK) ts_err_prefix(err, "%s: ", path);
    return s;
}

ts_status ts_npy_write(const char *path, const ts_tensor *t, ts_err *err)
{
    const char *descr = NULL;
    static const char *const names[TS_DTYPE_COUNT] = {
        [TS_DTYPE_BOOL] = "|b1", [TS_DTYPE_I8] = "|i1", [TS_DTYPE_U8] = "|u1", [TS_DTYPE_I16] = "<i2",
        [TS_DTYPE_U16] = "<u2", [TS_DTYPE_I32] = "<i4", [TS_DTYPE_U32] = "<u4", [TS_DTYPE_I64] = "<i8",
        [TS_DTYPE_U64] = "<u8", [TS_DTYPE_F16] = "<f2", [TS_DTYPE_F32] = "<f4", [TS_DTYPE_F64] = "<f8",
    };
    if ((unsigned)t->dtype < TS_DTYPE_COUNT) descr = names[t->dtype];
    if (!descr) return ts_err_set(err, TS_ERR_UNSUPPORTED, "npy: %s has no NumPy type; cast it first (or write ONNX .pb)",
                                  ts_dtype_name(t->dtype) ? ts_dtype_name(t->dtype) : "?");
    ts_buf h = {0};
    ts_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++) ts_buf_printf(&h, "%lld%s", (long long)t->shape[i], t->rank == 1 ? "," : i + 1 < t->rank ? ", " : "");
    ts_buf_puts(&h, "), }");
    /* pad so that the data starts on a 64-byte boundary (numpy does) */
    while ((10 + h.len + 1) % 64) ts_buf_puts(&h, " ");
    ts_buf_puts(&h, "\n");
    if (h.oom || h.len > 65535) {
        ts_buf_free(&h);
        return ts_err_set(err, TS_ERR_OOM, "npy: header too large");
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        ts_buf_free(&h);
        return ts_err_set(err, TS_ERR_IO, "cannot create '%s'", path);
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(h.len & 0xff), (unsigned char)(h.len >> 8)};
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h.data, 1, h.len, f) == h.len &&
              (t->nbytes == 0 || fwrite(t->data, 1, t->nbytes, f) == t->nbytes);
    ok = (fclose(f) == 0) && ok;
    ts_buf_free(&h);
    /* tessera only runs on little-endian hosts; '<' above says so */
    return ok ? TS_OK : ts_err_set(err, TS_ERR_IO, "error writing '%s' (disk full?)", path);
}
