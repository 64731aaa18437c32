/* tensor_pb.c — TensorProto <-> ts_tensor: raw_data (borrowed from the
 * unpacked model when it can be), the typed fields, external data files,
 * and the public .pb reader and writer. ONNX stores little-endian data;
 * tessera runs on little-endian hosts (checked once in ts_onnx_load). */
/* realpath is XSI: glibc declares it only with _XOPEN_SOURCE */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "frontend/onnx/load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- data types ------------------------------------------------------------------ */

static const char *const type_names[] = {
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
    "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
    "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
    "FLOAT8E8M0", "UINT2", "INT2",
};

const char *onnx_type_name(int t, char buf[16])
{
    if (t >= 0 && (size_t)t < sizeof type_names / sizeof type_names[0]) return type_names[t];
    snprintf(buf, 16, "type %d", t);
    return buf;
}

/* ONNX number -> tessera dtype; -1 when tessera has none. */
static const int onnx_to_ts[] = {
    [1] = TS_DTYPE_F32, [2] = TS_DTYPE_U8, [3] = TS_DTYPE_I8, [4] = TS_DTYPE_U16, [5] = TS_DTYPE_I16,
    [6] = TS_DTYPE_I32, [7] = TS_DTYPE_I64, [9] = TS_DTYPE_BOOL, [10] = TS_DTYPE_F16,
    [11] = TS_DTYPE_F64, [12] = TS_DTYPE_U32, [13] = TS_DTYPE_U64, [16] = TS_DTYPE_BF16,
    [17] = TS_DTYPE_F8E4M3FN, [18] = TS_DTYPE_F8E4M3FNUZ, [19] = TS_DTYPE_F8E5M2, [20] = TS_DTYPE_F8E5M2FNUZ,
    [21] = TS_DTYPE_U4, [22] = TS_DTYPE_I4, [23] = TS_DTYPE_F4E2M1, [24] = TS_DTYPE_F8E8M0,
    [25] = TS_DTYPE_U2, [26] = TS_DTYPE_I2,
};

ts_status onnx_dtype(int t, ts_dtype *out, ts_err *err)
{
    char buf[16];
    if (t > 0 && (size_t)t < sizeof onnx_to_ts / sizeof onnx_to_ts[0] && (t == 9 || onnx_to_ts[t])) {
        *out = (ts_dtype)onnx_to_ts[t];
        return TS_OK;
    }
    if (t == 0) return ts_err_set(err, TS_ERR_INVALID_MODEL, "the element type is not set (UNDEFINED)");
    if (t < 0 || (size_t)t >= sizeof type_names / sizeof type_names[0])
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "unknown element type %d", t);
    return ts_err_set(err, TS_ERR_UNSUPPORTED,
                      "element type %s is not supported: tessera has no string or complex tensors",
                      onnx_type_name(t, buf));
}

int onnx_type_of_dtype(ts_dtype dt)
{
    for (size_t t = 1; t < sizeof onnx_to_ts / sizeof onnx_to_ts[0]; t++)
        if ((t == 9 || onnx_to_ts[t]) && onnx_to_ts[t] == (int)dt) return (int)t;
    return 0;
}

/* ---- sub-byte packing ------------------------------------------------------------- */

/* ONNX packs 4-bit types two to a byte and 2-bit types four to a byte,
 * first element in the low bits; tessera keeps one per byte in memory. */
static int per_byte(ts_dtype dt)
{
    int bits = ts_dtype_bits(dt);
    return bits < 8 ? 8 / bits : 1;
}

static size_t packed_bytes(ts_dtype dt, int64_t numel)
{
    size_t per = (size_t)per_byte(dt);
    return ((size_t)numel + per - 1) / per;
}

/* One element from its w-bit code: f4e2m1 keeps the code, an integer is
 * re-extended from it (ts_elem_set_i64 wraps to the type's width). */
static void put_code(ts_tensor *t, int64_t i, unsigned code)
{
    if (t->dtype == TS_DTYPE_F4E2M1) ((uint8_t *)t->data)[i] = (uint8_t)code;
    else ts_elem_set_i64(t->dtype, t->data, i, code);
}

