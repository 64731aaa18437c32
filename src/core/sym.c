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
#include "sym.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_SYM, K_DIV, K_MOD, K_MAX, K_MIN, K_MONO, K_SUM };

/* Deep nodes are refused so that the recursive walks (compare, print,
 * evaluate, import) cannot exhaust the stack. */
#define MAX_NODE_DEPTH 1000
#define MAX_PARSE_DEPTH 64

typedef struct factor {
    const ts_symx *atom;
    int64_t pow;
} factor;

typedef struct term {
    int64_t coef;
    const ts_symx *mono;
} term;

struct ts_symx {
    ts_symx *next;              /* hash chain */
    const ts_symtab *tab;       /* owner, to catch mixed tables */
    uint64_t hash;
    int kind, depth;
    union {
        struct { const char *name; size_t len; } sym;
        struct { ts_dim a, b; } bin;
        struct { const factor *f; int n; int64_t deg; } mono;
        struct { const term *t; int n; int64_t c; } sum;
    } u;
};

typedef struct fresh_ctr {
    struct fresh_ctr *next;
    const char *prefix;
    uint64_t n;
} fresh_ctr;

struct ts_symtab {
    ts_arena *arena;
    ts_symx **buckets;
    size_t nbuckets, count;
    fresh_ctr *fresh;
};

typedef ts_status (*binop_fn)(ts_symtab *, ts_dim, ts_dim, ts_dim *, ts_err *);

static ts_dim node_dim(const ts_symx *x) { ts_dim d = {0, x}; return d; }
static int dim_depth(ts_dim d) { return d.x ? d.x->depth : 0; }
static int imax(int a, int b) { return a > b ? a : b; }

static ts_status oom(ts_err *err)
{
    return ts_err_set(err, TS_ERR_OOM, "out of memory building a dim");
}

