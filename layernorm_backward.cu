/*
LayerNorm backward over the last dimension (C) of x[rows, C], from the forward pass's saved statistics:
  x̂ = (x - mean) * rstd,  g = dy * weight,
  dx = rstd * (g - mean_C(g) - x̂ * mean_C(g * x̂))      (--accumulate: added into dx instead of written)
  dweight = Σ_rows dy * x̂,  dbias = Σ_rows dy           (sums over every row, accumulated in fp32)
Inputs x, dy, weight (dtype), mean and rstd (fp32, [rows]); outputs dx (dtype), dweight and dbias (dtype).

Kernels (`./layernorm_backward --list` prints the same registry; the CPU tests check that they agree):
   0  cudnn               cuDNN 9 graph API norm-backward (LayerNorm), fastest of the heuristics' engine configs
   1  thread_per_row      one thread per row, two loops over the row; dweight and dbias by global atomics
   2  block_per_row       one block per row, shared-memory reductions; still an atomic per element of dw, db
   3  warp_smem_partial a warp per row; the block's partial dw, db in shared memory, one atomic a column a block
   4  partials_two_pass   a block per group of rows writes its partials to a scratch; a second kernel sums them
   5  last_block_reduce   as 4 in one launch: the last block to finish sums the partials; any dtype
   6  row_regs_packs      16-byte packs, x and dy read once into registers, dw and db summed in registers
   7  resident_grid       6 on a grid of resident blocks, R rows at a time: few partials, summed by a kernel chained by PDL
   8  column_tiles        row scalars by a warp or block a row, then a column a thread over groups of rows; partials summed in order
   9  dispatch            a rule of regimes picks the rung, the rung's plan its block size; says which ran
Deterministic (dweight and dbias identical bit for bit from run to run; each validation launches them twice and
compares the bits): 4-8 and 9; 1-3 add by atomics.

Run:
  make && ./layernorm_backward 7                  validate kernel 7, sweep block sizes, time each
  ./layernorm_backward all --dtype bf16           every kernel, ranked
  ./layernorm_backward 9 -N 16384 -C 4096 --accumulate --check
  ./layernorm_backward --list                     the registry (no GPU needed)
Build it alone (make does this for the GPU it finds; -arch: your GPU's, sm_90 for programmatic dependent launch):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o layernorm_backward layernorm_backward.cu -lcurand -lgomp -ldl
  CUPTI (the GPU's clock): add -DHAVE_CUPTI -lcupti; cuDNN (kernel 0): add -DHAVE_CUDNN -lcudnn (-I/-L where needed).
Kernels 1-4 are the fp32 teaching ladder; 5-9 run fp32, fp16 and bf16 with fp32 arithmetic.
*/
#include "common.h"

// ------------------------------------------------------------------------------------------------
// The problem
typedef struct {
    problem_t h;  // common header: dtype, shape, bytes, outputs
    long N, C;
    int accumulate;         // --accumulate: dx += the gradient
    void *x, *w, *dy;       // inputs, dtype
    float *mean, *rstd;     // inputs, the forward's saved statistics
    void *dx, *dw, *db;     // outputs, dtype
    void *dx0;              // --accumulate: dx's initial values (reset copies them back)
    float *part;            // partials [parts, 2, C] (dw then db), fp32
    unsigned *counter;      // rung 5's finished blocks (0 between launches)
    float *means;           // rung 8's row scalars [N, 2]: mean_C(g), mean_C(g * x̂), fp32
    long parts;             // rows of `part`
    double *hx, *hw, *hdy, *hmean, *hrstd, *hdx0;  // host inputs, exactly the device values
} lnb_problem_t;
static int g_accumulate = 0;
static double g_eps = 1e-5;  // --eps: the forward's, in the saved rstd
#define LNB_DISPATCHER 9

// The arguments every kernel from 4 on takes, by value.
typedef struct {
    const void *x, *w, *dy;
    const float *mean, *rstd;
    void *dx;
    float *part;
    unsigned *counter;
    void *dw, *db;
    long N, C;
    int accumulate;
    int rows_a_block;  // rows of one block (a contiguous range); 0: the grid walks the rows (resident grid)
    float *means;      // rung 8's row scalars
} lnb_args_t;
#define LNB_ARGS(T)                                                                                                   \
    const T *__restrict__ x = (const T *)a.x, *__restrict__ w = (const T *)a.w, *__restrict__ dy = (const T *)a.dy;  \
    const float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;                                             \
    T *__restrict__ dx = (T *)a.dx;                                                                                   \
    const long C = a.C
static lnb_args_t lnb_args(const lnb_problem_t *p, int rows_a_block) {
    return {p->x, p->w, p->dy, p->mean, p->rstd, p->dx, p->part, p->counter, p->dw, p->db, p->N, p->C, p->accumulate,
            rows_a_block, p->means};
}
static void lnb_launch(const void *fn, const lnb_problem_t *p, long grid, int bs, int rows_a_block) {
    lnb_args_t a = lnb_args(p, rows_a_block);
    void *args[] = {&a};
    launch_kernel(fn, grid, bs, 0, args, 1);
}
// The block's rows: [first, last) of a contiguous range (rows_a_block > 0), else every gridDim.x-th from blockIdx.x.
__device__ __forceinline__ void block_rows(const lnb_args_t &a, long *first, long *last, long *step) {
    if (a.rows_a_block > 0) {
        *first = (long)blockIdx.x * a.rows_a_block;
        *last = min(a.N, *first + a.rows_a_block);
        *step = 1;
    } else {
        *first = blockIdx.x, *last = a.N, *step = gridDim.x;
    }
}
// dx from its value: written, or added into (--accumulate).
template <typename T> __device__ __forceinline__ T dx_out(const T *dx, long i, float v, int accumulate) {
    return from_float<T>(accumulate ? to_float(dx[i]) + v : v);
}
// The grid of rungs 4-6 (harness/partials.h): blocks of at most 32 rows, as many as the scratch holds.
static int rows_a_block(const lnb_problem_t *p) { return partials_rows_a_block(p->N, p->parts); }
static long row_groups(const lnb_problem_t *p) { return ceil_div(p->N, rows_a_block(p)); }
// 16-byte packs: C a multiple of 16 bytes' elements (every row then starts aligned).
static int vec16(const lnb_problem_t *p) { return 16 / (int)dtype_size(p->h.dtype); }
static int full_packs(const lnb_problem_t *p) { return p->C % vec16(p) == 0; }

// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, from the dtype-rounded inputs and the fp32 statistics. abs_w, abs_b: the sums
// of |dy * x̂| and |dy| a column, which the tolerance of a sum over rows scales with (sum_atol, harness/base.h).
static void layernorm_backward_cpu(double *dx, double *dw, double *db, double *abs_w, double *abs_b, const double *x,
                                   const double *w, const double *dy, const double *mean, const double *rstd,
                                   const double *dx0, long N, long C) {
OMP_PARALLEL_FOR
    for (long r = 0; r < N; r++) {
        const double *xr = x + r * C, *dyr = dy + r * C;
        double a = 0, b = 0;
        for (long c = 0; c < C; c++) {
            double xh = (xr[c] - mean[r]) * rstd[r], g = dyr[c] * w[c];
            a += g, b += g * xh;
        }
        a /= C, b /= C;
        for (long c = 0; c < C; c++) {
            double xh = (xr[c] - mean[r]) * rstd[r], g = dyr[c] * w[c];
            dx[r * C + c] = (dx0 ? dx0[r * C + c] : 0.0) + rstd[r] * (g - a - xh * b);
        }
    }
    // the column sums: each thread its columns, the rows in order (the same sums whatever the thread count)
OMP_PARALLEL_FOR
    for (long c = 0; c < C; c++) {
        double sw = 0, sb = 0, aw = 0, ab = 0;
        for (long r = 0; r < N; r++) {
            double t = dy[r * C + c] * (x[r * C + c] - mean[r]) * rstd[r];
            sw += t, sb += dy[r * C + c], aw += fabs(t), ab += fabs(dy[r * C + c]);
        }
        dw[c] = sw, db[c] = sb, abs_w[c] = aw, abs_b[c] = ab;
    }
}

// The forward's saved statistics of x, as layernorm_forward writes them: mean and rstd = 1 / sqrt(var + eps) in double,
// rounded to fp32 (fm, fr: the device's inputs), and those fp32 values as doubles (m, r: the reference's).
static void layernorm_stats_f32(float *fm, float *fr, double *m, double *r, const double *x, long N, long C, double eps) {
OMP_PARALLEL_FOR
    for (long i = 0; i < N; i++) {
        double s = 0, v = 0;
        for (long c = 0; c < C; c++) s += x[i * C + c];
        s /= C;
        for (long c = 0; c < C; c++) v += (x[i * C + c] - s) * (x[i * C + c] - s);
        fm[i] = (float)s, fr[i] = (float)(1.0 / sqrt(v / C + eps));
        m[i] = fm[i], r[i] = fr[i];
    }
}

// ------------------------------------------------------------------------------------------------
// Kernel 0, cudnn: cuDNN's graph norm-backward node (LayerNorm), the fastest engine config kept.
// Improves: the reference the ladder is measured against. Wrong: a plan costs seconds a process; no --pdl.
#ifdef HAVE_CUDNN
static cudnn_norm_state_t g_cudnn;
// The problem as cuDNN's graph sees it (no GPU needed: the CPU tests finalize its operation).
static void cudnn_describe(const lnb_problem_t *p, cudnn_norm_t *d) {
    memset(d, 0, sizeof *d);  // compared byte for byte by the plan cache
    d->mode = CUDNN_LAYER_NORM;
    d->dtype = p->h.dtype;
    cudnn_norm_rows(d, p->N, p->C);
    d->backward = 1;
    d->x = p->x;
    d->scale = p->w;
    d->dy = p->dy;
    d->mean = p->mean;
    d->rstd = p->rstd;
    d->dx = p->dx;
    d->dscale = p->dw;
    d->dbias = p->db;
    snprintf(d->label, sizeof d->label, "LayerNorm backward %s %s", dtype_name(p->h.dtype), p->h.shape);
}
static const char *supports_cudnn(const void *pp, int bs) {
    REASON_TRY(cudnn_refuse_block_size(bs));
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    if (p->accumulate) return "--accumulate: cuDNN's norm backward writes dx, it does not add into it";
    cudnn_norm_t d;
    cudnn_describe(p, &d);
    return cudnn_norm_prepare(&g_cudnn, &d);
}
static void launch_cudnn(const void *pp, launch_t *l) {
    (void)pp;  // the plan holds the problem's pointers
    cudnn_plan_execute(&g_cudnn.plan, l);
}
#endif

// ------------------------------------------------------------------------------------------------
// Kernel 1, thread_per_row: one thread per row: a loop for the two row means, a loop for dx; every element's dw and
// db terms added by global atomics (zeroed first). Improves: the plainest correct kernel, the ladder's start.
// Wrong: neighbouring threads read addresses C floats apart, N x C x 2 atomics contend N ways on each column, and
// the sums' order changes from run to run.
__global__ void lnb_thread_per_row_kernel(const float *x, const float *w, const float *dy, const float *mean,
                                          const float *rstd, float *dx, float *dw, float *db, long N, long C, int acc) {
    long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *xr = x + row * C, *dyr = dy + row * C;
    const float m = mean[row], s = rstd[row];
    float a = 0.f, b = 0.f;
    for (long c = 0; c < C; c++) {
        float xh = (xr[c] - m) * s, g = dyr[c] * w[c];
        a += g, b += g * xh;
    }
    a /= C, b /= C;
    float *dxr = dx + row * C;
    for (long c = 0; c < C; c++) {
        float xh = (xr[c] - m) * s, g = dyr[c] * w[c], v = s * (g - a - xh * b);
        dxr[c] = acc ? dxr[c] + v : v;
        atomicAdd(dw + c, dyr[c] * xh);
        atomicAdd(db + c, dyr[c]);
    }
}
static void zero_dw_db(const lnb_problem_t *p) {
    CUDA_CHECK(cudaMemsetAsync(p->dw, 0, p->C * dtype_size(p->h.dtype), cudaStreamPerThread));
    CUDA_CHECK(cudaMemsetAsync(p->db, 0, p->C * dtype_size(p->h.dtype), cudaStreamPerThread));
}
static void launch_thread_per_row(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    zero_dw_db(p);
    lnb_thread_per_row_kernel<<<(unsigned)ceil_div(p->N, l->block_size), l->block_size>>>(
        (const float *)p->x, (const float *)p->w, (const float *)p->dy, p->mean, p->rstd, (float *)p->dx,
        (float *)p->dw, (float *)p->db, p->N, p->C, p->accumulate);
}

