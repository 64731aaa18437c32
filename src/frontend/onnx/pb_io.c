/* pb_io.c — reading protobuf files safely: the whole file through ts_mem,
 * a bounded pre-scan of the wire format (protobuf-c recurses once per
 * nested message, so a hostile file of nested subgraphs could exhaust the
 * stack), and unpacking with an allocator that goes through ts_mem so an
 * allocation failure is TS_ERR_OOM. */
#include "frontend/onnx/load.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- allocator ------------------------------------------------------------------- */

/* ud, when not NULL, is a bool set when an allocation fails: protobuf-c
 * answers an allocation failure and a parse error alike. Blocks start on
 * a cache line: an initializer's raw_data becomes the weight tensor as it
 * is (tensor_pb.c adopts it), and kernels read weights with vector loads
 * (D48). Not on huge pages, unlike the file's buffer: a hundred huge
 * blocks made one unpack in two or three take 300-480 ms instead of
 * 30 (D196). */
static void *pb_alloc(void *ud, size_t n)
{
    void *p = ts_mem_alloc_aligned(n);
    if (!p && ud) *(bool *)ud = true;
    return p;
}

static void pb_free(void *ud, void *p) { (void)ud; ts_mem_free_aligned(p); }

ProtobufCAllocator onnx_pb_allocator = {pb_alloc, pb_free, NULL};

void onnx_pb_free(ProtobufCMessage *m)
{
    if (m) protobuf_c_message_free_unpacked(m, &onnx_pb_allocator);
}

/* ---- files ----------------------------------------------------------------------- */

static ts_status read_all(int fd, uint8_t *p, size_t len, const char *path, ts_err *err)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return ts_err_set(err, TS_ERR_IO, "%s: read failed: %s", path, r ? strerror(errno) : "file shrank");
        got += (size_t)r;
    }
    return TS_OK;
}

ts_status onnx_read_file(const char *path, uint8_t **data, size_t *len, ts_err *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    ts_status s = TS_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        s = ts_err_set(err, TS_ERR_IO, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2)
        s = ts_err_set(err, TS_ERR_OOM, "%s: too large to read", path);
    else if (!(*data = ts_mem_alloc_huge((size_t)st.st_size)))
        s = ts_err_set(err, TS_ERR_OOM, "%s: out of memory reading %lld bytes", path, (long long)st.st_size);
    else
        s = read_all(fd, *data, (size_t)st.st_size, path, err);
    close(fd);
    if (s != TS_OK) {
        ts_mem_free_aligned(*data);
        *data = NULL;
        return s;
    }
    *len = (size_t)st.st_size;
    return TS_OK;
}

/* ---- the wire pre-scan ------------------------------------------------------------- */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && w->p < w->end; shift += 7) {
        uint8_t b = *w->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

static bool skip(wire *w, uint64_t n)
{
    if (n > (uint64_t)(w->end - w->p)) return false;
    w->p += n;
    return true;
}

/* Walk one message's fields; recurse into fields the descriptor declares
 * as messages. False on malformed wire data or nesting past the limit. */
static bool scan(const ProtobufCMessageDescriptor *d, wire w, int depth)
{
    if (depth > ONNX_MAX_DEPTH) return false;
    while (w.p < w.end) {
        uint64_t tag, v;
        if (!varint(&w, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
        switch (tag & 7) {
        case 0: if (!varint(&w, &v)) return false; break;
        case 1: if (!skip(&w, 8)) return false; break;
        case 5: if (!skip(&w, 4)) return false; break;
        case 2: {
            if (!varint(&w, &v) || v > (uint64_t)(w.end - w.p)) return false;
            const ProtobufCFieldDescriptor *f =
                d ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3)) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                wire sub = {w.p, w.p + v};
                if (!scan(f->descriptor, sub, depth + 1)) return false;
            }
            w.p += v;
            break;
        }
        default: return false;   /* groups (3, 4) and invalid wire types */
        }
    }
    return true;
}

ts_status onnx_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                      const char *path, ProtobufCMessage **out, ts_err *err)
{
    *out = NULL;
    wire w = {data, data + len};
    if (!scan(d, w, 0))
        return ts_err_set(err, TS_ERR_INVALID_MODEL,
                          "%s: not a valid %s (malformed protobuf, or nested more than %d deep)", path,
                          d->short_name, ONNX_MAX_DEPTH);
    bool oom = false;
    ProtobufCAllocator a = {pb_alloc, pb_free, &oom};
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &a, len, data);
    if (m) {
        *out = m;
        return TS_OK;
    }
    if (oom) return ts_err_set(err, TS_ERR_OOM, "%s: out of memory reading the protobuf", path);
    return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: not a valid %s (the protobuf does not parse)", path,
                      d->short_name);
}
