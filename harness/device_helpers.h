// harness/device_helpers.h: for kernel authors: dtype conversion, 16-byte packs and their loads and stores,
// warp and block reductions, Welford merges.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

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

// Programmatic dependent launch (sm_90+; no-ops where the grid was launched without it, and before sm_90).
// pdl_wait(): nothing below it runs before the grid this one depends on has finished and its writes are
// visible; then pdl_trigger() lets the next grid launch, so its blocks are resident and waiting when this one
// ends (triggered after the wait, a chain of launches keeps at most two grids on the GPU).
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

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
// The same for 16-byte packs alone (4 fp32 or 8 16-bit values a pack), as an expression: FN<T, VEC>(...)'s value.
#define PACK16_CALL(dt, FN, ...)                                                                              \
    ((dt) == DT_FP32   ? FN<float, 4>(__VA_ARGS__)                                                            \
     : (dt) == DT_FP16 ? FN<__half, 8>(__VA_ARGS__)                                                           \
                       : FN<__nv_bfloat16, 8>(__VA_ARGS__))
// Instance tables generated from a template instead of written out as `case` lines: calls f(P) with P a
// std::integral_constant<int, ...>, the first of FROM, 2 FROM, 4 FROM, ..., TO that is >= n (TO when none is),
// so `with_pow2<1, 16>(packs, [&](auto P) { fn = (const void *)my_kernel<T, P.value>; })` picks the instance
// for a power-of-two count of packs, lanes or blocks. Host code.
template <int P, int TO, typename F> static void with_pow2(long n, F &&f) {
    if constexpr (P >= TO) {
        f(std::integral_constant<int, P>{});
    } else {
        if (n <= P) f(std::integral_constant<int, P>{});
        else with_pow2<P * 2, TO>(n, f);
    }
}
// A float4's four values into d[0..3].
__device__ __forceinline__ void float4_to(float4 v, float *d) {
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
    d[3] = v.w;
}

// Plain (cached) and streaming (evict-first, __ldcs/__stcs) pack access. p must be aligned to the pack.
// Most of LayerNorm's and RMSNorm's pack kernels use the plain forms: on an H100 under the cold-L2 timing the
// streaming forms cost their dispatchers 1.5-5% at most standard shapes; the exceptions, and why, are in
// the comments of kernel 3 of each program (results/NOTES.md: streaming hints).
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
// A pack as one raw word (int4 for 16 bytes), for kernels that issue many loads before they use any: held as
// Pack<T, N>, ptxas may unpack 16-bit elements as each load lands and reuse one set of registers for the next
// pack's load, which puts the loads' round trips in a row (RMSNorm's latency kernel, bf16: 3.49 us against
// 2.77 with the loads issued together; results/NOTES.md).
template <typename T, int N> using RawPack = typename RawBits<sizeof(T) * N>::type;
template <typename T, int N> __device__ __forceinline__ RawPack<T, N> load_raw(const T *p) {
    return *reinterpret_cast<const RawPack<T, N> *>(p);
}
template <typename T, int N> __device__ __forceinline__ RawPack<T, N> load_raw_cs(const T *p) {  // evict-first
    return __ldcs(reinterpret_cast<const RawPack<T, N> *>(p));
}
template <typename T, int N> __device__ __forceinline__ Pack<T, N> raw_pack(const RawPack<T, N> &r) {
    Pack<T, N> out;
    memcpy(&out, &r, sizeof(r));
    return out;
}
// N elements from p, one load each: a pack of an array read where it is not 16-byte aligned (the odd-rows rungs'
// w and b, which share x's columns, not its alignment).
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_elements(const T *p) {
    Pack<T, N> out;
#pragma unroll
    for (int j = 0; j < N; j++) out.v[j] = p[j];
    return out;
}
// The packs i0 + b * blockDim.x (b < B, those below n) of p as raw words: B loads in flight together. RMSNorm's
// cluster_cp_async takes w in such batches, the first issued while x's copies are in flight; one load a loop
// iteration put one L2 round trip per pack between a block's reduction and its last store.
template <typename T, int VEC, int B>
__device__ __forceinline__ void load_raw_batch(RawPack<T, VEC> (&r)[B], const T *p, int i0, int n) {
#pragma unroll
    for (int b = 0; b < B; b++) {
        const int i = i0 + b * (int)blockDim.x;
        if (i < n) r[b] = load_raw<T, VEC>(p + (long)i * VEC);
    }
}
// A pack stored as one raw word: the form that stays one 16-byte store where store_pack's would not (in the
// rolled loop of RMSNorm's cluster_cp_async nvcc split it into four 4-byte stores: results/NOTES.md).
template <typename T, int N> __device__ __forceinline__ void store_raw(T *p, const Pack<T, N> &v) {
    RawPack<T, N> r;
    memcpy(&r, &v, sizeof(r));
    __stwb(reinterpret_cast<RawPack<T, N> *>(p), r);  // st.global.wb: the default store, as one instruction
}
// Through the read-only data path (ld.global.nc, as __ldg), for data no thread writes during the kernel. The
// compiler takes that path itself for loads from const __restrict__ kernel parameters, not always for pointers
// bound from an argument struct: such a kernel asks for it with this form. The vector types are those of nvcc's
// own read-only loads of a pack (f32 or u16 lanes; 16 bytes of 16-bit values as u32 lanes): with RawBits' integer
// lanes the generated code of some of BatchNorm's kernels differs.
template <int TBYTES, int N> struct NcBits;
template <> struct NcBits<4, 1> { typedef float type; };
template <> struct NcBits<4, 2> { typedef float2 type; };
template <> struct NcBits<4, 4> { typedef float4 type; };
template <> struct NcBits<2, 1> { typedef unsigned short type; };
template <> struct NcBits<2, 2> { typedef ushort2 type; };
template <> struct NcBits<2, 4> { typedef ushort4 type; };
template <> struct NcBits<2, 8> { typedef uint4 type; };
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_pack_nc(const T *p) {
    typedef typename NcBits<sizeof(T), N>::type R;
    R r = __ldg(reinterpret_cast<const R *>(p));
    Pack<T, N> out;
    memcpy(&out, &r, sizeof(R));
    return out;
}

