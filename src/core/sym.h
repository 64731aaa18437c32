/* sym.h — symbolic dimensions.
 *
 * A dim (ts_dim) is either a constant or an expression over named symbols
 * (`batch`, `seq*heads`, `(h+2*p-k)/s+1`). Expressions are kept in a
 * canonical form and interned ("hash-consed") in a symbol table, so two dims
 * are structurally equal exactly when ts_dim_eq says so, in O(1):
 * `batch*seq` built twice compares equal, and `(n+2-3)/1+1` simplifies to n.
 *
 * Canonical form: a sum of terms coef * monomial, where a monomial is a
 * product of atoms raised to positive powers, and an atom is a symbol or an
 * opaque operation that does not distribute: floordiv(a, b), mod(a, b),
 * max(a, b), min(a, b). Terms and factors are sorted by a total order on
 * interned nodes, so equal polynomials have one representation. Division by
 * a constant that divides every coefficient is exact and disappears;
 * division by 1 is the identity; anything over constants folds.
 *
 * Integer semantics: dims are int64; `/` is floor division and `%` is the
 * matching modulo (result has the sign of the divisor), as in Python.
 * Folding that overflows int64, and division or modulo by constant zero,
 * fail with TS_ERR_SHAPE.
 *
 * The symbol table is an arena owner: every expression built through it
 * lives until ts_symtab_free. A graph owns one.
 */
#ifndef TS_SYM_H
#define TS_SYM_H

#include "core.h"

typedef struct ts_symx ts_symx;      /* an interned, canonical expression */
typedef struct ts_symtab ts_symtab;

/* x == NULL: the constant c. Otherwise the expression x (c is 0). A
 * constant is never represented by an interned node. */
typedef struct ts_dim {
    int64_t c;
    const ts_symx *x;
} ts_dim;

ts_symtab *ts_symtab_new(void);
void ts_symtab_free(ts_symtab *t);

static inline ts_dim ts_dim_const(int64_t c) { ts_dim d = {c, NULL}; return d; }
static inline bool ts_dim_is_const(ts_dim d) { return d.x == NULL; }
static inline bool ts_dim_eq(ts_dim a, ts_dim b) { return a.x == b.x && a.c == b.c; }

/* The named symbol (created on first use). Names are C identifiers. */
ts_status ts_dim_sym(ts_symtab *t, const char *name, ts_dim *out, ts_err *err);
/* A new symbol named prefix<N> that does not exist yet in the table (for
 * unknown and data-dependent sizes). */
ts_status ts_dim_fresh(ts_symtab *t, const char *prefix, ts_dim *out, ts_err *err);
/* If d is exactly one symbol, its name; otherwise NULL. */
const char *ts_dim_sym_name(ts_dim d);

/* Arithmetic with folding and canonicalisation. */
ts_status ts_dim_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_dim_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_dim_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_dim_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err); /* floor */
ts_status ts_dim_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_dim_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);
ts_status ts_dim_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

/* Copy an expression built in another table into t (same structure, same
 * symbol names). Used when values move between graphs. */
ts_status ts_dim_import(ts_symtab *t, ts_dim d, ts_dim *out, ts_err *err);

/* Canonical text, e.g. "batch*seq", "(h+2*p-k)/s+1", "max(a, b)".
 * Grammar (also what ts_dim_parse reads):
 *   expr   := term (('+' | '-') term)*
 *   term   := unary (('*' | '/' | '%') unary)*
 *   unary  := '-' unary | atom
 *   atom   := INT | NAME | '(' expr ')' | ('max' | 'min') '(' expr ',' expr ')'
 * The printer emits the fewest parentheses that parse back to the same
 * expression and puts no spaces around operators (one after a comma).
 * Appends to b. */
void ts_dim_print(ts_buf *b, ts_dim d);

/* Parse one expression starting at s[0] (at most len bytes). Stops at the
 * first character that cannot continue the expression and reports how many
 * bytes were used in *used. Leading/inner blanks (space, tab) are skipped.
 * On error *used is the offset of the offending character. */
ts_status ts_dim_parse(ts_symtab *t, const char *s, size_t len, ts_dim *out,
                       size_t *used, ts_err *err);

/* ---- evaluation ------------------------------------------------------- */

/* Bindings of symbols to values, for one run. A small map owned by the
 * caller; it refers to symbols of one table. */
typedef struct ts_symbind {
    const ts_symx **syms;
    int64_t *vals;
    int n, cap;
} ts_symbind;

void ts_symbind_free(ts_symbind *b);
void ts_symbind_clear(ts_symbind *b);
/* Bind symbol sym (a dim that is exactly one symbol) to v; rebinding a
 * symbol to a different value is TS_ERR_SHAPE ("n is 3 here but 4 there"). */
ts_status ts_symbind_set(ts_symbind *b, ts_dim sym, int64_t v, ts_err *err);
bool ts_symbind_get(const ts_symbind *b, ts_dim sym, int64_t *v);

/* The value of d under b. An unbound symbol, division by zero or overflow
 * is TS_ERR_SHAPE naming the symbol or the expression. */
ts_status ts_dim_eval(ts_dim d, const ts_symbind *b, int64_t *out, ts_err *err);
/* True when every symbol of d is bound in b. */
bool ts_dim_is_bound(ts_dim d, const ts_symbind *b);

/* Unify a declared dim with a concrete size: if d is a lone unbound symbol,
 * bind it; otherwise evaluate and compare. TS_ERR_SHAPE on mismatch, with a
 * message like "dim batch*2: expected 6, got 5". */
ts_status ts_dim_match(ts_dim d, int64_t v, ts_symbind *b, ts_err *err);

#endif
