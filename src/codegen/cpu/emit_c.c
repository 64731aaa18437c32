/* emit_c.c — loop IR to C.
 *
 * Expressions become `const T tN = ...;` locals the first time a statement
 * needs them, so a shared subexpression is computed once per iteration.
 * Before a loop, the pure arithmetic that does not depend on it (index
 * products, dims, constants) is declared outside it; loads are left in
 * place (a loop may run zero times over an empty buffer, and the C
 * compiler hoists invariant loads through `restrict` itself). Guarded
 * expressions (pad, concat) are written inline as ?: so the branch not
 * taken is never evaluated. Integer division in index arithmetic is
 * written safe against a zero divisor for the same empty-loop reason.
 *
 * The parallel loop (sched.c) becomes one flat range over its collapsed
 * loops, split in contiguous chunks by (ith, nth). A float reduction in a
 * vector loop is written in lanes by emit_lanes.c.
 */
#include "codegen/cpu/emit_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { LANES = TS_EM_LANES };

const char *ts_emit_ctype(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_BOOL: return "uint8_t";
    case TS_DTYPE_I8: return "int8_t";
    case TS_DTYPE_U8: return "uint8_t";
    case TS_DTYPE_I16: return "int16_t";
    case TS_DTYPE_U16: return "uint16_t";
    case TS_DTYPE_I32: return "int32_t";
    case TS_DTYPE_U32: return "uint32_t";
    case TS_DTYPE_I64: return "int64_t";
    case TS_DTYPE_U64: return "uint64_t";
    case TS_DTYPE_F32: return "float";
    case TS_DTYPE_F64: return "double";
    default: return NULL;
    }
}


/* ---- bookkeeping ------------------------------------------------------------------------ */

static void max_id_lx(const ts_lx *x, uint32_t *m)
{
    if (!x) return;
    if (x->id + 1 > *m) *m = x->id + 1;
    for (int i = 0; i < 3; i++) max_id_lx(x->a[i], m);
}

static void max_id_ls(const ts_ls *s, uint32_t *m)
{
    for (; s; s = s->next) {
        max_id_lx(s->extent, m);
        max_id_lx(s->index, m);
        max_id_lx(s->value, m);
        max_id_ls(s->body, m);
    }
}

static bool push_decl(em *e, uint32_t id)
{
    if (e->nstack == e->capstack) {
        int nc = e->capstack ? e->capstack * 2 : 64;
        uint32_t *s = ts_mem_realloc(e->stack, sizeof *s * (size_t)nc);
        if (!s) {
            e->status = TS_ERR_OOM;
            return false;
        }
        e->stack = s;
        e->capstack = nc;
    }
    e->stack[e->nstack++] = id;
    e->declared[id] = e->level;
    return true;
}

void ts_em_open(em *e) { e->level++; }

static void close_block(em *e)
{
    while (e->nstack && e->declared[e->stack[e->nstack - 1]] == e->level) e->declared[e->stack[--e->nstack]] = -1;
    e->level--;
}

void ts_em_indent(em *e) { ts_buf_printf(e->out, "%*s", 4 * (e->level + 1), ""); }

/* Leaves a block and writes its closing brace. */
void ts_em_close(em *e)
{
    close_block(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "}\n");
}

/* ---- expressions ------------------------------------------------------------------------- */

static void declare(em *e, ts_lx *x);

/* 2 or 3 when x is a float pow by that constant, else 0. GPT-2's GELU
 * has pow(x, 3); libm's powf per element kept its epilogue scalar (10 ms
 * of each 18 ms MLP GEMM). x*x is pow(x, 2) exactly; x*x*x rounds twice
 * (within 2 ulp, and the same specials: NaN, inf, signed zero). */
static int small_float_power(const ts_lx *x)
{
    const bool fl = x->dt == TS_DTYPE_F32 || x->dt == TS_DTYPE_F64;
    if (x->op != TS_OP_POW || !fl || !x->a[1] || x->a[1]->k != TS_LX_CONST) return 0;
    return x->a[1]->c == 2.0 ? 2 : x->a[1]->c == 3.0 ? 3 : 0;
}

/* OpenCL C has no array of buffer pointers: a load from the buffer whose
 * number a table holds is a choice among the numbers the table has (only
 * the chosen load runs). */
