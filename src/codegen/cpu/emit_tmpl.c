/* emit_tmpl.c — a contraction kernel as C: the call of a runtime template
 * (tsrt_sgemm, tsrt_conv) with its arguments, the epilogue callback, the
 * workspace size, the packing of constant operands (D26, D30) and the
 * tile epilogue's tables and descriptor (D32). The loop IR inside them is
 * written by emit_c.c's statement emitter. */
#include "codegen/cpu/emit_int.h"

#include <stdio.h>
#include <string.h>

int ts_emit_c_params(const ts_lkernel *k, int64_t *vals)
{
    const ts_ltmpl *t = k->tmpl;
    int n = 0;
    for (int i = 0; t && i < t->n_args; i++)
        if (t->arg[i]->k == TS_LX_CONST) {
            if (vals) vals[n] = t->arg[i]->ci;
            n++;
        }
    return n;
}

/* The template's arguments, their names in names[]: declared locals,
 * and each constant one read from D after the kernel's dims
 * (ts_emit_c_params), not written as a literal: the templates take their
 * shapes at run time anyway, and kernels that differ only in them (a
 * dense block's 1x1 convs, each wider by 32 input channels) then have
 * the same C and compile once (D119, D186). */
static void template_args(em *e, const ts_lkernel *k, ts_buf *names)
{
    const ts_ltmpl *t = k->tmpl;
    for (int i = 0, j = k->n_dims; i < t->n_args; i++) {
        if (t->arg[i]->k == TS_LX_CONST) ts_buf_printf(&names[i], "D[%d]", j++);
        else ts_em_ref(e, &names[i], t->arg[i], false);
    }
}

/* `tsrt_sgemm_args g` filled from the template's arguments (names). */
static void gemm_args(ts_buf *out, const ts_ltmpl *t, ts_buf *names)
{
    static const char *const f[] = {"m", "n", "k", "a_rs", "a_cs", "b_rs", "b_cs", "c_rs", "batch", "a_bs",
                                    "b_bs", "c_bs"};
    ts_buf_printf(out, "    tsrt_sgemm_args g = {0};\n    g.a = b%d + %lld; g.b = b%d + %lld; g.c = b%d; g.c_cs = 1;\n", t->a,
                  (long long)t->a_off, t->b, (long long)t->b_off, t->c);
    for (int i = 0; i < t->n_args; i++) ts_buf_printf(out, "    g.%s = %s;\n", f[i], names[i].data);
}

/* The start of a packer of constant operands: NAME_pbsize (pass 0) or
 * NAME_pack (pass 1), the kernel's buffers and dims as locals, and the
 * template's arguments named in names[]. */
static void pack_head(em *e, const ts_lkernel *k, int pass, ts_buf *names)
{
    ts_buf *out = e->out;
    if (pass == 0)
        ts_buf_printf(out, "\nsize_t %s_pbsize(void *const *bufs, const int64_t *D, int nth)\n{\n", k->name);
    else
        ts_buf_printf(out, "\nvoid %s_pack(void *const *bufs, const int64_t *D, float *dst, int ith, int nth)\n{\n",
                      k->name);
    ts_buf_puts(out, "    (void)bufs; (void)D; (void)nth;\n");
    ts_em_prologue(e, k);
    ts_em_reset(e);
    memset(names, 0, sizeof *names * TS_TMPL_MAX_ARGS);
    template_args(e, k, names);
}

/* A constant B packed once (D26): NAME_pbsize(bufs, D, nth) is the bytes of the
 * packed copy, NAME_pack(bufs, D, dst, ith, nth) thread ith's share of
 * packing it; the runtime calls them before the kernel's first launch. */
static void prepack_fns(em *e, const ts_lkernel *k)
{
    const ts_ltmpl *t = k->tmpl;
    ts_buf *out = e->out;
    ts_buf names[TS_TMPL_MAX_ARGS];
    for (int pass = 0; pass < 2; pass++) {
        pack_head(e, k, pass, names);
        gemm_args(out, t, names);
        if (pass == 0) ts_buf_puts(out, "    return tsrt_sgemm_packed_b_size(&g);\n}\n");
        else ts_buf_puts(out, "    tsrt_sgemm_pack_b(&g, dst, ith, nth);\n}\n");
        for (int i = 0; i < t->n_args; i++) ts_buf_free(&names[i]);
    }
}

