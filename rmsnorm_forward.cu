/*
RMSNorm forward: y = x * rstd * (weight + offset) over the last dimension (C) of x[rows, C],
rstd = 1 / sqrt(mean(x^2) + eps), eps 1e-6 (--eps), offset 0 (--weight-offset; 1 is Gemma's form). Outputs y
(dtype of x) and the per-row rstd (fp32), as a training forward pass saves it for the backward pass.
x, weight and y in fp32, fp16 or bf16 (kernels 1-3, the teaching ladder: fp32); arithmetic in fp32.

Kernels (`./rmsnorm_forward --list` prints the same registry; the CPU tests check that they agree):
   0  cudnn              cuDNN 9 graph API norm-forward (training phase), fastest of the heuristics' engine configs
   1  thread_per_row     one thread per row: a loop for the sum of squares, a loop to normalize
   2  block_smem_tree    one block per row, sum of squares through a shared-memory tree
   3  warp_per_row       one warp per row, shuffle reductions, streaming hints
   4  block2d_vec        2-D block per row (lanes x warps): shuffles in each warp, then one warp across warps; 16-byte packs
   5  block_row_cache    x read once: the row kept in registers, or in shared memory when large
   6  subwarp_rows       several rows per warp or block, lanes per row chosen by C, row in registers
   7  cluster_dsmem      one row split across a thread-block cluster, partial sums through distributed shared memory
   8  latency_split      a row over 1-16 blocks (a cluster) at 2 or 4 packs a thread, w loaded with x, one reduction round
   9  odd_rows           rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks
  10  cluster_cp_async   a row over a cluster, each block's slice copied into shared memory by cp.async, normalized from there
  11  subwarp_persistent 6's layout on a grid of resident blocks that walk the rows, the next row loaded early, w kept
  12  dispatch           runs the rung of its rule of regimes at the rung's plan and says which ran

Variants (options; kernels 4-7 and 12 run every one, 1-3 and 8-9 plain rows alone, 10 and 11 all but --fused-add,
saying `skipped: <reason>` for the others; 1-12 apply --weight-offset; kernel 0 runs plain rows and QK-norm with
S = H*D: cuDNN's norm node has no residual add nor weight offset, and cuDNN 9.19 refuses the strided QK view):
  --fused-add        the pre-norm transformer step: residual += x in place, then y = rmsnorm(residual). The fp32 sum
                     is rounded to the dtype and the ROUNDED value (the one stored) is normalized, as vLLM's
                     fused_add_rms_norm and an unfused add then RMSNorm do (FlashInfer normalizes the fp32 sum: half
                     an ulp apart at most). The residual, a third output, is restored before every validation launch.
  --weight-offset F  y = x * rstd * (weight + F), the weight drawn from N(1, 0.25) at F = 0, else from N(0, 0.25)
                     (Gemma stores weight - 1), so weight + F is never degenerate.
  --heads H --head-dim D [--row-stride S]
                     QK-norm: x is a [tokens, H, D] view of token stride S >= H*D (default 3*H*D: q inside a packed
                     qkv buffer, allocated whole; -N gives tokens, default 4096); each of its tokens*H rows of D is
                     normalized with the one D-element weight into y [tokens*H, D]; only q is read and counted.
                     16-byte packs need the pack width to divide D and S. Not with --fused-add (exit 2).

Run:
  make && ./rmsnorm_forward 5                   validate kernel 5, sweep block sizes, time each
  ./rmsnorm_forward all --dtype bf16            every kernel, ranked (default shape 8192 x 4096)
  ./rmsnorm_forward 12 --fused-add --weight-offset 1 --check
  ./rmsnorm_forward 6 --heads 32 --head-dim 128 --dtype bf16   QK-norm, 4096 tokens, q inside qkv
  ./rmsnorm_forward 8 -N 4 -C 4096 --dtype bf16 --hot --pdl    a decode step's rows, chained launches
  ./rmsnorm_forward 8 -N 1 -C 8192 --packs 4    kernel 8 at 4 packs a thread, not its plan's
  ./rmsnorm_forward --list                      the registry (no GPU needed)

Build it alone (make does this for the GPU it finds; -arch: your GPU's, sm_90 or newer for the cluster kernels):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o rmsnorm_forward rmsnorm_forward.cu -lcurand -lgomp -ldl
  CUPTI (the GPU's own clock for the timing; else CUDA events): add -DHAVE_CUPTI -lcupti (where the toolkit keeps
    CUPTI apart, -I/-L to <cuda>/extras/CUPTI); cuDNN (kernel 0, else `skipped: built without cuDNN`): add
    -DHAVE_CUDNN -lcudnn (-I/-L where needed); kernel 0's planning line and `path` name the engine config it runs.

Planted bugs (tests/plant/rmsnorm_forward_bug<k>.patch, built as build/rmsnorm_forward_bug<k>), all in kernel 5's
register and shared-memory paths: 1 skips the store of each row's last pack of y, 2 writes one NaN into y, 3 uses
eps 1e-2 (rstd 0.5% off at mean square 1), 4 does not write the residual back; the GPU suite runs them with --fused-add.
*/
#include "common.h"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// ------------------------------------------------------------------------------------------------
// The problem

// The shape of one run, from the options (pure: the CPU tests build it without a GPU).
typedef struct {
    long N, C;          // normalized rows and their length (QK-norm: N = tokens * H, C = head_dim)
    long tokens, H, S;  // the x view: row r starts at element (r / H) * S + (r % H) * C (plain: H = 1, S = C)
    int qk, fused;
    double eps, offset;
} rms_shape_t;
typedef struct {
    problem_t h;  // common header: dtype, shape, bytes, outputs
    rms_shape_t s;
    void *x, *w, *y;   // dtype; x holds tokens * S elements (the whole qkv buffer in QK-norm mode)
    void *res, *res0;  // fused add: the residual (updated in place) and its initial values
    float *rstd;
    double *hx, *hw, *hres;  // host inputs, exactly the device values (hx as allocated, with the stride)
} rms_problem_t;
// Options of this program (parse_extra fills them; check_options turns them into a shape).
static double g_eps = 1e-6, g_offset = 0.0;
static int g_fused = 0;
static long g_heads = 0, g_head_dim = 0, g_row_stride = 0;  // 0 = not given
#define RMS_DISPATCHER 12  // kernel 12, the dispatcher (the default kernel)
static int g_cluster = 0;  // --cluster K: kernels 8-10 (12 through them) split rows over K blocks (0: their rule)
static int g_packs = 0;    // --packs P: kernel 8 (12 through it) at P packs a thread (0: its plan's)
static const long QK_DEFAULT_TOKENS = 4096;
// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, from the dtype-rounded inputs.

// v rounded as a GPU stores an fp32 result in dtype d: to fp32 first, then to d.
static double round_to_dtype(double v, dtype_t d) {
    unsigned char buf[4];
    host_store(buf, 0, d, (float)v);
    return host_load(buf, 0, d);
}
// Row r of x at (r / heads) * x_stride + (r % heads) * C (plain rows: heads = 1, x_stride = C; k and v of a qkv
// buffer never read). With res_in (fused add), res_out[r * C + c] = round_dtype(res_in + x), the value normalized.
static void rmsnorm_forward_cpu(double *y, double *rstd, double *res_out, const double *x, long heads, long x_stride,
                                const double *w, const double *res_in, long N, long C, double eps, double offset,
                                dtype_t d) {
OMP_PARALLEL_FOR
    for (long r = 0; r < N; r++) {
        const double *xr = x + (r / heads) * x_stride + (r % heads) * C;
        double ss = 0;
        for (long c = 0; c < C; c++) {
            double v = xr[c];
            if (res_in) {
                v = round_to_dtype(res_in[r * C + c] + v, d);
                res_out[r * C + c] = v;
            }
            ss += v * v;
        }
        double s = 1.0 / sqrt(ss / C + eps);
        for (long c = 0; c < C; c++) {
            double v = res_in ? res_out[r * C + c] : xr[c];
            y[r * C + c] = v * s * (w[c] + offset);
        }
        rstd[r] = s;
    }
}
// ------------------------------------------------------------------------------------------------
// Kernel 0 cudnn: the vendor baseline, the graph API's norm-forward node in RMS mode, training phase (it writes
// rstd), into this program's buffers; supports() keeps the fastest engine config (cudnn_norm_prepare).
// Improves: the yardstick of the ladder (plain rows, and QK-norm with S = H * D as plain rows of D).
// Wrong: no residual add, no weight offset (both skipped); the strided QK view, offered as x [tokens, H, D, 1] of
// strides [S, D, 1, 1] with y contiguous, is refused by cuDNN 9.19 (y must have x's strides): skipped, and why.
#ifdef HAVE_CUDNN
static cudnn_norm_state_t g_cudnn;
// QK-norm's strided view in 4-D.
static void cudnn_qk_view(cudnn_norm_t *d, const rms_shape_t *s) {
    int64_t T = s->tokens, H = s->H, D = s->C;
    int64_t xd[4] = {T, H, D, 1}, xs[4] = {s->S, D, 1, 1}, ys[4] = {H * D, D, 1, 1};
    int64_t wd[4] = {1, 1, D, 1}, ws[4] = {D, D, 1, 1}, sd[4] = {T, H, 1, 1}, ss[4] = {H, 1, 1, 1};
    cudnn_norm_dims(d, xd, xs, ys, wd, ws, sd, ss);
}
// The problem as cuDNN's graph sees it, or why its node cannot express it (no GPU: the CPU tests finalize it).
static const char *cudnn_describe(const rms_problem_t *p, cudnn_norm_t *d) {
    const rms_shape_t *s = &p->s;
    if (s->fused) return "cuDNN's norm node has no residual add";
    if (s->offset != 0) return "cuDNN's RMS norm has no weight offset";
    memset(d, 0, sizeof *d);  // compared byte for byte by the plan cache
    d->mode = CUDNN_RMS_NORM;
    d->dtype = p->h.dtype;
    if (s->qk && s->S != s->H * s->C) cudnn_qk_view(d, s);
    else cudnn_norm_rows(d, s->N, s->C);  // QK-norm with S = H * D included: rows of D
    d->x = p->x, d->scale = p->w;
    d->y = p->y, d->rstd = p->rstd;
    d->eps = (float)s->eps;  // no bias, no mean
    snprintf(d->label, sizeof d->label, "RMSNorm %s %s", dtype_name(p->h.dtype), p->h.shape);
    return NULL;
}
static const char *supports_cudnn(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    REASON_TRY(cudnn_refuse_block_size(bs));
    cudnn_norm_t d;
    REASON_TRY(cudnn_describe(p, &d));
    const char *why = cudnn_norm_prepare(&g_cudnn, &d);  // (points at g_cudnn's copy, not at reasonf's buffer)
    int strided = p->s.qk && p->s.S != p->s.H * p->s.C;
    return why && strided ? reasonf("strided QK view: %s", why) : why;
}
static void launch_cudnn(const void *pp, launch_t *l) {
    (void)pp;  // the plan holds the problem's pointers
    cudnn_plan_execute(&g_cudnn.plan, l);
}
#endif
// ------------------------------------------------------------------------------------------------
// Kernel 1 thread_per_row: one thread per row: a loop for the sum of squares, a loop to normalize.
// Improves: the starting point (llm.c's form): correct, and nothing more.
// Wrong: neighbouring threads read addresses C floats apart, so every load is its own memory transaction
// (uncoalesced), and there are only `rows` threads: too few to fill the GPU at small rows.
__global__ void rmsnorm_thread_per_row_kernel(const float *x, const float *w, float *y, float *rstd, long N, long C,
                                              float eps, float offset) {
    long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *xr = x + row * C;
    float ss = 0.f;
    for (long c = 0; c < C; c++) ss += xr[c] * xr[c];
    float r = 1.f / sqrtf(ss / C + eps);
    float *yr = y + row * C;
    for (long c = 0; c < C; c++) yr[c] = xr[c] * r * (w[c] + offset);
    rstd[row] = r;
}

