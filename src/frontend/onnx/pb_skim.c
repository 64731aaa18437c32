/* pb_skim.c — a model's graph without its weights, read from the wire
 * (onnx_skim_model, load.h): what ts_onnx_signature needs (the graph's
 * inputs and outputs, the initializers' names) re-encoded as a small
 * ModelProto that onnx_unpack then reads as usual. The file is walked
 * with pread through a 64 KiB window and every initializer's data is
 * seeked over, so a 100 MB model costs a few reads instead of a copy of
 * the whole file and its unpacking (D197). protobuf-c has no way to skip
 * fields, hence this walk; it checks every length against its enclosing
 * message and fails on anything malformed, where the caller falls back
 * to the whole file (whose reader says what is wrong). */
#include "frontend/onnx/load.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ONNX's field numbers (onnx-data.proto) */
enum {
    MODEL_GRAPH = 7,
    GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12, GRAPH_SPARSE_INITIALIZER = 15,
    TENSOR_NAME = 8,
    SPARSE_VALUES = 1,
    WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5,
};

typedef struct reader {
    int fd;
    uint64_t size;     /* the file's */
    uint64_t base;     /* file offset of win[0] */
    size_t len, at;    /* bytes in win, the next one to read */
    bool bad;          /* a read failed, or the data is malformed */
    uint8_t win[1 << 16];
} reader;

static uint64_t offset(const reader *r) { return r->base + r->at; }

static bool refill(reader *r)
{
    r->base += r->len, r->at = r->len = 0;
    uint64_t left = r->size - r->base;
    size_t want = left < sizeof r->win ? (size_t)left : sizeof r->win;
    while (want) {
        ssize_t got = pread(r->fd, r->win, want, (off_t)r->base);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        r->len = (size_t)got;
        return true;
    }
    r->bad = true;
    return false;
}

static bool byte(reader *r, uint8_t *b)
{
    if (r->at == r->len && !refill(r)) return false;
    *b = r->win[r->at++];
    return true;
}

/* A varint of at most 10 bytes that ends before `end`. */
static bool varint(reader *r, uint64_t end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && offset(r) < end; shift += 7) {
        uint8_t b;
        if (!byte(r, &b)) return false;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return !(r->bad = true);
}

/* Move n bytes on (within the window, or past it: the next read refills). */
static bool skip(reader *r, uint64_t n, uint64_t end)
{
    if (n > end - offset(r)) return !(r->bad = true);
    uint64_t to = offset(r) + n;
    if (to <= r->base + r->len) r->at = (size_t)(to - r->base);
    else r->base = to, r->at = r->len = 0;
    return true;
}

static bool copy(reader *r, uint64_t n, uint64_t end, ts_buf *out)
{
    if (n > end - offset(r)) return !(r->bad = true);
    while (n) {
        if (r->at == r->len && !refill(r)) return false;
        size_t k = r->len - r->at < n ? r->len - r->at : (size_t)n;
        ts_buf_putn(out, (const char *)r->win + r->at, k);
        r->at += k, n -= k;
    }
    return !out->oom;
}

