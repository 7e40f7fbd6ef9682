// harness/validate.h: the inputs (cuRAND on the device, the same values on the host for the reference) and
// the validation of every element of every output.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

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
// widened by row_atol[i / cols] and elem_atol[i] when given), or when gpu is NaN/Inf and ref is finite. max_rel uses
// |ref| floored at atol so that zeros do not blow it up.
static inline int element_bad(double g, double f, tolerance_t tol, double extra) {
    if (!isfinite(f)) return !(isnan(f) ? isnan(g) : g == f);  // a non-finite reference must be matched in kind
    if (!isfinite(g)) return 1;
    return fabs(g - f) > tol.atol + extra + tol.rtol * fabs(f);
}
static inline double extra_atol(const double *row_atol, const double *elem_atol, long i, long cols) {
    return (row_atol ? row_atol[i / cols] : 0.0) + (elem_atol ? elem_atol[i] : 0.0);
}
static check_t compare_arrays(const double *gpu, const double *ref, long n, long cols, tolerance_t tol,
                              const double *row_atol, const double *elem_atol = NULL) {
    check_t r;
    memset(&r, 0, sizeof r);
    double max_abs = 0, max_rel = 0;
    long n_bad = 0;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : max_abs, max_rel) reduction(+ : n_bad) schedule(static)
#endif
    for (long i = 0; i < n; i++) {
        double g = gpu[i], f = ref[i];
        if (element_bad(g, f, tol, extra_atol(row_atol, elem_atol, i, cols))) n_bad++;
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
        if (element_bad(gpu[i], ref[i], tol, extra_atol(row_atol, elem_atol, i, cols))) r.first_bad[r.n_first++] = i;
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
OMP_PARALLEL_FOR
        for (long j = 0; j < n; j++) g[j] = host_load(h, j, o->dtype);
        check_t r = compare_arrays(g, o->ref, n, o->cols, o->tol, o->row_atol, o->elem_atol);
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