// ------------------------------------------------------------------------------------------------
// Kernel 2, block_per_row: one block per row; the row's two sums reduced by warp shuffles, then across warps in
// shared memory (block_sum). Improves: coalesced reads, a block of threads a row. Wrong: each element still adds its
// dw and db terms by a global atomic (N-way contention on every column), and x, dy are read twice.
__global__ void lnb_block_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                         const float *__restrict__ dy, const float *__restrict__ mean,
                                         const float *__restrict__ rstd, float *__restrict__ dx, float *dw, float *db,
                                         long C, int acc) {
    __shared__ float scratch[33];
    const long row = blockIdx.x;
    const float *xr = x + row * C, *dyr = dy + row * C;
    const float m = mean[row], s = rstd[row];
    float a = 0.f, b = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) {
        float xh = (xr[c] - m) * s, g = dyr[c] * w[c];
        a += g, b += g * xh;
    }
    a = block_sum(a, scratch) / C;
    b = block_sum(b, scratch) / C;
    float *dxr = dx + row * C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) {
        float xh = (xr[c] - m) * s, g = dyr[c] * w[c], v = s * (g - a - xh * b);
        dxr[c] = acc ? dxr[c] + v : v;
        atomicAdd(dw + c, dyr[c] * xh);
        atomicAdd(db + c, dyr[c]);
    }
}
static void launch_block_per_row(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    zero_dw_db(p);
    lnb_block_per_row_kernel<<<(unsigned)p->N, l->block_size>>>((const float *)p->x, (const float *)p->w,
                                                                 (const float *)p->dy, p->mean, p->rstd,
                                                                 (float *)p->dx, (float *)p->dw, (float *)p->db,
                                                                 p->C, p->accumulate);
}

// ------------------------------------------------------------------------------------------------
// Kernel 3, warp_smem_partial: a warp per row (shuffle reductions, no block barrier a row); the block's warps add
// their rows' dw and db terms into a partial in shared memory (shared atomics), which the block then adds to dw and
// db: one global atomic a column a block. Improves: global atomics fall from N x C to blocks x C. Wrong: the
// partial must fit shared memory (C <= 29 K on an H200), shared atomics still serialize the warps of a block, and
// the order of the atomics still changes the sums' last bits from run to run.
__global__ void lnb_warp_smem_partial_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                               const float *__restrict__ dy, const float *__restrict__ mean,
                                               const float *__restrict__ rstd, float *__restrict__ dx, float *dw,
                                               float *db, long N, long C, int acc) {
    extern __shared__ float part[];  // [2][C]: dw, db
    for (long c = threadIdx.x; c < 2 * C; c += blockDim.x) part[c] = 0.f;
    __syncthreads();
    const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const long row = blockIdx.x * (long)warps + threadIdx.x / 32;
    if (row < N) {
        const float *xr = x + row * C, *dyr = dy + row * C;
        const float m = mean[row], s = rstd[row];
        float a = 0.f, b = 0.f;
        for (long c = lane; c < C; c += 32) {
            float xh = (xr[c] - m) * s, g = dyr[c] * w[c];
            a += g, b += g * xh;
        }
        a = warp_sum(a) / C;
        b = warp_sum(b) / C;
        float *dxr = dx + row * C;
        for (long c = lane; c < C; c += 32) {
            float xh = (xr[c] - m) * s, g = dyr[c] * w[c], v = s * (g - a - xh * b);
            dxr[c] = acc ? dxr[c] + v : v;
            atomicAdd(part + c, dyr[c] * xh);
            atomicAdd(part + C + c, dyr[c]);
        }
    }
    __syncthreads();
    for (long c = threadIdx.x; c < C; c += blockDim.x) {
        atomicAdd(dw + c, part[c]);
        atomicAdd(db + c, part[C + c]);
    }
}
static size_t warp_shared_bytes(long C) { return 2 * C * sizeof(float); }
static void launch_warp_smem_partial(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const size_t smem = warp_shared_bytes(p->C);
    CUDA_CHECK(cudaFuncSetAttribute(lnb_warp_smem_partial_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)smem));
    zero_dw_db(p);
    lnb_warp_smem_partial_kernel<<<(unsigned)ceil_div(p->N, l->block_size / 32), l->block_size, smem>>>(
        (const float *)p->x, (const float *)p->w, (const float *)p->dy, p->mean, p->rstd, (float *)p->dx,
        (float *)p->dw, (float *)p->db, p->N, p->C, p->accumulate);
}
static const char *supports_warp_smem_partial(const void *pp, int) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    if (warp_shared_bytes(p->C) > g_dev.prop.sharedMemPerBlockOptin)
        return reasonf("the partial (2 x C floats, %zu bytes) exceeds a block's shared memory", warp_shared_bytes(p->C));
    return NULL;
}

// The partials' sum (rungs 4, 6-8): dw and db from the scratch's rows, in a fixed order (harness/partials.h).
static void sum_partials(const lnb_problem_t *p, long parts, int chained) {
    launch_sum_partials(p->h.dtype, p->part, parts, 2 * p->C, p->C, p->dw, p->db, chained);
}

