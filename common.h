// common.h: the harness plumbing shared by layernorm_forward, rmsnorm_forward and batchnorm_forward.
//
// One copy of everything that is not a kernel: argument parsing, the device header, inputs from cuRAND,
// cold-L2 timing, the speed-of-light copy, validation against a double-precision reference, reporting
// (human lines, CSV, JSON Lines), the kernel registry and `--list`. It also holds the small device helpers
// that several kernels share (type conversion, 16-byte packs, warp reductions, Welford merges), and, where the
// build has cuDNN, the graph-API plumbing of kernel 0 (descriptors, heuristics, plans, engine choice).
//
// A program fills in a program_t (its name, defaults, kernels, and four callbacks: setup, reference,
// outputs, teardown) and calls bench_main(). See layernorm_forward.cu for the pattern.
//
// Exit codes: 0 all points OK (or skipped), 1 a validation failure, 2 a bad argument or no usable CUDA
// device, 3 a CUDA/cuRAND error at run time.
#pragma once

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand.h>

#ifdef _OPENMP
#include <omp.h>
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

// ------------------------------------------------------------------------------------------------
// Device helpers shared by the kernels of every program.

// (host too: the CPU tests run some device arithmetic on the host)
template <typename T> __host__ __device__ __forceinline__ float to_float(T v);
template <> __host__ __device__ __forceinline__ float to_float<float>(float v) { return v; }
template <> __host__ __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <> __host__ __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __host__ __device__ __forceinline__ T from_float(float v);
template <> __host__ __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __host__ __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// A pack of N elements moved as one aligned access (16 bytes: LDG.128/STG.128).
template <typename T, int N> struct alignas(sizeof(T) * N) Pack { T v[N]; };
// Element j of a pack as a float. bf16 packs of an even width are read as 32-bit words, the element taken
// by a shift or a mask: the compiler then keeps such a pack in N/2 registers (through __bfloat162float it
// moves 16-bit halves, and a row of 8 packs of 8 spilled in LayerNorm's register kernel; results/NOTES.md).
template <typename T, int N> __device__ __forceinline__ float pack_elem(const Pack<T, N> &p, int j) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value && N % 2 == 0) {
        unsigned w;
        memcpy(&w, &p.v[j & ~1], sizeof w);
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    } else {
        return to_float(p.v[j]);
    }
}
template <int BYTES> struct RawBits;
template <> struct RawBits<16> { typedef int4 type; };
template <> struct RawBits<8> { typedef int2 type; };
template <> struct RawBits<4> { typedef int type; };
template <> struct RawBits<2> { typedef short type; };

// Instantiate a templated host function FN<T, VEC>(...) for a run-time dtype and pack width: 4/2/1 for fp32,
// 8/4/2/1 for 16-bit types (launchers pick the widest width that keeps accesses aligned).
#define DISPATCH_VEC(dt, vec, FN, ...)                                                                        \
    do {                                                                                                      \
        switch (dt) {                                                                                         \
        case DT_FP32:                                                                                         \
            if ((vec) == 4) FN<float, 4>(__VA_ARGS__);                                                        \
            else if ((vec) == 2) FN<float, 2>(__VA_ARGS__);                                                   \
            else FN<float, 1>(__VA_ARGS__);                                                                   \
            break;                                                                                            \
        case DT_FP16:                                                                                         \
            if ((vec) == 8) FN<__half, 8>(__VA_ARGS__);                                                       \
            else if ((vec) == 4) FN<__half, 4>(__VA_ARGS__);                                                  \
            else if ((vec) == 2) FN<__half, 2>(__VA_ARGS__);                                                  \
            else FN<__half, 1>(__VA_ARGS__);                                                                  \
            break;                                                                                            \
        default:                                                                                              \
            if ((vec) == 8) FN<__nv_bfloat16, 8>(__VA_ARGS__);                                                \
            else if ((vec) == 4) FN<__nv_bfloat16, 4>(__VA_ARGS__);                                           \
            else if ((vec) == 2) FN<__nv_bfloat16, 2>(__VA_ARGS__);                                           \
            else FN<__nv_bfloat16, 1>(__VA_ARGS__);                                                           \
            break;                                                                                            \
        }                                                                                                     \
    } while (0)

// Plain (cached) and streaming (evict-first, __ldcs/__stcs) pack access. p must be aligned to the pack.
// Most of LayerNorm's and RMSNorm's pack kernels use the plain forms: on an H100 under the cold-L2 timing the
// streaming forms cost their dispatchers 1.5-5% at most standard shapes; the exceptions, and why, are in
// the comments of kernel 3 of each program (results/NOTES.md, session 13).
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_pack(const T *p) {
    return *reinterpret_cast<const Pack<T, N> *>(p);
}
template <typename T, int N> __device__ __forceinline__ void store_pack(T *p, const Pack<T, N> &v) {
    *reinterpret_cast<Pack<T, N> *>(p) = v;
}
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_pack_cs(const T *p) {
    typedef typename RawBits<sizeof(T) * N>::type R;
    R r = __ldcs(reinterpret_cast<const R *>(p));
    Pack<T, N> out;
    memcpy(&out, &r, sizeof(R));
    return out;
}
template <typename T, int N> __device__ __forceinline__ void store_pack_cs(T *p, const Pack<T, N> &v) {
    typedef typename RawBits<sizeof(T) * N>::type R;
    R r;
    memcpy(&r, &v, sizeof(R));
    __stcs(reinterpret_cast<R *>(p), r);
}

// Asynchronous 16-byte copy global -> shared (cp.async, sm_80+; .cg: cached in L2 only), and its group
// commit / wait. A thread waits only for its own copies: another thread's slots need a __syncthreads too.
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Sum over aligned groups of WIDTH lanes (WIDTH a power of two <= 32); every lane gets its group's sum.
template <int WIDTH> __device__ __forceinline__ float group_sum(float v) {
#pragma unroll
    for (int o = WIDTH / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Welford state (count, mean, M2 = sum of squared deviations) and Chan's merge of two states.
struct Welford { float n, mean, m2; };
__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
    float n = a.n + b.n;
    if (n == 0.f) return a;
    float delta = b.mean - a.mean;
    float wb = b.n / n;
    Welford r;
    r.n = n;
    r.mean = a.mean + delta * wb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * wb;
    return r;
}
// Merge across aligned groups of WIDTH lanes by butterfly shuffles; every lane gets the group's state.
template <int WIDTH> __device__ __forceinline__ Welford welford_group_merge(Welford w) {
#pragma unroll
    for (int o = WIDTH / 2; o > 0; o >>= 1) {
        Welford other;
        other.n = __shfl_xor_sync(0xffffffffu, w.n, o);
        other.mean = __shfl_xor_sync(0xffffffffu, w.mean, o);
        other.m2 = __shfl_xor_sync(0xffffffffu, w.m2, o);
        w = welford_merge(w, other);
    }
    return w;
}

// Block-wide sum for a 1-D block whose size is a multiple of 32: warp shuffles, then one warp over the
// per-warp sums in shared memory. Every thread gets the result. `scratch` holds >= 33 floats.
__device__ __forceinline__ float block_sum(float v, float *scratch) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    v = warp_sum(v);
    __syncthreads();  // scratch may still be read by a previous call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < nwarps ? scratch[lane] : 0.f;
        t = warp_sum(t);
        if (lane == 0) scratch[32] = t;
    }
    __syncthreads();
    return scratch[32];
}

// Block-wide Welford all-reduce for a 1-D block whose size is a multiple of 32: lanes merge by shuffles,
// then one warp merges the per-warp states from shared memory. Every thread gets the block's state.
// `scratch` holds >= 33 Welford states.
__device__ __forceinline__ Welford block_welford(Welford w, Welford *scratch) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    w = welford_group_merge<32>(w);
    __syncthreads();
    if (lane == 0) scratch[warp] = w;
    __syncthreads();
    if (warp == 0) {
        Welford t = lane < nwarps ? scratch[lane] : Welford{0.f, 0.f, 0.f};
        t = welford_group_merge<32>(t);
        if (lane == 0) scratch[32] = t;
    }
    __syncthreads();
    return scratch[32];
}

// ------------------------------------------------------------------------------------------------
// The kernel registry.

typedef struct {
    int block_size;   // requested threads per block; 0 = the kernel chooses
    int block_used;   // the block size that ran (set by the launcher)
    char path[128];   // which path ran, for dispatchers (set by the launcher; "" otherwise)
} launch_t;

typedef struct {
    int number;
    const char *name;     // short name
    unsigned dtypes;      // DT_BIT mask
    const char *limits;   // shapes it handles, in words
    const char *idea;     // the one idea it adds
    int own_block;        // 1: the kernel picks its block size (one point instead of the sweep)
    // NULL when the kernel can run this problem at this block size (0 = its own choice), else the reason.
    const char *(*supports)(const void *problem, int block_size);
    void (*launch)(const void *problem, launch_t *l);  // enqueues the kernel(s) on the default stream
} kernel_t;

// supports() of kernel 0 (the cuDNN baseline) in a build without cuDNN.
static const char *supports_no_cudnn(const void *problem, int block_size) {
    (void)problem;
    (void)block_size;
    return "built without cuDNN";
}
// Kernel 0's supports and launch in the registry: the program's cuDNN wrappers when the build has cuDNN, else
// supports_no_cudnn (skipped: built without cuDNN). The wrappers need not exist in a build without it.
#ifdef HAVE_CUDNN
#define CUDNN_FNS(supports_fn, launch_fn) supports_fn, launch_fn
#else
#define CUDNN_FNS(supports_fn, launch_fn) supports_no_cudnn, NULL
#endif

// A reason with numbers in it (the host side is single-threaded).
static const char *reasonf(const char *fmt, ...);
// NULL when `fn` (a __global__ function) can launch with bs threads; else why not (registers).
static const char *block_fits(const void *fn, int bs) {
    cudaFuncAttributes a;
    CUDA_CHECK(cudaFuncGetAttributes(&a, fn));
    if (bs > a.maxThreadsPerBlock)
        return reasonf("%d registers a thread allow at most %d threads a block", a.numRegs, a.maxThreadsPerBlock);
    return NULL;
}

static char g_reason[256];
// --check (validation only): kernels that choose among variants by timing them (kernel 0, cuDNN) take their
// first variant that runs instead, untimed.
static int g_check_only;
static const char *reasonf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_reason, sizeof g_reason, fmt, ap);
    va_end(ap);
    return g_reason;
}

// ------------------------------------------------------------------------------------------------
// Options.

// The CSV schema (--csv; scripts/summary.py CSV_FIELDS reads it). time_ms_median/min are on the row's clock
// (cupti: the GPU's kernel timestamps; events: CUDA events, where CUPTI could not record);
// time_ms_launch_median/min are the CUDA events around the launch. The last three columns came later: readers
// treat rows without them as events rows.
#define CSV_HEADER "op,kernel,kernel_name,dtype,shape,block_size,time_ms_median,time_ms_min,bytes,gbps,sol_gbps,sol_pct,max_abs_err,max_rel_err,status,gpu,sm,cuda,git_rev,time_ms_launch_median,time_ms_launch_min,clock"

#define KERNEL_DEFAULT (-1)
#define KERNEL_ALL (-2)
#define KERNEL_LIST (-3)  // several kernels named as K1,K2,...: run and ranked like `all`
#define MAX_PICKED 32

typedef struct {
    int kernel;  // number, KERNEL_DEFAULT, KERNEL_ALL or KERNEL_LIST
    int picked[MAX_PICKED], n_picked;  // KERNEL_LIST: the kernel numbers, in the order given
    long rows, cols, B, T;
    int rows_set, cols_set, bt_set;
    dtype_t dtype;
    int block_size;  // 0 = sweep
    int repeats;     // 0 = automatic
    unsigned long long seed;
    double input_mean, input_std;
    int check_only, list, help;
    const char *csv_path, *json_path;
    int device;
} options_t;

