/* emit_lanes.c — float reductions in vector lanes (loop IR to C): a sum,
 * max or min over a vector loop accumulates in LANES lanes (reassociating
 * it, which the tests' tolerance allows and the C compiler will not do on
 * its own), so the loop vectorizes; the prefetches of a row kernel's next
 * row go with them, once per block of lanes. Split from emit_c.c, whose
 * for_loop calls ts_em_lane_reduction. */
#include "codegen/cpu/emit_int.h"

#include <stdio.h>

enum { LANES = TS_EM_LANES };

static bool is_float(ts_dtype dt) { return dt == TS_DTYPE_F32 || dt == TS_DTYPE_F64; }

/* An f32 value summed into an f64 accumulator (the reference's rule for
 * f32 sums) is summed in f32 lanes over blocks of BLOCK elements (BLOCK
 * / LANES terms per lane), each block's lanes then added to f64 lanes:
 * the conversions and f64 adds, half the work of softmax's sum pass, run
 * once per block. Error: at most (BLOCK / LANES - 1) u of the sum of
 * magnitudes, whatever the length (docs/decisions.md D27). */
enum { BLOCK = 256 };

static bool f32_into_f64(const ts_ls *u)
{
    return u->op == TS_OP_ADD && u->value->dt == TS_DTYPE_F64 && u->value->k == TS_LX_CAST &&
           u->value->a[0]->dt == TS_DTYPE_F32;
}

/* The cache lines of the `width` elements of a prefetch from i_b on, once
 * per block of lanes. The address may lie past the buffer (the next row
 * after the last one): a prefetch never faults, and nothing reads it.
 * Into L1 (prefetcht0): with the row streamed out at its end (D50, D55)
 * the next row's max pass, read from L2, waited behind the stream's
 * stores; read from L1 it does not (softmax 8192 x 1024 -5%, D56). Before
 * the stream, L1 had cost 8% and L2 measured as good as none (D48). */
static void put_prefetch(em *e, const ts_ls *loop, const ts_ls *st, int width)
{
    int size = ts_dtype_bits(e->k->bufs[st->buf].dt) / 8, v = loop->var;
    if (size < 1) size = 1;
    ts_em_indent(e);
    ts_buf_printf(e->out, "{\n");
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const int64_t i%d = i%d_b;\n", v, v);
    ts_buf a = {0};
    ts_em_ref(e, &a, st->index, false);
    for (int off = 0; off < width * size; off += 64) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "__builtin_prefetch(b%d + %s + %d, 0, 3);\n", st->buf, a.data ? a.data : "0", off / size);
    }
    ts_buf_free(&a);
    ts_em_close(e);
}

/* The body of the 16-lane loop: the stores, then the update into `lane`.
 * With `nan` (max/min's fast lanes), the update is the plain compare and
 * select, one vmaxps/vminps, and `nan` notes a NaN it skipped. */
static void lane_body(em *e, const ts_ls *s, const ts_ls *u, ts_lx *value, ts_dtype dt, const char *lane,
                      const char *nan, int off)
{
    ts_em_indent(e);
    if (off) ts_buf_printf(e->out, "const int64_t i%d = i%d_b + %d + l;\n", s->var, s->var, off);
    else ts_buf_printf(e->out, "const int64_t i%d = i%d_b + l;\n", s->var, s->var);
    for (const ts_ls *st = s->body; st != u; st = st->next)
        if (st->k == TS_LS_STORE) ts_em_store(e, st);
    ts_buf r = {0}, c = {0};
    ts_em_ref(e, &r, value, false);
    const char *rv = r.data ? r.data : "0";
    ts_em_indent(e);
    if (nan) {
        ts_buf_printf(e->out, "const %s xv = %s;\n", ts_emit_ctype(dt), rv);
        ts_em_indent(e);
        ts_buf_printf(e->out, "%s = xv %c %s ? xv : %s;\n", lane, u->op == TS_OP_MAX ? '>' : '<', lane, lane);
        ts_em_indent(e);
        ts_buf_printf(e->out, "%s |= xv != xv;\n", nan);
    } else {
        ts_em_combine(e, &c, u->op, dt, lane, rv);
        ts_buf_printf(e->out, "%s = %s;\n", lane, c.data ? c.data : "0");
    }
    ts_buf_free(&r);
    ts_buf_free(&c);
}

