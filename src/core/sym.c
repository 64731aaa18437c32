/* sym.c — symbolic dimensions: canonical polynomials, hash-consed.
 *
 * Every non-constant dim is one interned node of the table:
 *   SYM                   a named symbol
 *   DIV, MOD, MAX, MIN    opaque binary atoms over two canonical dims
 *   MONO                  a product of atoms with powers (degree >= 2)
 *   SUM                   c + sum of coef * monomial, except the case that is
 *                         just one monomial with coefficient 1 and c == 0,
 *                         which is represented by the monomial itself
 * A "monomial node" is either an atom (one factor, power 1) or a MONO.
 *
 * Canonical order is structural, never by creation order, so the text of an
 * expression does not depend on how it was built: node kinds in the enum
 * order below, symbols by name, opaque atoms by operands, monomials by
 * degree (highest first) then factors lexicographically, sums term by term.
 * Because every node is canonical and interned, two distinct nodes always
 * compare unequal, which makes the order total.
 */
#include "sym_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ts_dim ts_sym_node_dim(const ts_symx *x) { ts_dim d = {0, x}; return d; }
static int dim_depth(ts_dim d) { return d.x ? d.x->depth : 0; }
static int imax(int a, int b) { return a > b ? a : b; }

ts_status ts_sym_oom(ts_err *err)
{
    return ts_err_set(err, TS_ERR_OOM, "out of memory building a dim");
}

ts_status ts_sym_overflow(ts_err *err)
{
    return ts_err_set(err, TS_ERR_SHAPE, "int64 ts_sym_overflow");
}

static bool i64_sub(int64_t a, int64_t b, int64_t *out) { return !__builtin_sub_overflow(a, b, out); }

/* ---- the table -------------------------------------------------------- */

ts_symtab *ts_symtab_new(void)
{
    ts_symtab *t = ts_mem_zalloc(sizeof *t);
    if (!t) return NULL;
    t->arena = ts_arena_new();
    t->nbuckets = 64;
    t->buckets = ts_mem_zalloc(t->nbuckets * sizeof *t->buckets);
    if (!t->arena || !t->buckets) {
        ts_symtab_free(t);
        return NULL;
    }
    return t;
}

void ts_symtab_free(ts_symtab *t)
{
    if (!t) return;
    ts_arena_free(t->arena);
    ts_mem_free(t->buckets);
    ts_mem_free(t);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdu;
}

/* Children are interned, so hashing their addresses is enough. */
static uint64_t hash_dim(ts_dim d)
{
    return d.x ? (uint64_t)(uintptr_t)d.x : mix(0x5bd1e995u, (uint64_t)d.c);
}

uint64_t ts_sym_hash_key(const ts_symx *k)
{
    uint64_t h = mix(1, (uint64_t)k->kind);
    switch (k->kind) {
    case K_SYM:
        for (size_t i = 0; i < k->u.sym.len; i++) h = mix(h, (unsigned char)k->u.sym.name[i]);
        return h;
    case K_MONO:
        for (int i = 0; i < k->u.mono.n; i++)
            h = mix(mix(h, (uintptr_t)k->u.mono.f[i].atom), (uint64_t)k->u.mono.f[i].pow);
        return h;
    case K_SUM:
        h = mix(h, (uint64_t)k->u.sum.c);
        for (int i = 0; i < k->u.sum.n; i++)
            h = mix(mix(h, (uintptr_t)k->u.sum.t[i].mono), (uint64_t)k->u.sum.t[i].coef);
        return h;
    default:
        return mix(mix(h, hash_dim(k->u.bin.a)), hash_dim(k->u.bin.b));
    }
}

