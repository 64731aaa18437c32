/* value_pb.c — ONNX value files that are not tensors: SequenceProto and
 * OptionalProto (onnx-data.proto, D17), read into a form and its tensors
 * and written back. TensorProto files go through tensor_pb.c; a value file
 * does not say which message it holds, so the caller names the kind. */
#include "frontend/onnx/seq.h"

#include "onnx-data.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct reader {
    const char *path;
    ts_buf form;
    ts_tensor **t;
    int n, cap;
    ts_err *err;
} reader;

static ts_status rd_tensor(reader *r, const Onnx__TensorProto *tp)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 8;
        ts_tensor **p = r->n < INT_MAX / 2 ? ts_mem_realloc(r->t, sizeof *p * (size_t)cap) : NULL;
        if (!p) return ts_err_set(r->err, TS_ERR_OOM, "out of memory reading %s", r->path);
        r->t = p;
        r->cap = cap;
    }
    char what[4200];
    snprintf(what, sizeof what, "%s: tensor %d", r->path, r->n);
    TS_TRY(onnx_tensor_from_proto(tp, false, NULL, what, &r->t[r->n], r->err));
    r->n++;
    ts_buf_puts(&r->form, "t");
    return TS_OK;
}

static const char *elem_type_name(int t)
{
    static const char *const names[] = {"undefined", "tensor", "sparse tensor", "sequence", "map", "optional"};
    return t >= 0 && t < 6 ? names[t] : "unknown";
}

static ts_status rd_seq(reader *r, const Onnx__SequenceProto *sp);
static ts_status rd_opt(reader *r, const Onnx__OptionalProto *op);

/* The elements of a SequenceProto are in the one field its elem_type
 * names; a sequence without elem_type takes the field that holds any. */
static ts_status rd_seq(reader *r, const Onnx__SequenceProto *sp)
{
    int filled = (sp->n_tensor_values > 0) + (sp->n_sequence_values > 0) + (sp->n_optional_values > 0);
    int et = sp->has_elem_type ? sp->elem_type : 0;
    if (et == 0) et = sp->n_sequence_values ? 3 : sp->n_optional_values ? 5 : 1;
    if (et != 1 && et != 3 && et != 5)
        return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "%s: a sequence of %s elements is not supported", r->path,
                          elem_type_name(et));
    size_t count = et == 1 ? sp->n_tensor_values : et == 3 ? sp->n_sequence_values : sp->n_optional_values;
    if (filled > 1 || (filled == 1 && !count))
        return ts_err_set(r->err, TS_ERR_INVALID_MODEL, "%s: a sequence of %s elements holds elements of another kind",
                          r->path, elem_type_name(et));
    if (count > ONNX_MAX_SEQ)
        return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "%s: a sequence of %zu elements is longer than tessera takes (%d)",
                          r->path, count, ONNX_MAX_SEQ);
    ts_buf_puts(&r->form, "[");
    for (size_t i = 0; i < count; i++) {
        if (i) ts_buf_puts(&r->form, ",");
        if (et == 1) TS_TRY(rd_tensor(r, sp->tensor_values[i]));
        else if (et == 3) TS_TRY(rd_seq(r, sp->sequence_values[i]));
        else TS_TRY(rd_opt(r, sp->optional_values[i]));
    }
    ts_buf_puts(&r->form, "]");
    return TS_OK;
}

static ts_status rd_opt(reader *r, const Onnx__OptionalProto *op)
{
    int filled = (op->tensor_value != NULL) + (op->sequence_value != NULL) + (op->optional_value != NULL);
    int et = op->has_elem_type ? op->elem_type : 0;
    if (et == 0 && filled) et = op->tensor_value ? 1 : op->sequence_value ? 3 : 5;
    if (et != 0 && et != 1 && et != 3 && et != 5)
        return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "%s: an optional %s is not supported", r->path,
                          elem_type_name(et));
    const void *v = et == 1 ? (const void *)op->tensor_value : et == 3 ? (const void *)op->sequence_value
                  : et == 5 ? (const void *)op->optional_value : NULL;
    if (filled > 1 || (filled && !v))
        return ts_err_set(r->err, TS_ERR_INVALID_MODEL, "%s: an optional of elem_type %s holds a value of another kind",
                          r->path, elem_type_name(et));
    ts_buf_puts(&r->form, "?");
    if (!v) return TS_OK;   /* elem_type set, no value: the empty optional of that type */
    if (et == 1) return rd_tensor(r, v);
    return et == 3 ? rd_seq(r, v) : rd_opt(r, v);
}

