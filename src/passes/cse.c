/* cse.c — common subexpression elimination: within each block, a node
 * identical to an earlier one (same op, operands, attributes; commutative
 * operands in either order) is replaced by it. Also the node identity and
 * the node hash set that the builder's hash-consing uses. */
#include "passes/passes.h"

#include <string.h>

/* ---- node identity ------------------------------------------------------ */

bool ts_pass_mergeable(const ts_node *n)
{
    unsigned f = ts_op_get(n->op)->flags;
    /* FRESH: two nonzero(x) have differently named sizes, so their users'
     * types would no longer agree after a merge */
    return !(f & (TS_OPF_SIDE | TS_OPF_CONTROL | TS_OPF_FRESH)) && n->n_regions == 0 &&
           ts_op_get(n->op)->n_out != 0;
}

/* A copy of n whose commutative operands are ordered by value id. */
static ts_node normalised(const ts_node *n, ts_value **buf)
{
    ts_node c = *n;
    if ((ts_op_get(n->op)->flags & TS_OPF_COMM) && n->n_in == 2 && n->in[0]->id > n->in[1]->id) {
        buf[0] = n->in[1];
        buf[1] = n->in[0];
        c.in = buf;
    }
    return c;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* Constants are keyed by type and a sample of their bytes: hashing every
 * byte of every weight in every round would dominate a large model, and
 * equal keys still get the full comparison. */
static uint64_t const_key(const ts_node *n)
{
    const ts_tensor *t = ts_node_tensor(n, "value");
    const size_t edge = 256;
    uint64_t h = mix(UINT64_C(0xcbf29ce484222325), &t->dtype, sizeof t->dtype);
    h = mix(h, t->shape, sizeof(int64_t) * (size_t)t->rank);
    if (t->nbytes <= 2 * edge) return mix(h, t->data, t->nbytes);
    h = mix(h, t->data, edge);
    return mix(h, (const char *)t->data + t->nbytes - edge, edge);
}

uint64_t ts_pass_node_key(const ts_node *n)
{
    if (n->op == TS_OP_CONST) return const_key(n);
    ts_value *buf[2];
    ts_node c = normalised(n, buf);
    return ts_ir_node_hash(&c);
}

static bool same_result_types(const ts_node *a, const ts_node *b)
{
    if (!a->out || !b->out) return true;   /* a key not built yet */
    if (a->n_out != b->n_out) return false;
    for (int i = 0; i < a->n_out; i++)
        if (!ts_type_eq(&a->out[i]->type, &b->out[i]->type)) return false;
    return true;
}

bool ts_pass_node_equiv(const ts_node *a, const ts_node *b)
{
    ts_value *ba[2], *bb[2];
    ts_node ca = normalised(a, ba), cb = normalised(b, bb);
    return ts_ir_node_same(&ca, &cb) && same_result_types(a, b);
}

/* ---- the node set --------------------------------------------------------- */

ts_node *ts_pass_nodeset_find(const ts_pass_nodeset *s, const ts_node *n, uint64_t k)
{
    if (!s->cap) return NULL;
    for (size_t i = (size_t)k & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i]) return NULL;
        if (s->keys[i] == k && ts_pass_node_equiv(s->slots[i], n)) return s->slots[i];
    }
}

static void put(ts_node **slots, uint64_t *keys, size_t cap, ts_node *n, uint64_t k)
{
    size_t i = (size_t)k & (cap - 1);
    while (slots[i]) i = (i + 1) & (cap - 1);
    slots[i] = n;
    keys[i] = k;
}

static ts_status grow(ts_pass_nodeset *s, ts_err *err)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    ts_node **slots = ts_mem_zalloc(cap * sizeof *slots);
    uint64_t *keys = ts_mem_zalloc(cap * sizeof *keys);
    if (!slots || !keys || cap < s->cap) {
        ts_mem_free(slots);
        ts_mem_free(keys);
        return ts_err_set(err, TS_ERR_OOM, "out of memory in a node hash table");
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i]) put(slots, keys, cap, s->slots[i], s->keys[i]);
    ts_mem_free(s->slots);
    ts_mem_free(s->keys);
    s->slots = slots;
    s->keys = keys;
    s->cap = cap;
    return TS_OK;
}

ts_status ts_pass_nodeset_add(ts_pass_nodeset *s, ts_node *n, uint64_t k, ts_err *err)
{
    if ((s->count + 1) * 2 > s->cap) TS_TRY(grow(s, err));
    put(s->slots, s->keys, s->cap, n, k);
    s->count++;
    return TS_OK;
}

void ts_pass_nodeset_free(ts_pass_nodeset *s)
{
    ts_mem_free(s->slots);
    ts_mem_free(s->keys);
    memset(s, 0, sizeof *s);
}

/* ---- the pass ------------------------------------------------------------- */

static ts_status cse_block(ts_block *b, bool *changed, ts_err *err);

/* Merge n into its twin if the set has one; else remember n. */
static ts_status cse_node(ts_pass_nodeset *set, ts_node *n, bool *changed, ts_err *err)
{
    uint64_t k = ts_pass_node_key(n);
    ts_node *twin = ts_pass_nodeset_find(set, n, k);
    if (!twin) return ts_pass_nodeset_add(set, n, k, err);
    ts_pass_replace(n, twin->out);
    *changed = true;
    return TS_OK;
}

/* Regions are isolated, so each block gets its own set. */
static ts_status cse_block(ts_block *b, bool *changed, ts_err *err)
{
    ts_pass_nodeset set = {0};
    ts_status s = TS_OK;
    for (ts_node *n = b->first, *next; n; n = next) {
        next = n->next;
        /* after an error, keep resolving so no operand points at a node
         * that is gone */
        ts_pass_resolve_operands(n);
        if (s != TS_OK) continue;
        for (int r = 0; r < n->n_regions && s == TS_OK; r++) s = cse_block(n->regions[r], changed, err);
        if (s == TS_OK && ts_pass_mergeable(n)) s = cse_node(&set, n, changed, err);
    }
    ts_pass_resolve_results(b);
    ts_pass_nodeset_free(&set);
    return s;
}

ts_status ts_pass_cse(ts_graph *g, bool *changed, ts_err *err)
{
    ts_pass_forget(g->body);
    return cse_block(g->body, changed, err);
}