static bool same_key(const ts_symx *k, const ts_symx *x)
{
    if (k->kind != x->kind || k->hash != x->hash) return false;
    switch (k->kind) {
    case K_SYM:
        return k->u.sym.len == x->u.sym.len && !memcmp(k->u.sym.name, x->u.sym.name, k->u.sym.len);
    case K_MONO:
        if (k->u.mono.n != x->u.mono.n) return false;
        for (int i = 0; i < k->u.mono.n; i++)
            if (k->u.mono.f[i].atom != x->u.mono.f[i].atom || k->u.mono.f[i].pow != x->u.mono.f[i].pow)
                return false;
        return true;
    case K_SUM:
        if (k->u.sum.n != x->u.sum.n || k->u.sum.c != x->u.sum.c) return false;
        for (int i = 0; i < k->u.sum.n; i++)
            if (k->u.sum.t[i].mono != x->u.sum.t[i].mono || k->u.sum.t[i].coef != x->u.sum.t[i].coef)
                return false;
        return true;
    default:
        return ts_dim_eq(k->u.bin.a, x->u.bin.a) && ts_dim_eq(k->u.bin.b, x->u.bin.b);
    }
}

const ts_symx *ts_sym_lookup(const ts_symtab *t, const ts_symx *k)
{
    for (const ts_symx *x = t->buckets[k->hash & (t->nbuckets - 1)]; x; x = x->next)
        if (same_key(k, x)) return x;
    return NULL;
}

/* A failed resize only makes chains longer, so it is not an error. */
static void maybe_grow(ts_symtab *t)
{
    if (t->count < t->nbuckets || t->nbuckets > SIZE_MAX / 2 / sizeof(ts_symx *)) return;
    size_t n = t->nbuckets * 2;
    ts_symx **b = ts_mem_zalloc(n * sizeof *b);
    if (!b) return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        for (ts_symx *x = t->buckets[i], *next; x; x = next) {
            next = x->next;
            x->next = b[x->hash & (n - 1)];
            b[x->hash & (n - 1)] = x;
        }
    }
    ts_mem_free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

/* The key points at caller memory; the node gets arena copies. */
static bool copy_payload(ts_arena *a, ts_symx *x)
{
    if (x->kind == K_SYM) {
        x->u.sym.name = ts_arena_strndup(a, x->u.sym.name, x->u.sym.len);
        return x->u.sym.name != NULL;
    }
    if (x->kind == K_MONO) {
        factor *f = ts_arena_array(a, (size_t)x->u.mono.n, sizeof *f);
        if (!f) return false;
        memcpy(f, x->u.mono.f, (size_t)x->u.mono.n * sizeof *f);
        x->u.mono.f = f;
    } else if (x->kind == K_SUM) {
        term *tm = ts_arena_array(a, (size_t)x->u.sum.n, sizeof *tm);
        if (!tm) return false;
        memcpy(tm, x->u.sum.t, (size_t)x->u.sum.n * sizeof *tm);
        x->u.sum.t = tm;
    }
    return true;
}

static ts_status intern(ts_symtab *t, ts_symx *k, const ts_symx **out, ts_err *err)
{
    k->hash = ts_sym_hash_key(k);
    k->tab = t;
    const ts_symx *hit = ts_sym_lookup(t, k);
    if (hit) {
        *out = hit;
        return TS_OK;
    }
    if (k->depth > MAX_NODE_DEPTH)
        return ts_err_set(err, TS_ERR_SHAPE, "dim expression nested deeper than %d", MAX_NODE_DEPTH);
    ts_symx *x = ts_arena_alloc(t->arena, sizeof *x);
    if (!x) return ts_sym_oom(err);
    *x = *k;
    if (!copy_payload(t->arena, x)) return ts_sym_oom(err);
    size_t i = x->hash & (t->nbuckets - 1);
    x->next = t->buckets[i];
    t->buckets[i] = x;
    t->count++;
    maybe_grow(t);
    *out = x;
    return TS_OK;
}

/* ---- canonical order ---------------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }
static int cmp_node(const ts_symx *a, const ts_symx *b);

/* Nodes before constants, so that max(n, 4) reads naturally. */
static int cmp_dim(ts_dim a, ts_dim b)
{
    if (a.x && b.x) return cmp_node(a.x, b.x);
    if (a.x || b.x) return a.x ? -1 : 1;
    return cmp_i64(a.c, b.c);
}