static void launch_thread_per_row(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    rmsnorm_thread_per_row_kernel<<<(unsigned)ceil_div(p->s.N, l->block_size), l->block_size>>>(
        (const float *)p->x, (const float *)p->w, (float *)p->y, p->rstd, p->s.N, p->s.C, (float)p->s.eps,
        (float)p->s.offset);
}
// Kernels 1-3 (the check of 1 and 3): the plain fp32 ladder applies --weight-offset, not the other variants.
static const char *supports_plain(const void *pp, int bs) {
    (void)bs;
    const rms_problem_t *p = (const rms_problem_t *)pp;
    if (p->s.fused) return "kernels 1-3 are the plain teaching ladder: no --fused-add (kernels 4-7 and 12 have it)";
    if (p->s.qk) return "kernels 1-3 are the plain teaching ladder: no QK-norm view (kernels 4-7 and 12 have it)";
    return NULL;
}
// ------------------------------------------------------------------------------------------------
// Kernel 2 block_smem_tree: one block per row; each thread sums the squares of a strided part of the row
// (coalesced), the partial sums meet in a shared-memory tree, then every thread normalizes its part.
// Improves: coalesced reads and a block of threads per row; one launch (RMSNorm has one statistic).
// Wrong: the tree idles half the threads at each step and needs log2(block) barriers; x is read twice
// (the second read mostly hits L2); 4-byte accesses. Needs a power-of-two block.
__global__ void rmsnorm_block_smem_tree_kernel(const float *x, const float *w, float *y, float *rstd, long C,
                                               float eps, float offset) {
    extern __shared__ float shared[];
    long row = blockIdx.x;
    const float *xr = x + row * C;
    float ss = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) ss += xr[c] * xr[c];
    shared[threadIdx.x] = ss;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    float r = 1.f / sqrtf(shared[0] / C + eps);
    float *yr = y + row * C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) yr[c] = xr[c] * r * (w[c] + offset);
    if (threadIdx.x == 0) rstd[row] = r;
}

static void launch_block_smem_tree(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int bs = l->block_size;
    rmsnorm_block_smem_tree_kernel<<<(unsigned)p->s.N, bs, bs * sizeof(float)>>>(
        (const float *)p->x, (const float *)p->w, (float *)p->y, p->rstd, p->s.C, (float)p->s.eps, (float)p->s.offset);
}
static const char *supports_block_smem_tree(const void *pp, int bs) {
    const char *why = supports_plain(pp, bs);
    if (why) return why;
    return is_pow2(bs) ? NULL : "the shared-memory tree needs a power-of-two block size";
}
// ------------------------------------------------------------------------------------------------
// Kernel 3 warp_per_row: one warp per row: lanes stride over the row (coalesced), the sum of squares reduced by
// warp shuffles (warp_sum), __restrict__, and streaming hints on the last read of x and on y (evict-first).
// Improves: no shared memory and no block barrier; the reduction stays inside one warp.
// Wrong: 4-byte accesses, x read twice, a large row left to one warp (few loads in flight), idle lanes at small C;
// the hints do not pay (kernels 4-11 read x and write y plainly; 5-7 keep them for the residual).
__global__ void rmsnorm_warp_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                            float *__restrict__ y, float *__restrict__ rstd, long N, long C,
                                            float eps, float offset) {
    int lane = threadIdx.x % 32;
    long row = blockIdx.x * (long)(blockDim.x / 32) + threadIdx.x / 32;
    if (row >= N) return;  // the whole warp leaves together: the shuffles below see all 32 lanes
    const float *xr = x + row * C;
    float ss = 0.f;
    for (long c = lane; c < C; c += 32) ss += xr[c] * xr[c];
    float r = rsqrtf(warp_sum(ss) / C + eps);
    float *yr = y + row * C;
    for (long c = lane; c < C; c += 32) __stcs(yr + c, __ldcs(xr + c) * r * (w[c] + offset));
    if (lane == 0) rstd[row] = r;
}

static void launch_warp_per_row(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    rmsnorm_warp_per_row_kernel<<<(unsigned)ceil_div(p->s.N, l->block_size / 32), l->block_size>>>(
        (const float *)p->x, (const float *)p->w, (float *)p->y, p->rstd, p->s.N, p->s.C, (float)p->s.eps,
        (float)p->s.offset);
}
// ------------------------------------------------------------------------------------------------
// Arguments of kernels 4-11 (every variant): one struct, passed by value, first (the convention of all three
// programs; the fp32 steps 1-3 keep llm.c's positional arguments). The pack and host helpers they share.

typedef struct {
    const void *x;  // the x view: row r at (r / H) * S + (r % H) * C
    void *res;      // fused add: residual [N, C], updated in place; NULL otherwise
    const void *w;  // [C]
    void *y;        // [N, C], contiguous
    float *rstd;    // [N]
    long N, C, H, S;
    float eps, offset;
} rms_args_t;
__device__ __forceinline__ long x_row_offset(const rms_args_t &a, long row) {
    return a.H == 1 ? row * a.S : (row / a.H) * a.S + (row % a.H) * a.C;
}
// Fused add of one pack: v = round_T(v + r), computed in fp32 (the value stored and then normalized).
template <typename T, int VEC> __device__ __forceinline__ void add_round(Pack<T, VEC> &v, const Pack<T, VEC> &r) {
#pragma unroll
    for (int j = 0; j < VEC; j++) v.v[j] = from_float<T>(to_float(v.v[j]) + to_float(r.v[j]));
}
// The fused add of a thread's packs i = first + p * step (p < P, i < nvec), each stored back (evict-first).
template <typename T, int VEC, int P>
__device__ __forceinline__ void add_residual(Pack<T, VEC> (&v)[P], T *rr, int first, int step, int nvec) {
#pragma unroll
    for (int p = 0; p < P; p++) {
        int i = first + p * step;
        if (i < nvec) {
            add_round<T, VEC>(v[p], load_pack_cs<T, VEC>(rr + (long)i * VEC));
            store_pack_cs<T, VEC>(rr + (long)i * VEC, v[p]);
        }
    }
}
template <typename T, int VEC> __device__ __forceinline__ float pack_sum_squares(const Pack<T, VEC> &v) {
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        float f = to_float(v.v[j]);
        s += f * f;
    }
    return s;
}
template <typename T, int VEC>
__device__ __forceinline__ Pack<T, VEC> pack_normalize(const Pack<T, VEC> &v, const Pack<T, VEC> &w, float r,
                                                       float offset) {
    Pack<T, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(to_float(v.v[j]) * r * (to_float(w.v[j]) + offset));
    return out;
}
static rms_args_t rms_args(const rms_problem_t *p) {
    const rms_shape_t *s = &p->s;
    return rms_args_t{p->x, s->fused ? p->res : NULL, p->w, p->y, p->rstd, s->N, s->C, s->H, s->S, (float)s->eps,
                      (float)s->offset};
}
// Launches fn, a kernel of rms_args_t alone, on p (launch_kernel: clusters of cl blocks, --pdl).
static void launch_rms(const void *fn, const rms_problem_t *p, long blocks, dim3 block, size_t smem, int cl) {
    rms_args_t a = rms_args(p);
    void *args[] = {&a};
    launch_kernel(fn, blocks, block, smem, args, cl);
}
// The widest pack (elements) whose accesses stay aligned: it divides C and the token stride S, 16 bytes if it can.
static int vec_width_for(dtype_t d, long C, long S) {
    return (int)gcd_long(gcd_long(16 / (long)dtype_size(d), C), S);
}
static int vec_width(const rms_problem_t *p) { return vec_width_for(p->h.dtype, p->s.C, p->s.S); }
// Dynamic shared memory beyond 48 KB must be opted into, once per kernel (outside the timed launches).
static void ensure_dynamic_smem(const void *fn, size_t bytes) {
    static const void *fns[64];
    static size_t have[64];
    static int n = 0;
    int i = 0;
    while (i < n && fns[i] != fn) i++;
    if (i < n && have[i] >= bytes) return;
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    if (i == n && n < 64) fns[n++] = fn;
    if (i < 64) have[i] = bytes;
}
// The rungs' plans (their block size under the dispatcher; pure but for plan_fit's check) read these.
// Rows an SM: rows / this device's SMs (one SM where none is known: the CPU tests).
static double rows_per_sm(const rms_problem_t *p) { return per_sm((double)p->s.N); }
// Packs a row at the rung's pack width (vec elements).
static long row_packs(const rms_problem_t *p, int vec) { return p->s.C / vec; }
// A block a row: a pack a thread within [32, hi], at most an SM's share of sm_threads over its rows (down to min_cap),
// at least the threads that hold C at `elems` elements each (in elements: 16-bit packs cost more instructions).
static int row_block_plan(const rms_problem_t *p, int vec, int hi, int sm_threads, int min_cap, int elems) {
    int bs = pow2_at_least((double)row_packs(p, vec), 32, hi);
    const int cap = pow2_down(sm_threads / rows_per_sm(p), 32, 1024);
    if (bs > (cap > min_cap ? cap : min_cap)) bs = cap > min_cap ? cap : min_cap;
    const int need = pow2_at_least((double)p->s.C / elems, 32, hi);
    return bs > need ? bs : need;
}
// ------------------------------------------------------------------------------------------------
// Kernel 4 block2d_vec: one 2-D block per row (lanes x warps), shuffles in each warp, then one warp across warps;
// every access a pack of VEC elements, the widest that divides C and S (16 bytes when it can).
// Improves: 16-byte accesses (a quarter of scalar fp32's instructions, an eighth of 16-bit's), every variant.
// Wrong: x (or the residual) read twice, the second time from L2 only while the rows in flight fit there; few
// packs a thread in flight before the first use.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) rmsnorm_block2d_vec_kernel(rms_args_t a) {
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ float warp_ss[32];
    __shared__ float s_rstd;
    const int lane = threadIdx.x, warp = threadIdx.y, nwarps = blockDim.y;
    const int tid = warp * 32 + lane, nthreads = nwarps * 32;
    long row = blockIdx.x;
    const T *xr = (const T *)a.x + x_row_offset(a, row);
    T *rr = a.res ? (T *)a.res + row * a.C : NULL;
    int nvec = (int)(a.C / VEC);  // the launcher guarantees C % VEC == 0
    float ss = 0.f;
    for (int i = tid; i < nvec; i += nthreads) {
        Pack<T, VEC> v = load_pack<T, VEC>(xr + (long)i * VEC);  // cached: read again below (or the residual)
        if (rr) {
            add_round<T, VEC>(v, load_pack<T, VEC>(rr + (long)i * VEC));
            store_pack<T, VEC>(rr + (long)i * VEC, v);
        }
        ss += pack_sum_squares<T, VEC>(v);
    }
    ss = warp_sum(ss);
    if (lane == 0) warp_ss[warp] = ss;
    __syncthreads();
    if (warp == 0) {
        float t = lane < nwarps ? warp_ss[lane] : 0.f;
        t = warp_sum(t);
        if (lane == 0) s_rstd = rsqrtf(t / a.C + a.eps);
    }
    __syncthreads();
    float r = s_rstd;
    const T *w = (const T *)a.w;
    T *yr = (T *)a.y + row * a.C;
    for (int i = tid; i < nvec; i += nthreads) {
        // the residual was written by this same thread above: a plain load sees it
        Pack<T, VEC> v = rr ? load_pack<T, VEC>(rr + (long)i * VEC) : load_pack<T, VEC>(xr + (long)i * VEC);
        store_pack<T, VEC>(yr + (long)i * VEC, pack_normalize<T, VEC>(v, load_pack<T, VEC>(w + (long)i * VEC), r, a.offset));
    }
    if (tid == 0) a.rstd[row] = r;
}

