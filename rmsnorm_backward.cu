/*
RMSNorm backward over the last dimension (C) of x[rows, C], from the forward pass's saved rstd:
  x̂ = x * rstd,  g = dy * (weight + offset),
  dx = rstd * (g - x̂ * mean_C(g * x̂))      (--accumulate: added into dx instead of written)
  dweight = Σ_rows dy * x̂                   (a sum over every row, accumulated in fp32)
rstd = 1 / sqrt(mean(x^2) + eps) as the forward saves it (eps 1e-6, --eps); offset 0 (--weight-offset F; 1 is
Gemma's form). Inputs x, dy, weight (dtype), rstd (fp32, [rows]); outputs dx (dtype) and dweight (dtype).

Kernels (`./rmsnorm_backward --list` prints the same registry; the CPU tests check that they agree):
   0  cudnn               cuDNN 9 graph API norm-backward (RMSNorm), fastest of the heuristics' engine configs
   1  thread_per_row      one thread per row, two loops over the row; dweight by global atomics
   2  block_per_row       one block per row, shared-memory reductions; still an atomic per element of dweight
   3  warp_smem_partial   a warp per row; the block's partial dweight in shared memory, one atomic a column a block
   4  partials_two_pass   a block per group of rows writes its partial to a scratch; a second kernel sums them
   5  last_block_reduce   as 4 in one launch: the last block to finish sums the partials; any dtype
   6  row_regs_packs      16-byte packs, x and dy read once into registers, dweight summed in registers
   7  resident_grid       6 on a grid of resident blocks, R rows at a time: few partials, summed by a kernel chained by PDL
   8  column_tiles        row scalars by a warp or block a row, then a column a thread over groups of rows; partials summed in order
   9  dispatch            a rule of regimes picks the rung, the rung's plan its block size; says which ran
Deterministic (dweight identical bit for bit from run to run; each validation launches them twice and compares the
bits): 4-8 and 9; 1-3 add by atomics.

Run:
  make && ./rmsnorm_backward 7                    validate kernel 7, sweep block sizes, time each
  ./rmsnorm_backward all --dtype bf16             every kernel, ranked
  ./rmsnorm_backward 9 -N 16384 -C 4096 --weight-offset 1 --check
  ./rmsnorm_backward --list                       the registry (no GPU needed)
Build it alone (make does this for the GPU it finds; -arch: your GPU's, sm_90 for programmatic dependent launch):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o rmsnorm_backward rmsnorm_backward.cu -lcurand -lgomp -ldl
  CUPTI (the GPU's clock): add -DHAVE_CUPTI -lcupti; cuDNN (kernel 0): add -DHAVE_CUDNN -lcudnn (-I/-L where needed).
Kernels 1-4 are the fp32 teaching ladder; 5-9 run fp32, fp16 and bf16 with fp32 arithmetic. Kernel 0 says
`skipped: <reason>` for --accumulate and a weight offset (cuDNN's norm node has neither).
*/
#include "common.h"

// ------------------------------------------------------------------------------------------------
// The problem
typedef struct {
    problem_t h;  // common header: dtype, shape, bytes, outputs
    long N, C;
    int accumulate;         // --accumulate: dx += the gradient
    float offset;           // --weight-offset: the weight applied is weight + offset
    void *x, *w, *dy;       // inputs, dtype
    float *rstd;            // input, the forward's saved statistic
    void *dx, *dw;          // outputs, dtype
    void *dx0;              // --accumulate: dx's initial values (reset copies them back)
    float *part;            // partials [parts, C], fp32
    unsigned *counter;      // rung 5's finished blocks (0 between launches)
    float *means;           // rung 8's row scalars [N]: mean_C(g * x̂), fp32
    long parts;             // rows of `part`
    double *hx, *hw, *hdy, *hrstd, *hdx0;  // host inputs, exactly the device values
} rmb_problem_t;
static int g_accumulate = 0;
static double g_eps = 1e-6, g_offset = 0.0;  // --eps (the forward's, in the saved rstd), --weight-offset
#define RMB_DISPATCHER 9

// The arguments every kernel from 4 on takes, by value.
typedef struct {
    const void *x, *w, *dy;
    const float *rstd;
    void *dx;
    float *part;
    unsigned *counter;
    void *dw;
    long N, C;
    int accumulate;
    float offset;
    int rows_a_block;  // rows of one block (a contiguous range); 0: the grid walks the rows (resident grid)
    float *means;      // rung 8's row scalars
} rmb_args_t;
#define RMB_ARGS(T)                                                                                                   \
    const T *__restrict__ x = (const T *)a.x, *__restrict__ w = (const T *)a.w, *__restrict__ dy = (const T *)a.dy;  \
    const float *__restrict__ rstd = a.rstd;                                                                          \
    T *__restrict__ dx = (T *)a.dx;                                                                                   \
    const long C = a.C;                                                                                               \
    const float off = a.offset