int ts_sym_factors(const ts_symx *m, const factor **f, factor *one)
{
    if (m->kind == K_MONO) {
        *f = m->u.mono.f;
        return m->u.mono.n;
    }
    one->atom = m;
    one->pow = 1;
    *f = one;
    return 1;
}

static int64_t degree(const ts_symx *m) { return m->kind == K_MONO ? m->u.mono.deg : 1; }

/* Monomials: higher degree first (n*n+n), then factor by factor. */
static int cmp_mono(const ts_symx *a, const ts_symx *b)
{
    if (a == b) return 0;
    int r = cmp_i64(degree(b), degree(a));
    if (r) return r;
    const factor *fa, *fb;
    factor oa, ob;
    int na = ts_sym_factors(a, &fa, &oa), nb = ts_sym_factors(b, &fb, &ob);
    for (int i = 0; i < na && i < nb; i++) {
        if ((r = cmp_node(fa[i].atom, fb[i].atom))) return r;
        if ((r = cmp_i64(fb[i].pow, fa[i].pow))) return r;
    }
    return (na > nb) - (na < nb);
}

static int cmp_sum(const ts_symx *a, const ts_symx *b)
{
    int r;
    for (int i = 0; i < a->u.sum.n && i < b->u.sum.n; i++) {
        if ((r = cmp_mono(a->u.sum.t[i].mono, b->u.sum.t[i].mono))) return r;
        if ((r = cmp_i64(a->u.sum.t[i].coef, b->u.sum.t[i].coef))) return r;
    }
    if ((r = (a->u.sum.n > b->u.sum.n) - (a->u.sum.n < b->u.sum.n))) return r;
    return cmp_i64(a->u.sum.c, b->u.sum.c);
}

static int cmp_node(const ts_symx *a, const ts_symx *b)
{
    if (a == b) return 0;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    switch (a->kind) {
    case K_SYM: {
        size_t n = a->u.sym.len < b->u.sym.len ? a->u.sym.len : b->u.sym.len;
        int r = memcmp(a->u.sym.name, b->u.sym.name, n);
        if (r) return r < 0 ? -1 : 1;
        return (a->u.sym.len > b->u.sym.len) - (a->u.sym.len < b->u.sym.len);
    }
    case K_MONO:
        return cmp_mono(a, b);
    case K_SUM:
        return cmp_sum(a, b);
    default: {
        int r = cmp_dim(a->u.bin.a, b->u.bin.a);
        return r ? r : cmp_dim(a->u.bin.b, b->u.bin.b);
    }
    }
}

/* ---- node constructors -------------------------------------------------- */


ts_status ts_sym_node(ts_symtab *t, const char *name, size_t len, ts_dim *out, ts_err *err)
{
    ts_symx k = {.kind = K_SYM, .depth = 1};
    k.u.sym.name = name;
    k.u.sym.len = len;
    const ts_symx *x = NULL;
    TS_TRY(intern(t, &k, &x, err));
    *out = ts_sym_node_dim(x);
    return TS_OK;
}

static ts_status bin_node(ts_symtab *t, int kind, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    ts_symx k = {.kind = kind, .depth = 1 + imax(dim_depth(a), dim_depth(b))};
    k.u.bin.a = a;
    k.u.bin.b = b;
    const ts_symx *x;
    TS_TRY(intern(t, &k, &x, err));
    *out = ts_sym_node_dim(x);
    return TS_OK;
}

/* f is sorted and merged; a lone atom to the first power is the atom. */
static ts_status mono_node(ts_symtab *t, const factor *f, int n, const ts_symx **out, ts_err *err)
{
    if (n == 1 && f[0].pow == 1) {
        *out = f[0].atom;
        return TS_OK;
    }
    ts_symx k = {.kind = K_MONO, .depth = 1};
    int64_t deg = 0;
    for (int i = 0; i < n; i++) {
        if (!ts_i64_add(deg, f[i].pow, &deg)) return ts_sym_overflow(err);
        k.depth = imax(k.depth, 1 + f[i].atom->depth);
    }
    k.u.mono.f = f;
    k.u.mono.n = n;
    k.u.mono.deg = deg;
    return intern(t, &k, out, err);
}