// Options that one program adds to the common ones (eps, layout, ...).
typedef struct {
    const char *name;  // long option name
    int has_arg;       // no_argument / required_argument
    const char *help;  // one line for --help ("--eps E   epsilon (default 1e-5)")
} extra_option_t;

// The program's description, filled in by each .cu file.
typedef struct problem_s problem_t;
typedef struct {
    const char *op;      // "layernorm"
    const char *binary;  // "layernorm_forward"
    const char *what;    // one line: what it computes
    long default_rows, default_cols;
    const kernel_t *kernels;
    int n_kernels;
    int default_kernel;
    const extra_option_t *extra;
    int n_extra;
    // Parse one extra option (index into extra[]); NULL when fine, else a message naming the problem.
    const char *(*parse_extra)(int index, const char *arg);
    // Extra shape checks after parsing (NULL = fine).
    const char *(*check_options)(const options_t *o);
    // Allocate device buffers and fill the inputs (cuRAND); fill problem_t's common part.
    problem_t *(*setup)(const options_t *o);
    // Compute the double-precision reference into the host buffers of outputs[].
    void (*reference)(problem_t *p);
    void (*teardown)(problem_t *p);
    // Optional (NULL = none): restore buffers a kernel updates in place (a fused-add residual, running
    // statistics) to their initial values; called after the outputs are poisoned, before each validation
    // launch. Timed launches keep updating them in place, as the op would in a real step.
    void (*reset)(problem_t *p);
    // Optional (NULL = the defaults): what -N and -C mean in --help, for a program whose rows are not the rows
    // of a [rows, C] matrix (BatchNorm: the batch and the channels; it takes no -B/-T).
    const char *rows_help, *cols_help;
} program_t;

// One output tensor, compared element by element.
typedef struct {
    const char *name;  // "y", "mean", "rstd"
    void *dev;         // device buffer
    dtype_t dtype;
    long rows, cols;   // elements = rows * cols; mismatches are reported as (row, col)
    double *ref;       // host reference (double), filled by program_t.reference
    tolerance_t tol;
    // Optional, per row: absolute error the op's fp32 arithmetic cannot avoid on this row's data, added to
    // atol (LayerNorm: x - mean with the mean rounded to fp32; see its reference). NULL = none.
    double *row_atol;
} output_t;

#define MAX_OUTPUTS 8
// Every program's problem struct starts with this header.
struct problem_s {
    dtype_t dtype;
    char shape[64];      // compact shape string for CSV ("8192x768")
    char shape_desc[96]; // human form ("rows 8192 cols 768")
    double bytes;        // algorithmic minimum bytes moved
    int n_out;
    output_t out[MAX_OUTPUTS];
};

static void usage(const program_t *prog, FILE *f) {
    fprintf(f,
            "usage: ./%s [KERNEL|K1,K2,...|all] [options]\n"
            "  %s\n"
            "  KERNEL            kernel number (default: %d, the best kernel); `all` runs every kernel and ranks them,\n"
            "                    K1,K2,... runs and ranks those\n"
            "  -N, --rows N      %s (default %ld)\n"
            "  -C, --cols C      %s (default %ld)\n"
            "  --dtype T         fp32 | fp16 | bf16 (default fp32)\n"
            "  --block-size N    one block size instead of the sweep (a multiple of 32 in [32, 1024])\n"
            "  --repeats N       timed launches per point (default: enough for a stable median)\n"
            "  --seed S          input seed (cuRAND Philox; default 1234)\n"
            "  --input-mean M    mean of the inputs x (default 0)\n"
            "  --input-std S     standard deviation of the inputs x (default 1)\n"
            "  --check           validate only, no timing\n"
            "  --list            print the kernel registry and exit (needs no GPU)\n"
            "  --csv FILE        append one row per measured point (CSV)\n"
            "  --json FILE       append one JSON object per measured point (JSON Lines)\n"
            "  --device D        GPU index (default 0)\n",
            prog->binary, prog->what, prog->default_kernel,
            prog->rows_help ? prog->rows_help : "rows; -B N -T N set rows = B*T as in llm.c", prog->default_rows,
            prog->cols_help ? prog->cols_help : "normalized size", prog->default_cols);
    for (int i = 0; i < prog->n_extra; i++) fprintf(f, "  %s\n", prog->extra[i].help);
    fprintf(f, "  -h, --help        this text\n"
               "exit status: 0 OK, 1 validation failure, 2 bad argument or no CUDA device, 3 CUDA error\n");
}

static void print_list(const program_t *prog) {
    for (int i = 0; i < prog->n_kernels; i++) {
        const kernel_t *k = &prog->kernels[i];
        char dt[32];
        printf("%2d  %-18s %-15s %-30s %s\n", k->number, k->name, dtype_mask_str(k->dtypes, dt, sizeof dt),
               k->limits, k->idea);
    }
}

// A bad argument: one line that names it, a usage hint, exit 2.
static void die_usage(const program_t *prog, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog->binary);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry './%s --help'.\n", prog->binary);
    exit(EXIT_USAGE);
}

// Strict integer parsing: the whole string, in range.
static int parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}
static int parse_double(const char *s, double *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static const kernel_t *find_kernel(const program_t *prog, int number) {
    for (int i = 0; i < prog->n_kernels; i++)
        if (prog->kernels[i].number == number) return &prog->kernels[i];
    return NULL;
}

// Parses argv into o. Every argument error exits 2 here, before any GPU is looked for.
// The common shape limit of a [rows, cols] problem (the programs index with 32-bit block counts and keep
// host copies in double): NULL when fine.
static const char *check_rows_cols(const options_t *o) {
    if ((double)o->rows * (double)o->cols > 4e9)
        return reasonf("shape %ldx%ld too large (rows*cols must stay below 4e9 elements)", o->rows, o->cols);
    return NULL;
}

static void check_output_file(const program_t *prog, const char *option, const char *path, const char *header);

static void parse_args(int argc, char **argv, const program_t *prog, options_t *o) {
    memset(o, 0, sizeof *o);
    o->kernel = KERNEL_DEFAULT;
    o->rows = prog->default_rows;
    o->cols = prog->default_cols;
    o->dtype = DT_FP32;
    o->seed = 1234;
    o->input_std = 1.0;

    enum { O_DTYPE = 1000, O_BLOCK, O_REPEATS, O_SEED, O_IMEAN, O_ISTD, O_CHECK, O_LIST, O_CSV, O_JSON,
           O_DEVICE, O_EXTRA };
    struct option longopts[64];
    int n = 0;
    struct option base[] = {
        {"rows", required_argument, 0, 'N'},        {"cols", required_argument, 0, 'C'},
        {"dtype", required_argument, 0, O_DTYPE},   {"block-size", required_argument, 0, O_BLOCK},
        {"repeats", required_argument, 0, O_REPEATS}, {"seed", required_argument, 0, O_SEED},
        {"input-mean", required_argument, 0, O_IMEAN}, {"input-std", required_argument, 0, O_ISTD},
        {"check", no_argument, 0, O_CHECK},         {"list", no_argument, 0, O_LIST},
        {"csv", required_argument, 0, O_CSV},       {"json", required_argument, 0, O_JSON},
        {"device", required_argument, 0, O_DEVICE}, {"help", no_argument, 0, 'h'},
    };
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) longopts[n++] = base[i];
    for (int i = 0; i < prog->n_extra && n < 62; i++)
        longopts[n++] = (struct option){prog->extra[i].name, prog->extra[i].has_arg, 0, O_EXTRA + i};
    longopts[n] = (struct option){0, 0, 0, 0};

    opterr = 0;  // we print our own one-line messages
    optind = 1;
    int c, longindex = 0;
    long v;
    while ((c = getopt_long(argc, argv, ":N:C:B:T:h", longopts, &longindex)) != -1) {
        switch (c) {
        case 'N':
            if (parse_long(optarg, 1, 1L << 31, &v)) die_usage(prog, "invalid rows '%s' (-N/--rows: a positive integer)", optarg);
            o->rows = v; o->rows_set = 1; break;
        case 'C':
            if (parse_long(optarg, 1, 1L << 31, &v)) die_usage(prog, "invalid cols '%s' (-C/--cols: a positive integer)", optarg);
            o->cols = v; o->cols_set = 1; break;
        case 'B':
            if (parse_long(optarg, 1, 1L << 31, &v)) die_usage(prog, "invalid B '%s' (-B: a positive integer)", optarg);
            o->B = v; o->bt_set = 1; break;
        case 'T':
            if (parse_long(optarg, 1, 1L << 31, &v)) die_usage(prog, "invalid T '%s' (-T: a positive integer)", optarg);
            o->T = v; o->bt_set = 1; break;
        case O_DTYPE:
            if (parse_dtype(optarg, &o->dtype)) die_usage(prog, "invalid dtype '%s' (--dtype: fp32, fp16 or bf16)", optarg);
            break;
        case O_BLOCK:
            if (parse_long(optarg, 32, 1024, &v) || v % 32)
                die_usage(prog, "invalid block size '%s' (--block-size: a multiple of 32 in [32, 1024])", optarg);
            o->block_size = (int)v; break;
        case O_REPEATS:
            if (parse_long(optarg, 1, 100000, &v)) die_usage(prog, "invalid repeats '%s' (--repeats: an integer in [1, 100000])", optarg);
            o->repeats = (int)v; break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg || optarg[0] == '-') die_usage(prog, "invalid seed '%s' (--seed: a non-negative integer)", optarg);
            o->seed = s; break;
        }
        case O_IMEAN:
            if (parse_double(optarg, &o->input_mean)) die_usage(prog, "invalid input mean '%s' (--input-mean: a finite number)", optarg);
            break;
        case O_ISTD:
            if (parse_double(optarg, &o->input_std) || o->input_std < 0)
                die_usage(prog, "invalid input std '%s' (--input-std: a finite number >= 0)", optarg);
            break;
        case O_CHECK: o->check_only = 1; break;
        case O_LIST: o->list = 1; break;
        case O_CSV: o->csv_path = optarg; break;
        case O_JSON: o->json_path = optarg; break;
        case O_DEVICE:
            if (parse_long(optarg, 0, 1023, &v)) die_usage(prog, "invalid device '%s' (--device: a GPU index >= 0)", optarg);
            o->device = (int)v; break;
        case 'h': o->help = 1; break;
        case ':':
            die_usage(prog, "option '%s' needs an argument", argv[optind - 1]);
        case '?':  // optopt: a short option's character, a long option's value (given an argument it takes
                   // none), or 0 for an unknown long option
            if (optopt > 0 && optopt < 128 && isalnum(optopt)) die_usage(prog, "unknown option '-%c'", optopt);
            if (optopt >= 128) die_usage(prog, "option '%s' takes no argument", argv[optind - 1]);
            die_usage(prog, "unknown option '%s'", argv[optind - 1]);
        default:
            if (c >= O_EXTRA && c < O_EXTRA + prog->n_extra) {
                const char *err = prog->parse_extra(c - O_EXTRA, optarg);
                if (err) die_usage(prog, "%s", err);
            } else {
                die_usage(prog, "unknown option '%s'", argv[optind - 1]);
            }
        }
    }
    if (o->help || o->list) {
        if (optind < argc)
            die_usage(prog, "unexpected argument '%s' (%s takes no other argument)", argv[optind],
                      o->help ? "--help" : "--list");
        return;
    }
    if (optind < argc) {
        const char *k = argv[optind++];
        if (strcmp(k, "all") == 0) {
            o->kernel = KERNEL_ALL;
        } else if (strchr(k, ',')) {  // K1,K2,...
            char buf[256];
            snprintf(buf, sizeof buf, "%s", k);
            o->kernel = KERNEL_LIST;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (parse_long(t, 0, 1000000, &v) != 0 || !find_kernel(prog, (int)v))
                    die_usage(prog, "unknown kernel '%s' in '%s' (numbers from --list, separated by commas)", t, k);
                for (int i = 0; i < o->n_picked; i++)
                    if (o->picked[i] == (int)v) die_usage(prog, "kernel %ld named twice in '%s'", v, k);
                if (o->n_picked == MAX_PICKED) die_usage(prog, "too many kernels in '%s'", k);
                o->picked[o->n_picked++] = (int)v;
            }
            if (o->n_picked < 2) die_usage(prog, "unknown kernel '%s' (a number from --list, K1,K2,..., or 'all')", k);
        } else if (parse_long(k, 0, 1000000, &v) == 0 && find_kernel(prog, (int)v)) {
            o->kernel = (int)v;
        } else {
            die_usage(prog, "unknown kernel '%s' (a number from --list, K1,K2,..., or 'all')", k);
        }
    }
    if (optind < argc) die_usage(prog, "unexpected argument '%s'", argv[optind]);
    if (o->bt_set) {
        if (o->rows_set) die_usage(prog, "give rows either as -N or as -B/-T, not both");
        long B = o->B ? o->B : 8, T = o->T ? o->T : 1024;
        o->rows = B * T;
    }
    if (o->kernel >= 0) {
        const kernel_t *k = find_kernel(prog, o->kernel);
        if (!(k->dtypes & DT_BIT(o->dtype)))
            die_usage(prog, "kernel %d does not support --dtype %s (see --list)", o->kernel, dtype_name(o->dtype));
    }
    // A program with its own checks owns the shape check too (its tensor need not be rows x cols).
    const char *err = prog->check_options ? prog->check_options(o) : check_rows_cols(o);
    if (err) die_usage(prog, "%s", err);
    if (o->csv_path) check_output_file(prog, "--csv", o->csv_path, CSV_HEADER);
    if (o->json_path) check_output_file(prog, "--json", o->json_path, NULL);
}

