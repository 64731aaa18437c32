/* test_npy.c — the .npy reader and writer: round trips of every dtype NumPy
 * has, the header variants NumPy writes (versions 1.0-3.0, big-endian data,
 * Python 2 longs), empty and scalar arrays, and every error path. */
#include "check.h"
#include "core/core.h"
#include "core/tensor.h"
#include "core/dtype.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static char tmp_path[256];

/* A buffer in .npy layout: magic, version, header length (u16 for 1.x, u32
 * otherwise), the dict padded with spaces and a newline to `align`, data. */
static size_t make_npy(unsigned char *out, size_t cap, int major, const char *dict,
                       const void *data, size_t n)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict), hlen = dl + 1;
    while ((pre + hlen) % 16) hlen++;
    if (pre + hlen + n > cap) return 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out + pre, dict, dl);
    memset(out + pre + dl, ' ', hlen - dl - 1);
    out[pre + hlen - 1] = '\n';
    if (n) memcpy(out + pre + hlen, data, n);
    return pre + hlen + n;
}

/* Read a buffer; the status, with *out set only on success. */
static ts_status read_buf(const unsigned char *b, size_t n, ts_tensor **out, ts_err *err)
{
    *out = NULL;
    ts_err_clear(err);
    return ts_npy_read_mem(b, n, out, err);
}

/* Expect a read of dict+data to fail with `code` and a message holding `frag`. */
static void expect_fail(int major, const char *dict, const void *data, size_t n, ts_status code,
                        const char *frag)
{
    unsigned char b[1024];
    size_t len = make_npy(b, sizeof b, major, dict, data, n);
    ts_tensor *t;
    ts_err err = {0};
    ts_status s = read_buf(b, len, &t, &err);
    CHECK_MSG(s == code, "%s: got %s (%s)", dict, ts_status_name(s), err.msg);
    CHECK_MSG(strstr(err.msg, frag) != NULL, "%s: message '%s' lacks '%s'", dict, err.msg, frag);
    if (s == TS_OK) ts_tensor_release(t);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = malloc(1 << 16);
    *len = b ? fread(b, 1, 1 << 16, f) : 0;
    fclose(f);
    return b;
}

/* ---- round trips ---------------------------------------------------------- */

static void test_round_trip_all_dtypes(void)
{
    int64_t shape[2] = {2, 3};
    for (int d = 0; d < TS_DTYPE_COUNT; d++) {
        ts_dtype dt = (ts_dtype)d;
        if (dt == TS_DTYPE_BF16) continue;
        ts_err err = {0};
        ts_tensor *t = NULL, *back = NULL;
        CHECK(ts_tensor_new(dt, 2, shape, &t, &err) == TS_OK);
        unsigned char *p = t->data;
        for (size_t i = 0; i < t->nbytes; i++) p[i] = (unsigned char)(i * 37 + 11);
        if (dt == TS_DTYPE_BOOL)
            for (size_t i = 0; i < t->nbytes; i++) p[i] &= 1;
        if (ts_dtype_is_storage(dt)) {   /* NumPy has no such type: a clear refusal */
            CHECK_MSG(ts_npy_write(tmp_path, t, &err) == TS_ERR_UNSUPPORTED && strstr(err.msg, "no NumPy type"),
                      "%s: %s", ts_dtype_name(dt), err.msg);
            ts_tensor_release(t);
            continue;
        }
        CHECK_MSG(ts_npy_write(tmp_path, t, &err) == TS_OK, "%s: %s", ts_dtype_name(dt), err.msg);
        CHECK_MSG(ts_npy_read(tmp_path, &back, &err) == TS_OK, "%s: %s", ts_dtype_name(dt), err.msg);
        CHECK_MSG(back && ts_tensor_equal(t, back), "%s differs after a round trip", ts_dtype_name(dt));
        ts_tensor_release(back);
        ts_tensor_release(t);
    }
}

/* The writer's output is byte for byte what np.save writes (version 1.0,
 * data 64-byte aligned). */
static void test_writer_header(void)
{
    int64_t shape[1] = {3};
    float v[3] = {1, 2, 3};
    ts_tensor *t = NULL;
    ts_err err = {0};
    CHECK(ts_tensor_wrap(TS_DTYPE_F32, 1, shape, v, &t, &err) == TS_OK);
    CHECK(ts_npy_write(tmp_path, t, &err) == TS_OK);
    size_t n = 0;
    unsigned char *b = slurp(tmp_path, &n);
    CHECK(b && n == 128 + 12);
    if (b && n == 140) {
        CHECK(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0);
        CHECK(b[8] == 118 && b[9] == 0);
        const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
        CHECK(memcmp(b + 10, want, strlen(want)) == 0);
        CHECK(b[127] == '\n');
        CHECK(memcmp(b + 128, v, 12) == 0);
    }
    free(b);
    ts_tensor_release(t);
}