static void device_load_by_number(em *e, ts_buf *b, const ts_lx *x, const char *idx, const char *num)
{
    const ts_ltab *t = x->a[1]->k == TS_LX_TAB ? &e->k->tabs[x->a[1]->var] : NULL;
    if (!t || !t->n) {
        e->status = TS_ERR_UNSUPPORTED;
        return;
    }
    const char *T = ts_emit_ctype(x->dt);
    ts_buf_puts(b, "(");
    int64_t last = t->v[t->n - 1];
    for (int i = 0; i < t->n; i++) {
        bool seen = t->v[i] == last || t->v[i] < 0 || t->v[i] >= e->k->n_bufs;
        for (int j = 0; j < i; j++) seen |= t->v[j] == t->v[i];
        if (!seen) ts_buf_printf(b, "%s == %lld ? (%s)b%lld[%s] : ", num, (long long)t->v[i], T, (long long)t->v[i], idx);
    }
    if (last < 0 || last >= e->k->n_bufs) e->status = TS_ERR_UNSUPPORTED;
    ts_buf_printf(b, "(%s)b%lld[%s])", T, (long long)last, idx);
}

/* The text of x's own operation with operand references. */
static void rhs(em *e, ts_buf *b, ts_lx *x, bool inline_only)
{
    ts_buf t[3] = {{0}, {0}, {0}};
    for (int i = 0; i < 3; i++)
        if (x->a[i]) ts_em_ref(e, &t[i], x->a[i], inline_only || x->k == TS_LX_GUARD);
    const char *a = t[0].data ? t[0].data : "", *bb = t[1].data ? t[1].data : "", *c = t[2].data ? t[2].data : "";
    switch (x->k) {
    case TS_LX_LOAD:
        if (x->var == TS_LBUF_BLOCK) ts_buf_printf(b, "block[%s]", a);
        else if (x->var == TS_LBUF_ROWTMP) ts_buf_printf(b, "rowtmp[%s]", a);
        else ts_buf_printf(b, "b%d[%s]", x->var, a);
        break;
    case TS_LX_OP:
        if (x->index) ts_buf_printf(b, "(%s %s %s)", a, x->op == TS_OP_ADD ? "+" : x->op == TS_OP_SUB ? "-" : "*", bb);
        else if (ts_em_clamp_by_const(b, x, a, bb)) break;
        else if (small_float_power(x) == 2) ts_buf_printf(b, "(%s * %s)", a, a);
        else if (small_float_power(x) == 3) ts_buf_printf(b, "(%s * %s * %s)", a, a, a);
        else if (x->op == TS_OP_EXP && x->dt == TS_DTYPE_F32 && (x->var & TS_LXH_ARG_NONPOS))
            ts_buf_printf(b, "tsrt_expf_np(%s)", a);   /* the same bits for such arguments, cheaper */
        else ts_em_put_op(b, x->op, x->dt, x->a[0]->dt, a, bb, c);
        break;
    case TS_LX_TAB: ts_buf_printf(b, "tab%d[%s]", x->var, a); break;
    case TS_LX_LOADI:
        if (e->device) device_load_by_number(e, b, x, a, bb);
        else ts_buf_printf(b, "((const %s *)bufs[%s])[%s]", ts_emit_ctype(x->dt), bb, a);
        break;
    case TS_LX_CAST: ts_em_put_cast(b, x->a[0]->dt, x->dt, a); break;
    case TS_LX_GUARD: ts_buf_printf(b, "(%s ? %s : %s)", a, bb, c); break;
    case TS_LX_IDIV: ts_buf_printf(b, "(%s ? %s / %s : 0)", bb, a, bb); break;
    case TS_LX_IMOD: ts_buf_printf(b, "(%s ? %s %% %s : 0)", bb, a, bb); break;
    default: break;
    }
    for (int i = 0; i < 3; i++) ts_buf_free(&t[i]);
}

/* A reference to x: a leaf's text, a declared local's name, or (declaring
 * it now, unless inline_only) a new local. */
void ts_em_ref(em *e, ts_buf *b, ts_lx *x, bool inline_only)
{
    switch (x->k) {
    case TS_LX_CONST: ts_em_put_const(e, b, x); return;
    case TS_LX_VAR: ts_buf_printf(b, "i%d", x->var); return;
    case TS_LX_DIM: ts_buf_printf(b, "D%d", x->var); return;
    case TS_LX_ACC: ts_buf_printf(b, "acc%d", x->var); return;
    case TS_LX_PARAM: ts_buf_printf(b, "P%d", x->var); return;
    default: break;
    }
    if (e->declared[x->id] < 0 && !inline_only) declare(e, x);
    if (e->declared[x->id] >= 0) {
        ts_buf_printf(b, "t%u", x->id);
        return;
    }
    ts_buf_puts(b, "(");
    rhs(e, b, x, true);
    ts_buf_puts(b, ")");
}