static ts_status overflow(ts_err *err)
{
    return ts_err_set(err, TS_ERR_SHAPE, "int64 overflow");
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

static uint64_t hash_key(const ts_symx *k)
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

static const ts_symx *lookup(const ts_symtab *t, const ts_symx *k)
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
    k->hash = hash_key(k);
    k->tab = t;
    const ts_symx *hit = lookup(t, k);
    if (hit) {
        *out = hit;
        return TS_OK;
    }
    if (k->depth > MAX_NODE_DEPTH)
        return ts_err_set(err, TS_ERR_SHAPE, "dim expression nested deeper than %d", MAX_NODE_DEPTH);
    ts_symx *x = ts_arena_alloc(t->arena, sizeof *x);
    if (!x) return oom(err);
    *x = *k;
    if (!copy_payload(t->arena, x)) return oom(err);
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

static int factors_of(const ts_symx *m, const factor **f, factor *one)
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
    int na = factors_of(a, &fa, &oa), nb = factors_of(b, &fb, &ob);
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

static bool valid_name(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

static ts_status sym_node(ts_symtab *t, const char *name, size_t len, ts_dim *out, ts_err *err)
{
    ts_symx k = {.kind = K_SYM, .depth = 1};
    k.u.sym.name = name;
    k.u.sym.len = len;
    const ts_symx *x;
    TS_TRY(intern(t, &k, &x, err));
    *out = node_dim(x);
    return TS_OK;
}

static ts_status bin_node(ts_symtab *t, int kind, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    ts_symx k = {.kind = kind, .depth = 1 + imax(dim_depth(a), dim_depth(b))};
    k.u.bin.a = a;
    k.u.bin.b = b;
    const ts_symx *x;
    TS_TRY(intern(t, &k, &x, err));
    *out = node_dim(x);
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
        if (!ts_i64_add(deg, f[i].pow, &deg)) return overflow(err);
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
            if (!ts_i64_add(p->t[w - 1].coef, p->t[i].coef, &p->t[w - 1].coef)) return overflow(err);
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
        *out = node_dim(p->t[0].mono);
        return TS_OK;
    }
    ts_symx k = {.kind = K_SUM, .depth = 1};
    for (int i = 0; i < p->n; i++) k.depth = imax(k.depth, 1 + p->t[i].mono->depth);
    k.u.sum.t = p->t;
    k.u.sum.n = p->n;
    k.u.sum.c = p->c;
    const ts_symx *x;
    TS_TRY(intern(t, &k, &x, err));
    *out = node_dim(x);
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
    ts_status s = combine_coef(&(term){va.c, NULL}, &(term){vb.c, NULL}, neg, &p.c) ? TS_OK : overflow(err);
    int i = 0, j = 0;
    while (s == TS_OK && (i < va.n || j < vb.n)) {
        int r = i == va.n ? 1 : j == vb.n ? -1 : cmp_mono(va.t[i].mono, vb.t[j].mono);
        const term *x = r <= 0 ? &va.t[i++] : NULL;
        const term *y = r >= 0 ? &vb.t[j++] : NULL;
        int64_t coef;
        if (!combine_coef(x, y, neg, &coef)) s = overflow(err);
        else if (coef != 0 && !poly_push(&p, coef, x ? x->mono : y->mono)) s = oom(err);
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
    int na = factors_of(a, &fa, &oa), nb = factors_of(b, &fb, &ob);
    factor *f = ts_mem_alloc(((size_t)na + (size_t)nb) * sizeof *f);
    if (!f) return oom(err);
    int i = 0, j = 0, n = 0;
    ts_status s = TS_OK;
    while (i < na || j < nb) {
        int r = i == na ? 1 : j == nb ? -1 : cmp_node(fa[i].atom, fb[j].atom);
        if (r < 0) f[n++] = fa[i++];
        else if (r > 0) f[n++] = fb[j++];
        else {
            f[n] = fa[i++];
            if (!ts_i64_add(f[n].pow, fb[j++].pow, &f[n].pow)) s = overflow(err);
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
    if (!ts_i64_mul(x, y, &coef)) return overflow(err);
    if (coef != 0 && !poly_push(p, coef, mono)) return oom(err);
    return TS_OK;
}

static ts_status poly_mul_into(ts_symtab *t, const view *va, const view *vb, poly *p, ts_err *err)
{
    if (!ts_i64_mul(va->c, vb->c, &p->c)) return overflow(err);
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
        if (!poly_push(&p, v.t[i].coef / g, v.t[i].mono)) s = oom(err);
    if (s == TS_OK) s = poly_dim(t, &p, out, err);
    ts_mem_free(p.t);
    return s;
}

/* ---- arithmetic --------------------------------------------------------- */

static bool floor_div(int64_t a, int64_t b, int64_t *out)
{
    if (b == -1) return i64_sub(0, a, out);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    *out = q;
    return true;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static bool is_zero(ts_dim d) { return !d.x && d.c == 0; }
static bool is_one(ts_dim d) { return !d.x && d.c == 1; }

static ts_status d_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!ts_i64_add(a.c, b.c, &out->c)) return overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    if (is_zero(a) || is_zero(b)) {
        *out = is_zero(a) ? b : a;
        return TS_OK;
    }
    return poly_combine(t, a, b, false, out, err);
}

static ts_status d_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!i64_sub(a.c, b.c, &out->c)) return overflow(err);
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
    return d_sub(t, ts_dim_const(0), a, out, err);
}

static ts_status d_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!a.x && !b.x) {
        if (!ts_i64_mul(a.c, b.c, &out->c)) return overflow(err);
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
static ts_status d_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

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
        return d_div(t, na, ts_dim_const(-g), out, err);
    }
    const ts_symx *x = a.x;
    int64_t gg;
    if (g > 0 && x->kind == K_DIV && !x->u.bin.b.x && x->u.bin.b.c > 0 &&
        ts_i64_mul(x->u.bin.b.c, g, &gg)) {
        /* floor(floor(y/m)/g) == floor(y/(m*g)) for positive m, g */
        return d_div(t, x->u.bin.a, ts_dim_const(gg), out, err);
    }
    return bin_node(t, K_DIV, a, ts_dim_const(g), out, err);
}

static ts_status d_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (b.x) return bin_node(t, K_DIV, a, b, out, err);
    if (b.c == 0) return ts_err_set(err, TS_ERR_SHAPE, "division by zero");
    if (!a.x) {
        if (!floor_div(a.c, b.c, &out->c)) return overflow(err);
        out->x = NULL;
        return TS_OK;
    }
    return div_by_const(t, a, b.c, out, err);
}

