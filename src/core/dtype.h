/* dtype.h — element types: names, sizes, classes, and the f16/bf16
 * conversions (round to nearest, ties to even; NaN stays NaN). */
#ifndef TS_DTYPE_H
#define TS_DTYPE_H

#include "core.h"

static inline bool ts_dtype_valid(ts_dtype dt) { return (unsigned)dt < TS_DTYPE_COUNT; }
bool ts_dtype_is_float(ts_dtype dt);    /* f16 bf16 f32 f64: the compute floats */
bool ts_dtype_is_storage(ts_dtype dt);  /* f8*, f4e2m1, i4 u4 i2 u2: no arithmetic */
bool ts_dtype_is_small_float(ts_dtype dt); /* the f8 formats and f4e2m1 */
bool ts_dtype_is_fp(ts_dtype dt);       /* any floating-point format */
bool ts_dtype_is_int(ts_dtype dt);      /* signed or unsigned integers, not bool */
bool ts_dtype_is_signed(ts_dtype dt);   /* signed integers and floats */
int ts_dtype_bits(ts_dtype dt);         /* value bits: 4 for i4, though it takes a byte */

uint16_t ts_f32_to_f16(float f);
float ts_f16_to_f32(uint16_t h);
uint16_t ts_f32_to_bf16(float f);
float ts_bf16_to_f32(uint16_t h);
/* Direct f64 -> f16 rounding (one rounding, not f64 -> f32 -> f16). */
uint16_t ts_f64_to_f16(double d);
uint16_t ts_f64_to_bf16(double d);

/* The 8- and 4-bit float formats (dtype_small.c): one correct
 * round-to-nearest-even from a double; overflow gives inf where the format
 * has one, NaN where it has none, and the largest value for f4e2m1, which
 * has neither (docs/primitives.md, `cast`). f8e8m0 rounds up instead. */
double ts_small_float_decode(ts_dtype dt, uint8_t bits);
uint8_t ts_small_float_encode(ts_dtype dt, double v);

/* Element access through the widest type of each class, for the code that
 * is written once for all dtypes (interpreter, printer, folding).
 * Conversions follow C for in-range values; to an integer type, a float is
 * truncated toward zero and NaN/out-of-range gives 0 / saturates as
 * documented in docs/primitives.md under `cast`. */
double ts_elem_get_f64(ts_dtype dt, const void *base, int64_t i);
int64_t ts_elem_get_i64(ts_dtype dt, const void *base, int64_t i);
uint64_t ts_elem_get_u64(ts_dtype dt, const void *base, int64_t i);
void ts_elem_set_f64(ts_dtype dt, void *base, int64_t i, double v);
void ts_elem_set_i64(ts_dtype dt, void *base, int64_t i, int64_t v);   /* wraps */
void ts_elem_set_u64(ts_dtype dt, void *base, int64_t i, uint64_t v);  /* wraps */

#endif