/* for (; i_b + width <= end; i_b += width) for each lane l < width: body.
 * A width of WIDE x LANES is WIDE loops of LANES lanes, each into its own
 * arrays (`lane`_k, `nan`_k), which gcc keeps in registers: one loop of
 * 64 lanes it ran as a loop over four vectors in memory, each a load, the
 * update and a store (D55). */
static void lane_loop(em *e, const ts_ls *s, const ts_ls *u, ts_lx *value, ts_dtype dt, const char *lane,
                      const char *nan, const char *end, int width, const char *set)
{
    int v = s->var;
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (; i%d_b + %d <= %s; i%d_b += %d) {\n", v, width, end, v, width);
    ts_em_open(e);
    for (const ts_ls *st = s->body; st != u; st = st->next)
        if (st->k == TS_LS_PREFETCH) put_prefetch(e, s, st, width);
    for (int k = 0; k < width / LANES; k++) {
        char lk[48], nk[48];
        if (width > LANES) {
            snprintf(lk, sizeof lk, "%s%d_%d[l]", set, v, k);
            snprintf(nk, sizeof nk, "nan%d_%d[l]", v, k);
        }
        ts_em_indent(e);
        if (nan) { /* scalar.h says why */
            ts_buf_printf(e->out, "TSRT_LANE_LOOP\n");
            ts_em_indent(e);
        }
        ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) {\n", LANES);
        ts_em_open(e);
        if (width > LANES) lane_body(e, s, u, value, dt, lk, nan ? nk : NULL, k * LANES);
        else lane_body(e, s, u, value, dt, lane, nan, 0);
        ts_em_close(e);
    }
    ts_em_close(e);
}

/* max or min's loop of width = WIDE x LANES lanes (lane_reduction): its
 * WIDE sets of lanes and NaN notes, then each folded into `lane`, `nan`
 * by the same plain select. */
static void wide_lanes(em *e, const ts_ls *s, const ts_ls *u, const char *lane, const char *nan, const char *ext,
                       int width)
{
    const ts_dtype dt = u->value->dt;
    const bool f = dt == TS_DTYPE_F32;
    const char *T = ts_emit_ctype(dt), *NT = f ? "int32_t" : "int64_t", op = u->op == TS_OP_MAX ? '>' : '<';
    const char *ident = u->op == TS_OP_MAX ? (f ? "-__builtin_inff()" : "-__builtin_inf()")
                                           : (f ? "__builtin_inff()" : "__builtin_inf()");
    int v = s->var, wide = width / LANES;
    ts_em_indent(e);
    ts_buf_printf(e->out, "{\n");
    ts_em_open(e);
    for (int k = 0; k < wide; k++) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "%s lane%d_%d[%d];\n", T, v, k, LANES);
        ts_em_indent(e);
        ts_buf_printf(e->out, "%s nan%d_%d[%d];\n", NT, v, k, LANES);
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) {\n", LANES);
    for (int k = 0; k < wide; k++) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "    lane%d_%d[l] = %s;\n", v, k, ident);
        ts_em_indent(e);
        ts_buf_printf(e->out, "    nan%d_%d[l] = 0;\n", v, k);
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "}\n");
    lane_loop(e, s, u, u->value, dt, lane, nan, ext, width, "lane");
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) {\n", LANES);
    for (int k = 0; k < wide; k++) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "    %s = lane%d_%d[l] %c %s ? lane%d_%d[l] : %s;\n", lane, v, k, op, lane, v, k, lane);
        ts_em_indent(e);
        ts_buf_printf(e->out, "    %s |= nan%d_%d[l];\n", nan, v, k);
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "}\n");
    ts_em_close(e);
}

/* Whether the loop stores what it sums (a costly value kept in the row,
 * D27): its summand's arithmetic then bounds the loop, not the chain of
 * adds, and four sets of lanes spilled softmax's exp constants (its
 * kernel 3.2 -> 3.75 ms). */
static bool keeps_values(const ts_ls *s, const ts_ls *u)
{
    for (const ts_ls *st = s->body; st != u; st = st->next)
        if (st->k == TS_LS_STORE) return true;
    return false;
}

