/* roll.c — runs of alike nests as one loop over a table (lower_int.h, D132).
 *
 * A loop kernel that reads a concat at its own coordinates runs one nest
 * per part (D114). DenseNet's BatchNorm + ReLU over a block's concat has
 * up to 48 parts, all but the first 32 channels wide: 48 nests that differ
 * only in the part's buffer and the channel offset, ~2.5 KB of C each,
 * 1.3 of DenseNet-121's 1.9 MB. Here consecutive top-level nests that are
 * the same tree but for integer constants and the buffers they load
 * become one nest inside a loop over the run: each constant that differs
 * is a table indexed by the run's variable, each load whose buffer
 * differs reads through a table of buffer numbers (TS_LX_LOADI). The
 * nests' loops keep their schedule (the parallel loop is split per part,
 * as before). */
#include "lower/lower_int.h"

#include <string.h>

enum {
    ROLL_MIN = 3,          /* nests in a run worth a table */
    ROLL_MAX = 64,         /* nests in one run (a longer one is several) */
    ROLL_BUDGET = 1 << 15  /* nodes visited per attempt: shared trees stay cheap */
};

typedef struct roll {
    ts_lprog *p;
    ts_lkernel *k;
    int r;                  /* nests in the run */
    bool dry;               /* only matching: no tables made */
    int *vmap, *amap;       /* [j * n + var of nest j] = nest 0's var, or -1 */
    int nv, na;
    ts_lx *pv;              /* the run's loop variable (inline: the table index) */
    int budget;
    bool inline_;           /* ts_roll_exprs: one nest, the expressions share their variables */
} roll;

/* The table of vals[0..r) indexed by the run's variable (or, dry, any
 * expression). */
static ts_lx *table(roll *R, const int64_t *vals)
{
    if (R->dry) return R->pv;
    int t = ts_lkernel_tab(R->p, R->k, vals, R->r);
    return t < 0 ? NULL : ts_lx_tab(R->p, t, R->pv);
}

/* Loop variables or accumulators ids[0..r), one per nest, as nest 0's:
 * declared here (define) or used (each must map to ids[0]). */
static bool map_ids(const roll *R, int *map, int n, const int *ids, bool define)
{
    for (int j = 0; j < R->r; j++) {
        if (ids[j] < 0 || ids[j] >= n) return false;
        int *m = &map[j * n + ids[j]];
        if (define) *m = ids[0];
        else if (*m != ids[0]) return false;
    }
    return true;
}

static bool map_lx(const roll *R, int *map, int n, ts_lx *const *x)
{
    int ids[ROLL_MAX];
    for (int j = 0; j < R->r; j++) ids[j] = x[j]->var;
    return map_ids(R, map, n, ids, false);
}

/* A summary of x in nest j for lining up the operands of a commutative
 * operation: kinds, operations and nest 0's names of loop variables,
 * `depth` levels down; constants' values and buffers left out (they may
 * differ). */
static uint64_t sig(const roll *R, int j, const ts_lx *x, int depth)
{
    if (!x) return 1;
    uint64_t h = (uint64_t)x->k * 1000003u + (uint64_t)x->op * 131u + (uint64_t)x->dt;
    if (x->k == TS_LX_VAR && x->var >= 0 && x->var < R->nv) h = h * 31u + (uint64_t)(R->vmap[j * R->nv + x->var] + 2);
    if (x->k == TS_LX_DIM || x->k == TS_LX_PARAM) h = h * 31u + (uint64_t)x->var;
    if (depth <= 0) return h;
    if (x->k == TS_LX_OP && (x->op == TS_OP_ADD || x->op == TS_OP_MUL) && x->a[1] && !x->a[2]) {
        /* either order of a commutative operation's operands alike */
        const uint64_t a = sig(R, j, x->a[0], depth - 1), b = sig(R, j, x->a[1], depth - 1);
        return h * 0x100000001b3u + (a + b) * 0x9e3779b97f4a7c15u + (a ^ b);
    }
    for (int i = 0; i < 3; i++) h = h * 0x100000001b3u + sig(R, j, x->a[i], depth - 1);
    return h;
}

/* Whether nest j's operands of the commutative x[j] come in the other
 * order than nest 0's (hash-consing orders them by creation: add(i, 256)
 * in one nest, add(576, i) in another). */