static ts_status d_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (!b.x) {
        int64_t g = b.c;
        if (g == 0) return ts_err_set(err, TS_ERR_SHAPE, "modulo by zero");
        if (!a.x) {
            *out = ts_dim_const(floor_mod(a.c, g));
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
            TS_TRY(d_mod(t, na, ts_dim_const(-g), &r, err));
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

static ts_status d_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return d_maxmin(t, K_MAX, a, b, out, err);
}

static ts_status d_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return d_maxmin(t, K_MIN, a, b, out, err);
}

/* ---- public arithmetic -------------------------------------------------- */

static const char *dim_text(ts_dim d, char *buf, size_t n)
{
    ts_buf b = {0};
    ts_dim_print(&b, d);
    snprintf(buf, n, "%s", b.data && !b.oom ? b.data : "?");
    ts_buf_free(&b);
    return buf;
}

static ts_status check_args(const ts_symtab *t, ts_dim a, ts_dim b, const ts_dim *out, ts_err *err)
{
    if (!t || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "dim arithmetic: NULL table or result");
    if ((a.x && a.x->tab != t) || (b.x && b.x->tab != t))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "dim from another symbol table");
    return TS_OK;
}

/* Runs an operation and, when it fails for a reason of its own, puts the
 * operands in front of the message ("n / 0: division by zero"). */
static ts_status run_op(ts_symtab *t, binop_fn fn, const char *op, ts_dim a, ts_dim b, ts_dim *out,
                        ts_err *err)
{
    TS_TRY(check_args(t, a, b, out, err));
    bool fresh = err && err->code == TS_OK;
    ts_dim r;
    ts_status s = fn(t, a, b, &r, err);
    if (s == TS_OK) {
        *out = r;
    } else if (fresh && s == TS_ERR_SHAPE) {
        char ta[128], tb[128];
        dim_text(a, ta, sizeof ta);
        dim_text(b, tb, sizeof tb);
        if (op[0] == 'm') ts_err_prefix(err, "%s(%s, %s): ", op, ta, tb);
        else ts_err_prefix(err, "%s %s %s: ", ta, op, tb);
    }
    return s;
}

ts_status ts_dim_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_add, "+", a, b, out, err);
}

ts_status ts_dim_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_sub, "-", a, b, out, err);
}

ts_status ts_dim_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_mul, "*", a, b, out, err);
}

ts_status ts_dim_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_div, "/", a, b, out, err);
}

ts_status ts_dim_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_mod, "%", a, b, out, err);
}

ts_status ts_dim_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_max, "max", a, b, out, err);
}

ts_status ts_dim_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, d_min, "min", a, b, out, err);
}

/* ---- symbols ------------------------------------------------------------ */

ts_status ts_dim_sym(ts_symtab *t, const char *name, ts_dim *out, ts_err *err)
{
    if (!t || !name || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_sym: NULL argument");
    size_t len = strlen(name);
    if (!valid_name(name, len))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "'%s' is not a valid symbol name", name);
    return sym_node(t, name, len, out, err);
}

static bool sym_exists(const ts_symtab *t, const char *name)
{
    ts_symx k = {.kind = K_SYM};
    k.u.sym.name = name;
    k.u.sym.len = strlen(name);
    k.hash = hash_key(&k);
    return lookup(t, &k) != NULL;
}

/* Each prefix keeps its own counter so that n fresh symbols cost O(n). */
static fresh_ctr *fresh_counter(ts_symtab *t, const char *prefix)
{
    for (fresh_ctr *c = t->fresh; c; c = c->next)
        if (!strcmp(c->prefix, prefix)) return c;
    fresh_ctr *c = ts_arena_alloc(t->arena, sizeof *c);
    if (!c || !(c->prefix = ts_arena_strdup(t->arena, prefix))) return NULL;
    c->next = t->fresh;
    t->fresh = c;
    return c;
}

ts_status ts_dim_fresh(ts_symtab *t, const char *prefix, ts_dim *out, ts_err *err)
{
    if (!t || !prefix || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_fresh: NULL argument");
    size_t plen = strlen(prefix);
    if (!valid_name(prefix, plen))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "'%s' is not a valid symbol prefix", prefix);
    fresh_ctr *c = fresh_counter(t, prefix);
    char *name = plen < SIZE_MAX - 32 ? ts_mem_alloc(plen + 32) : NULL;
    if (!c || !name) {
        ts_mem_free(name);
        return oom(err);
    }
    do {
        snprintf(name, plen + 32, "%s%" PRIu64, prefix, c->n++);
    } while (sym_exists(t, name));
    ts_status s = sym_node(t, name, strlen(name), out, err);
    ts_mem_free(name);
    return s;
}