// Hides a 16-byte pack's bits from the optimizer: afterwards the compiler must convert the pack again instead of
// keeping the fp32 values it converted before alive (twice the registers for 16-bit packs) across what follows:
// BatchNorm's grid syncs, LayerNorm's cluster reduction, the persistent rungs' row sums and their next rows.
template <typename T, int VEC> __device__ __forceinline__ void keep_packed(Pack<T, VEC> &p) {
    static_assert(sizeof(Pack<T, VEC>) == 16, "16-byte packs");
    uint4 r;
    memcpy(&r, &p, 16);
    asm volatile("" : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w));
    memcpy(&p, &r, 16);
}

template <typename T, int N> __device__ __forceinline__ void store_pack_cs(T *p, const Pack<T, N> &v) {
    typedef typename RawBits<sizeof(T) * N>::type R;
    R r;
    memcpy(&r, &v, sizeof(R));
    __stcs(reinterpret_cast<R *>(p), r);
}

// One row as TPR lanes see it (the sub-warp rungs of LayerNorm and RMSNorm): lane `lane` loads packs lane,
// lane + TPR, ... of the row of nvec packs at xr into v[], all issued before any use; nothing where !valid.
// CS: streaming (evict-first) loads (LayerNorm's kernel 10 keeps them: plain access cost it 3-7 points on an H100).
template <typename T, int VEC, int TPR, int MAXP, bool CS = false>
__device__ __forceinline__ void subwarp_load_row(Pack<T, VEC> (&v)[MAXP], const T *__restrict__ xr, bool valid,
                                                 int lane, int nvec) {
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (valid && i < nvec) v[p] = CS ? load_pack_cs<T, VEC>(xr + (long)i * VEC) : load_pack<T, VEC>(xr + (long)i * VEC);
    }
}

