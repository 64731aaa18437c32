/* sym_names.c — named and fresh symbols. */
#include "sym_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

/* ---- symbols ------------------------------------------------------------ */

ts_status ts_dim_sym(ts_symtab *t, const char *name, ts_dim *out, ts_err *err)
{
    if (!t || !name || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_sym: NULL argument");
    size_t len = strlen(name);
    if (!valid_name(name, len))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "'%s' is not a valid symbol name", name);
    return ts_sym_node(t, name, len, out, err);
}

static bool sym_exists(const ts_symtab *t, const char *name)
{
    ts_symx k = {.kind = K_SYM};
    k.u.sym.name = name;
    k.u.sym.len = strlen(name);
    k.hash = ts_sym_hash_key(&k);
    return ts_sym_lookup(t, &k) != NULL;
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
        return ts_sym_oom(err);
    }
    do {
        snprintf(name, plen + 32, "%s%" PRIu64, prefix, c->n++);
    } while (sym_exists(t, name));
    ts_status s = ts_sym_node(t, name, strlen(name), out, err);
    ts_mem_free(name);
    return s;
}

const char *ts_dim_sym_name(ts_dim d)
{
    return d.x && d.x->kind == K_SYM ? d.x->u.sym.name : NULL;
}
