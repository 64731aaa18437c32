/* print.c — the canonical text form of a graph (docs/ir.md).
 *
 * The printer is total: any graph, even one the verifier would reject,
 * prints without crashing (what cannot be spelt prints as `?`), so broken
 * IR can still be dumped while debugging. Only a graph that verifies is
 * promised to parse back, and then print(parse(print(g))) == print(g). */
#include "ir/ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---------------------------------------------------------------- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

bool ts_ir_name_ok(const char *s, size_t n, bool value)
{
    if (!s || n == 0) return false;
    bool digits = true;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]) && !is_alpha(s[i]) && s[i] != '.') return false;
        if (!is_digit(s[i])) digits = false;
    }
    return digits ? value : is_alpha(s[0]);
}

/* Every value prints under one name: its own, when that is spellable and
 * no value printed before it claimed the same name; otherwise the next
 * number (counting from 0 in print order) that no named value uses. */
typedef struct name_slot {
    const char *name;
    const ts_value *owner;
} name_slot;

typedef struct namer {
    name_slot *slots;         /* open addressing; cap is a power of two */
    size_t cap, count;
    int64_t *num;             /* by value id: -1 unseen, -2 own name, >= 0 number */
    uint32_t n_ids;
    int64_t next;
    bool oom;
} namer;

enum { UNSEEN = -1, OWN_NAME = -2 };

static uint64_t hash_name(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

static name_slot *slot_of(name_slot *slots, size_t cap, const char *name)
{
    size_t i = (size_t)hash_name(name) & (cap - 1);
    while (slots[i].name && strcmp(slots[i].name, name) != 0) i = (i + 1) & (cap - 1);
    return &slots[i];
}

static bool namer_grow(namer *nm)
{
    size_t cap = nm->cap ? nm->cap * 2 : 64, bytes;
    if (!ts_size_mul(cap, sizeof(name_slot), &bytes)) return false;
    name_slot *slots = ts_mem_zalloc(bytes);
    if (!slots) return false;
    for (size_t i = 0; i < nm->cap; i++)
        if (nm->slots[i].name) *slot_of(slots, cap, nm->slots[i].name) = nm->slots[i];
    ts_mem_free(nm->slots);
    nm->slots = slots;
    nm->cap = cap;
    return true;
}

/* The first value (in print order) carrying a name owns it. */
static void claim(namer *nm, const ts_value *v)
{
    if (!v || !v->name || !ts_ir_name_ok(v->name, strlen(v->name), true)) return;
    if (nm->count + 1 > nm->cap / 2 && !namer_grow(nm)) {
        nm->oom = true;
        return;
    }
    name_slot *s = slot_of(nm->slots, nm->cap, v->name);
    if (s->name) return;
    s->name = v->name;
    s->owner = v;
    nm->count++;
}

static void claim_block(namer *nm, const ts_block *b)
{
    for (int i = 0; i < b->n_params; i++) claim(nm, b->params[i]);
    for (const ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_out; i++) claim(nm, n->out[i]);
        for (int r = 0; r < n->n_regions; r++) claim_block(nm, n->regions[r]);
    }
}

static bool name_taken(const namer *nm, const char *name)
{
    return nm->cap && slot_of(nm->slots, nm->cap, name)->name != NULL;
}

static bool owns_name(const namer *nm, const ts_value *v)
{
    if (!v->name || !nm->cap) return false;
    const name_slot *s = slot_of(nm->slots, nm->cap, v->name);
    return s->name && s->owner == v;
}

static int64_t next_number(namer *nm)
{
    char digits[24];
    for (;;) {
        int64_t k = nm->next++;
        snprintf(digits, sizeof digits, "%" PRId64, k);
        if (!name_taken(nm, digits)) return k;
    }
}

static ts_status namer_init(namer *nm, const ts_graph *g)
{
    memset(nm, 0, sizeof *nm);
    nm->n_ids = g->next_value_id;
    size_t bytes;
    if (!ts_size_mul((size_t)nm->n_ids + 1, sizeof(int64_t), &bytes)) return TS_ERR_OOM;
    nm->num = ts_mem_alloc(bytes);
    if (!nm->num) return TS_ERR_OOM;
    for (uint32_t i = 0; i < nm->n_ids; i++) nm->num[i] = UNSEEN;
    claim_block(nm, g->body);
    return nm->oom ? TS_ERR_OOM : TS_OK;
}

static void namer_free(namer *nm)
{
    ts_mem_free(nm->slots);
    ts_mem_free(nm->num);
}

/* ---- the printer ---------------------------------------------------------- */

typedef struct printer {
    ts_buf *b;
    namer names;
} printer;

