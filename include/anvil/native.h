/* anvil/native.h: the `native` candidate ABI, version 1. Plain C; usable from C, C++ and CUDA. No torch.
 *
 * A native candidate is one source file (.cpp/.cc for the cpu backend, .cu for cuda) built into a shared
 * object that exports
 *
 *     int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream);
 *
 * and, optionally, `const char* anvil_last_error(void)`. Define both with ANVIL_EXPORT.
 *
 * Inputs (`in`, read-only): first the tensor arguments of the task's forward(), in order, as get_inputs()
 * makes them. Non-tensor forward arguments (ints, floats, bools, None) are NOT passed and are not counted in
 * n_in; nor are the constructor arguments (get_init_inputs()) or other hyper-parameters of the model. A
 * candidate is written for one task and hard-codes those. Then come the model's parameters, then its
 * buffers, in named_parameters() / named_buffers() order (the order of `params` in spec.json).
 *
 * Outputs (`out`): the forward result flattened (one tensor, or the tensors of a tuple/list in order).
 * The harness allocates them from the spec: contiguous, row-major, on the candidate's device, and poisoned
 * before every call (NaN for floating dtypes, a fixed non-zero byte pattern for the others). The candidate
 * must write every element; anything left unwritten fails the comparison.
 *
 * Memory: `data` is host memory on the cpu backend and device memory on cuda. Strides are in elements, not
 * bytes. In ABI version 1 every tensor the harness passes is contiguous (stride[i] is the product of
 * shape[i+1..ndim-1]) and aligned to at least 16 bytes; strides are there so later versions may pass views,
 * and a candidate that needs contiguity may check it and fail. ndim == 0 is a scalar tensor with one
 * element; shape/stride entries at and beyond ndim are 0. A tensor with no elements may have data == NULL.
 * Tasks with tensors of more than ANVIL_MAX_DIMS dimensions cannot use this format.
 *
 * Stream: the cuda backend passes the cudaStream_t the harness times; all device work must be ordered on
 * it (the harness synchronizes that stream after the call; work on other streams is not waited for).
 * The cpu backend passes NULL and all work must be finished when anvil_forward returns (OpenMP is fine).
 *
 * Return: 0 on success. Any other value is a failure, reported as runtime_error with the code; the
 * message from anvil_last_error() (a NUL-terminated string, valid until the next call) is added when the
 * candidate exports it. A crash is also a runtime_error; running past the time limit is a timeout.
 *
 * Calls: the harness calls anvil_forward many times (correctness trials, warmup, timing) from one thread,
 * with fresh inputs each time. Reusable state (workspaces, tables) is fine; returning outputs remembered
 * from an earlier call is not. The candidate must not modify inputs. Vendor math libraries (BLAS, cuBLAS,
 * cuDNN, CUTLASS) and torch/ATen are not allowed: the work must be the candidate's own code.
 */
#ifndef ANVIL_NATIVE_H_
#define ANVIL_NATIVE_H_

#include <stddef.h>
#include <stdint.h>

#define ANVIL_ABI_VERSION 1
#define ANVIL_MAX_DIMS 8

/* Put this before the definitions of anvil_forward and anvil_last_error. */
#if defined(_WIN32)
#define ANVIL_VISIBILITY __declspec(dllexport)
#else
#define ANVIL_VISIBILITY __attribute__((visibility("default")))
#endif
#ifdef __cplusplus
#define ANVIL_EXPORT extern "C" ANVIL_VISIBILITY
#else
#define ANVIL_EXPORT ANVIL_VISIBILITY
#endif

/* Element types; the names match torch's (torch.float32 ...). Values are fixed for this ABI version. */
typedef enum anvil_dtype {
  ANVIL_FLOAT32 = 0,
  ANVIL_FLOAT64 = 1,
  ANVIL_FLOAT16 = 2,
  ANVIL_BFLOAT16 = 3,
  ANVIL_INT64 = 4,
  ANVIL_INT32 = 5,
  ANVIL_INT16 = 6,
  ANVIL_INT8 = 7,
  ANVIL_UINT8 = 8,
  ANVIL_BOOL = 9
} anvil_dtype;

/* One tensor. `dtype` holds an anvil_dtype; it is an int32_t so the layout does not depend on the
 * compiler's enum size. */
typedef struct anvil_tensor {
  void* data;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[ANVIL_MAX_DIMS];
  int64_t stride[ANVIL_MAX_DIMS]; /* in elements */
} anvil_tensor;

#ifdef __cplusplus
static_assert(sizeof(anvil_tensor) == 144, "anvil_tensor layout changed");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(anvil_tensor) == 144, "anvil_tensor layout changed");
#endif

/* The entry point. Returns 0 on success, non-zero on failure. */
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream);

/* Optional: a message about the last failure, or NULL. */
ANVIL_EXPORT const char* anvil_last_error(void);

/* Helpers for candidates. */

/* Number of elements (1 for ndim == 0). */
static inline int64_t anvil_numel(const anvil_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* Size of one element in bytes, or 0 for an unknown dtype. */
static inline size_t anvil_dtype_size(int32_t dtype) {
  switch (dtype) {
    case ANVIL_FLOAT64:
    case ANVIL_INT64:
      return 8;
    case ANVIL_FLOAT32:
    case ANVIL_INT32:
      return 4;
    case ANVIL_FLOAT16:
    case ANVIL_BFLOAT16:
    case ANVIL_INT16:
      return 2;
    case ANVIL_INT8:
    case ANVIL_UINT8:
    case ANVIL_BOOL:
      return 1;
    default:
      return 0;
  }
}

/* 1 when the tensor is contiguous in row-major order, else 0. */
static inline int anvil_is_contiguous(const anvil_tensor* t) {
  int64_t expected = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->stride[i] != expected) return 0;
    expected *= t->shape[i];
  }
  return 1;
}

#endif /* ANVIL_NATIVE_H_ */