// 2-D block: 32 lanes x block_size / 32 warps.
template <typename T, int VEC>
static void launch_block2d_vec_t(const rms_problem_t *p, int bs) {
    launch_rms((const void *)rmsnorm_block2d_vec_kernel<T, VEC>, p, p->s.N, dim3(32, bs / 32), 0, 1);
}
static void launch_block2d_vec(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    DISPATCH_VEC(p->h.dtype, vec_width(p), launch_block2d_vec_t, p, l->block_size);
}
// The plan (no supports_: it runs every problem): a block a row (row_block_plan) within [32, 1024], at most 2048
// threads over an SM's rows (64 at least), at least C / 16 threads (C / 8 with the fused add: three streams a row).
static int plan_block2d_vec(const void *pp) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    return row_block_plan(p, vec_width(p), 1024, 2048, 64, p->s.fused ? 8 : 16);
}
// ------------------------------------------------------------------------------------------------
// Kernel 5 block_row_cache: x read once. A block a row, each thread's PACKS packs in registers from before the
// reduction (block_sum) to the normalize; a row beyond block_size x 8 packs in shared memory (a second kernel).
// Improves: x (and the residual) cross DRAM once; a thread's loads are all issued before the first use.
// Wrong: at small C most of the block idles; a row in shared memory (up to ~227 KB a block) leaves room for one or
// two blocks an SM, whose load, reduce and write phases do not overlap; fp32 rows beyond 56K elements fit neither.
// Packs a thread: the smallest power of two that holds the row (at most 8: 8 packs of 16 bytes are 32 registers,
// within the 64 of a 1024-thread block); 0 when it does not fit (the shared-memory kernel).
static const int ROWREG_MAX_PACKS = 8;
static int rowreg_packs(long nvec, int bs, int max_packs) {
    for (int packs = 1; packs <= max_packs; packs *= 2) if ((long)packs * bs >= nvec) return packs;
    return 0;
}
template <typename T, int VEC, int PACKS>
__global__ void __launch_bounds__(1024) rmsnorm_block_row_cache_regs_kernel(rms_args_t a) {
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ float scratch[33];
    long row = blockIdx.x;
    const T *xr = (const T *)a.x + x_row_offset(a, row);
    T *rr = a.res ? (T *)a.res + row * a.C : NULL;
    int nvec = (int)(a.C / VEC);
    Pack<T, VEC> v[PACKS];
    float ss = 0.f;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) v[p] = load_pack<T, VEC>(xr + (long)i * VEC);
    }
    if (rr) add_residual<T, VEC, PACKS>(v, rr, threadIdx.x, blockDim.x, nvec);
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) ss += pack_sum_squares<T, VEC>(v[p]);
    }
    float r = rsqrtf(block_sum(ss, scratch) / a.C + a.eps);
    const T *w = (const T *)a.w;
    T *yr = (T *)a.y + row * a.C;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) {
            Pack<T, VEC> out = pack_normalize<T, VEC>(v[p], load_pack<T, VEC>(w + (long)i * VEC), r, a.offset);
            store_pack<T, VEC>(yr + (long)i * VEC, out);
        }
    }
    if (threadIdx.x == 0) a.rstd[row] = r;
}
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) rmsnorm_block_row_cache_smem_kernel(rms_args_t a) {
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *row_s = reinterpret_cast<T *>(smem_raw);
    __shared__ float scratch[33];
    long row = blockIdx.x;
    const T *xr = (const T *)a.x + x_row_offset(a, row);
    T *rr = a.res ? (T *)a.res + row * a.C : NULL;
    int nvec = (int)(a.C / VEC);
    float ss = 0.f;
    for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
        Pack<T, VEC> v = load_pack<T, VEC>(xr + (long)i * VEC);
        if (rr) {
            add_round<T, VEC>(v, load_pack_cs<T, VEC>(rr + (long)i * VEC));
            store_pack_cs<T, VEC>(rr + (long)i * VEC, v);
        }
        store_pack<T, VEC>(row_s + (long)i * VEC, v);
        ss += pack_sum_squares<T, VEC>(v);
    }
    float r = rsqrtf(block_sum(ss, scratch) / a.C + a.eps);
    const T *w = (const T *)a.w;
    T *yr = (T *)a.y + row * a.C;
    for (int i = threadIdx.x; i < nvec; i += blockDim.x) {  // the thread's own packs: no barrier needed
        Pack<T, VEC> v = load_pack<T, VEC>(row_s + (long)i * VEC);
        Pack<T, VEC> out = pack_normalize<T, VEC>(v, load_pack<T, VEC>(w + (long)i * VEC), r, a.offset);
        store_pack<T, VEC>(yr + (long)i * VEC, out);
    }
    if (threadIdx.x == 0) a.rstd[row] = r;
}

// The instance: packs 1..8 in registers, 0 in shared memory.
template <typename T, int VEC>
static void block_row_cache_kernel_for(int packs, const void **fn) {
    if (!packs) *fn = (const void *)rmsnorm_block_row_cache_smem_kernel<T, VEC>;
    else with_pow2<1, ROWREG_MAX_PACKS>(packs, [&](auto P) {
        *fn = (const void *)rmsnorm_block_row_cache_regs_kernel<T, VEC, P.value>;
    });
}
static void launch_block_row_cache(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int bs = l->block_size, vec = vec_width(p);
    int packs = rowreg_packs(p->s.C / vec, bs, ROWREG_MAX_PACKS);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, block_row_cache_kernel_for, packs, &fn);
    size_t smem = 0;
    if (packs) {
        snprintf(l->path, sizeof l->path, "registers, %d packs of %d a thread", packs, vec);
    } else {
        smem = (size_t)p->s.C * dtype_size(p->h.dtype);
        ensure_dynamic_smem(fn, smem);
        snprintf(l->path, sizeof l->path, "shared memory, %.1f KB a row, packs of %d", smem / 1024.0, vec);
    }
    launch_rms(fn, p, p->s.N, bs, smem, 1);
}
static const char *supports_block_row_cache(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int vec = vec_width(p);
    int packs = rowreg_packs(p->s.C / vec, bs, ROWREG_MAX_PACKS);
    const size_t optin = g_dev.prop.sharedMemPerBlockOptin, scratch = 33 * sizeof(float);  // (the kernel's scratch)
    size_t need = (size_t)p->s.C * dtype_size(p->h.dtype), have = optin > scratch ? optin - scratch : 0;
    if (!packs && need > have)
        return reasonf("row of %ld fits neither %d threads x %d packs of %d nor %.0f KB of shared memory", p->s.C, bs,
                       ROWREG_MAX_PACKS, vec, have / 1024.0);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, block_row_cache_kernel_for, packs, &fn);
    return block_fits(fn, bs);
}
// The plan: a block a row (row_block_plan) within [32, 1024], at most 2048 threads over an SM's rows (>= 128), at
// least C / 32 threads (the row in registers up to 1024 x 32 elements); C / 8 with the fused add (three streams).
static int block_row_cache_bs(const rms_problem_t *p) {
    return row_block_plan(p, vec_width(p), 1024, 2048, 128, p->s.fused ? 8 : 32);
}
static int plan_block_row_cache(const void *pp) {
    return plan_fit(pp, block_row_cache_bs((const rms_problem_t *)pp), supports_block_row_cache);
}
// ------------------------------------------------------------------------------------------------
// Kernel 6 subwarp_rows: the small-C specialist (QK-norm's head_dim 64..256 above all): TPR lanes a row (1..32),
// 32 / TPR rows a warp, the row in registers, the sum reduced by shuffles within each group of TPR lanes.
// Improves: at small C every lane has work and several 16-byte loads in flight, with no shared memory nor barrier;
// a lane of at most 4 packs loads its w with its x (no second trip between the sum and the stores: 3-5% at bf16).
// Wrong: rows of at most 32 lanes x 8 packs (1024 fp32 / 2048 16-bit elements); rows whose C is not a multiple of
// 16 bytes use narrower packs.
// Lanes a row: the fewest that hold the row in 4 packs each, else a warp of up to 8 packs each; 0: it does not fit.
#define SUBWARP_MAX_PACKS 8
static int subwarp_tpr(long nvec) {
    int tpr = 1;
    while (tpr < 32 && (long)tpr * 4 < nvec) tpr *= 2;
    return (long)tpr * (tpr == 32 ? SUBWARP_MAX_PACKS : 4) >= nvec ? tpr : 0;
}
template <typename T, int VEC, int TPR, int MAXP>
__global__ void __launch_bounds__(1024) rmsnorm_subwarp_rows_kernel(rms_args_t a) {
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    int rows_per_block = blockDim.x / TPR;
    long row = blockIdx.x * (long)rows_per_block + threadIdx.x / TPR;
    int lane = threadIdx.x % TPR;
    bool valid = row < a.N;  // no early return: every lane of the warp must reach the shuffles
    const T *xr = (const T *)a.x + (valid ? x_row_offset(a, row) : 0);
    T *rr = a.res && valid ? (T *)a.res + row * a.C : NULL;
    int nvec = (int)(a.C / VEC);
    Pack<T, VEC> v[MAXP], wv[MAXP];
    float ss = 0.f;
    subwarp_load_row<T, VEC, TPR, MAXP>(v, xr, valid, lane, nvec);
    // w's packs go out with x's where a lane holds at most 4 (8 packs of x and 8 of w cost too many registers), so
    // that the normalize after the sum waits on no second trip to memory
    constexpr bool EARLY_W = MAXP <= 4;
    const T *w = (const T *)a.w;
    if constexpr (EARLY_W) subwarp_load_row<T, VEC, TPR, MAXP>(wv, w, true, lane, nvec);
    if (rr) add_residual<T, VEC, MAXP>(v, rr, lane, TPR, nvec);
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (valid && i < nvec) ss += pack_sum_squares<T, VEC>(v[p]);
    }
    if constexpr (EARLY_W && sizeof(Pack<T, VEC>) == 16) {  // w and x converted again for y, not held as fp32 (2x)
#pragma unroll
        for (int p = 0; p < MAXP; p++) keep_packed(wv[p]);
#pragma unroll
        for (int p = 0; p < MAXP; p++) keep_packed(v[p]);
    }
    ss = group_sum<TPR>(ss);
    if (!valid) return;
    float r = rsqrtf(ss / a.C + a.eps);
    T *yr = (T *)a.y + row * a.C;
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (i < nvec)
            store_pack<T, VEC>(yr + (long)i * VEC,
                                  pack_normalize<T, VEC>(v[p], EARLY_W ? wv[p] : load_pack<T, VEC>(w + (long)i * VEC), r, a.offset));
    }
    if (lane == 0) a.rstd[row] = r;
}

