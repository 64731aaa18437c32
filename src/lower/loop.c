/* loop.c — building loop IR: hash-consed expressions with index
 * arithmetic folded as it is built, statements, kernels, and the text
 * form of a kernel's loops. */
#include "lower/loop.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { NBUCKET = 4096 };

struct ts_lprog {
    ts_arena *arena;
    ts_lx *buckets[NBUCKET];
    uint32_t next_id;
    ts_status status;
    ts_err err;
};

ts_status ts_lprog_new(ts_lprog **out, ts_err *err)
{
    ts_lprog *p = ts_mem_zalloc(sizeof *p);
    if (!p || !(p->arena = ts_arena_new())) {
        ts_mem_free(p);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    *out = p;
    return TS_OK;
}

void ts_lprog_free(ts_lprog *p)
{
    if (!p) return;
    ts_arena_free(p->arena);
    ts_mem_free(p);
}

ts_arena *ts_lprog_arena(ts_lprog *p) { return p->arena; }
uint32_t ts_lprog_n_exprs(const ts_lprog *p) { return p->next_id; }

void ts_lprog_fail(ts_lprog *p, ts_status s, const char *fmt, ...)
{
    if (p->status != TS_OK) return;
    p->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err.msg, sizeof p->err.msg, fmt, ap);
    va_end(ap);
    p->err.code = s;
}

ts_status ts_lprog_status(const ts_lprog *p, ts_err *err)
{
    if (p->status != TS_OK) return ts_err_set(err, p->status, "%s", p->err.msg);
    return TS_OK;
}

static void *alloc(ts_lprog *p, size_t n)
{
    void *x = ts_arena_alloc(p->arena, n);
    if (!x) ts_lprog_fail(p, TS_ERR_OOM, "out of memory building loops");
    else memset(x, 0, n);
    return x;
}

/* ---- hash-consing ------------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * UINT64_C(0x100000001b3); }

static uint64_t hash_of(const ts_lx *x)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325), bits;
    memcpy(&bits, &x->c, sizeof bits);
    h = mix(h, (uint64_t)x->k);
    h = mix(h, (uint64_t)x->dt);
    h = mix(h, (uint64_t)x->op);
    h = mix(h, (uint64_t)x->var);
    h = mix(h, bits);
    h = mix(h, (uint64_t)x->ci);
    for (int i = 0; i < 3; i++) h = mix(h, x->a[i] ? x->a[i]->id + 1 : 0);
    return mix(mix(h, x->index), x->k == TS_LX_VAR || x->k == TS_LX_ACC ? (uint64_t)x->depth : 0);
}

static bool same(const ts_lx *x, const ts_lx *y)
{
    return x->k == y->k && x->dt == y->dt && x->op == y->op && x->var == y->var &&
           memcmp(&x->c, &y->c, sizeof x->c) == 0 && x->ci == y->ci && x->a[0] == y->a[0] && x->a[1] == y->a[1] &&
           x->a[2] == y->a[2] && x->index == y->index &&
           /* a loop variable's depth is part of it: kernels share the table */
           ((x->k != TS_LX_VAR && x->k != TS_LX_ACC) || x->depth == y->depth);
}

static ts_lx *intern(ts_lprog *p, const ts_lx *proto)
{
    if (p->status != TS_OK) return NULL;
    size_t b = (size_t)(hash_of(proto) % NBUCKET);
    for (ts_lx *x = p->buckets[b]; x; x = x->next_hash)
        if (same(x, proto)) return x;
    ts_lx *x = alloc(p, sizeof *x);
    if (!x) return NULL;
    *x = *proto;
    x->id = p->next_id++;
    for (int i = 0; i < 3; i++)
        if (x->a[i] && x->a[i]->depth > x->depth) x->depth = x->a[i]->depth;
    x->next_hash = p->buckets[b];
    p->buckets[b] = x;
    return x;
}

static bool args_ok(ts_lprog *p, int n, ts_lx *a, ts_lx *b, ts_lx *c)
{
    if (p->status != TS_OK) return false;
    ts_lx *v[3] = {a, b, c};
    for (int i = 0; i < n; i++)
        if (!v[i]) {
            ts_lprog_fail(p, TS_ERR_INTERNAL, "loop IR: missing operand");
            return false;
        }
    return true;
}

