/* split.c — a vector loop whose variable the index arithmetic divides by
 * a constant runs over the quotient, its body once per remainder
 * (lower_int.h, D143).
 *
 * Interleaving k phases along the last axis (a transposed conv's output
 * phases, D127), a pixel shuffle or a nearest upsampling by an integer
 * factor read element i of the row at (i / k, i % k): every element
 * divided, and the loads, a different phase buffer or plane per element,
 * were gathers. With i = k*q + j the vector loop runs over q and its body
 * is the statements k times, j a constant in each: i / k is q, i % k is j,
 * so each copy loads along q with unit stride, the phase selects fold
 * away, and the k stores interleave (the C compiler's store groups).
 * Where k is large and the quotient takes few values (a row of two
 * 128-float halves from two buffers: a bidirectional LSTM's outputs,
 * D185), the roles swap: the vector loop runs over the remainder and the
 * body is copied once per quotient, a constant in each. */
#include "lower/lower_int.h"

#include "core/core.h"

#include <string.h>

enum {
    SPLIT_MAX_K = 8,       /* remainders a body is copied for */
    SPLIT_MIN_Q = 8,       /* quotient steps left for the vector loop */
    SPLIT_SCAN = 1 << 12   /* nodes visited looking for a division */
};

/* The constant k of a division or remainder of loop variable v in x
 * (0: none; -1: two different ones). */
static int64_t divisor(const ts_lx *x, int v, int *budget)
{
    if (!x || --*budget < 0) return 0;
    if ((x->k == TS_LX_IDIV || x->k == TS_LX_IMOD) && x->a[0]->k == TS_LX_VAR && x->a[0]->var == v &&
        x->a[1]->k == TS_LX_CONST)
        return x->a[1]->ci;
    int64_t k = 0;
    for (int i = 0; i < 3; i++) {
        const int64_t d = x->a[i] ? divisor(x->a[i], v, budget) : 0;
        if (d < 0 || (d && k && d != k)) return -1;
        if (d) k = d;
    }
    return k;
}

typedef struct split {
    ts_lprog *p;
    int v;            /* the loop variable */
    int64_t k;        /* the divisor */
    ts_lx *q, *i;     /* the new loop variable; what v is in this copy */
    ts_lx *dv, *md;   /* what v / k and v % k are in this copy */
    ts_lx **memo;     /* by node id, for this copy */
    uint32_t n;
} split;

/* x with v = k*q + j, rebuilt through the folding constructors. */
static ts_lx *subst(split *s, ts_lx *x)
{
    if (!x) return NULL;
    if (x->id < s->n && s->memo[x->id]) return s->memo[x->id];
    ts_lx *r;
    if (x->k == TS_LX_VAR && x->var == s->v) {
        r = s->i;
    } else if ((x->k == TS_LX_IDIV || x->k == TS_LX_IMOD) && x->a[0]->k == TS_LX_VAR && x->a[0]->var == s->v &&
               x->a[1]->k == TS_LX_CONST && x->a[1]->ci == s->k) {
        r = x->k == TS_LX_IDIV ? s->dv : s->md;
    } else {
        ts_lx *a[3] = {NULL, NULL, NULL};
        for (int i = 0; i < 3; i++)
            if (x->a[i] && !(a[i] = subst(s, x->a[i]))) return NULL;
        switch (x->k) {
        case TS_LX_LOAD: r = ts_lx_load(s->p, x->dt, x->var, a[0]); break;
        case TS_LX_LOADI: r = ts_lx_loadi(s->p, x->dt, a[1], a[0]); break;
        case TS_LX_TAB: r = ts_lx_tab(s->p, x->var, a[0]); break;
        case TS_LX_CAST: r = ts_lx_cast(s->p, a[0], x->dt); break;
        case TS_LX_GUARD: r = ts_lx_guard(s->p, a[0], a[1], a[2]); break;
        case TS_LX_IDIV: r = ts_lx_idiv(s->p, a[0], a[1]); break;
        case TS_LX_IMOD: r = ts_lx_imod(s->p, a[0], a[1]); break;
        case TS_LX_OP:
            if (x->index) {
                r = x->op == TS_OP_ADD ? ts_lx_add(s->p, a[0], a[1])
                  : x->op == TS_OP_SUB ? ts_lx_sub(s->p, a[0], a[1])
                                       : ts_lx_mul(s->p, a[0], a[1]);
            } else if (x->op == TS_OP_LT && a[0]->dt == TS_DTYPE_I64 && a[1]->dt == TS_DTYPE_I64) {
                r = ts_lx_lt(s->p, a[0], a[1]);   /* a phase test: constant now */
            } else if (x->op == TS_OP_AND && x->dt == TS_DTYPE_BOOL) {
                r = ts_lx_and(s->p, a[0], a[1]);
            } else {
                r = ts_lx_op_hint(s->p, x->op, x->dt, a[0], a[1], a[2], x->var);
            }
            break;
        default: r = x; break;   /* constants, dims, accumulators, other variables */
        }
    }
    if (r && x->id < s->n) s->memo[x->id] = r;
    return r;
}

/* Copy j of the statements s (stores and prefetches only). */
static ts_ls *copy_stmts(split *s, const ts_ls *st, ts_ls ***tail)
{
    ts_ls *first = NULL, **t = &first;
    for (; st; st = st->next) {
        ts_ls *c = ts_ls_new(s->p, st->k);
        if (!c) return NULL;
        *c = *st;
        c->next = NULL;
        if (!(c->index = subst(s, st->index)) || (st->value && !(c->value = subst(s, st->value)))) return NULL;
        *t = c;
        t = &c->next;
    }
    *tail = t;
    return first;
}

/* Whether a loop body is stores and prefetches only. */
static bool plain_body(const ts_ls *s)
{
    for (; s; s = s->next)
        if (s->k != TS_LS_STORE && s->k != TS_LS_PREFETCH) return false;
    return true;
}

static void split_loop(ts_lprog *p, ts_lkernel *k, ts_ls *l)
{
    if (l->extent->k != TS_LX_CONST || !plain_body(l->body)) return;
    int budget = SPLIT_SCAN;
    int64_t d = 0;
    for (const ts_ls *s = l->body; s && d >= 0; s = s->next) {
        const int64_t e = divisor(s->index, l->var, &budget);
        const int64_t f = s->value ? divisor(s->value, l->var, &budget) : 0;
        if (e < 0 || f < 0 || (e && d && e != d) || (f && d && f != d) || (e && f && e != f)) d = -1;
        else if (e || f) d = e ? e : f;
    }
    const int64_t ext = l->extent->ci;
    if (budget < 0 || d < 2 || ext % d) return;
    /* by remainder: the loop over the quotient, a copy per remainder; by
     * quotient: the loop over the remainder, a copy per quotient */
    const bool by_rem = d <= SPLIT_MAX_K && ext / d >= SPLIT_MIN_Q;
    const bool by_quo = !by_rem && ext / d >= 2 && ext / d <= SPLIT_MAX_K && d >= SPLIT_MIN_Q;
    if (!by_rem && !by_quo) return;
    const int64_t copies = by_rem ? d : ext / d;
    split s = {.p = p, .v = l->var, .k = d, .n = ts_lprog_n_exprs(p)};
    s.memo = ts_mem_zalloc(sizeof *s.memo * (size_t)s.n);
    if (!s.memo) return;
    const int qv = k->n_vars++;
    s.q = ts_lx_var(p, qv, l->depth);
    ts_ls *body = NULL, **tail = &body;
    for (int64_t j = 0; j < copies && tail; j++) {
        memset(s.memo, 0, sizeof *s.memo * (size_t)s.n);
        if (by_rem) {
            s.dv = s.q, s.md = ts_lx_int(p, j);
            s.i = ts_lx_add(p, ts_lx_mul(p, s.q, ts_lx_int(p, d)), ts_lx_int(p, j));
        } else {
            s.dv = ts_lx_int(p, j), s.md = s.q;
            s.i = ts_lx_add(p, ts_lx_int(p, j * d), s.q);
        }
        ts_ls **t = NULL;
        ts_ls *c = s.i ? copy_stmts(&s, l->body, &t) : NULL;
        *tail = c;
        tail = c ? t : NULL;
    }
    ts_mem_free(s.memo);
    if (!tail) return;   /* out of memory: the program's status says so */
    l->var = qv;
    l->extent = ts_lx_int(p, by_rem ? ext / d : d);
    l->body = body;
}

static void walk(ts_lprog *p, ts_lkernel *k, ts_ls *s)
{
    for (; s; s = s->next) {
        if (s->k != TS_LS_FOR) continue;
        bool inner = true;
        for (const ts_ls *b = s->body; b; b = b->next) inner = inner && b->k != TS_LS_FOR;
        if (inner) split_loop(p, k, s);
        else walk(p, k, s->body);
    }
}

void ts_split_divisors(ts_lprog *p, ts_lkernel *k) { walk(p, k, k->body); }