template <typename T, int VEC>
static void subwarp_rows_kernel_for(int tpr, long nvec, const void **fn) {
    if (tpr == 32 && nvec > 32 * 4) *fn = (const void *)rmsnorm_subwarp_rows_kernel<T, VEC, 32, SUBWARP_MAX_PACKS>;
    else with_pow2<1, 32>(tpr, [&](auto P) { *fn = (const void *)rmsnorm_subwarp_rows_kernel<T, VEC, P.value, 4>; });
}
static void launch_subwarp_rows(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int bs = l->block_size, vec = vec_width(p), tpr = subwarp_tpr(p->s.C / vec);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, subwarp_rows_kernel_for, tpr, p->s.C / vec, &fn);
    launch_rms(fn, p, ceil_div(p->s.N, bs / tpr), bs, 0, 1);
    snprintf(l->path, sizeof l->path, "%d lanes a row, %d rows a block, packs of %d", tpr, bs / tpr, vec);
}
static const char *supports_subwarp_rows(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int vec = vec_width(p), tpr = subwarp_tpr(p->s.C / vec);
    if (!tpr) return reasonf("row of %ld needs more than 32 lanes x %d packs of %d", p->s.C, SUBWARP_MAX_PACKS, vec);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, subwarp_rows_kernel_for, tpr, p->s.C / vec, &fn);
    return block_fits(fn, bs);
}
// The plan: 4 x lanes a row x rows an SM threads, a power of two in [64, 128] (small blocks spread rows wider); up to
// 256 where a warp holds a row without 16-byte packs (4 rows of a few hundred bytes: their blocks' launches bound it).
static int subwarp_rows_bs(const rms_problem_t *p) {
    const int vec = vec_width(p), tpr = subwarp_tpr(row_packs(p, vec)), odd = vec != 16 / (int)dtype_size(p->h.dtype);
    return pow2_down(4.0 * (tpr ? tpr : 32) * rows_per_sm(p), 64, tpr == 32 && odd ? 256 : 128);
}
static int plan_subwarp_rows(const void *pp) {
    return plan_fit(pp, subwarp_rows_bs((const rms_problem_t *)pp), supports_subwarp_rows);
}
// ------------------------------------------------------------------------------------------------
// Kernel 7 cluster_dsmem: very large C. A row split across a thread-block cluster of CL <= 8 blocks (sm_90+), each
// holding its slice in registers; every warp pushes its partial sum into every block of the cluster through
// distributed shared memory (cluster_push_sum: st.async, counted by each block's mbarrier), and each block adds
// its slots in one fixed order (the same rstd everywhere): no block reads another's memory or waits at exit.
// Improves: x read once for rows far beyond one block's registers (fp32 C = 65536 is 256 KB), over CL SMs.
// Wrong: a block waits, between its loads and its stores, for the slowest of its cluster; CL comes from a rule
// (4 packs a thread, the fewest blocks that hold the row), not a search; at small C the cluster is 1 block.
// The cluster size CL: the smallest power of two (<= 8) whose blocks hold the row in 4 packs a thread, else 8
// blocks with 8 packs a thread; 0 when even that is too small.
#define CLUSTER_MAX_BLOCKS 8
static int cluster_plan(long nvec, int bs, int *cl, int *packs) {
    *cl = 1;
    while (*cl < CLUSTER_MAX_BLOCKS && (long)*cl * bs * 4 < nvec) *cl *= 2;
    *packs = (long)*cl * bs * 4 >= nvec ? 4 : 8;
    return (long)*cl * bs * *packs >= nvec;
}
template <typename T, int VEC, int PACKS>
__global__ void __launch_bounds__(1024, 1) rmsnorm_cluster_dsmem_kernel(rms_args_t a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ ClusterPush<float, 512> push;  // 32 warps x 16 blocks: the cluster's partial sums
    const unsigned rank = cluster.block_rank(), nblocks = cluster.num_blocks();
    cluster_push_begin(&push, (int)nblocks);
    long row = blockIdx.x / nblocks;  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const T *xr = (const T *)a.x + x_row_offset(a, row);
    T *rr = a.res ? (T *)a.res + row * a.C : NULL;
    int nvec = (int)(a.C / VEC);
    int first = (int)rank * blockDim.x * PACKS + threadIdx.x;  // pack p of this thread: first + p * blockDim.x
    // packs of this thread inside the row: one count instead of a predicate per pack
    int np = nvec > first ? (nvec - first + blockDim.x - 1) / blockDim.x : 0;
    Pack<T, VEC> v[PACKS] = {};
    float ss = 0.f;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = first + p * blockDim.x;
        if (p < np) v[p] = load_pack<T, VEC>(xr + (long)i * VEC);
    }
    if (rr) {
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (p < np) {
                add_round<T, VEC>(v[p], load_pack_cs<T, VEC>(rr + (long)i * VEC));
                store_pack_cs<T, VEC>(rr + (long)i * VEC, v[p]);
            }
        }
    }
#pragma unroll
    for (int p = 0; p < PACKS; p++) if (p < np) ss += pack_sum_squares<T, VEC>(v[p]);
    // one round: the pushed partials (a block alone: one barrier)
    const float r = rsqrtf(cluster_push_sum(ss, &push, (int)nblocks) / a.C + a.eps);
    const T *w = (const T *)a.w;
    T *yr = (T *)a.y + row * a.C;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = first + p * blockDim.x;
        if (p < np)
            store_pack<T, VEC>(yr + (long)i * VEC,
                                  pack_normalize<T, VEC>(v[p], load_pack<T, VEC>(w + (long)i * VEC), r, a.offset));
    }
    if (rank == 0 && threadIdx.x == 0) a.rstd[row] = r;
#endif
}

template <typename T, int VEC>
static void cluster_dsmem_kernel_for(int packs, const void **fn) {
    with_pow2<4, 8>(packs, [&](auto P) { *fn = (const void *)rmsnorm_cluster_dsmem_kernel<T, VEC, P.value>; });
}
static void launch_cluster_dsmem(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int bs = l->block_size, vec = vec_width(p), cl = 0, packs = 0;
    cluster_plan(p->s.C / vec, bs, &cl, &packs);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, cluster_dsmem_kernel_for, packs, &fn);
    launch_rms(fn, p, p->s.N * cl, bs, 0, cl);
    snprintf(l->path, sizeof l->path, "cluster of %d blocks, %d packs of %d a thread", cl, packs, vec);
}
static const char *supports_cluster_dsmem(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const char *why = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (why) return why;
    int vec = vec_width(p), cl = 0, packs = 0;
    if (!cluster_plan(p->s.C / vec, bs, &cl, &packs))
        return reasonf("row of %ld needs more than %d blocks x %d threads x 8 packs of %d", p->s.C, CLUSTER_MAX_BLOCKS,
                       bs, vec);
    if ((double)p->s.N * cl > 2147483647.0) return reasonf("%ld rows x %d blocks exceed the grid", p->s.N, cl);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, cluster_dsmem_kernel_for, packs, &fn);
    return cluster_fits(fn, bs, cl);
}
// The plan: a row of more than 2048 packs in 8 blocks of 32 packs a thread (below a row an SM) or 64, within
// [256, 1024]; shorter rows row_block_plan within [32, 1024], <= 1024 threads over an SM's rows (>= 64), >= C / 16.
static int cluster_dsmem_bs(const rms_problem_t *p) {
    const long nvec = row_packs(p, vec_width(p));
    return nvec > 2048 ? pow2_at_least((double)nvec / (rows_per_sm(p) < 1 ? 32 : 64), 256, 1024)
                       : row_block_plan(p, vec_width(p), 1024, 1024, 64, 16);
}
static int plan_cluster_dsmem(const void *pp) {
    return plan_fit(pp, cluster_dsmem_bs((const rms_problem_t *)pp), supports_cluster_dsmem);
}
// ------------------------------------------------------------------------------------------------
// Kernel 8 latency_split: a few rows (a decode step, plain rows), whose time is a critical path of memory latency,
// barriers and a second trip for w: the row over a cluster of CL = 1..16 blocks (a block size given sets CL, so
// the sweep of block sizes sweeps CL); w loaded with x (--pdl: w before the wait for the grid before, x after);
// one reduction round (cluster_push_sum as kernel 7's). P packs a thread (the plan's, or --packs): 2 = fewer
// instructions and loads before the sum, what a few cold rows wait on; 4 = more bytes in flight, for many rows.
// Improves: the time of a few rows (bf16 1x8192: 2.11 us at P 2, 2.43 at P 4).
// Wrong: at most 512 threads a block and 16 blocks a row (fp32 C <= 131072 at P 4, 65536 at P 2); 16-byte packs
// only; with many rows the cluster buys nothing and w in registers costs occupancy.
// Loads a thread's PACKS packs of x and w as raw words (load_raw: why), in the order of the launch (see above).
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ void latency_split_load(RawPack<T, VEC> *xraw, RawPack<T, VEC> *wraw,
                                                   const T *__restrict__ xr, const T *__restrict__ w, int first,
                                                   int nvec, int pdl) {
    if (pdl) {  // chained (--pdl): the weight, not written by the grid before, before the wait for it; x after
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) wraw[p] = load_raw<T, VEC>(w + (long)i * VEC);
        }
        pdl_wait();  // x is read, and y written, only once the grid before has finished
        pdl_trigger();
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) xraw[p] = load_raw<T, VEC>(xr + (long)i * VEC);
        }
    } else {  // alone: each pack's x and w issued together
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) {
                xraw[p] = load_raw<T, VEC>(xr + (long)i * VEC);
                wraw[p] = load_raw<T, VEC>(w + (long)i * VEC);
            }
        }
    }
}
// A block's part of its row at PACKS packs a thread at most, the loads in the order pdl gives.
template <typename T, int VEC, int CL, int PACKS>
__device__ __forceinline__ void latency_split_row(const rms_args_t &a, int pdl) {
    __shared__ ClusterPush<float, 16 * CL> push;  // 16 warps x CL blocks: the cluster's partial sums
    cluster_push_begin(&push, CL);
    const int rank = (int)(blockIdx.x % CL);  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const long row = blockIdx.x / CL;
    const int nvec = (int)(a.C / VEC), first = rank * blockDim.x * PACKS + threadIdx.x;
    const T *__restrict__ w = (const T *)a.w;
    const T *__restrict__ xr = (const T *)a.x + row * a.C;
    RawPack<T, VEC> xraw[PACKS], wraw[PACKS];
    latency_split_load<T, VEC, PACKS>(xraw, wraw, xr, w, first, nvec, pdl);
    Pack<T, VEC> v[PACKS], wv[PACKS];
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        v[p] = raw_pack<T, VEC>(xraw[p]);
        wv[p] = raw_pack<T, VEC>(wraw[p]);
    }
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < PACKS; p++) if (first + p * (int)blockDim.x < nvec) s += pack_sum_squares<T, VEC>(v[p]);
    s = cluster_push_sum(s, &push, CL);  // a block alone (CL = 1): one barrier
    const float r = rsqrtf(s / a.C + a.eps);
    T *__restrict__ yr = (T *)a.y + row * a.C;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < nvec) store_pack<T, VEC>(yr + (long)i * VEC, pack_normalize<T, VEC>(v[p], wv[p], r, a.offset));
    }
    if (rank == 0 && threadIdx.x == 0) a.rstd[row] = r;
}
// P = 4, the launch order an argument; P = 2, the order compiled in (PDL 1: chained), an instance for each.
template <typename T, int VEC, int CL>
__global__ void __launch_bounds__(512) rmsnorm_latency_split_kernel(rms_args_t a, int pdl) {
    latency_split_row<T, VEC, CL, 4>(a, pdl);
}
template <typename T, int VEC, int CL, int PDL>
__global__ void __launch_bounds__(512) rmsnorm_latency_split2_kernel(rms_args_t a) {
    latency_split_row<T, VEC, CL, 2>(a, PDL);
}