// ------------------------------------------------------------------------------------------------
// Device: header line, and a clean exit 2 when there is none.

typedef struct {
    int index;
    cudaDeviceProp prop;
    char name[256];
    char sm[16];
    char cuda[16];
    char driver[64];
} device_info_t;
static device_info_t g_dev;

// ------------------------------------------------------------------------------------------------
// Thread-block clusters (sm_90+): a 1-D launch of `blocks` blocks in clusters of cl, and whether such
// clusters can be resident.

static cudaLaunchConfig_t cluster_config(long blocks, int bs, int cl, cudaLaunchAttribute *attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks, 1, 1);
    cfg.blockDim = dim3(bs, 1, 1);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cl;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}
// NULL when clusters of cl blocks of fn (bs threads) can be resident, and *resident (if given) how many
// clusters the whole GPU holds at once; else why not. Cached: dispatchers ask on every launch.
// Thread-block clusters and distributed shared memory exist from sm_90 on: the reason a cluster path is skipped
// on a GPU of compute capability `major` (named `sm`), or NULL. (A function of the capability, so the CPU tests
// can ask it about GPUs they do not have.)
static const char *needs_sm90(int major, const char *sm) {
    return major < 9 ? reasonf("needs sm_90 (thread-block clusters; this GPU is %s)", sm) : NULL;
}

static const char *cluster_fits_n(const void *fn, int bs, int cl, int *resident) {
    static struct { const void *fn; int bs, cl, n; char why[160]; } cache[32];
    static int ncache = 0;
    const char *why_arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (why_arch) return why_arch;
    int i = 0;
    while (i < ncache && !(cache[i].fn == fn && cache[i].bs == bs && cache[i].cl == cl)) i++;
    if (i == ncache) {
        if (ncache == 32) i = 31;  // full: reuse the last slot
        else ncache++;
        cache[i].fn = fn;
        cache[i].bs = bs;
        cache[i].cl = cl;
        cache[i].n = 0;
        cache[i].why[0] = 0;
        const char *why = block_fits(fn, bs);
        if (why) {
            snprintf(cache[i].why, sizeof cache[i].why, "%s", why);
        } else {
            cudaLaunchAttribute attr;
            cudaLaunchConfig_t cfg = cluster_config(cl, bs, cl, &attr);  // grid of one cluster
            int n = 0;
            cudaError_t e = cudaOccupancyMaxActiveClusters(&n, fn, &cfg);
            if (e != cudaSuccess) {
                cudaGetLastError();  // not sticky: clear it
                snprintf(cache[i].why, sizeof cache[i].why, "a cluster of %d blocks x %d threads cannot launch (%s)",
                         cl, bs, cudaGetErrorString(e));
            } else if (n < 1) {
                snprintf(cache[i].why, sizeof cache[i].why, "a cluster of %d blocks x %d threads does not fit the GPU",
                         cl, bs);
            } else {
                cache[i].n = n;
            }
        }
    }
    if (resident) *resident = cache[i].n;
    return cache[i].why[0] ? cache[i].why : NULL;
}
static const char *cluster_fits(const void *fn, int bs, int cl) { return cluster_fits_n(fn, bs, cl, NULL); }

// The NVIDIA driver version (580.x): /proc first, then NVML if it can be loaded; else the driver's CUDA version.
static void driver_version_string(char *out, size_t n) {
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[512];
        if (fgets(line, sizeof line, f)) {
            // "NVRM version: NVIDIA UNIX ... Kernel Module [for x86_64]  580.159.04  Release Build ...":
            // the first token that starts with a digit and holds a dot
            for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
                if (isdigit((unsigned char)tok[0]) && strchr(tok, '.')) {
                    snprintf(out, n, "%s", tok);
                    fclose(f);
                    return;
                }
            }
        }
        fclose(f);
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
    if (h) {
        typedef int (*init_t)(void);
        typedef int (*ver_t)(char *, unsigned);
        init_t init = (init_t)dlsym(h, "nvmlInit_v2");
        ver_t ver = (ver_t)dlsym(h, "nvmlSystemGetDriverVersion");
        if (init && ver && init() == 0 && ver(out, (unsigned)n) == 0) { dlclose(h); return; }
        dlclose(h);
    }
    int dv = 0;
    cudaDriverGetVersion(&dv);
    snprintf(out, n, "CUDA %d.%d", dv / 1000, (dv % 1000) / 10);
}

static void open_device(const program_t *prog, int index) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {  // no driver: the count is garbage, the error says why
        fprintf(stderr, "%s: no CUDA device (%s)\n", prog->binary, cudaGetErrorString(e));
        exit(EXIT_USAGE);
    }
    if (count <= 0) {
        fprintf(stderr, "%s: no CUDA device\n", prog->binary);
        exit(EXIT_USAGE);
    }
    if (index >= count) {
        fprintf(stderr, "%s: no CUDA device %d (found %d)\n", prog->binary, index, count);
        exit(EXIT_USAGE);
    }
    e = cudaSetDevice(index);
    if (e == cudaSuccess) e = cudaFree(0);  // create the context now, so a broken device fails here
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: CUDA device %d is not usable (%s)\n", prog->binary, index, cudaGetErrorString(e));
        exit(EXIT_USAGE);
    }
    g_dev.index = index;
    CUDA_CHECK(cudaGetDeviceProperties(&g_dev.prop, index));
    snprintf(g_dev.name, sizeof g_dev.name, "%s", g_dev.prop.name);
    for (char *c = g_dev.name; *c; c++) if (*c == ',') *c = ' ';  // keep CSV fields clean
    snprintf(g_dev.sm, sizeof g_dev.sm, "sm_%d%d", g_dev.prop.major, g_dev.prop.minor);
    int rv = 0;
    cudaRuntimeGetVersion(&rv);
    snprintf(g_dev.cuda, sizeof g_dev.cuda, "%d.%d", rv / 1000, (rv % 1000) / 10);
    driver_version_string(g_dev.driver, sizeof g_dev.driver);
    printf("device %d: %s | %s | %d SMs | L2 %d MB | CUDA %s | driver %s\n", index, g_dev.name, g_dev.sm,
           g_dev.prop.multiProcessorCount, g_dev.prop.l2CacheSize >> 20, g_dev.cuda, g_dev.driver);
}

// ------------------------------------------------------------------------------------------------
// Inputs: cuRAND Philox (seeded) normal values, generated on the device in fp32, rounded on the device
// to the dtype; the host copy is read back from exactly those values. Each tensor has its own stream of
// numbers: seed + tensor index. The cuRAND host generator gives the same sequence (host_fill_normal).

static unsigned long long tensor_seed(unsigned long long seed, int tensor) {
    return seed + 0x9E3779B97F4A7C15ull * (unsigned long long)tensor;
}

template <typename T> __global__ void convert_from_f32_kernel(const float *in, T *out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = from_float<T>(in[i]);
}

// Fills dev (n elements of dtype d) with N(mean, std) and host_out (n doubles) with the same values.
static void fill_normal(void *dev, double *host_out, size_t n, dtype_t d, unsigned long long seed, int tensor,
                        double mean, double std) {
    size_t n2 = n + (n & 1);  // cuRAND's normal generators want an even count
    float *tmp;
    CUDA_CHECK(cudaMalloc(&tmp, n2 * sizeof(float)));
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, tensor_seed(seed, tensor)));
    CURAND_CHECK(curandGenerateNormal(g, tmp, n2, (float)mean, (float)std));
    CURAND_CHECK(curandDestroyGenerator(g));
    int blocks = (int)(n / 256 + 1 < 65536 ? n / 256 + 1 : 65536);
    switch (d) {
    case DT_FP16: convert_from_f32_kernel<__half><<<blocks, 256>>>(tmp, (__half *)dev, n); break;
    case DT_BF16: convert_from_f32_kernel<__nv_bfloat16><<<blocks, 256>>>(tmp, (__nv_bfloat16 *)dev, n); break;
    default: CUDA_CHECK(cudaMemcpy(dev, tmp, n * sizeof(float), cudaMemcpyDeviceToDevice)); break;
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(tmp));
    if (host_out) {
        void *h = malloc(n * dtype_size(d));
        CUDA_CHECK(cudaMemcpy(h, dev, n * dtype_size(d), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) host_out[i] = host_load(h, i, d);
        free(h);
    }
}

// The same values on the host alone (cuRAND's host generator): used by the CPU tests, and by the GPU
// suite to check that the device inputs are what the host generator gives.
static void host_fill_normal(double *out, size_t n, dtype_t d, unsigned long long seed, int tensor, double mean,
                             double std) {
    size_t n2 = n + (n & 1);
    float *tmp = (float *)malloc(n2 * sizeof(float));
    void *rounded = malloc(n * dtype_size(d));
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, tensor_seed(seed, tensor)));
    CURAND_CHECK(curandGenerateNormal(g, tmp, n2, (float)mean, (float)std));
    CURAND_CHECK(curandDestroyGenerator(g));
    for (size_t i = 0; i < n; i++) host_store(rounded, i, d, tmp[i]);
    for (size_t i = 0; i < n; i++) out[i] = host_load(rounded, i, d);
    free(tmp);
    free(rounded);
}

static void *dev_alloc(size_t bytes) {
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}
static double *host_alloc_doubles(size_t n) {
    double *p = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!p) { fprintf(stderr, "out of host memory (%zu doubles)\n", n); exit(EXIT_CUDA); }
    return p;
}

// ------------------------------------------------------------------------------------------------
// Validation: every element of every output against the double reference.

typedef struct {
    double max_abs, max_rel;  // over all finite comparisons
    long n_bad;               // elements outside tolerance, or non-finite where the reference is finite
    long first_bad[5];        // flat indices of the first mismatches
    int n_first;
} check_t;