/* ---- polynomials under construction ------------------------------------- */

typedef struct poly {
    term *t;
    int n, cap;
    int64_t c;
} poly;

static bool poly_push(poly *p, int64_t coef, const ts_symx *mono)
{
    if (p->n == p->cap) {
        if (p->cap > INT_MAX / 2) return false;
        int cap = p->cap ? p->cap * 2 : 8;
        term *t = ts_mem_realloc(p->t, (size_t)cap * sizeof *t);
        if (!t) return false;
        p->t = t;
        p->cap = cap;
    }
    p->t[p->n].coef = coef;
    p->t[p->n].mono = mono;
    p->n++;
    return true;
}

/* The terms of a dim without copying; `one` backs a bare monomial, so a
 * view must not be copied after view_init. */
typedef struct view {
    const term *t;
    int n;
    int64_t c;
    term one;
} view;

static void view_init(view *v, ts_dim d)
{
    v->c = d.c;
    v->n = 0;
    v->t = NULL;
    if (!d.x) return;
    if (d.x->kind == K_SUM) {
        v->t = d.x->u.sum.t;
        v->n = d.x->u.sum.n;
        v->c = d.x->u.sum.c;
        return;
    }
    v->one.coef = 1;
    v->one.mono = d.x;
    v->t = &v->one;
    v->n = 1;
}

static int term_cmp(const void *a, const void *b)
{
    return cmp_mono(((const term *)a)->mono, ((const term *)b)->mono);
}

static ts_status poly_canon(poly *p, ts_err *err)
{
    if (p->n > 1) qsort(p->t, (size_t)p->n, sizeof *p->t, term_cmp);
    int w = 0;
    for (int i = 0; i < p->n; i++) {
        if (w > 0 && p->t[w - 1].mono == p->t[i].mono) {
            if (!ts_i64_add(p->t[w - 1].coef, p->t[i].coef, &p->t[w - 1].coef)) return ts_sym_overflow(err);
        } else {
            p->t[w++] = p->t[i];
        }
    }
    int n = 0;
    for (int i = 0; i < w; i++)
        if (p->t[i].coef != 0) p->t[n++] = p->t[i];
    p->n = n;
    return TS_OK;
}

/* p must be canonical (sorted, merged, no zero coefficients). */
static ts_status poly_dim(ts_symtab *t, const poly *p, ts_dim *out, ts_err *err)
{
    if (p->n == 0) {
        *out = ts_dim_const(p->c);
        return TS_OK;
    }
    if (p->n == 1 && p->t[0].coef == 1 && p->c == 0) {
        *out = ts_sym_node_dim(p->t[0].mono);
        return TS_OK;
    }
    ts_symx k = {.kind = K_SUM, .depth = 1};
    for (int i = 0; i < p->n; i++) k.depth = imax(k.depth, 1 + p->t[i].mono->depth);
    k.u.sum.t = p->t;
    k.u.sum.n = p->n;
    k.u.sum.c = p->c;
    const ts_symx *x;
    TS_TRY(intern(t, &k, &x, err));
    *out = ts_sym_node_dim(x);
    return TS_OK;
}

/* One coefficient of a +/- b, where either side may be absent. */
static bool combine_coef(const term *x, const term *y, bool neg, int64_t *out)
{
    int64_t a = x ? x->coef : 0, b = y ? y->coef : 0;
    return neg ? i64_sub(a, b, out) : ts_i64_add(a, b, out);
}