ts_lx *ts_lx_const(ts_lprog *p, ts_dtype dt, double v)
{
    ts_lx x = {.k = TS_LX_CONST, .dt = dt, .c = v};
    if (!ts_dtype_is_fp(dt)) x.ci = (int64_t)v;
    return intern(p, &x);
}

ts_lx *ts_lx_int(ts_lprog *p, int64_t v)
{
    ts_lx x = {.k = TS_LX_CONST, .dt = TS_DTYPE_I64, .c = (double)v, .ci = v};
    return intern(p, &x);
}

ts_lx *ts_lx_iconst(ts_lprog *p, ts_dtype dt, int64_t v)
{
    ts_lx x = {.k = TS_LX_CONST, .dt = dt, .c = (double)v, .ci = v};
    return intern(p, &x);
}

ts_lx *ts_lx_var(ts_lprog *p, int var, int depth)
{
    ts_lx x = {.k = TS_LX_VAR, .dt = TS_DTYPE_I64, .var = var, .depth = depth};
    return intern(p, &x);
}

ts_lx *ts_lx_load(ts_lprog *p, ts_dtype dt, int buf, ts_lx *index)
{
    if (!args_ok(p, 1, index, NULL, NULL)) return NULL;
    ts_lx x = {.k = TS_LX_LOAD, .dt = dt, .var = buf, .a = {index}};
    return intern(p, &x);
}

ts_lx *ts_lx_tab(ts_lprog *p, int tab, ts_lx *index)
{
    if (!args_ok(p, 1, index, NULL, NULL)) return NULL;
    ts_lx x = {.k = TS_LX_TAB, .dt = TS_DTYPE_I64, .var = tab, .a = {index}, .index = true};
    return intern(p, &x);
}

ts_lx *ts_lx_loadi(ts_lprog *p, ts_dtype dt, ts_lx *buf, ts_lx *index)
{
    if (!args_ok(p, 2, index, buf, NULL)) return NULL;
    ts_lx x = {.k = TS_LX_LOADI, .dt = dt, .var = -1, .a = {index, buf}};
    return intern(p, &x);
}

ts_lx *ts_lx_rebuild(ts_lprog *p, const ts_lx *x, ts_lx *const *a, int depth)
{
    ts_lx y = *x;
    y.next_hash = NULL;
    y.id = 0;
    y.depth = x->k == TS_LX_VAR || x->k == TS_LX_ACC ? depth : 0;
    for (int i = 0; i < 3; i++) {
        if (x->a[i] && !a[i]) return NULL;
        y.a[i] = x->a[i] ? a[i] : NULL;
    }
    return intern(p, &y);
}

ts_lx *ts_lx_op_hint(ts_lprog *p, ts_op op, ts_dtype dt, ts_lx *a, ts_lx *b, ts_lx *c, int hints)
{
    int n = ts_op_get(op)->min_in;
    if (!args_ok(p, n, a, b, c)) return NULL;
    ts_lx x = {.k = TS_LX_OP, .dt = dt, .op = op, .var = hints, .a = {a, b, c}};
    return intern(p, &x);
}

ts_lx *ts_lx_op(ts_lprog *p, ts_op op, ts_dtype dt, ts_lx *a, ts_lx *b, ts_lx *c)
{
    return ts_lx_op_hint(p, op, dt, a, b, c, 0);
}

ts_lx *ts_lx_cast(ts_lprog *p, ts_lx *a, ts_dtype dt)
{
    if (!args_ok(p, 1, a, NULL, NULL)) return NULL;
    if (a->dt == dt) return a;
    ts_lx x = {.k = TS_LX_CAST, .dt = dt, .a = {a}};
    return intern(p, &x);
}

ts_lx *ts_lx_guard(ts_lprog *p, ts_lx *cond, ts_lx *a, ts_lx *b)
{
    if (!args_ok(p, 3, cond, a, b)) return NULL;
    if (cond->k == TS_LX_CONST) return cond->ci ? a : b;
    if (a == b) return a;
    ts_lx x = {.k = TS_LX_GUARD, .dt = a->dt, .a = {cond, a, b}};
    return intern(p, &x);
}

ts_lx *ts_lx_acc(ts_lprog *p, ts_dtype dt, int acc, int depth)
{
    ts_lx x = {.k = TS_LX_ACC, .dt = dt, .var = acc, .depth = depth};
    return intern(p, &x);
}

ts_lx *ts_lx_param(ts_lprog *p, int k)
{
    ts_lx x = {.k = TS_LX_PARAM, .dt = TS_DTYPE_I64, .var = k};
    return intern(p, &x);
}