// Compares gpu[0..n) (as doubles) with ref; an element fails when |gpu - ref| > atol + rtol*|ref| (atol
// widened by row_atol[i / cols] when given), or when gpu is NaN/Inf and ref is finite. max_rel uses |ref|
// floored at atol so that zeros do not blow it up.
static inline int element_bad(double g, double f, tolerance_t tol, double extra) {
    if (!isfinite(f)) return !(isnan(f) ? isnan(g) : g == f);  // a non-finite reference must be matched in kind
    if (!isfinite(g)) return 1;
    return fabs(g - f) > tol.atol + extra + tol.rtol * fabs(f);
}
static check_t compare_arrays(const double *gpu, const double *ref, long n, long cols, tolerance_t tol,
                              const double *row_atol) {
    check_t r;
    memset(&r, 0, sizeof r);
    double max_abs = 0, max_rel = 0;
    long n_bad = 0;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : max_abs, max_rel) reduction(+ : n_bad) schedule(static)
#endif
    for (long i = 0; i < n; i++) {
        double g = gpu[i], f = ref[i];
        if (element_bad(g, f, tol, row_atol ? row_atol[i / cols] : 0.0)) n_bad++;
        if (!isfinite(f) || !isfinite(g)) continue;
        double d = fabs(g - f);
        double rel = d / fmax(fabs(f), tol.atol);
        if (d > max_abs) max_abs = d;
        if (rel > max_rel) max_rel = rel;
    }
    r.max_abs = max_abs;
    r.max_rel = max_rel;
    r.n_bad = n_bad;
    for (long i = 0; n_bad && i < n && r.n_first < 5; i++)  // second, serial pass for the first positions
        if (element_bad(gpu[i], ref[i], tol, row_atol ? row_atol[i / cols] : 0.0)) r.first_bad[r.n_first++] = i;
    return r;
}

// Poison: NaN bytes (0xFF) in every output, so an element the kernel never writes fails.
static void poison_outputs(problem_t *p) {
    for (int i = 0; i < p->n_out; i++)
        CUDA_CHECK(cudaMemset(p->out[i].dev, 0xFF, (size_t)p->out[i].rows * p->out[i].cols * dtype_size(p->out[i].dtype)));
    CUDA_CHECK(cudaDeviceSynchronize());
}

static long output_numel(const output_t *o) { return o->rows * o->cols; }

// Copies every output back and compares it. Prints the first mismatches of each failing output.
static check_t validate_outputs(problem_t *p, int verbose) {
    check_t all;
    memset(&all, 0, sizeof all);
    for (int i = 0; i < p->n_out; i++) {
        output_t *o = &p->out[i];
        long n = output_numel(o);
        size_t bytes = (size_t)n * dtype_size(o->dtype);
        void *h = malloc(bytes ? bytes : 1);
        double *g = host_alloc_doubles(n);
        CUDA_CHECK(cudaMemcpy(h, o->dev, bytes, cudaMemcpyDeviceToHost));
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (long j = 0; j < n; j++) g[j] = host_load(h, j, o->dtype);
        check_t r = compare_arrays(g, o->ref, n, o->cols, o->tol, o->row_atol);
        if (r.n_bad && verbose) {
            printf("  %s: %ld of %ld elements wrong (atol %.1e, rtol %.1e); first:", o->name, r.n_bad, n, o->tol.atol,
                   o->tol.rtol);
            for (int k = 0; k < r.n_first; k++) {
                long j = r.first_bad[k];
                printf(" (row %ld, col %ld) gpu %.7g ref %.7g;", j / o->cols, j % o->cols, g[j], o->ref[j]);
            }
            printf("\n");
        }
        all.max_abs = fmax(all.max_abs, r.max_abs);
        all.max_rel = fmax(all.max_rel, r.max_rel);
        all.n_bad += r.n_bad;
        free(h);
        free(g);
    }
    return all;
}

// ------------------------------------------------------------------------------------------------
// The clock: the GPU's own timestamps of the timed launches (CUPTI activity records), where CUPTI can record.
//
// Each timed launch runs inside a CUPTI external-correlation scope whose id names its repetition. CUPTI ties
// every kernel, memcpy and memset it records to the API call that issued it, and that call to the scope, so
// the GPU work of repetition i is known whoever launched it (our kernels, cuDNN through the driver API, a
// cudaMemcpyAsync). An op's time runs from its first activity's start to its last activity's end: the same
// quantity Nsight Compute's gpu__time_duration sums for a one-kernel op, with no launch latency and no CPU
// time in it. CUDA events around the launch stay as the second figure ("with launch").
// Where CUPTI cannot record (built without it, no permission, another profiler attached), the program says
// so once and times with the events; every CSV row names its clock.

static const char *g_clock_note;  // why the events are the clock (NULL while CUPTI records)

#if defined(HAVE_CUPTI)
#include <cupti.h>
#include <pthread.h>
#if CUPTI_API_VERSION < 130000
#error "the GPU clock reads CUDA 13's CUPTI records (CUpti_ActivityKernel10); build with CUPTI= to time with events"
#endif

typedef struct { uint32_t corr; uint64_t start, end; } gpu_activity_t;  // one kernel, memcpy or memset
typedef struct { uint32_t corr; uint64_t ext; } gpu_corr_t;            // API call -> repetition scope
static struct {
    pthread_mutex_t lock;  // CUPTI may hand buffers over from its own thread
    gpu_activity_t *act;
    size_t n_act, cap_act;
    gpu_corr_t *corr;
    size_t n_corr, cap_corr;
    size_t dropped;        // records CUPTI had no room for: the windows cannot be trusted
} g_rec = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, NULL, 0, 0, 0};
static int g_clock_state;        // 0 not opened yet, 1 CUPTI records, -1 events
static uint64_t g_clock_next_id = 1;

#define CUPTI_BUFFER_BYTES (8u << 20)
static void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *buf = (uint8_t *)aligned_alloc(8, CUPTI_BUFFER_BYTES);
    *size = *buf ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

template <typename T> static void grow_push(T **a, size_t *n, size_t *cap, T v) {
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *a = (T *)realloc(*a, *cap * sizeof(T));
        if (!*a) { fprintf(stderr, "out of host memory for CUPTI records\n"); exit(EXIT_CUDA); }
    }
    (*a)[(*n)++] = v;
}

// The three kinds of GPU activity share the fields the clock reads (under different record types).
template <typename R> static gpu_activity_t activity_of(const CUpti_Activity *rec) {
    const R *r = (const R *)rec;
    gpu_activity_t a = {r->correlationId, r->start, r->end};
    return a;
}

static void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)size;
    pthread_mutex_lock(&g_rec.lock);
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityKernel10>(r));
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityMemcpy6>(r));
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityMemset4>(r));
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)r;
            gpu_corr_t c = {e->correlationId, e->externalId};
            grow_push(&g_rec.corr, &g_rec.n_corr, &g_rec.cap_corr, c);
            break;
        }
        default: break;  // API records: needed for the correlation, not kept
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_rec.dropped += dropped;
    pthread_mutex_unlock(&g_rec.lock);
    free(buf);
}

static const char *cupti_error(CUptiResult r) {
    const char *s = NULL;
    cuptiGetResultString(r, &s);
    return s ? s : "unknown CUPTI error";
}

// Opens the GPU clock once: 1 when CUPTI records, else 0 with g_clock_note saying why.
static int gpu_clock_open(void) {
    if (g_clock_state) return g_clock_state > 0;
    // The runtime and driver API kinds are what the external correlation records attach to.
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                               CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                               CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET};
    CUptiResult r = cuptiActivityRegisterCallbacks(cupti_buffer_requested, cupti_buffer_completed);
    for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++) r = cuptiActivityEnable(kinds[i]);
    if (r != CUPTI_SUCCESS) {
        static char why[160];
        snprintf(why, sizeof why, "CUPTI cannot record: %s", cupti_error(r));
        g_clock_note = why;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) cuptiActivityDisable(kinds[i]);
        g_clock_state = -1;
        return 0;
    }
    g_clock_state = 1;
    return 1;
}

// Drains what CUPTI holds (records of earlier work) and returns the first id of `repeats` new scopes.
static uint64_t gpu_clock_begin(int repeats) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g_rec.lock);
    g_rec.n_act = g_rec.n_corr = 0;
    g_rec.dropped = 0;
    pthread_mutex_unlock(&g_rec.lock);
    uint64_t first = g_clock_next_id;
    g_clock_next_id += (uint64_t)repeats;
    return first;
}
static void gpu_clock_push(uint64_t id) { cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }
static void gpu_clock_pop(void) {
    uint64_t last;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

static int cmp_corr(const void *a, const void *b) {
    uint32_t x = ((const gpu_corr_t *)a)->corr, y = ((const gpu_corr_t *)b)->corr;
    return (x > y) - (x < y);
}

// ms[i] = repetition i's window (first start to last end), for scopes first..first+repeats-1 (after the
// device is synchronized). 0 when a repetition has no GPU activity or records were dropped: then the caller
// keeps the events for this measurement and says so.
static int gpu_clock_windows(uint64_t first, int repeats, double *ms) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g_rec.lock);
    qsort(g_rec.corr, g_rec.n_corr, sizeof(gpu_corr_t), cmp_corr);
    uint64_t *lo = (uint64_t *)malloc(repeats * sizeof(uint64_t)), *hi = (uint64_t *)calloc(repeats, sizeof(uint64_t));
    for (int i = 0; i < repeats; i++) lo[i] = UINT64_MAX;
    for (size_t i = 0; i < g_rec.n_act; i++) {
        const gpu_activity_t *a = &g_rec.act[i];
        gpu_corr_t key = {a->corr, 0};
        const gpu_corr_t *c = (const gpu_corr_t *)bsearch(&key, g_rec.corr, g_rec.n_corr, sizeof key, cmp_corr);
        if (!c || c->ext < first || c->ext >= first + (uint64_t)repeats) continue;  // a flush, or other work
        int rep = (int)(c->ext - first);
        if (a->start < lo[rep]) lo[rep] = a->start;
        if (a->end > hi[rep]) hi[rep] = a->end;
    }
    int ok = g_rec.dropped == 0;
    for (int i = 0; i < repeats && ok; i++) {
        ok = lo[i] != UINT64_MAX && hi[i] > lo[i];
        if (ok) ms[i] = (double)(hi[i] - lo[i]) * 1e-6;
    }
    pthread_mutex_unlock(&g_rec.lock);
    free(lo);
    free(hi);
    return ok;
}
#else
static int gpu_clock_open(void) {
    g_clock_note = "built without CUPTI";
    return 0;
}
static uint64_t gpu_clock_begin(int repeats) { (void)repeats; return 0; }
static void gpu_clock_push(uint64_t id) { (void)id; }
static void gpu_clock_pop(void) {}
static int gpu_clock_windows(uint64_t first, int repeats, double *ms) { (void)first; (void)repeats; (void)ms; return 0; }
#endif

// ------------------------------------------------------------------------------------------------
// Timing: cold L2 before every timed launch, the GPU clock (or events) around the launch alone, warm-up,
// median and min.

typedef void (*work_fn)(void *ctx);
typedef struct {
    double median_ms, min_ms;                // the reported time, on `clock`
    double launch_median_ms, launch_min_ms;  // CUDA events around the launch ("with launch")
    int repeats;
    const char *clock;                       // "cupti" (the GPU's kernel timestamps) or "events"
} timing_t;

static char *g_flush;
static size_t g_flush_bytes;  // the written part: 2 x L2
static size_t g_clean_bytes;  // then 3 x L2 read from another region

// Writing the flush buffer evicts everything from L2 but leaves it full of dirty lines, whose write-back
// would then be charged to the timed kernel; reading another region afterwards turns L2 into clean lines of
// data nobody uses, so the timed launch starts from a cold, clean cache. One L2 size of reads is not enough:
// it left part of the dirty lines behind (H100, 50 MB copy: 2586 GB/s after 1 x L2 of reads, 2838 after
// 3 x L2, 2853 with no flush writes at all; results/NOTES.md), so the harness reads 3 x L2.
__global__ void flush_write_kernel(int4 *buf, size_t n, int v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = make_int4(v, v, v, v);
}
__global__ void flush_read_kernel(const int4 *buf, size_t n, int *sink) {
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) *sink = acc;  // practically never; keeps the loads alive
}