static rmb_args_t rmb_args(const rmb_problem_t *p, int rows_a_block) {
    return {p->x, p->w, p->dy, p->rstd, p->dx, p->part, p->counter, p->dw, p->N, p->C, p->accumulate, p->offset,
            rows_a_block, p->means};
}
static void rmb_launch(const void *fn, const rmb_problem_t *p, long grid, int bs, int rows_a_block) {
    rmb_args_t a = rmb_args(p, rows_a_block);
    void *args[] = {&a};
    launch_kernel(fn, grid, bs, 0, args, 1);
}
// The block's rows: [first, last) of a contiguous range (rows_a_block > 0), else every gridDim.x-th from blockIdx.x.
__device__ __forceinline__ void block_rows(const rmb_args_t &a, long *first, long *last, long *step) {
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
static int rows_a_block(const rmb_problem_t *p) { return partials_rows_a_block(p->N, p->parts); }
static long row_groups(const rmb_problem_t *p) { return ceil_div(p->N, rows_a_block(p)); }
// 16-byte packs: C a multiple of 16 bytes' elements (every row then starts aligned).
static int vec16(const rmb_problem_t *p) { return 16 / (int)dtype_size(p->h.dtype); }
static int full_packs(const rmb_problem_t *p) { return p->C % vec16(p) == 0; }

// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, from the dtype-rounded inputs and the fp32 rstd. abs_w: the sum of |dy * x̂| a
// column, which the tolerance of a sum over rows scales with (sum_atol, harness/base.h).
static void rmsnorm_backward_cpu(double *dx, double *dw, double *abs_w, const double *x, const double *w,
                                 double offset, const double *dy, const double *rstd, const double *dx0, long N,
                                 long C) {
OMP_PARALLEL_FOR
    for (long r = 0; r < N; r++) {
        const double *xr = x + r * C, *dyr = dy + r * C;
        double b = 0;
        for (long c = 0; c < C; c++) b += dyr[c] * (w[c] + offset) * xr[c] * rstd[r];
        b /= C;
        for (long c = 0; c < C; c++) {
            double xh = xr[c] * rstd[r], g = dyr[c] * (w[c] + offset);
            dx[r * C + c] = (dx0 ? dx0[r * C + c] : 0.0) + rstd[r] * (g - xh * b);
        }
    }
    // the column sums: each thread its columns, the rows in order (the same sums whatever the thread count)
OMP_PARALLEL_FOR
    for (long c = 0; c < C; c++) {
        double sw = 0, aw = 0;
        for (long r = 0; r < N; r++) {
            double t = dy[r * C + c] * x[r * C + c] * rstd[r];
            sw += t, aw += fabs(t);
        }
        dw[c] = sw, abs_w[c] = aw;
    }
}
// The forward's saved rstd of x, as rmsnorm_forward writes it: 1 / sqrt(mean(x^2) + eps) in double, rounded to fp32
// (fr: the device's input), and that fp32 value as a double (r: the reference's).
static void rmsnorm_rstd_f32(float *fr, double *r, const double *x, long N, long C, double eps) {
OMP_PARALLEL_FOR
    for (long i = 0; i < N; i++) {
        double ss = 0;
        for (long c = 0; c < C; c++) ss += x[i * C + c] * x[i * C + c];
        fr[i] = (float)(1.0 / sqrt(ss / C + eps));
        r[i] = fr[i];
    }
}

// ------------------------------------------------------------------------------------------------
// Kernel 0, cudnn: cuDNN's graph norm-backward node (RMSNorm), the fastest engine config kept.
// Improves: the reference the ladder is measured against. Wrong: a plan costs seconds a process; no --pdl, no weight
// offset, no --accumulate (skipped).
#ifdef HAVE_CUDNN
static cudnn_norm_state_t g_cudnn;
// The problem as cuDNN's graph sees it (no GPU needed: the CPU tests finalize its operation).
static void cudnn_describe(const rmb_problem_t *p, cudnn_norm_t *d) {
    memset(d, 0, sizeof *d);  // compared byte for byte by the plan cache
    d->mode = CUDNN_RMS_NORM;
    d->dtype = p->h.dtype;
    cudnn_norm_rows(d, p->N, p->C);
    d->backward = 1;
    d->x = p->x;
    d->scale = p->w;
    d->dy = p->dy;
    d->rstd = p->rstd;
    d->dx = p->dx;
    d->dscale = p->dw;
    snprintf(d->label, sizeof d->label, "RMSNorm backward %s %s", dtype_name(p->h.dtype), p->h.shape);
}
static const char *supports_cudnn(const void *pp, int bs) {
    REASON_TRY(cudnn_refuse_block_size(bs));
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    if (p->accumulate) return "--accumulate: cuDNN's norm backward writes dx, it does not add into it";
    if (p->offset != 0) return "cuDNN's RMS norm has no weight offset";
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
// Kernel 1, thread_per_row: one thread per row: a loop for the row's mean of g * x̂, a loop for dx; every element's
// dweight term added by a global atomic (zeroed first). Improves: the plainest correct kernel, the ladder's start.
// Wrong: neighbouring threads read addresses C floats apart, N x C atomics contend N ways on each column, and the
// sums' order changes from run to run.
__global__ void rmb_thread_per_row_kernel(const float *x, const float *w, const float *dy, const float *rstd,
                                          float *dx, float *dw, long N, long C, float off, int acc) {
    long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *xr = x + row * C, *dyr = dy + row * C;
    const float s = rstd[row];
    float b = 0.f;
    for (long c = 0; c < C; c++) b += dyr[c] * (w[c] + off) * (xr[c] * s);
    b /= C;
    float *dxr = dx + row * C;
    for (long c = 0; c < C; c++) {
        float xh = xr[c] * s, v = s * (dyr[c] * (w[c] + off) - xh * b);
        dxr[c] = acc ? dxr[c] + v : v;
        atomicAdd(dw + c, dyr[c] * xh);
    }
}
static void zero_dw(const rmb_problem_t *p) {
    CUDA_CHECK(cudaMemsetAsync(p->dw, 0, p->C * dtype_size(p->h.dtype), cudaStreamPerThread));
}
static void launch_thread_per_row(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    zero_dw(p);
    rmb_thread_per_row_kernel<<<(unsigned)ceil_div(p->N, l->block_size), l->block_size>>>(
        (const float *)p->x, (const float *)p->w, (const float *)p->dy, p->rstd, (float *)p->dx, (float *)p->dw, p->N,
        p->C, p->offset, p->accumulate);
}

// ------------------------------------------------------------------------------------------------
// Kernel 2, block_per_row: one block per row; the row's sum reduced by warp shuffles, then across warps in shared
// memory (block_sum). Improves: coalesced reads, a block of threads a row. Wrong: each element still adds its
// dweight term by a global atomic (N-way contention on every column), and x, dy are read twice.
__global__ void rmb_block_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                         const float *__restrict__ dy, const float *__restrict__ rstd,
                                         float *__restrict__ dx, float *dw, long C, float off, int acc) {
    __shared__ float scratch[33];
    const long row = blockIdx.x;
    const float *xr = x + row * C, *dyr = dy + row * C;
    const float s = rstd[row];
    float b = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) b += dyr[c] * (w[c] + off) * (xr[c] * s);
    b = block_sum(b, scratch) / C;
    float *dxr = dx + row * C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) {
        float xh = xr[c] * s, v = s * (dyr[c] * (w[c] + off) - xh * b);
        dxr[c] = acc ? dxr[c] + v : v;
        atomicAdd(dw + c, dyr[c] * xh);
    }
}
static void launch_block_per_row(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    zero_dw(p);
    rmb_block_per_row_kernel<<<(unsigned)p->N, l->block_size>>>((const float *)p->x, (const float *)p->w,
                                                                 (const float *)p->dy, p->rstd, (float *)p->dx,
                                                                 (float *)p->dw, p->C, p->offset, p->accumulate);
}

