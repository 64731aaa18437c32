/* test_builder.c — the builder: shapes inferred, constants folded, identical
 * nodes merged, numpy broadcasting (symbolic dims included), identities
 * simplified, errors that stick, and no leak when memory runs out. */
#include "check.h"

#include <math.h>
#include <stdlib.h>

#include "builder/builder.h"
#include "interp/interp.h"

static ts_graph *new_graph(void)
{
    ts_graph *g = NULL;
    CHECK(ts_ir_graph_new("t", &g, NULL) == TS_OK);
    return g;
}

static ts_dim sym(ts_graph *g, const char *name)
{
    ts_dim d = ts_dim_const(0);
    CHECK(ts_dim_sym(g->syms, name, &d, NULL) == TS_OK);
    return d;
}

static int count_nodes(const ts_block *b)
{
    int n = 0;
    for (const ts_node *x = b->first; x; x = x->next) n++;
    return n;
}

static char *text_of(ts_graph *g)
{
    char *s = NULL;
    ts_err err = {0};
    if (ts_graph_to_text(g, &s, &err) != TS_OK) CHECK_MSG(0, "%s", err.msg);
    return s;
}

static void check_text(ts_graph *g, const char *want)
{
    char *got = text_of(g);
    CHECK_STR(got, want);
    ts_free_string(got);
}

static bool type_is(const ts_value *v, ts_dtype dt, int rank, const ts_dim *dims)
{
    if (!v || v->type.dtype != dt || v->type.rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (!ts_dim_eq(v->type.dims[i], dims[i])) return false;
    return true;
}

static ts_tensor *filled(ts_dtype dt, int rank, const int64_t *shape, double start);

static double scalar_of(const ts_value *v)
{
    if (!v || !v->def || v->def->op != TS_OP_CONST) return NAN;
    const ts_tensor *t = ts_node_tensor(v->def, "value");
    return ts_elem_get_f64(t->dtype, t->data, 0);
}

/* ---- folding and merging --------------------------------------------------------- */

static void test_fold(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_value *two = ts_b_scalar(b, TS_DTYPE_I32, 2), *three = ts_b_scalar(b, TS_DTYPE_I32, 3);
    ts_value *five = ts_b_binary(b, TS_OP_ADD, two, three);
    ts_value *ten = ts_b_binary(b, TS_OP_MUL, five, two);
    CHECK(scalar_of(five) == 5 && scalar_of(ten) == 10);
    /* folded constants are hash-consed like any node */
    CHECK(ts_b_scalar(b, TS_DTYPE_I32, 10) == ten);
    CHECK(ts_b_scalar(b, TS_DTYPE_I32, 2) == two);
    CHECK(ts_b_scalar(b, TS_DTYPE_I64, 2) != two);
    /* nothing but constants is left (2, 3, 5, 10 and the i64 2) */
    CHECK(count_nodes(g->body) == 5);
    ts_b_return(b, 1, &ten);
    check_text(g, "graph @t() {\n"
                  "  %0: i32[] = const() {value=[2]}\n"
                  "  %1: i32[] = const() {value=[3]}\n"
                  "  %2: i32[] = const() {value=[5]}\n"
                  "  %3: i32[] = const() {value=[10]}\n"
                  "  %4: i64[] = const() {value=[2]}\n"
                  "  return %3\n"
                  "}\n");
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* Folding obeys the fold pass's size rule: a broadcast that would inflate
 * a scalar into 4096 elements stays a broadcast. */
static void test_fold_limit(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim big[2] = {ts_dim_const(64), ts_dim_const(64)}, small[2] = {ts_dim_const(4), ts_dim_const(4)};
    ts_value *x = ts_b_full(b, TS_DTYPE_F32, 1.5, 2, big);
    ts_value *y = ts_b_full(b, TS_DTYPE_F32, 1.5, 2, small);
    CHECK(x && x->def->op == TS_OP_BROADCAST);
    CHECK(y && y->def->op == TS_OP_CONST);
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

static void test_merge(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim d[1] = {sym(g, "n")};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 1, d), *y = ts_b_input(b, TS_DTYPE_F32, 1, d);
    ts_value *n1 = ts_b_unary(b, TS_OP_NEG, x), *n2 = ts_b_unary(b, TS_OP_NEG, x);
    CHECK(n1 && n1 == n2);
    ts_value *a1 = ts_b_binary(b, TS_OP_ADD, x, y), *a2 = ts_b_binary(b, TS_OP_ADD, y, x);
    CHECK(a1 && a1 == a2);   /* commutative: either order */
    ts_value *s1 = ts_b_binary(b, TS_OP_SUB, x, y), *s2 = ts_b_binary(b, TS_OP_SUB, y, x);
    CHECK(s1 && s2 && s1 != s2);
    ts_value *c1 = ts_b_cast(b, x, TS_DTYPE_F64), *c2 = ts_b_cast(b, x, TS_DTYPE_F16);
    CHECK(c1 && c2 && c1 != c2 && ts_b_cast(b, x, TS_DTYPE_F64) == c1);   /* attributes count */
    CHECK(count_nodes(g->body) == 6);   /* neg, add, sub, sub, cast, cast */
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* Large constants are keyed by a sample of their bytes; a difference
 * outside the sample must still keep them apart. */
static void test_merge_large_consts(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    int64_t shape[1] = {1000};
    ts_tensor *t1 = filled(TS_DTYPE_F32, 1, shape, 0), *t2 = filled(TS_DTYPE_F32, 1, shape, 0);
    ts_tensor *t3 = filled(TS_DTYPE_F32, 1, shape, 0);
    if (t3) ((float *)t3->data)[500] = -1;
    ts_value *a = ts_b_const(b, t1), *c = ts_b_const(b, t2), *d = ts_b_const(b, t3);
    CHECK(a && a == c && d && d != a);
    ts_tensor_release(t1);
    ts_tensor_release(t2);
    ts_tensor_release(t3);
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* A builder over a block that already has nodes merges with them. */
static void test_merge_existing(void)
{
    const char *text = "graph @e(%x: f32[4]) {\n"
                       "  %a: f32[4] = exp(%x)\n"
                       "  return %a\n"
                       "}\n";
    ts_graph *g = NULL;
    CHECK(ts_graph_parse(text, strlen(text), "e", &g, NULL) == TS_OK);
    if (!g) return;
    ts_builder *b = ts_builder_new(g, NULL);
    ts_value *e = ts_b_unary(b, TS_OP_EXP, g->body->params[0]);
    CHECK(e == g->body->results[0]);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* ---- simplification -------------------------------------------------------------- */

static void test_simplify(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim d[2] = {sym(g, "batch"), ts_dim_const(4)};
    ts_value *x = ts_b_input(b, TS_DTYPE_I32, 2, d), *f = ts_b_input(b, TS_DTYPE_F32, 2, d);
    ts_value *y = ts_b_binary(b, TS_OP_ADD, ts_b_binary(b, TS_OP_MUL, x, ts_b_scalar(b, TS_DTYPE_I32, 1)),
                              ts_b_scalar(b, TS_DTYPE_I32, 0));
    CHECK(y == x);   /* x*1+0, through the broadcasts of the scalars */
    /* floats keep x*0 and x+(+0.0) */
    ts_value *z = ts_b_binary(b, TS_OP_MUL, f, ts_b_scalar(b, TS_DTYPE_F32, 0));
    CHECK(z && z != f && z->def->op == TS_OP_MUL);
    CHECK(ts_b_binary(b, TS_OP_ADD, f, ts_b_scalar(b, TS_DTYPE_F32, -0.0)) == f);
    int64_t perm[2] = {1, 0};
    CHECK(ts_b_transpose(b, ts_b_transpose(b, f, perm), perm) == f);
    CHECK(ts_b_cast(b, f, TS_DTYPE_F32) == f);
    CHECK(ts_b_reshape(b, f, 2, d) == f);
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* ---- broadcasting ------------------------------------------------------------------ */

static void test_broadcast(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim n = sym(g, "n"), m = sym(g, "m");
    ts_dim dx[3] = {n, ts_dim_const(1), ts_dim_const(4)}, dy[2] = {ts_dim_const(3), ts_dim_const(1)};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 3, dx), *y = ts_b_input(b, TS_DTYPE_F32, 2, dy);
    ts_value *s = ts_b_binary(b, TS_OP_ADD, x, y);
    ts_dim want[3] = {n, ts_dim_const(3), ts_dim_const(4)};
    CHECK(type_is(s, TS_DTYPE_F32, 3, want));
    /* comparisons broadcast too and yield bool */
    ts_value *c = ts_b_binary(b, TS_OP_LT, y, x);
    CHECK(type_is(c, TS_DTYPE_BOOL, 3, want));
    /* scalar with tensor; symbolic dim with 1 */
    ts_dim dv[2] = {ts_dim_const(1), m}, dw[2] = {n, ts_dim_const(1)};
    ts_value *v = ts_b_input(b, TS_DTYPE_F32, 2, dv), *w = ts_b_input(b, TS_DTYPE_F32, 2, dw);
    ts_dim want2[2] = {n, m};
    CHECK(type_is(ts_b_binary(b, TS_OP_MUL, v, w), TS_DTYPE_F32, 2, want2));
    CHECK(type_is(ts_b_binary(b, TS_OP_MUL, ts_b_scalar(b, TS_DTYPE_F32, 2), v), TS_DTYPE_F32, 2, dv));
    ts_value *p = ts_b_binary(b, TS_OP_LT, v, ts_b_scalar(b, TS_DTYPE_F32, 0));
    CHECK(type_is(ts_b_select(b, p, w, v), TS_DTYPE_F32, 2, want2));
    ts_err err = {0};
    CHECK(ts_builder_status(b, &err) == TS_OK);
    ts_err verr = {0};
    CHECK_MSG(ts_ir_verify(g, &verr) == TS_OK, "%s", verr.msg);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* Symbolic dims that might differ do not broadcast; dtypes do not mix. */
static void test_broadcast_errors(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim dn[1] = {sym(g, "n")}, dm[1] = {sym(g, "m")};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 1, dn), *y = ts_b_input(b, TS_DTYPE_F32, 1, dm);
    CHECK(ts_b_binary(b, TS_OP_ADD, x, y) == NULL);
    ts_err err = {0};
    CHECK(ts_builder_status(b, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "f32[n]") && strstr(err.msg, "f32[m]"), "%s", err.msg);
    ts_builder_free(b);

    b = ts_builder_new(g, NULL);
    ts_value *i = ts_b_input(b, TS_DTYPE_I32, 1, dn);
    CHECK(ts_b_binary(b, TS_OP_ADD, x, i) == NULL);
    ts_err_clear(&err);
    CHECK(ts_builder_status(b, &err) == TS_ERR_SHAPE && strstr(err.msg, "i32"));
    ts_builder_free(b);
    ts_graph_free(g);
}

/* ---- errors stick ------------------------------------------------------------------- */

static void test_sticky_errors(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim d[2] = {ts_dim_const(2), ts_dim_const(3)};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 2, d);
    ts_builder_set_origin(b, "Gemm_7");
    int64_t bad[1] = {5};
    ts_value *r = ts_b_reduce(b, TS_OP_REDUCE_SUM, x, 1, bad, false);
    CHECK(r == NULL);
    /* everything after the failure is NULL, and the first error is kept */
    CHECK(ts_b_unary(b, TS_OP_NEG, x) == NULL);
    CHECK(ts_b_unary(b, TS_OP_NEG, r) == NULL);
    CHECK(ts_b_scalar(b, TS_DTYPE_F32, 1) == NULL);
    CHECK(ts_b_input(b, TS_DTYPE_F32, 2, d) == NULL);
    CHECK(ts_b_return(b, 1, &r) == TS_ERR_SHAPE);
    ts_err err = {0};
    CHECK(ts_builder_status(b, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strncmp(err.msg, "Gemm_7: ", 8) == 0 && strstr(err.msg, "axis 5"), "%s", err.msg);
    ts_builder_free(b);

    /* a NULL operand without an earlier error is the caller's bug */
    b = ts_builder_new(g, NULL);
    CHECK(ts_b_unary(b, TS_OP_NEG, NULL) == NULL);
    CHECK(ts_builder_status(b, NULL) == TS_ERR_INVALID_ARG);
    ts_builder_free(b);

    /* errors from node creation (a missing attribute) stick the same way */
    b = ts_builder_new(g, NULL);
    CHECK(ts_b_unary(b, TS_OP_CAST, x) == NULL);
    ts_err_clear(&err);
    CHECK(ts_builder_status(b, &err) == TS_ERR_INVALID_MODEL && strstr(err.msg, "dtype"));
    ts_builder_free(b);
    ts_graph_free(g);
}

/* Regions are isolated: an outer value used in a region's builder fails. */
static void test_regions(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim d[1] = {ts_dim_const(4)};
    ts_value *p = ts_b_input(b, TS_DTYPE_BOOL, 0, NULL), *x = ts_b_input(b, TS_DTYPE_F32, 1, d);
    ts_block *th = NULL, *el = NULL;
    CHECK(ts_ir_block_new(g, &th, NULL) == TS_OK && ts_ir_block_new(g, &el, NULL) == TS_OK);
    ts_builder *bt = ts_builder_new(g, th), *be = ts_builder_new(g, el);
    ts_value *ta = ts_b_input(bt, TS_DTYPE_F32, 1, d), *ea = ts_b_input(be, TS_DTYPE_F32, 1, d);
    ts_value *tn = ts_b_unary(bt, TS_OP_NEG, ta);
    ts_b_return(bt, 1, &tn);
    ts_b_return(be, 1, &ea);
    CHECK(ts_builder_status(bt, NULL) == TS_OK && ts_builder_status(be, NULL) == TS_OK);
    ts_value *in[2] = {p, x}, *out[1];
    ts_block *regions[2] = {th, el};
    int n = 0;
    CHECK(ts_b_op(b, TS_OP_IF, 2, in, NULL, 2, regions, 1, out, &n) == TS_OK && n == 1);
    ts_b_return(b, 1, out);
    ts_err verr = {0};
    CHECK_MSG(ts_ir_verify(g, &verr) == TS_OK, "%s", verr.msg);
    /* x lives in the body, not in the region */
    CHECK(ts_b_unary(bt, TS_OP_NEG, x) == NULL);
    ts_err err = {0};
    CHECK(ts_builder_status(bt, &err) == TS_ERR_INVALID_ARG && strstr(err.msg, "not defined in this block"));
    ts_builder_free(bt);
    ts_builder_free(be);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* ---- reductions, matmul, running the result ------------------------------------------- */

static void test_reduce(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim d[3] = {sym(g, "n"), ts_dim_const(3), ts_dim_const(4)};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 3, d);
    int64_t ax[2] = {-1, 0};
    ts_dim k1[1] = {ts_dim_const(3)}, k2[3] = {ts_dim_const(1), ts_dim_const(3), ts_dim_const(1)};
    ts_value *r = ts_b_reduce(b, TS_OP_REDUCE_SUM, x, 2, ax, false);
    CHECK(type_is(r, TS_DTYPE_F32, 1, k1));
    CHECK(r && ts_node_ints(r->def, "axes", &(int){0})[0] == 0);   /* sorted */
    CHECK(type_is(ts_b_reduce(b, TS_OP_REDUCE_MAX, x, 2, ax, true), TS_DTYPE_F32, 3, k2));
    int64_t one = 1;
    ts_dim a2[2] = {d[0], ts_dim_const(4)};
    CHECK(type_is(ts_b_reduce(b, TS_OP_ARGMAX, x, 1, &one, false), TS_DTYPE_I64, 2, a2));
    CHECK(ts_b_reduce(b, TS_OP_REDUCE_MAX, x, 0, NULL, false) == x);
    /* a float sum over no axes is 0.0 + x, which is not x for -0.0 */
    ts_value *s0 = ts_b_reduce(b, TS_OP_REDUCE_SUM, x, 0, NULL, false);
    CHECK(s0 && s0 != x && s0->def->op == TS_OP_REDUCE_SUM);
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

static ts_tensor *filled(ts_dtype dt, int rank, const int64_t *shape, double start)
{
    ts_tensor *t = NULL;
    CHECK(ts_tensor_new(dt, rank, shape, &t, NULL) == TS_OK);
    for (int64_t i = 0; t && i < t->numel; i++) ts_elem_set_f64(dt, t->data, i, start + (double)i);
    return t;
}

/* matmul's shapes for every rank pairing, and its values by the
 * interpreter against a plain loop. */
static void test_matmul(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim bt = sym(g, "b");
    ts_dim dx[3] = {bt, ts_dim_const(2), ts_dim_const(3)}, dy[2] = {ts_dim_const(3), ts_dim_const(4)};
    ts_dim dv[1] = {ts_dim_const(3)}, du[1] = {ts_dim_const(4)};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 3, dx), *y = ts_b_input(b, TS_DTYPE_F32, 2, dy);
    ts_value *v = ts_b_input(b, TS_DTYPE_F32, 1, dv), *u = ts_b_input(b, TS_DTYPE_F32, 1, du);
    ts_value *xy = ts_b_matmul(b, x, y), *vy = ts_b_matmul(b, v, y), *yu = ts_b_matmul(b, y, u);
    ts_value *vv = ts_b_matmul(b, v, v), *xv = ts_b_matmul(b, x, v);
    ts_dim w1[3] = {bt, ts_dim_const(2), ts_dim_const(4)}, w2[1] = {ts_dim_const(4)};
    ts_dim w3[1] = {ts_dim_const(3)}, w5[2] = {bt, ts_dim_const(2)};
    CHECK(type_is(xy, TS_DTYPE_F32, 3, w1));
    CHECK(type_is(vy, TS_DTYPE_F32, 1, w2));
    CHECK(type_is(yu, TS_DTYPE_F32, 1, w3));
    CHECK(type_is(vv, TS_DTYPE_F32, 0, NULL));
    CHECK(type_is(xv, TS_DTYPE_F32, 2, w5));
    ts_value *outs[2] = {xy, vv};
    CHECK(ts_b_return(b, 2, outs) == TS_OK);
    ts_err err = {0};
    CHECK_MSG(ts_ir_verify(g, &err) == TS_OK, "%s", err.msg);

    int64_t sx[3] = {2, 2, 3}, sy[2] = {3, 4}, sv[1] = {3}, su[1] = {4};
    ts_tensor *in[4] = {filled(TS_DTYPE_F32, 3, sx, 1), filled(TS_DTYPE_F32, 2, sy, -2),
                        filled(TS_DTYPE_F32, 1, sv, 1), filled(TS_DTYPE_F32, 1, su, 0)};
    ts_tensor *out[2] = {0};
    ts_status s = ts_interp_run_graph(g, 4, in, 2, out, &err);
    CHECK_MSG(s == TS_OK, "%s", err.msg);
    if (s == TS_OK) {
        const float *X = in[0]->data, *Y = in[1]->data, *R = out[0]->data;
        bool ok = out[0]->numel == 16;
        for (int bb = 0; ok && bb < 2; bb++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 4; j++) {
                    float acc = 0;
                    for (int k = 0; k < 3; k++) acc += X[bb * 6 + i * 3 + k] * Y[k * 4 + j];
                    ok = ok && R[bb * 8 + i * 4 + j] == acc;
                }
        CHECK(ok);
        CHECK(((const float *)out[1]->data)[0] == 14.0f);   /* 1+4+9 */
    }
    for (int i = 0; i < 4; i++) ts_tensor_release(in[i]);
    for (int i = 0; i < 2; i++) ts_tensor_release(out[i]);
    CHECK(ts_builder_status(b, NULL) == TS_OK);
    ts_builder_free(b);
    ts_graph_free(g);
}

/* A small model, built and printed. */
static void test_text(void)
{
    ts_graph *g = new_graph();
    ts_builder *b = ts_builder_new(g, NULL);
    ts_dim dx[2] = {sym(g, "batch"), ts_dim_const(4)}, dw[2] = {ts_dim_const(4), ts_dim_const(3)};
    ts_value *x = ts_b_input(b, TS_DTYPE_F32, 2, dx), *w = ts_b_input(b, TS_DTYPE_F32, 2, dw);
    int64_t shape[1] = {3};
    ts_tensor *bias = filled(TS_DTYPE_F32, 1, shape, 0.5);
    ts_value *h = ts_b_matmul(b, x, w);
    ts_value *y = ts_b_binary(b, TS_OP_ADD, h, ts_b_const(b, bias));
    ts_value *z = ts_b_binary(b, TS_OP_MAX, y, ts_b_scalar(b, TS_DTYPE_F32, 0));
    ts_tensor_release(bias);
    ts_b_return(b, 1, &z);
    check_text(g, "graph @t(%0: f32[batch, 4], %1: f32[4, 3]) {\n"
                  "  %2: f32[batch, 3] = dot(%0, %1) {lhs_contract=[1], rhs_contract=[0]}\n"
                  "  %3: f32[3] = const() {value=[0.5, 1.5, 2.5]}\n"
                  "  %4: f32[batch, 3] = broadcast(%3) {shape=[batch, 3], axes=[1]}\n"
                  "  %5: f32[batch, 3] = add(%2, %4)\n"
                  "  %6: f32[] = const() {value=[0]}\n"
                  "  %7: f32[batch, 3] = broadcast(%6) {shape=[batch, 3], axes=[]}\n"
                  "  %8: f32[batch, 3] = max(%5, %7)\n"
                  "  return %8\n"
                  "}\n");
    ts_builder_free(b);
    ts_graph_free(g);
}

/* ---- running out of memory --------------------------------------------------------------- */

static long alloc_count, alloc_fail_at;

static void *failing_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (alloc_fail_at && ++alloc_count == alloc_fail_at) return NULL;
    return realloc(ptr, n);
}

/* Build a little graph with every feature; return the builder's status. */
static ts_status build_some(void)
{
    ts_graph *g = NULL;
    if (ts_ir_graph_new("oom", &g, NULL) != TS_OK) return TS_ERR_OOM;
    ts_builder *b = ts_builder_new(g, NULL);
    ts_status s = TS_ERR_OOM;
    if (b) {
        ts_dim d[2] = {ts_dim_const(3), ts_dim_const(4)};
        ts_value *x = ts_b_input(b, TS_DTYPE_F32, 2, d);
        ts_value *c = ts_b_binary(b, TS_OP_ADD, ts_b_scalar(b, TS_DTYPE_F32, 1), ts_b_scalar(b, TS_DTYPE_F32, 2));
        ts_value *y = ts_b_binary(b, TS_OP_MUL, x, c);
        ts_value *y2 = ts_b_binary(b, TS_OP_MUL, c, x);
        int64_t ax = 1;
        ts_value *r = ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_binary(b, TS_OP_SUB, y, y2), 1, &ax, true);
        ts_value *m = ts_b_matmul(b, ts_b_transpose(b, r, (int64_t[]){1, 0}), x);
        ts_b_return(b, 1, &m);
        s = ts_builder_status(b, NULL);
    }
    ts_builder_free(b);
    ts_graph_free(g);
    return s;
}

static void test_oom(void)
{
    CHECK(build_some() == TS_OK);
    for (long k = 1; k < 100000; k++) {
        ts_set_allocator(failing_alloc, NULL);
        alloc_count = 0;
        alloc_fail_at = k;
        ts_status s = build_some();
        bool hit = alloc_count >= k;
        alloc_fail_at = 0;
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(hit ? s == TS_ERR_OOM : s == TS_OK, "allocation %ld: status %d", k, (int)s);
        if (!hit) break;
    }
}

int main(void)
{
    test_fold();
    test_fold_limit();
    test_merge();
    test_merge_large_consts();
    test_merge_existing();
    test_simplify();
    test_broadcast();
    test_broadcast_errors();
    test_sticky_errors();
    test_regions();
    test_reduce();
    test_matmul();
    test_text();
    test_oom();
    return check_report();
}
