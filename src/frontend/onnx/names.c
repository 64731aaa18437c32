/* names.c — the loader's hash maps and the scope chain that resolves ONNX
 * value names. */
#include "frontend/onnx/load.h"

#include <string.h>

/* ---- maps ------------------------------------------------------------------------ */

static uint64_t hash_key(const onnx_map *m, const void *key)
{
    uint64_t h = 1469598103934665603ULL;
    if (m->str) {
        for (const unsigned char *s = key; *s; s++) h = (h ^ *s) * 1099511628211ULL;
    } else {
        uint64_t p = (uint64_t)(uintptr_t)key;
        h = (p ^ (p >> 29)) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 32;
    }
    return h;
}

static bool same_key(const onnx_map *m, const void *a, const void *b)
{
    return m->str ? strcmp(a, b) == 0 : a == b;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot_of(const onnx_map *m, const void *key)
{
    size_t i = (size_t)hash_key(m, key) & (m->cap - 1);
    while (m->keys[i] && !same_key(m, m->keys[i], key)) i = (i + 1) & (m->cap - 1);
    return i;
}

void *onnx_map_get(const onnx_map *m, const void *key)
{
    if (!m->cap || !key) return NULL;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

static bool grow(onnx_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    onnx_map n = {ts_mem_zalloc(cap * sizeof(void *)), ts_mem_zalloc(cap * sizeof(void *)), 0, cap, m->str};
    if (!n.keys || !n.vals) {
        ts_mem_free(n.keys);
        ts_mem_free(n.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = slot_of(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.count++;
    }
    onnx_map_free(m);
    *m = n;
    return true;
}

bool onnx_map_put(onnx_map *m, const void *key, void *val)
{
    if (!key) return true;
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    size_t i = slot_of(m, key);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

void onnx_map_free(onnx_map *m)
{
    ts_mem_free(m->keys);
    ts_mem_free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->count = m->cap = 0;
}

/* ---- scopes ---------------------------------------------------------------------- */

/* Names map to ts_value*; an omitted optional value is bound to this
 * marker, so that "bound to nothing" differs from "not bound". */
static char omitted_mark;

ts_value *onnx_lookup(onnx_ctx *c, const char *name, bool *found)
{
    *found = false;
    if (!name) return NULL;
    for (onnx_scope *s = c->scope; s; s = s->parent) {
        void *v = onnx_map_get(&s->names, name);
        if (v) {
            *found = true;
            return v == &omitted_mark ? NULL : v;
        }
        if (s->barrier) break;
    }
    return NULL;
}

bool onnx_bind(onnx_ctx *c, const char *name, ts_value *v)
{
    if (!name || !name[0]) return true;
    return onnx_map_put(&c->scope->names, name, v ? (void *)v : (void *)&omitted_mark);
}

bool onnx_scope_push(onnx_ctx *c, onnx_scope *s, bool barrier)
{
    memset(s, 0, sizeof *s);
    s->names.str = true;
    s->barrier = barrier;
    s->parent = c->scope;
    c->scope = s;
    return true;
}

void onnx_scope_pop(onnx_ctx *c)
{
    onnx_scope *s = c->scope;
    if (!s) return;
    c->scope = s->parent;
    onnx_map_free(&s->names);
}