// ------------------------------------------------------------------------------------------------
// Kernel 4, partials_two_pass: a block takes up to 32 rows in turn (block_sum for each row's two means) and adds
// their dw and db terms into its own row of a scratch [blocks, 2, C], each thread its own columns (no atomics); a
// second kernel sums the scratch's rows in a fixed order. Improves: no atomics, and the same bits every run
// (deterministic). Wrong: the partial row is read and written again through L2 for every row, x and dy are read
// twice, 4-byte loads, two launches.
// A block's rows into its partial (rungs 4 and 5).
template <typename T> __device__ __forceinline__ void rows_into_partial(const lnb_args_t &a) {
    LNB_ARGS(T);
    __shared__ float scratch[33];
    float *pw = a.part + blockIdx.x * 2 * C, *pb = pw + C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) pw[c] = 0.f, pb[c] = 0.f;
    long first, last, step;
    block_rows(a, &first, &last, &step);
    for (long row = first; row < last; row += step) {
        const T *xr = x + row * C, *dyr = dy + row * C;
        const float m = mean[row], s = rstd[row];
        float sa = 0.f, sb = 0.f;
        for (long c = threadIdx.x; c < C; c += blockDim.x) {
            float xh = (to_float(xr[c]) - m) * s, g = to_float(dyr[c]) * to_float(w[c]);
            sa += g, sb += g * xh;
        }
        const float ma = block_sum(sa, scratch) / C, mb = block_sum(sb, scratch) / C;
        T *dxr = dx + row * C;
        for (long c = threadIdx.x; c < C; c += blockDim.x) {
            float d = to_float(dyr[c]), xh = (to_float(xr[c]) - m) * s, g = d * to_float(w[c]);
            dxr[c] = dx_out(dxr, c, s * (g - ma - xh * mb), a.accumulate);
            pw[c] += d * xh, pb[c] += d;
        }
    }
}
template <typename T> __global__ void lnb_partials_kernel(const lnb_args_t a) { rows_into_partial<T>(a); }
static void launch_partials_two_pass(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    lnb_launch((const void *)lnb_partials_kernel<float>, p, row_groups(p), l->block_size, rows_a_block(p));
    sum_partials(p, row_groups(p), 0);
}

// ------------------------------------------------------------------------------------------------
// Kernel 5, last_block_reduce: 4 in one launch. Each block writes its partial, fences, and counts itself done; the
// last to finish sums every partial (in a fixed order) into dw and db, and resets the count. Improves: one launch
// instead of two (decode-sized N: a few rows, a few partials); any dtype. Wrong: one block reads every partial, a
// serial tail that grows with blocks x C; the rest of 4's faults.
template <typename T> __global__ void lnb_last_block_reduce_kernel(const lnb_args_t a) {
    __shared__ bool is_last;
    rows_into_partial<T>(a);
    __threadfence();  // this block's partial is visible to every block before it counts itself done
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    T *dw = (T *)a.dw, *db = (T *)a.db;
    const long C = a.C;
    for (long c = threadIdx.x; c < 2 * C; c += blockDim.x) {
        float t = 0.f;
        for (long g = 0; g < gridDim.x; g++) t += __ldcg(a.part + g * 2 * C + c);  // L2: other blocks' writes
        if (c < C) dw[c] = from_float<T>(t);
        else db[c - C] = from_float<T>(t);
    }
    if (threadIdx.x == 0) *a.counter = 0;  // ready for the next launch
}
// Its plan: about eight columns a thread, 128 to 1024 threads.
static int plan_last_block(const void *pp) { return pow2_at_least(((const lnb_problem_t *)pp)->C / 8.0, 128, 1024); }
static void launch_last_block_reduce(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const void *fn = p->h.dtype == DT_FP16   ? (const void *)lnb_last_block_reduce_kernel<__half>
                     : p->h.dtype == DT_BF16 ? (const void *)lnb_last_block_reduce_kernel<__nv_bfloat16>
                                             : (const void *)lnb_last_block_reduce_kernel<float>;
    lnb_launch(fn, p, row_groups(p), l->block_size, rows_a_block(p));
}

// ------------------------------------------------------------------------------------------------
// Kernel 6, row_regs_packs: a block a row (each thread P 16-byte packs of it, P of 1 or 2 by the plan), x and dy
// loaded once into registers; each row's two means from registers (one block_sums round of a pair), dx from
// them; each thread sums its columns' dw and db terms in registers over the block's rows and writes its partial
// once. Improves: x and dy cross DRAM once, 16-byte accesses, 16-bit types, no partial traffic a row. Wrong: a block
// a group of 32 rows: N / 32 partials to write and sum, and one row at a time in flight a block.
// (The kernel takes R rows at a time, the rows in flight of rung 7; rung 6 runs it at R = 1.)
template <typename T, int P, int R>
__global__ void __launch_bounds__(R > 2 ? 512 : 1024) lnb_row_regs_kernel(const lnb_args_t a) {
    LNB_ARGS(T);
    constexpr int VEC = 16 / sizeof(T);
    typedef Pack<T, VEC> V;
    __shared__ float2 red[2][32][R];
    pdl_wait();
    const long nvec = C / VEC;
    float accw[P][VEC], accb[P][VEC];
#pragma unroll
    for (int k = 0; k < P; k++)
#pragma unroll
        for (int j = 0; j < VEC; j++) accw[k][j] = accb[k][j] = 0.f;
    // groups of R consecutive rows: a contiguous range of them (rows_a_block > 0), else every grid-th group
    long first, last, step;
    block_rows(a, &first, &last, &step);
    if (a.rows_a_block <= 0) first *= R, step *= R;
    int parity = 0;
    for (long row0 = first; row0 < last; row0 += step, parity ^= 1) {
        V xv[R][P], dv[R][P];
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int k = 0; k < P; k++) {
                const long i = threadIdx.x + (long)k * blockDim.x, row = row0 + r;
                if (i < nvec && row < last) {
                    xv[r][k] = load_pack<T, VEC>(x + row * C + i * VEC);
                    dv[r][k] = load_pack<T, VEC>(dy + row * C + i * VEC);
                }
            }
        float m[R], s[R];
        float2 ab[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long row = row0 + r < last ? row0 + r : row0;
            m[r] = mean[row], s[r] = rstd[row], ab[r] = make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int k = 0; k < P; k++) {
            const long i = threadIdx.x + (long)k * blockDim.x;
            if (i >= nvec) continue;
            const V wv = load_pack<T, VEC>(w + i * VEC);  // from L1: the same packs every row
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (row0 + r >= last) continue;
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float xh = (pack_elem(xv[r][k], j) - m[r]) * s[r], g = pack_elem(dv[r][k], j) * pack_elem(wv, j);
                    ab[r].x += g, ab[r].y += g * xh;
                }
            }
        }
        block_sums<float2, R>(ab, red[parity]);  // two scratch arrays in turn: the next group's writes wait for no one