static void declare(em *e, ts_lx *x)
{
    ts_buf r = {0};
    rhs(e, &r, x, false);   /* operands first: their declarations come before this line */
    ts_em_indent(e);
    ts_buf_printf(e->out, "const %s t%u = %s;\n", ts_emit_ctype(x->dt), x->id, r.data ? r.data : "0");
    ts_buf_free(&r);
    push_decl(e, x->id);
}

/* Pure arithmetic (no load, no accumulator) that does not depend on loops
 * at `depth` or deeper: declared before such a loop. */
static bool pure(const ts_lx *x)
{
    if (!x) return true;
    if (x->k == TS_LX_LOAD || x->k == TS_LX_LOADI || x->k == TS_LX_ACC) return false;
    for (int i = 0; i < 3; i++)
        if (!pure(x->a[i])) return false;
    return true;
}

static void hoist_lx(em *e, ts_lx *x, int depth)
{
    if (!x || x->k == TS_LX_CONST || x->k == TS_LX_VAR || x->k == TS_LX_DIM || x->k == TS_LX_ACC ||
        x->k == TS_LX_PARAM)
        return;
    if (e->declared[x->id] >= 0) return;
    if (x->depth < depth && pure(x)) {
        declare(e, x);
        return;
    }
    if (x->k == TS_LX_GUARD) return;
    for (int i = 0; i < 3; i++) hoist_lx(e, x->a[i], depth);
}

static void hoist(em *e, const ts_ls *s, int depth);

static void hoist_stmt(em *e, const ts_ls *s, int depth)
{
    hoist_lx(e, s->extent, depth);
    hoist_lx(e, s->index, depth);
    hoist_lx(e, s->value, depth);
    hoist(e, s->body, depth);
}

static void hoist(em *e, const ts_ls *s, int depth)
{
    for (; s; s = s->next) hoist_stmt(e, s, depth);
}

/* ---- statements ---------------------------------------------------------------------- */

/* A loop's body one level in, then its closing brace (the header line is
 * the caller's). */
void ts_em_body(em *e, const ts_ls *body)
{
    ts_em_open(e);
    ts_em_stmts(e, body);
    ts_em_close(e);
}

void ts_em_combine(em *e, ts_buf *b, ts_op op, ts_dtype dt, const char *acc, const char *v)
{
    (void)e;
    ts_em_put_op(b, op, dt, dt, acc, v, NULL);
}

static void parallel_for(em *e, const ts_ls *s)
{
    /* the collapsed loops: s, s->body, ... (each the only statement of the last) */
    const ts_ls *loops[TS_MAX_RANK + 8];
    int m = 0;
    for (const ts_ls *l = s; m < s->collapse && l; l = l->body) loops[m++] = l;
    for (int i = 0; i < m; i++)   /* runs zero times: no `% 0` in dead code (OpenCL C warns) */
        if (ts_lx_is_int(loops[i]->extent, 0)) return;
    ts_buf ext[TS_MAX_RANK + 8];
    memset(ext, 0, sizeof ext);
    for (int i = 0; i < m; i++) ts_em_ref(e, &ext[i], loops[i]->extent, false);
    ts_em_indent(e);
    ts_buf_printf(e->out, "{\n");
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const int64_t n_ = 1");
    for (int i = 0; i < m; i++) ts_buf_printf(e->out, " * %s", ext[i].data);
    ts_buf_printf(e->out, ";\n");
    ts_em_indent(e);
    if (e->strided) {
        ts_buf_printf(e->out, "for (int64_t f_ = ith; f_ < n_; f_ += nth) {\n");
    } else {
        ts_buf_printf(e->out, "const int64_t lo_ = n_ / nth * ith + (ith < n_ %% nth ? ith : n_ %% nth);\n");
        ts_em_indent(e);
        ts_buf_printf(e->out, "const int64_t hi_ = lo_ + n_ / nth + (ith < n_ %% nth);\n");
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (int64_t f_ = lo_; f_ < hi_; f_++) {\n");
    }
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "int64_t r_ = f_;\n");
    for (int i = m - 1; i >= 0; i--) {
        ts_em_indent(e);
        if (i) ts_buf_printf(e->out, "const int64_t i%d = r_ %% %s; r_ /= %s;\n", loops[i]->var, ext[i].data, ext[i].data);
        else ts_buf_printf(e->out, "const int64_t i%d = r_;\n", loops[i]->var);
    }
    for (int i = 0; i < m; i++) ts_buf_free(&ext[i]);
    const ts_ls *inner = loops[m - 1];
    hoist(e, inner->body, inner->depth + 1);
    ts_em_stmts(e, inner->body);
    ts_em_close(e);
    ts_em_close(e);
}