static void put_varint(ts_buf *b, uint64_t v)
{
    char c[10];
    size_t n = 0;
    do {
        c[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    ts_buf_putn(b, c, n);
}

/* A length-delimited field of `out` holding `inner`. */
static void put_message(ts_buf *out, unsigned field, const ts_buf *inner)
{
    put_varint(out, (uint64_t)field << 3 | WIRE_LEN);
    put_varint(out, inner->len);
    if (inner->len) ts_buf_putn(out, inner->data, inner->len);
    if (inner->oom) out->oom = true;
}

/* One field's header, before `end`: its number, wire type and, for a
 * length-delimited one, the length (checked against end). */
static bool header(reader *r, uint64_t end, unsigned *field, int *wire, uint64_t *n)
{
    uint64_t tag;
    if (!varint(r, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return !(r->bad = true);
    *field = (unsigned)(tag >> 3), *wire = (int)(tag & 7);
    *n = 0;
    if (*wire == WIRE_LEN && (!varint(r, end, n) || *n > end - offset(r))) return !(r->bad = true);
    return true;
}

/* Past a field whose header was read. */
static bool skip_field(reader *r, int wire, uint64_t n, uint64_t end)
{
    uint64_t v;
    switch (wire) {
    case WIRE_VARINT: return varint(r, end, &v);
    case WIRE_I64: return skip(r, 8, end);
    case WIRE_I32: return skip(r, 4, end);
    case WIRE_LEN: return skip(r, n, end);
    default: return !(r->bad = true);   /* groups and invalid wire types */
    }
}

/* What a message keeps of one field whose header was read: 1 when the
 * handler took it (into out), 0 to skip it, -1 on a failure. */
typedef int (*keep_fn)(reader *r, unsigned field, int wire, uint64_t n, uint64_t end, ts_buf *out);

/* The n bytes of a message's fields, each kept or skipped. */
static bool fields(reader *r, uint64_t n, keep_fn keep, ts_buf *out)
{
    const uint64_t end = offset(r) + n;
    while (offset(r) < end) {
        unsigned f;
        int w;
        uint64_t len;
        if (!header(r, end, &f, &w, &len)) return false;
        int k = keep(r, f, w, len, end, out);
        if (k < 0 || (k == 0 && !skip_field(r, w, len, end))) return false;
    }
    return !out->oom;
}

/* A length-delimited field copied as it is. */
static int verbatim(reader *r, unsigned f, uint64_t n, uint64_t end, ts_buf *out)
{
    put_varint(out, (uint64_t)f << 3 | WIRE_LEN);
    put_varint(out, n);
    return copy(r, n, end, out) ? 1 : -1;
}

/* A message field whose kept fields (keep) are re-encoded into out. */
static int nested(reader *r, unsigned f, uint64_t n, keep_fn keep, ts_buf *out)
{
    ts_buf t = {0};
    bool ok = fields(r, n, keep, &t);
    if (ok || t.oom) put_message(out, f, &t);   /* an out-of-memory fails out too */
    ts_buf_free(&t);
    return ok ? 1 : -1;
}

/* TensorProto: its name only. */
static int tensor_keep(reader *r, unsigned f, int w, uint64_t n, uint64_t end, ts_buf *out)
{
    return f == TENSOR_NAME && w == WIRE_LEN ? verbatim(r, f, n, end, out) : 0;
}

/* SparseTensorProto: its values' name only. */
static int sparse_keep(reader *r, unsigned f, int w, uint64_t n, uint64_t end, ts_buf *out)
{
    (void)end;
    return f == SPARSE_VALUES && w == WIRE_LEN ? nested(r, f, n, tensor_keep, out) : 0;
}

/* GraphProto: inputs and outputs as they are, initializers by name;
 * nodes and everything else left out. */
static int graph_keep(reader *r, unsigned f, int w, uint64_t n, uint64_t end, ts_buf *out)
{
    if (w != WIRE_LEN) return 0;
    if (f == GRAPH_INPUT || f == GRAPH_OUTPUT) return verbatim(r, f, n, end, out);
    if (f == GRAPH_INITIALIZER) return nested(r, f, n, tensor_keep, out);
    if (f == GRAPH_SPARSE_INITIALIZER) return nested(r, f, n, sparse_keep, out);
    return 0;
}

/* ModelProto: its graph. */
static int model_keep(reader *r, unsigned f, int w, uint64_t n, uint64_t end, ts_buf *out)
{
    (void)end;
    return f == MODEL_GRAPH && w == WIRE_LEN ? nested(r, f, n, graph_keep, out) : 0;
}

ts_status onnx_skim_model(const char *path, uint8_t **data, size_t *len, ts_err *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    reader *r = NULL;
    ts_status s = TS_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        s = ts_err_set(err, TS_ERR_IO, "%s: not a regular file", path);
    else if (!(r = ts_mem_zalloc(sizeof *r)))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    ts_buf out = {0};
    if (s == TS_OK) {
        r->fd = fd, r->size = (uint64_t)st.st_size;
        if (!fields(r, r->size, model_keep, &out))
            s = out.oom && !r->bad ? ts_err_set(err, TS_ERR_OOM, "out of memory")
                                   : ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: not a valid ModelProto", path);
    }
    close(fd);
    ts_mem_free(r);
    if (s != TS_OK) {
        ts_buf_free(&out);
        return s;
    }
    /* an empty skeleton (no graph) still gets a block: NULL + 0 is not
     * an address onnx_unpack may form */
    if (!out.data && !(out.data = ts_mem_alloc(1))) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    *data = (uint8_t *)out.data;
    *len = out.len;
    return TS_OK;
}