#pragma unroll
        for (int k = 0; k < P; k++) {
            const long i = threadIdx.x + (long)k * blockDim.x;
            if (i >= nvec) continue;
            const V wv = load_pack<T, VEC>(w + i * VEC);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const long row = row0 + r;
                if (row >= last) continue;
                const float ma = ab[r].x / C, mb = ab[r].y / C;
                T *dxp = dx + row * C + i * VEC;
                V o, old;
                if (a.accumulate) old = load_pack<T, VEC>(dxp);
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float d = pack_elem(dv[r][k], j), xh = (pack_elem(xv[r][k], j) - m[r]) * s[r];
                    float v = s[r] * (d * pack_elem(wv, j) - ma - xh * mb);
                    o.v[j] = from_float<T>(a.accumulate ? to_float(old.v[j]) + v : v);
                    accw[k][j] += d * xh, accb[k][j] += d;
                }
                store_pack<T, VEC>(dxp, o);
            }
        }
    }
    pdl_trigger();
    float *pw = a.part + blockIdx.x * 2 * C, *pb = pw + C;
#pragma unroll
    for (int k = 0; k < P; k++) {
        const long i = threadIdx.x + (long)k * blockDim.x;
        if (i >= nvec) continue;
#pragma unroll
        for (int j = 0; j < VEC; j += 4) {
            *reinterpret_cast<float4 *>(pw + i * VEC + j) = make_float4(accw[k][j], accw[k][j + 1], accw[k][j + 2], accw[k][j + 3]);
            *reinterpret_cast<float4 *>(pb + i * VEC + j) = make_float4(accb[k][j], accb[k][j + 1], accb[k][j + 2], accb[k][j + 3]);
        }
    }
}
// The instances: P packs a thread x R rows at a time (P = 2 at R = 1 alone: registers).
template <typename T> static const void *row_regs_fn_t(int P, int R) {
    return P == 2 ? (const void *)lnb_row_regs_kernel<T, 2, 1>
           : R == 4 ? (const void *)lnb_row_regs_kernel<T, 1, 4>
           : R == 2 ? (const void *)lnb_row_regs_kernel<T, 1, 2> : (const void *)lnb_row_regs_kernel<T, 1, 1>;
}
static const void *row_regs_fn(dtype_t d, int P, int R) {
    return d == DT_FP16 ? row_regs_fn_t<__half>(P, R) : d == DT_BF16 ? row_regs_fn_t<__nv_bfloat16>(P, R)
                                                      : row_regs_fn_t<float>(P, R);
}
// Packs a thread: the fewer of 1, 2 that covers the row's packs with bs threads (0: more than 2 are needed).
static int row_regs_packs(const lnb_problem_t *p, int bs) { return regs_packs_a_thread(p->C / vec16(p), bs); }
static const char *supports_row_regs(const lnb_problem_t *p, int bs) { return regs_row_refusal(p->h.dtype, p->C, bs); }
static const char *supports_row_regs_packs(const void *pp, int bs) {
    return supports_row_regs((const lnb_problem_t *)pp, bs ? bs : 1024);
}
// The plan of 6: a pack a thread (two beyond 1024 packs), at least 128 threads.
static int row_regs_bs(const lnb_problem_t *p) { return regs_block_size(p->C / vec16(p)); }
static int plan_row_regs_packs(const void *pp) { return row_regs_bs((const lnb_problem_t *)pp); }
static void launch_row_regs_packs(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : row_regs_bs(p);
    lnb_launch(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), 1), p, row_groups(p), bs, rows_a_block(p));
    sum_partials(p, row_groups(p), 0);
    l->block_used = bs;
}

// ------------------------------------------------------------------------------------------------
// Kernel 7, resident_grid: 6's kernel on a grid of resident blocks that walk the rows R at a time (R = 4 for rows of up
// to 512 packs, 2 to 1024, 1 at two packs a thread: registers; its plan runs a pack a thread to 256 packs, two beyond),
// loading the R rows before the sums, so that few blocks keep enough bytes in flight; each block takes at least 8
// groups of rows (an SM's worth of blocks where there are fewer rows), so the partials are few; their sum is chained to
// it by programmatic dependent launch (its blocks launch early and wait). Improves: partials from N / 32 rows to at
// most N / (8 R), R rows in flight, no tail of half-empty waves. Wrong: each thread still holds a whole pack of every
// row (rows past 2048 packs do not fit), and the partials are written and read again (at most 1 / (3 R) of the bytes of
// x, dy and dx in bf16).
static int resident_rows(const lnb_problem_t *p, int bs) { return regs_rows_in_flight(p->C / vec16(p), bs); }
// The plan: a pack a thread to 256 packs, at least 32 threads; two packs a thread beyond.
static int resident_bs(const lnb_problem_t *p) { return regs_resident_block_size(p->C / vec16(p)); }
static int plan_resident_grid(const void *pp) { return resident_bs((const lnb_problem_t *)pp); }
static long resident_parts(const lnb_problem_t *p, int bs) {
    const int R = resident_rows(p, bs);
    return regs_resident_grid(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), R), bs, p->N, R, p->parts);
}
static void launch_resident_grid(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : resident_bs(p);
    const long g = resident_parts(p, bs);
    lnb_launch(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), resident_rows(p, bs)), p, g, bs, 0);
    sum_partials(p, g, 1);
    l->block_used = bs;
}
static const char *supports_resident_grid(const void *pp, int bs) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const int b = bs ? bs : resident_bs(p);
    const char *why = supports_row_regs(p, b);
    if (why) return why;
    if (resident_parts(p, b) < 1) return "no block of this size is resident on an SM";
    return NULL;
}