static void unpack_into(ts_tensor *t, const uint8_t *src)
{
    int per = per_byte(t->dtype), w = 8 / per;
    for (int64_t i = 0; i < t->numel; i++) put_code(t, i, (src[i / per] >> (i % per * w)) & ((1u << w) - 1));
}

static void pack_from(const ts_tensor *t, uint8_t *dst)
{
    int per = per_byte(t->dtype), w = 8 / per;
    memset(dst, 0, packed_bytes(t->dtype, t->numel));
    for (int64_t i = 0; i < t->numel; i++)
        dst[i / per] |= (uint8_t)((((const uint8_t *)t->data)[i] & ((1u << w) - 1)) << (i % per * w));
}

/* ---- typed fields ------------------------------------------------------------------ */

/* How many elements the typed field for dtype holds, and whether tp has it. */
static size_t typed_count(const Onnx__TensorProto *tp, ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_F32: return tp->n_float_data;
    case TS_DTYPE_F64: return tp->n_double_data;
    case TS_DTYPE_I64: return tp->n_int64_data;
    case TS_DTYPE_U32: case TS_DTYPE_U64: return tp->n_uint64_data;
    default: return tp->n_int32_data;   /* i32 and everything narrower, bool, f16, bf16 */
    }
}

/* Copy the typed field into t's data (count already checked). */
static void typed_copy(const Onnx__TensorProto *tp, ts_tensor *t)
{
    if (per_byte(t->dtype) > 1) {   /* one packed byte per int32 */
        int per = per_byte(t->dtype), w = 8 / per;
        for (int64_t i = 0; i < t->numel; i++)
            put_code(t, i, ((uint32_t)tp->int32_data[i / per] >> (i % per * w)) & ((1u << w) - 1));
        return;
    }
    for (int64_t i = 0; i < t->numel; i++) {
        switch (t->dtype) {
        case TS_DTYPE_F32: ((float *)t->data)[i] = tp->float_data[i]; break;
        case TS_DTYPE_F64: ((double *)t->data)[i] = tp->double_data[i]; break;
        case TS_DTYPE_I64: ((int64_t *)t->data)[i] = tp->int64_data[i]; break;
        case TS_DTYPE_U32: case TS_DTYPE_U64: ts_elem_set_u64(t->dtype, t->data, i, tp->uint64_data[i]); break;
        case TS_DTYPE_F16: case TS_DTYPE_BF16:   /* the bits, in the low half */
            ((uint16_t *)t->data)[i] = (uint16_t)(uint32_t)tp->int32_data[i];
            break;
        case TS_DTYPE_BOOL: ((uint8_t *)t->data)[i] = tp->int32_data[i] != 0; break;
        case TS_DTYPE_F8E4M3FN: case TS_DTYPE_F8E4M3FNUZ: case TS_DTYPE_F8E5M2: case TS_DTYPE_F8E5M2FNUZ:
        case TS_DTYPE_F8E8M0:   /* the bits */
            ((uint8_t *)t->data)[i] = (uint8_t)(uint32_t)tp->int32_data[i];
            break;
        default: ts_elem_set_i64(t->dtype, t->data, i, tp->int32_data[i]); break;
        }
    }
}

/* ---- external data ------------------------------------------------------------------ */

typedef struct ext_ref {
    const char *location;
    int64_t offset, length;   /* length -1: to the end of the file */
} ext_ref;

static ts_status parse_i64(const char *s, int64_t *v, const char *what, const char *key, ts_err *err)
{
    char *end = NULL;
    errno = 0;
    long long x = s ? strtoll(s, &end, 10) : -1;
    if (!s || !*s || *end || errno || x < 0)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: external data %s '%s' is not a byte count", what, key,
                          s ? s : "");
    *v = x;
    return TS_OK;
}