static void test_bf16_refused(void)
{
    int64_t shape[1] = {2};
    ts_tensor *t = NULL;
    ts_err err = {0};
    CHECK(ts_tensor_new(TS_DTYPE_BF16, 1, shape, &t, &err) == TS_OK);
    CHECK(ts_npy_write(tmp_path, t, &err) == TS_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "bf16") != NULL);
    ts_tensor_release(t);
}

static void test_empty_and_scalar(void)
{
    int64_t shapes[3][3] = {{0}, {2, 0, 3}, {0}};
    int ranks[3] = {1, 3, 0};
    for (int k = 0; k < 3; k++) {
        ts_tensor *t = NULL, *back = NULL;
        ts_err err = {0};
        CHECK(ts_tensor_new(TS_DTYPE_F64, ranks[k], shapes[k], &t, &err) == TS_OK);
        if (ranks[k] == 0) *(double *)t->data = -2.5;
        CHECK(ts_npy_write(tmp_path, t, &err) == TS_OK);
        CHECK_MSG(ts_npy_read(tmp_path, &back, &err) == TS_OK, "%s", err.msg);
        CHECK(back && back->rank == ranks[k] && back->numel == (ranks[k] ? 0 : 1));
        CHECK(back && ts_tensor_equal(t, back));
        ts_tensor_release(back);
        ts_tensor_release(t);
    }
    unsigned char b[256];
    ts_tensor *t;
    ts_err err = {0};
    int32_t seven = 7;
    size_t n = make_npy(b, sizeof b, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", &seven, 4);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->rank == 0 && t->numel == 1 && *(int32_t *)t->data == 7);
    ts_tensor_release(t);
}

/* ---- header variants -------------------------------------------------------- */

static void test_big_endian(void)
{
    unsigned char b[256], data[16];
    ts_tensor *t;
    ts_err err = {0};
    const unsigned char i4[8] = {0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe};   /* 258, -2 */
    size_t n = make_npy(b, sizeof b, 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", i4, 8);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->dtype == TS_DTYPE_I32 && ((int32_t *)t->data)[0] == 258 && ((int32_t *)t->data)[1] == -2);
    ts_tensor_release(t);

    double v = 1.5;                                  /* f64 bytes, reversed */
    for (int i = 0; i < 8; i++) data[i] = ((unsigned char *)&v)[7 - i];
    n = make_npy(b, sizeof b, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", data, 8);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->dtype == TS_DTYPE_F64 && *(double *)t->data == 1.5);
    ts_tensor_release(t);

    const unsigned char f2[2] = {0x3c, 0x00};       /* f16 1.0 */
    n = make_npy(b, sizeof b, 1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }", f2, 2);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->dtype == TS_DTYPE_F16 && *(uint16_t *)t->data == 0x3c00);
    ts_tensor_release(t);

    const unsigned char u1[2] = {200, 7};           /* one byte: order is moot */
    n = make_npy(b, sizeof b, 1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", u1, 2);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->dtype == TS_DTYPE_U8 && ((uint8_t *)t->data)[0] == 200);
    ts_tensor_release(t);
}

static void test_versions_and_spellings(void)
{
    unsigned char b[256];
    ts_tensor *t;
    ts_err err = {0};
    uint16_t v[6] = {1, 2, 3, 4, 5, 6};
    for (int major = 1; major <= 3; major++) {
        size_t n = make_npy(b, sizeof b, major, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", v, 12);
        CHECK_MSG(read_buf(b, n, &t, &err) == TS_OK, "version %d: %s", major, err.msg);
        CHECK(t && t->rank == 2 && t->shape[0] == 2 && t->shape[1] == 3 && ((uint16_t *)t->data)[5] == 6);
        ts_tensor_release(t);
    }
    /* key order, double quotes and Python 2 longs all occur in the wild */
    size_t n = make_npy(b, sizeof b, 1, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<u2\"}", v, 12);
    CHECK_MSG(read_buf(b, n, &t, &err) == TS_OK, "%s", err.msg);
    CHECK(t && t->shape[0] == 2 && t->shape[1] == 3);
    ts_tensor_release(t);
    /* extra trailing bytes after the data are ignored, as NumPy does */
    n = make_npy(b, sizeof b, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\1\0\0", 3);
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    CHECK(t && t->dtype == TS_DTYPE_BOOL && t->numel == 1);
    ts_tensor_release(t);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_bad_magic_and_truncation(void)
{
    unsigned char b[256];
    float v[2] = {1, 2};
    ts_tensor *t;
    ts_err err = {0};
    size_t n = make_npy(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
    b[1] = 'X';
    CHECK(read_buf(b, n, &t, &err) == TS_ERR_INVALID_MODEL && strstr(err.msg, "magic"));
    b[1] = 'N';
    CHECK(read_buf(b, 5, &t, &err) == TS_ERR_INVALID_MODEL);            /* inside the magic */
    CHECK(read_buf(b, 30, &t, &err) == TS_ERR_INVALID_MODEL && strstr(err.msg, "header"));
    CHECK(read_buf(b, n - 1, &t, &err) == TS_ERR_INVALID_MODEL && strstr(err.msg, "truncated"));
    CHECK(read_buf(b, n, &t, &err) == TS_OK);
    ts_tensor_release(t);
    b[6] = 9;
    CHECK(read_buf(b, n, &t, &err) == TS_ERR_UNSUPPORTED && strstr(err.msg, "version"));
    n = make_npy(b, sizeof b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
    CHECK(read_buf(b, 11, &t, &err) == TS_ERR_INVALID_MODEL);           /* u32 length cut */
    CHECK(read_buf(b, n - 8, &t, &err) == TS_ERR_INVALID_MODEL && strstr(err.msg, "truncated"));
    CHECK(read_buf(NULL, 0, &t, &err) == TS_ERR_INVALID_MODEL);
}

static void test_header_errors(void)
{
    float v[4] = {0};
    expect_fail(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", v, 8, TS_ERR_UNSUPPORTED, "Fortran");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", v, 8, TS_ERR_INVALID_MODEL, "fortran_order");
    expect_fail(1, "{'descr': '<f4', 'shape': (2,), }", v, 8, TS_ERR_INVALID_MODEL, "fortran_order");
    expect_fail(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", v, 16, TS_ERR_UNSUPPORTED, "c8");
    expect_fail(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", v, 12, TS_ERR_UNSUPPORTED, "U3");
    expect_fail(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", v, 8, TS_ERR_UNSUPPORTED, "not supported");
    expect_fail(1, "{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", v, 8, TS_ERR_UNSUPPORTED, "f3");
    expect_fail(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", v, 4, TS_ERR_INVALID_MODEL, "descr");
    expect_fail(1, "{'descr': '!f4', 'fortran_order': False, 'shape': (1,), }", v, 4, TS_ERR_INVALID_MODEL, "byte order");
    expect_fail(1, "{'fortran_order': False, 'shape': (1,), }", v, 4, TS_ERR_INVALID_MODEL, "descr");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, }", v, 4, TS_ERR_INVALID_MODEL, "shape");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, ", v, 4, TS_ERR_INVALID_MODEL, "shape");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", v, 4, TS_ERR_INVALID_MODEL, "number");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", v, 4,
                TS_ERR_UNSUPPORTED, "rank");
}

/* Sizes that overflow, or that no data could back, fail without allocating. */
static void test_huge_shapes(void)
{
    float v[4] = {0};
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", v, 4,
                TS_ERR_INVALID_MODEL, "overflows");
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", v, 4,
                TS_ERR_OOM, "overflows");
    expect_fail(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", v, 4,
                TS_ERR_OOM, "overflows");
    /* representable, but far larger than the buffer: a truncation, not a
     * 4 TB allocation */
    expect_fail(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", v, 4,
                TS_ERR_INVALID_MODEL, "truncated");
    expect_fail(3, "{'descr': '<u1', 'fortran_order': False, 'shape': (65536, 65536, 65536), }", v, 4,
                TS_ERR_INVALID_MODEL, "truncated");
}

static void test_file_errors(void)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    CHECK(ts_npy_read("/nonexistent/dir/x.npy", &t, &err) == TS_ERR_IO);
    CHECK(strstr(err.msg, "/nonexistent/dir/x.npy") != NULL);
    FILE *f = fopen(tmp_path, "wb");
    if (f) {
        fputs("not numpy at all", f);
        fclose(f);
    }
    ts_err_clear(&err);
    CHECK(ts_npy_read(tmp_path, &t, &err) == TS_ERR_INVALID_MODEL);
    CHECK(strstr(err.msg, tmp_path) && strstr(err.msg, "magic"));
    int64_t shape[1] = {1};
    float one = 1;
    CHECK(ts_tensor_wrap(TS_DTYPE_F32, 1, shape, &one, &t, &err) == TS_OK);
    CHECK(ts_npy_write("/nonexistent/dir/y.npy", t, &err) == TS_ERR_IO);
    ts_tensor_release(t);
}

int main(void)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ts_test_npy_%ld.npy", (long)getpid());
    test_round_trip_all_dtypes();
    test_writer_header();
    test_bf16_refused();
    test_empty_and_scalar();
    test_big_endian();
    test_versions_and_spellings();
    test_bad_magic_and_truncation();
    test_header_errors();
    test_huge_shapes();
    test_file_errors();
    remove(tmp_path);
    return check_report();
}