// ------------------------------------------------------------------------------------------------
// Kernel 3, warp_smem_partial: a warp per row (shuffle reductions, no block barrier a row); the block's warps add
// their rows' dweight terms into a partial in shared memory (shared atomics), which the block then adds to dweight:
// one global atomic a column a block. Improves: global atomics fall from N x C to blocks x C. Wrong: the partial must
// fit shared memory (C <= 58 K on an H200), shared atomics still serialize the warps of a block, and the order of
// the atomics still changes the sums' last bits from run to run.
__global__ void rmb_warp_smem_partial_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                             const float *__restrict__ dy, const float *__restrict__ rstd,
                                             float *__restrict__ dx, float *dw, long N, long C, float off, int acc) {
    extern __shared__ float part[];  // [C]
    for (long c = threadIdx.x; c < C; c += blockDim.x) part[c] = 0.f;
    __syncthreads();
    const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const long row = blockIdx.x * (long)warps + threadIdx.x / 32;
    if (row < N) {
        const float *xr = x + row * C, *dyr = dy + row * C;
        const float s = rstd[row];
        float b = 0.f;
        for (long c = lane; c < C; c += 32) b += dyr[c] * (w[c] + off) * (xr[c] * s);
        b = warp_sum(b) / C;
        float *dxr = dx + row * C;
        for (long c = lane; c < C; c += 32) {
            float xh = xr[c] * s, v = s * (dyr[c] * (w[c] + off) - xh * b);
            dxr[c] = acc ? dxr[c] + v : v;
            atomicAdd(part + c, dyr[c] * xh);
        }
    }
    __syncthreads();
    for (long c = threadIdx.x; c < C; c += blockDim.x) atomicAdd(dw + c, part[c]);
}
static size_t warp_smem_bytes(long C) { return C * sizeof(float); }
static void launch_warp_smem_partial(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const size_t smem = warp_smem_bytes(p->C);
    CUDA_CHECK(cudaFuncSetAttribute(rmb_warp_smem_partial_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    zero_dw(p);
    rmb_warp_smem_partial_kernel<<<(unsigned)ceil_div(p->N, l->block_size / 32), l->block_size, smem>>>(
        (const float *)p->x, (const float *)p->w, (const float *)p->dy, p->rstd, (float *)p->dx, (float *)p->dw, p->N,
        p->C, p->offset, p->accumulate);
}
static const char *supports_warp_smem_partial(const void *pp, int) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    if (warp_smem_bytes(p->C) > g_dev.prop.sharedMemPerBlockOptin)
        return reasonf("the partial (C floats, %zu bytes) exceeds a block's shared memory", warp_smem_bytes(p->C));
    return NULL;
}

// The partials' sum (rungs 4, 6-8): dweight from the scratch's rows, in a fixed order (harness/partials.h).
static void sum_partials(const rmb_problem_t *p, long parts, int chained) {
    launch_sum_partials(p->h.dtype, p->part, parts, p->C, p->C, p->dw, NULL, chained);
}

// ------------------------------------------------------------------------------------------------
// Kernel 4, partials_two_pass: a block takes up to 32 rows in turn (block_sum for each row's mean) and adds their
// dweight terms into its own row of a scratch [blocks, C], each thread its own columns (no atomics); a second kernel
// sums the scratch's rows in a fixed order. Improves: no atomics, and the same bits every run (deterministic).
// Wrong: the partial row is read and written again through L2 for every row, x and dy are read twice, 4-byte loads,
// two launches.
// A block's rows into its partial (rungs 4 and 5).
template <typename T> __device__ __forceinline__ void rows_into_partial(const rmb_args_t &a) {
    RMB_ARGS(T);
    __shared__ float scratch[33];
    float *pw = a.part + blockIdx.x * C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) pw[c] = 0.f;
    long first, last, step;
    block_rows(a, &first, &last, &step);
    for (long row = first; row < last; row += step) {
        const T *xr = x + row * C, *dyr = dy + row * C;
        const float s = rstd[row];
        float sb = 0.f;
        for (long c = threadIdx.x; c < C; c += blockDim.x)
            sb += to_float(dyr[c]) * (to_float(w[c]) + off) * (to_float(xr[c]) * s);
        const float mb = block_sum(sb, scratch) / C;
        T *dxr = dx + row * C;
        for (long c = threadIdx.x; c < C; c += blockDim.x) {
            float d = to_float(dyr[c]), xh = to_float(xr[c]) * s;
            dxr[c] = dx_out(dxr, c, s * (d * (to_float(w[c]) + off) - xh * mb), a.accumulate);
            pw[c] += d * xh;
        }
    }
}
template <typename T> __global__ void rmb_partials_kernel(const rmb_args_t a) { rows_into_partial<T>(a); }
static void launch_partials_two_pass(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    rmb_launch((const void *)rmb_partials_kernel<float>, p, row_groups(p), l->block_size, rows_a_block(p));
    sum_partials(p, row_groups(p), 0);
}