const char *ts_dim_sym_name(ts_dim d)
{
    return d.x && d.x->kind == K_SYM ? d.x->u.sym.name : NULL;
}

/* ---- import ------------------------------------------------------------- */

static ts_status import_dim(ts_symtab *t, ts_dim d, ts_dim *out, ts_err *err);

static binop_fn op_of(int kind)
{
    switch (kind) {
    case K_DIV: return d_div;
    case K_MOD: return d_mod;
    case K_MAX: return d_max;
    default: return d_min;
    }
}

static ts_status import_mononode(ts_symtab *t, const ts_symx *m, const ts_symx **out, ts_err *err)
{
    ts_dim d;
    TS_TRY(import_dim(t, node_dim(m), &d, err));
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
    if (!f) return oom(err);
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
    if (s == TS_OK) *out = node_dim(m);
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
        if (s == TS_OK && !poly_push(&p, x->u.sum.t[i].coef, m)) s = oom(err);
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
        return sym_node(t, x->u.sym.name, x->u.sym.len, out, err);
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

/* ---- printing ----------------------------------------------------------- *
 * Precedence of the natural text of a dim: a sum ("a+b"), a term ("a*b",
 * "a/b", "2*n") or a unary ("n", "-n", "max(a, b)", "-3"). A context asks
 * for a least precedence and says whether the text may begin with '-';
 * when it may not, or the precedence is too low, the dim gets parentheses.
 * A leading '-' is only allowed at the start of the text, of a parenthesis
 * or of a max/min argument: "y+(-n/s)" rather than the legal "y+-n/s". */

enum { P_SUM, P_TERM, P_UNARY };

static bool is_single_term(const ts_symx *x)
{
    return x->kind == K_SUM && x->u.sum.n == 1 && x->u.sum.c == 0;
}

static int nat_prec(ts_dim d)
{
    if (!d.x) return P_UNARY;
    switch (d.x->kind) {
    case K_SYM: case K_MAX: case K_MIN: return P_UNARY;
    case K_DIV: case K_MOD: case K_MONO: return P_TERM;
    default: break;
    }
    if (!is_single_term(d.x)) return P_SUM;
    const term *tm = &d.x->u.sum.t[0];
    return tm->coef == -1 && tm->mono->kind != K_MONO ? P_UNARY : P_TERM;
}

/* Positive terms print first, so a sum leads with '-' only when all its
 * terms are negative. */
static const term *first_printed(const ts_symx *x)
{
    for (int i = 0; i < x->u.sum.n; i++)
        if (x->u.sum.t[i].coef > 0) return &x->u.sum.t[i];
    return &x->u.sum.t[0];
}

static bool nat_neg(ts_dim d)
{
    if (!d.x) return d.c < 0;
    const ts_symx *x = d.x;
    switch (x->kind) {
    case K_DIV: case K_MOD:
        return nat_prec(x->u.bin.a) >= P_TERM && nat_neg(x->u.bin.a);
    case K_MONO:
        return nat_neg(node_dim(x->u.mono.f[0].atom));
    case K_SUM: {
        const term *f = first_printed(x);
        return f->coef < 0 || (f->coef == 1 && nat_neg(node_dim(f->mono)));
    }
    default:
        return false;
    }
}

static void print_nat(ts_buf *b, ts_dim d);

static void print_in(ts_buf *b, ts_dim d, int need, bool lead)
{
    if (nat_prec(d) < need || (!lead && nat_neg(d))) {
        ts_buf_puts(b, "(");
        print_nat(b, d);
        ts_buf_puts(b, ")");
    } else {
        print_nat(b, d);
    }
}

/* Powers print as repeated factors (n*n); the grammar has no '^'. */
static void print_mono(ts_buf *b, const ts_symx *m, int need, bool lead)
{
    const factor *f;
    factor one;
    int n = factors_of(m, &f, &one);
    bool first = true;
    for (int i = 0; i < n; i++) {
        for (int64_t k = 0; k < f[i].pow && !b->oom; k++) {
            if (!first) ts_buf_puts(b, "*");
            print_in(b, node_dim(f[i].atom), first ? need : P_UNARY, first && lead);
            first = false;
        }
    }
}

/* INT64_MIN has no positive magnitude to subtract, so it is added as a
 * parenthesised negative literal. */
static void print_term(ts_buf *b, int64_t coef, const ts_symx *mono, bool first)
{
    if (first) {
        if (coef == 1) {
            print_mono(b, mono, P_TERM, true);
            return;
        }
        if (coef == -1) ts_buf_puts(b, "-");
        else ts_buf_printf(b, "%" PRId64 "*", coef);
        print_mono(b, mono, P_UNARY, false);
        return;
    }
    if (coef == INT64_MIN) {
        ts_buf_printf(b, "+(%" PRId64 ")*", coef);
        print_mono(b, mono, P_UNARY, false);
        return;
    }
    ts_buf_puts(b, coef > 0 ? "+" : "-");
    int64_t mag = coef > 0 ? coef : -coef;
    if (mag == 1) {
        print_mono(b, mono, P_TERM, false);
        return;
    }
    ts_buf_printf(b, "%" PRId64 "*", mag);
    print_mono(b, mono, P_UNARY, false);
}

static void print_sum(ts_buf *b, const ts_symx *x)
{
    bool first = true;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < x->u.sum.n; i++) {
            const term *tm = &x->u.sum.t[i];
            if ((tm->coef > 0) != (pass == 0)) continue;
            print_term(b, tm->coef, tm->mono, first);
            first = false;
        }
    }
    int64_t c = x->u.sum.c;
    if (c > 0) ts_buf_printf(b, "+%" PRId64, c);
    else if (c == INT64_MIN) ts_buf_printf(b, "+(%" PRId64 ")", c);
    else if (c < 0) ts_buf_printf(b, "-%" PRId64, -c);
}