// ------------------------------------------------------------------------------------------------
// Kernel 8, column_tiles: a kernel of row scalars, each row's mean_C(g) and mean_C(g * x̂) into a scratch [N, 2] (a
// warp a row to 2048 elements, a block a row beyond; 16-byte packs where the row takes them), then a 2-D grid chained
// to it by PDL: column tiles (a thread a column) x groups of rows (about 3 waves of blocks, at least 16 rows a group),
// each thread walking its group's rows 4 at a time (their loads issued together), writing dx and summing its column's
// dw and db terms in registers: a partial a group, summed in order by a third kernel, chained too. Improves: nothing
// of a row in registers, so rows of any length (past 6 and 7's 2048 packs, odd C) at one cost an element, a long
// row's columns over every SM at few rows. Wrong: x and dy cross DRAM twice (the scalars, then the tiles), 2- and
// 4-byte accesses in the tiles, three launches.
// The row scalars: VEC elements a load (16 bytes where C takes packs, else 1), a warp a row (WARP) or a block a row.
template <typename T, int VEC, bool WARP> __global__ void lnb_row_means_kernel(const lnb_args_t a) {
    LNB_ARGS(T);
    (void)dx;  // (written by the tiles)
    __shared__ float2 red[32][1];
    pdl_wait();
    const long row = WARP ? blockIdx.x * (long)(blockDim.x / 32) + threadIdx.x / 32 : (long)blockIdx.x;
    if (row >= a.N) return;  // a whole warp (a block a row: never)
    const int lane = WARP ? threadIdx.x % 32 : threadIdx.x, width = WARP ? 32 : blockDim.x;
    const T *xr = x + row * C, *dyr = dy + row * C;
    const float m = mean[row], s = rstd[row];
    float2 ab[1] = {make_float2(0.f, 0.f)};
#pragma unroll 4
    for (long i = lane; i < C / VEC; i += width) {
        const Pack<T, VEC> xv = load_pack<T, VEC>(xr + i * VEC), dv = load_pack<T, VEC>(dyr + i * VEC),
                           wv = load_pack<T, VEC>(w + i * VEC);
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            const float xh = (pack_elem(xv, j) - m) * s, g = pack_elem(dv, j) * pack_elem(wv, j);
            ab[0].x += g, ab[0].y += g * xh;
        }
    }
    if (WARP) ab[0] = warp_sum(ab[0]);
    else block_sums<float2, 1>(ab, red);
    pdl_trigger();
    if (lane == 0) reinterpret_cast<float2 *>(a.means)[row] = make_float2(ab[0].x / C, ab[0].y / C);
}
// The tiles: thread c of tile blockIdx.x takes column c of the rows_a_block rows of group g, the groups from the last
// (blockIdx.y 0: the rows the scalars kernel read last, the likeliest still in L2).
template <typename T> __global__ void __launch_bounds__(1024, 2) lnb_column_tiles_kernel(const lnb_args_t a) {
    LNB_ARGS(T);
    pdl_wait();
    const long c = blockIdx.x * (long)blockDim.x + threadIdx.x, g = gridDim.y - 1 - blockIdx.y;
    const long first = g * a.rows_a_block, last = min(a.N, first + a.rows_a_block);
    float sw = 0.f, sb = 0.f;
    if (c < C) {
        const float wc = to_float(w[c]);
        for (long row0 = first; row0 < last; row0 += 4) {
            T xv[4], dv[4], old[4];  // 4 rows' loads in flight (and dx's, --accumulate)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const long i = (row0 + r) * C + c;
                if (row0 + r < last) xv[r] = x[i], dv[r] = dy[i], old[r] = a.accumulate ? dx[i] : T{};
            }
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const long row = row0 + r;
                if (row >= last) break;
                const float d = to_float(dv[r]), s = rstd[row], xh = (to_float(xv[r]) - mean[row]) * s;
                const float2 ab = reinterpret_cast<const float2 *>(a.means)[row];
                dx[row * C + c] = dx_out(old, r, s * (d * wc - ab.x - xh * ab.y), a.accumulate);
                sw += d * xh, sb += d;
            }
        }
    }
    pdl_trigger();
    if (c < C) a.part[g * 2 * C + c] = sw, a.part[(g * 2 + 1) * C + c] = sb;
}
template <typename T> static const void *row_means_fn_t(int packs, int warp) {
    constexpr int V = 16 / sizeof(T);
    return packs ? (warp ? (const void *)lnb_row_means_kernel<T, V, true> : (const void *)lnb_row_means_kernel<T, V, false>)
                 : (warp ? (const void *)lnb_row_means_kernel<T, 1, true> : (const void *)lnb_row_means_kernel<T, 1, false>);
}
static const void *row_means_fn(const lnb_problem_t *p) {
    const int pk = full_packs(p), wa = means_warp_a_row(p->C);
    return p->h.dtype == DT_FP16   ? row_means_fn_t<__half>(pk, wa)
           : p->h.dtype == DT_BF16 ? row_means_fn_t<__nv_bfloat16>(pk, wa) : row_means_fn_t<float>(pk, wa);
}
static const void *column_tiles_fn(dtype_t d) {
    return d == DT_FP16   ? (const void *)lnb_column_tiles_kernel<__half>
           : d == DT_BF16 ? (const void *)lnb_column_tiles_kernel<__nv_bfloat16> : (const void *)lnb_column_tiles_kernel<float>;
}
// The plan: a thread a column, 256 threads a tile (fewer where C is shorter); the groups from the tiles' waves.
static int plan_column_tiles(const void *pp) { return tiles_block_size(((const lnb_problem_t *)pp)->C); }
static void launch_column_tiles(const void *pp, launch_t *l) {
    const lnb_problem_t *p = (const lnb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : plan_column_tiles(pp);
    const void *tiles = column_tiles_fn(p->h.dtype);
    const int rows = tiles_rows_a_group(p->N, ceil_div(p->C, bs), p->parts, one_wave(tiles, bs));
    lnb_args_t a = lnb_args(p, rows);
    void *args[] = {&a};
    sum_partials(p, launch_means_then_tiles(row_means_fn(p), tiles, args, p->N, p->C, bs, rows), 1);
    l->block_used = bs;
}

// ------------------------------------------------------------------------------------------------
// Kernel 9, dispatch: no kernel of its own. Its rule (k_regimes), from what the rungs are: the resident grid (7)
// where a row takes 16-byte packs and a block holds it in registers; the column tiles (8) for rows of 2048 packs and
// more (6 and 7 refuse past 2048); else the one-launch partials of 5, which take any row. Improves: one kernel for
// every problem, deterministic. Wrong: the rule is reasoned from the rungs' designs, not yet derived from a sweep.
static const regime_t k_regimes[] = {
    // regimes: begin (reasoned; scripts/tune_dispatch.py layernorm_backward --write puts a dense sweep's rule here)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, 1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 7, "16-byte packs"},
    {0, -1, 0, 0, 2048, RG_ANY, 0, RG_ANY, 0, RG_ANY, 8, "packs a row >= 2048"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 5, "anything"},
    // regimes: end
};
static const kernel_t *ladder_rung(int k);  // a rung's registry entry (below the registry)
static const char *regime_supports(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const lnb_problem_t *)pp)->h.dtype, bs);
}
// The regime that runs the problem (NULL: none, a bug: the last row takes every problem), its 1-based row in *at.
static const regime_t *dispatch_for(const lnb_problem_t *p, int req_bs, int *at) {
    const regime_key_t key = regime_key((int)dtype_size(p->h.dtype), full_packs(p), TV_PLAIN, p->C, p->N, 1);
    const regime_t *r = regime_pick(k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), &key, req_bs, p,
                                    regime_supports, at);
    *at += 1;
    return r;
}
static void launch_dispatch(const void *pp, launch_t *l) {
    int at = 0;
    const regime_t *r = dispatch_for((const lnb_problem_t *)pp, l->block_size, &at);
    regime_launch(r, at, r ? ladder_rung(r->rung) : NULL, pp, l, "");
}
static const char *supports_dispatch(const void *pp, int bs) {
    int at = 0;
    return dispatch_for((const lnb_problem_t *)pp, bs, &at) ? NULL : NO_REGIME;
}