// ------------------------------------------------------------------------------------------------
// Kernel 5, last_block_reduce: 4 in one launch. Each block writes its partial, fences, and counts itself done; the
// last to finish sums every partial (in a fixed order) into dweight, and resets the count. Improves: one launch
// instead of two (decode-sized N: a few rows, a few partials); any dtype. Wrong: one block reads every partial, a
// serial tail that grows with blocks x C; the rest of 4's faults.
template <typename T> __global__ void rmb_last_block_reduce_kernel(const rmb_args_t a) {
    __shared__ bool is_last;
    rows_into_partial<T>(a);
    __threadfence();  // this block's partial is visible to every block before it counts itself done
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    T *dw = (T *)a.dw;
    const long C = a.C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) {
        float t = 0.f;
        for (long g = 0; g < gridDim.x; g++) t += __ldcg(a.part + g * C + c);  // L2: other blocks' writes
        dw[c] = from_float<T>(t);
    }
    if (threadIdx.x == 0) *a.counter = 0;  // ready for the next launch
}
// Its plan: about eight columns a thread, 128 to 1024 threads.
static int plan_last_block(const void *pp) { return pow2_at_least(((const rmb_problem_t *)pp)->C / 8.0, 128, 1024); }
static void launch_last_block_reduce(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const void *fn = p->h.dtype == DT_FP16   ? (const void *)rmb_last_block_reduce_kernel<__half>
                     : p->h.dtype == DT_BF16 ? (const void *)rmb_last_block_reduce_kernel<__nv_bfloat16>
                                             : (const void *)rmb_last_block_reduce_kernel<float>;
    rmb_launch(fn, p, row_groups(p), l->block_size, rows_a_block(p));
}

// ------------------------------------------------------------------------------------------------
// Kernel 6, row_regs_packs: a block a row (each thread P 16-byte packs of it, P of 1 or 2 by the plan), x and dy
// loaded once into registers; each row's mean of g * x̂ from registers (one block_sums round), dx from them; each
// thread sums its columns' dweight terms in registers over the block's rows and writes its partial once. Improves: x
// and dy cross DRAM once, 16-byte accesses, 16-bit types, no partial traffic a row. Wrong: a block a group of 32
// rows: N / 32 partials to write and sum, and one row at a time in flight a block.
// (The kernel takes R rows at a time, the rows in flight of rung 7; rung 6 runs it at R = 1.)
template <typename T, int P, int R>
__global__ void __launch_bounds__(R > 2 ? 512 : 1024) rmb_row_regs_kernel(const rmb_args_t a) {
    RMB_ARGS(T);
    constexpr int VEC = 16 / sizeof(T);
    typedef Pack<T, VEC> V;
    __shared__ float red[2][32][R];
    pdl_wait();
    const long nvec = C / VEC;
    float accw[P][VEC];
#pragma unroll
    for (int k = 0; k < P; k++)
#pragma unroll
        for (int j = 0; j < VEC; j++) accw[k][j] = 0.f;
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
        float s[R], b[R];
#pragma unroll
        for (int r = 0; r < R; r++) s[r] = rstd[row0 + r < last ? row0 + r : row0], b[r] = 0.f;
#pragma unroll
        for (int k = 0; k < P; k++) {
            const long i = threadIdx.x + (long)k * blockDim.x;
            if (i >= nvec) continue;
            const V wv = load_pack<T, VEC>(w + i * VEC);  // from L1: the same packs every row
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (row0 + r >= last) continue;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    b[r] += pack_elem(dv[r][k], j) * (pack_elem(wv, j) + off) * (pack_elem(xv[r][k], j) * s[r]);
            }
        }
        block_sums<float, R>(b, red[parity]);  // two scratch arrays in turn: the next group's writes wait for no one
