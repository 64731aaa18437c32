/* op.c — the primitive table, expanded from ops.def, and its schemas. */
#include "ir/ir.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static ts_op_info table[TS_OP_COUNT] = {
#define TS_OP(id, nm, mi, ma, no, ty, fl, at, rg) \
    [TS_OP_##id] = {.name = nm, .min_in = mi, .max_in = ma, .n_out = no, \
                    .types = ty, .flags = fl, .schema_text = at, .region_names = {rg}},
#include "ops.def"
#undef TS_OP
};

/* Storage for the words cut out of schema strings (names, enum values). */
static char words[4096];
static size_t words_used;

static const char *keep(const char *s, size_t n)
{
    if (TS_NEVER(words_used + n + 1 > sizeof words)) return ""; /* the table outgrew the buffer */
    char *p = words + words_used;
    memcpy(p, s, n);
    p[n] = 0;
    words_used += n + 1;
    return p;
}

static const struct {
    const char *name;
    ts_attr_kind kind;
} kinds[] = {
    {"int", TS_ATTR_INT}, {"ints", TS_ATTR_INTS}, {"float", TS_ATTR_FLOAT},
    {"dtype", TS_ATTR_DTYPE}, {"str", TS_ATTR_STR}, {"dims", TS_ATTR_DIMS},
    {"tensor", TS_ATTR_TENSOR}, {"enum", TS_ATTR_ENUM},
};

/* Parse a default written after '=' in a schema: an integer, "[a,b]",
 * an enum word or a string. The table is ours, so malformed text is a
 * programming error caught by test_ops. */
static void parse_default(ts_attr_schema *a, const char *s, size_t n)
{
    a->has_default = true;
    if (a->kind == TS_ATTR_INTS) {
        for (size_t i = 1; i < n && a->def_n < 8; i++) {
            if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
                char *end;
                a->def_ints[a->def_n++] = strtoll(s + i, &end, 10);
                i = (size_t)(end - s);
            }
        }
    } else if (a->kind == TS_ATTR_ENUM) {
        for (int k = 0; k < a->n_enum; k++)
            if (strlen(a->enum_names[k]) == n && memcmp(a->enum_names[k], s, n) == 0) a->def_i = k;
    } else if (a->kind == TS_ATTR_STR) {
        a->def_s = keep(s, n);
    } else if (a->kind == TS_ATTR_FLOAT) {
        a->def_f = strtod(s, NULL);
    } else {
        a->def_i = strtoll(s, NULL, 10);
    }
}

/* "name:kind[(a|b)][=default]" */
static void parse_attr(ts_attr_schema *a, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    const char *end = s + n;
    a->name = keep(s, (size_t)(colon - s));
    const char *k = colon + 1;
    size_t kn = 0;
    while (k + kn < end && k[kn] != '(' && k[kn] != '=') kn++;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == kn && memcmp(kinds[i].name, k, kn) == 0) a->kind = kinds[i].kind;
    const char *p = k + kn;
    if (p < end && *p == '(') {
        p++;
        while (p < end && *p != ')') {
            const char *w = p;
            while (p < end && *p != '|' && *p != ')') p++;
            a->enum_names[a->n_enum++] = keep(w, (size_t)(p - w));
            if (*p == '|') p++;
        }
        p++;
    }
    if (p < end && *p == '=') parse_default(a, p + 1, (size_t)(end - p - 1));
}

static void parse_row(ts_op_info *info)
{
    const char *s = info->schema_text;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        const char *w = s;
        int depth = 0;
        while (*s && (*s != ' ' || depth)) {
            if (*s == '(' || *s == '[') depth++;
            if (*s == ')' || *s == ']') depth--;
            s++;
        }
        parse_attr(&info->attrs[info->n_attrs++], w, (size_t)(s - w));
    }
    /* region names: "then,else" -> two entries */
    const char *r = info->region_names[0];
    info->region_names[0] = NULL;
    while (r && *r) {
        const char *w = r;
        while (*r && *r != ',') r++;
        info->region_names[info->n_regions++] = keep(w, (size_t)(r - w));
        if (*r == ',') r++;
    }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_table(void)
{
    for (int i = 0; i < TS_OP_COUNT; i++) parse_row(&table[i]);
}

const ts_op_info *ts_op_get(ts_op op)
{
    pthread_once(&once, init_table);
    if (!TS_ALWAYS((unsigned)op < TS_OP_COUNT)) return &table[TS_OP_CONST];
    return &table[op];
}

bool ts_op_from_name(const char *name, size_t len, ts_op *out)
{
    for (int i = 0; i < TS_OP_COUNT; i++) {
        const char *n = ts_op_get((ts_op)i)->name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            *out = (ts_op)i;
            return true;
        }
    }
    return false;
}

int ts_op_attr_index(ts_op op, const char *name)
{
    const ts_op_info *info = ts_op_get(op);
    for (int i = 0; i < info->n_attrs; i++)
        if (strcmp(info->attrs[i].name, name) == 0) return i;
    return -1;
}