static void put_value(printer *p, const ts_value *v)
{
    if (!v || v->id >= p->names.n_ids) {
        ts_buf_puts(p->b, "%?");
        return;
    }
    int64_t *k = &p->names.num[v->id];
    if (*k == UNSEEN) *k = owns_name(&p->names, v) ? OWN_NAME : next_number(&p->names);
    if (*k == OWN_NAME)
        ts_buf_printf(p->b, "%%%s", v->name);
    else
        ts_buf_printf(p->b, "%%%" PRId64, *k);
}

static void put_values(printer *p, int n, ts_value *const *vals)
{
    for (int i = 0; i < n; i++) {
        if (i) ts_buf_puts(p->b, ", ");
        put_value(p, vals[i]);
    }
}

static void put_typed(printer *p, const ts_value *v)
{
    put_value(p, v);
    ts_buf_puts(p->b, ": ");
    if (v) ts_type_print(p->b, &v->type);
}

static void indent(printer *p, int depth)
{
    for (int i = 0; i < depth; i++) ts_buf_puts(p->b, "  ");
}

/* ---- numbers -------------------------------------------------------------- */

/* Whether `text` reads back, the way the parser reads it (strtod, then
 * rounding to dt), to the element bits `want`. */
static bool reads_back(const char *text, ts_dtype dt, const unsigned char *want)
{
    unsigned char got[8] = {0};
    ts_elem_set_f64(dt, got, 0, strtod(text, NULL));
    return memcmp(got, want, ts_dtype_size(dt)) == 0;
}

/* Whether %.{digits}g of v reads back to `want`; leaves the text in out. */
static bool fits(char *out, size_t cap, double v, int digits, ts_dtype dt, const unsigned char *want)
{
    snprintf(out, cap, "%.*g", digits, v);
    return reads_back(out, dt, want);
}

/* A zero significand: v is a power of two (or the smallest normal). */
static bool power_of_two(ts_dtype dt, const unsigned char *bits)
{
    uint64_t u64;
    uint32_t u32;
    uint16_t u16;
    switch (dt) {
    case TS_DTYPE_F64: memcpy(&u64, bits, 8); return (u64 & ((UINT64_C(1) << 52) - 1)) == 0;
    case TS_DTYPE_F32: memcpy(&u32, bits, 4); return (u32 & 0x7fffff) == 0;
    case TS_DTYPE_F16: memcpy(&u16, bits, 2); return (u16 & 0x3ff) == 0;
    default: memcpy(&u16, bits, 2); return (u16 & 0x7f) == 0;  /* bf16 */
    }
}

/* The fewest %g digits that read back to the same value of dt (f64, f32,
 * f16 or bf16; the narrow ones are exact in a double). NaN prints as
 * "nan" whatever its sign and payload.
 * Where v's rounding interval is symmetric, the digit counts that read back
 * are upward closed (the nearest N+1-digit decimal is no farther than the
 * nearest N-digit one), so bisection finds the fewest. At a power of two
 * the interval below is half as wide; there the count goes up from 1. */
static void format_float(char *out, size_t cap, double v, ts_dtype dt)
{
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    unsigned char want[8] = {0};
    ts_elem_set_f64(dt, want, 0, v);
    int lo = 1, hi = dt == TS_DTYPE_F64 ? 17 : 9, in_out = 0;  /* digits of the text in out */
    if (ts_dtype_is_small_float(dt)) {
        /* so few values that each prints exactly (448, not 4.5e+02) */
        if (v == floor(v) && fabs(v) < 1e15) {
            snprintf(out, cap, "%.0f", v);
            return;
        }
        for (int d = 1; d <= 17; d++) {
            snprintf(out, cap, "%.*g", d, v);
            if (strtod(out, NULL) == v) return;
        }
    }
    if (power_of_two(dt, want)) {
        while (lo < hi && !fits(out, cap, v, lo, dt, want)) lo++;
        in_out = lo < hi ? lo : 0;
    } else {
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            bool ok = fits(out, cap, v, mid, dt, want);
            in_out = ok ? mid : 0;
            if (ok) hi = mid;
            else lo = mid + 1;
        }
    }
    if (in_out == lo) return;
    if (!fits(out, cap, v, lo, dt, want)) snprintf(out, cap, "%.17g", v);  /* exact for every dt */
}