// NORM_FLUSH="wA,rB" (experiments, results/NOTES.md): write A x L2, then read B x L2 of a region never written
// ("write" = "w2,r0"); the default is w2,r3.
static void flush_l2(void) {
    static int counter = 0, wpass = 2, rpass = 3;
    if (!g_flush) {
        const char *mode = getenv("NORM_FLUSH");
        if (mode && strcmp(mode, "write") == 0) rpass = 0;
        else if (mode && sscanf(mode, "w%d,r%d", &wpass, &rpass) != 2) { fprintf(stderr, "bad NORM_FLUSH\n"); exit(2); }
        size_t l2 = g_dev.prop.l2CacheSize > 0 ? (size_t)g_dev.prop.l2CacheSize : (size_t)(64 << 20);
        g_flush_bytes = (size_t)wpass * l2;
        g_clean_bytes = (size_t)rpass * l2;
        CUDA_CHECK(cudaMalloc(&g_flush, g_flush_bytes + g_clean_bytes + 16));
        CUDA_CHECK(cudaMemset(g_flush, 0, g_flush_bytes + g_clean_bytes + 16));
    }
    int blocks = g_dev.prop.multiProcessorCount * 8;
    if (g_flush_bytes) flush_write_kernel<<<blocks, 256>>>((int4 *)g_flush, g_flush_bytes / 16, ++counter);
    if (g_clean_bytes)
        flush_read_kernel<<<blocks, 256>>>((const int4 *)(g_flush + g_flush_bytes), g_clean_bytes / 16,
                                           (int *)(g_flush + g_flush_bytes + g_clean_bytes));
    CUDA_CHECK_LAUNCH();
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *t, int n) { return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]); }

// Times fn: warm-up, then `repeats` launches (0 = automatic: about 100 ms of kernel time, 10..200), each after
// a flush of L2, each inside its own GPU-clock scope and between two events.
static timing_t time_cold(work_fn fn, void *ctx, int repeats) {
    fn(ctx);  // warm-up: module load, first-touch
    fn(ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    int gpu_clock = gpu_clock_open();
    if (repeats <= 0) {  // estimate from three cold launches
        cudaEvent_t e0, e1;
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        float est = 1e30f;
        for (int i = 0; i < 3; i++) {
            flush_l2();
            CUDA_CHECK(cudaEventRecord(e0));
            fn(ctx);
            CUDA_CHECK(cudaEventRecord(e1));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms;
            CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (ms < est) est = ms;
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        repeats = (int)(100.0 / (est > 1e-4 ? est : 1e-4));
        repeats = repeats < 10 ? 10 : repeats > 200 ? 200 : repeats;
    }
    cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * (size_t)repeats * sizeof(cudaEvent_t));
    for (int i = 0; i < 2 * repeats; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));
    uint64_t first = gpu_clock ? gpu_clock_begin(repeats) : 0;
    for (int i = 0; i < repeats; i++) {
        flush_l2();
        CUDA_CHECK(cudaEventRecord(ev[2 * i]));
        if (gpu_clock) gpu_clock_push(first + i);
        fn(ctx);
        if (gpu_clock) gpu_clock_pop();
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1]));
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    double *launch = (double *)malloc(repeats * sizeof(double)), *gpu = (double *)malloc(repeats * sizeof(double));
    for (int i = 0; i < repeats; i++) {
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        launch[i] = ms;
    }
    for (int i = 0; i < 2 * repeats; i++) CUDA_CHECK(cudaEventDestroy(ev[i]));
    free(ev);
    timing_t r;
    r.repeats = repeats;
    r.clock = "events";
    if (gpu_clock) {
        if (gpu_clock_windows(first, repeats, gpu)) r.clock = "cupti";
        else printf("clock: CUPTI missed GPU activity of a timed launch: this measurement uses CUDA events\n");
    }
    qsort(launch, repeats, sizeof(double), cmp_double);
    r.launch_min_ms = launch[0];
    r.launch_median_ms = median_sorted(launch, repeats);
    if (strcmp(r.clock, "cupti") == 0) {
        qsort(gpu, repeats, sizeof(double), cmp_double);
        r.min_ms = gpu[0];
        r.median_ms = median_sorted(gpu, repeats);
    } else {
        r.min_ms = r.launch_min_ms;
        r.median_ms = r.launch_median_ms;
    }
    free(launch);
    free(gpu);
    return r;
}

// ------------------------------------------------------------------------------------------------
// cuDNN, the vendor baseline (kernel 0 of every program), when the build found it (-DHAVE_CUDNN).
// Plans are built and engines chosen in kernel 0's supports(), outside the timed region; its launch()
// only executes. A cuDNN failure while planning becomes kernel 0's skip reason; while executing, an error.
// (This section follows the timing one: choosing among engine configs times each with time_cold.)
//
// The graph (backend) API in C, for one normalization forward: tensor descriptors, the norm-forward
// operation, the operation graph, the engine heuristics (mode A; the fallback list when A gives nothing
// that runs), and for every engine config they return: an execution plan, its workspace and a variant
// pack, one trial execution, and (when several ran) a cold-L2 timing; the fastest plan is kept. A
// program's kernel 0 fills a cudnn_norm_t from its problem and calls cudnn_norm_prepare() in supports()
// and cudnn_plan_execute() in launch().
#ifdef HAVE_CUDNN
#include <cudnn.h>
#if CUDNN_MAJOR < 9
#error "kernel 0 needs cuDNN 9 or newer (the graph API's norm-forward node); build without cuDNN: make CUDNN_DIR="
#endif

// One handle per process, on the default stream (where every kernel and the timing events run).
static cudnnHandle_t cudnn_handle(void) {
    static cudnnHandle_t h = NULL;
    if (!h) {
        cudnnStatus_t s = cudnnCreate(&h);
        if (s == CUDNN_STATUS_SUCCESS) s = cudnnSetStream(h, 0);
        if (s != CUDNN_STATUS_SUCCESS) {
            fprintf(stderr, "cuDNN error: cudnnCreate: %s\n", cudnnGetErrorString(s));
            exit(EXIT_CUDA);
        }
    }
    return h;
}

// A status for skip reasons and the planning log: the name without CUDNN_STATUS_, in lower case, and the
// code ("not supported shape (3002)"). Lower case keeps the word FAIL (CUDNN_STATUS_EXECUTION_FAILED,
// ..._COMPILATION_FAILED) out of lines that are not validation failures: the GPU suite greps for it.
static const char *cudnn_status_text(cudnnStatus_t s) {
    static char buf[4][96];  // a few may appear in one message
    static int next = 0;
    char *out = buf[next++ % 4];
    const char *name = cudnnGetErrorString(s);
    if (strncmp(name, "CUDNN_STATUS_", 13) == 0) name += 13;
    size_t n = 0;
    for (; name[n] && n < 64; n++) out[n] = name[n] == '_' ? ' ' : (char)tolower((unsigned char)name[n]);
    snprintf(out + n, sizeof buf[0] - n, " (%d)", (int)s);
    return out;
}

// cuDNN's own words for the last error of this thread, as ": <first line>" (at most 120 characters, FAIL in
// lower case as above), or "" when it has none. Reading them clears them.
static const char *cudnn_last_error(void) {
    static char msg[512], out[128];
    msg[0] = 0;
    cudnnGetLastErrorString(msg, sizeof msg);
    if (!msg[0]) return "";
    snprintf(out, sizeof out, ": %s", msg);
    for (char *c = out; *c; c++) {
        if (*c == '\n' || *c == '\r') { *c = 0; break; }
        if (strncmp(c, "FAIL", 4) == 0) memcpy(c, "fail", 4);
    }
    return out;
}

// "9.19.0", from the library that is loaded (not the header).
static const char *cudnn_version_string(void) {
    static char v[32];
    size_t n = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
    snprintf(v, sizeof v, "%zu.%zu.%zu", n / 10000, n / 100 % 100, n % 100);
    return v;
}

// Inside a function that returns a skip reason (const char *): return why the cuDNN call failed.
#define CUDNN_TRY(call)                                                                               \
    do {                                                                                              \
        cudnnStatus_t st_ = (call);                                                                   \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                              \
            return reasonf("cuDNN %s: %s%s", #call, cudnn_status_text(st_), cudnn_last_error());      \
    } while (0)

// Where a failure is an error (executing a plan that was built and tried): exit like CUDA_CHECK.
#define CUDNN_CHECK(call)                                                                             \
    do {                                                                                              \
        cudnnStatus_t st_ = (call);                                                                   \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                            \
            fprintf(stderr, "cuDNN error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudnnGetErrorString(st_));                                                        \
            exit(EXIT_CUDA);                                                                          \
        }                                                                                             \
    } while (0)

// Pass a helper's skip reason up (NULL: fine).
#define REASON_TRY(expr)                                                                              \
    do {                                                                                              \
        const char *why_ = (expr);                                                                    \
        if (why_) return why_;                                                                        \
    } while (0)

// Kernel 0 of every program: cuDNN picks its own launch configuration, so a --block-size is refused (NULL for
// bs = 0), before cuDNN is asked anything.
static const char *cudnn_refuse_block_size(int bs) {
    return bs ? "cuDNN picks its own launch configuration (no --block-size)" : NULL;
}

// Set one attribute; the reason names it ("cuDNN set CUDNN_ATTR_TENSOR_STRIDES: bad param (2000)").
#define CUDNN_SET(desc, attr, type, count, values) REASON_TRY(cudnn_set(desc, #attr, attr, type, count, values))
static const char *cudnn_set(cudnnBackendDescriptor_t d, const char *name, cudnnBackendAttributeName_t attr,
                             cudnnBackendAttributeType_t type, int64_t count, const void *values) {
    cudnnStatus_t s = cudnnBackendSetAttribute(d, attr, type, count, values);
    if (s == CUDNN_STATUS_SUCCESS) return NULL;
    return reasonf("cuDNN set %s: %s%s", name, cudnn_status_text(s), cudnn_last_error());
}
static const char *cudnn_finalize(cudnnBackendDescriptor_t d, const char *what) {
    cudnnStatus_t s = cudnnBackendFinalize(d);
    if (s == CUDNN_STATUS_SUCCESS) return NULL;
    return reasonf("cuDNN finalize %s: %s%s", what, cudnn_status_text(s), cudnn_last_error());
}

static cudnnDataType_t cudnn_dtype(dtype_t d) {
    return d == DT_FP16 ? CUDNN_DATA_HALF : d == DT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// The descriptors of one graph (tensors, operations, the graph, heuristics, engine configs), kept together:
// the execution plan refers to them, so they live as long as it does and are destroyed with it.
#define CUDNN_MAX_DESCS 48
typedef struct {
    cudnnBackendDescriptor_t d[CUDNN_MAX_DESCS];
    int n;
} cudnn_descs_t;

static const char *cudnn_create(cudnn_descs_t *keep, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out) {
    *out = NULL;
    if (keep->n == CUDNN_MAX_DESCS) return "cuDNN: more descriptors than CUDNN_MAX_DESCS";
    CUDNN_TRY(cudnnBackendCreateDescriptor(type, out));
    keep->d[keep->n++] = *out;
    return NULL;
}
static void cudnn_destroy_all(cudnn_descs_t *keep) {
    while (keep->n > 0) cudnnBackendDestroyDescriptor(keep->d[--keep->n]);
}

// A finalized tensor: nd dims and strides (in elements), data type, unique id. Device tensors say 16-byte
// alignment (the norm engines' minimum): every base pointer given to them here comes from cudaMalloc, views
// included (QK-norm's x starts at its buffer). by_value: a host scalar read at execution (epsilon).
static const char *cudnn_tensor(cudnn_descs_t *keep, cudnnBackendDescriptor_t *t, const char *name, int64_t uid,
                                cudnnDataType_t type, int nd, const int64_t *dim, const int64_t *stride,
                                bool by_value) {
    int64_t align = 16;
    REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_TENSOR_DESCRIPTOR, t));
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dim);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, stride);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (by_value) CUDNN_SET(*t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    char what[64];
    snprintf(what, sizeof what, "tensor %s", name);
    return cudnn_finalize(*t, what);
}

// An execution plan chosen for a graph, with everything it needs: the graph's descriptors, the variant pack
// (the data pointers), the workspace. cudnn_plan_release() frees it all.
typedef struct {
    cudnn_descs_t keep;  // the graph's descriptors
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
    char path[128];      // which engine runs, for launch_t.path
} cudnn_plan_t;

static void cudnn_plan_release(cudnn_plan_t *st) {
    if (st->pack) cudnnBackendDestroyDescriptor(st->pack);
    if (st->plan) cudnnBackendDestroyDescriptor(st->plan);
    if (st->workspace) CUDA_CHECK(cudaFree(st->workspace));
    cudnn_destroy_all(&st->keep);
    st->plan = st->pack = NULL;
    st->workspace = NULL;
    st->path[0] = 0;
}

// One engine config tried: its plan, workspace and variant pack, and what came of it.
typedef struct {
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
    int64_t engine;    // global index (-1: not known)
    int rtc;           // the engine compiles its kernel at run time (NVRTC), in plan finalization
    int ran;           // the trial execution succeeded
    double ms;         // median of the timed executions (0: not timed)
} cudnn_cand_t;

static void cudnn_cand_free(cudnn_cand_t *c) {
    if (c->pack) cudnnBackendDestroyDescriptor(c->pack);
    if (c->plan) cudnnBackendDestroyDescriptor(c->plan);
    if (c->workspace) CUDA_CHECK(cudaFree(c->workspace));
    c->plan = c->pack = NULL;
    c->workspace = NULL;
}

// The engine behind a config: its global index and whether it compiles at run time (for the log only;
// a failure here just leaves them unknown).
static void cudnn_engine_info(cudnnBackendDescriptor_t cfg, cudnn_cand_t *c) {
    cudnnBackendDescriptor_t eng;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS) return;
    int64_t got = 0, index = -1;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng) ==
            CUDNN_STATUS_SUCCESS && got == 1) {
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &index) ==
                CUDNN_STATUS_SUCCESS && got == 1)
            c->engine = index;
        cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                     CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &got, notes) == CUDNN_STATUS_SUCCESS)
            for (int64_t i = 0; i < got && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
                if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) c->rtc = 1;
    }
    cudnnBackendDestroyDescriptor(eng);
    cudnn_last_error();  // a failure here is no one's reason: clear cuDNN's message
}