/* a + b or a - b, merging the two sorted term lists. */
static ts_status poly_combine(ts_symtab *t, ts_dim a, ts_dim b, bool neg, ts_dim *out, ts_err *err)
{
    view va, vb;
    view_init(&va, a);
    view_init(&vb, b);
    poly p = {0};
    ts_status s = combine_coef(&(term){va.c, NULL}, &(term){vb.c, NULL}, neg, &p.c) ? TS_OK : ts_sym_overflow(err);
    int i = 0, j = 0;
    while (s == TS_OK && (i < va.n || j < vb.n)) {
        int r = i == va.n ? 1 : j == vb.n ? -1 : cmp_mono(va.t[i].mono, vb.t[j].mono);
        const term *x = r <= 0 ? &va.t[i++] : NULL;
        const term *y = r >= 0 ? &vb.t[j++] : NULL;
        int64_t coef;
        if (!combine_coef(x, y, neg, &coef)) s = ts_sym_overflow(err);
        else if (coef != 0 && !poly_push(&p, coef, x ? x->mono : y->mono)) s = ts_sym_oom(err);
    }
    if (s == TS_OK) s = poly_dim(t, &p, out, err);
    ts_mem_free(p.t);
    return s;
}

static ts_status mono_mul(ts_symtab *t, const ts_symx *a, const ts_symx *b, const ts_symx **out,
                          ts_err *err)
{
    const factor *fa, *fb;
    factor oa, ob;
    int na = ts_sym_factors(a, &fa, &oa), nb = ts_sym_factors(b, &fb, &ob);
    factor *f = ts_mem_alloc(((size_t)na + (size_t)nb) * sizeof *f);
    if (!f) return ts_sym_oom(err);
    int i = 0, j = 0, n = 0;
    ts_status s = TS_OK;
    while (i < na || j < nb) {
        int r = i == na ? 1 : j == nb ? -1 : cmp_node(fa[i].atom, fb[j].atom);
        if (r < 0) f[n++] = fa[i++];
        else if (r > 0) f[n++] = fb[j++];
        else {
            f[n] = fa[i++];
            if (!ts_i64_add(f[n].pow, fb[j++].pow, &f[n].pow)) s = ts_sym_overflow(err);
            n++;
        }
    }
    if (s == TS_OK) s = mono_node(t, f, n, out, err);
    ts_mem_free(f);
    return s;
}

/* Push coef * mono unless coef is zero. */
static ts_status push_scaled(poly *p, int64_t x, int64_t y, const ts_symx *mono, ts_err *err)
{
    int64_t coef;
    if (!ts_i64_mul(x, y, &coef)) return ts_sym_overflow(err);
    if (coef != 0 && !poly_push(p, coef, mono)) return ts_sym_oom(err);
    return TS_OK;
}

static ts_status poly_mul_into(ts_symtab *t, const view *va, const view *vb, poly *p, ts_err *err)
{
    if (!ts_i64_mul(va->c, vb->c, &p->c)) return ts_sym_overflow(err);
    for (int i = 0; i < va->n; i++) TS_TRY(push_scaled(p, va->t[i].coef, vb->c, va->t[i].mono, err));
    for (int j = 0; j < vb->n; j++) TS_TRY(push_scaled(p, va->c, vb->t[j].coef, vb->t[j].mono, err));
    for (int i = 0; i < va->n; i++) {
        for (int j = 0; j < vb->n; j++) {
            const ts_symx *m;
            TS_TRY(mono_mul(t, va->t[i].mono, vb->t[j].mono, &m, err));
            TS_TRY(push_scaled(p, va->t[i].coef, vb->t[j].coef, m, err));
        }
    }
    return poly_canon(p, err);
}

static ts_status poly_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    view va, vb;
    view_init(&va, a);
    view_init(&vb, b);
    poly p = {0};
    ts_status s = poly_mul_into(t, &va, &vb, &p, err);
    if (s == TS_OK) s = poly_dim(t, &p, out, err);
    ts_mem_free(p.t);
    return s;
}

/* Whether g divides every coefficient and the constant of a (g != 0, -1). */
static bool divisible(ts_dim a, int64_t g)
{
    view v;
    view_init(&v, a);
    if (v.c % g) return false;
    for (int i = 0; i < v.n; i++)
        if (v.t[i].coef % g) return false;
    return true;
}

/* a / g for a divisible by g (g != 0, -1): exact, and the order of the
 * terms, which depends only on the monomials, is unchanged. */