static void put_elem(ts_buf *b, ts_dtype dt, const void *data, int64_t i)
{
    char text[40];
    switch (dt) {
    case TS_DTYPE_BOOL:
        ts_buf_puts(b, ((const uint8_t *)data)[i] ? "1" : "0");
        return;
    case TS_DTYPE_U8: case TS_DTYPE_U16: case TS_DTYPE_U32: case TS_DTYPE_U64: case TS_DTYPE_U4: case TS_DTYPE_U2:
        ts_buf_printf(b, "%" PRIu64, ts_elem_get_u64(dt, data, i));
        return;
    case TS_DTYPE_F16: case TS_DTYPE_BF16: case TS_DTYPE_F32: case TS_DTYPE_F64:
    case TS_DTYPE_F8E4M3FN: case TS_DTYPE_F8E4M3FNUZ: case TS_DTYPE_F8E5M2: case TS_DTYPE_F8E5M2FNUZ:
    case TS_DTYPE_F8E8M0: case TS_DTYPE_F4E2M1:
        format_float(text, sizeof text, ts_elem_get_f64(dt, data, i), dt);
        ts_buf_puts(b, text);
        return;
    default:
        ts_buf_printf(b, "%" PRId64, ts_elem_get_i64(dt, data, i));
        return;
    }
}

/* Elements that print the same get the same key: raw bits, except that
 * every NaN is one key (all print "nan") and every nonzero bool is 1. */
static uint64_t elem_key(ts_dtype dt, const void *data, int64_t i)
{
    if (ts_dtype_is_fp(dt) && isnan(ts_elem_get_f64(dt, data, i))) return UINT64_MAX;
    if (dt == TS_DTYPE_BOOL) return ((const uint8_t *)data)[i] != 0;
    uint64_t k = 0;
    size_t size = ts_dtype_size(dt);
    memcpy(&k, (const char *)data + (size_t)i * size, size);
    return k;
}

static bool is_splat(const ts_tensor *t)
{
    if (t->numel < 2) return false;
    uint64_t first = elem_key(t->dtype, t->data, 0);
    for (int64_t i = 1; i < t->numel; i++)
        if (elem_key(t->dtype, t->data, i) != first) return false;
    return true;
}

static void put_tensor(ts_buf *b, const ts_tensor *t)
{
    if (!t || !ts_dtype_valid(t->dtype) || (t->numel && !t->data)) {
        ts_buf_puts(b, "?");
        return;
    }
    if (is_splat(t)) {
        ts_buf_puts(b, "splat(");
        put_elem(b, t->dtype, t->data, 0);
        ts_buf_puts(b, ")");
        return;
    }
    ts_buf_puts(b, "[");
    for (int64_t i = 0; i < t->numel && !b->oom; i++) {
        if (i) ts_buf_puts(b, ", ");
        put_elem(b, t->dtype, t->data, i);
    }
    ts_buf_puts(b, "]");
}

/* ---- attributes ----------------------------------------------------------- */

static void put_string(ts_buf *b, const char *s)
{
    ts_buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') ts_buf_printf(b, "\\%c", c);
        else if (c == '\n') ts_buf_puts(b, "\\n");
        else if (c == '\t') ts_buf_puts(b, "\\t");
        else if (c < 0x20 || c >= 0x7f) ts_buf_printf(b, "\\x%02x", c);
        else ts_buf_putn(b, (const char *)&c, 1);
    }
    ts_buf_puts(b, "\"");
}

static bool is_default(const ts_attr_schema *s, const ts_attr *a)
{
    if (!s->has_default) return false;
    switch (s->kind) {
    case TS_ATTR_INT: case TS_ATTR_ENUM: case TS_ATTR_DTYPE:
        return a->i == s->def_i;
    case TS_ATTR_FLOAT:
        return memcmp(&a->f, &s->def_f, sizeof a->f) == 0;
    case TS_ATTR_STR:
        return a->s && s->def_s && strcmp(a->s, s->def_s) == 0;
    case TS_ATTR_INTS:
        return a->n == s->def_n && (a->n == 0 || (a->ints && memcmp(a->ints, s->def_ints,
                                                                  sizeof(int64_t) * (size_t)a->n) == 0));
    default:
        return false;
    }
}

static void put_attr_value(ts_buf *b, const ts_attr_schema *s, const ts_attr *a)
{
    char text[40];
    switch (s->kind) {
    case TS_ATTR_INT:
        ts_buf_printf(b, "%" PRId64, a->i);
        return;
    case TS_ATTR_FLOAT:
        format_float(text, sizeof text, a->f, TS_DTYPE_F64);
        ts_buf_puts(b, text);
        return;
    case TS_ATTR_DTYPE:
        ts_buf_puts(b, ts_dtype_valid((ts_dtype)a->i) ? ts_dtype_name((ts_dtype)a->i) : "?");
        return;
    case TS_ATTR_ENUM:
        ts_buf_puts(b, a->i >= 0 && a->i < s->n_enum ? s->enum_names[a->i] : "?");
        return;
    case TS_ATTR_STR:
        if (a->s) put_string(b, a->s); else ts_buf_puts(b, "?");
        return;
    case TS_ATTR_INTS:
        ts_buf_puts(b, "[");
        for (int i = 0; i < a->n && a->ints; i++) ts_buf_printf(b, "%s%" PRId64, i ? ", " : "", a->ints[i]);
        ts_buf_puts(b, "]");
        return;
    case TS_ATTR_DIMS:
        ts_buf_puts(b, "[");
        for (int i = 0; i < a->n && a->dims; i++) {
            if (i) ts_buf_puts(b, ", ");
            ts_dim_print(b, a->dims[i]);
        }
        ts_buf_puts(b, "]");
        return;
    case TS_ATTR_TENSOR:
        put_tensor(b, a->t);
        return;
    }
}