static const char *const conv_fields[] = {"n", "c", "h", "w", "o", "kh", "kw", "oh", "ow", "groups", "stride_h",
                                          "stride_w", "pad_h", "pad_w", "dil_h", "dil_w", "ldil_h", "ldil_w",
                                          "y_bs"};

/* `tsrt_conv_args a` with the shape fields from the template's arguments. */
static void conv_args(ts_buf *out, const ts_ltmpl *t, ts_buf *names)
{
    ts_buf_puts(out, "    tsrt_conv_args a = {0};\n");
    for (int i = 0; i < t->n_args; i++) ts_buf_printf(out, "    a.%s = %s;\n", conv_fields[i], names[i].data);
}

/* Whether every template argument is a constant: the shape, and so the
 * algorithm tsrt_conv picks, is the same in every run. */
static bool fixed_shape(const ts_ltmpl *t)
{
    for (int i = 0; i < t->n_args; i++)
        if (t->arg[i]->k != TS_LX_CONST) return false;
    return true;
}

/* A conv's constant weights prepared once per program; the runtime calls
 * NAME_pbsize and NAME_pack (thread ith's share of the output channels)
 * before the first launch, as for a packed B. The copy holds, in order:
 *   - 16 floats: two int64, the form m of the prepared weights
 *     (tsrt_conv_pre: 4 or 2, Winograd F(m x m), D38; 1, W^T panels for
 *     GEMM_T, D41; 0: none) and the float offset of the scaled weights
 *     (0: none);
 *   - for a conv whose shape takes a prepared form at the first run (3x3
 *     stride 1, or one group: lower_tmpl.c's prepack_pre), the prepared
 *     weights (tsrt_conv_pre_pack);
 *   - with a folded batch norm (D30), the weights scaled by it,
 *     w[o][...] * s[o] with s[o] formed in double (NAME_wscale), which the
 *     preparation then reads. When the shape is fixed and takes a prepared
 *     form, no other algorithm ever runs: the scale is applied to the
 *     prepared weights instead (tsrt_conv_pre_scale) and the scaled copy
 *     is not kept (ResNet-50: 33 MB). */
static void conv_pack_fns(em *e, const ts_lkernel *k)
{
    const ts_ltmpl *t = k->tmpl;
    ts_buf *out = e->out;
    ts_buf names[TS_TMPL_MAX_ARGS];
    const long long scaled = t->prepack_w ? (long long)(t->w_rows * t->w_cols) : 0;
    if (t->prepack_w) {
        ts_buf_printf(out, "\nstatic double %s_wscale(void *const *bufs, int64_t o)\n{\n    (void)bufs; (void)o;\n"
                           "    double s = 1.0;\n", k->name);
        for (int i = 0; i < t->n_wscale; i++) {
            const char op = t->wscale[i].op == TS_OP_MUL ? '*' : '/';
            if (t->wscale[i].buf < 0) ts_buf_printf(out, "    s %c= %a;\n", op, (double)t->wscale[i].lit);
            else
                ts_buf_printf(out, "    s %c= (double)((const float *)bufs[%d])[%s];\n", op, t->wscale[i].buf,
                              t->wscale[i].chan ? "o" : "0");
        }
        ts_buf_puts(out, "    return s;\n}\n");
    }
    for (int pass = 0; pass < 2; pass++) {
        pack_head(e, k, pass, names);
        conv_args(out, t, names);
        /* the form is timed with the epilogue the kernel calls per block
         * (D126): a costly one (SiLU) favours the algorithms whose blocks
         * are rows of positions; after a tile epilogue's terms, what
         * follows them (D138) */
        if (t->epi && (!t->te || t->te_rest) && t->prepack_pre)
            ts_buf_printf(out, "    %s_ctx ctx = {bufs, D};\n    a.epi = %s_%s; a.epi_ctx = &ctx;\n", k->name, k->name,
                          t->te_rest ? "rest" : "epi");
        /* timed as the kernel will split it (D130): the runtime packs on
         * the pool the kernel runs on */
        ts_buf_printf(out, "    a.wt = b%d;\n    a.threads = nth;\n    const int m = %s;\n", t->b,
                      t->prepack_pre ? "tsrt_conv_pre(&a)" : "0");
        ts_buf_puts(out, "    const int64_t uf = m ? ((int64_t)(tsrt_conv_pre_size(&a, m) / sizeof(float)) + 15) / 16 * 16 : 0;\n");
        if (!t->prepack_w) ts_buf_puts(out, "    const int64_t sf = 0;\n");
        else ts_buf_printf(out, "    const int64_t sf = %sINT64_C(%lld);\n", fixed_shape(t) ? "m > 0 ? 0 : " : "", scaled);
        if (pass == 0) {
            ts_buf_puts(out, "    return (size_t)(16 + uf + sf) * sizeof(float);\n}\n");
        } else {
            ts_buf_puts(out, "    const int64_t o0 = a.o * ith / nth, o1 = a.o * (ith + 1) / nth;\n"
                             "    if (ith == 0) {\n        const int64_t h[2] = {m, sf ? 16 + uf : 0};\n"
                             "        memcpy(dst, h, sizeof h);\n    }\n");
            if (t->prepack_w)
                ts_buf_printf(out, "    if (sf) {   /* this thread's rows scaled: all its part of the transform reads */\n"
                                   "        float *sc = dst + 16 + uf;\n        const int64_t cols = INT64_C(%lld);\n"
                                   "        for (int64_t o = o0; o < o1; o++) {\n"
                                   "            const double s = %s_wscale(bufs, o);\n"
                                   "            for (int64_t q = 0; q < cols; q++) sc[o * cols + q] = (float)(a.wt[o * cols + q] * s);\n"
                                   "        }\n        a.wt = sc;\n    }\n",
                              (long long)t->w_cols, k->name);
            ts_buf_puts(out, "    if (m) tsrt_conv_pre_pack(&a, m, o0, o1, dst + 16);\n");
            if (t->prepack_w)
                ts_buf_printf(out, "    if (m && !sf)\n        for (int64_t o = o0; o < o1; o++) "
                                   "tsrt_conv_pre_scale(&a, m, o, (float)%s_wscale(bufs, o), dst + 16);\n", k->name);
            ts_buf_puts(out, "    (void)o0; (void)o1;\n}\n");
        }
        for (int i = 0; i < t->n_args; i++) ts_buf_free(&names[i]);
    }
}

