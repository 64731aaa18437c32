/* dlpack.h — the DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html),
 * version 1.0: only what tensor.c exchanges (host memory; the integer,
 * bool and float types). Declared here rather than vendored: the ABI is
 * these few structs and constants. */
#ifndef TSX_DLPACK_H
#define TSX_DLPACK_H

#include <stdint.h>

enum { TSX_DL_CPU = 1, TSX_DL_CUDA_HOST = 3 };
enum { TSX_DL_INT = 0, TSX_DL_UINT = 1, TSX_DL_FLOAT = 2, TSX_DL_BFLOAT = 4, TSX_DL_BOOL = 6 };

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;      /* in elements; NULL: dense row-major */
    uint64_t byte_offset;
} DLTensor;

/* the legacy capsule, "dltensor" */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

#define TSX_DLPACK_MAJOR 1
#define TSX_DLPACK_MINOR 0
#define TSX_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)

/* the versioned capsule, "dltensor_versioned" */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif
