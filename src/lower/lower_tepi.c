/* lower_tepi.c — a contraction's epilogue as data (D32).
 *
 * Most epilogues are a bias, maybe a residual, maybe a ReLU or a clip.
 * The runtime applies those to each finished tile while it is still in
 * registers (tsrt_tepi) instead of storing the tile and calling the
 * epilogue function to read it back. This file recognises the form in the
 * epilogue's loop IR, after lowering, so it sees exactly what the callback
 * computes (a folded batch norm's shift included):
 *
 *   block[i*P4 + j] = min(max(((block + ROW) + COL) + RES, lo), hi)
 *
 * where ROW depends on the block's row only (P0 + i), COL on its column
 * only (P1 + j), RES is a load whose index is linear in the row and unit
 * in the column, and each part may be absent (adds in this order only:
 * floating-point addition does not reassociate). ROW and COL are
 * arbitrary expressions: they are tabulated, once per launch, by loops
 * built here (te_fill), so any per-channel chain of constants folds into
 * one table. */
#include "lower/lower_int.h"

#include <math.h>

/* Nodes visited per walk: the trees are small; a shared subtree seen
 * through many paths gives up rather than taking long. */
enum { BUDGET = 4096, T_ROW = 0, T_COL, T_RES };

/* Whether x uses loop variable `var` (< 0: none) or block parameter
 * `param` (< 0: none), or the block itself. */
static bool uses(const ts_lx *x, int var, int param, int *budget)
{
    if (!x || --*budget < 0) return true;
    if (x->k == TS_LX_VAR) return x->var == var;
    if (x->k == TS_LX_PARAM) return x->var == param;
    if (x->k == TS_LX_LOAD && x->var == TS_LBUF_BLOCK) return true;
    for (int i = 0; i < 3; i++)
        if (x->a[i] && uses(x->a[i], var, param, budget)) return true;
    return false;
}

/* Whether x uses any block parameter other than P0 and P1. */
static bool uses_other_params(const ts_lx *x, int *budget)
{
    if (!x || --*budget < 0) return true;
    if (x->k == TS_LX_PARAM) return x->var > 1;
    for (int i = 0; i < 3; i++)
        if (x->a[i] && uses_other_params(x->a[i], budget)) return true;
    return false;
}

/* x with loop variables vi, vj and parameters P0, P1 replaced by the
 * given expressions (NULL: left as they are); rebuilt through the
 * hash-consing constructors, so index arithmetic folds again. */
typedef struct subst {
    ts_lprog *p;
    int vi, vj;
    ts_lx *i, *j, *p0, *p1;
    int budget;
    const ts_lx *from; /* and this node by `to` (NULL: none) */
    ts_lx *to;
} subst;

static ts_lx *rebuild(subst *s, ts_lx *x)
{
    if (!x || --s->budget < 0) return NULL;
    if (s->from && x == s->from) return s->to;
    if (x->k == TS_LX_VAR && x->var == s->vi && s->i) return s->i;
    if (x->k == TS_LX_VAR && x->var == s->vj && s->j) return s->j;
    if (x->k == TS_LX_PARAM && x->var == 0 && s->p0) return s->p0;
    if (x->k == TS_LX_PARAM && x->var == 1 && s->p1) return s->p1;
    ts_lx *a[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        if (x->a[k] && !(a[k] = rebuild(s, x->a[k]))) return NULL;
    switch (x->k) {
    case TS_LX_LOAD: return ts_lx_load(s->p, x->dt, x->var, a[0]);
    case TS_LX_CAST: return ts_lx_cast(s->p, a[0], x->dt);
    case TS_LX_GUARD: return ts_lx_guard(s->p, a[0], a[1], a[2]);
    case TS_LX_IDIV: return ts_lx_idiv(s->p, a[0], a[1]);
    case TS_LX_IMOD: return ts_lx_imod(s->p, a[0], a[1]);
    case TS_LX_OP:
        if (!x->index) return ts_lx_op_hint(s->p, x->op, x->dt, a[0], a[1], a[2], x->var);
        return x->op == TS_OP_ADD ? ts_lx_add(s->p, a[0], a[1])
             : x->op == TS_OP_SUB ? ts_lx_sub(s->p, a[0], a[1])
                                  : ts_lx_mul(s->p, a[0], a[1]);
    default: return x;   /* constants, dims, other variables */
    }
}

static ts_lx *at(lctx *c, ts_lx *x, const int v[2], ts_lx *i, ts_lx *j, ts_lx *p0, ts_lx *p1)
{
    subst s = {c->p, v[0], v[1], i, j, p0, p1, BUDGET, NULL, NULL};
    return rebuild(&s, x);
}

/* Whether index x is a sum of products in which the row (vi, P0) and
 * column (vj, P1) variables appear only linearly. */
static bool linear(const ts_lx *x, const int v[2], int *budget)
{
    if (!uses(x, v[0], 0, budget) && !uses(x, v[1], 1, budget)) return true;
    if (x->k == TS_LX_VAR || x->k == TS_LX_PARAM) return true;
    if (x->k != TS_LX_OP || !x->index) return false;
    if (x->op == TS_OP_ADD || x->op == TS_OP_SUB) return linear(x->a[0], v, budget) && linear(x->a[1], v, budget);
    if (x->op != TS_OP_MUL) return false;
    for (int k = 0; k < 2; k++)
        if (!uses(x->a[k], v[0], 0, budget) && !uses(x->a[k], v[1], 1, budget)) return linear(x->a[1 - k], v, budget);
    return false;
}

/* The residual term x = buf[index]: its offset and row stride, when the
 * index is linear, moves by 1 per column and by the same stride per row
 * whether the row comes from i or from P0 (as P0 + i always does). */
static bool residual(lctx *c, ts_ltmpl *t, const ts_lx *x, const int v[2])
{
    int budget = BUDGET;
    if (x->k != TS_LX_LOAD || x->var < 0 || x->var == t->c || x->dt != TS_DTYPE_F32) return false;
    if (!linear(x->a[0], v, &budget) || budget < 0) return false;
    ts_lx *z = ts_lx_int(c->p, 0), *one = ts_lx_int(c->p, 1);
    ts_lx *off = at(c, x->a[0], v, z, z, z, z);
    ts_lx *ri = ts_lx_sub(c->p, at(c, x->a[0], v, one, z, z, z), off);
    ts_lx *rp = ts_lx_sub(c->p, at(c, x->a[0], v, z, z, one, z), off);
    ts_lx *cj = ts_lx_sub(c->p, at(c, x->a[0], v, z, one, z, z), off);
    ts_lx *cp = ts_lx_sub(c->p, at(c, x->a[0], v, z, z, z, one), off);
    if (!off || !ri || ri != rp || !ts_lx_is_int(cj, 1) || !ts_lx_is_int(cp, 1)) return false;
    t->te_res = x->var;
    t->te_res_off = off;
    t->te_res_rs = ri;
    return true;
}

/* A loop over [0, n) storing term x (rows: i and P0 -> the loop
 * variable; columns: j and P1) into table buf, appended to te_fill. */
static ts_ls *fill(lctx *c, ts_lx *x, const int v[2], bool rows, ts_lx *n, int buf)
{
    ts_ls *f = ts_ls_new(c->p, TS_LS_FOR), *s = ts_ls_new(c->p, TS_LS_STORE);
    if (!f || !s) return NULL;
    f->var = c->k->n_vars++;
    f->depth = 1;
    f->extent = n;
    ts_lx *r = ts_lx_var(c->p, f->var, 1), *z = ts_lx_int(c->p, 0);
    s->buf = buf;
    s->index = r;
    s->value = rows ? at(c, x, v, z, NULL, r, NULL) : at(c, x, v, NULL, z, NULL, r);
    if (!s->value) return NULL;
    f->body = s;
    return f;
}

/* x = max/min(y, constant) with a constant that is not NaN: y, and the
 * constant in *cv; NULL otherwise. */
static const ts_lx *clamp_of(const ts_lx *x, ts_op op, double *cv)
{
    if (x->k != TS_LX_OP || x->op != op || x->dt != TS_DTYPE_F32) return NULL;
    for (int k = 0; k < 2; k++)
        if (x->a[k]->k == TS_LX_CONST && !isnan(x->a[k]->c)) {
            *cv = x->a[k]->c;
            return x->a[1 - k];
        }
    return NULL;
}

/* The adds of x, outermost first, down to the block's element at index
 * idx: row, column and residual terms, applied inner first. Sets the
 * descriptor's tables and residual in t; false when x is not of that form. */
static bool te_terms(lctx *c, ts_ltmpl *t, const ts_lx *x, const ts_lx *idx, const int v[2])
{
    const ts_lx *term[3];
    int kind[3], n = 0;
    while (!(x->k == TS_LX_LOAD && x->var == TS_LBUF_BLOCK)) {
        if (x->k != TS_LX_OP || x->op != TS_OP_ADD || x->dt != TS_DTYPE_F32 || n == 3) return false;
        int budget = BUDGET;
        const int carrier = uses(x->a[0], -1, -1, &budget) ? 0 : 1;
        budget = BUDGET;
        if (uses(x->a[1 - carrier], -1, -1, &budget) || budget < 0) return false;   /* the block on both sides */
        term[n++] = x->a[1 - carrier];
        x = x->a[carrier];
    }
    if (x->a[0] != idx) return false;   /* the block's own element */
    for (int q = 0; q < n; q++) {
        int b1 = BUDGET, b2 = BUDGET, b3 = BUDGET;
        if (uses_other_params(term[q], &b3)) return false;
        const bool col_dep = uses(term[q], v[1], 1, &b1), row_dep = uses(term[q], v[0], 0, &b2);
        if (b1 < 0 || b2 < 0) return false;
        kind[q] = !col_dep ? T_ROW : !row_dep ? T_COL : T_RES;
        /* a table entry stands for P0 + i (P1 + j) as a whole: the term
         * must not tell the two apart */
        ts_lx *r = ts_lx_var(c->p, c->k->n_vars, 1), *z = ts_lx_int(c->p, 0);
        if (kind[q] == T_ROW && at(c, (ts_lx *)term[q], v, z, NULL, r, NULL) != at(c, (ts_lx *)term[q], v, r, NULL, z, NULL))
            return false;
        if (kind[q] == T_COL && at(c, (ts_lx *)term[q], v, NULL, z, NULL, r) != at(c, (ts_lx *)term[q], v, NULL, r, NULL, z))
            return false;
        if (q && kind[q] >= kind[q - 1]) return false;   /* applied inner first: row, col, res */
    }
    /* the table lengths: the epilogue's rows and columns */
    ts_lx *rows, *cols;
    if (t->kind == TS_TMPL_GEMM) {
        rows = ts_lx_is_int(t->arg[8], 0) ? t->arg[0] : ts_lx_mul(c->p, t->arg[0], t->arg[8]);
        cols = t->arg[1];
    } else {
        rows = ts_lx_mul(c->p, t->arg[0], t->arg[4]);
        cols = ts_lx_mul(c->p, t->arg[7], t->arg[8]);
    }
    ts_ls *fills = NULL, **tail = &fills;
    t->te_rows = t->te_cols = NULL;
    t->te_res = -1;
    for (int q = n - 1; q >= 0; q--) {
        if (kind[q] == T_RES) {
            if (!residual(c, t, term[q], v)) return false;
            continue;
        }
        const bool r = kind[q] == T_ROW;
        ts_ls *f = fill(c, (ts_lx *)term[q], v, r, r ? rows : cols, r ? TS_LBUF_TEROW : TS_LBUF_TECOL);
        if (!f) return false;
        *tail = f, tail = &f->next;
        if (r) t->te_rows = rows;
        else t->te_cols = cols;
    }
    t->te_fill = fills;
    return true;
}

/* Whether x is a sum of the block's element at idx and terms that do not
 * read the block (one add at least). */
static bool block_sum(const ts_lx *x, const ts_lx *idx)
{
    int n = 0;
    for (; x->k == TS_LX_OP && x->op == TS_OP_ADD && x->dt == TS_DTYPE_F32; n++) {
        int b0 = BUDGET, b1 = BUDGET;
        const bool u0 = uses(x->a[0], -1, -1, &b0), u1 = uses(x->a[1], -1, -1, &b1);
        if (u0 == u1 || b0 < 0 || b1 < 0) return false;
        x = x->a[u0 ? 0 : 1];
    }
    return n > 0 && x->k == TS_LX_LOAD && x->var == TS_LBUF_BLOCK && x->a[0] == idx;
}

/* The one sum of the block's element and terms (block_sum) through which
 * x reads the block, in *sum; false when x reads the block otherwise or
 * through two different sums. Trees are hash-consed: SiLU's two reads of
 * bias + block are one node. */
static bool find_sum(const ts_lx *x, const ts_lx *idx, const ts_lx **sum, int *budget)
{
    if (!x || --*budget < 0) return false;
    int b = BUDGET;
    if (!uses(x, -1, -1, &b)) return b >= 0;
    if (block_sum(x, idx)) {
        if (*sum && *sum != x) return false;
        *sum = x;
        return true;
    }
    if (x->k == TS_LX_LOAD) return false;   /* the block itself, or a load indexed by it */
    for (int i = 0; i < 3; i++)
        if (x->a[i] && !find_sum(x->a[i], idx, sum, budget)) return false;
    return true;
}

/* x with node `from` replaced by `to` (hash-consing constructors). */
static ts_lx *replace(lctx *c, ts_lx *x, const ts_lx *from, ts_lx *to)
{
    subst s = {c->p, -1, -1, NULL, NULL, NULL, NULL, BUDGET, from, to};
    return rebuild(&s, x);
}

/* Whether x depends on nothing of the block's coordinates but through
 * `elem` (the block's element): no loop variable, no block parameter. */
static bool of_element(const ts_lx *x, const ts_lx *elem, int *budget)
{
    if (!x || --*budget < 0) return false;
    if (x == elem) return true;
    if (x->k == TS_LX_VAR || x->k == TS_LX_PARAM || x->k == TS_LX_ACC) return false;
    if (x->k == TS_LX_LOAD && x->var == TS_LBUF_BLOCK) return false;
    for (int i = 0; i < 3; i++)
        if (x->a[i] && !of_element(x->a[i], elem, budget)) return false;
    return true;
}

/* The epilogue split (D138): its terms as the descriptor, when every read
 * of the block goes through one sum of them with the block, and what
 * follows (a SiLU, a GELU) is a function of that sum alone, which
 * te_rest computes from the block after the runtime has added them. */
static bool te_split(lctx *c, ts_ltmpl *t, const ts_ls *li, const ts_ls *lj, const ts_ls *st, const int v[2])
{
    const ts_lx *sum = NULL;
    int budget = BUDGET;
    if (!find_sum(st->value, st->index, &sum, &budget) || !sum || sum == st->value) return false;
    ts_lx *elem = ts_lx_load(c->p, TS_DTYPE_F32, TS_LBUF_BLOCK, st->index);
    ts_lx *rest = elem ? replace(c, st->value, sum, elem) : NULL;
    budget = BUDGET;
    if (!rest || !of_element(rest, elem, &budget)) return false;
    if (!te_terms(c, t, sum, st->index, v)) return false;
    ts_ls *fi = ts_ls_new(c->p, TS_LS_FOR), *fj = ts_ls_new(c->p, TS_LS_FOR), *s = ts_ls_new(c->p, TS_LS_STORE);
    if (!fi || !fj || !s) return false;
    *fi = *li, *fj = *lj, *s = *st;
    fi->body = fj, fj->body = s, s->value = rest;
    fi->next = fj->next = s->next = NULL;
    t->te_rest = fi;
    t->te_clamp = 0;
    return true;
}

void ts_lw_tile_epilogue(lctx *c)
{
    ts_ltmpl *t = c->k->tmpl;
    t->te = false;
    t->te_res = -1;
    t->te_rest = NULL;
    const ts_ls *li = t->epi, *lj = li ? li->body : NULL, *st = lj ? lj->body : NULL;
    if (!st || li->k != TS_LS_FOR || li->next || lj->k != TS_LS_FOR || lj->next || st->k != TS_LS_STORE || st->next ||
        st->buf != TS_LBUF_BLOCK || st->value->dt != TS_DTYPE_F32)
        return;
    const int v[2] = {li->var, lj->var};
    const ts_lx *x = st->value, *in;
    double cv;
    int clamp = 0;
    float lo = 0, hi = 0;
    if ((in = clamp_of(x, TS_OP_MIN, &cv))) {
        if (cv == 0 && signbit(cv)) return;   /* min(x, -0): the general rule (tsrt_common.h) */
        clamp |= 2, hi = (float)cv, x = in;
    }
    if ((in = clamp_of(x, TS_OP_MAX, &cv))) {
        clamp |= 1 | (cv == 0 && !signbit(cv) ? 4 : 0), lo = (float)cv, x = in;
    }
    if (te_terms(c, t, x, st->index, v)) {
        t->te_clamp = clamp;
        t->te_lo = lo;
        t->te_hi = hi;
        t->te = true;
        return;
    }
    t->te_res = -1;
    t->te_fill = NULL;
    t->te_rows = t->te_cols = NULL;
    if (te_split(c, t, li, lj, st, v)) {
        t->te_lo = t->te_hi = 0;
        t->te = true;
        return;
    }
    t->te_res = -1;
    t->te_fill = NULL;
    t->te_rows = t->te_cols = NULL;
    t->te_rest = NULL;
}