// Plan, workspace, variant pack and one trial execution for one engine config (NULL: it ran; else why not).
// The trial writes the problem's outputs; the harness poisons them again before validating.
static const char *cudnn_try_config(cudnnBackendDescriptor_t cfg, const int64_t *uids, void *const *ptrs, int n,
                                    cudnn_cand_t *c) {
    cudnnHandle_t h = cudnn_handle();
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &c->plan));
    CUDNN_SET(c->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CUDNN_SET(c->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    REASON_TRY(cudnn_finalize(c->plan, "plan"));
    int64_t ws = 0, got = 0;
    const cudnnBackendAttributeName_t WORKSPACE_SIZE = CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE;
    CUDNN_TRY(cudnnBackendGetAttribute(c->plan, WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws));
    if (ws > 0) {
        cudaError_t e = cudaMalloc(&c->workspace, (size_t)ws);
        if (e != cudaSuccess) {
            c->workspace = NULL;
            cudaGetLastError();  // an allocation failure is not sticky; clear it
            return reasonf("workspace of %lld bytes: %s", (long long)ws, cudaGetErrorString(e));
        }
    }
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &c->pack));
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &c->workspace);
    REASON_TRY(cudnn_finalize(c->pack, "variant pack"));
    cudnnStatus_t s = cudnnBackendExecute(h, c->plan, c->pack);
    if (s != CUDNN_STATUS_SUCCESS) return reasonf("cuDNN execute: %s%s", cudnn_status_text(s), cudnn_last_error());
    CUDA_CHECK(cudaDeviceSynchronize());  // a fault in cuDNN's kernel is fatal to the context: exit
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return reasonf("execute: %s", cudaGetErrorString(e));
    c->ran = 1;
    return NULL;
}

// The engine configs the heuristics give in `mode` for `graph` (at most max, best predicted first).
static const char *cudnn_heuristics(cudnn_descs_t *keep, cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                                    cudnnBackendDescriptor_t *cfgs, int max, int *n_out) {
    *n_out = 0;
    cudnnBackendDescriptor_t heur;
    REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    REASON_TRY(cudnn_finalize(heur, "heuristics"));
    int64_t count = 0, got = 0;
    const cudnnBackendAttributeName_t RESULTS = CUDNN_ATTR_ENGINEHEUR_RESULTS;
    CUDNN_TRY(cudnnBackendGetAttribute(heur, RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));  // the count
    if (count > max) count = max;
    if (count <= 0) return NULL;
    for (int64_t i = 0; i < count; i++) REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    CUDNN_TRY(cudnnBackendGetAttribute(heur, RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs));
    *n_out = (int)(got < count ? got : count);
    return NULL;
}

typedef struct {
    cudnnBackendDescriptor_t plan, pack;
    cudnnStatus_t status;  // the first failure while timing
} cudnn_exec_t;
static void cudnn_exec_work(void *ctx) {
    cudnn_exec_t *e = (cudnn_exec_t *)ctx;
    cudnnStatus_t s = cudnnBackendExecute(cudnn_handle(), e->plan, e->pack);
    if (s != CUDNN_STATUS_SUCCESS && e->status == CUDNN_STATUS_SUCCESS) e->status = s;
}

static void appendf(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

#define CUDNN_MAX_CONFIGS 16  // engine configs tried at most (heuristics mode A and fallback together)
#define CUDNN_PLAN_REPEATS 10 // timed executions of each config, when there is a choice to make

// From finalized operations to the fastest execution plan, kept in st (its graph's descriptors in st->keep).
// uids/ptrs: every non-virtual tensor's unique id and data pointer (a host pointer for by-value scalars; it
// must stay valid while the plan is used). Prints one line: the configs tried, each one's time or why not.
// NULL when a plan is ready, else the reason ("cuDNN has no engine for <label> (...)").
static const char *cudnn_pick_plan(cudnn_plan_t *st, cudnnBackendDescriptor_t *ops, int n_ops, const int64_t *uids,
                                   void *const *ptrs, int n_ptrs, const char *label) {
    cudnnHandle_t h = cudnn_handle();
    cudnnBackendDescriptor_t graph;
    REASON_TRY(cudnn_create(&st->keep, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    CUDNN_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops);
    CUDNN_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    REASON_TRY(cudnn_finalize(graph, "operation graph"));

    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    static const char *mode_names[2] = {"A", "fallback"};
    cudnn_cand_t cand[CUDNN_MAX_CONFIGS];
    int cand_mode[CUDNN_MAX_CONFIGS];
    memset(cand, 0, sizeof cand);
    int tried = 0, ran = 0;
    char log[2048] = "", first_why[160] = "";
    snprintf(log, sizeof log, "cuDNN %s plans %s:", cudnn_version_string(), label);
    for (int m = 0; m < 2 && !ran && tried < CUDNN_MAX_CONFIGS; m++) {
        cudnnBackendDescriptor_t cfgs[CUDNN_MAX_CONFIGS];
        int n = 0;
        const char *why = cudnn_heuristics(&st->keep, graph, modes[m], cfgs, CUDNN_MAX_CONFIGS - tried, &n);
        if (why) {
            appendf(log, sizeof log, " heuristics %s: %s;", mode_names[m], why);
            if (!first_why[0]) snprintf(first_why, sizeof first_why, "heuristics %s: %s", mode_names[m], why);
            continue;
        }
        appendf(log, sizeof log, " heuristics %s: %d config%s;", mode_names[m], n, n == 1 ? "" : "s");
        for (int i = 0; i < n; i++) {
            cudnn_cand_t *c = &cand[tried];
            c->engine = -1;
            cand_mode[tried] = m;
            tried++;
            cudnn_engine_info(cfgs[i], c);
            why = cudnn_try_config(cfgs[i], uids, ptrs, n_ptrs, c);
            appendf(log, sizeof log, " [%d] engine %lld%s: %s;", tried, (long long)c->engine, c->rtc ? " (rtc)" : "",
                    why ? why : "ran");
            if (why) {
                if (!first_why[0]) snprintf(first_why, sizeof first_why, "%s", why);
                cudnn_cand_free(c);
            } else {
                ran++;
                if (g_check_only) break;  // --check: the heuristics' first config that runs, untimed
            }
        }
    }
    int best = -1;
    for (int i = 0; i < tried; i++) {
        cudnn_cand_t *c = &cand[i];
        if (!c->ran) continue;
        if (ran > 1) {  // a choice to make: time each, cold L2, as the harness times kernels
            cudnn_exec_t e = {c->plan, c->pack, CUDNN_STATUS_SUCCESS};
            timing_t t = time_cold(cudnn_exec_work, &e, CUDNN_PLAN_REPEATS);
            if (e.status != CUDNN_STATUS_SUCCESS) {
                appendf(log, sizeof log, " [%d] timing: cuDNN execute: %s%s;", i + 1, cudnn_status_text(e.status),
                        cudnn_last_error());
                c->ran = 0;
                cudnn_cand_free(c);
                continue;
            }
            c->ms = t.median_ms;
            appendf(log, sizeof log, " [%d] %.4f ms;", i + 1, c->ms);
        }
        if (best < 0 || c->ms < cand[best].ms) best = i;
    }
    if (best < 0) {
        printf("%s none ran\n", log);
        if (!tried && !first_why[0])
            return reasonf("cuDNN has no engine for %s (the heuristics gave no config)", label);
        return reasonf("cuDNN has no engine for %s (%d config%s tried; %s)", label, tried, tried == 1 ? "" : "s",
                       first_why);
    }
    for (int i = 0; i < tried; i++)
        if (i != best) cudnn_cand_free(&cand[i]);
    st->plan = cand[best].plan;
    st->pack = cand[best].pack;
    st->workspace = cand[best].workspace;
    snprintf(st->path, sizeof st->path, "cuDNN %s engine %lld (config %d of %d tried, heuristics %s)",
             cudnn_version_string(), (long long)cand[best].engine, best + 1, tried, mode_names[cand_mode[best]]);
    printf("%s chose [%d]%s\n", log, best + 1, ran > 1 ? " (fastest median)" : " (the only one that ran; not timed)");
    return NULL;
}

// One normalization forward as the graph sees it: x normalized over its trailing dims, rows = the leading
// ones. Training phase: the statistics are written, fp32 (cuDNN's compute type for norms is fp32).
#define CUDNN_MAX_DIMS 5
typedef struct {
    cudnnBackendNormMode_t mode;  // CUDNN_LAYER_NORM or CUDNN_RMS_NORM
    dtype_t dtype;                // x, y, scale, bias
    int nd;                       // dims of every tensor (2..5)
    int64_t x_dim[CUDNN_MAX_DIMS], x_stride[CUDNN_MAX_DIMS];
    int64_t y_stride[CUDNN_MAX_DIMS];                          // y has x's dims
    int64_t w_dim[CUDNN_MAX_DIMS], w_stride[CUDNN_MAX_DIMS];   // scale, bias: 1 over the row dims
    int64_t s_dim[CUDNN_MAX_DIMS], s_stride[CUDNN_MAX_DIMS];   // mean, inverse std: 1 over the normalized dims
    const void *x, *scale, *bias;  // bias NULL: none
    void *y;
    float *mean, *rstd;            // mean NULL: not computed (RMSNorm); rstd = 1 / sqrt(var + eps), per row
    float eps;                     // by value: the variant pack points at cudnn_norm_state_t.built.eps
    char label[96];                // "LayerNorm fp32 8192x768", for messages
} cudnn_norm_t;

// The 4-D dims and strides of x (y has x's dims), the scale/bias and the statistics.
static void cudnn_norm_dims(cudnn_norm_t *d, const int64_t xd[4], const int64_t xs[4], const int64_t ys[4],
                            const int64_t wd[4], const int64_t ws[4], const int64_t sd[4], const int64_t ss[4]) {
    d->nd = 4;
    memcpy(d->x_dim, xd, 4 * sizeof(int64_t));
    memcpy(d->x_stride, xs, 4 * sizeof(int64_t));
    memcpy(d->y_stride, ys, 4 * sizeof(int64_t));
    memcpy(d->w_dim, wd, 4 * sizeof(int64_t));
    memcpy(d->w_stride, ws, 4 * sizeof(int64_t));
    memcpy(d->s_dim, sd, 4 * sizeof(int64_t));
    memcpy(d->s_stride, ss, 4 * sizeof(int64_t));
}
// Rows of C contiguous elements, as cuDNN's own samples describe them: x and y [rows, C, 1, 1] with strides
// (C, 1, C, C) (channels last, the size-1 dims given C), scale and bias [1, C, 1, 1] the same way, the
// statistics [rows, 1, 1, 1] with unit strides.
static void cudnn_norm_rows(cudnn_norm_t *d, long rows, long C) {
    int64_t xd[4] = {rows, C, 1, 1}, xs[4] = {C, 1, C, C}, wd[4] = {1, C, 1, 1}, sd[4] = {rows, 1, 1, 1},
            ss[4] = {1, 1, 1, 1};
    cudnn_norm_dims(d, xd, xs, xs, wd, xs, sd, ss);
}

// What a program keeps for its kernel 0: the description planned for (the cache key), and the plan or why
// there is none. The last plan of a process is kept until the process exits, deliberately (each program
// plans one problem and runs it to the end); it is released when a different description replaces it.
typedef struct {
    int planned;          // `built` has an answer below
    cudnn_norm_t built;   // compared byte for byte (callers memset a description before filling it); epsilon's
                          // by-value pointer in the variant pack points at built.eps
    char skip[256];       // why there is no plan ("" when there is one)
    cudnn_plan_t plan;
} cudnn_norm_state_t;

enum { CUDNN_UID_X = 1, CUDNN_UID_SCALE, CUDNN_UID_BIAS, CUDNN_UID_EPS, CUDNN_UID_MEAN, CUDNN_UID_RSTD, CUDNN_UID_Y };

static void cudnn_add_ptr(int64_t *uids, void **ptrs, int *n, int64_t uid, const void *p) {
    uids[*n] = uid;
    ptrs[*n] = (void *)p;
    (*n)++;
}

// The finalized norm-forward operation of d (its descriptors kept in k), and the variant pack's unique ids and
// data pointers (uids/ptrs hold 7; *n gets the count). Needs no GPU.
static const char *cudnn_norm_op(const cudnn_norm_t *d, cudnn_descs_t *k, cudnnBackendDescriptor_t *op_out,
                                 int64_t *uids, void **ptrs, int *n_out) {
    cudnnDataType_t io = cudnn_dtype(d->dtype), f32 = CUDNN_DATA_FLOAT;
    int64_t ones[CUDNN_MAX_DIMS] = {1, 1, 1, 1, 1};
    cudnnBackendDescriptor_t x, y, scale, bias = NULL, eps, mean = NULL, rstd, op;
    REASON_TRY(cudnn_tensor(k, &x, "x", CUDNN_UID_X, io, d->nd, d->x_dim, d->x_stride, false));
    REASON_TRY(cudnn_tensor(k, &y, "y", CUDNN_UID_Y, io, d->nd, d->x_dim, d->y_stride, false));
    REASON_TRY(cudnn_tensor(k, &scale, "scale", CUDNN_UID_SCALE, io, d->nd, d->w_dim, d->w_stride, false));
    if (d->bias) REASON_TRY(cudnn_tensor(k, &bias, "bias", CUDNN_UID_BIAS, io, d->nd, d->w_dim, d->w_stride, false));
    REASON_TRY(cudnn_tensor(k, &eps, "epsilon", CUDNN_UID_EPS, f32, d->nd, ones, ones, true));
    if (d->mean) REASON_TRY(cudnn_tensor(k, &mean, "mean", CUDNN_UID_MEAN, f32, d->nd, d->s_dim, d->s_stride, false));
    REASON_TRY(cudnn_tensor(k, &rstd, "inv variance", CUDNN_UID_RSTD, f32, d->nd, d->s_dim, d->s_stride, false));

    cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;  // training: the statistics are written
    REASON_TRY(cudnn_create(k, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, &op));
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &d->mode);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (mean) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mean);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rstd);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &scale);
    if (bias) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bias);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eps);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    REASON_TRY(cudnn_finalize(op, "norm-forward operation"));
    *op_out = op;

    int n = 0;
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_X, d->x);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_SCALE, d->scale);
    if (d->bias) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_BIAS, d->bias);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_EPS, &d->eps);  // by value: a host pointer
    if (d->mean) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MEAN, d->mean);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RSTD, d->rstd);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_Y, d->y);
    *n_out = n;
    return NULL;
}

