/* offsets.c — constant offsets into a kernel's buffers as run-time
 * bindings (D189).
 *
 * An unrolled RNN's steps, a transformer's heads read through slices:
 * kernels that differ only in where they read or write a buffer
 * (b4[i + 6144] in one step, b4[i + 9216] in the next) have different C,
 * so D119 compiled each one. Here, when every access of a buffer has a
 * positive constant term (split: through adds and multiplications by
 * constants), the smallest of them is taken out of every index and kept
 * in the kernel's buffer table
 * (ts_lbuf.off): the runtime binds the buffer at base + off, the C no
 * longer holds it, and the steps' kernels compile once. A tile
 * epilogue's residual (read by the template at te_res_off + r*rs + q)
 * counts te_res_off as one more access. Buffers a runtime template reads
 * or writes through its own arguments (the operands of a product, a conv
 * or a sort, a folded scale) keep their offsets, and a kernel that picks
 * buffers through a table (TS_LX_LOADI, rolled loops) is left as it is. */
#include "lower/loop.h"

#include <stdlib.h>
#include <string.h>

typedef struct hoist {
    ts_lprog *p;
    int n_bufs;
    int64_t *min;     /* per buffer: the smallest constant term seen (INT64_MAX: none yet) */
    bool *fixed;      /* per buffer: its offset stays in the C */
    uint8_t *seen;    /* per expression id: scanned */
    ts_lx **memo;     /* per expression id: its rewrite */
    uint32_t n0;      /* expressions made before the pass: the ones memo covers */
    bool dynamic;     /* a TS_LX_LOADI: buffers picked at run time */
} hoist;

/* Index x as e + c: c the sum of its constant terms through adds,
 * subtractions and multiplications by a constant (8 * (t + 1) + i: 8),
 * e the rest (8 * t + i, made only when p is given); a node of any other
 * kind (a division, a load, a variable) is a term of its own. Past
 * `budget` nodes c is 0 and e is x. */
static int64_t split(ts_lprog *p, ts_lx *x, ts_lx **e, int *budget)
{
    *e = x;
    if (--*budget < 0) return 0;
    if (x->k == TS_LX_CONST) {
        if (p) *e = ts_lx_int(p, 0);
        return x->ci;
    }
    if (x->k != TS_LX_OP || !x->index) return 0;
    ts_lx *a, *b;
    if (x->op == TS_OP_MUL) {
        const int k = x->a[0]->k == TS_LX_CONST ? 0 : x->a[1]->k == TS_LX_CONST ? 1 : -1;
        if (k < 0) return 0;
        const int64_t c = split(p, x->a[1 - k], &a, budget);
        if (*budget < 0) return 0;
        if (p) *e = ts_lx_mul(p, a, x->a[k]);
        return (int64_t)((uint64_t)c * (uint64_t)x->a[k]->ci);
    }
    if (x->op != TS_OP_ADD && x->op != TS_OP_SUB) return 0;
    const int64_t ca = split(p, x->a[0], &a, budget), cb = split(p, x->a[1], &b, budget);
    if (*budget < 0) return 0;
    if (p) *e = x->op == TS_OP_ADD ? ts_lx_add(p, a, b) : ts_lx_sub(p, a, b);
    return (int64_t)(x->op == TS_OP_ADD ? (uint64_t)ca + (uint64_t)cb : (uint64_t)ca - (uint64_t)cb);
}

enum { SPLIT_BUDGET = 64 };

static int64_t const_term(ts_lx *x)
{
    int budget = SPLIT_BUDGET;
    ts_lx *e;
    const int64_t c = split(NULL, x, &e, &budget);
    return budget < 0 ? 0 : c;
}

static void note(hoist *h, int buf, ts_lx *index)
{
    if (buf < 0 || buf >= h->n_bufs || !index) return;
    const int64_t c = const_term(index);
    if (c < h->min[buf]) h->min[buf] = c;
}

static void scan_x(hoist *h, ts_lx *x)
{
    if (!x || x->id >= h->n0 || h->seen[x->id]) return;
    h->seen[x->id] = 1;
    if (x->k == TS_LX_LOADI) h->dynamic = true;
    if (x->k == TS_LX_LOAD) note(h, x->var, x->a[0]);
    for (int i = 0; i < 3; i++) scan_x(h, x->a[i]);
}

static void scan_s(hoist *h, ts_ls *s)
{
    for (; s; s = s->next) {
        if (s->k == TS_LS_STORE || s->k == TS_LS_PREFETCH || s->k == TS_LS_STREAM) note(h, s->buf, s->index);
        scan_x(h, s->extent);
        scan_x(h, s->index);
        scan_x(h, s->value);
        scan_s(h, s->body);
    }
}

static int64_t off_of(const hoist *h, int buf)
{
    return buf >= 0 && buf < h->n_bufs && !h->fixed[buf] && h->min[buf] > 0 && h->min[buf] != INT64_MAX ? h->min[buf]
                                                                                                         : 0;
}

/* Index x (already rewritten inside) less m: its terms but the
 * constant, plus the constant less m. */