static const ProtobufCMessageDescriptor *kind_descriptor(char kind)
{
    switch (kind) {
    case 't': return &onnx__tensor_proto__descriptor;
    case '[': return &onnx__sequence_proto__descriptor;
    case '?': return &onnx__optional_proto__descriptor;
    default: return NULL;
    }
}

/* The message's name (every kind has it as field 1). */
static const char *msg_name(char kind, const ProtobufCMessage *m)
{
    const char *s = kind == 't' ? ((const Onnx__TensorProto *)m)->name
                  : kind == '[' ? ((const Onnx__SequenceProto *)m)->name : ((const Onnx__OptionalProto *)m)->name;
    return s ? s : "";
}

static ts_status rd_message(reader *r, char kind, const ProtobufCMessage *m)
{
    if (kind == 't') return rd_tensor(r, (const Onnx__TensorProto *)m);
    if (kind == '[') return rd_seq(r, (const Onnx__SequenceProto *)m);
    return rd_opt(r, (const Onnx__OptionalProto *)m);
}

static void rd_free(reader *r)
{
    for (int i = 0; i < r->n; i++) ts_tensor_release(r->t[i]);
    ts_mem_free(r->t);
    ts_buf_free(&r->form);
}

ts_status ts_onnx_read_value(const char *path, char kind, char **form, int *n, ts_tensor ***tensors, char **name,
                             ts_err *err)
{
    const ProtobufCMessageDescriptor *d = kind_descriptor(kind);
    if (!path || !form || !n || !tensors || !d)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_read_value: bad arguments");
    *form = NULL, *n = 0, *tensors = NULL;
    if (name) *name = NULL;
    uint8_t *data;
    size_t len;
    TS_TRY(onnx_read_file(path, &data, &len, err));
    ProtobufCMessage *m = NULL;
    ts_status s = onnx_unpack(d, data, len, path, &m, err);
    ts_mem_free_aligned(data);
    if (s != TS_OK) return s;
    reader r = {.path = path, .err = err};
    s = rd_message(&r, kind, m);
    if (s == TS_OK && (r.form.oom || !r.form.data || (name && !(*name = ts_mem_strdup(msg_name(kind, m))))))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory reading %s", path);
    onnx_pb_free(m);
    if (s != TS_OK) {
        rd_free(&r);
        return s;
    }
    *form = r.form.data;   /* the buffer's text is ts_mem memory: the caller's now */
    *n = r.n;
    *tensors = r.t;
    return TS_OK;
}

void ts_onnx_value_free(char *form, int n, ts_tensor **tensors)
{
    ts_mem_free(form);
    for (int i = 0; tensors && i < n; i++) ts_tensor_release(tensors[i]);
    ts_mem_free(tensors);
}

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct writer {
    ts_arena *a;
    ts_tensor *const *t;
    int n, next;
} writer;

static Onnx__TensorProto *wr_tensor(writer *w)
{
    if (w->next >= w->n) return NULL;
    const ts_tensor *t = w->t[w->next++];
    Onnx__TensorProto *tp = ts_arena_alloc(w->a, sizeof *tp);
    int64_t *dims = ts_arena_array(w->a, (size_t)t->rank + 1, sizeof *dims);
    if (!tp || !dims) return NULL;
    onnx__tensor_proto__init(tp);
    for (int i = 0; i < t->rank; i++) dims[i] = t->shape[i];
    tp->n_dims = (size_t)t->rank;
    tp->dims = dims;
    tp->has_data_type = 1;
    tp->data_type = onnx_type_of_dtype(t->dtype);
    tp->name = NULL;   /* nested messages carry no name */
    tp->has_raw_data = 1;
    tp->raw_data.len = t->nbytes;
    tp->raw_data.data = t->data;
    return tp;
}

/* SequenceProto/OptionalProto elem_type of a form node. */
static int elem_type_of(const onnx_form *f) { return f->kind == 't' ? 1 : f->kind == '[' ? 3 : 5; }

static Onnx__OptionalProto *wr_opt(writer *w, const onnx_form *f);

