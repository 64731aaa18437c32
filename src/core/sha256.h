/* sha256.h — SHA-256 (FIPS 180-4), for content keys: the JIT cache names
 * compiled code by the hash of everything that went into it. A
 * cryptographic hash because a key collision would silently run the wrong
 * kernel; at ~200 MB/s it costs well under a millisecond per model. */
#ifndef TS_SHA256_H
#define TS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ts_sha256 {
    uint32_t h[8];
    uint64_t len;           /* bytes hashed so far */
    unsigned char buf[64];  /* a partial block */
} ts_sha256;

void ts_sha256_init(ts_sha256 *s);
void ts_sha256_update(ts_sha256 *s, const void *data, size_t n);
void ts_sha256_final(ts_sha256 *s, unsigned char out[32]);

#endif