/* A row kernel's last pass, `for i: rowtmp[i] = v` over the whole row,
 * and the stream of that row that follows it: when the row's length is a
 * constant multiple of 16, the pass computes 16 values at a time into a
 * vector-sized chunk, which goes straight out with tsrt_stream16; the
 * row scratch is neither written nor read again. Softmax's scale pass
 * and layer norm's affine pass were a store and a load per vector more
 * (softmax 8192 x 1024, 1 thread: -8% in a harness, D55). */
static bool streamed_pass(const ts_ls *s)
{
    const ts_ls *st = s->body, *sr = s->next;
    while (st && st->k == TS_LS_PREFETCH) st = st->next;
    if (!sr || sr->k != TS_LS_STREAM || (s->flags & TS_LOOP_PARALLEL) || !st || st->next ||
        st->k != TS_LS_STORE || st->buf != TS_LBUF_ROWTMP)
        return false;
    if (st->index->k != TS_LX_VAR || st->index->var != s->var) return false;
    if (s->extent->k != TS_LX_CONST || sr->extent->k != TS_LX_CONST || s->extent->ci != sr->extent->ci) return false;
    return s->extent->ci > 0 && s->extent->ci % LANES == 0;
}

static void put_streamed_pass(em *e, const ts_ls *s)
{
    const ts_ls *st = s->body, *sr = s->next;
    while (st->k == TS_LS_PREFETCH) st = st->next;
    int v = s->var;
    ts_buf d = {0}, x = {0};
    ts_em_ref(e, &d, sr->index, false);   /* the row's start, declared out here */
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d_b = 0; i%d_b < INT64_C(%lld); i%d_b += %d) {\n", v, v,
                  (long long)s->extent->ci, v, LANES);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "float chunk[%d] __attribute__((aligned(64)));\n", LANES);
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) {\n", LANES);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const int64_t i%d = i%d_b + l;\n", v, v);
    ts_em_ref(e, &x, st->value, false);
    ts_em_indent(e);
    ts_buf_printf(e->out, "chunk[l] = %s;\n", x.data ? x.data : "0");
    ts_em_close(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "tsrt_stream16(b%d + %s + i%d_b, chunk);\n", sr->buf, d.data ? d.data : "0", v);
    for (const ts_ls *p = s->body; p != st; p = p->next) {   /* the chunk's line of the next row (D78) */
        ts_buf a = {0};
        ts_em_indent(e);
        ts_buf_printf(e->out, "{\n");
        ts_em_open(e);
        ts_em_indent(e);
        ts_buf_printf(e->out, "const int64_t i%d = i%d_b;\n", v, v);
        ts_em_ref(e, &a, p->index, false);
        ts_em_indent(e);
        ts_buf_printf(e->out, "__builtin_prefetch(b%d + %s, 0, 3);\n", p->buf, a.data ? a.data : "0");
        ts_em_close(e);
        ts_buf_free(&a);
    }
    ts_em_close(e);
    ts_buf_free(&d);
    ts_buf_free(&x);
}

/* ---- a vector loop's remainder as one more vector (D128) ---------------------------------- */

/* Whether x loads buffer buf anywhere but at index at (a budget of nodes
 * keeps shared trees cheap; running out answers yes). */
static bool loads_elsewhere(const ts_lx *x, int buf, const ts_lx *at, int *budget)
{
    if (!x) return false;
    if (--*budget < 0) return true;
    if (x->k == TS_LX_LOAD && x->var == buf && x->a[0] != at) return true;
    if (x->k == TS_LX_LOADI) return true;   /* some buffer of a table: maybe buf */
    for (int i = 0; i < 3; i++)
        if (x->a[i] && loads_elsewhere(x->a[i], buf, at, budget)) return true;
    return false;
}

/* Whether x calls a math function (tsrt_expf and the like: a scalar call
 * costs about what a call on 16 lanes does). */
static bool calls_math(const ts_lx *x, int *budget)
{
    if (!x || --*budget < 0) return false;
    if (x->k == TS_LX_OP) switch (x->op) {
        case TS_OP_EXP: case TS_OP_LOG: case TS_OP_TANH: case TS_OP_ERF: case TS_OP_POW: case TS_OP_SIN:
        case TS_OP_COS: case TS_OP_TAN: case TS_OP_ATAN2: return true;
        /* the exact NaN/-0 max and min of two floats (a pool's fold):
         * five operations per element in scalar code, one in lanes */
        case TS_OP_MAX: case TS_OP_MIN:
            if (x->dt == TS_DTYPE_F32 && x->a[0] && x->a[1] && x->a[0]->k != TS_LX_CONST && x->a[1]->k != TS_LX_CONST)
                return true;
            break;
        default: break;
        }
    for (int i = 0; i < 3; i++)
        if (x->a[i] && calls_math(x->a[i], budget)) return true;
    return false;
}