/* The lengths of the tile epilogue's tables as locals TE_ROWS_UP (rows,
 * rounded up to whole cache lines so that the column table starts on one)
 * and TE_COLS, then `tail`. */
static void te_tables(em *e, const ts_ltmpl *t, const char *tail)
{
    ts_buf r = {0}, c = {0};
    if (t->te_rows) ts_em_ref(e, &r, t->te_rows, false);
    if (t->te_cols) ts_em_ref(e, &c, t->te_cols, false);
    ts_buf_printf(e->out, "    const int64_t TE_ROWS_UP = (%s + 15) / 16 * 16, TE_COLS = %s;\n", r.data ? r.data : "0",
                  c.data ? c.data : "0");
    ts_buf_puts(e->out, tail);
    ts_buf_free(&r);
    ts_buf_free(&c);
}

/* The tile epilogue (D32) of the template call `var` (g or a): the tables
 * filled in this thread's workspace after the template's part (te_row
 * declared there by the caller), then the descriptor. */
static void te_setup(em *e, const ts_lkernel *k, const ts_ltmpl *t, const char *var)
{
    ts_buf *out = e->out;
    te_tables(e, t, "");
    ts_buf_puts(out, "    float *te_col = te_row + TE_ROWS_UP;\n    (void)te_col; (void)TE_COLS;\n");
    ts_em_stmts(e, t->te_fill);
    ts_buf_puts(out, "    tsrt_tepi te = {0};\n");
    if (t->te_rows) ts_buf_puts(out, "    te.row = te_row;\n");
    if (t->te_cols) ts_buf_puts(out, "    te.col = te_col;\n");
    if (t->te_res >= 0) {
        ts_buf o = {0}, r = {0};
        ts_em_ref(e, &o, t->te_res_off, false);
        ts_em_ref(e, &r, t->te_res_rs, false);
        ts_buf_printf(out, "    te.res = b%d + %s; te.res_rs = %s;\n", t->te_res, o.data, r.data);
        ts_buf_free(&o);
        ts_buf_free(&r);
    }
    if (t->te_rest) ts_buf_printf(out, "    te.rest = %s_rest; te.rest_ctx = &ctx;\n", k->name);
    ts_buf_printf(out, "    te.lo = %a; te.hi = %a; te.clamp = %d;\n    %s.te = &te;\n", (double)t->te_lo,
                  (double)t->te_hi, t->te_clamp, var);
}