// ------------------------------------------------------------------------------------------------
// The registry (keep it, the header comment, --list and the README's ladder table in agreement). The last field: 1 for
// the deterministic kernels, whose validation launches them twice and compares the bits.
#define FP32_ONLY DT_BIT(DT_FP32)
static const kernel_t k_kernels[] = {
    {0, "cudnn", DT_ALL, "where cuDNN has an engine; not --accumulate",
     "cuDNN 9 graph API norm-backward (LayerNorm), fastest of the heuristics' engine configs", 1,
     CUDNN_FNS(supports_cudnn, launch_cudnn)},
    {1, "thread_per_row", FP32_ONLY, "any C", "one thread per row, two loops over the row; dweight and dbias by global atomics",
     0, NULL, launch_thread_per_row},
    {2, "block_per_row", FP32_ONLY, "any C",
     "one block per row, shared-memory reductions; still an atomic per element of dw, db", 0, NULL,
     launch_block_per_row},
    {3, "warp_smem_partial", FP32_ONLY, "2 x C floats fit shared memory",
     "a warp per row; the block's partial dw, db in shared memory, one atomic a column a block", 0,
     supports_warp_smem_partial, launch_warp_smem_partial},
    {4, "partials_two_pass", FP32_ONLY, "any C; deterministic",
     "a block per group of rows writes its partials to a scratch; a second kernel sums them", 0, NULL,
     launch_partials_two_pass, 0, NULL, 1},
    {5, "last_block_reduce", DT_ALL, "any C; deterministic",
     "as 4 in one launch: the last block to finish sums the partials; any dtype", 0, NULL, launch_last_block_reduce, 0,
     plan_last_block, 1},
    {6, "row_regs_packs", DT_ALL, "16-byte packs, <= 2048 a row; deterministic",
     "16-byte packs, x and dy read once into registers, dw and db summed in registers", 0, supports_row_regs_packs,
     launch_row_regs_packs, 0, plan_row_regs_packs, 1},
    {7, "resident_grid", DT_ALL, "16-byte packs, <= 2048 a row; deterministic",
     "6 on a grid of resident blocks, R rows at a time: few partials, summed by a kernel chained by PDL", 0, supports_resident_grid,
     launch_resident_grid, 0, plan_resident_grid, 1},
    {8, "column_tiles", DT_ALL, "any C; deterministic",
     "row scalars by a warp or block a row, then a column a thread over groups of rows; partials summed in order", 0, NULL,
     launch_column_tiles, 0, plan_column_tiles, 1},
    {9, "dispatch", DT_ALL, "any C; deterministic",
     "a rule of regimes picks the rung, the rung's plan its block size; says which ran", 1, supports_dispatch,
     launch_dispatch, 0, NULL, 1},
};
static const kernel_t *ladder_rung(int k) { return &k_kernels[k]; }

// ------------------------------------------------------------------------------------------------
// Setup, reference, teardown, options.
static const extra_option_t k_extra[] = {
    {"accumulate", no_argument, "--accumulate     add the gradient into dx (a residual stream's) instead of writing it"},
    {"eps", required_argument, "--eps E          epsilon of the forward whose saved rstd the inputs hold (default 1e-5)"}};