// The 32-bit shared-memory address of a generic pointer into shared memory (the operand of cp.async, mbarrier, mapa).
__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
// cp.async (sm_80+): a 16-byte copy from global into shared memory that holds no register while in flight
// (cg: cached in L2 only), so a thread can have as many in flight as the shared memory holds. A thread's copies
// have landed once it has waited (cp_async_wait_all); it may then read what it copied itself, with no barrier.
__device__ __forceinline__ void cp_async16(void *smem_dst, const void *gmem_src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem_dst)), "l"(gmem_src) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

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
// welford_merge with its weight by fast_div: __fdividef on the device (IEEE division's slow path is a subroutine call
// that spills every live register; 2 ulps on a weight are nothing), a plain division on the host.
__host__ __device__ __forceinline__ float fast_div(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fdividef(a, b);
#else
    return a / b;
#endif
}
__host__ __device__ __forceinline__ Welford welford_merge_nocall(Welford a, Welford b) {
    float n = a.n + b.n;
    if (n == 0.f) return a;
    float delta = b.mean - a.mean, wb = fast_div(b.n, n);
    return Welford{n, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.n * wb};
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
// Welford states of a block's threads as t = rg * G + g (G columns of RG row groups, as BatchNorm's 2-D blocks):
// merges each column's RG states by a tree in shared memory (sm: blockDim.x states, welford_merge_nocall); every
// thread gets its column's state (threads beyond G * RG take part in the barriers only).
__device__ __forceinline__ Welford rowgroup_welford(Welford w, Welford *sm, int G, int RG) {
    int t = threadIdx.x, rg = t / G;
    __syncthreads();  // sm may still be read by a previous call
    sm[t] = w;
    __syncthreads();
    for (int s = 1; s < RG; s *= 2) {
        if (rg % (2 * s) == 0 && rg + s < RG) sm[t] = welford_merge_nocall(sm[t], sm[t + s * G]);
        __syncthreads();
    }
    return sm[t % G];
}

// One-round sums of a float (RMSNorm) or a pair of floats (LayerNorm's shifted sums), used by the latency
// paths and the cluster paths of the dispatchers. Component-wise warp sum and add for both:
__device__ __forceinline__ float2 warp_sum(float2 v) { return make_float2(warp_sum(v.x), warp_sum(v.y)); }
__device__ __forceinline__ float vadd(float a, float b) { return a + b; }
// A row that may start anywhere (rows of odd length: row r starts at element r * C): `head` elements up to the
// first 16-byte boundary, then `packs` whole 16-byte packs, then `tail` elements (head, tail < 16 / sizeof(T)).
struct RowParts {
    int head, packs, tail;
};
template <typename T> __device__ __forceinline__ RowParts row_parts(const T *row, long C) {
    constexpr int VEC = 16 / sizeof(T);
    const int mis = (int)(((size_t)row & 15) / sizeof(T));
    RowParts rp;
    rp.head = (int)min((long)(mis ? VEC - mis : 0), C);
    rp.packs = (int)((C - rp.head) / VEC);
    rp.tail = (int)(C - rp.head - (long)rp.packs * VEC);
    return rp;
}
__device__ __forceinline__ float2 vadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
// The sum over a 1-D block with one barrier: warp shuffles, then every thread adds the per-warp values from
// shared memory itself (instead of one warp adding them and a second barrier to hand out the result).
// `scratch` holds >= 32 values and is not reused afterwards: the function is called once a kernel (or once a
// row, where a barrier later in the row separates one row's reads from the next row's writes).
template <typename V> __device__ __forceinline__ V block_sum_once(V v, V *scratch) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    V t = V{};
    for (int i = 0; i < nwarps; i++) t = vadd(t, scratch[i]);
    return t;
}
// block_sum_once for R values at a time (the backward rungs' R rows in flight), one barrier: warp shuffles, lane 0 of
// each warp stores its R values in red[warp][.], then every thread adds the warps'. red holds [32][R] values; a caller
// that loops alternates two of them (the barrier of one call separates the reads of the call before from the writes
// of the call after).
template <typename V, int R> __device__ __forceinline__ void block_sums(V (&v)[R], V (*red)[R]) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
#pragma unroll
    for (int r = 0; r < R; r++) v[r] = warp_sum(v[r]);
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < R; r++) red[warp][r] = v[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) v[r] = V{};
    for (int i = 0; i < nwarps; i++)