static ts_status ext_parse(const Onnx__TensorProto *tp, const char *what, ext_ref *r, ts_err *err)
{
    r->location = NULL;
    r->offset = 0;
    r->length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e || !e->key) continue;
        if (strcmp(e->key, "location") == 0) r->location = e->value;
        else if (strcmp(e->key, "offset") == 0) TS_TRY(parse_i64(e->value, &r->offset, what, "offset", err));
        else if (strcmp(e->key, "length") == 0) TS_TRY(parse_i64(e->value, &r->length, what, "length", err));
    }
    if (!r->location || !r->location[0])
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: external data without a location", what);
    return TS_OK;
}

/* A location must stay inside the model's folder: relative, and no '..'
 * that climbs above where it started. */
static bool lexically_inside(const char *loc)
{
    if (loc[0] == '/') return false;
    int depth = 0;
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return false;
        } else if (n && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        while (*p == '/') p++;
    }
    return true;
}

/* The real path of dir/loc, checked (after symlinks) to be inside dir. */
static ts_status ext_path(const char *dir, const char *loc, const char *what, char *full, ts_err *err)
{
    if (!lexically_inside(loc))
        return ts_err_set(err, TS_ERR_INVALID_MODEL,
                          "%s: external data location '%s' is outside the model's folder", what, loc);
    char *joined = ts_mem_alloc(PATH_MAX), *real_dir = ts_mem_alloc(PATH_MAX);
    ts_status s = TS_OK;
    if (!joined || !real_dir) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    else if ((size_t)snprintf(joined, PATH_MAX, "%s/%s", dir, loc) >= PATH_MAX)
        s = ts_err_set(err, TS_ERR_IO, "%s: external data path '%s' is too long", what, loc);
    else if (!realpath(dir, real_dir))
        s = ts_err_set(err, TS_ERR_IO, "%s: cannot resolve the model's folder '%s': %s", what, dir, strerror(errno));
    else if (!realpath(joined, full))
        s = ts_err_set(err, TS_ERR_IO, "%s: external data file '%s' cannot be opened: %s", what, joined,
                       strerror(errno));
    else {
        size_t n = strlen(real_dir);
        bool inside = strncmp(full, real_dir, n) == 0 && (full[n] == '/' || (n == 1 && real_dir[0] == '/'));
        if (!inside)
            s = ts_err_set(err, TS_ERR_INVALID_MODEL,
                           "%s: external data location '%s' leads outside the model's folder (through a link)",
                           what, loc);
    }
    ts_mem_free(joined);
    ts_mem_free(real_dir);
    return s;
}

static ts_status read_fd(int fd, int64_t off, size_t n, void *dst, const char *path, const char *what,
                         ts_err *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)dst + got, n - got, (off_t)(off + (int64_t)got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return ts_err_set(err, TS_ERR_IO, "%s: reading %s failed", what, path);
        got += (size_t)r;
    }
    return TS_OK;
}

/* The n file bytes at off into t, unpacked if t's type is packed. */
static ts_status read_packed(int fd, int64_t off, size_t n, ts_tensor *t, const char *path, const char *what,
                             ts_err *err)
{
    if (per_byte(t->dtype) == 1) return read_fd(fd, off, n, t->data, path, what, err);
    uint8_t *tmp = ts_mem_alloc(n ? n : 1);
    if (!tmp) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    ts_status s = read_fd(fd, off, n, tmp, path, what, err);
    if (s == TS_OK) unpack_into(t, tmp);
    ts_mem_free(tmp);
    return s;
}

/* A new tensor of the given type holding bytes [off, off+len) of `path`;
 * the range is checked against the file before anything is allocated. */