static ts_status div_exact(ts_symtab *t, ts_dim a, int64_t g, ts_dim *out, ts_err *err)
{
    view v;
    view_init(&v, a);
    poly p = {0};
    p.c = v.c / g;
    ts_status s = TS_OK;
    for (int i = 0; i < v.n && s == TS_OK; i++)
        if (!poly_push(&p, v.t[i].coef / g, v.t[i].mono)) s = ts_sym_oom(err);
    if (s == TS_OK) s = poly_dim(t, &p, out, err);
    ts_mem_free(p.t);
    return s;
}

/* ---- arithmetic --------------------------------------------------------- */

bool ts_sym_floor_div(int64_t a, int64_t b, int64_t *out)
{
    if (b == -1) return i64_sub(0, a, out);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    *out = q;
    return true;
}

int64_t ts_sym_floor_mod(int64_t a, int64_t b)
{
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static bool is_zero(ts_dim d) { return !d.x && d.c == 0; }
static bool is_one(ts_dim d) { return !d.x && d.c == 1; }

ts_status ts_sym_d_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!ts_i64_add(a.c, b.c, &out->c)) return ts_sym_overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    if (is_zero(a) || is_zero(b)) {
        *out = is_zero(a) ? b : a;
        return TS_OK;
    }
    return poly_combine(t, a, b, false, out, err);
}

ts_status ts_sym_d_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!i64_sub(a.c, b.c, &out->c)) return ts_sym_overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    if (ts_dim_eq(a, b) || is_zero(b)) {
        *out = is_zero(b) ? a : ts_dim_const(0);
        return TS_OK;
    }
    return poly_combine(t, a, b, true, out, err);
}

static ts_status d_neg(ts_symtab *t, ts_dim a, ts_dim *out, ts_err *err)
{
    return ts_sym_d_sub(t, ts_dim_const(0), a, out, err);
}

ts_status ts_sym_d_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!ts_i64_mul(a.c, b.c, &out->c)) return ts_sym_overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    if (is_zero(a) || is_zero(b)) {
        *out = ts_dim_const(0);
        return TS_OK;
    }
    if (is_one(a) || is_one(b)) {
        *out = is_one(a) ? b : a;
        return TS_OK;
    }
    return poly_mul(t, a, b, out, err);
}

/* Rewrites by a constant divisor g; each keeps the divisor of the node that
 * remains positive and its numerator not divisible by it, so rebuilding an
 * existing DIV node from its operands gives back the same node. */
ts_status ts_sym_d_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

static ts_status div_by_const(ts_symtab *t, ts_dim a, int64_t g, ts_dim *out, ts_err *err)
{
    if (g == 1) {
        *out = a;
        return TS_OK;
    }
    if (g == -1) return d_neg(t, a, out, err);
    if (divisible(a, g)) return div_exact(t, a, g, out, err);
    if (g < 0 && g != INT64_MIN) {
        /* a/(-g) == (-a)/g exactly, so only positive divisors remain */
        ts_dim na;
        TS_TRY(d_neg(t, a, &na, err));
        return ts_sym_d_div(t, na, ts_dim_const(-g), out, err);
    }
    const ts_symx *x = a.x;
    int64_t gg;
    if (g > 0 && x->kind == K_DIV && !x->u.bin.b.x && x->u.bin.b.c > 0 &&
        ts_i64_mul(x->u.bin.b.c, g, &gg)) {
        /* floor(floor(y/m)/g) == floor(y/(m*g)) for positive m, g */
        return ts_sym_d_div(t, x->u.bin.a, ts_dim_const(gg), out, err);
    }
    return bin_node(t, K_DIV, a, ts_dim_const(g), out, err);
}

/* a / b for an atom b (a symbol, or a div/mod/max/min node) that is a
 * factor of every term of a, a without a constant: the quotient exactly
 * ((n*world)/world is n: an all_gather's cotangent scattered back). *done
 * false: not such a case, nothing built. A b that is 0 when bound would
 * have divided by zero; its quotient is the multiplier instead. */