static bool swapped(const roll *R, ts_lx *const *x, int j)
{
    const ts_lx *x0 = x[0];
    if (x0->k != TS_LX_OP || (x0->op != TS_OP_ADD && x0->op != TS_OP_MUL) || !x0->a[1] || x0->a[2]) return false;
    const uint64_t a = sig(R, 0, x0->a[0], 6), b = sig(R, 0, x0->a[1], 6);
    const uint64_t c = sig(R, j, x[j]->a[0], 6), d = sig(R, j, x[j]->a[1], 6);
    return !(a == c && b == d) && a == d && b == c;
}

/* Nest 0's expression x[0] rebuilt one loop deeper, with what differs
 * among x[0..r) taken from tables; NULL when they are not alike. */
static ts_lx *expr(roll *R, ts_lx *const *x)
{
    ts_lx *const x0 = x[0];
    if (--R->budget < 0 || !x0) return NULL;
    bool same = true;
    for (int j = 1; j < R->r; j++) {
        if (!x[j] || x[j]->k != x0->k || x[j]->dt != x0->dt) return NULL;
        same = same && x[j] == x0;
    }
    int64_t vals[ROLL_MAX] = {0};
    ts_lx *sub[ROLL_MAX] = {NULL};
    switch (x0->k) {
    case TS_LX_CONST:
        if (same) return x0;
        if (x0->dt != TS_DTYPE_I64) return NULL;
        for (int j = 0; j < R->r; j++) vals[j] = x[j]->ci;
        return table(R, vals);
    case TS_LX_DIM: case TS_LX_PARAM: return same ? x0 : NULL;
    case TS_LX_VAR:
        if (R->inline_) return same ? x0 : NULL;
        return map_lx(R, R->vmap, R->nv, x) ? ts_lx_var(R->p, x0->var, x0->depth + 1) : NULL;
    case TS_LX_ACC:
        if (R->inline_) return same ? x0 : NULL;
        return map_lx(R, R->amap, R->na, x) ? ts_lx_acc(R->p, x0->dt, x0->var, x0->depth + 1) : NULL;
    case TS_LX_TAB: case TS_LX_LOADI: return NULL;
    case TS_LX_LOAD: {
        bool one = true;
        for (int j = 0; j < R->r; j++) {
            sub[j] = x[j]->a[0], vals[j] = x[j]->var;
            one = one && vals[j] == vals[0];
            if (vals[j] < 0 && !one) return NULL;   /* the block, the row scratch: not in bufs[] */
        }
        ts_lx *i = expr(R, sub);
        if (!i || one) return i ? ts_lx_load(R->p, x0->dt, x0->var, i) : NULL;
        return R->dry ? i : ts_lx_loadi(R->p, x0->dt, table(R, vals), i);
    }
    default: break;
    }
    /* an operation: the same one, on alike operands */
    for (int j = 1; j < R->r; j++)
        if (x[j]->op != x0->op || x[j]->var != x0->var || x[j]->index != x0->index || x[j]->ci != x0->ci ||
            memcmp(&x[j]->c, &x0->c, sizeof x0->c) != 0)
            return NULL;
    ts_lx *a[3] = {NULL, NULL, NULL};
    bool swap[ROLL_MAX] = {false};
    for (int j = 1; j < R->r; j++) swap[j] = swapped(R, x, j);
    for (int i = 0; i < 3; i++) {
        if (!x0->a[i]) continue;
        for (int j = 0; j < R->r; j++) sub[j] = x[j]->a[swap[j] ? 1 - i : i];
        if (!(a[i] = expr(R, sub))) return NULL;
    }
    return ts_lx_rebuild(R->p, x0, a, 0);
}

ts_lx *ts_roll_exprs(ts_lprog *p, ts_lkernel *k, ts_lx *const *x, int r, ts_lx *index)
{
    if (r < 2 || r > ROLL_MAX) return NULL;
    roll R = {.p = p, .k = k, .r = r, .dry = true, .pv = index, .budget = ROLL_BUDGET, .inline_ = true};
    if (!expr(&R, x)) return NULL;   /* matched before any table is made */
    R.dry = false, R.budget = ROLL_BUDGET;
    return expr(&R, x);
}

/* Statement lists s[0..r) as nest 0's, one loop deeper (s is advanced);
 * NULL and *ok false when they are not alike. */