// The instance of a cluster size (16-byte packs only) at 4 packs a thread, or at 2 in this launch's order (g_pdl).
template <typename T, int VEC> static const void *latency_split_for(int cl, int packs) {
    const void *fn = NULL;
    with_pow2<1, 16>(cl, [&](auto CL) {
        fn = packs == 4 ? (const void *)rmsnorm_latency_split_kernel<T, VEC, CL.value>
             : g_pdl    ? (const void *)rmsnorm_latency_split2_kernel<T, VEC, CL.value, 1>
                        : (const void *)rmsnorm_latency_split2_kernel<T, VEC, CL.value, 0>;
    });
    return fn;
}
static const void *latency_split_fn4(dtype_t d, int cl) { return PACK16_CALL(d, latency_split_for, cl, 4); }
static const void *latency_split_fn2(dtype_t d, int cl) { return PACK16_CALL(d, latency_split_for, cl, 2); }
// The plan (blocks a row, threads) at `packs` packs a thread: split_row_plan (req_bs 0: its own block size), or 0.
static int latency_split_plan(const rms_problem_t *p, int req_bs, int packs, int *cl) {
    return split_row_plan(p->h.dtype, p->s.N, p->s.C / vec_width(p), packs, 512, req_bs, g_cluster,
                          packs == 2 ? latency_split_fn2 : latency_split_fn4, cl);
}
// Kernels 8 and 9 take plain rows alone: why not, or NULL.
static const char *plain_rows_only(const rms_problem_t *p) {
    if (p->s.fused) return "plain rows only: no --fused-add (kernels 4-7 and 12 have it)";
    if (p->s.H != 1 || p->s.S != p->s.C) return "plain rows only: no QK-norm view (kernels 4-7 and 12 have it)";
    return NULL;
}
// The plan's packs a thread (pure: the CPU tests ask it): 2 where a row holds at most 32 packs, or at most 2048 at
// fewer than a row an SM (8192 under an eighth), or at most 512 at fewer than 4 rows an SM; else 4, and 4 where 2
// cannot take the problem (the variants kernel 8 refuses; before sm_90, no clusters: rows over a block of 512 x 2).
static int latency_split_packs(const rms_problem_t *p) {
    const long nvec = row_packs(p, vec_width(p));
    const double rows = rows_per_sm(p);
    if (plain_rows_only(p) || vec_width(p) != 16 / (int)dtype_size(p->h.dtype) || (g_dev.prop.major < 9 && nvec > 1024))
        return 4;
    return nvec <= 32 || (rows < 1 && nvec <= (rows < 0.125 ? 8192 : 2048)) || (rows < 4 && nvec <= 512) ? 2 : 4;
}
static int split_packs(const rms_problem_t *p) { return g_packs ? g_packs : latency_split_packs(p); }  // --packs
static void launch_latency_split(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const int packs = split_packs(p);
    int cl = 0, bs = latency_split_plan(p, l->block_size, packs, &cl), pdl = g_pdl;
    rms_args_t a = rms_args(p);
    void *args[] = {&a, &pdl};  // (P = 2 takes a alone)
    launch_kernel((packs == 2 ? latency_split_fn2 : latency_split_fn4)(p->h.dtype, cl), p->s.N * cl, bs, 0, args, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads, <= %d packs each; w with x; one reduction",
             cl, cl > 1 ? "s" : "", bs, packs);
}
// Why a row of nvec packs of `full` elements has no split plan at bs threads, `packs` packs a thread (kernels 8, 9).
static const char *split_no_plan(const rms_problem_t *p, long nvec, long full, int bs, int packs) {
    if (nvec > 16L * 512 * packs)
        return reasonf("row of %ld exceeds 16 blocks x 512 threads x %d packs of %ld", p->s.C, packs, full);
    if (nvec > 512L * packs && needs_sm90(g_dev.prop.major, g_dev.sm))
        return needs_sm90(g_dev.prop.major, g_dev.sm);  // a row over several blocks: a cluster
    return bs ? reasonf("no plan at %d threads: at most 512, and blocks x threads x %d packs must hold the row", bs,
                        packs)
              : "the cluster of blocks a row does not fit this GPU";
}
// At --packs, else at the plan's packs a thread.
static const char *supports_latency_split(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const char *why = plain_rows_only(p);
    if (why) return why;
    const int full = 16 / (int)dtype_size(p->h.dtype), packs = split_packs(p);
    int cl = 0;
    if (vec_width(p) != full) return reasonf("needs 16-byte packs: C a multiple of %d", full);
    return latency_split_plan(p, bs, packs, &cl) ? NULL : split_no_plan(p, p->s.C / full, full, bs, packs);
}
// The power of two at P packs a thread that sets the blocks a row (the fewest that hold it; the plan then trims their
// threads to the row: split_row_threads): P / 2 packs a thread below 4 rows an SM (P 4) or a row an SM (P 2), P from
// there, within [32, 256] (P 4) or [64, 256] (P 2), but a row of > 512 packs below a row an SM over about 8 blocks
// of 128-512 at P 2; at least the threads 16 blocks need (up to 512), 8 where rows fill the SMs (clusters of 16 cost).
static int latency_split_bs(const rms_problem_t *p, int packs) {
    const long nvec = row_packs(p, vec_width(p));
    const int few = rows_per_sm(p) < (packs == 2 ? 1 : 4);
    if (few && packs == 2 && nvec > 512) return pow2_at_least((double)nvec / 16, 128, 512);
    const int bs = pow2_at_least((double)nvec / (few ? packs / 2 : packs), packs == 2 ? 64 : 32, 256);
    const int need = pow2_at_least((double)nvec / ((rows_per_sm(p) >= 1 ? 8 : 16) * packs), 32, 512);
    return bs > need ? bs : need;
}
static int plan_latency_split(const void *pp) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const int packs = split_packs(p);  // the blocks of its power of two, each trimmed to its share
    return plan_fit(pp, split_row_threads(row_packs(p, vec_width(p)), packs, latency_split_bs(p, packs)),
                    supports_latency_split);
}
// ------------------------------------------------------------------------------------------------
// Kernel 9 odd_rows: rows of odd length (plain rows), most starting off a 16-byte boundary, where the kernels above
// fall back to the widest pack that divides C. Each row cut where its bytes allow (row_parts): a head (< 8 elements)
// to the first 16-byte boundary and a tail, an element a thread, the middle in 16-byte packs; the row over 1-16
// blocks as in kernel 8 (4 packs a thread). w, element by element: with x's packs where the grid is resident at
// once, else after the sum (EARLY false: a trip more, w's registers freed) where that doubles an SM's blocks or more.
// Improves: odd rows at 16 bytes a load, a long odd row over many SMs (bf16 4096x16385: 1.30x with w late).
// Wrong: w loaded element by element; at most 4 packs a thread, 512 threads, 16 blocks a row (fp32 C <= 131075,
// 16-bit C <= 262151); no fused add, no QK-norm view.
#define ODD_PACKS 4
template <typename T, int CL, bool EARLY>  // EARLY: w loaded with x, before the sum; else after it
__global__ void __launch_bounds__(512) rmsnorm_odd_rows_kernel(rms_args_t a) {
    constexpr int VEC = 16 / sizeof(T);
    __shared__ ClusterPush<float, 16 * CL> push;  // 16 warps x CL blocks: the cluster's partial sums
    cluster_push_begin(&push, CL);
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    const int rank = (int)(blockIdx.x % CL);  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const long row = blockIdx.x / CL;
    const T *__restrict__ xr = (const T *)a.x + row * a.C;
    const T *__restrict__ w = (const T *)a.w;
    T *__restrict__ yr = (T *)a.y + row * a.C;
    const RowParts rp = row_parts(xr, a.C);  // y's rows start as x's: both buffers are 256-byte aligned
    const int g = rank * blockDim.x + threadIdx.x;  // the thread's number in the row's cluster
    // the head's and the tail's elements, one a thread
    const int ns = rp.head + rp.tail;
    const long scol = g < rp.head ? g : rp.head + (long)rp.packs * VEC + (g - rp.head);
    const float sv = g < ns ? to_float(xr[scol]) : 0.f;
    const int first = rank * blockDim.x * ODD_PACKS + threadIdx.x;  // pack p of this thread: first + p * blockDim.x
    RawPack<T, VEC> raw[ODD_PACKS];
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < rp.packs) raw[p] = load_raw<T, VEC>(xr + rp.head + (long)i * VEC);
    }
    // EARLY: w's elements for the thread's packs and its head or tail element, in flight with x's
    Pack<T, VEC> wv[ODD_PACKS];
    float sw = 0.f;
    if (EARLY) {
#pragma unroll
        for (int p = 0; p < ODD_PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < rp.packs) wv[p] = load_elements<T, VEC>(w + rp.head + (long)i * VEC);
        }
        sw = g < ns ? to_float(w[scol]) : 0.f;
    }
    float s = sv * sv;
    Pack<T, VEC> v[ODD_PACKS];
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        v[p] = raw_pack<T, VEC>(raw[p]);
        if (first + p * (int)blockDim.x < rp.packs) s += pack_sum_squares<T, VEC>(v[p]);
    }
    s = cluster_push_sum(s, &push, CL);  // a block alone (CL = 1): one barrier
    if (!EARLY) sw = g < ns ? to_float(w[scol]) : 0.f;
    const float r = rsqrtf(s / a.C + a.eps);
    if (g < ns) yr[scol] = from_float<T>(sv * r * (sw + a.offset));
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < rp.packs) {
            if (!EARLY) wv[p] = load_elements<T, VEC>(w + rp.head + (long)i * VEC);
            store_raw<T, VEC>(yr + rp.head + (long)i * VEC, pack_normalize<T, VEC>(v[p], wv[p], r, a.offset));
        }
    }
    if (rank == 0 && threadIdx.x == 0) a.rstd[row] = r;
}