/* A vector loop of one f32 store, element by element (the value reads the
 * stored buffer at the stored index only), that calls a math function
 * and whose trip count leaves a remainder: the conv epilogues (rows of
 * 36 positions on 6x6 maps, 49 on 7x7: extents known at run time) and
 * loops of a constant count above 16 that is not a multiple of 16. Cheap bodies keep their scalar remainder: the extra vector and the
 * more complex loop cost more than it (an SE block's scale on rows of 24,
 * measured). */
static bool tail_as_vector(const em *e, const ts_ls *s)
{
    const ts_ls *st = s->body;
    if (!(s->flags & TS_LOOP_VECTOR) || !st || st->next || st->k != TS_LS_STORE) return false;
    if (st->buf != TS_LBUF_BLOCK && st->buf != TS_LBUF_ROWTMP && (st->buf < 0 || e->k->bufs[st->buf].dt != TS_DTYPE_F32))
        return false;
    if (s->extent->k == TS_LX_CONST) {
        if (s->extent->ci <= TS_EM_LANES || s->extent->ci % TS_EM_LANES == 0) return false;
    } else if (st->buf != TS_LBUF_BLOCK || !e->k->tmpl || e->k->tmpl->kind != TS_TMPL_CONV) {
        /* a GEMM's blocks are whole panels but at the matrix's edge: the
         * copies would cost compile time (an unrolled GRU's gate
         * epilogues) for little; a conv's span a small map's positions */
        return false;
    }
    int budget = 4096, mbudget = 4096;
    if (!calls_math(st->value, &mbudget)) return false;
    return !loads_elsewhere(st->value, st->buf, st->index, &budget) &&
           !loads_elsewhere(st->index, st->buf, NULL, &budget);
}

/* for (i = 0; i < n; i++) y[f(i)] = g(i), n > 16 with a remainder r: the
 * last 16 values are computed first (from the untouched inputs) into a
 * local vector, then the loop runs over n - r, then the last r values
 * are stored. An element's value reads only that element of the stored
 * buffer, so the early 16 see what the loop would have; the scalar
 * remainder (a scalar exp per element of a SiLU epilogue, 4 of every 36)
 * becomes one more vector of work. Shorter loops stay as they were. */
/* for (tq = from; tq < 16; tq++) { const int64_t iV = n - 16 + tq; ...
 * (the block left open) */
static void open_tail_lanes(em *e, int v, const char *ext, const char *from)
{
    const int L = TS_EM_LANES;
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t tq%d_ = %s; tq%d_ < %d; tq%d_++) {\n", v, from ? from : "0", v, L, v);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const int64_t i%d = %s - %d + tq%d_;\n", v, ext, L, v);
}

static void put_tail_as_vector(em *e, const ts_ls *s, const char *ext)
{
    const ts_ls *st = s->body;
    const int v = s->var, L = TS_EM_LANES;
    const bool fixed = s->extent->k == TS_LX_CONST;
    ts_em_indent(e);
    if (fixed) ts_buf_printf(e->out, "{\n");
    else ts_buf_printf(e->out, "if (%s > %d && %s %% %d) {\n", ext, L, ext, L);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "float tl%d_[%d];\n", v, L);
    open_tail_lanes(e, v, ext, "0");
    ts_buf b = {0};
    ts_em_ref(e, &b, st->value, false);
    ts_em_indent(e);
    ts_buf_printf(e->out, "tl%d_[tq%d_] = %s;\n", v, v, b.data);
    ts_buf_free(&b);
    ts_em_close(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d = 0; i%d < %s - %s %% %d; i%d++) {\n", v, v, ext, ext, L, v);
    ts_em_body(e, s->body);
    ts_buf from = {0};
    ts_buf_printf(&from, "%d - %s %% %d", L, ext, L);
    open_tail_lanes(e, v, ext, from.data);
    ts_buf_free(&from);
    ts_buf a = {0};
    ts_em_ref(e, &a, st->index, false);
    ts_em_indent(e);
    if (st->buf == TS_LBUF_BLOCK) ts_buf_printf(e->out, "block[%s] = tl%d_[tq%d_];\n", a.data, v, v);
    else if (st->buf == TS_LBUF_ROWTMP) ts_buf_printf(e->out, "rowtmp[%s] = tl%d_[tq%d_];\n", a.data, v, v);
    else ts_buf_printf(e->out, "b%d[%s] = tl%d_[tq%d_];\n", st->buf, a.data, v, v);
    ts_buf_free(&a);
    ts_em_close(e);
    ts_em_close(e);
    if (fixed) return;
    ts_em_indent(e);
    ts_buf_printf(e->out, "else\n");
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d = 0; i%d < %s; i%d++) {\n", v, v, ext, v);
    ts_em_body(e, s->body);
}