/* A blocked sum's block of 4 x BLOCK elements over long rows
 * (lane_reduction) in 4 x LANES f32 lanes, four sets each one dependency
 * chain, folded pairwise into flane: one chain of adds is 4 cycles per
 * 16 elements, which made layer norm's two sum passes latency-bound
 * (D82). Each lane takes BLOCK / LANES terms as in D27, then two adds of
 * the fold: at most (BLOCK / LANES + 1) u of the sum of magnitudes. A
 * block of BLOCK flushed four times as often; each flush (the fold, the
 * f64 conversion, the f64 lanes through the stack) cost layer norm 8192
 * x 1024 a fifth of its time (D84). */
static void wide_sum(em *e, const ts_ls *s, const ts_ls *u, const char *end)
{
    int v = s->var;
    ts_em_indent(e);
    ts_buf_printf(e->out, "{\n");
    ts_em_open(e);
    for (int k = 0; k < 4; k++) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "float flane%d_%d[%d];\n", v, k, LANES);
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) flane%d_0[l] = flane%d_1[l] = flane%d_2[l] = flane%d_3[l] = 0;\n",
                  LANES, v, v, v, v);
    char flane[32];
    snprintf(flane, sizeof flane, "flane%d[l]", v);
    lane_loop(e, s, u, u->value->a[0], TS_DTYPE_F32, flane, NULL, end, 4 * LANES, "flane");
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) flane%d[l] = (flane%d_0[l] + flane%d_1[l]) + (flane%d_2[l] + flane%d_3[l]);\n",
                  LANES, v, v, v, v, v);
    ts_em_close(e);
}

/* if (cond) the accumulator is reset and the loop runs again in order,
 * element by element: the reference's own fold. Its stores store what
 * they stored before. */
static void redo_in_order(em *e, const ts_ls *s, const ts_ls *u, const char *ext, const char *cond)
{
    int v = s->var;
    ts_em_indent(e);
    ts_buf_printf(e->out, "if (%s) {\n", cond);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "acc%d = acc%d_0;\n", u->var, u->var);
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d = 0; i%d < %s; i%d++) {\n", v, v, ext, v);
    ts_em_body(e, s->body);
    ts_em_close(e);
}

/* max/min's fast lanes ended on a zero (a row that met a NaN was redone
 * and ends on NaN): only the sign of the zero is in question. max gives
 * +0 if the start or any value is +0 (tsrt_max keeps +0 over -0 either
 * way round), else -0; min the mirror image. One vectorizable pass that
 * ORs a test: the in-order redo with the exact rule ran ~13 cycles an
 * element, so a softmax written out as exp(x - max x) / sum, whose own
 * max of x - max x is 0 on every row, ran 10x slower (33 ms for 8192 x
 * 1024, D86). */
static void zero_sign(em *e, const ts_ls *s, const ts_ls *u, const char *ext)
{
    int v = s->var, a = u->var;
    const bool f = u->value->dt == TS_DTYPE_F32;
    const char *want = u->op == TS_OP_MAX ? "== 0" : "!= 0";
    const char *pos = f ? "0.0f" : "0.0", *neg = f ? "-0.0f" : "-0.0";
    ts_em_indent(e);
    ts_buf_printf(e->out, "if (acc%d == 0) {\n", a);
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "int32_t z%d = acc%d_0 == 0 && signbit(acc%d_0) %s;\n", v, a, a, want);
    ts_em_indent(e);
    ts_buf_printf(e->out, "for (int64_t i%d = 0; i%d < %s; i%d++) {\n", v, v, ext, v);
    ts_em_open(e);
    ts_buf r = {0};
    ts_em_ref(e, &r, u->value, false);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const %s zv = %s;\n", ts_emit_ctype(u->value->dt), r.data ? r.data : "0");
    ts_buf_free(&r);
    ts_em_indent(e);
    ts_buf_printf(e->out, "z%d |= (zv == 0) & (signbit(zv) %s);\n", v, want);
    ts_em_close(e);
    ts_em_indent(e);
    if (u->op == TS_OP_MAX) ts_buf_printf(e->out, "acc%d = z%d ? %s : %s;\n", a, v, pos, neg);
    else ts_buf_printf(e->out, "acc%d = z%d ? %s : %s;\n", a, v, neg, pos);
    ts_em_close(e);
}

