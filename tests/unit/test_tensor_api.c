/* test_tensor_api.c — the public element accessors (tessera.h):
 * ts_tensor_get_f64/i64/u64 and ts_tensor_set_f64 across dtypes, their
 * conversions, and what they give out of range; ts_dtype_is_fp. */
#include "check.h"
#include "tessera.h"

#include <math.h>

static ts_tensor *vec(ts_dtype dt, int64_t n)
{
    ts_tensor *t = NULL;
    return ts_tensor_new(dt, 1, &n, &t, NULL) == TS_OK ? t : NULL;
}

int main(void)
{
    const ts_dtype all[] = {TS_DTYPE_BOOL, TS_DTYPE_I8, TS_DTYPE_U8, TS_DTYPE_I16, TS_DTYPE_U16, TS_DTYPE_I32,
                            TS_DTYPE_U32, TS_DTYPE_I64, TS_DTYPE_U64, TS_DTYPE_F16, TS_DTYPE_BF16, TS_DTYPE_F32,
                            TS_DTYPE_F64};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        ts_tensor *t = vec(all[k], 3);
        CHECK(t != NULL);
        if (!t) continue;
        ts_tensor_set_f64(t, 0, 1);
        ts_tensor_set_f64(t, 2, 3);
        CHECK_MSG(ts_tensor_get_f64(t, 0) == 1 && ts_tensor_get_i64(t, 0) == 1 && ts_tensor_get_u64(t, 0) == 1,
                  "%s", ts_dtype_name(all[k]));
        CHECK_MSG(ts_tensor_get_f64(t, 1) == 0, "%s: zeroed", ts_dtype_name(all[k]));
        double three = all[k] == TS_DTYPE_BOOL ? 1 : 3;   /* bool stores nonzero as true */
        CHECK_MSG(ts_tensor_get_f64(t, 2) == three, "%s", ts_dtype_name(all[k]));
        ts_tensor_set_f64(t, 3, 9);   /* out of range: nothing */
        ts_tensor_set_f64(t, -1, 9);
        CHECK(ts_tensor_get_i64(t, 3) == 0 && ts_tensor_get_u64(t, -1) == 0);
        CHECK((all[k] == TS_DTYPE_F64) == (isnan(ts_tensor_get_f64(t, 3)) != 0));
        CHECK(ts_dtype_is_fp(all[k]) == (all[k] >= TS_DTYPE_F16 && all[k] <= TS_DTYPE_F64));
        ts_tensor_release(t);
    }
    ts_tensor *h = vec(TS_DTYPE_BF16, 1);
    ts_tensor_set_f64(h, 0, 1.00390625);   /* halfway between bf16 1 and 1.0078125: to even */
    CHECK(ts_tensor_get_f64(h, 0) == 1.0);
    ts_tensor_release(h);
    CHECK(ts_tensor_get_f64(NULL, 0) == 0 && ts_tensor_get_i64(NULL, 0) == 0);
    ts_tensor_set_f64(NULL, 0, 1);
    return check_report();
}