/* A contraction: the epilogue as a static function, the workspace size,
 * and the call of the runtime template (docs/kernels.md). */
/* A sort (D117): the runtime's lane sort for the element type, each
 * thread a share of the lanes, the workspace two copies of a lane. */
static void sort_kernel(em *e, const ts_lkernel *k)
{
    const ts_ltmpl *t = k->tmpl;
    ts_buf *out = e->out, names[TS_TMPL_MAX_ARGS];
    const char *T = ts_emit_ctype(k->bufs[t->a].dt);
    char sfx[8];
    const ts_dtype dt = k->bufs[t->a].dt;
    snprintf(sfx, sizeof sfx, "%c%d", ts_dtype_is_fp(dt) ? 'f' : ts_dtype_is_signed(dt) ? 'i' : 'u', ts_dtype_bits(dt));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) ts_buf_printf(out, "\nsize_t %s_ws(const int64_t *D)\n{\n    (void)D;\n", k->name);
        else
            ts_buf_printf(out, "\n/* %s */\nvoid %s(void *const *bufs, const int64_t *D, int ith, int nth, void *ws)\n{\n",
                          k->what, k->name);
        if (pass == 0)
            for (int i = 0; i < k->n_dims; i++) ts_buf_printf(out, "    const int64_t D%d = D[%d];\n", i, i);
        else ts_em_prologue(e, k);
        ts_em_reset(e);
        memset(names, 0, sizeof names);
        template_args(e, k, names);
        if (pass == 0) ts_buf_printf(out, "    return tsrt_sort_workspace(%s);\n}\n", names[1].data);
        else
            ts_buf_printf(out, "    tsrt_sort_%s((const %s *)b%d, b%d, b%d, %s, %s, %s, %s, ith, nth, ws);\n}\n", sfx, T,
                          t->a, t->b, t->c, names[0].data, names[1].data, names[2].data, names[3].data);
        for (int i = 0; i < t->n_args; i++) ts_buf_free(&names[i]);
    }
}