static const char *parse_extra(int index, const char *arg) {
    if (index == 0) {
        g_accumulate = 1;
        return NULL;
    }
    double v;
    if (parse_double(arg, &v) || v < 0) return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
    g_eps = v;
    return NULL;
}
static problem_t *lnb_setup(const options_t *o) {
    lnb_problem_t *p = (lnb_problem_t *)calloc(1, sizeof *p);
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    long N = o->rows, C = o->cols;
    p->N = N, p->C = C, p->accumulate = g_accumulate, p->h.dtype = d;
    snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ld%s", N, C, g_accumulate ? ":acc" : "");
    snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "rows %ld cols %ld%s", N, C, g_accumulate ? " accumulate" : "");
    // x, dy read, dx written (and read: --accumulate), weight read, dweight and dbias written, mean and rstd read
    p->h.bytes = (3.0 + p->accumulate) * N * C * es + 3.0 * C * es + 2.0 * N * sizeof(float);
    p->x = dev_alloc(N * C * es), p->dy = dev_alloc(N * C * es), p->dx = dev_alloc(N * C * es);
    p->w = dev_alloc(C * es), p->dw = dev_alloc(C * es), p->db = dev_alloc(C * es);
    p->mean = (float *)dev_alloc(N * sizeof(float)), p->rstd = (float *)dev_alloc(N * sizeof(float));
    // the partials: a row per block of the rungs that write them, at most 256 MB (more rows a block beyond)
    long cap = (1L << 28) / (2 * C * (long)sizeof(float));
    p->parts = N < cap ? N : cap > 0 ? cap : 1;
    p->part = (float *)dev_alloc(p->parts * 2 * C * sizeof(float));
    p->counter = (unsigned *)dev_alloc(sizeof(unsigned));
    CUDA_CHECK(cudaMemset(p->counter, 0, sizeof(unsigned)));
    p->means = (float *)dev_alloc(N * 2 * sizeof(float));
    p->hx = host_alloc_doubles(N * C), p->hdy = host_alloc_doubles(N * C), p->hw = host_alloc_doubles(C);
    fill_normal(p->x, p->hx, N * C, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->w, p->hw, C, d, o->seed, 1, 1.0, 0.25);
    fill_normal(p->dy, p->hdy, N * C, d, o->seed, 3, 0.0, 1.0);
    // the forward's statistics of x, as it saves them (fp32)
    p->hmean = host_alloc_doubles(N), p->hrstd = host_alloc_doubles(N);
    float *fm = (float *)malloc(N * sizeof(float)), *fr = (float *)malloc(N * sizeof(float));
    layernorm_stats_f32(fm, fr, p->hmean, p->hrstd, p->hx, N, C, g_eps);
    CUDA_CHECK(cudaMemcpy(p->mean, fm, N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p->rstd, fr, N * sizeof(float), cudaMemcpyHostToDevice));
    free(fm), free(fr);
    if (p->accumulate) {
        p->dx0 = dev_alloc(N * C * es), p->hdx0 = host_alloc_doubles(N * C);
        fill_normal(p->dx0, p->hdx0, N * C, d, o->seed, 4, 0.0, 1.0);
    }
    p->h.n_out = 3;
    p->h.out[0] = (output_t){"dx", p->dx, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), NULL};
    p->h.out[1] = (output_t){"dweight", p->dw, d, 1, C, host_alloc_doubles(C), tolerance_for(d), NULL};
    p->h.out[2] = (output_t){"dbias", p->db, d, 1, C, host_alloc_doubles(C), tolerance_for(d), NULL};
    p->h.out[1].elem_atol = host_alloc_doubles(C);
    p->h.out[2].elem_atol = host_alloc_doubles(C);
    return &p->h;
}
static void lnb_reset(problem_t *h) {
    lnb_problem_t *p = (lnb_problem_t *)h;
    if (p->accumulate) CUDA_CHECK(cudaMemcpy(p->dx, p->dx0, p->N * p->C * dtype_size(h->dtype), cudaMemcpyDeviceToDevice));
}
static void lnb_reference(problem_t *h) {
    lnb_problem_t *p = (lnb_problem_t *)h;
    layernorm_backward_cpu(h->out[0].ref, h->out[1].ref, h->out[2].ref, h->out[1].elem_atol, h->out[2].elem_atol,
                           p->hx, p->hw, p->hdy, p->hmean, p->hrstd, p->hdx0, p->N, p->C);
    for (int i = 1; i <= 2; i++)  // Σ|terms| -> the error fp32 accumulation may make
        for (long c = 0; c < p->C; c++) h->out[i].elem_atol[c] = sum_atol(p->N, h->out[i].elem_atol[c]);
}
static void lnb_teardown(problem_t *h) {
    lnb_problem_t *p = (lnb_problem_t *)h;
    void *dev[] = {p->x, p->w, p->dy, p->mean, p->rstd, p->dx, p->dw, p->db, p->part, p->counter, p->means};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) CUDA_CHECK(cudaFree(dev[i]));
    if (p->dx0) CUDA_CHECK(cudaFree(p->dx0));
    for (int i = 0; i < h->n_out; i++) free(h->out[i].ref), free(h->out[i].elem_atol);
    free(p->hx), free(p->hw), free(p->hdy), free(p->hmean), free(p->hrstd), free(p->hdx0), free(p);
}
static const program_t k_program = {
    "layernorm_backward", "layernorm_backward",
    "LayerNorm backward over the last dimension: dx, dweight and dbias from x, dy, weight and the saved mean and rstd",
    8 * 1024, 768,  // the default shape
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]), LNB_DISPATCHER,
    k_extra, (int)(sizeof k_extra / sizeof k_extra[0]), parse_extra, check_rows_cols,
    lnb_setup, lnb_reference, lnb_teardown, lnb_reset,
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
