/* test_onnx_domains.c — operators of the non-default ONNX domains
 * (ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training) and Swish on
 * bad input: each broken model of tests/onnx/domains/ (written by
 * scripts/gen_domain_models.py) fails to load with its code and a one-line
 * message naming the node; ts_onnx_info marks the domains' operators; and
 * failing each allocation of a load in turn gives TS_ERR_OOM and leaks
 * nothing. The operators' values are checked by `tessera check` over
 * tests/onnx_domains (ctest onnx_domains). Run from the repository root. */
#include "check.h"
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIR "tests/onnx/domains/"
#define CASES "tests/onnx_domains/"

/* The load of DIR name.onnx fails with code; the message names the node
 * (node 'label' (op)) and holds frag, on one line. */
static void expect_fail(const char *name, const char *node, ts_status code, const char *frag)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s.onnx", name);
    ts_graph *g = NULL;
    ts_err err = {0};
    ts_status s = ts_onnx_load(path, 0, NULL, NULL, &g, &err);
    CHECK_MSG(s == code, "%s: got %s (%s), expected %s", name, ts_status_name(s), err.msg, ts_status_name(code));
    CHECK_MSG(strstr(err.msg, frag) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, frag);
    CHECK_MSG(strstr(err.msg, node) == err.msg, "%s: message '%s' does not start with '%s'", name, err.msg, node);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: message is not one line", name);
    CHECK(g == NULL);
    ts_graph_free(g);
}

static void test_training(void)
{
    const char *adam = "node 'adam0' (Adam): ";
    expect_fail("adam_arity", adam, TS_ERR_INVALID_MODEL, "5 inputs: expected R, T and 4 tensors per optimized tensor");
    expect_fail("adam_outputs", adam, TS_ERR_INVALID_MODEL, "2 outputs for 1 optimized tensors: expected 3");
    expect_fail("adam_dtype", adam, TS_ERR_INVALID_MODEL, "input 3 is f64 but the tensor it belongs to (input 2) is f32");
    expect_fail("momentum_no_mode", "node 'momentum0' (Momentum): ", TS_ERR_INVALID_MODEL, "attribute 'mode' is required");
    expect_fail("momentum_bad_mode", "node 'momentum0' (Momentum): ", TS_ERR_INVALID_MODEL, "mode 'heavy'");
    expect_fail("adagrad_r_vector", "node 'adagrad0' (Adagrad): ", TS_ERR_INVALID_MODEL, "input 0 (R) must be a scalar");
    expect_fail("adagrad_t_float", "node 'adagrad0' (Adagrad): ", TS_ERR_INVALID_MODEL, "input 1 (T) is f32; it must be i64");
    expect_fail("gradient_unknown_y", "node 'gradient0' (Gradient): ", TS_ERR_INVALID_MODEL,
                "no tensor named 'q' is computed before this node");
    expect_fail("gradient_arity", "node 'gradient0' (Gradient): ", TS_ERR_INVALID_MODEL,
                "has 2 inputs and 1 outputs; xs and zs name 1 and 1");
}

static void test_ml(void)
{
    expect_fail("binarizer_bool", "node 'binarizer0' (Binarizer): ", TS_ERR_INVALID_MODEL, "X is bool: Binarizer takes");
    expect_fail("afe_float_index", "node 'arrayfeatureextractor0' (ArrayFeatureExtractor): ", TS_ERR_INVALID_MODEL,
                "the indices must be i64");
    const char *le = "node 'labelencoder0' (LabelEncoder): ";
    expect_fail("label_encoder_strings", le, TS_ERR_UNSUPPORTED, "string keys: tessera has no string tensors");
    expect_fail("label_encoder_lengths", le, TS_ERR_INVALID_MODEL, "3 keys but 2 values");
    expect_fail("label_encoder_two_keys", le, TS_ERR_INVALID_MODEL, "exactly one of the keys_* attributes");
    expect_fail("label_encoder_key_dtype", le, TS_ERR_INVALID_MODEL, "X is i64 but the keys are f32");
    const char *te = "node 'treeensemble0' (TreeEnsemble): ";
    expect_fail("tree_no_roots", te, TS_ERR_INVALID_MODEL, "attribute 'tree_roots' is required");
    expect_fail("tree_cycle", te, TS_ERR_INVALID_MODEL, "the tree at root 0 has a cycle");
    expect_fail("tree_bad_target", te, TS_ERR_INVALID_MODEL, "leaf 0 adds to target 5 of 2");
    expect_fail("tree_rank3", te, TS_ERR_SHAPE, "X must be [N, F]");
    expect_fail("tree_probit", te, TS_ERR_UNSUPPORTED, "PROBIT");
    expect_fail("tree_feature", te, TS_ERR_INVALID_MODEL, "node 0 reads feature 9 of 2");
    expect_fail("tree_members", te, TS_ERR_INVALID_MODEL, "1 set-membership nodes but membership_values holds 0");
    expect_fail("tree_old_opset", te, TS_ERR_UNSUPPORTED,
                "operator TreeEnsemble of domain 'ai.onnx.ml' (opset 3) is not supported");
    expect_fail("tree_not_imported", te, TS_ERR_INVALID_MODEL, "the model imports no opset of domain 'ai.onnx.ml'");
}