static int odd_rows_plan(const rms_problem_t *p, int req_bs, int *cl);  // these three: below the supports_ check
static const void *odd_rows_fn(dtype_t d, int cl);
static const void *odd_rows_launch_fn(dtype_t d, long N, int cl, int bs, bool *early);
static void launch_odd_rows(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    int cl = 0, bs = odd_rows_plan(p, l->block_size, &cl);
    bool early;
    launch_rms(odd_rows_launch_fn(p->h.dtype, p->s.N, cl, bs, &early), p, p->s.N * cl, bs, 0, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads; head, 16-byte packs, tail; w %s", cl,
             cl > 1 ? "s" : "", bs, early ? "with x" : "after the sum");
}
static const char *supports_odd_rows(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const char *why = plain_rows_only(p);
    if (why) return why;
    if (bs && bs < 32) return "at least 32 threads (a thread for each head and tail element)";
    int cl = 0;
    if (odd_rows_plan(p, bs, &cl)) return NULL;
    return split_no_plan(p, row_parts_packs(p->h.dtype, p->s.C), 16 / (long)dtype_size(p->h.dtype), bs, ODD_PACKS);
}
template <typename T, int VEC> static const void *odd_rows_for(int cl, bool early) {
    const void *fn = NULL;
    with_pow2<1, 16>(cl, [&](auto CL) {
        fn = early ? (const void *)rmsnorm_odd_rows_kernel<T, CL.value, true>
                   : (const void *)rmsnorm_odd_rows_kernel<T, CL.value, false>;
    });
    return fn;
}
// The EARLY instance (the plan's: both take the same clusters).
static const void *odd_rows_fn(dtype_t d, int cl) { return PACK16_CALL(d, odd_rows_for, cl, true); }
// The instance a launch takes: w after the sum where that pays (late_form_pays, pick_instance: harness/gpu.h).
static const void *odd_rows_launch_fn(dtype_t d, long N, int cl, int bs, bool *early) {
    const void *fn = odd_rows_fn(d, cl), *late = PACK16_CALL(d, odd_rows_for, cl, false);
    const void *took = pick_instance(fn, late, late_form_pays(fn, late, N, cl, bs), cl);
    *early = took == fn;
    return took;
}
// The plan: split_row_plan over the row's middle packs (row_parts_packs).
static int odd_rows_plan(const rms_problem_t *p, int req_bs, int *cl) {
    return split_row_plan(p->h.dtype, p->s.N, row_parts_packs(p->h.dtype, p->s.C), ODD_PACKS, 512, req_bs, g_cluster,
                          odd_rows_fn, cl);
}
// ------------------------------------------------------------------------------------------------
// Kernel 10 cluster_cp_async: long rows with the bytes in flight set by shared memory, not registers: a row over
// a cluster of CL blocks (cp_slice_plan), each block's slice copied into shared memory by cp.async (all issued
// before the first is waited for, no register held), read back for the sum (partials pushed as in kernel 7) and
// for y, w loaded in batches of 8 packs (the first while x's copies are in flight).
// Improves: x crosses DRAM once at any C up to 16 x a block's shared memory, with no register limit on the loads
// in flight; several blocks an SM overlap one's loads with another's reduction and stores.
// Wrong: sm_90+, 16-byte packs, no fused add; CL a rule of slice bytes, not a search; a block waits for the
// slowest of its cluster; one block a row is kernel 5's shared-memory path with extra steps.
typedef struct { int cl, slice; } cp_plan_t;  // CL blocks a row, `slice` packs a block
// The plan: a row of nvec 16-byte packs over CL = req_cl blocks (--cluster), else the fewest (a power of two, <= 16)
// whose slices hold at most CP_SLICE_BYTES (64 KB: the best of 32, 64 and 128 KB at C = 16384-65536).
#define CP_SLICE_BYTES (64 * 1024)
static cp_plan_t cp_slice_plan(long nvec, int req_cl) {
    int cl = req_cl ? req_cl : 1;
    while (!req_cl && cl < 16 && ceil_div(nvec, cl) * 16 > CP_SLICE_BYTES) cl *= 2;
    return cp_plan_t{cl, (int)ceil_div(nvec, cl)};
}
// NULL when fn runs rows of N x C by plan pl at bs threads a block (its slice in dynamic shared memory), else why
// not. Opts fn into the slice's shared memory and, beyond 8 blocks, into non-portable clusters.
static const char *cp_slice_fits(const void *fn, cp_plan_t pl, long N, long C, int bs) {
    const char *arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (arch) return arch;
    cudaFuncAttributes fa;
    CUDA_CHECK(cudaFuncGetAttributes(&fa, fn));
    size_t static_smem = fa.sharedSizeBytes, smem = (size_t)pl.slice * 16, optin = g_dev.prop.sharedMemPerBlockOptin;
    size_t have = optin > static_smem ? optin - static_smem : 0;
    if (smem > have)
        return reasonf("a row of %ld over %d blocks needs %.0f KB of shared memory a block (%.0f KB there)", C, pl.cl,
                       smem / 1024.0, have / 1024.0);
    if ((double)N * pl.cl > 2147483647.0) return reasonf("%ld rows x %d blocks exceed the grid", N, pl.cl);
    const char *why = block_fits(fn, bs);
    if (why) return why;
    ensure_dynamic_smem(fn, smem);
    if (pl.cl == 1) return NULL;
    why = allow_cluster_size(fn, pl.cl);
    return why ? why : cluster_fits_smem(fn, bs, pl.cl, smem, NULL);
}
#define CP_W_BATCH 8  // packs of w a thread loads at once
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) rmsnorm_cluster_cp_async_kernel(rms_args_t a, int slice) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ int4 slice_smem[];  // this block's packs of the row (read back as whole 16-byte words)
    __shared__ ClusterPush<float, 512> push;  // the cluster's partial sums (32 warps x 16 blocks)
    const int rank = (int)cg::this_cluster().block_rank(), nblocks = (int)cg::this_cluster().num_blocks();
    cluster_push_begin(&push, nblocks);
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    const long row = blockIdx.x / nblocks;  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const int lo = rank * slice, n = min(slice, (int)(a.C / VEC) - lo);  // packs [lo, lo + n) of the row
    const T *xs = (const T *)a.x + x_row_offset(a, row) + (long)lo * VEC;
    const T *__restrict__ ws = (const T *)a.w + (long)lo * VEC;
    T *__restrict__ ys = (T *)a.y + row * a.C + (long)lo * VEC;
    for (int i = threadIdx.x; i < n; i += blockDim.x) cp_async16(&slice_smem[i], xs + (long)i * VEC);
    RawPack<T, VEC> wr[CP_W_BATCH];
    load_raw_batch<T, VEC>(wr, ws, threadIdx.x, n);  // w's first batch from L2 while x's copies come from DRAM
    cp_async_wait_all();  // a thread reads back only the packs it copied itself: no barrier
    float ss = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += pack_sum_squares<T, VEC>(raw_pack<T, VEC>(slice_smem[i]));
    const float r = rsqrtf(cluster_push_sum(ss, &push, nblocks) / a.C + a.eps);
    for (int i0 = threadIdx.x; i0 < n; i0 += CP_W_BATCH * blockDim.x) {
        if (i0 != (int)threadIdx.x) load_raw_batch<T, VEC>(wr, ws, i0, n);
#pragma unroll
        for (int b = 0; b < CP_W_BATCH; b++) {
            const int i = i0 + b * blockDim.x;
            if (i < n)
                store_raw<T, VEC>(ys + (long)i * VEC, pack_normalize<T, VEC>(raw_pack<T, VEC>(slice_smem[i]),
                                                                             raw_pack<T, VEC>(wr[b]), r, a.offset));
        }
    }
    if (rank == 0 && threadIdx.x == 0) a.rstd[row] = r;
#endif
}

template <typename T, int VEC> static const void *cp_async_kernel_for(void) {
    return (const void *)rmsnorm_cluster_cp_async_kernel<T, VEC>;
}
static const void *cp_async_fn(dtype_t d) { return PACK16_CALL(d, cp_async_kernel_for); }
static void launch_cluster_cp_async(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    cp_plan_t pl = cp_slice_plan(p->s.C / (16 / (long)dtype_size(p->h.dtype)), g_cluster);
    const void *fn = cp_async_fn(p->h.dtype);
    size_t smem = (size_t)pl.slice * 16;
    ensure_dynamic_smem(fn, smem);
    rms_args_t a = rms_args(p);
    void *args[] = {&a, &pl.slice};
    launch_kernel(fn, p->s.N * pl.cl, l->block_size, smem, args, pl.cl);
    if (pl.cl == 1) snprintf(l->path, sizeof l->path, "one block a row, %.1f KB in shared memory", smem / 1024.0);
    else snprintf(l->path, sizeof l->path, "cluster of %d blocks a row, %.1f KB of it a block", pl.cl, smem / 1024.0);
}
static const char *supports_cluster_cp_async(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    if (p->s.fused) return "no --fused-add (plain rows and the QK view; kernels 4-7 and 12 have it)";
    int vec = 16 / (int)dtype_size(p->h.dtype);
    if (vec_width(p) != vec) return reasonf("needs 16-byte packs: C (and the stride) a multiple of %d", vec);
    return cp_slice_fits(cp_async_fn(p->h.dtype), cp_slice_plan(p->s.C / vec, g_cluster), p->s.N, p->s.C, bs);
}
// The plan: a block a row (row_block_plan) within [32, 512], <= 1024 threads over an SM's rows, >= C / 64 threads.
static int cluster_cp_async_bs(const rms_problem_t *p) { return row_block_plan(p, vec_width(p), 512, 1024, 32, 64); }
static int plan_cluster_cp_async(const void *pp) {
    return plan_fit(pp, cluster_cp_async_bs((const rms_problem_t *)pp), supports_cluster_cp_async);
}
// ------------------------------------------------------------------------------------------------
// Kernel 11 subwarp_persistent: kernel 6's layout on a grid of only the blocks resident at once, each group of TPR
// lanes walking rows row, row + stride, ...: the next row's x loaded before the current row is reduced and written,
// the lane's packs of w (the same columns for every row) loaded once and kept in registers.
// Improves: loads in flight while a row's shuffles and stores run; no block launched or drained a row; w read once
// a lane (+2-4 points of the copy over 6 at fp32 C = 128-256).
// Wrong: twice kernel 6's registers for x, so at most 4 packs a lane, and no fused add (the residual would double
// them again); the last pass leaves part of the grid idle.
template <typename T, int VEC, int TPR, int MAXP>
__device__ __forceinline__ void persist_load_row(Pack<T, VEC> (&v)[MAXP], const rms_args_t &a, long row, int lane,
                                                 int nvec) {
    subwarp_load_row<T, VEC, TPR, MAXP>(v, (const T *)a.x + (row < a.N ? x_row_offset(a, row) : 0), row < a.N, lane,
                                        nvec);
}
template <typename T, int VEC, int TPR, int MAXP>
__global__ void rmsnorm_subwarp_persistent_kernel(rms_args_t a) {
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    const int rows_per_block = blockDim.x / TPR, lane = threadIdx.x % TPR, nvec = (int)(a.C / VEC);
    const long stride = (long)gridDim.x * rows_per_block;
    long row = blockIdx.x * (long)rows_per_block + threadIdx.x / TPR;
    long first = row - threadIdx.x / TPR;  // the block's first row this pass: the loop test is block-uniform
    const T *w = (const T *)a.w;
    Pack<T, VEC> wv[MAXP], v[MAXP], next[MAXP];
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (i < nvec) wv[p] = load_pack<T, VEC>(w + (long)i * VEC);
    }
    persist_load_row<T, VEC, TPR, MAXP>(v, a, row, lane, nvec);
    for (; first < a.N; first += stride, row += stride) {
        persist_load_row<T, VEC, TPR, MAXP>(next, a, row + stride, lane, nvec);
#pragma unroll
        for (int p = 0; p < MAXP; p++) keep_packed(wv[p]);  // w converted again each row, not held as fp32 (2x)
        float ss = 0.f;
#pragma unroll
        for (int p = 0; p < MAXP; p++) {
            int i = lane + p * TPR;
            if (row < a.N && i < nvec) ss += pack_sum_squares<T, VEC>(v[p]);
        }
        ss = group_sum<TPR>(ss);  // every lane of the warp, valid row or not
#pragma unroll
        for (int p = 0; p < MAXP; p++) keep_packed(v[p]);  // x converted again for y, not held as fp32 across the sum
        if (row < a.N) {
            float r = rsqrtf(ss / a.C + a.eps);
            T *yr = (T *)a.y + row * a.C;
#pragma unroll
            for (int p = 0; p < MAXP; p++) {
                int i = lane + p * TPR;
                if (i < nvec) store_pack<T, VEC>(yr + (long)i * VEC, pack_normalize<T, VEC>(v[p], wv[p], r, a.offset));
            }
            if (lane == 0) a.rstd[row] = r;
        }
#pragma unroll
        for (int p = 0; p < MAXP; p++) v[p] = next[p];
    }
}

