/* sym_internal.h — the node layout of symbolic dims, shared by sym.c
 * (canonical arithmetic), sym_text.c (print/parse) and sym_eval.c
 * (bindings and evaluation). Not for use outside src/core/sym*.c. */
#ifndef TS_SYM_INTERNAL_H
#define TS_SYM_INTERNAL_H

#include "sym.h"

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

ts_status ts_sym_d_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_sym_d_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
int ts_sym_factors(const ts_symx *m, const factor **f, factor *one);
ts_status ts_sym_oom(ts_err *err);
ts_status ts_sym_node(ts_symtab *t, const char *name, size_t len, ts_dim *out, ts_err *err);
ts_dim ts_sym_node_dim(const ts_symx *x);
const char *ts_sym_dim_text(ts_dim d, char *buf, size_t n);
bool ts_sym_floor_div(int64_t a, int64_t b, int64_t *out);
ts_status ts_sym_overflow(ts_err *err);
int64_t ts_sym_floor_mod(int64_t a, int64_t b);
uint64_t ts_sym_hash_key(const ts_symx *k);
const ts_symx *ts_sym_lookup(const ts_symtab *t, const ts_symx *k);

#endif