#pragma unroll
        for (int k = 0; k < P; k++) {
            const long i = threadIdx.x + (long)k * blockDim.x;
            if (i >= nvec) continue;
            const V wv = load_pack<T, VEC>(w + i * VEC);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const long row = row0 + r;
                if (row >= last) continue;
                const float mb = b[r] / C;
                T *dxp = dx + row * C + i * VEC;
                V o, old;
                if (a.accumulate) old = load_pack<T, VEC>(dxp);
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float d = pack_elem(dv[r][k], j), xh = pack_elem(xv[r][k], j) * s[r];
                    float v = s[r] * (d * (pack_elem(wv, j) + off) - xh * mb);
                    o.v[j] = from_float<T>(a.accumulate ? to_float(old.v[j]) + v : v);
                    accw[k][j] += d * xh;
                }
                store_pack<T, VEC>(dxp, o);
            }
        }
    }
    pdl_trigger();
    float *pw = a.part + blockIdx.x * C;
#pragma unroll
    for (int k = 0; k < P; k++) {
        const long i = threadIdx.x + (long)k * blockDim.x;
        if (i >= nvec) continue;
#pragma unroll
        for (int j = 0; j < VEC; j += 4)
            *reinterpret_cast<float4 *>(pw + i * VEC + j) = make_float4(accw[k][j], accw[k][j + 1], accw[k][j + 2], accw[k][j + 3]);
    }
}
// The instances: P packs a thread x R rows at a time (P = 2 at R = 1 alone: registers).
template <typename T> static const void *row_regs_fn_t(int P, int R) {
    return P == 2 ? (const void *)rmb_row_regs_kernel<T, 2, 1>
           : R == 4 ? (const void *)rmb_row_regs_kernel<T, 1, 4>
           : R == 2 ? (const void *)rmb_row_regs_kernel<T, 1, 2> : (const void *)rmb_row_regs_kernel<T, 1, 1>;
}
static const void *row_regs_fn(dtype_t d, int P, int R) {
    return d == DT_FP16 ? row_regs_fn_t<__half>(P, R) : d == DT_BF16 ? row_regs_fn_t<__nv_bfloat16>(P, R)
                                                      : row_regs_fn_t<float>(P, R);
}
// Packs a thread: the fewer of 1, 2 that covers the row's packs with bs threads (0: more than 2 are needed).
static int row_regs_packs(const rmb_problem_t *p, int bs) { return regs_packs_a_thread(p->C / vec16(p), bs); }
static const char *supports_row_regs(const rmb_problem_t *p, int bs) { return regs_row_refusal(p->h.dtype, p->C, bs); }
static const char *supports_row_regs_packs(const void *pp, int bs) {
    return supports_row_regs((const rmb_problem_t *)pp, bs ? bs : 1024);
}
// The plan of 6: a pack a thread (two beyond 1024 packs), at least 128 threads.
static int row_regs_bs(const rmb_problem_t *p) { return regs_block_size(p->C / vec16(p)); }
static int plan_row_regs_packs(const void *pp) { return row_regs_bs((const rmb_problem_t *)pp); }
static void launch_row_regs_packs(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : row_regs_bs(p);
    rmb_launch(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), 1), p, row_groups(p), bs, rows_a_block(p));
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
// row (rows past 2048 packs do not fit), and the partials are written and read again (at most 1 / (6 R) of the bytes of
// x, dy and dx in bf16).
static int resident_rows(const rmb_problem_t *p, int bs) { return regs_rows_in_flight(p->C / vec16(p), bs); }
// The plan: a pack a thread to 256 packs, at least 32 threads; two packs a thread beyond.
static int resident_bs(const rmb_problem_t *p) { return regs_resident_block_size(p->C / vec16(p)); }
static int plan_resident_grid(const void *pp) { return resident_bs((const rmb_problem_t *)pp); }
static long resident_parts(const rmb_problem_t *p, int bs) {
    const int R = resident_rows(p, bs);
    return regs_resident_grid(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), R), bs, p->N, R, p->parts);
}
static void launch_resident_grid(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : resident_bs(p);
    const long g = resident_parts(p, bs);
    rmb_launch(row_regs_fn(p->h.dtype, row_regs_packs(p, bs), resident_rows(p, bs)), p, g, bs, 0);
    sum_partials(p, g, 1);
    l->block_used = bs;
}
static const char *supports_resident_grid(const void *pp, int bs) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const int b = bs ? bs : resident_bs(p);
    const char *why = supports_row_regs(p, b);
    if (why) return why;
    if (resident_parts(p, b) < 1) return "no block of this size is resident on an SM";
    return NULL;
}