// Its instance: 16-byte packs, rows of at most 4 packs a lane (kernel 6's lanes a row), else NULL.
template <typename T, int VEC> static const void *persist_kernel_for(int tpr) {
    const void *fn;
    with_pow2<1, 32>(tpr, [&](auto P) { fn = (const void *)rmsnorm_subwarp_persistent_kernel<T, VEC, P.value, 4>; });
    return fn;
}
static const void *persist_fn(const rms_problem_t *p) {
    int vec = vec_width(p), tpr = subwarp_tpr(p->s.C / vec);
    if (vec != 16 / (int)dtype_size(p->h.dtype) || !tpr || p->s.C / vec > 4L * tpr) return NULL;
    return PACK16_CALL(p->h.dtype, persist_kernel_for, tpr);
}
static void launch_subwarp_persistent(const void *pp, launch_t *l) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    const void *fn = persist_fn(p);
    int tpr = subwarp_tpr(p->s.C / vec_width(p)), bs = l->block_size;
    long grid = persist_grid(fn, bs, ceil_div(p->s.N, bs / tpr), 0);
    launch_rms(fn, p, grid, bs, 0, 1);
    snprintf(l->path, sizeof l->path, "%d lanes a row, %d rows a block, packs of %d, %ld blocks", tpr, bs / tpr,
             vec_width(p), grid);
}
static const char *supports_subwarp_persistent(const void *pp, int bs) {
    const rms_problem_t *p = (const rms_problem_t *)pp;
    if (p->s.fused) return "no fused add (the residual's packs would double the registers again)";
    const void *fn = persist_fn(p);
    if (fn) return block_fits(fn, bs);
    if (vec_width(p) != 16 / (int)dtype_size(p->h.dtype)) return reasonf("needs 16-byte packs (C = %ld)", p->s.C);
    return reasonf("row of %ld is more than 32 lanes x 4 packs of %d", p->s.C, vec_width(p));
}
// The plan: 64 threads (its resident grid walks the rows: the block size moves its time little from 64 up).
#define SUBWARP_PERSISTENT_BS 64
static int plan_subwarp_persistent(const void *pp) {
    return plan_fit(pp, SUBWARP_PERSISTENT_BS, supports_subwarp_persistent);
}
// ------------------------------------------------------------------------------------------------
// Kernel 12 dispatch: no kernel of its own, a rule: a table of regimes (harness/dispatch.h, from the dense sweep of
// every rung by scripts/tune_dispatch.py), each row a region of problems and its rung; the first row that holds
// and whose rung takes the problem runs it, at the rung's plan (or --block-size).
// Improves: the right rung for each problem, with no knob to set (checked on random draws).
// Wrong: a region's edges are half-octave steps between the swept points, and inside a region one rung runs every
// problem; the rows come from one GPU's sweep: another enters only through its SMs and the rungs' checks.
static const regime_t k_regimes[] = {
    // regimes: begin (scripts/tune_dispatch.py rmsnorm --write, from the stored dense sweep; do not edit)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, 0, TVB(TV_FUSED_ADD), 0, 0, 32, 0, 11.3137, 0, RG_ANY, 5, "no 16-byte packs, variant add, packs a row < 32, rows an SM < 11.31"},
    {0, 0, TVB(TV_FUSED_ADD), 0, 0, 32, 11.3137, RG_ANY, 0, RG_ANY, 6, "no 16-byte packs, variant add, packs a row < 32, rows an SM >= 11.31"},
    {0, 0, TVB(TV_FUSED_ADD), 0, 32, 512, 0, 0.176777, 0, RG_ANY, 5, "no 16-byte packs, variant add, 32 <= packs a row < 512, rows an SM < 0.1768"},
    {0, 0, TVB(TV_FUSED_ADD), 0, 512, RG_ANY, 0, 0.176777, 0, RG_ANY, 7, "no 16-byte packs, variant add, packs a row >= 512, rows an SM < 0.1768"},
    {0, 0, TVB(TV_FUSED_ADD), 0, 512, RG_ANY, 0, 0.176777, 0, RG_ANY, 4, "no 16-byte packs, variant add, packs a row >= 512, rows an SM < 0.1768"},
    {2, 0, TVB(TV_FUSED_ADD), 0, 32, 362.039, 0.176777, 8, 0, RG_ANY, 5, "16-bit, no 16-byte packs, variant add, 32 <= packs a row < 362, 0.1768 <= rows an SM < 8"},
    {2, 0, TVB(TV_FUSED_ADD), 0, 32, 362.039, 8, RG_ANY, 0, RG_ANY, 4, "16-bit, no 16-byte packs, variant add, 32 <= packs a row < 362, rows an SM >= 8"},
    {4, 0, TVB(TV_FUSED_ADD), 0, 32, 64, 0.176777, RG_ANY, 0, RG_ANY, 6, "fp32, no 16-byte packs, variant add, 32 <= packs a row < 64, rows an SM >= 0.1768"},
    {4, 0, TVB(TV_FUSED_ADD), 0, 64, 362.039, 0.176777, RG_ANY, 0, RG_ANY, 5, "fp32, no 16-byte packs, variant add, 64 <= packs a row < 362, rows an SM >= 0.1768"},
    {0, 0, TVB(TV_FUSED_ADD), TLB(TL_PLAIN), 362.039, RG_ANY, 0.176777, RG_ANY, 0, RG_ANY, 4, "no 16-byte packs, variant add, cold, packs a row >= 362, rows an SM >= 0.1768"},
    {0, 0, TVB(TV_FUSED_ADD), TLB(TL_CAPTURED) | TLB(TL_PDL), 362.039, RG_ANY, 0.176777, RG_ANY, 0, RG_ANY, 5, "no 16-byte packs, variant add, captured/captured+PDL, packs a row >= 362, rows an SM >= 0.1768"},
    {0, 1, TVB(TV_FUSED_ADD), 0, 0, 4096, 0, 32, 0, RG_ANY, 5, "16-byte packs, variant add, packs a row < 4096, rows an SM < 32"},
    {0, 1, TVB(TV_FUSED_ADD), 0, 4096, RG_ANY, 0, 1.41421, 0, RG_ANY, 7, "16-byte packs, variant add, packs a row >= 4096, rows an SM < 1.414"},
    {0, 1, TVB(TV_FUSED_ADD), 0, 4096, RG_ANY, 1.41421, 32, 0, RG_ANY, 4, "16-byte packs, variant add, packs a row >= 4096, 1.414 <= rows an SM < 32"},
    {0, 1, TVB(TV_FUSED_ADD), 0, 0, RG_ANY, 32, RG_ANY, 0, RG_ANY, 6, "16-byte packs, variant add, rows an SM >= 32"},
    {0, 1, TVB(TV_FUSED_ADD), 0, 0, RG_ANY, 32, RG_ANY, 0, RG_ANY, 4, "16-byte packs, variant add, rows an SM >= 32"},
    {0, 0, TVB(TV_PLAIN), 0, 0, 64, 0, RG_ANY, 0, RG_ANY, 6, "no 16-byte packs, variant plain, packs a row < 64"},
    {0, 0, TVB(TV_PLAIN), 0, 0, 64, 0, RG_ANY, 0, RG_ANY, 9, "no 16-byte packs, variant plain, packs a row < 64"},
    {0, 0, TVB(TV_PLAIN), 0, 64, RG_ANY, 0, RG_ANY, 0, RG_ANY, 9, "no 16-byte packs, variant plain, packs a row >= 64"},
    {0, 0, TVB(TV_PLAIN), 0, 64, RG_ANY, 0, RG_ANY, 0, RG_ANY, 4, "no 16-byte packs, variant plain, packs a row >= 64"},
    {0, 1, TVB(TV_PLAIN), 0, 0, RG_ANY, 0, 2.82843, 0, RG_ANY, 8, "16-byte packs, variant plain, rows an SM < 2.828"},
    {0, 1, TVB(TV_PLAIN), 0, 0, RG_ANY, 0, 2.82843, 0, RG_ANY, 10, "16-byte packs, variant plain, rows an SM < 2.828"},
    {0, 1, TVB(TV_PLAIN), 0, 0, 128, 2.82843, 5.65685, 0, RG_ANY, 11, "16-byte packs, variant plain, packs a row < 128, 2.828 <= rows an SM < 5.657"},
    {0, 1, TVB(TV_PLAIN), 0, 0, 128, 5.65685, RG_ANY, 0, RG_ANY, 6, "16-byte packs, variant plain, packs a row < 128, rows an SM >= 5.657"},
    {0, 1, TVB(TV_PLAIN), 0, 128, 724.077, 2.82843, RG_ANY, 0, RG_ANY, 8, "16-byte packs, variant plain, 128 <= packs a row < 724.1, rows an SM >= 2.828"},
    {0, 1, TVB(TV_PLAIN), TLB(TL_PLAIN), 724.077, 5792.62, 2.82843, RG_ANY, 0, RG_ANY, 5, "16-byte packs, variant plain, cold, 724.1 <= packs a row < 5793, rows an SM >= 2.828"},
    {0, 1, TVB(TV_PLAIN), TLB(TL_CAPTURED) | TLB(TL_PDL), 724.077, 5792.62, 2.82843, RG_ANY, 0, RG_ANY, 8, "16-byte packs, variant plain, captured/captured+PDL, 724.1 <= packs a row < 5793, rows an SM >= 2.828"},
    {0, 1, TVB(TV_PLAIN), 0, 5792.62, RG_ANY, 2.82843, RG_ANY, 0, RG_ANY, 10, "16-byte packs, variant plain, packs a row >= 5793, rows an SM >= 2.828"},
    {0, -1, TVB(TV_QK_VIEW), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 11, "variant qk"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 4, "anything"},
    // regimes: end
};
// The registry entry of a rung (defined below the registry).
static const kernel_t *ladder_rung(int k);
// The key of a problem, as scripts/regimes.py's features() computes it from a CSV label: element size, 16-byte
// packs (dividing C and the token stride), variant, C and rows (QK view: head_dim, tokens x heads); no offset.
static regime_key_t rms_regime_key(const rms_problem_t *p) {
    const int bytes = (int)dtype_size(p->h.dtype);
    const int variant = p->s.fused ? TV_FUSED_ADD : p->s.qk ? TV_QK_VIEW : TV_PLAIN;
    return regime_key(bytes, vec_width(p) == 16 / bytes, variant, p->s.C, p->s.N, 1);
}
static const char *rung_takes(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const rms_problem_t *)pp)->h.dtype, bs);
}
// The regime that runs the problem (NULL: none, a bug in k_regimes, whose last rows take any) and its row (1-based).
static const regime_t *dispatch_for(const rms_problem_t *p, int req_bs, int *at) {
    const regime_key_t key = rms_regime_key(p);
    const regime_t *r = regime_pick(k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), &key, req_bs, p,
                                    rung_takes, at);
    *at += 1;
    return r;
}
static void launch_dispatch(const void *pp, launch_t *l) {
    int at = 0;
    const regime_t *r = dispatch_for((const rms_problem_t *)pp, l->block_size, &at);
    regime_launch(r, at, r ? ladder_rung(r->rung) : NULL, pp, l, "");
}
static const char *supports_dispatch(const void *pp, int bs) {
    int at = 0;
    return dispatch_for((const rms_problem_t *)pp, bs, &at) ? NULL : NO_REGIME;
}
// ------------------------------------------------------------------------------------------------
// The registry (keep it, the header comment, --list and the README's ladder table in agreement).
// (The last two fields: 1 where the kernel takes --pdl, the templated kernels 4-12; the rung's plan, its block
// size when the dispatcher runs it, for the rungs 4-11 that do not pick their own.)
static const kernel_t k_kernels[] = {
    {0, "cudnn", DT_ALL, "plain; QK-norm with S = H*D",
     "cuDNN 9 graph API norm-forward (training phase), fastest of the heuristics' engine configs", 1,
     CUDNN_FNS(supports_cudnn, launch_cudnn)},
    {1, "thread_per_row", DT_BIT(DT_FP32), "any C; plain + offset",
     "one thread per row: a loop for the sum of squares, a loop to normalize", 0, supports_plain,
     launch_thread_per_row},
    {2, "block_smem_tree", DT_BIT(DT_FP32), "pow2 blocks; plain + offset",
     "one block per row, sum of squares through a shared-memory tree", 0, supports_block_smem_tree,
     launch_block_smem_tree},
    {3, "warp_per_row", DT_BIT(DT_FP32), "any C; plain + offset",
     "one warp per row, shuffle reductions, streaming hints", 0, supports_plain, launch_warp_per_row},
    {4, "block2d_vec", DT_ALL, "any C; every variant",
     "2-D block per row (lanes x warps): shuffles in each warp, then one warp across warps; 16-byte packs", 0, NULL,
     launch_block2d_vec, 1, plan_block2d_vec},
    {5, "block_row_cache", DT_ALL, "row in 8 packs x block or smem",
     "x read once: the row kept in registers, or in shared memory when large", 0, supports_block_row_cache,
     launch_block_row_cache, 1, plan_block_row_cache},
    {6, "subwarp_rows", DT_ALL, "C <= 256 packs (1024 fp32)",
     "several rows per warp or block, lanes per row chosen by C, row in registers", 0, supports_subwarp_rows,
     launch_subwarp_rows, 1, plan_subwarp_rows},
    {7, "cluster_dsmem", DT_ALL, "sm_90+; C <= 64 packs x block",
     "one row split across a thread-block cluster, partial sums through distributed shared memory", 0,
     supports_cluster_dsmem, launch_cluster_dsmem, 1, plan_cluster_dsmem},
    {8, "latency_split", DT_ALL, "plain; 16-byte; row <= 512 KB",
     "a row over 1-16 blocks (a cluster) at 2 or 4 packs a thread, w loaded with x, one reduction round", 0,
     supports_latency_split, launch_latency_split, 1, plan_latency_split},
    {9, "odd_rows", DT_ALL, "plain; any C; row <= 512 KB",
     "rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks", 1,
     supports_odd_rows, launch_odd_rows, 1},
    {10, "cluster_cp_async", DT_ALL, "sm_90+; 16-byte packs; no add",
     "a row over a cluster, each block's slice copied into shared memory by cp.async, normalized from there", 0,
     supports_cluster_cp_async, launch_cluster_cp_async, 1, plan_cluster_cp_async},
    {11, "subwarp_persistent", DT_ALL, "C <= 128 16-byte packs; no add",
     "6's layout on a grid of resident blocks that walk the rows, the next row loaded early, w kept", 0,
     supports_subwarp_persistent, launch_subwarp_persistent, 1, plan_subwarp_persistent},
    {12, "dispatch", DT_ALL, "any C; every variant",
     "runs the rung of its rule of regimes at the rung's plan and says which ran", 1, supports_dispatch,
     launch_dispatch, 1},
};
static const kernel_t *ladder_rung(int k) { return &k_kernels[k]; }
// ------------------------------------------------------------------------------------------------
// Options, shape, setup, reference, reset, teardown.