// The norm-forward graph of st->built, then its plan.
static const char *cudnn_norm_build(cudnn_norm_state_t *st) {
    cudnnBackendDescriptor_t op;
    int64_t uids[7];
    void *ptrs[7];
    int n = 0;
    REASON_TRY(cudnn_norm_op(&st->built, &st->plan.keep, &op, uids, ptrs, &n));
    return cudnn_pick_plan(&st->plan, &op, 1, uids, ptrs, n, st->built.label);
}

// Kernel 0's supports() for a norm: plan d, or return the answer cached for it (the same description again,
// as for every supports() call on one problem, neither plans nor times anew). NULL when a plan is ready.
static const char *cudnn_norm_prepare(cudnn_norm_state_t *st, const cudnn_norm_t *d) {
    if (st->planned && memcmp(&st->built, d, sizeof *d) == 0) return st->skip[0] ? st->skip : NULL;
    cudnn_plan_release(&st->plan);
    memcpy(&st->built, d, sizeof *d);  // the plan's description: epsilon's by-value pointer points in here
    st->planned = 1;
    st->skip[0] = 0;
    const char *why = cudnn_norm_build(st);
    if (!why) return NULL;
    snprintf(st->skip, sizeof st->skip, "%s", why);
    cudnn_plan_release(&st->plan);
    return st->skip;
}

// Kernel 0's launch(): execute the plan on the default stream; say which engine ran.
static void cudnn_plan_execute(const cudnn_plan_t *p, launch_t *l) {
    if (!p->plan || !p->pack) {
        fprintf(stderr, "cuDNN error: kernel 0 launched without a plan (supports() did not plan this problem)\n");
        exit(EXIT_CUDA);
    }
    CUDNN_CHECK(cudnnBackendExecute(cudnn_handle(), p->plan, p->pack));
    l->block_used = 0;
    snprintf(l->path, sizeof l->path, "%s", p->path);
}
#endif  // HAVE_CUDNN

// ------------------------------------------------------------------------------------------------
// Speed of light: a device-to-device copy of the same byte count (half read, half written), timed the
// same way; the fastest of cudaMemcpyAsync and a 16-byte vectorized copy kernel with streaming (evict-first)
// or plain access. The kernel moves one 16-byte vector a thread, a block per 256 vectors: on an H100 that beat
// a grid-stride loop with four loads a thread (and a one-wave grid) by 5-11% at 25-134 MB and matched
// cudaMemcpyAsync at 537 MB (results/NOTES.md). The plain form is there because LayerNorm's and RMSNorm's
// kernels measured faster with plain access: the copy they are held to gets the same choice.

typedef struct { void *src, *dst; size_t bytes; } copy_ctx_t;

template <bool CS> __global__ void copy16_kernel(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        if (CS) __stcs(dst + i, __ldcs(src + i));  // streaming (evict-first)
        else dst[i] = src[i];                      // plain
    }
}
static void copy_memcpy(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice));
}
template <bool CS> static void copy_kernel(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    size_t n = c->bytes / 16;
    copy16_kernel<CS><<<(unsigned)ceil_div((long)n, 256), 256>>>((const int4 *)c->src, (int4 *)c->dst, n);
}

typedef struct { double gbps, ms; double bytes; const char *method; } sol_t;

static sol_t measure_sol(double bytes, int repeats) {
    copy_ctx_t c;
    c.bytes = (size_t)ceil_div((long)(bytes / 2), 16) * 16;  // half read, half written
    c.src = dev_alloc(c.bytes);
    c.dst = dev_alloc(c.bytes);
    CUDA_CHECK(cudaMemset(c.src, 0x3c, c.bytes));
    void (*fns[3])(void *) = {copy_memcpy, copy_kernel<true>, copy_kernel<false>};
    const char *names[3] = {"cudaMemcpyAsync", "copy kernel", "copy kernel, plain access"};
    sol_t s;
    s.bytes = 2.0 * c.bytes;
    s.ms = 1e30;
    for (int k = 0; k < 3; k++) {
        timing_t t = time_cold(fns[k], &c, repeats);
        if (t.median_ms < s.ms) {
            s.ms = t.median_ms;
            s.method = names[k];
        }
    }
    s.gbps = s.bytes / (s.ms * 1e-3) / 1e9;
    CUDA_CHECK(cudaFree(c.src));
    CUDA_CHECK(cudaFree(c.dst));
    return s;
}

// ------------------------------------------------------------------------------------------------
// Reporting: human lines, CSV rows, JSON Lines.


typedef struct {
    const char *op;
    int kernel;
    const char *kernel_name;
    dtype_t dtype;
    const char *shape;
    int block_size;
    double ms_median, ms_min, bytes, gbps, sol_gbps, sol_pct, max_abs, max_rel;
    double launch_median, launch_min;  // CUDA events around the launch
    const char *clock;                 // "cupti" / "events"; NULL where nothing was timed
    const char *status;  // OK / FAIL / SKIP
    const char *detail;  // skip reason or dispatcher path (JSON only)
} point_t;

// --csv FILE and --json FILE append: checked before any work (exit 2 with the reason) that the file can be
// opened for appending (a file this check creates is removed again: it is written when the first row is) and,
// for the CSV, that an existing file carries this header (a file of an older schema would get rows whose
// columns do not match its header).
static void check_output_file(const program_t *prog, const char *option, const char *path, const char *header) {
    FILE *f = fopen(path, "r");
    int existed = f != NULL;
    char line[1024] = "";
    int empty = !f || !fgets(line, sizeof line, f);
    if (f) fclose(f);
    f = fopen(path, "a");
    if (!f) die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
    fclose(f);
    if (!existed) remove(path);
    line[strcspn(line, "\r\n")] = 0;
    if (header && !empty && strcmp(line, header) != 0)
        die_usage(prog, "%s %s: the file's header is not this program's CSV schema (an older file?); name a new file",
                  option, path);
}