bool ts_lx_is_int(const ts_lx *x, int64_t v) { return x && x->k == TS_LX_CONST && x->dt == TS_DTYPE_I64 && x->ci == v; }

static bool both_const(const ts_lx *a, const ts_lx *b)
{
    return a->k == TS_LX_CONST && b->k == TS_LX_CONST && a->dt == TS_DTYPE_I64 && b->dt == TS_DTYPE_I64;
}

/* Index arithmetic: folded when both are constants, identities dropped,
 * operands of commutative ops ordered by id so that a+b and b+a meet. */
static ts_lx *iop(ts_lprog *p, ts_op op, ts_lx *a, ts_lx *b)
{
    if (!args_ok(p, 2, a, b, NULL)) return NULL;
    if (both_const(a, b)) {
        uint64_t x = (uint64_t)a->ci, y = (uint64_t)b->ci;
        switch (op) {
        case TS_OP_ADD: return ts_lx_int(p, (int64_t)(x + y));
        case TS_OP_SUB: return ts_lx_int(p, (int64_t)(x - y));
        case TS_OP_MUL: return ts_lx_int(p, (int64_t)(x * y));
        default: break;
        }
    }
    if (op == TS_OP_ADD || op == TS_OP_MUL) {
        if (a->id > b->id) {
            ts_lx *t = a;
            a = b;
            b = t;
        }
        if (op == TS_OP_ADD && ts_lx_is_int(a, 0)) return b;
        if (op == TS_OP_ADD && ts_lx_is_int(b, 0)) return a;
        if (op == TS_OP_MUL && (ts_lx_is_int(a, 0) || ts_lx_is_int(b, 0))) return ts_lx_int(p, 0);
        if (op == TS_OP_MUL && ts_lx_is_int(a, 1)) return b;
        if (op == TS_OP_MUL && ts_lx_is_int(b, 1)) return a;
    }
    if (op == TS_OP_SUB && ts_lx_is_int(b, 0)) return a;
    ts_lx x = {.k = TS_LX_OP, .dt = TS_DTYPE_I64, .op = op, .a = {a, b}, .index = true};
    return intern(p, &x);
}

ts_lx *ts_lx_add(ts_lprog *p, ts_lx *a, ts_lx *b) { return iop(p, TS_OP_ADD, a, b); }
ts_lx *ts_lx_mul(ts_lprog *p, ts_lx *a, ts_lx *b) { return iop(p, TS_OP_MUL, a, b); }
ts_lx *ts_lx_sub(ts_lprog *p, ts_lx *a, ts_lx *b) { return iop(p, TS_OP_SUB, a, b); }

static ts_lx *divmod(ts_lprog *p, ts_lxk k, ts_lx *a, ts_lx *b)
{
    if (!args_ok(p, 2, a, b, NULL)) return NULL;
    if (ts_lx_is_int(b, 1)) return k == TS_LX_IDIV ? a : ts_lx_int(p, 0);
    if (both_const(a, b) && b->ci > 0) return ts_lx_int(p, k == TS_LX_IDIV ? a->ci / b->ci : a->ci % b->ci);
    ts_lx x = {.k = k, .dt = TS_DTYPE_I64, .a = {a, b}};
    return intern(p, &x);
}

ts_lx *ts_lx_idiv(ts_lprog *p, ts_lx *a, ts_lx *b) { return divmod(p, TS_LX_IDIV, a, b); }
ts_lx *ts_lx_imod(ts_lprog *p, ts_lx *a, ts_lx *b) { return divmod(p, TS_LX_IMOD, a, b); }

ts_lx *ts_lx_lt(ts_lprog *p, ts_lx *a, ts_lx *b)
{
    if (!args_ok(p, 2, a, b, NULL)) return NULL;
    if (both_const(a, b)) return ts_lx_const(p, TS_DTYPE_BOOL, a->ci < b->ci);
    return ts_lx_op(p, TS_OP_LT, TS_DTYPE_BOOL, a, b, NULL);
}

ts_lx *ts_lx_and(ts_lprog *p, ts_lx *a, ts_lx *b)
{
    if (!args_ok(p, 2, a, b, NULL)) return NULL;
    if (a->k == TS_LX_CONST) return a->ci ? b : a;
    if (b->k == TS_LX_CONST) return b->ci ? a : b;
    return ts_lx_op(p, TS_OP_AND, TS_DTYPE_BOOL, a, b, NULL);
}

/* ---- statements and kernels ------------------------------------------------------------ */

ts_ls *ts_ls_new(ts_lprog *p, ts_lsk k)
{
    ts_ls *s = alloc(p, sizeof *s);
    if (s) s->k = k;
    return s;
}

ts_lkernel *ts_lkernel_new(ts_lprog *p, const char *what)
{
    ts_lkernel *k = alloc(p, sizeof *k);
    if (!k) return NULL;
    k->what = ts_arena_strdup(p->arena, what ? what : "");
    return k;
}

/* Small arrays that grow by doubling inside the arena (old copies are
 * left for the arena to free). */
static void *grow(ts_lprog *p, void *old, int n, size_t elem)
{
    if (n & (n - 1) && n > 4) return old;   /* room left: capacity is the next power of two >= 4 */
    int cap = n < 4 ? 4 : n * 2;
    void *x = ts_arena_array(p->arena, (size_t)cap, elem);
    if (!x) {
        ts_lprog_fail(p, TS_ERR_OOM, "out of memory building loops");
        return NULL;
    }
    if (old && n) memcpy(x, old, (size_t)n * elem);
    return x;
}

ts_lx *ts_lkernel_dim(ts_lprog *p, ts_lkernel *k, ts_dim d)
{
    if (ts_dim_is_const(d)) return ts_lx_int(p, d.c);
    for (int i = 0; i < k->n_dims; i++)
        if (ts_dim_eq(k->dims[i], d)) {
            ts_lx x = {.k = TS_LX_DIM, .dt = TS_DTYPE_I64, .var = i};
            return intern(p, &x);
        }
    ts_dim *dims = grow(p, k->dims, k->n_dims, sizeof *dims);
    if (!dims) return NULL;
    k->dims = dims;
    k->dims[k->n_dims] = d;
    ts_lx x = {.k = TS_LX_DIM, .dt = TS_DTYPE_I64, .var = k->n_dims++};
    return intern(p, &x);
}

int ts_lkernel_buf(ts_lprog *p, ts_lkernel *k, const ts_value *v, bool written)
{
    for (int i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].v == v) {
            k->bufs[i].written |= written;
            return i;
        }
    ts_lbuf *b = grow(p, k->bufs, k->n_bufs, sizeof *b);
    if (!b) return 0;
    k->bufs = b;
    k->bufs[k->n_bufs] = (ts_lbuf){.v = v, .dt = v->type.dtype, .written = written};
    return k->n_bufs++;
}

int ts_lkernel_tab(ts_lprog *p, ts_lkernel *k, const int64_t *v, int n)
{
    for (int i = 0; i < k->n_tabs; i++)
        if (k->tabs[i].n == n && !memcmp(k->tabs[i].v, v, sizeof *v * (size_t)n)) return i;
    ts_ltab *t = grow(p, k->tabs, k->n_tabs, sizeof *t);
    int64_t *copy = ts_arena_array(p->arena, (size_t)n, sizeof *copy);
    if (!t || !copy) {
        ts_lprog_fail(p, TS_ERR_OOM, "out of memory building loops");
        return -1;
    }
    memcpy(copy, v, sizeof *v * (size_t)n);
    k->tabs = t;
    k->tabs[k->n_tabs] = (ts_ltab){.n = n, .v = copy};
    return k->n_tabs++;
}

void ts_lkernel_check(ts_lprog *p, ts_lkernel *k, int buf, ts_lx *bound, const ts_node *node)
{
    for (int i = 0; i < k->n_checks; i++)
        if (k->checks[i].buf == buf && k->checks[i].bound == bound) return;
    ts_lcheck *c = grow(p, k->checks, k->n_checks, sizeof *c);
    if (!c) return;
    k->checks = c;
    k->checks[k->n_checks++] = (ts_lcheck){.buf = buf, .bound = bound, .node = node};
}

/* ---- text ---------------------------------------------------------------------------------- */