static ts_ls *stmts(roll *R, const ts_ls **s, bool *ok)
{
    ts_ls *head = NULL, **tail = &head;
    while (*ok && s[0]) {
        const ts_ls *s0 = s[0];
        int ids[ROLL_MAX];
        for (int j = 0; j < R->r; j++) {
            if (!s[j] || s[j]->k != s0->k || s[j]->flags != s0->flags || s[j]->collapse != s0->collapse ||
                s[j]->buf != s0->buf || s[j]->op != s0->op || s[j]->dt != s0->dt)
                *ok = false;
            else
                ids[j] = s[j]->var;
        }
        ts_ls *n = *ok ? ts_ls_new(R->p, s0->k) : NULL;
        if (!n) break;
        *n = *s0;
        n->next = NULL;
        n->body = NULL;
        if (s0->k == TS_LS_FOR) {   /* a loop or an accumulator is declared here, an update uses one */
            n->depth = s0->depth + 1;
            *ok = map_ids(R, R->vmap, R->nv, ids, true);
        } else if (s0->k == TS_LS_ACC) {
            *ok = map_ids(R, R->amap, R->na, ids, true);
        } else if (s0->k == TS_LS_UPDATE) {
            *ok = map_ids(R, R->amap, R->na, ids, false);
        }
        ts_lx *sub[ROLL_MAX];
        ts_lx *const *mine[3] = {&s0->extent, &s0->index, &s0->value};
        ts_lx **out[3] = {&n->extent, &n->index, &n->value};
        for (int f = 0; f < 3 && *ok; f++) {
            if (!*mine[f]) continue;
            for (int j = 0; j < R->r; j++) sub[j] = f == 0 ? s[j]->extent : f == 1 ? s[j]->index : s[j]->value;
            if (!(*out[f] = expr(R, sub))) *ok = false;
        }
        if (*ok && s0->body) {
            const ts_ls *in[ROLL_MAX];
            for (int j = 0; j < R->r; j++) in[j] = s[j]->body;
            n->body = stmts(R, in, ok);
        }
        *tail = n;
        tail = &n->next;
        for (int j = 0; j < R->r; j++) s[j] = s[j]->next;
    }
    for (int j = 0; *ok && j < R->r; j++)
        if (s[j]) *ok = false;
    return *ok ? head : NULL;
}

/* Nests first[0..r) (each one statement) as one loop body, or NULL. */
static ts_ls *roll_run(roll *R, const ts_ls *const *first)
{
    const size_t nm = (size_t)R->r * (size_t)(R->nv + R->na);
    int *maps = ts_arena_array(ts_lprog_arena(R->p), nm ? nm : 1, sizeof *maps);
    if (!maps) return NULL;
    for (size_t i = 0; i < nm; i++) maps[i] = -1;
    R->vmap = maps;
    R->amap = maps + (size_t)R->r * (size_t)R->nv;
    R->budget = ROLL_BUDGET;
    const ts_ls *one[ROLL_MAX];
    ts_ls copy[ROLL_MAX];
    for (int j = 0; j < R->r; j++) {   /* each nest alone, without what follows it */
        copy[j] = *first[j];
        copy[j].next = NULL;
        one[j] = &copy[j];
    }
    bool ok = true;
    ts_ls *body = stmts(R, one, &ok);
    return ok ? body : NULL;
}

static bool alike(roll *R, const ts_ls *a, const ts_ls *b)
{
    const ts_ls *pair[2] = {a, b};
    R->r = 2;
    R->dry = true;
    return roll_run(R, pair) != NULL;
}

void ts_roll_nests(ts_lprog *p, ts_lkernel *k)
{
    if (k->tmpl || k->serial || ts_lprog_status(p, NULL) != TS_OK) return;
    roll R = {.p = p, .k = k, .nv = k->n_vars, .na = k->n_accs};
    const int pvar = k->n_vars;
    R.pv = ts_lx_var(p, pvar, 1);
    bool rolled = false;
    for (ts_ls **at = &k->body; *at;) {
        const ts_ls *first[ROLL_MAX];
        int r = 0;
        for (const ts_ls *s = *at; s && s->k == TS_LS_FOR && r < ROLL_MAX; s = s->next) {
            if (r && !alike(&R, first[0], s)) break;
            first[r++] = s;
        }
        R.r = r;
        R.dry = false;
        ts_ls *body = r >= ROLL_MIN ? roll_run(&R, first) : NULL;
        ts_ls *loop = body ? ts_ls_new(p, TS_LS_FOR) : NULL;
        if (!loop) {
            at = &(*at)->next;
            continue;
        }
        loop->var = pvar;
        loop->depth = 1;
        loop->extent = ts_lx_int(p, r);
        loop->body = body;
        loop->next = first[r - 1]->next;
        *at = loop;
        at = &loop->next;
        rolled = true;
    }
    if (rolled) k->n_vars = pvar + 1;
}
