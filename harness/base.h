// harness/base.h: what every piece of the harness uses: the C and CUDA headers, exit codes, error checks,
// small integer helpers, the dtypes with their tolerances and host access.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <curand.h>

#ifdef _OPENMP
#include <omp.h>
#define OMP_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")  // over the loop that follows
#else
#define OMP_PARALLEL_FOR
#endif

#ifndef GIT_REV
#define GIT_REV "unknown"
#endif

enum { EXIT_OK = 0, EXIT_VALIDATION = 1, EXIT_USAGE = 2, EXIT_CUDA = 3 };

// ------------------------------------------------------------------------------------------------
// Error macros: file, line, the call and the error string.

static const char *curand_error_string(curandStatus_t s) {
    switch (s) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    default: return "unknown cuRAND status";
    }
}

#define CUDA_CHECK(call)                                                                              \
    do {                                                                                              \
        cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "CUDA error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(err_));                                                        \
            exit(EXIT_CUDA);                                                                          \
        }                                                                                             \
    } while (0)

#define CURAND_CHECK(call)                                                                            \
    do {                                                                                              \
        curandStatus_t st_ = (call);                                                                  \
        if (st_ != CURAND_STATUS_SUCCESS) {                                                           \
            fprintf(stderr, "cuRAND error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    curand_error_string(st_));                                                        \
            exit(EXIT_CUDA);                                                                          \
        }                                                                                             \
    } while (0)

// After a kernel launch: launch errors now, execution errors at the next synchronization.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

static inline long ceil_div(long a, long b) { return (a + b - 1) / b; }
static inline long gcd_long(long a, long b) { while (b) { long t = a % b; a = b; b = t; } return a; }
static inline int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

// ------------------------------------------------------------------------------------------------
// Data types. Inputs and outputs of x/y/weight/bias come in fp32, fp16 or bf16; statistics are fp32;
// arithmetic is fp32 on the GPU and double in the reference.

typedef enum { DT_FP32 = 0, DT_FP16 = 1, DT_BF16 = 2, DT_COUNT = 3 } dtype_t;
#define DT_BIT(d) (1u << (d))
#define DT_ALL (DT_BIT(DT_FP32) | DT_BIT(DT_FP16) | DT_BIT(DT_BF16))

static const char *dtype_name(dtype_t d) {
    static const char *names[DT_COUNT] = {"fp32", "fp16", "bf16"};
    return (d >= 0 && d < DT_COUNT) ? names[d] : "?";
}
static size_t dtype_size(dtype_t d) { return d == DT_FP32 ? 4 : 2; }
static int parse_dtype(const char *s, dtype_t *out) {
    for (int d = 0; d < DT_COUNT; d++)
        if (strcmp(s, dtype_name((dtype_t)d)) == 0) { *out = (dtype_t)d; return 0; }
    return -1;
}
// "fp32,fp16,bf16" for a dtype mask.
static const char *dtype_mask_str(unsigned mask, char *buf, size_t n) {
    buf[0] = 0;
    for (int d = 0; d < DT_COUNT; d++)
        if (mask & DT_BIT(d)) {
            if (buf[0]) strncat(buf, ",", n - strlen(buf) - 1);
            strncat(buf, dtype_name((dtype_t)d), n - strlen(buf) - 1);
        }
    return buf;
}

// Tolerances, stated once: |gpu - ref| <= atol + rtol * |ref|. y is rounded to its dtype (half an ulp is
// 2^-24, 2^-11 and 2^-8..2^-9 relative for fp32, fp16, bf16), on top of fp32 arithmetic; fp32 statistics
// use the fp32 row.
typedef struct { double atol, rtol; } tolerance_t;
static tolerance_t tolerance_for(dtype_t d) {
    switch (d) {
    case DT_FP16: return (tolerance_t){2e-3, 2e-3};
    case DT_BF16: return (tolerance_t){1e-2, 1e-2};
    default: return (tolerance_t){1e-4, 1e-4};
    }
}

// An output that sums a term over n rows (a backward pass's dweight and dbias), accumulated in fp32 in any order:
// the sum's rounding errs by at most (n - 1) u Σ|term| (u = 2^-24, the worst case: every rounding the same way), and
// by about sqrt(n) u Σ|term| when the roundings are independent (the probabilistic bound of Higham and Mary, 2019);
// each term adds a few u of its own. Allowed on top of the dtype's tolerance, per element: (4 + 2 sqrt(n)) u Σ|term|,
// the reference's Σ|term| of that element. (At n = 16384 and unit-normal terms: about 0.16, a quarter of one
// row's typical term: a kernel that drops a row fails; see the planted bugs.)
static double sum_atol(long n, double abs_sum) { return (4.0 + 2.0 * sqrt((double)n)) * ldexp(1.0, -24) * abs_sum; }

// Host conversions (the cuda_fp16/cuda_bf16 conversion functions are host-callable, round to nearest even).
static double host_load(const void *p, size_t i, dtype_t d) {
    switch (d) {
    case DT_FP16: return (double)__half2float(((const __half *)p)[i]);
    case DT_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: return (double)((const float *)p)[i];
    }
}
static void host_store(void *p, size_t i, dtype_t d, float v) {
    switch (d) {
    case DT_FP16: ((__half *)p)[i] = __float2half_rn(v); break;
    case DT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
    default: ((float *)p)[i] = v; break;
    }
}