static ts_lx *less(hoist *h, ts_lx *x, int64_t m)
{
    if (!x || m == 0) return x;
    int budget = SPLIT_BUDGET;
    ts_lx *e = NULL;
    const int64_t c = split(h->p, x, &e, &budget);
    if (budget < 0 || !e) return NULL;   /* note() saw the same split: it fits */
    return ts_lx_add(h->p, e, ts_lx_int(h->p, (int64_t)((uint64_t)c - (uint64_t)m)));
}

static ts_lx *rewrite_x(hoist *h, ts_lx *x)
{
    if (!x || x->id >= h->n0) return x;
    if (h->memo[x->id]) return h->memo[x->id];
    ts_lx *a[3] = {NULL, NULL, NULL};
    bool same = true;
    for (int i = 0; i < 3; i++) {
        a[i] = rewrite_x(h, x->a[i]);
        if (x->a[i] && !a[i]) return NULL;
        same &= a[i] == x->a[i];
    }
    ts_lx *y = same ? x : ts_lx_rebuild(h->p, x, a, x->depth);
    if (y && x->k == TS_LX_LOAD) {
        const int64_t m = off_of(h, x->var);
        if (m) y = ts_lx_load(h->p, x->dt, x->var, less(h, y->a[0], m));
    }
    return h->memo[x->id] = y;
}

static bool rewrite_s(hoist *h, ts_ls *s)
{
    for (; s; s = s->next) {
        ts_lx **xs[3] = {&s->extent, &s->index, &s->value};
        for (int i = 0; i < 3; i++) {
            if (!*xs[i]) continue;
            ts_lx *y = rewrite_x(h, *xs[i]);
            if (!y) return false;
            *xs[i] = y;
        }
        if (s->k == TS_LS_STORE || s->k == TS_LS_PREFETCH || s->k == TS_LS_STREAM) {
            const int64_t m = off_of(h, s->buf);
            if (m && !(s->index = less(h, s->index, m))) return false;
        }
        if (!rewrite_s(h, s->body)) return false;
    }
    return true;
}

ts_status ts_lkernel_hoist_offsets(ts_lprog *p, ts_lkernel *k, ts_err *err)
{
    if (k->n_bufs <= 0) return TS_OK;
    hoist h = {.p = p, .n_bufs = k->n_bufs, .n0 = ts_lprog_n_exprs(p)};
    h.min = malloc(sizeof *h.min * (size_t)k->n_bufs);
    h.fixed = calloc((size_t)k->n_bufs, sizeof *h.fixed);
    h.seen = calloc((size_t)h.n0 + 1, 1);
    h.memo = calloc((size_t)h.n0 + 1, sizeof *h.memo);
    ts_status s = TS_OK;
    if (!h.min || !h.fixed || !h.seen || !h.memo) {
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        goto done;
    }
    for (int i = 0; i < k->n_bufs; i++) {
        h.min[i] = INT64_MAX;
        /* elements of less than a byte: no byte offset for every one */
        h.fixed[i] = ts_dtype_bits(k->bufs[i].dt) % 8 != 0;
    }
    ts_ltmpl *t = k->tmpl;
    /* the statements emitted: with a tile epilogue, its tables' fills and
     * what follows its terms, not epi (kept for listings only) */
    ts_ls *lists[4] = {k->body, t && !t->te ? t->epi : NULL, t && t->te ? t->te_fill : NULL,
                       t && t->te ? t->te_rest : NULL};
    const bool res = t && t->te && t->te_res >= 0 && t->te_res < k->n_bufs && t->te_res_off;
    if (t) {
        const int used[3] = {t->a, t->b, t->c};
        for (int i = 0; i < 3; i++)
            if (used[i] >= 0 && used[i] < k->n_bufs) h.fixed[used[i]] = true;
        for (int i = 0; i < t->n_wscale; i++)
            if (t->wscale[i].buf >= 0 && t->wscale[i].buf < k->n_bufs) h.fixed[t->wscale[i].buf] = true;
        /* the tile epilogue's residual is read at te_res_off + r*rs + q */
        if (res) note(&h, t->te_res, t->te_res_off), scan_x(&h, t->te_res_off);
    }
    for (int i = 0; i < 4; i++) scan_s(&h, lists[i]);
    bool any = false;
    for (int i = 0; i < k->n_bufs; i++) any |= off_of(&h, i) != 0;
    if (h.dynamic || !any) goto done;
    for (int i = 0; i < 4; i++)
        if (!rewrite_s(&h, lists[i])) {
            s = ts_lprog_status(p, err);
            if (s == TS_OK) s = ts_err_set(err, TS_ERR_INTERNAL, "kernel %s: offsets not rewritten", k->name);
            goto done;
        }
    if (res && off_of(&h, t->te_res) && !(t->te_res_off = less(&h, t->te_res_off, off_of(&h, t->te_res)))) {
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        goto done;
    }
    for (int i = 0; i < k->n_bufs; i++) k->bufs[i].off = off_of(&h, i);
done:
    free(h.min), free(h.fixed), free(h.seen), free(h.memo);
    return s;
}