void ts_em_template_kernel(em *e, const ts_lkernel *k)
{
    const ts_ltmpl *t = k->tmpl;
    ts_buf *out = e->out;
    if (t->kind == TS_TMPL_SORT) {
        sort_kernel(e, k);
        return;
    }
    bool gemm = t->kind == TS_TMPL_GEMM;
    ts_buf names[TS_TMPL_MAX_ARGS];
    /* With a tile epilogue the templates call only what follows its terms
     * (te.rest, tsrt__conv_norm and tsrt_sgemm): the whole epilogue as a
     * callback would be dead code, and its compile was ~15% of DenseNet's
     * cold compile */
    const bool whole_epi = t->epi && !t->te;
    if (t->epi)
        ts_buf_printf(out, "\ntypedef struct %s_ctx { void *const *bufs; const int64_t *D; } %s_ctx;\n", k->name, k->name);
    if (whole_epi) {
        ts_buf_printf(out, "static void %s_epi(void *vctx, float *restrict block, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0,\n"
                           "    int64_t mb, int64_t nb)\n{\n", k->name);
        ts_buf_printf(out, "    const %s_ctx *ctx = vctx;\n    void *const *bufs = ctx->bufs;\n    const int64_t *D = ctx->D;\n"
                           "    (void)bufs; (void)D; (void)cs;\n", k->name);
        ts_em_prologue(e, k);
        ts_buf_puts(out, "    const int64_t P0 = m0, P1 = n0, P2 = mb, P3 = nb, P4 = rs;\n");
        ts_em_reset(e);
        ts_em_stmts(e, t->epi);
        ts_buf_puts(out, "}\n");
    }
    if (t->te_rest) {
        /* what follows the tile epilogue's terms (D138): element by
         * element, so a dense block is one row (a 3x3 map's rows of 9
         * left its SiLU mostly scalar) */
        ts_buf_printf(out, "static void %s_rest(void *vctx, float *restrict block, ptrdiff_t rs, ptrdiff_t cs, int64_t m0,\n"
                           "    int64_t n0, int64_t mb, int64_t nb)\n{\n", k->name);
        ts_buf_printf(out, "    const %s_ctx *ctx = vctx;\n    void *const *bufs = ctx->bufs;\n    const int64_t *D = ctx->D;\n"
                           "    (void)bufs; (void)D; (void)cs;\n", k->name);
        ts_em_prologue(e, k);
        ts_buf_puts(out, "    const int dense = rs == nb;\n"
                         "    const int64_t P0 = m0, P1 = n0, P2 = dense ? 1 : mb, P3 = dense ? mb * nb : nb, P4 = rs;\n");
        ts_em_reset(e);
        ts_em_stmts(e, t->te_rest);
        ts_buf_puts(out, "}\n");
    }
    /* workspace bytes per thread */
    ts_buf_printf(out, "\nsize_t %s_ws(const int64_t *D)\n{\n    (void)D;\n", k->name);
    for (int i = 0; i < k->n_dims; i++) ts_buf_printf(out, "    const int64_t D%d = D[%d];\n", i, i);
    ts_em_reset(e);
    memset(names, 0, sizeof names);
    template_args(e, k, names);
    if (gemm) ts_buf_printf(out, "    size_t s = tsrt_sgemm_workspace(%s, %s, %s);\n", names[0].data, names[1].data, names[2].data);
    else {
        conv_args(out, t, names);
        ts_buf_puts(out, "    size_t s = tsrt_conv_workspace(&a);\n");
    }
    if (t->te) te_tables(e, t, "    return s + TE_ROWS_UP * sizeof(float) + TE_COLS * sizeof(float) + TSRT_ALIGN;\n");
    else ts_buf_puts(out, "    return s;\n");
    ts_buf_puts(out, "}\n");
    for (int i = 0; i < t->n_args; i++) ts_buf_free(&names[i]);
    if (gemm && t->prepack_b) prepack_fns(e, k);
    if (!gemm && (t->prepack_w || t->prepack_pre)) conv_pack_fns(e, k);
    /* the kernel */
    ts_buf_printf(out, "\n/* %s */\nvoid %s(void *const *bufs, const int64_t *D, int ith, int nth, void *ws)\n{\n",
                  k->what, k->name);
    ts_em_prologue(e, k);
    ts_em_reset(e);
    memset(names, 0, sizeof names);
    template_args(e, k, names);
    if (whole_epi || t->te_rest) ts_buf_printf(out, "    %s_ctx ctx = {bufs, D};\n", k->name);
    if (gemm) {
        gemm_args(out, t, names);
        /* an empty batch computes nothing; the template reads 0 as "not
         * batched" (one product), which would read empty operands */
        ts_buf_puts(out, "    if (g.batch <= 0) return;\n");
        if (whole_epi) ts_buf_printf(out, "    g.epi = %s_epi; g.epi_ctx = &ctx;\n", k->name);
        if (t->prepack_b) ts_buf_printf(out, "    g.bp = (const float *)bufs[%d];\n", k->n_bufs);
        if (t->te) {
            ts_buf_printf(out, "    float *te_row = tsrt__align((char *)ws + tsrt_sgemm_workspace(%s, %s, %s));\n",
                          names[0].data, names[1].data, names[2].data);
            te_setup(e, k, t, "g");
        }
        ts_buf_puts(out, "    tsrt_sgemm(&g, ith, nth, ws);\n}\n");
    } else {
        conv_args(out, t, names);
        ts_buf_printf(out, "    a.x = b%d; a.y = b%d;\n", t->a, t->c);
        if (t->prepack_w || t->prepack_pre)
            /* the prepared copy (conv_pack_fns): its header, the
             * transformed weights, the scaled ones. Without a scaled copy
             * the weights as given: there is no scale, or the shape is
             * fixed and always takes the transformed copy, which has it */
            ts_buf_printf(out, "    const float *pk = (const float *)bufs[%d];\n    int64_t h[2];\n"
                               "    memcpy(h, pk, sizeof h);\n    a.wt = h[1] ? pk + h[1] : b%d;\n"
                               "    a.wu_m = (int)h[0]; a.wu = h[0] ? pk + 16 : NULL;\n",
                          k->n_bufs, t->b);
        else ts_buf_printf(out, "    a.wt = b%d;\n", t->b);
        if (whole_epi) ts_buf_printf(out, "    a.epi = %s_epi; a.epi_ctx = &ctx;\n", k->name);
        if (t->te) {
            ts_buf_puts(out, "    float *te_row = tsrt__align((char *)ws + tsrt_conv_workspace(&a));\n");
            te_setup(e, k, t, "a");
        }
        ts_buf_puts(out, "    tsrt_conv(&a, TSRT_CONV_AUTO, ith, nth, ws);\n}\n");
    }
    for (int i = 0; i < t->n_args; i++) ts_buf_free(&names[i]);
}