/* A vector loop whose body is one float update, after stores (a row
 * kernel keeping the summed values, lower.c stage_pick): 16 lanes, then
 * the tail.
 *
 * max and min run fast lanes: a plain compare and select (one vmaxps
 * where tsrt_maxf is a chain of three compares and a blend; softmax's
 * max pass 2.1 -> 0.8 ns per 16 floats in L1, D48) and a note of any
 * NaN skipped. The plain select differs from the primitive's max only on
 * NaN and on the sign of a zero, so a row that met a NaN, or whose result
 * is a NaN, is folded again in order with the exact rule: the result is
 * then the reference's, NaN payload included; a zero result gets its sign
 * from one more pass (zero_sign).
 *
 * max and min also run 4 x LANES lanes (four sets, wide_lanes), then
 * LANES, then the tail. One vector of lanes is one dependency chain
 * (~7 cycles per 16 elements on Zen 4 with the exact rule): four chains
 * overlap (softmax 8192 x 1024 6.58 -> 5.95 ms, D47). Only for rows of
 * 256 and more (or not known): on BERT's rows of 128 the chains are
 * short and the wider fold cost more than it saved. A blocked sum over
 * such rows runs four sets as well unless it keeps its summands
 * (wide_sum, D82); other sums keep LANES. */
/* Whether x reads accumulator acc; a DAG walked as a tree, so past a
 * budget of nodes it answers yes (the lanes are then not used). */
static bool reads_acc(const ts_lx *x, int acc, int *budget)
{
    if (!x) return false;
    if (--*budget < 0) return true;
    if (x->k == TS_LX_ACC) return x->var == acc;
    return reads_acc(x->a[0], acc, budget) || reads_acc(x->a[1], acc, budget) || reads_acc(x->a[2], acc, budget);
}

/* Whether x uses loop variable v (a DAG walked as a tree: past the
 * budget, yes). */
static bool uses_var(const ts_lx *x, int v, int *budget)
{
    if (!x) return false;
    if (--*budget < 0) return true;
    if (x->k == TS_LX_VAR) return x->var == v;
    return uses_var(x->a[0], v, budget) || uses_var(x->a[1], v, budget) || uses_var(x->a[2], v, budget);
}

/* v's coefficient in index x, when x is affine in v with a constant one
 * (a node of another kind counts only if it does not use v: then 0). */
static bool var_coef(const ts_lx *x, int v, int64_t *c, int *budget)
{
    if (--*budget < 0) return false;
    if (x->k == TS_LX_VAR) return (*c = x->var == v), true;
    if (x->k == TS_LX_OP && x->index && (x->op == TS_OP_ADD || x->op == TS_OP_SUB || x->op == TS_OP_MUL)) {
        int64_t a, b;
        if (!var_coef(x->a[0], v, &a, budget) || !var_coef(x->a[1], v, &b, budget)) return false;
        if (x->op != TS_OP_MUL) return (*c = x->op == TS_OP_ADD ? a + b : a - b), true;
        if (!a && !b) return (*c = 0), true;
        const ts_lx *k = a ? x->a[1] : x->a[0];   /* the factor without v */
        if ((a && b) || k->k != TS_LX_CONST) return false;
        return (*c = (a ? a : b) * k->ci), true;
    }
    return uses_var(x, v, budget) ? false : ((*c = 0), true);
}

/* Whether every load of x reads along v at a stride of 0 or 1: a row the
 * lanes load as vectors. A strided one (a sum over the channels of an
 * NCHW map, a LayerNorm across a folded transpose) is loaded element by
 * element whatever the lanes; its 16 lanes are then 16 scalar chains,
 * and four sets of them (4 x 16 loads the C compiler unrolls completely
 * and then tries to pack) cost gcc -O3 1.8 s on one ConvNeXt kernel of
 * ~250 lines: 0.2 s with one set (D193). */
static bool unit_stride(const ts_lx *x, int v, int *budget)
{
    if (!x) return true;
    if (--*budget < 0) return false;
    if (x->k == TS_LX_LOAD || x->k == TS_LX_LOADI) {
        int64_t c;
        if (!var_coef(x->a[0], v, &c, budget) || (c != 0 && c != 1)) return false;
        return x->k == TS_LX_LOAD || !uses_var(x->a[1], v, budget);
    }
    if (x->index) return true;   /* index arithmetic outside a load reads nothing */
    return unit_stride(x->a[0], v, budget) && unit_stride(x->a[1], v, budget) && unit_stride(x->a[2], v, budget);
}