#pragma unroll
        for (int r = 0; r < R; r++) v[r] = vadd(v[r], red[i][r]);
}
// The sum of every block's value over a thread-block cluster of ncl <= 32 blocks (sm_90+), every block given
// the same: block ranks publish their value in shared memory (`mine`), a cluster barrier, then lane r of every
// warp reads rank r's value through distributed shared memory and the warp adds them (the same shuffles in
// every warp of every block: the same bits everywhere). It ends with the block's arrival at a second cluster
// barrier: the caller must call cluster_release_wait() before it exits (or before `mine` is written again),
// so no block's shared memory changes or goes while another may read it (the wait comes after the stores:
// it overlaps them).
template <typename V> __device__ __forceinline__ V cluster_sum_once(V v, V *mine, int ncl) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cgx = cooperative_groups;
    cgx::cluster_group cluster = cgx::this_cluster();
    if (threadIdx.x == 0) *mine = v;
    cluster.sync();
    int lane = threadIdx.x % 32;
    V t = lane < ncl ? *cluster.map_shared_rank(mine, lane) : V{};
    t = warp_sum(t);
    cluster.barrier_arrive();
    return t;
#else
    __trap();  // launched in clusters only on sm_90+
    return v;
#endif
}
// The cluster's sum by pushing (every cluster rung of RMSNorm and LayerNorm): every warp sends its partial into a
// slot of every block of the cluster (st.async into the peer's shared memory, counted in bytes by the peer's
// mbarrier), and each block waits on its own mbarrier, then adds the slots in one fixed order (the same rstd in
// every block, to the bit). No block reads another's memory, so none has to wait for its peers before it exits,
// and no block-wide barrier is needed before the exchange. Against cluster_sum_once (two cluster barriers, the
// second waited at exit), same kernels, one process, H200: up to 24% less time at bf16 1024 x 65536, 21% at fp32
// 4096 x 16384 and 31% at 8 rows of 128256 (one point 1% slower; results/NOTES.md).
// cluster_push_begin at the top of the kernel (its barrier's arrival then overlaps the loads); cluster_push_sum
// once, by every thread, with blockDim.x a multiple of 32. A block alone (ncl = 1: a cluster of one block, or
// no cluster, on any GPU) takes block_sum_once with the slots as its scratch and no mbarrier: st.async to a
// cluster of one block is an invalid shared write under compute-sanitizer memcheck.
// V: float or float2 (LayerNorm's two sums); SLOTS: at least the cluster's blocks x a block's warps.
template <typename V, int SLOTS> struct ClusterPush {
    unsigned long long bar;  // mbarrier: one arrival (the expected bytes) and the peers' st.async bytes
    V slot[SLOTS];           // [block rank * warps + warp]
};
template <typename V, int SLOTS> __device__ __forceinline__ void cluster_push_begin(ClusterPush<V, SLOTS> *s, int ncl) {
    if (ncl < 2) return;  // a block alone: cluster_push_sum takes the block sum
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(&s->bar)));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(&s->bar)),
                     "r"(ncl * (int)(blockDim.x / 32) * (int)sizeof(V))
                     : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");  // waited in cluster_push_sum
#else
    __trap();  // launched in clusters only on sm_90+
#endif
}
// One value into a peer's slot (a shared::cluster address), counted by the peer's mbarrier.
__device__ __forceinline__ void st_async(unsigned slot, float v, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(slot),
                 "r"(__float_as_uint(v)), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void st_async(unsigned slot, float2 v, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(slot),
                 "f"(v.x), "f"(v.y), "r"(bar)
                 : "memory");
}
template <typename V, int SLOTS> __device__ __forceinline__ V cluster_push_sum(V v, ClusterPush<V, SLOTS> *s, int ncl) {
    if (ncl < 2) return block_sum_once(v, s->slot);  // a block alone: one barrier
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const int lane = threadIdx.x % 32, nw = blockDim.x / 32;
    unsigned rank;
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    v = warp_sum(v);
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // every block's mbarrier is initialised
    if (lane < ncl) {  // lane p sends the warp's partial to block p
        unsigned slot, bar;
        const unsigned mine = smem_addr(&s->slot[rank * nw + threadIdx.x / 32]);  // this warp's slot, in each block
        asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(slot) : "r"(mine), "r"(lane));
        asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(bar) : "r"(smem_addr(&s->bar)), "r"(lane));
        st_async(slot, v, bar);
    }
    asm volatile(
        "{\n .reg .pred done;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
        " @!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(&s->bar))
        : "memory");
    V t{};
    for (int i = lane; i < ncl * nw; i += 32) t = vadd(t, s->slot[i]);
    return warp_sum(t);
#else
    __trap();  // launched in clusters only on sm_90+
    return v;
#endif
}
__device__ __forceinline__ void cluster_release_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().barrier_wait();
#endif
}