static void test_flex_swish(void)
{
    const char *fa = "node 'flex0' (FlexAttention): ";
    expect_fail("flex_rank3", fa, TS_ERR_SHAPE, "must be 4-D");
    expect_fail("flex_heads", fa, TS_ERR_INVALID_MODEL, "3 query heads are not a multiple of 2 kv heads");
    expect_fail("flex_score_mod_shape", fa, TS_ERR_SHAPE, "score_mod must keep the shape of its input");
    expect_fail("flex_prob_mod_inputs", fa, TS_ERR_INVALID_MODEL, "subgraph 'prob_mod' has 2 inputs; 1 expected");
    expect_fail("swish_int", "node 'swish0' (Swish): ", TS_ERR_UNSUPPORTED, "input 0 is i32: only float types");
}

static void test_info(void)
{
    char *text = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_onnx_info(CASES "ml_tree_sum_missing/model.onnx", &text, &err) == TS_OK, "%s", err.msg);
    CHECK(text && strstr(text, "ai.onnx.ml.TreeEnsemble") && strstr(text, " ok") && strstr(text, "missing operators: 0"));
    ts_free_string(text);
    text = NULL;
    CHECK_MSG(ts_onnx_info(DIR "tree_old_opset.onnx", &text, &err) == TS_OK, "%s", err.msg);
    CHECK(text && strstr(text, "ai.onnx.ml.TreeEnsemble") && strstr(text, "MISSING"));
    ts_free_string(text);
}

/* ---- allocation failures ------------------------------------------------------------------- */

static long fail_at, n_allocs, live;

static void *failing_alloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n == 0) {
        if (p) live--;
        free(p);
        return NULL;
    }
    if (++n_allocs == fail_at) return NULL;
    void *q = realloc(p, n);
    if (q && !p) live++;
    return q;
}

/* Fail the k-th allocation of a load for every k until a load needs no
 * more: each answer is TS_ERR_OOM or TS_OK, and every block is freed. */
static void test_oom(const char *model)
{
    char path[256];
    snprintf(path, sizeof path, CASES "%s/model.onnx", model);
    int bad = 0, leaks = 0;
    long k;
    for (k = 1; k < 200000; k++) {
        fail_at = k;
        n_allocs = live = 0;
        ts_set_allocator(failing_alloc, NULL);
        ts_graph *g = NULL;
        ts_err err = {0};
        ts_status s = ts_onnx_load(path, 0, NULL, NULL, &g, &err);
        if (s != TS_OK && s != TS_ERR_OOM && bad++ < 3)
            fprintf(stderr, "%s: allocation %ld failed: %s: %s\n", model, k, ts_status_name(s), err.msg);
        ts_graph_free(g);
        bool done = n_allocs < k;
        ts_set_allocator(NULL, NULL);
        if (live) leaks++;
        if (done) break;
    }
    CHECK_MSG(bad == 0, "%s: %d loads failed with something other than TS_ERR_OOM", model, bad);
    CHECK_MSG(leaks == 0, "%s: %d loads leaked", model, leaks);
    CHECK_MSG(k > 5 && k < 200000, "%s: %ld allocations", model, k);
}

int main(void)
{
    test_training();
    test_ml();
    test_flex_swish();
    test_info();
    test_oom("ml_tree_member_leaf_root");
    test_oom("ml_label_encoder_tensor_nan");
    test_oom("train_adam_t0_f64");
    test_oom("flex_capture_symbolic_batch");
    return check_report();
}