static void write_csv_row(const char *path, const point_t *p) {
    FILE *f = fopen(path, "a+");
    if (!f) { fprintf(stderr, "cannot open --csv file '%s': %s\n", path, strerror(errno)); exit(EXIT_CUDA); }
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0) fprintf(f, "%s\n", CSV_HEADER);
    fprintf(f, "%s,%d,%s,%s,%s,%d,%.6f,%.6f,%.0f,%.2f,%.2f,%.2f,%.3e,%.3e,%s,%s,%s,%s,%s,%.6f,%.6f,%s\n", p->op,
            p->kernel, p->kernel_name, dtype_name(p->dtype), p->shape, p->block_size, p->ms_median, p->ms_min, p->bytes,
            p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel, p->status, g_dev.name, g_dev.sm, g_dev.cuda,
            GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "");
    fclose(f);
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_json_row(const char *path, const point_t *p) {
    FILE *f = fopen(path, "a");
    if (!f) { fprintf(stderr, "cannot open --json file '%s': %s\n", path, strerror(errno)); exit(EXIT_CUDA); }
    fprintf(f, "{\"op\":");
    json_string(f, p->op);
    fprintf(f, ",\"kernel\":%d,\"kernel_name\":", p->kernel);
    json_string(f, p->kernel_name);
    fprintf(f, ",\"dtype\":\"%s\",\"shape\":", dtype_name(p->dtype));
    json_string(f, p->shape);
    fprintf(f, ",\"block_size\":%d,\"time_ms_median\":%.6f,\"time_ms_min\":%.6f,\"bytes\":%.0f,\"gbps\":%.2f,"
               "\"sol_gbps\":%.2f,\"sol_pct\":%.2f,\"max_abs_err\":%.3e,\"max_rel_err\":%.3e,\"status\":\"%s\",\"gpu\":",
            p->block_size, p->ms_median, p->ms_min, p->bytes, p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel,
            p->status);
    json_string(f, g_dev.name);
    fprintf(f, ",\"sm\":\"%s\",\"cuda\":\"%s\",\"git_rev\":\"%s\",\"time_ms_launch_median\":%.6f,"
               "\"time_ms_launch_min\":%.6f,\"clock\":\"%s\",\"detail\":",
            g_dev.sm, g_dev.cuda, GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "");
    json_string(f, p->detail ? p->detail : "");
    fprintf(f, "}\n");
    fclose(f);
}

static void emit_point(const options_t *o, const point_t *p) {
    if (o->csv_path) write_csv_row(o->csv_path, p);
    if (o->json_path) write_json_row(o->json_path, p);
}

// ------------------------------------------------------------------------------------------------
// The driver: parse, open the device, set up, measure the copy, run the kernel(s), report.

typedef struct { const kernel_t *k; const problem_t *p; launch_t l; } kernel_work_t;
static void kernel_work(void *ctx) {
    kernel_work_t *w = (kernel_work_t *)ctx;
    w->k->launch(w->p, &w->l);
}

typedef struct {
    int number;
    const char *name;
    int ran;              // at least one OK point
    int failed;
    int block;            // best block
    double ms, gbps, pct;
    char note[128];       // skip reason or path
} kernel_summary_t;

static const int k_sweep[] = {32, 64, 128, 256, 512, 1024};

static kernel_summary_t run_kernel(const program_t *prog, const options_t *o, problem_t *p, const kernel_t *k,
                                   const sol_t *sol) {
    kernel_summary_t s;
    memset(&s, 0, sizeof s);
    s.number = k->number;
    s.name = k->name;
    printf("%s | kernel %d \"%s\" | %s | %s | %.1f MB counted\n", prog->binary, k->number, k->name, dtype_name(p->dtype),
           p->shape_desc, p->bytes / 1e6);
    point_t pt;
    memset(&pt, 0, sizeof pt);
    pt.op = prog->op;
    pt.kernel = k->number;
    pt.kernel_name = k->name;
    pt.dtype = p->dtype;
    pt.shape = p->shape;
    pt.bytes = p->bytes;
    pt.sol_gbps = sol ? sol->gbps : 0;

    if (!(k->dtypes & DT_BIT(p->dtype))) {
        const char *why = reasonf("kernel %d has no %s version", k->number, dtype_name(p->dtype));
        printf("skipped: %s\n", why);
        snprintf(s.note, sizeof s.note, "%s", why);
        pt.status = "SKIP"; pt.detail = why;
        emit_point(o, &pt);
        return s;
    }
    char skip_note[128] = "";  // the first block size's skip reason (the note only if no block size ran)
    int blocks[8], nb = 0;
    if (o->block_size) blocks[nb++] = o->block_size;
    else if (k->own_block) blocks[nb++] = 0;
    else for (int i = 0; i < 6; i++) blocks[nb++] = k_sweep[i];

    for (int bi = 0; bi < nb; bi++) {
        int bs = blocks[bi];
        const char *why = k->supports ? k->supports(p, bs) : NULL;
        if (why) {
            if (bs) printf("block_size %4d | skipped: %s\n", bs, why);
            else printf("skipped: %s\n", why);
            if (!skip_note[0]) snprintf(skip_note, sizeof skip_note, "%s", why);
            pt.block_size = bs; pt.status = "SKIP"; pt.detail = why;
            pt.ms_median = pt.ms_min = pt.gbps = pt.sol_pct = pt.max_abs = pt.max_rel = 0;
            pt.launch_median = pt.launch_min = 0;
            pt.clock = NULL;
            emit_point(o, &pt);
            continue;
        }
        kernel_work_t w;
        w.k = k; w.p = p;
        memset(&w.l, 0, sizeof w.l);
        w.l.block_size = bs;
        poison_outputs(p);
        if (prog->reset) prog->reset(p);
        k->launch(p, &w.l);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        check_t c = validate_outputs(p, 1);
        int used = w.l.block_used ? w.l.block_used : bs;
        char bsbuf[32];
        if (bs) snprintf(bsbuf, sizeof bsbuf, "block_size %4d", used);
        else snprintf(bsbuf, sizeof bsbuf, "block_size %4d (own)", used);
        int ok = c.n_bad == 0;
        pt.block_size = used;
        pt.max_abs = c.max_abs; pt.max_rel = c.max_rel;
        pt.status = ok ? "OK" : "FAIL";
        pt.detail = w.l.path;
        if (w.l.path[0]) snprintf(s.note, sizeof s.note, "%s", w.l.path);
        pt.ms_median = pt.ms_min = pt.gbps = pt.sol_pct = pt.launch_median = pt.launch_min = 0;
        pt.clock = NULL;
        if (!ok) s.failed = 1;
        if (!o->check_only && ok) {
            timing_t t = time_cold(kernel_work, &w, o->repeats);
            pt.ms_median = t.median_ms;
            pt.ms_min = t.min_ms;
            pt.launch_median = t.launch_median_ms;
            pt.launch_min = t.launch_min_ms;
            pt.clock = t.clock;
            pt.gbps = p->bytes / (t.median_ms * 1e-3) / 1e9;
            pt.sol_pct = sol && sol->gbps > 0 ? 100.0 * pt.gbps / sol->gbps : 0;
            char launch[48];
            if (strcmp(t.clock, "cupti") == 0) snprintf(launch, sizeof launch, "with launch %.4f ms", t.launch_median_ms);
            else snprintf(launch, sizeof launch, "clock: events");
            printf("%s | %.4f ms (min %.4f) | %s | %7.1f GB/s | %5.1f%% SOL | max err abs %.1e rel %.1e | OK%s%s\n",
                   bsbuf, t.median_ms, t.min_ms, launch, pt.gbps, pt.sol_pct, c.max_abs, c.max_rel,
                   w.l.path[0] ? " | path " : "", w.l.path);
            if (!s.ran || pt.gbps > s.gbps) {
                s.ran = 1; s.block = used; s.ms = t.median_ms; s.gbps = pt.gbps; s.pct = pt.sol_pct;
            }
        } else {
            printf("%s | max err abs %.1e rel %.1e | %s%s%s\n", bsbuf, c.max_abs, c.max_rel, ok ? "OK" : "FAIL",
                   w.l.path[0] ? " | path " : "", w.l.path);
            if (ok) s.ran = 1;
        }
        emit_point(o, &pt);
    }
    if (!s.ran && !s.note[0]) snprintf(s.note, sizeof s.note, "%s", skip_note);  // the ranking's "skipped: why"
    if (!o->check_only && s.ran)
        printf("best: block_size %d | %.1f GB/s | %.1f%% SOL\n", s.block, s.gbps, s.pct);
    return s;
}

static int cmp_summary(const void *a, const void *b) {
    const kernel_summary_t *x = (const kernel_summary_t *)a, *y = (const kernel_summary_t *)b;
    int rx = x->ran && !x->failed, ry = y->ran && !y->failed;
    if (rx != ry) return ry - rx;
    if (x->gbps != y->gbps) return x->gbps < y->gbps ? 1 : -1;
    return x->number - y->number;
}

static int bench_main(int argc, char **argv, const program_t *prog) {
    options_t o;
    parse_args(argc, argv, prog, &o);
    g_check_only = o.check_only;
    if (o.help) { usage(prog, stdout); return EXIT_OK; }
    if (o.list) { print_list(prog); return EXIT_OK; }
    open_device(prog, o.device);

    problem_t *p = prog->setup(&o);
    prog->reference(p);
    sol_t sol;
    int have_sol = !o.check_only;
    if (have_sol) {
        sol = measure_sol(p->bytes, o.repeats);
        printf("speed of light: device copy %.1f GB/s (measured now, %.1f MB moved, cold L2, %s)\n", sol.gbps,
               sol.bytes / 1e6, sol.method);
        if (g_clock_note)
            printf("clock: CUDA events around each launch (%s)\n", g_clock_note);
        else
            printf("clock: the GPU's kernel timestamps (CUPTI), first kernel start to last kernel end; \"with launch\": "
                   "CUDA events around the launch\n");
    }

    // the kernels to run, in registry order: every one (all), those named (K1,K2,...) or one
    const kernel_t **run = (const kernel_t **)malloc(prog->n_kernels * sizeof(const kernel_t *));
    int n_run = 0;
    for (int i = 0; i < prog->n_kernels; i++) {
        int num = prog->kernels[i].number, pick = o.kernel == KERNEL_ALL;
        if (o.kernel == KERNEL_LIST)
            for (int j = 0; j < o.n_picked; j++) pick |= o.picked[j] == num;
        else if (o.kernel != KERNEL_ALL)
            pick = num == (o.kernel == KERNEL_DEFAULT ? prog->default_kernel : o.kernel);
        if (pick) run[n_run++] = &prog->kernels[i];
    }
    kernel_summary_t *sum = (kernel_summary_t *)calloc(prog->n_kernels, sizeof(kernel_summary_t));
    int n_sum = 0, any_fail = 0;
    for (int i = 0; i < n_run; i++) {
        sum[n_sum] = run_kernel(prog, &o, p, run[i], have_sol ? &sol : NULL);
        any_fail |= sum[n_sum].failed;
        n_sum++;
    }
    if (o.kernel == KERNEL_ALL || o.kernel == KERNEL_LIST) {
        qsort(sum, n_sum, sizeof sum[0], cmp_summary);
        printf("\nranking (%s, %s, %s):\n", prog->op, dtype_name(p->dtype), p->shape_desc);
        printf("rank | kernel | %-18s | block | time ms | GB/s    | %%SOL  | note\n", "name");
        int rank = 0;
        for (int i = 0; i < n_sum; i++) {
            kernel_summary_t *s = &sum[i];
            if (s->failed)
                printf("   - | %6d | %-18s |     - |       - |       - |     - | FAIL\n", s->number, s->name);
            else if (!s->ran)
                printf("   - | %6d | %-18s |     - |       - |       - |     - | skipped: %s\n", s->number, s->name, s->note);
            else if (o.check_only)
                printf("   - | %6d | %-18s |     - |       - |       - |     - | OK%s%s\n", s->number, s->name,
                       s->note[0] ? " " : "", s->note);
            else
                printf("%4d | %6d | %-18s | %5d | %7.4f | %7.1f | %5.1f | %s\n", ++rank, s->number, s->name, s->block,
                       s->ms, s->gbps, s->pct, s->note);
        }
    }
    free(sum);
    free(run);
    prog->teardown(p);
    if (g_flush) CUDA_CHECK(cudaFree(g_flush));
    return any_fail ? EXIT_VALIDATION : EXIT_OK;
}
