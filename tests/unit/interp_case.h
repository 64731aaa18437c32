/* interp_case.h — a one-node graph built programmatically and run through
 * the interpreter, for the kernel tests (test_interp_*.c):
 *
 *     tcase c = tc_new(TS_OP_TRANSPOSE);
 *     tc_param(&c, TS_DTYPE_F32, 2, SHAPE(2, 3));
 *     ts_attr_set_ints(c.g, c.op, c.a, "perm", 2, SHAPE(1, 0));
 *     ts_tensor *x = tc_tensor(TS_DTYPE_F32, 2, SHAPE(2, 3), F32(1, 2, 3, 4, 5, 6));
 *     ts_tensor *y = NULL;
 *     CHECK(tc_run(&c, &x, 1, &y) == TS_OK);
 *     CHECK(tc_same(y, TS_DTYPE_F32, 2, SHAPE(3, 2), F32(1, 4, 2, 5, 3, 6)));
 *
 * Expected values are written out literally in the tests. */
#ifndef TS_INTERP_CASE_H
#define TS_INTERP_CASE_H

#include "check.h"
#include "interp/interp.h"

#include <math.h>

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define F32(...) ((const float[]){__VA_ARGS__})
#define F64(...) ((const double[]){__VA_ARGS__})
#define I32(...) ((const int32_t[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define U8(...) ((const uint8_t[]){__VA_ARGS__})
#define U16(...) ((const uint16_t[]){__VA_ARGS__})
#define NARGS(T, ...) ((int)(sizeof((T[]){__VA_ARGS__}) / sizeof(T)))

typedef struct tcase {
    ts_graph *g;
    ts_op op;
    ts_attr *a;
    int n_in;
    ts_value *in[16];
    ts_err err;
} tcase;

static TS_UNUSED tcase tc_new(ts_op op)
{
    tcase c = {0};
    c.op = op;
    if (ts_ir_graph_new("t", &c.g, &c.err) == TS_OK) c.a = ts_ir_attrs_new(c.g, op);
    return c;
}

/* A graph input of constant shape, as the next operand of the node. */
static TS_UNUSED ts_value *tc_param(tcase *c, ts_dtype dt, int rank, const int64_t *shape)
{
    ts_dim d[TS_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = ts_dim_const(shape[i]);
    ts_type t = {dt, rank, d};
    ts_value *v = NULL;
    if (ts_ir_block_add_param(c->g, c->g->body, &t, &v, &c->err) == TS_OK) c->in[c->n_in++] = v;
    return v;
}

/* Set a dims attribute from constants. */
static TS_UNUSED ts_status tc_dims(tcase *c, const char *name, int n, const int64_t *v)
{
    ts_dim d[TS_MAX_RANK];
    for (int i = 0; i < n; i++) d[i] = ts_dim_const(v[i]);
    return ts_attr_set_dims(c->g, c->op, c->a, name, n, d);
}

/* Create the node over the params (shape rule runs here). */
static TS_UNUSED ts_status tc_build(tcase *c, ts_node **node)
{
    ts_node *n = NULL;
    ts_status s = ts_ir_node_new(c->g, c->g->body, NULL, c->op, c->n_in, c->in, c->a, 0, NULL, &n, &c->err);
    if (s != TS_OK) return s;
    if (node) *node = n;
    return ts_ir_block_set_results(c->g, c->g->body, n->n_out, n->out, &c->err);
}

/* Build (if not yet built) and run; outs receive new references. */
static TS_UNUSED ts_status tc_run(tcase *c, ts_tensor *const *ins, int n_out, ts_tensor **outs)
{
    if (!c->g->body->first) {
        ts_status s = tc_build(c, NULL);
        if (s != TS_OK) return s;
    }
    ts_err_clear(&c->err);
    for (int i = 0; i < n_out; i++) outs[i] = NULL;
    return ts_interp_run_graph(c->g, c->n_in, ins, n_out, outs, &c->err);
}

static TS_UNUSED void tc_free(tcase *c) { ts_graph_free(c->g); }

/* A new tensor holding a copy of data (numel elements of dt). */
static TS_UNUSED ts_tensor *tc_tensor(ts_dtype dt, int rank, const int64_t *shape, const void *data)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(dt, rank, shape, &t, NULL) != TS_OK) return NULL;
    if (t->nbytes && data) memcpy(t->data, data, t->nbytes);
    return t;
}

/* Dtype, shape and bytes equal; a mismatch is printed element by element. */
static TS_UNUSED bool tc_same(const ts_tensor *t, ts_dtype dt, int rank, const int64_t *shape, const void *data)
{
    if (!t) return false;
    bool ok = t->dtype == dt && t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->shape[i] == shape[i];
    if (!ok) {
        fprintf(stderr, "  got %s rank %d [", ts_dtype_name(t->dtype), t->rank);
        for (int i = 0; i < t->rank; i++) fprintf(stderr, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        fprintf(stderr, "]\n");
        return false;
    }
    if (t->nbytes == 0 || memcmp(t->data, data, t->nbytes) == 0) return true;
    size_t esz = ts_dtype_size(dt);
    for (int64_t i = 0; i < t->numel; i++)
        if (memcmp((const char *)t->data + i * (int64_t)esz, (const char *)data + i * (int64_t)esz, esz))
            fprintf(stderr, "  element %lld: got %.17g, expected %.17g\n", (long long)i,
                    ts_elem_get_f64(dt, t->data, i), ts_elem_get_f64(dt, data, i));
    return false;
}

static TS_UNUSED void tc_release(int n, ts_tensor **t)
{
    for (int i = 0; i < n; i++) {
        ts_tensor_release(t[i]);
        t[i] = NULL;
    }
}

#endif