static void put_lx(ts_buf *b, const ts_lx *x)
{
    switch (x->k) {
    case TS_LX_CONST:
        if (ts_dtype_is_fp(x->dt)) ts_buf_printf(b, "%.9g", x->c);
        else ts_buf_printf(b, "%lld", (long long)x->ci);
        return;
    case TS_LX_VAR: ts_buf_printf(b, "i%d", x->var); return;
    case TS_LX_DIM: ts_buf_printf(b, "D%d", x->var); return;
    case TS_LX_PARAM: ts_buf_printf(b, "P%d", x->var); return;
    case TS_LX_ACC: ts_buf_printf(b, "acc%d", x->var); return;
    case TS_LX_LOAD:
        if (x->var == TS_LBUF_BLOCK) ts_buf_puts(b, "block[");
        else if (x->var == TS_LBUF_ROWTMP) ts_buf_puts(b, "rowtmp[");
        else ts_buf_printf(b, "b%d[", x->var);
        put_lx(b, x->a[0]);
        ts_buf_puts(b, "]");
        return;
    case TS_LX_TAB:
        ts_buf_printf(b, "tab%d[", x->var);
        put_lx(b, x->a[0]);
        ts_buf_puts(b, "]");
        return;
    case TS_LX_LOADI:
        ts_buf_puts(b, "bufs[");
        put_lx(b, x->a[1]);
        ts_buf_puts(b, "][");
        put_lx(b, x->a[0]);
        ts_buf_puts(b, "]");
        return;
    case TS_LX_CAST:
        ts_buf_printf(b, "%s(", ts_dtype_name(x->dt));
        put_lx(b, x->a[0]);
        ts_buf_puts(b, ")");
        return;
    case TS_LX_IDIV: case TS_LX_IMOD:
        ts_buf_puts(b, "(");
        put_lx(b, x->a[0]);
        ts_buf_puts(b, x->k == TS_LX_IDIV ? " / " : " % ");
        put_lx(b, x->a[1]);
        ts_buf_puts(b, ")");
        return;
    case TS_LX_GUARD:
        ts_buf_puts(b, "(");
        put_lx(b, x->a[0]);
        ts_buf_puts(b, " ? ");
        put_lx(b, x->a[1]);
        ts_buf_puts(b, " : ");
        put_lx(b, x->a[2]);
        ts_buf_puts(b, ")");
        return;
    case TS_LX_OP:
        ts_buf_printf(b, "%s%s(", ts_op_get(x->op)->name, x->var & TS_LXH_ARG_NONPOS ? "[a0<=0]" : "");
        for (int i = 0; i < 3 && x->a[i]; i++) {
            if (i) ts_buf_puts(b, ", ");
            put_lx(b, x->a[i]);
        }
        ts_buf_puts(b, ")");
        return;
    }
}

static void put_ls(ts_buf *b, const ts_ls *s, int indent)
{
    for (; s; s = s->next) {
        ts_buf_printf(b, "%*s", indent * 2, "");
        switch (s->k) {
        case TS_LS_FOR:
            ts_buf_printf(b, "for i%d in [0, ", s->var);
            put_lx(b, s->extent);
            ts_buf_printf(b, ")%s%s\n", s->flags & TS_LOOP_PARALLEL ? " parallel" : "",
                          s->flags & TS_LOOP_VECTOR ? " vector" : "");
            put_ls(b, s->body, indent + 1);
            break;
        case TS_LS_STORE:
            if (s->buf == TS_LBUF_BLOCK) ts_buf_puts(b, "block[");
            else if (s->buf == TS_LBUF_ROWTMP) ts_buf_puts(b, "rowtmp[");
            else if (s->buf == TS_LBUF_TEROW || s->buf == TS_LBUF_TECOL)
                ts_buf_printf(b, "te_%s[", s->buf == TS_LBUF_TEROW ? "row" : "col");
            else ts_buf_printf(b, "b%d[", s->buf);
            put_lx(b, s->index);
            ts_buf_puts(b, "] = ");
            put_lx(b, s->value);
            ts_buf_puts(b, "\n");
            break;
        case TS_LS_ACC:
            ts_buf_printf(b, "acc%d: %s = ", s->var, ts_dtype_name(s->dt));
            put_lx(b, s->value);
            ts_buf_puts(b, "\n");
            break;
        case TS_LS_UPDATE:
            ts_buf_printf(b, "acc%d = %s(acc%d, ", s->var, ts_op_get(s->op)->name, s->var);
            put_lx(b, s->value);
            ts_buf_puts(b, ")\n");
            break;
        case TS_LS_PREFETCH:
            ts_buf_printf(b, "prefetch b%d[", s->buf);
            put_lx(b, s->index);
            ts_buf_puts(b, "]\n");
            break;
        case TS_LS_STREAM:
            ts_buf_printf(b, "stream b%d[", s->buf);
            put_lx(b, s->index);
            ts_buf_puts(b, " ..+ ");
            put_lx(b, s->extent);
            ts_buf_puts(b, "] = rowtmp\n");
            break;
        }
    }
}