static ts_status div_by_atom(ts_symtab *t, ts_dim a, ts_dim b, bool *done, ts_dim *out, ts_err *err)
{
    *done = false;
    view va;
    view_init(&va, a);
    if (!a.x || b.x->kind == K_SUM || b.x->kind == K_MONO || va.c != 0) return TS_OK;
    poly p = {0};
    ts_status s = TS_OK;
    bool all = true;
    for (int i = 0; s == TS_OK && all && i < va.n; i++) {
        const factor *f;
        factor one;
        int n = ts_sym_factors(va.t[i].mono, &f, &one), k = -1;
        for (int j = 0; j < n; j++)
            if (f[j].atom == b.x && f[j].pow >= 1) k = j;
        if (k < 0) {
            all = false;
            break;
        }
        factor *q = ts_mem_alloc(sizeof *q * (size_t)n);
        if (!q) {
            s = ts_sym_oom(err);
            break;
        }
        int m = 0;
        for (int j = 0; j < n; j++)
            if (j != k || f[j].pow > 1) q[m] = f[j], q[m++].pow -= j == k;
        const ts_symx *mono = NULL;
        if (m == 0) {   /* the term was coef * b */
            if (!ts_i64_add(p.c, va.t[i].coef, &p.c)) s = ts_sym_overflow(err);
        } else if ((s = mono_node(t, q, m, &mono, err)) == TS_OK && !poly_push(&p, va.t[i].coef, mono)) {
            s = ts_sym_oom(err);
        }
        ts_mem_free(q);
    }
    if (s == TS_OK && all && (s = poly_canon(&p, err)) == TS_OK && (s = poly_dim(t, &p, out, err)) == TS_OK)
        *done = true;
    ts_mem_free(p.t);
    return s;
}

ts_status ts_sym_d_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (b.x) {
        bool done = false;
        TS_TRY(div_by_atom(t, a, b, &done, out, err));
        return done ? TS_OK : bin_node(t, K_DIV, a, b, out, err);
    }
    if (b.c == 0) return ts_err_set(err, TS_ERR_SHAPE, "division by zero");
    if (!a.x) {
        if (!ts_sym_floor_div(a.c, b.c, &out->c)) return ts_sym_overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    return div_by_const(t, a, b.c, out, err);
}

ts_status ts_sym_d_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!b.x) {
        int64_t g = b.c;
        if (g == 0) return ts_err_set(err, TS_ERR_SHAPE, "modulo by zero");
        if (!a.x) {
            *out = ts_dim_const(ts_sym_floor_mod(a.c, g));
            return TS_OK;
        }
        if (g == 1 || g == -1 || divisible(a, g)) {
            *out = ts_dim_const(0);
            return TS_OK;
        }
        if (g < 0 && g != INT64_MIN) {
            /* a % -g == -((-a) % g) in floor semantics */
            ts_dim na, r;
            TS_TRY(d_neg(t, a, &na, err));
            TS_TRY(ts_sym_d_mod(t, na, ts_dim_const(-g), &r, err));
            return d_neg(t, r, out, err);
        }
    }
    if (a.x && a.x->kind == K_MOD && ts_dim_eq(a.x->u.bin.b, b)) {
        *out = a;   /* (y % b) % b == y % b */
        return TS_OK;
    }
    return bin_node(t, K_MOD, a, b, out, err);
}

/* When a and b differ by a constant (n and n+1), that decides max/min.
 * Canonical sums with the same terms differ only in the constant. */
static bool const_offset(ts_dim a, ts_dim b, int *sign)
{
    view va, vb;
    view_init(&va, a);
    view_init(&vb, b);
    if (va.n != vb.n) return false;
    for (int i = 0; i < va.n; i++)
        if (va.t[i].mono != vb.t[i].mono || va.t[i].coef != vb.t[i].coef) return false;
    *sign = cmp_i64(va.c, vb.c);
    return true;
}

static ts_status d_maxmin(ts_symtab *t, int kind, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    int sign;
    if (const_offset(a, b, &sign)) {
        *out = (sign >= 0) == (kind == K_MAX) ? a : b;
        return TS_OK;
    }
    if (cmp_dim(a, b) > 0) {
        ts_dim tmp = a;
        a = b;
        b = tmp;
    }
    return bin_node(t, kind, a, b, out, err);
}