static void for_loop(em *e, const ts_ls *s)
{
    hoist_stmt(e, s, s->depth);   /* what the loop (and its extent) needs but does not vary in it */
    if (s->flags & TS_LOOP_PARALLEL) {
        parallel_for(e, s);
        return;
    }
    ts_buf ext = {0};
    ts_em_ref(e, &ext, s->extent, false);
    /* lanes and vector tails are the CPU's vector-unit shapes */
    if (!e->device && (s->flags & TS_LOOP_VECTOR) && ts_em_lane_reduction(e, s, ext.data)) {
        ts_buf_free(&ext);
        return;
    }
    if (!e->device && tail_as_vector(e, s)) {
        put_tail_as_vector(e, s, ext.data);
        ts_buf_free(&ext);
        return;
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d = 0; i%d < %s; i%d++) {\n", s->var, s->var, ext.data, s->var);
    ts_buf_free(&ext);
    ts_em_body(e, s->body);
}

void ts_em_store(em *e, const ts_ls *s)
{
    ts_buf a = {0}, b = {0};
    ts_em_ref(e, &a, s->index, false);
    ts_em_ref(e, &b, s->value, false);
    ts_em_indent(e);
    if (s->buf == TS_LBUF_BLOCK) ts_buf_printf(e->out, "block[%s] = %s;\n", a.data, b.data);
    else if (s->buf == TS_LBUF_ROWTMP) ts_buf_printf(e->out, "rowtmp[%s] = %s;\n", a.data, b.data);
    else if (s->buf == TS_LBUF_TEROW || s->buf == TS_LBUF_TECOL)
        ts_buf_printf(e->out, "te_%s[%s] = %s;\n", s->buf == TS_LBUF_TEROW ? "row" : "col", a.data, b.data);
    else ts_buf_printf(e->out, "b%d[%s] = %s;\n", s->buf, a.data, b.data);
    ts_buf_free(&a);
    ts_buf_free(&b);
}

void ts_em_stmts(em *e, const ts_ls *s)
{
    for (; s && e->status == TS_OK; s = s->next) {
        ts_buf a = {0}, b = {0}, c = {0};
        switch (s->k) {
        case TS_LS_FOR:
            if (!e->device && streamed_pass(s)) {
                hoist_stmt(e, s, s->depth);
                put_streamed_pass(e, s);
                s = s->next;   /* the stream it did */
            } else {
                for_loop(e, s);
            }
            break;
        case TS_LS_STORE: ts_em_store(e, s); break;
        case TS_LS_PREFETCH: break;   /* only lane loops prefetch, once per block of lanes */
        case TS_LS_STREAM:
            ts_em_ref(e, &a, s->index, false);
            ts_em_ref(e, &b, s->extent, false);
            ts_em_indent(e);
            ts_buf_printf(e->out, "tsrt_stream_row(b%d + %s, rowtmp, %s);\n", s->buf, a.data, b.data);
            break;
        case TS_LS_ACC:
            ts_em_ref(e, &a, s->value, false);
            ts_em_indent(e);
            ts_buf_printf(e->out, "%s acc%d = %s;\n", ts_emit_ctype(s->dt), s->var, a.data);
            break;
        case TS_LS_UPDATE: {
            char accn[32];
            snprintf(accn, sizeof accn, "acc%d", s->var);
            ts_em_ref(e, &a, s->value, false);
            ts_em_combine(e, &c, s->op, s->value->dt, accn, a.data);
            ts_em_indent(e);
            ts_buf_printf(e->out, "%s = %s;\n", accn, c.data);
            break;
        }
        }
        ts_buf_free(&a);
        ts_buf_free(&b);
        ts_buf_free(&c);
    }
}

/* Whether a loop of s is split across threads (inside a rolled loop
 * too, D132). */
static bool any_parallel(const ts_ls *s)
{
    for (; s; s = s->next)
        if (s->k == TS_LS_FOR && ((s->flags & TS_LOOP_PARALLEL) || any_parallel(s->body))) return true;
    return false;
}

/* The buffer and dim locals every function of a kernel starts with. */
void ts_em_prologue(em *e, const ts_lkernel *k)
{
    for (int i = 0; i < k->n_bufs; i++)
        ts_buf_printf(e->out, "    %s%s *restrict b%d = (%s%s *)bufs[%d];\n", k->bufs[i].written ? "" : "const ",
                      ts_emit_ctype(k->bufs[i].dt), i, k->bufs[i].written ? "" : "const ", ts_emit_ctype(k->bufs[i].dt),
                      i);
    for (int i = 0; i < k->n_dims; i++) ts_buf_printf(e->out, "    const int64_t D%d = D[%d];\n", i, i);
}

/* Forget every declared local: a new C function starts. */
void ts_em_reset(em *e)
{
    while (e->nstack) e->declared[e->stack[--e->nstack]] = -1;
    e->level = 0;
}

/* The CPU's function: buffers from the pointer array, dims from D,
 * tables as static arrays. */
static void c_open_fn(em *e, const ts_lkernel *k)
{
    ts_buf *out = e->out;
    ts_buf_printf(out, "\n/* %s */\nvoid %s(void *const *bufs, const int64_t *D, int ith, int nth, void *ws)\n{\n",
                  k->what, k->name);
    ts_buf_puts(out, "    (void)bufs; (void)D; (void)ith; (void)nth; (void)ws;\n");
    ts_em_prologue(e, k);
    for (int i = 0; i < k->n_tabs; i++) {   /* what differs between a rolled loop's nests (D132) */
        ts_buf_printf(out, "    static const int64_t tab%d[%d] = {", i, k->tabs[i].n);
        ts_em_tab_values(e, i);
        ts_buf_puts(out, "};\n");
    }
}

static const ts_em_dialect c_dialect = {false, false, c_open_fn};

void ts_em_tab_values(em *e, int t)
{
    const ts_ltab *tab = &e->k->tabs[t];
    for (int j = 0; j < tab->n; j++) ts_buf_printf(e->out, "%sINT64_C(%lld)", j ? ", " : "", (long long)tab->v[j]);
}

ts_status ts_em_kernel(ts_buf *out, const ts_lkernel *k, const ts_em_dialect *d, ts_err *err)
{
    for (int i = 0; i < k->n_bufs; i++)
        if (!ts_emit_ctype(k->bufs[i].dt))
            return ts_err_set(err, TS_ERR_UNSUPPORTED, "kernel %s: no C type for %s", k->name,
                              ts_dtype_name(k->bufs[i].dt));
    if (k->tmpl && d->device)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "kernel %s: contraction templates are CPU C only", k->name);
    uint32_t nids = 0;
    max_id_ls(k->body, &nids);
    if (k->tmpl) {
        max_id_ls(k->tmpl->epi, &nids);
        max_id_ls(k->tmpl->te_fill, &nids);
        max_id_ls(k->tmpl->te_rest, &nids);
        for (int i = 0; i < k->tmpl->n_args; i++) max_id_lx(k->tmpl->arg[i], &nids);
        ts_lx *te_x[4] = {k->tmpl->te_rows, k->tmpl->te_cols, k->tmpl->te_res_off, k->tmpl->te_res_rs};
        for (int i = 0; i < 4; i++) max_id_lx(te_x[i], &nids);
    }
    em e = {.out = out, .k = k, .nids = nids, .device = d->device, .strided = d->strided};
    e.declared = ts_mem_alloc(sizeof *e.declared * (nids ? nids : 1));
    if (!e.declared) return ts_err_set(err, TS_ERR_OOM, "out of memory emitting C");
    for (uint32_t i = 0; i < nids; i++) e.declared[i] = -1;
    if (k->tmpl) {
        ts_em_template_kernel(&e, k);
    } else {
        d->open_fn(&e, k);
        if (!any_parallel(k->body))
            ts_buf_puts(out, "    if (ith != 0) return;   /* no parallel loop: thread 0 does it all */\n");
        if (k->rowtmp)   /* the row a streamed output is built in (D50) */
            ts_buf_printf(out, "    float rowtmp[%lld] __attribute__((aligned(64)));\n", (long long)k->rowtmp);
        ts_em_stmts(&e, k->body);
        if (k->rowtmp)   /* this thread's streamed stores, visible before the pool's barrier */
            ts_buf_puts(out, "    tsrt_stream_fence();\n");
        ts_buf_puts(out, "}\n");
    }
    ts_mem_free(e.declared);
    ts_mem_free(e.stack);
    if (e.status == TS_ERR_UNSUPPORTED)
        return ts_err_set(err, e.status, "kernel %s: a load through a table of buffers that is not a table", k->name);
    if (e.status != TS_OK) return ts_err_set(err, e.status, "out of memory emitting C");
    return TS_OK;
}