// ------------------------------------------------------------------------------------------------
// Kernel 8, column_tiles: a kernel of row scalars, each row's mean_C(g * x̂) into a scratch [N] (a warp a row to 2048
// elements, a block a row beyond; 16-byte packs where the row takes them), then a 2-D grid chained to it by PDL:
// column tiles (a thread a column) x groups of rows (about 3 waves of blocks, at least 16 rows a group), each thread
// walking its group's rows 4 at a time (their loads issued together), writing dx and summing its column's dweight
// terms in registers: a partial a group, summed in order by a third kernel, chained too. Improves: nothing of a row
// in registers, so rows of any length (past 6 and 7's 2048 packs, odd C) at one cost an element, a long row's columns
// over every SM at few rows. Wrong: x and dy cross DRAM twice (the scalars, then the tiles), 2- and 4-byte accesses
// in the tiles, three launches.
// The row scalars: VEC elements a load (16 bytes where C takes packs, else 1), a warp a row (WARP) or a block a row.
template <typename T, int VEC, bool WARP> __global__ void rmb_row_means_kernel(const rmb_args_t a) {
    RMB_ARGS(T);
    (void)dx;  // (written by the tiles)
    __shared__ float red[32][1];
    pdl_wait();
    const long row = WARP ? blockIdx.x * (long)(blockDim.x / 32) + threadIdx.x / 32 : (long)blockIdx.x;
    if (row >= a.N) return;  // a whole warp (a block a row: never)
    const int lane = WARP ? threadIdx.x % 32 : threadIdx.x, width = WARP ? 32 : blockDim.x;
    const T *xr = x + row * C, *dyr = dy + row * C;
    const float s = rstd[row];
    float b[1] = {0.f};
#pragma unroll 4
    for (long i = lane; i < C / VEC; i += width) {
        const Pack<T, VEC> xv = load_pack<T, VEC>(xr + i * VEC), dv = load_pack<T, VEC>(dyr + i * VEC),
                           wv = load_pack<T, VEC>(w + i * VEC);
#pragma unroll
        for (int j = 0; j < VEC; j++) b[0] += pack_elem(dv, j) * (pack_elem(wv, j) + off) * (pack_elem(xv, j) * s);
    }
    if (WARP) b[0] = warp_sum(b[0]);
    else block_sums<float, 1>(b, red);
    pdl_trigger();
    if (lane == 0) a.means[row] = b[0] / C;
}
// The tiles: thread c of tile blockIdx.x takes column c of the rows_a_block rows of group g, the groups from the last
// (blockIdx.y 0: the rows the scalars kernel read last, the likeliest still in L2).
template <typename T> __global__ void __launch_bounds__(1024, 2) rmb_column_tiles_kernel(const rmb_args_t a) {
    RMB_ARGS(T);
    pdl_wait();
    const long c = blockIdx.x * (long)blockDim.x + threadIdx.x, g = gridDim.y - 1 - blockIdx.y;
    const long first = g * a.rows_a_block, last = min(a.N, first + a.rows_a_block);
    float sw = 0.f;
    if (c < C) {
        const float wc = to_float(w[c]) + off;
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
                const float d = to_float(dv[r]), s = rstd[row], xh = to_float(xv[r]) * s;
                dx[row * C + c] = dx_out(old, r, s * (d * wc - xh * a.means[row]), a.accumulate);
                sw += d * xh;
            }
        }
    }
    pdl_trigger();
    if (c < C) a.part[g * C + c] = sw;
}
template <typename T> static const void *row_means_fn_t(int packs, int warp) {
    constexpr int V = 16 / sizeof(T);
    return packs ? (warp ? (const void *)rmb_row_means_kernel<T, V, true> : (const void *)rmb_row_means_kernel<T, V, false>)
                 : (warp ? (const void *)rmb_row_means_kernel<T, 1, true> : (const void *)rmb_row_means_kernel<T, 1, false>);
}
static const void *row_means_fn(const rmb_problem_t *p) {
    const int pk = full_packs(p), wa = means_warp_a_row(p->C);
    return p->h.dtype == DT_FP16   ? row_means_fn_t<__half>(pk, wa)
           : p->h.dtype == DT_BF16 ? row_means_fn_t<__nv_bfloat16>(pk, wa) : row_means_fn_t<float>(pk, wa);
}
static const void *column_tiles_fn(dtype_t d) {
    return d == DT_FP16   ? (const void *)rmb_column_tiles_kernel<__half>
           : d == DT_BF16 ? (const void *)rmb_column_tiles_kernel<__nv_bfloat16> : (const void *)rmb_column_tiles_kernel<float>;
}
// The plan: a thread a column, 256 threads a tile (fewer where C is shorter); the groups from the tiles' waves.
static int plan_column_tiles(const void *pp) { return tiles_block_size(((const rmb_problem_t *)pp)->C); }
static void launch_column_tiles(const void *pp, launch_t *l) {
    const rmb_problem_t *p = (const rmb_problem_t *)pp;
    const int bs = l->block_size ? l->block_size : plan_column_tiles(pp);
    const void *tiles = column_tiles_fn(p->h.dtype);
    const int rows = tiles_rows_a_group(p->N, ceil_div(p->C, bs), p->parts, one_wave(tiles, bs));
    rmb_args_t a = rmb_args(p, rows);
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
    // regimes: begin (reasoned; scripts/tune_dispatch.py rmsnorm_backward --write puts a dense sweep's rule here)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, 1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 7, "16-byte packs"},
    {0, -1, 0, 0, 2048, RG_ANY, 0, RG_ANY, 0, RG_ANY, 8, "packs a row >= 2048"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 5, "anything"},
    // regimes: end
};
static const kernel_t *ladder_rung(int k);  // a rung's registry entry (below the registry)
static const char *regime_supports(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const rmb_problem_t *)pp)->h.dtype, bs);
}
// The regime that runs the problem (NULL: none, a bug: the last row takes every problem), its 1-based row in *at.
static const regime_t *dispatch_for(const rmb_problem_t *p, int req_bs, int *at) {
    const regime_key_t key = regime_key((int)dtype_size(p->h.dtype), full_packs(p), TV_PLAIN, p->C, p->N, 1);
    const regime_t *r = regime_pick(k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), &key, req_bs, p,
                                    regime_supports, at);
    *at += 1;
    return r;
}
static void launch_dispatch(const void *pp, launch_t *l) {
    int at = 0;
    const regime_t *r = dispatch_for((const rmb_problem_t *)pp, l->block_size, &at);
    regime_launch(r, at, r ? ladder_rung(r->rung) : NULL, pp, l, "");
}
static const char *supports_dispatch(const void *pp, int bs) {
    int at = 0;
    return dispatch_for((const rmb_problem_t *)pp, bs, &at) ? NULL : NO_REGIME;
}