static void print_nat(ts_buf *b, ts_dim d)
{
    const ts_symx *x = d.x;
    if (!x) {
        ts_buf_printf(b, "%" PRId64, d.c);
        return;
    }
    switch (x->kind) {
    case K_SYM:
        ts_buf_puts(b, x->u.sym.name);
        return;
    case K_DIV: case K_MOD:
        print_in(b, x->u.bin.a, P_TERM, true);
        ts_buf_puts(b, x->kind == K_DIV ? "/" : "%");
        print_in(b, x->u.bin.b, P_UNARY, false);
        return;
    case K_MAX: case K_MIN:
        ts_buf_puts(b, x->kind == K_MAX ? "max(" : "min(");
        print_in(b, x->u.bin.a, P_SUM, true);
        ts_buf_puts(b, ", ");
        print_in(b, x->u.bin.b, P_SUM, true);
        ts_buf_puts(b, ")");
        return;
    case K_MONO:
        print_mono(b, x, P_TERM, true);
        return;
    default:
        print_sum(b, x);
        return;
    }
}

void ts_dim_print(ts_buf *b, ts_dim d)
{
    if (b) print_nat(b, d);
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct parser {
    ts_symtab *t;
    const char *s;
    size_t len, pos, errpos;
    int depth;
    ts_err *err;
} parser;

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_name_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_name_char(int c) { return is_name_start(c) || is_digit(c); }

/* The next significant character, or -1 at the end (len or NUL). */
static int peek(parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')) p->pos++;
    if (p->pos >= p->len || p->s[p->pos] == '\0') return -1;
    return (unsigned char)p->s[p->pos];
}

static ts_status fail(parser *p, size_t at, const char *msg)
{
    p->errpos = at;
    return ts_err_set(p->err, TS_ERR_PARSE, "offset %zu: %s", at, msg);
}

static ts_status fail_here(parser *p)
{
    int c = peek(p);
    if (c < 0) return fail(p, p->pos, "unexpected end of expression");
    char msg[64];
    if (c >= 0x20 && c < 0x7f) snprintf(msg, sizeof msg, "unexpected '%c'", c);
    else snprintf(msg, sizeof msg, "unexpected byte 0x%02x", (unsigned)c);
    return fail(p, p->pos, msg);
}

/* Arithmetic errors in the text ("3/0", overflowing folds) are parse errors
 * at the operator; running out of memory stays what it is. */
static ts_status apply(parser *p, size_t at, binop_fn fn, ts_dim a, ts_dim b, ts_dim *out)
{
    ts_err le = {0};
    ts_status s = fn(p->t, a, b, out, &le);
    if (s == TS_OK) return s;
    p->errpos = at;
    if (s == TS_ERR_OOM) return ts_err_set(p->err, s, "%s", le.msg);
    return ts_err_set(p->err, TS_ERR_PARSE, "offset %zu: %s", at, le.msg);
}

static ts_status enter(parser *p)
{
    if (++p->depth > MAX_PARSE_DEPTH) return fail(p, p->pos, "expression nested too deeply");
    return TS_OK;
}

static ts_status expect(parser *p, int c)
{
    if (peek(p) != c) {
        char msg[32];
        snprintf(msg, sizeof msg, "expected '%c'", c);
        return fail(p, p->pos, msg);
    }
    p->pos++;
    return TS_OK;
}

/* A literal negated in place, so that -9223372036854775808 is readable. */
static ts_status parse_int(parser *p, bool neg, ts_dim *out)
{
    size_t start = p->pos;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    while (p->pos < p->len && is_digit(p->s[p->pos])) {
        unsigned d = (unsigned)(p->s[p->pos] - '0');
        if (v > (limit - d) / 10) return fail(p, start, "integer literal out of range");
        v = v * 10 + d;
        p->pos++;
    }
    if (!neg) *out = ts_dim_const((int64_t)v);
    else *out = ts_dim_const(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
    return TS_OK;
}

static ts_status parse_expr(parser *p, ts_dim *out);

static ts_status parse_call(parser *p, size_t at, binop_fn fn, ts_dim *out)
{
    ts_dim a, b;
    TS_TRY(expect(p, '('));
    TS_TRY(parse_expr(p, &a));
    TS_TRY(expect(p, ','));
    TS_TRY(parse_expr(p, &b));
    TS_TRY(expect(p, ')'));
    return apply(p, at, fn, a, b, out);
}

/* "max"/"min" are functions only when a '(' follows; otherwise names. */
static ts_status parse_name(parser *p, ts_dim *out)
{
    size_t start = p->pos;
    while (p->pos < p->len && is_name_char((unsigned char)p->s[p->pos])) p->pos++;
    size_t len = p->pos - start;
    const char *name = p->s + start;
    bool fn = len == 3 && (!memcmp(name, "max", 3) || !memcmp(name, "min", 3));
    if (fn && peek(p) == '(') return parse_call(p, start, name[1] == 'a' ? d_max : d_min, out);
    ts_err le = {0};
    ts_status s = sym_node(p->t, name, len, out, &le);
    if (s != TS_OK) {
        p->errpos = start;
        return ts_err_set(p->err, s, "offset %zu: %s", start, le.msg);
    }
    return TS_OK;
}

static ts_status parse_atom(parser *p, ts_dim *out)
{
    int c = peek(p);
    if (is_digit(c)) return parse_int(p, false, out);
    if (is_name_start(c)) return parse_name(p, out);
    if (c != '(') return fail_here(p);
    p->pos++;
    TS_TRY(parse_expr(p, out));
    return expect(p, ')');
}

static ts_status parse_unary(parser *p, ts_dim *out)
{
    if (peek(p) != '-') return parse_atom(p, out);
    size_t at = p->pos++;
    TS_TRY(enter(p));
    if (is_digit(peek(p))) {
        TS_TRY(parse_int(p, true, out));
    } else {
        ts_dim v;
        TS_TRY(parse_unary(p, &v));
        TS_TRY(apply(p, at, d_sub, ts_dim_const(0), v, out));
    }
    p->depth--;
    return TS_OK;
}

static binop_fn mulop(int c)
{
    return c == '*' ? d_mul : c == '/' ? d_div : c == '%' ? d_mod : NULL;
}

static ts_status parse_term(parser *p, ts_dim *out)
{
    ts_dim acc, rhs;
    TS_TRY(parse_unary(p, &acc));
    for (binop_fn fn; (fn = mulop(peek(p)));) {
        size_t at = p->pos++;
        TS_TRY(parse_unary(p, &rhs));
        TS_TRY(apply(p, at, fn, acc, rhs, &acc));
    }
    *out = acc;
    return TS_OK;
}

static ts_status parse_expr(parser *p, ts_dim *out)
{
    ts_dim acc, rhs;
    TS_TRY(enter(p));
    TS_TRY(parse_term(p, &acc));
    for (int c; (c = peek(p)) == '+' || c == '-';) {
        size_t at = p->pos++;
        TS_TRY(parse_term(p, &rhs));
        TS_TRY(apply(p, at, c == '+' ? d_add : d_sub, acc, rhs, &acc));
    }
    p->depth--;
    *out = acc;
    return TS_OK;
}

ts_status ts_dim_parse(ts_symtab *t, const char *s, size_t len, ts_dim *out, size_t *used,
                       ts_err *err)
{
    if (!t || !s || !out) {
        if (used) *used = 0;
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_parse: NULL argument");
    }
    parser p = {.t = t, .s = s, .len = len, .err = err};
    ts_dim d;
    ts_status st = parse_expr(&p, &d);
    if (st == TS_OK) *out = d;
    if (used) *used = st == TS_OK ? p.pos : p.errpos;
    return st;
}

/* ---- bindings and evaluation -------------------------------------------- */

void ts_symbind_free(ts_symbind *b)
{
    if (!b) return;
    ts_mem_free(b->syms);
    ts_mem_free(b->vals);
    b->syms = NULL;
    b->vals = NULL;
    b->n = b->cap = 0;
}

void ts_symbind_clear(ts_symbind *b)
{
    if (b) b->n = 0;
}

static int bind_find(const ts_symbind *b, const ts_symx *x)
{
    for (int i = 0; b && i < b->n; i++)
        if (b->syms[i] == x) return i;
    return -1;
}

/* Each array is committed as soon as it grows, so a failure half way
 * leaves a consistent (if roomier) map. */
static bool bind_grow(ts_symbind *b)
{
    if (b->n < b->cap) return true;
    if (b->cap > INT_MAX / 2) return false;
    int cap = b->cap ? b->cap * 2 : 8;
    const ts_symx **s = ts_mem_realloc((void *)b->syms, (size_t)cap * sizeof *s);
    if (!s) return false;
    b->syms = s;
    int64_t *v = ts_mem_realloc(b->vals, (size_t)cap * sizeof *v);
    if (!v) return false;
    b->vals = v;
    b->cap = cap;
    return true;
}

ts_status ts_symbind_set(ts_symbind *b, ts_dim sym, int64_t v, ts_err *err)
{
    if (!b || !sym.x || sym.x->kind != K_SYM)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_symbind_set: not a symbol");
    int i = bind_find(b, sym.x);
    if (i >= 0) {
        if (b->vals[i] == v) return TS_OK;
        return ts_err_set(err, TS_ERR_SHAPE, "symbol '%s' is %" PRId64 " here but %" PRId64 " elsewhere",
                          sym.x->u.sym.name, v, b->vals[i]);
    }
    if (!bind_grow(b)) return ts_err_set(err, TS_ERR_OOM, "out of memory binding a symbol");
    b->syms[b->n] = sym.x;
    b->vals[b->n] = v;
    b->n++;
    return TS_OK;
}

bool ts_symbind_get(const ts_symbind *b, ts_dim sym, int64_t *v)
{
    int i = sym.x ? bind_find(b, sym.x) : -1;
    if (i < 0) return false;
    if (v) *v = b->vals[i];
    return true;
}

static ts_status eval_fail(ts_err *err, const char *what, const ts_symx *x)
{
    char buf[256];
    return ts_err_set(err, TS_ERR_SHAPE, "%s evaluating %s", what, dim_text(node_dim(x), buf, sizeof buf));
}

static ts_status eval_dim(ts_dim d, const ts_symbind *b, int64_t *v, ts_err *err);

static ts_status eval_bin(const ts_symx *x, const ts_symbind *b, int64_t *v, ts_err *err)
{
    int64_t l, r;
    TS_TRY(eval_dim(x->u.bin.a, b, &l, err));
    TS_TRY(eval_dim(x->u.bin.b, b, &r, err));
    switch (x->kind) {
    case K_MAX: *v = l > r ? l : r; return TS_OK;
    case K_MIN: *v = l < r ? l : r; return TS_OK;
    default: break;
    }
    if (r == 0) return eval_fail(err, "division by zero", x);
    if (x->kind == K_MOD) *v = floor_mod(l, r);
    else if (!floor_div(l, r, v)) return eval_fail(err, "int64 overflow", x);
    return TS_OK;
}

/* Square-and-multiply. A square is only taken when a higher bit of e will
 * use it, so it is no larger in magnitude than the result and a failed
 * check means the result itself overflows. */
static bool ipow(int64_t base, int64_t e, int64_t *out)
{
    int64_t r = 1;
    if (base == 0 || base == 1) {
        *out = base;
        return true;
    }
    if (base == -1) {
        *out = (e & 1) ? -1 : 1;
        return true;
    }
    while (e) {
        if ((e & 1) && !ts_i64_mul(r, base, &r)) return false;
        e >>= 1;
        if (e && !ts_i64_mul(base, base, &base)) return false;
    }
    *out = r;
    return true;
}

static ts_status eval_mono(const ts_symx *m, const ts_symbind *b, int64_t *v, ts_err *err)
{
    const factor *f;
    factor one;
    int n = factors_of(m, &f, &one);
    int64_t acc = 1;
    for (int i = 0; i < n; i++) {
        int64_t a, p;
        TS_TRY(eval_dim(node_dim(f[i].atom), b, &a, err));
        if (!ipow(a, f[i].pow, &p) || !ts_i64_mul(acc, p, &acc)) return eval_fail(err, "int64 overflow", m);
    }
    *v = acc;
    return TS_OK;
}

static ts_status eval_sum(const ts_symx *x, const ts_symbind *b, int64_t *v, ts_err *err)
{
    int64_t acc = x->u.sum.c;
    for (int i = 0; i < x->u.sum.n; i++) {
        int64_t m;
        TS_TRY(eval_mono(x->u.sum.t[i].mono, b, &m, err));
        if (!ts_i64_mul(m, x->u.sum.t[i].coef, &m) || !ts_i64_add(acc, m, &acc))
            return eval_fail(err, "int64 overflow", x);
    }
    *v = acc;
    return TS_OK;
}

static ts_status eval_dim(ts_dim d, const ts_symbind *b, int64_t *v, ts_err *err)
{
    const ts_symx *x = d.x;
    if (!x) {
        *v = d.c;
        return TS_OK;
    }
    switch (x->kind) {
    case K_SYM: {
        int i = bind_find(b, x);
        if (i < 0) return ts_err_set(err, TS_ERR_SHAPE, "unbound symbol '%s'", x->u.sym.name);
        *v = b->vals[i];
        return TS_OK;
    }
    case K_MONO: return eval_mono(x, b, v, err);
    case K_SUM: return eval_sum(x, b, v, err);
    default: return eval_bin(x, b, v, err);
    }
}

ts_status ts_dim_eval(ts_dim d, const ts_symbind *b, int64_t *out, ts_err *err)
{
    if (!out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_eval: NULL result");
    return eval_dim(d, b, out, err);
}

bool ts_dim_is_bound(ts_dim d, const ts_symbind *b)
{
    const ts_symx *x = d.x;
    if (!x) return true;
    switch (x->kind) {
    case K_SYM:
        return bind_find(b, x) >= 0;
    case K_MONO:
        for (int i = 0; i < x->u.mono.n; i++)
            if (!ts_dim_is_bound(node_dim(x->u.mono.f[i].atom), b)) return false;
        return true;
    case K_SUM:
        for (int i = 0; i < x->u.sum.n; i++)
            if (!ts_dim_is_bound(node_dim(x->u.sum.t[i].mono), b)) return false;
        return true;
    default:
        return ts_dim_is_bound(x->u.bin.a, b) && ts_dim_is_bound(x->u.bin.b, b);
    }
}

ts_status ts_dim_match(ts_dim d, int64_t v, ts_symbind *b, ts_err *err)
{
    if (!b) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_match: NULL bindings");
    int64_t want;
    if (d.x && d.x->kind == K_SYM && !ts_symbind_get(b, d, &want)) return ts_symbind_set(b, d, v, err);
    TS_TRY(ts_dim_eval(d, b, &want, err));
    if (want == v) return TS_OK;
    char buf[256];
    return ts_err_set(err, TS_ERR_SHAPE, "dim %s: expected %" PRId64 ", got %" PRId64,
                      dim_text(d, buf, sizeof buf), want, v);
}