static ts_status read_range(const char *path, const ext_ref *r, ts_dtype dt, int rank, const int64_t *shape,
                            int64_t numel, const char *what, ts_tensor **out, ts_err *err)
{
    int64_t want = (int64_t)packed_bytes(dt, numel);
    if (per_byte(dt) == 1 && !ts_i64_mul(numel, (int64_t)ts_dtype_size(dt), &want))
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the tensor is too large", what);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "%s: cannot open external data file %s: %s", what, path, strerror(errno));
    struct stat st;
    ts_status s = TS_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        s = ts_err_set(err, TS_ERR_IO, "%s: external data %s is not a regular file", what, path);
    else if (r->offset > st.st_size || (r->length >= 0 ? r->length : st.st_size - r->offset) != want ||
             want > st.st_size - r->offset)
        s = ts_err_set(err, TS_ERR_INVALID_MODEL,
                       "%s: external data needs %lld bytes at offset %lld of %s (length %lld, file size %lld)", what,
                       (long long)want, (long long)r->offset, path, (long long)r->length, (long long)st.st_size);
    else if ((s = ts_tensor_new(dt, rank, shape, out, err)) == TS_OK)
        s = read_packed(fd, r->offset, (size_t)want, *out, path, what, err);
    if (s != TS_OK && *out) {
        ts_tensor_release(*out);
        *out = NULL;
    }
    close(fd);
    return s;
}

static ts_status from_external(const Onnx__TensorProto *tp, ts_dtype dt, int rank, const int64_t *shape,
                               const char *dir, const char *what, ts_tensor **out, ts_err *err)
{
    if (!dir) return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: external data is not supported here", what);
    ext_ref r;
    int64_t numel;
    TS_TRY(ext_parse(tp, what, &r, err));
    TS_TRY(ts_shape_numel(rank, shape, &numel, err));
    char *full = ts_mem_alloc(PATH_MAX);
    if (!full) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    ts_status s = ext_path(dir, r.location, what, full, err);
    if (s == TS_OK) s = read_range(full, &r, dt, rank, shape, numel, what, out, err);
    ts_mem_free(full);
    return s;
}

/* ---- TensorProto -> tensor ----------------------------------------------------------- */

static void no_release(void *ctx, void *data) { (void)ctx; (void)data; }

/* The shape of tp, and its element count; checked (not allocated). */
static ts_status proto_shape(const Onnx__TensorProto *tp, const char *what, int64_t *shape, int64_t *numel,
                             ts_err *err)
{
    if (tp->n_dims > TS_MAX_RANK)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: rank %zu is more than tessera's %d", what, tp->n_dims,
                          TS_MAX_RANK);
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: negative dimension %lld", what, (long long)tp->dims[i]);
        shape[i] = tp->dims[i];
    }
    if (ts_shape_numel((int)tp->n_dims, shape, numel, NULL) != TS_OK)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the product of the dims overflows", what);
    return TS_OK;
}

/* The data must be there before anything is allocated for it: a hostile
 * file's dims can ask for any size. */
static ts_status check_bytes(uint64_t have, int64_t numel, ts_dtype dt, const char *field, const char *what,
                             ts_err *err)
{
    size_t need;
    bool fits = per_byte(dt) > 1 ? (need = packed_bytes(dt, numel), true) : ts_size_mul((size_t)numel, ts_dtype_size(dt), &need);
    if (fits && have == need) return TS_OK;
    return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: %s holds %llu bytes, %s[%lld elements] needs %llu", what, field,
                      (unsigned long long)have, ts_dtype_name(dt), (long long)numel, (unsigned long long)need);
}