ts_status ts_em_program(ts_buf *out, const char *const *preamble, int n, ts_lkernel *const *kernels,
                        const ts_em_dialect *d, ts_err *err)
{
    for (int i = 0; preamble[i]; i++) TS_TRY(ts_em_paste(out, preamble[i], err));
    for (int i = 0; i < n; i++) TS_TRY(ts_em_kernel(out, kernels[i], d, err));
    if (out->oom) return ts_err_set(err, TS_ERR_OOM, "out of memory emitting a program");
    return TS_OK;
}

ts_status ts_emit_c_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err)
{
    return ts_em_kernel(out, k, &c_dialect, err);
}

/* Paste runtime header `name` (embedded at build time). */
ts_status ts_em_paste(ts_buf *out, const char *name, ts_err *err)
{
    for (int i = 0; i < ts_rt_count; i++)
        if (strcmp(ts_rt_names[i], name) == 0) {
            ts_buf_printf(out, "\n/* ---- %s ---- */\n%s", name, ts_rt_texts[i]);
            return TS_OK;
        }
    return ts_err_set(err, TS_ERR_INTERNAL, "runtime header %s is not embedded", name);
}

int ts_emit_needs(int n, ts_lkernel *const *kernels)
{
    int needs = 0;
    for (int i = 0; i < n; i++) needs |= kernels[i]->needs;
    return needs;
}