// ------------------------------------------------------------------------------------------------
// The registry (keep it, the header comment, --list and the README's ladder table in agreement). The last field: 1 for
// the deterministic kernels, whose validation launches them twice and compares the bits.
#define FP32_ONLY DT_BIT(DT_FP32)
static const kernel_t k_kernels[] = {
    {0, "cudnn", DT_ALL, "where cuDNN has an engine; no offset, not --accumulate",
     "cuDNN 9 graph API norm-backward (RMSNorm), fastest of the heuristics' engine configs", 1,
     CUDNN_FNS(supports_cudnn, launch_cudnn)},
    {1, "thread_per_row", FP32_ONLY, "any C", "one thread per row, two loops over the row; dweight by global atomics",
     0, NULL, launch_thread_per_row},
    {2, "block_per_row", FP32_ONLY, "any C",
     "one block per row, shared-memory reductions; still an atomic per element of dweight", 0, NULL,
     launch_block_per_row},
    {3, "warp_smem_partial", FP32_ONLY, "C floats fit shared memory",
     "a warp per row; the block's partial dweight in shared memory, one atomic a column a block", 0,
     supports_warp_smem_partial, launch_warp_smem_partial},
    {4, "partials_two_pass", FP32_ONLY, "any C; deterministic",
     "a block per group of rows writes its partial to a scratch; a second kernel sums them", 0, NULL,
     launch_partials_two_pass, 0, NULL, 1},
    {5, "last_block_reduce", DT_ALL, "any C; deterministic",
     "as 4 in one launch: the last block to finish sums the partials; any dtype", 0, NULL, launch_last_block_reduce, 0,
     plan_last_block, 1},
    {6, "row_regs_packs", DT_ALL, "16-byte packs, <= 2048 a row; deterministic",
     "16-byte packs, x and dy read once into registers, dweight summed in registers", 0, supports_row_regs_packs,
     launch_row_regs_packs, 0, plan_row_regs_packs, 1},
    {7, "resident_grid", DT_ALL, "16-byte packs, <= 2048 a row; deterministic",
     "6 on a grid of resident blocks, R rows at a time: few partials, summed by a kernel chained by PDL", 0,
     supports_resident_grid, launch_resident_grid, 0, plan_resident_grid, 1},
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
    {"eps", required_argument, "--eps E          epsilon of the forward whose saved rstd the inputs hold (default 1e-6)"},
    {"weight-offset", required_argument,
     "--weight-offset F  the weight applied is weight + F (1: Gemma's form; the weight drawn from N(0, 0.25), else\n"
     "                   from N(1, 0.25))"}};