static ts_status from_raw(const Onnx__TensorProto *tp, ts_dtype dt, int rank, const int64_t *shape, int64_t numel,
                          bool borrow, const char *what, ts_tensor **out, ts_err *err)
{
    ts_tensor *t = NULL;
    TS_TRY(check_bytes(tp->raw_data.len, numel, dt, "raw_data", what, err));
    if (per_byte(dt) > 1) {
        TS_TRY(ts_tensor_new(dt, rank, shape, &t, err));
        unpack_into(t, tp->raw_data.data);
        *out = t;
        return TS_OK;
    }
    if (borrow && tp->raw_data.len) {
        TS_TRY(ts_tensor_adopt(dt, rank, shape, tp->raw_data.data, no_release, NULL, &t, err));
    } else {
        TS_TRY(ts_tensor_new(dt, rank, shape, &t, err));
    }
    if (t->data != tp->raw_data.data && t->nbytes) memcpy(t->data, tp->raw_data.data, t->nbytes);
    if (dt == TS_DTYPE_BOOL)   /* any non-zero byte is true; tessera's bools are 0 or 1 */
        for (int64_t i = 0; i < t->numel; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    *out = t;
    return TS_OK;
}

ts_status onnx_tensor_from_proto(const Onnx__TensorProto *tp, bool borrow, const char *dir, const char *what,
                                 ts_tensor **out, ts_err *err)
{
    *out = NULL;
    ts_dtype dt;
    int64_t shape[TS_MAX_RANK];
    ts_status s = onnx_dtype(tp->has_data_type ? tp->data_type : 0, &dt, err);
    if (s != TS_OK) {
        ts_err_prefix(err, "%s: ", what);
        return s;
    }
    if (tp->segment) return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", what);
    int64_t numel;
    TS_TRY(proto_shape(tp, what, shape, &numel, err));
    int rank = (int)tp->n_dims;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return from_external(tp, dt, rank, shape, dir, what, out, err);
    if (tp->has_raw_data) return from_raw(tp, dt, rank, shape, numel, borrow, what, out, err);
    size_t have = typed_count(tp, dt), need = per_byte(dt) > 1 ? packed_bytes(dt, numel) : (size_t)numel;
    if (have != need)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the tensor holds %zu values, %s[%lld elements] needs %zu",
                          what, have, ts_dtype_name(dt), (long long)numel, need);
    ts_tensor *t = NULL;
    TS_TRY(ts_tensor_new(dt, rank, shape, &t, err));
    typed_copy(tp, t);
    *out = t;
    return TS_OK;
}

/* ---- .pb files ----------------------------------------------------------------------- */

ts_status ts_onnx_read_tensor(const char *path, ts_tensor **out, char **name, ts_err *err)
{
    if (!path || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_read_tensor: NULL argument");
    *out = NULL;
    if (name) *name = NULL;
    uint8_t *data;
    size_t len;
    TS_TRY(onnx_read_file(path, &data, &len, err));
    ProtobufCMessage *m = NULL;
    ts_status s = onnx_unpack(&onnx__tensor_proto__descriptor, data, len, path, &m, err);
    ts_mem_free_aligned(data);
    if (s != TS_OK) return s;
    const Onnx__TensorProto *tp = (const Onnx__TensorProto *)m;
    s = onnx_tensor_from_proto(tp, false, NULL, tp->name && tp->name[0] ? tp->name : path, out, err);
    if (s == TS_OK && name && !(*name = ts_mem_strdup(tp->name ? tp->name : ""))) {
        ts_tensor_release(*out);
        *out = NULL;
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    onnx_pb_free(m);
    return s;
}

static ts_status write_all(const char *path, const uint8_t *p, size_t n, ts_err *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return ts_err_set(err, TS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    bool ok = fwrite(p, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    return ok ? TS_OK : ts_err_set(err, TS_ERR_IO, "%s: write failed", path);
}

ts_status ts_onnx_write_tensor(const char *path, const ts_tensor *t, const char *name, ts_err *err)
{
    if (!path || !t) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_write_tensor: NULL argument");
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[TS_MAX_RANK];
    for (int i = 0; i < t->rank; i++) dims[i] = t->shape[i];
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = onnx_type_of_dtype(t->dtype);
    tp.name = (char *)(name ? name : "");
    tp.has_raw_data = 1;
    tp.raw_data.len = t->nbytes;
    tp.raw_data.data = t->data;
    uint8_t *packed = NULL;
    if (per_byte(t->dtype) > 1) {
        tp.raw_data.len = packed_bytes(t->dtype, t->numel);
        if (!(packed = ts_mem_alloc(tp.raw_data.len ? tp.raw_data.len : 1)))
            return ts_err_set(err, TS_ERR_OOM, "out of memory writing %s", path);
        pack_from(t, packed);
        tp.raw_data.data = packed;
    }
    size_t n = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = ts_mem_alloc(n);
    ts_status s = buf ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory writing %s", path);
    if (buf) {
        onnx__tensor_proto__pack(&tp, buf);
        s = write_all(path, buf, n, err);
    }
    ts_mem_free(buf);
    ts_mem_free(packed);
    return s;
}