/* Hidden: one definition per shared object, invisible to dlsym and to
 * other loaded programs (each has its own copy). */
static const char rt_extern_fn[] = "#define TSRT_FN __attribute__((visibility(\"hidden\")))\n";

/* scalar.h and the runtime templates `needs` asks for, in dependency
 * order; with only_api, just their interface (types and prototypes). */
static ts_status paste_runtime(ts_buf *out, int needs, bool only_api, ts_err *err)
{
    TS_TRY(ts_em_paste(out, "tsrt_int.h", err));
    TS_TRY(ts_em_paste(out, "scalar.h", err));
    if (!needs) return TS_OK;
    TS_TRY(ts_em_paste(out, "tsrt_common.h", err));
    TS_TRY(ts_em_paste(out, "tsrt_gemm_api.h", err));
    if (!only_api) {
        TS_TRY(ts_em_paste(out, "tsrt_ukernel_avx512.h", err)); /* empty but for AVX-512 */
        TS_TRY(ts_em_paste(out, "tsrt_ukernel.h", err));
        TS_TRY(ts_em_paste(out, "tsrt_gemm_amx.h", err)); /* the AMX path (its kernels only where AMX is) */
        TS_TRY(ts_em_paste(out, "tsrt_gemm_pack.h", err));
        TS_TRY(ts_em_paste(out, "tsrt_gemm.h", err));
    }
    if (needs & TS_NEEDS_SORT) {
        TS_TRY(ts_em_paste(out, "tsrt_sort_api.h", err));
        if (!only_api) TS_TRY(ts_em_paste(out, "tsrt_sort.h", err));
    }
    if (needs & TS_NEEDS_CONV) {
        /* each part needs only the ones before it; tsrt_conv.h last */
        static const char *const conv_parts[] = {"tsrt_conv_args.h", "tsrt_conv_pw.h", "tsrt_conv_gemm.h", "tsrt_conv_wg.h",
                                                 "tsrt_conv_dw.h",   "tsrt_conv_grp.h",  "tsrt_conv_pt.h",
                                                 "tsrt_conv_ptp.h",  "tsrt_conv_wgt.h",  "tsrt_conv.h"};
        for (size_t i = 0; i < (only_api ? 1 : sizeof conv_parts / sizeof conv_parts[0]); i++)
            TS_TRY(ts_em_paste(out, conv_parts[i], err));
    }
    return TS_OK;
}

ts_status ts_emit_c_runtime(ts_buf *out, int needs, ts_err *err)
{
    ts_buf_puts(out, "/* generated by tessera: the runtime templates of one program, compiled once for its "
                     "kernel units (docs/compiler.md) */\n");
    ts_buf_puts(out, rt_extern_fn);
    return paste_runtime(out, needs, false, err);
}

ts_status ts_emit_c(ts_buf *out, int n, ts_lkernel *const *kernels, bool rt_extern, ts_err *err)
{
    const int needs = ts_emit_needs(n, kernels);
    ts_buf_puts(out, "/* generated by tessera: the kernels of one program (docs/compiler.md) */\n");
    /* with rt_extern, the templates' definitions are another unit's
     * (ts_emit_c_runtime); else they are static, in this unit */
    if (needs && rt_extern) ts_buf_puts(out, rt_extern_fn);
    TS_TRY(paste_runtime(out, needs, rt_extern, err));
    ts_buf_puts(out, "\n/* ---- kernels ---- */\n");
    for (int i = 0; i < n; i++) TS_TRY(ts_emit_c_kernel(out, kernels[i], err));
    return TS_OK;
}