static const char *parse_extra(int index, const char *arg) {
    if (index == 0) {
        g_accumulate = 1;
        return NULL;
    }
    double v;
    if (index == 2) {
        if (parse_double(arg, &v) || fabs(v) > 1e4) return reasonf("invalid weight offset '%s' (--weight-offset: |F| <= 1e4)", arg);
        g_offset = v;
        return NULL;
    }
    if (parse_double(arg, &v) || v < 0) return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
    g_eps = v;
    return NULL;
}
static problem_t *rmb_setup(const options_t *o) {
    rmb_problem_t *p = (rmb_problem_t *)calloc(1, sizeof *p);
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    long N = o->rows, C = o->cols;
    p->N = N, p->C = C, p->accumulate = g_accumulate, p->offset = (float)g_offset, p->h.dtype = d;
    snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ld%s%s", N, C, g_offset != 0 ? ":off" : "",
             g_accumulate ? ":acc" : "");
    snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "rows %ld cols %ld%s%s", N, C,
             g_offset != 0 ? " weight offset" : "", g_accumulate ? " accumulate" : "");
    // x, dy read, dx written (and read: --accumulate), weight read, dweight written, rstd read
    p->h.bytes = (3.0 + p->accumulate) * N * C * es + 2.0 * C * es + 1.0 * N * sizeof(float);
    p->x = dev_alloc(N * C * es), p->dy = dev_alloc(N * C * es), p->dx = dev_alloc(N * C * es);
    p->w = dev_alloc(C * es), p->dw = dev_alloc(C * es);
    p->rstd = (float *)dev_alloc(N * sizeof(float));
    // the partials: a row per block of the rungs that write them, at most 256 MB (more rows a block beyond)
    long cap = (1L << 28) / (C * (long)sizeof(float));
    p->parts = N < cap ? N : cap > 0 ? cap : 1;
    p->part = (float *)dev_alloc(p->parts * C * sizeof(float));
    p->counter = (unsigned *)dev_alloc(sizeof(unsigned));
    CUDA_CHECK(cudaMemset(p->counter, 0, sizeof(unsigned)));
    p->means = (float *)dev_alloc(N * sizeof(float));
    p->hx = host_alloc_doubles(N * C), p->hdy = host_alloc_doubles(N * C), p->hw = host_alloc_doubles(C);
    fill_normal(p->x, p->hx, N * C, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->w, p->hw, C, d, o->seed, 1, g_offset != 0 ? 0.0 : 1.0, 0.25);
    fill_normal(p->dy, p->hdy, N * C, d, o->seed, 3, 0.0, 1.0);
    // the forward's rstd of x, as it saves it (fp32)
    p->hrstd = host_alloc_doubles(N);
    float *fr = (float *)malloc(N * sizeof(float));
    rmsnorm_rstd_f32(fr, p->hrstd, p->hx, N, C, g_eps);
    CUDA_CHECK(cudaMemcpy(p->rstd, fr, N * sizeof(float), cudaMemcpyHostToDevice));
    free(fr);
    if (p->accumulate) {
        p->dx0 = dev_alloc(N * C * es), p->hdx0 = host_alloc_doubles(N * C);
        fill_normal(p->dx0, p->hdx0, N * C, d, o->seed, 4, 0.0, 1.0);
    }
    p->h.n_out = 2;
    p->h.out[0] = (output_t){"dx", p->dx, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), NULL};
    p->h.out[1] = (output_t){"dweight", p->dw, d, 1, C, host_alloc_doubles(C), tolerance_for(d), NULL};
    p->h.out[1].elem_atol = host_alloc_doubles(C);
    return &p->h;
}
static void rmb_reset(problem_t *h) {
    rmb_problem_t *p = (rmb_problem_t *)h;
    if (p->accumulate) CUDA_CHECK(cudaMemcpy(p->dx, p->dx0, p->N * p->C * dtype_size(h->dtype), cudaMemcpyDeviceToDevice));
}
static void rmb_reference(problem_t *h) {
    rmb_problem_t *p = (rmb_problem_t *)h;
    rmsnorm_backward_cpu(h->out[0].ref, h->out[1].ref, h->out[1].elem_atol, p->hx, p->hw, p->offset, p->hdy, p->hrstd,
                         p->hdx0, p->N, p->C);
    for (long c = 0; c < p->C; c++)  // Σ|terms| -> the error fp32 accumulation may make
        h->out[1].elem_atol[c] = sum_atol(p->N, h->out[1].elem_atol[c]);
}
static void rmb_teardown(problem_t *h) {
    rmb_problem_t *p = (rmb_problem_t *)h;
    void *dev[] = {p->x, p->w, p->dy, p->rstd, p->dx, p->dw, p->part, p->counter, p->means};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) CUDA_CHECK(cudaFree(dev[i]));
    if (p->dx0) CUDA_CHECK(cudaFree(p->dx0));
    for (int i = 0; i < h->n_out; i++) free(h->out[i].ref), free(h->out[i].elem_atol);
    free(p->hx), free(p->hw), free(p->hdy), free(p->hrstd), free(p->hdx0), free(p);
}
static const program_t k_program = {
    "rmsnorm_backward", "rmsnorm_backward",
    "RMSNorm backward over the last dimension: dx and dweight from x, dy, weight and the saved rstd",
    8 * 1024, 4096,  // the default shape
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]), RMB_DISPATCHER,
    k_extra, (int)(sizeof k_extra / sizeof k_extra[0]), parse_extra, check_rows_cols,
    rmb_setup, rmb_reference, rmb_teardown, rmb_reset,
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