void ts_lkernel_print(ts_buf *b, const ts_lkernel *k)
{
    ts_buf_printf(b, "kernel %s (%s):", k->name, k->what);
    for (int i = 0; i < k->n_bufs; i++) {
        ts_buf_printf(b, " b%d=%%%s", i, k->bufs[i].v->name ? k->bufs[i].v->name : "?");
        if (k->bufs[i].off) ts_buf_printf(b, "+%lld", (long long)k->bufs[i].off);   /* bound there (D189) */
        ts_buf_puts(b, k->bufs[i].written ? "(out)" : "");
    }
    ts_buf_puts(b, "\n");
    for (int i = 0; i < k->n_tabs; i++) {
        ts_buf_printf(b, "  tab%d = [", i);
        for (int j = 0; j < k->tabs[i].n; j++) ts_buf_printf(b, "%s%lld", j ? ", " : "", (long long)k->tabs[i].v[j]);
        ts_buf_puts(b, "]\n");
    }
    for (int i = 0; i < k->n_checks; i++) {
        ts_buf_printf(b, "  check %s: b%d in [0, ", ts_op_get(k->checks[i].node->op)->name, k->checks[i].buf);
        put_lx(b, k->checks[i].bound);
        ts_buf_puts(b, ")\n");
    }
    if (k->tmpl) {
        static const char *const names[3][TS_TMPL_MAX_ARGS] = {
            {"m", "n", "k", "a_rs", "a_cs", "b_rs", "b_cs", "c_rs", "batch", "a_bs", "b_bs", "c_bs"},
            {"n", "c", "h", "w", "o", "kh", "kw", "oh", "ow", "groups", "sh", "sw", "ph", "pw", "dh", "dw", "lh", "lw", "y_bs"},
            {"outer", "len", "inner", "descending"}};
        static const char *const fns[3] = {"tsrt_sgemm", "tsrt_conv", "tsrt_sort"};
        if (k->tmpl->kind == TS_TMPL_SORT)
            ts_buf_printf(b, "  %s(b%d -> b%d, b%d", fns[k->tmpl->kind], k->tmpl->a, k->tmpl->b, k->tmpl->c);
        else
            ts_buf_printf(b, "  %s(b%d, b%d -> b%d", fns[k->tmpl->kind], k->tmpl->a, k->tmpl->b, k->tmpl->c);
        for (int i = 0; i < k->tmpl->n_args; i++) {
            ts_buf_printf(b, ", %s=", names[k->tmpl->kind][i] ? names[k->tmpl->kind][i] : "?");
            put_lx(b, k->tmpl->arg[i]);
        }
        ts_buf_puts(b, ")\n");
        if (k->tmpl->epi) {
            ts_buf_puts(b, "  epilogue on each block (P0..P5 = m0 n0 mb nb rs cs):\n");
            put_ls(b, k->tmpl->epi, 2);
        }
        const ts_ltmpl *t = k->tmpl;
        if (t->te) {   /* the same as data, on element (r, q) of each tile (D32) */
            ts_buf_puts(b, "  tile epilogue on (r, q): block");
            if (t->te_rows) ts_buf_puts(b, " + te_row[r]");
            if (t->te_cols) ts_buf_puts(b, " + te_col[q]");
            if (t->te_res >= 0) {
                ts_buf_printf(b, " + b%d[", t->te_res);
                put_lx(b, t->te_res_off);
                ts_buf_puts(b, " + r * ");
                put_lx(b, t->te_res_rs);
                ts_buf_puts(b, " + q]");
            }
            if (t->te_clamp & 1) ts_buf_printf(b, ", max %g%s", (double)t->te_lo, t->te_clamp & 4 ? " (+0)" : "");
            if (t->te_clamp & 2) ts_buf_printf(b, ", min %g", (double)t->te_hi);
            ts_buf_puts(b, "\n");
            put_ls(b, t->te_fill, 2);
            if (t->te_rest) {   /* D138 */
                ts_buf_puts(b, "  then on each block, dense as one row:\n");
                put_ls(b, t->te_rest, 2);
            }
        }
    }
    put_ls(b, k->body, 1);
}
