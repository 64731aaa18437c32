/* test_npy_fuzz.c — mutation test of the .npy reader: thousands of
 * corrupted buffers (truncations at every length, byte flips, header edits)
 * go through ts_npy_read_mem. The reader must answer each with a status:
 * never a crash, an over-read (each buffer is its own exact-size heap block,
 * so ASan sees one), a leak, or a tensor larger than the bytes behind it.
 * The PRNG is seeded, so a failure reproduces. */
#include "check.h"
#include "core/core.h"
#include "core/tensor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- deterministic randomness (splitmix64) ------------------------------- */

static uint64_t rng_state = 0x7e55e7a5eedULL;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* ---- seeds: valid files of several dtypes, ranks and versions --------------- */

typedef struct blob {
    unsigned char *b;
    size_t n;
} blob;

static blob make_npy(int major, const char *dict, size_t data_len)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict), hlen = dl + 1;
    while ((pre + hlen) % 64) hlen++;
    blob r = {malloc(pre + hlen + data_len), pre + hlen + data_len};
    if (!r.b) return r;
    memcpy(r.b, "\x93NUMPY", 6);
    r.b[6] = (unsigned char)major;
    r.b[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) r.b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(r.b + pre, dict, dl);
    memset(r.b + pre + dl, ' ', hlen - dl - 1);
    r.b[pre + hlen - 1] = '\n';
    for (size_t i = 0; i < data_len; i++) r.b[pre + hlen + i] = (unsigned char)(i * 29 + 3);
    return r;
}

static const struct {
    int major;
    const char *dict;
    size_t data;
} seed_specs[] = {
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24},
    {1, "{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }", 24},
    {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1},
    {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 4), }", 0},
    {2, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 1, 2), }", 8},
    {3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8},
    {1, "{\"shape\": (2L,), \"descr\": \">u4\", \"fortran_order\": False}", 8},
};
#define N_SEEDS (sizeof seed_specs / sizeof seed_specs[0])

static blob seeds[N_SEEDS];

/* ---- one read --------------------------------------------------------------- */

static int n_ok, n_err;

/* Copy `len` bytes into an exact-size heap block and read it. */
static void try_read(const unsigned char *src, size_t len)
{
    unsigned char *b = malloc(len ? len : 1);
    if (!b) return;
    if (len) memcpy(b, src, len);
    ts_tensor *t = NULL;
    ts_err err = {0};
    ts_status s = ts_npy_read_mem(b, len, &t, &err);
    if (s == TS_OK) {
        n_ok++;
        /* the tensor must be whole and backed by bytes the buffer had */
        CHECK(t && t->nbytes <= len && (size_t)t->numel * ts_dtype_size(t->dtype) == t->nbytes);
        unsigned sum = 0;
        for (size_t i = 0; t && i < t->nbytes; i++) sum += ((unsigned char *)t->data)[i];
        (void)sum;
        ts_tensor_release(t);
    } else {
        n_err++;
        if (s <= TS_OK || s > TS_ERR_INTERNAL || err.msg[0] == 0 || t != NULL) {
            CHECK_MSG(0, "status %d, message '%s' for a %zu-byte buffer", (int)s, err.msg, len);
        }
    }
    free(b);
}

/* ---- mutations ------------------------------------------------------------------ */

static void truncations(const blob *s)
{
    for (size_t len = 0; len <= s->n; len++) try_read(s->b, len);
}

static void byte_flips(const blob *s, unsigned char *work)
{
    for (size_t i = 0; i < s->n; i++)
        for (int k = 0; k < 3; k++) {
            memcpy(work, s->b, s->n);
            work[i] ^= (unsigned char)(k == 0 ? 0xff : 1 + rnd_below(255));
            try_read(work, s->n);
        }
}

/* Characters that steer the header parser into its branches. */
static const char interesting[] = "()[],:'\" \n0123456789LTFx<>|=bfiuUOc{}-";

static void mutate(unsigned char *w, size_t n)
{
    size_t at = rnd_below(n);
    switch (rnd_below(6)) {
    case 0: w[at] ^= (unsigned char)(1u << rnd_below(8)); break;
    case 1: w[at] = (unsigned char)interesting[rnd_below(sizeof interesting - 1)]; break;
    case 2: w[at] = (unsigned char)rnd(); break;
    case 3: /* a random header length, often huge */
        if (n > 12) for (int i = 8; i < 12; i++) w[i] = (unsigned char)rnd();
        break;
    case 4: /* a long run of digits: shape entries that overflow or are huge */
        for (size_t i = at; i < n && i < at + 1 + rnd_below(24); i++) w[i] = (unsigned char)('0' + rnd_below(10));
        break;
    default: w[6] = (unsigned char)rnd_below(5); break;  /* the version */
    }
}

static void random_edits(unsigned char *work, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        const blob *s = &seeds[rnd_below(N_SEEDS)];
        memcpy(work, s->b, s->n);
        int edits = 1 + (int)rnd_below(4);
        for (int e = 0; e < edits; e++) mutate(work, s->n);
        size_t len = rnd_below(4) ? s->n : rnd_below(s->n + 1);
        try_read(work, len);
    }
}

/* Replace the shape tuple with random text and give the data any length. */
static void shape_edits(unsigned char *work, int rounds)
{
    static const char *const shapes[] = {
        "(99999999999999999999,)", "(9223372036854775807,)", "(4611686018427387904, 4)",
        "(1099511627776,)", "(65536, 65536, 65536)", "(3,", "(,)", "()", "(1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8)",
        "(0, 99999999999)", "(2L, 3L)", "(x)", "",
    };
    char dict[256];
    for (int r = 0; r < rounds; r++) {
        const char *sh = shapes[rnd_below(sizeof shapes / sizeof shapes[0])];
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", sh);
        blob b = make_npy(1 + (int)rnd_below(3), dict, rnd_below(64));
        if (!b.b) continue;
        memcpy(work, b.b, b.n);
        try_read(work, b.n);
        free(b.b);
    }
}

int main(void)
{
    unsigned char work[512];
    for (size_t i = 0; i < N_SEEDS; i++) {
        seeds[i] = make_npy(seed_specs[i].major, seed_specs[i].dict, seed_specs[i].data);
        CHECK(seeds[i].b && seeds[i].n <= sizeof work);
    }
    for (size_t i = 0; i < N_SEEDS; i++) {
        int before = n_ok;
        try_read(seeds[i].b, seeds[i].n);
        CHECK_MSG(n_ok == before + 1, "seed %zu does not read", i);
        truncations(&seeds[i]);
        byte_flips(&seeds[i], work);
    }
    random_edits(work, 20000);
    shape_edits(work, 2000);
    for (size_t i = 0; i < N_SEEDS; i++) free(seeds[i].b);
    printf("npy fuzz: %d buffers read, %d refused\n", n_ok, n_err);
    CHECK(n_ok > 0 && n_err > 0);
    return check_report();
}