/* ` {name=value, ...}` in schema order, defaults left out; nothing at all
 * when every attribute has its default. */
static void put_attrs(printer *p, const ts_node *n)
{
    const ts_op_info *info = ts_op_get(n->op);
    bool any = false;
    for (int i = 0; i < info->n_attrs && n->attrs; i++) {
        if (is_default(&info->attrs[i], &n->attrs[i])) continue;
        ts_buf_puts(p->b, any ? ", " : " {");
        ts_buf_printf(p->b, "%s=", info->attrs[i].name);
        put_attr_value(p->b, &info->attrs[i], &n->attrs[i]);
        any = true;
    }
    if (any) ts_buf_puts(p->b, "}");
}

/* ---- blocks and nodes ----------------------------------------------------- */

static void put_block(printer *p, const ts_block *b, int depth, const char *end);

static void put_params(printer *p, const ts_block *b)
{
    ts_buf_puts(p->b, "(");
    for (int i = 0; i < b->n_params; i++) {
        if (i) ts_buf_puts(p->b, ", ");
        put_typed(p, b->params[i]);
    }
    ts_buf_puts(p->b, ")");
}

static void put_node(printer *p, const ts_node *n, int depth)
{
    const ts_op_info *info = ts_op_get(n->op);
    indent(p, depth);
    for (int i = 0; i < n->n_out; i++) {
        if (i) ts_buf_puts(p->b, ", ");
        put_typed(p, n->out[i]);
    }
    if (n->n_out) ts_buf_puts(p->b, " = ");
    ts_buf_printf(p->b, "%s(", info->name);
    put_values(p, n->n_in, n->in);
    ts_buf_puts(p->b, ")");
    put_attrs(p, n);
    for (int r = 0; r < n->n_regions; r++) {
        const char *name = r < info->n_regions ? info->region_names[r] : "?";
        ts_buf_printf(p->b, " %s", name);
        put_params(p, n->regions[r]);
        ts_buf_puts(p->b, " {\n");
        put_block(p, n->regions[r], depth + 1, "yield");
        indent(p, depth);
        ts_buf_puts(p->b, "}");
    }
    ts_buf_puts(p->b, "\n");
}

/* The nodes of b at `depth`, then its closing `return`/`yield` line. */
static void put_block(printer *p, const ts_block *b, int depth, const char *end)
{
    for (const ts_node *n = b->first; n && !p->b->oom; n = n->next) put_node(p, n, depth);
    indent(p, depth);
    ts_buf_puts(p->b, end);
    if (b->n_results) ts_buf_puts(p->b, " ");
    put_values(p, b->n_results, b->results);
    ts_buf_puts(p->b, "\n");
}

/* The graph name as a NAME: other bytes become '_', so the text parses. */
static void put_graph_name(ts_buf *b, const char *name)
{
    if (!name || !*name) name = "main";
    if (!is_alpha(name[0])) ts_buf_puts(b, "_");
    for (const char *s = name; *s; s++) {
        char c = is_alpha(*s) || is_digit(*s) || *s == '.' ? *s : '_';
        ts_buf_putn(b, &c, 1);
    }
}

ts_status ts_ir_print(const ts_graph *g, ts_buf *b)
{
    printer p = {b, {0}};
    ts_status s = namer_init(&p.names, g);
    if (s == TS_OK) {
        ts_buf_puts(b, "graph @");
        put_graph_name(b, g->name);
        put_params(&p, g->body);
        ts_buf_puts(b, " {\n");
        put_block(&p, g->body, 1, "return");
        ts_buf_puts(b, "}\n");
    }
    namer_free(&p.names);
    return s == TS_OK && b->oom ? TS_ERR_OOM : s;
}

ts_status ts_graph_to_text(const ts_graph *g, char **out, ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_to_text: NULL argument");
    *out = NULL;
    ts_buf b = {0};
    if (ts_ir_print(g, &b) != TS_OK) {
        ts_buf_free(&b);
        return ts_err_set(err, TS_ERR_OOM, "out of memory printing graph @%s", g->name ? g->name : "?");
    }
    *out = b.data;
    return TS_OK;
}

void ts_free_string(char *s) { ts_mem_free(s); }