static const extra_option_t k_extra[] = {
    {"eps", required_argument, "--eps E           epsilon (default 1e-6)"},
    {"fused-add", no_argument, "--fused-add       residual += x in place, then y = rmsnorm(residual) (kernels 4-7, 12)"},
    {"weight-offset", required_argument, "--weight-offset F y = x * rstd * (weight + F); F = 1 is Gemma's form (default 0)"},
    {"heads", required_argument, "--heads H         QK-norm: heads per token, with --head-dim (-N gives tokens, default 4096)"},
    {"head-dim", required_argument, "--head-dim D      QK-norm: elements per head (the normalized size; weight has D)"},
    {"row-stride", required_argument, "--row-stride S    QK-norm: elements between tokens in x (default 3*H*D: q in qkv)"},
    {"cluster", required_argument,
     "--cluster K       kernels 8-10, 12: split rows over K blocks (1, 2, 4, 8 or 16; 1 = one block a row),\n"
     "                    the block size from --block-size or the kernel's rule"},
    {"packs", required_argument, "--packs P         kernels 8, 12: kernel 8 at P packs a thread (2 or 4; 0 = its plan's)"},
};
enum { OPT_EPS, OPT_FUSED, OPT_OFFSET, OPT_HEADS, OPT_HEAD_DIM, OPT_ROW_STRIDE, OPT_CLUSTER, OPT_PACKS };
static const char *parse_extra(int index, const char *arg) {
    double v;
    long n;
    switch (index) {
    case OPT_EPS:
        if (parse_double(arg, &v) || v < 0) return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
        g_eps = v;
        return NULL;
    case OPT_FUSED: g_fused = 1; return NULL;
    case OPT_OFFSET:
        if (parse_double(arg, &v)) return reasonf("invalid weight offset '%s' (--weight-offset: a finite number)", arg);
        g_offset = v;
        return NULL;
    case OPT_HEADS:
        if (parse_long(arg, 1, 1L << 20, &n)) return reasonf("invalid heads '%s' (--heads: an integer in [1, 1048576])", arg);
        g_heads = n;
        return NULL;
    case OPT_HEAD_DIM:
        if (parse_long(arg, 1, 1L << 31, &n)) return reasonf("invalid head dim '%s' (--head-dim: a positive integer)", arg);
        g_head_dim = n;
        return NULL;
    case OPT_CLUSTER:
        if (parse_long(arg, 1, 16, &n) || (n & (n - 1)))
            return reasonf("invalid cluster size '%s' (--cluster: 1, 2, 4, 8 or 16)", arg);
        g_cluster = (int)n;
        return NULL;
    case OPT_PACKS:
        if (parse_long(arg, 0, 4, &n) || (n != 0 && n != 2 && n != 4))
            return reasonf("invalid packs a thread '%s' (--packs: 2 or 4; 0 = the plan's)", arg);
        g_packs = (int)n;
        return NULL;
    default:
        if (parse_long(arg, 1, 1L << 31, &n)) return reasonf("invalid row stride '%s' (--row-stride: a positive integer)", arg);
        g_row_stride = n;
        return NULL;
    }
}
// The shape from the common options and this program's; NULL when fine, else the problem in one line.
static const char *rms_shape_from_options(const options_t *o, rms_shape_t *s) {
    memset(s, 0, sizeof *s);
    s->eps = g_eps;
    s->offset = g_offset;
    s->fused = g_fused;
    if ((g_heads != 0) != (g_head_dim != 0))
        return g_heads ? "--heads needs --head-dim (QK-norm mode takes both)" : "--head-dim needs --heads (QK-norm mode takes both)";
    if (!g_heads) {
        if (g_row_stride) return "--row-stride needs --heads and --head-dim (it is the token stride of the QK-norm view)";
        s->N = s->tokens = o->rows;
        s->C = s->S = o->cols;
        s->H = 1;
        if (s->N > 2147483647L) return reasonf("%ld rows exceed the grid (at most 2147483647)", s->N);
        return check_rows_cols(o);
    }
    s->qk = 1;
    if (o->cols_set) return "-C/--cols does not apply in QK-norm mode: the normalized size is --head-dim";
    if (g_fused) return "--fused-add does not combine with QK-norm mode (--heads/--head-dim)";
    s->tokens = (o->rows_set || o->bt_set) ? o->rows : QK_DEFAULT_TOKENS;
    s->H = g_heads;
    s->C = g_head_dim;
    s->N = s->tokens * s->H;
    if ((double)s->H * s->C > 2147483647.0) return reasonf("heads x head-dim = %ld x %ld too large", s->H, s->C);
    s->S = g_row_stride ? g_row_stride : 3 * s->H * s->C;
    if (s->S < s->H * s->C)
        return reasonf("--row-stride %ld is smaller than heads x head-dim = %ld", s->S, s->H * s->C);
    if ((double)s->tokens * s->S > 4e9)
        return reasonf("QK-norm view %ld tokens x stride %ld too large (must stay below 4e9 elements)", s->tokens, s->S);
    if (s->N > 2147483647L) return reasonf("%ld tokens x %ld heads = %ld rows exceed the grid (at most 2147483647)", s->tokens, s->H, s->N);
    return NULL;
}
// --cluster steers kernels 8, 9 and 10, --packs kernel 8 (both the dispatcher through them): refused with any other
// kernel, where they would do nothing.
static int takes_cluster(int k) { return (k >= 8 && k <= 10) || k == RMS_DISPATCHER || k == KERNEL_DEFAULT; }
static int takes_packs(int k) { return k == 8 || k == RMS_DISPATCHER || k == KERNEL_DEFAULT; }
static const char *check_options(const options_t *o) {
    if (g_cluster && !kernels_take(o, takes_cluster))
        return "--cluster applies to kernels 8-10 and 12 alone (give them as the kernel)";
    if (g_packs && !kernels_take(o, takes_packs)) return "--packs applies to kernels 8 and 12 alone (give them as the kernel)";
    rms_shape_t s;
    return rms_shape_from_options(o, &s);
}
// The CSV shape string ("8192x4096", "8192x4096:add:off1", "4096x32x128:s12288") and the human one.
static void rms_shape_strings(const rms_shape_t *s, char *shape, size_t n_shape, char *desc, size_t n_desc) {
    char off[32] = "", offd[48] = "";
    if (s->offset != 0) {
        snprintf(off, sizeof off, ":off%g", s->offset);
        snprintf(offd, sizeof offd, " weight offset %g", s->offset);
    }
    if (s->qk) {
        snprintf(shape, n_shape, "%ldx%ldx%ld:s%ld%s", s->tokens, s->H, s->C, s->S, off);
        snprintf(desc, n_desc, "tokens %ld heads %ld head_dim %ld stride %ld%s", s->tokens, s->H, s->C, s->S, offd);
    } else {
        snprintf(shape, n_shape, "%ldx%ld%s%s", s->N, s->C, s->fused ? ":add" : "", off);
        snprintf(desc, n_desc, "rows %ld cols %ld%s%s", s->N, s->C, s->fused ? " fused add" : "", offd);
    }
}
// Algorithmic minimum: x (the q part only) and w read, y and rstd written; fused add: the residual read and written.
static double rms_bytes(const rms_shape_t *s, dtype_t d) {
    double es = (double)dtype_size(d), rc = (double)s->N * s->C;
    return 2.0 * rc * es + s->C * es + s->N * 4.0 + (s->fused ? 2.0 * rc * es : 0.0);
}
static problem_t *rms_setup(const options_t *o) {
    rms_problem_t *p = (rms_problem_t *)calloc(1, sizeof *p);
    rms_shape_from_options(o, &p->s);  // checked by check_options already
    const rms_shape_t *s = &p->s;
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    long N = s->N, C = s->C, nx = s->tokens * s->S;
    p->h.dtype = d;
    rms_shape_strings(s, p->h.shape, sizeof p->h.shape, p->h.shape_desc, sizeof p->h.shape_desc);
    p->h.bytes = rms_bytes(s, d);
    p->x = dev_alloc(nx * es);
    p->y = dev_alloc(N * C * es);
    p->w = dev_alloc(C * es);
    p->rstd = (float *)dev_alloc(N * sizeof(float));
    p->hx = host_alloc_doubles(nx);
    p->hw = host_alloc_doubles(C);
    // x fills the whole buffer (q, k and v in QK-norm mode): kernels must read only the q part
    fill_normal(p->x, p->hx, nx, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->w, p->hw, C, d, o->seed, 1, s->offset != 0 ? 0.0 : 1.0, 0.25);
    p->h.n_out = 2;
    p->h.out[0] = (output_t){"y", p->y, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), NULL};
    p->h.out[1] = (output_t){"rstd", p->rstd, DT_FP32, N, 1, host_alloc_doubles(N), tolerance_for(DT_FP32), NULL};
    if (s->fused) {
        p->res = dev_alloc(N * C * es);
        p->res0 = dev_alloc(N * C * es);
        p->hres = host_alloc_doubles(N * C);
        fill_normal(p->res0, p->hres, N * C, d, o->seed, 2, 0.0, 1.0);
        CUDA_CHECK(cudaMemcpy(p->res, p->res0, N * C * es, cudaMemcpyDeviceToDevice));
        p->h.n_out = 3;
        p->h.out[2] = (output_t){"residual", p->res, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), NULL};
    }
    return &p->h;
}
static void rms_reference(problem_t *h) {
    rms_problem_t *p = (rms_problem_t *)h;
    const rms_shape_t *s = &p->s;
    // eps and the offset as the kernels see them: fp32 numbers
    rmsnorm_forward_cpu(h->out[0].ref, h->out[1].ref, s->fused ? h->out[2].ref : NULL, p->hx, s->H, s->S, p->hw,
                        s->fused ? p->hres : NULL, s->N, s->C, (double)(float)s->eps, (double)(float)s->offset, h->dtype);
}
// Fused add updates the residual in place: every validation launch starts from its initial values.
static void rms_reset(problem_t *h) {
    rms_problem_t *p = (rms_problem_t *)h;
    if (!p->s.fused) return;
    CUDA_CHECK(cudaMemcpy(p->res, p->res0, (size_t)p->s.N * p->s.C * dtype_size(h->dtype), cudaMemcpyDeviceToDevice));
}
static void rms_teardown(problem_t *h) {
    rms_problem_t *p = (rms_problem_t *)h;
    void *dev[] = {p->x, p->y, p->w, p->rstd, p->res, p->res0};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i]) CUDA_CHECK(cudaFree(dev[i]));
    for (int i = 0; i < h->n_out; i++) free(h->out[i].ref);
    void *host[] = {p->hx, p->hw, p->hres, p};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
}
static const program_t k_program = {
    "rmsnorm", "rmsnorm_forward",
    "RMSNorm forward over the last dimension: y = x * rstd * (weight + offset), with rstd saved",
    8192, 4096,  // the default shape
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]), RMS_DISPATCHER,
    k_extra, (int)(sizeof k_extra / sizeof k_extra[0]), parse_extra, check_options,
    rms_setup, rms_reference, rms_teardown, rms_reset,
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