bool ts_em_lane_reduction(em *e, const ts_ls *s, const char *ext)
{
    const ts_ls *u = s->body;
    while (u && (u->k == TS_LS_STORE || u->k == TS_LS_PREFETCH)) u = u->next;
    if (!u || u->next || u->k != TS_LS_UPDATE || !is_float(u->value->dt)) return false;
    int budget = 4096;
    for (const ts_ls *st = s->body; st != u; st = st->next)   /* an exclusive scan stores the running value */
        if (st->k == TS_LS_STORE && reads_acc(st->value, u->var, &budget)) return false;
    if (u->op != TS_OP_ADD && u->op != TS_OP_MAX && u->op != TS_OP_MIN) return false;
    if (s->extent->k == TS_LX_CONST && s->extent->ci < LANES) return false;   /* a short loop: lanes cost more */
    ts_dtype dt = u->value->dt;
    const char *T = ts_emit_ctype(dt);
    bool f = dt == TS_DTYPE_F32;
    budget = 4096;   /* a long row the lanes load as vectors */
    const bool long_row = (s->extent->k != TS_LX_CONST || s->extent->ci >= 16 * LANES) &&
                          unit_stride(u->value, s->var, &budget);
    const bool sum = u->op == TS_OP_ADD;
    const int width = sum || !long_row ? LANES : 4 * LANES;
    const char *ident = sum ? "0" : u->op == TS_OP_MAX ? (f ? "-__builtin_inff()" : "-__builtin_inf()")
                                                       : (f ? "__builtin_inff()" : "__builtin_inf()");
    int v = s->var;
    ts_em_indent(e);
    ts_buf_printf(e->out, "{\n");
    ts_em_open(e);
    ts_em_indent(e);
    ts_buf_printf(e->out, "const %s acc%d_0 = acc%d;\n", T, u->var, u->var);
    const bool blocked = f32_into_f64(u);
    ts_em_indent(e);
    if (blocked) {
        ts_buf_printf(e->out, "tsrt_f64x8 lanev%d_lo = {0}, lanev%d_hi = {0};\n", v, v);
    } else {
        ts_buf_printf(e->out, "%s lane%d[%d];\n", T, v, LANES);
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) lane%d[l] = %s;\n", LANES, v, ident);
    }
    ts_em_indent(e);
    ts_buf_printf(e->out, "int64_t i%d_b = 0;\n", v);
    char lane[32], nan[32];
    snprintf(lane, sizeof lane, "lane%d[l]", v);
    snprintf(nan, sizeof nan, "nan%d[l]", v);
    /* the flags as wide as the values, so both vectorize lane for lane */
    const char *NT = f ? "int32_t" : "int64_t";
    if (blocked) {
        char flane[32], end[32];
        snprintf(flane, sizeof flane, "flane%d[l]", v);
        snprintf(end, sizeof end, "i%d_e", v);
        ts_em_indent(e);
        ts_buf_printf(e->out, "while (i%d_b + %d <= %s) {\n", v, LANES, ext);
        ts_em_open(e);
        ts_em_indent(e);
        ts_buf_printf(e->out, "float flane%d[%d];\n", v, LANES);
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) flane%d[l] = 0;\n", LANES, v);
        ts_em_indent(e);
        /* four sets take four blocks at a time: the same terms per lane,
         * a quarter of the flushes (D84) */
        const bool wide = long_row && !keeps_values(s, u);
        const int block = wide ? 4 * BLOCK : BLOCK;
        ts_buf_printf(e->out, "const int64_t i%d_e = i%d_b + %d < %s ? i%d_b + %d : %s;\n", v, v, block, ext, v,
                      block, ext);
        if (wide) wide_sum(e, s, u, end);
        lane_loop(e, s, u, u->value->a[0], TS_DTYPE_F32, flane, NULL, end, LANES, "flane");
        /* the block's partials into the f64 lanes as vectors (D49) */
        ts_em_indent(e);
        ts_buf_printf(e->out, "tsrt_lanes_add16(&lanev%d_lo, &lanev%d_hi, flane%d);\n", v, v, v);
        ts_em_close(e);
        ts_em_indent(e);
        /* the first halving as one vector add: lane l + lane l + 8 */
        ts_buf_printf(e->out, "double lane%d[%d];\n", v, LANES / 2);
        ts_em_indent(e);
        ts_buf_printf(e->out, "{ const tsrt_f64x8 h = lanev%d_lo + lanev%d_hi; memcpy(lane%d, &h, sizeof h); }\n", v,
                      v, v);
    } else {
        if (!sum) {
            ts_em_indent(e);
            ts_buf_printf(e->out, "%s nan%d[%d];\n", NT, v, LANES);
            ts_em_indent(e);
            ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) nan%d[l] = 0;\n", LANES, v);
        }
        if (width > LANES) wide_lanes(e, s, u, lane, nan, ext, width);
        lane_loop(e, s, u, u->value, dt, lane, sum ? NULL : nan, ext, LANES, "lane");
    }
    char accn[32], cond[128];
    snprintf(accn, sizeof accn, "acc%d", u->var);
    if (sum) {
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (int64_t i%d = i%d_b; i%d < %s; i%d++) {\n", v, v, v, ext, v);
        ts_em_body(e, s->body);
        /* the lanes halved down to one, then into the accumulator: a
         * chain of 4 adds where folding them in turn was 16 (LANES f64
         * adds in a row cost layer norm 2 x 64 cycles of ~860 a row) */
        char hi[40];
        for (int g = blocked ? LANES / 4 : LANES / 2; g >= 1; g /= 2) {
            ts_buf m = {0};
            snprintf(hi, sizeof hi, "lane%d[l + %d]", v, g);
            ts_em_combine(e, &m, u->op, dt, lane, hi);
            ts_em_indent(e);
            ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) %s = %s;\n", g, lane, m.data ? m.data : "0");
            ts_buf_free(&m);
        }
        ts_buf m = {0};
        snprintf(hi, sizeof hi, "lane%d[0]", v);
        ts_em_combine(e, &m, u->op, dt, accn, hi);
        ts_em_indent(e);
        ts_buf_printf(e->out, "acc%d = %s;\n", u->var, m.data ? m.data : "0");
        ts_buf_free(&m);
        /* A partial that overflowed or met an inf or NaN leaves the f64
         * sum not finite; the reference's f64 sum may not overflow where
         * an f32 partial did, so such a row is summed again in order
         * (a finite f64 total means every partial was finite: then this
         * is the blocked sum, D27). Plain f64 sums check it as well. */
        snprintf(cond, sizeof cond, "!isfinite(acc%d)", u->var);
    } else {
        /* The tail into lane 0, then the lanes halved down to one and into
         * the accumulator, all by the plain select: no NaN reaches a lane,
         * and a zero result gets its sign again. (tsrt_maxf on scalars
         * compiles to branches, which random rows mispredict: the exact
         * fold of 64 lanes cost softmax 1.5 ms of 6, D48.) */
        const char op = u->op == TS_OP_MAX ? '>' : '<';
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (; i%d_b < %s; i%d_b++) {\n", v, ext, v);
        ts_em_open(e);
        ts_em_indent(e);
        ts_buf_printf(e->out, "const int l = 0;\n");
        lane_body(e, s, u, u->value, dt, lane, nan, 0);
        ts_em_close(e);
        for (int g = LANES / 2; g >= 1; g /= 2) {
            ts_em_indent(e);
            ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) lane%d[l] = lane%d[l + %d] %c lane%d[l] ? lane%d[l + %d] : lane%d[l];\n",
                          g, v, v, g, op, v, v, g, v);
        }
        ts_em_indent(e);
        ts_buf_printf(e->out, "acc%d = lane%d[0] %c acc%d ? lane%d[0] : acc%d;\n", u->var, v, op, u->var, v, u->var);
        ts_em_indent(e);
        ts_buf_printf(e->out, "%s nany%d = 0;\n", NT, v);
        ts_em_indent(e);
        ts_buf_printf(e->out, "for (int l = 0; l < %d; l++) nany%d |= nan%d[l];\n", LANES, v, v);
        snprintf(cond, sizeof cond, "nany%d || acc%d != acc%d", v, u->var, u->var);
    }
    redo_in_order(e, s, u, ext, cond);
    if (!sum) zero_sign(e, s, u, ext);
    ts_em_close(e);
    return true;
}