ts_status ts_sym_d_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return d_maxmin(t, K_MAX, a, b, out, err);
}

ts_status ts_sym_d_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return d_maxmin(t, K_MIN, a, b, out, err);
}

/* ---- import ------------------------------------------------------------- */

static ts_status import_dim(ts_symtab *t, ts_dim d, ts_dim *out, ts_err *err);

static binop_fn op_of(int kind)
{
    switch (kind) {
    case K_DIV: return ts_sym_d_div;
    case K_MOD: return ts_sym_d_mod;
    case K_MAX: return ts_sym_d_max;
    default: return ts_sym_d_min;
    }
}

static ts_status import_mononode(ts_symtab *t, const ts_symx *m, const ts_symx **out, ts_err *err)
{
    ts_dim d;
    TS_TRY(import_dim(t, ts_sym_node_dim(m), &d, err));
    if (TS_NEVER(!d.x)) return ts_err_set(err, TS_ERR_INTERNAL, "import: monomial became a constant");
    *out = d.x;
    return TS_OK;
}

static int factor_cmp(const void *a, const void *b)
{
    return cmp_node(((const factor *)a)->atom, ((const factor *)b)->atom);
}

/* The order is structural, so it is the same in both tables; sorting again
 * costs little and does not rely on that. */
static ts_status import_mono(ts_symtab *t, const ts_symx *x, ts_dim *out, ts_err *err)
{
    int n = x->u.mono.n;
    factor *f = ts_mem_alloc((size_t)n * sizeof *f);
    if (!f) return ts_sym_oom(err);
    ts_status s = TS_OK;
    for (int i = 0; i < n && s == TS_OK; i++) {
        f[i].pow = x->u.mono.f[i].pow;
        s = import_mononode(t, x->u.mono.f[i].atom, &f[i].atom, err);
    }
    const ts_symx *m = NULL;
    if (s == TS_OK) {
        qsort(f, (size_t)n, sizeof *f, factor_cmp);
        s = mono_node(t, f, n, &m, err);
    }
    ts_mem_free(f);
    if (s == TS_OK) *out = ts_sym_node_dim(m);
    return s;
}

static ts_status import_sum(ts_symtab *t, const ts_symx *x, ts_dim *out, ts_err *err)
{
    poly p = {0};
    p.c = x->u.sum.c;
    ts_status s = TS_OK;
    for (int i = 0; i < x->u.sum.n && s == TS_OK; i++) {
        const ts_symx *m = NULL;
        s = import_mononode(t, x->u.sum.t[i].mono, &m, err);
        if (s == TS_OK && !poly_push(&p, x->u.sum.t[i].coef, m)) s = ts_sym_oom(err);
    }
    if (s == TS_OK) s = poly_canon(&p, err);
    if (s == TS_OK) s = poly_dim(t, &p, out, err);
    ts_mem_free(p.t);
    return s;
}

static ts_status import_dim(ts_symtab *t, ts_dim d, ts_dim *out, ts_err *err)
{
    const ts_symx *x = d.x;
    if (!x || x->tab == t) {
        *out = d;
        return TS_OK;
    }
    switch (x->kind) {
    case K_SYM:
        return ts_sym_node(t, x->u.sym.name, x->u.sym.len, out, err);
    case K_MONO:
        return import_mono(t, x, out, err);
    case K_SUM:
        return import_sum(t, x, out, err);
    default: {
        ts_dim a, b;
        TS_TRY(import_dim(t, x->u.bin.a, &a, err));
        TS_TRY(import_dim(t, x->u.bin.b, &b, err));
        return op_of(x->kind)(t, a, b, out, err);
    }
    }
}

ts_status ts_dim_import(ts_symtab *t, ts_dim d, ts_dim *out, ts_err *err)
{
    if (!t || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_import: NULL argument");
    return import_dim(t, d, out, err);
}