static Onnx__SequenceProto *wr_seq(writer *w, const onnx_form *f)
{
    Onnx__SequenceProto *sp = ts_arena_alloc(w->a, sizeof *sp);
    void **e = ts_arena_array(w->a, (size_t)f->count + 1, sizeof *e);
    if (!sp || !e) return NULL;
    onnx__sequence_proto__init(sp);
    sp->name = NULL;
    sp->has_elem_type = 1;
    sp->elem_type = f->count ? elem_type_of(f->elems[0]) : 1;
    for (int i = 0; i < f->count; i++) {
        const onnx_form *c = f->elems[i];
        if (elem_type_of(c) != sp->elem_type) return NULL;   /* checked by the caller first */
        e[i] = c->kind == 't' ? (void *)wr_tensor(w) : c->kind == '[' ? (void *)wr_seq(w, c) : (void *)wr_opt(w, c);
        if (!e[i]) return NULL;
    }
    size_t n = (size_t)f->count;
    if (sp->elem_type == 1) sp->n_tensor_values = n, sp->tensor_values = (Onnx__TensorProto **)e;
    else if (sp->elem_type == 3) sp->n_sequence_values = n, sp->sequence_values = (Onnx__SequenceProto **)e;
    else sp->n_optional_values = n, sp->optional_values = (Onnx__OptionalProto **)e;
    return sp;
}

static Onnx__OptionalProto *wr_opt(writer *w, const onnx_form *f)
{
    Onnx__OptionalProto *op = ts_arena_alloc(w->a, sizeof *op);
    if (!op) return NULL;
    onnx__optional_proto__init(op);
    op->name = NULL;
    op->has_elem_type = 1;
    op->elem_type = 0;
    if (!f->count) return op;
    const onnx_form *c = f->elems[0];
    op->elem_type = elem_type_of(c);
    if (c->kind == 't') return (op->tensor_value = wr_tensor(w)) ? op : NULL;
    if (c->kind == '[') return (op->sequence_value = wr_seq(w, c)) ? op : NULL;
    return (op->optional_value = wr_opt(w, c)) ? op : NULL;
}

/* Elements of one sequence are of one kind (a SequenceProto has one
 * elem_type). */
static bool homogeneous(const onnx_form *f)
{
    for (int i = 0; i < f->count; i++) {
        if (f->kind == '[' && i && elem_type_of(f->elems[i]) != elem_type_of(f->elems[0])) return false;
        if (!homogeneous(f->elems[i])) return false;
    }
    return true;
}

static ts_status write_file(const char *path, const uint8_t *p, size_t n, ts_err *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return ts_err_set(err, TS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    bool ok = fwrite(p, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    return ok ? TS_OK : ts_err_set(err, TS_ERR_IO, "%s: write failed", path);
}

static ts_status pack_and_write(const char *path, const ProtobufCMessage *m, ts_err *err)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = ts_mem_alloc(n ? n : 1);
    if (!buf) return ts_err_set(err, TS_ERR_OOM, "out of memory writing %s", path);
    protobuf_c_message_pack(m, buf);
    ts_status s = write_file(path, buf, n, err);
    ts_mem_free(buf);
    return s;
}

static ts_status write_form(const char *path, ts_arena *a, const char *form, int n, ts_tensor *const *tensors,
                            const char *name, ts_err *err)
{
    onnx_form *f;
    int need;
    TS_TRY(onnx_form_parse(a, form, path, &f, &need, err));
    if (need != n)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "%s: the form takes %d tensors, %d were given", path, need, n);
    if (!homogeneous(f))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "%s: the elements of a sequence must be of one kind", path);
    if (f->kind == 't') return ts_onnx_write_tensor(path, tensors[0], name, err);
    writer w = {a, tensors, n, 0};
    ProtobufCMessage *m;
    if (f->kind == '[') {
        Onnx__SequenceProto *sp = wr_seq(&w, f);
        if (sp) sp->name = (char *)name;
        m = sp ? &sp->base : NULL;
    } else {
        Onnx__OptionalProto *op = wr_opt(&w, f);
        if (op) op->name = (char *)name;
        m = op ? &op->base : NULL;
    }
    if (!m) return ts_err_set(err, TS_ERR_OOM, "out of memory writing %s", path);
    return pack_and_write(path, m, err);
}

ts_status ts_onnx_write_value(const char *path, const char *form, int n, ts_tensor *const *tensors, const char *name,
                              ts_err *err)
{
    if (!path || n < 0 || (n && !tensors))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_write_value: bad arguments");
    for (int i = 0; i < n; i++)
        if (!tensors[i]) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_write_value: tensor %d is NULL", i);
    ts_arena *a = ts_arena_new();
    if (!a) return ts_err_set(err, TS_ERR_OOM, "out of memory writing %s", path);
    ts_status s = write_form(path, a, form ? form : "t", n, tensors, name ? name : "", err);
    ts_arena_free(a);
    return s;
}
