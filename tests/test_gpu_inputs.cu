// GPU check (part of tests/gpu_suite.sh): the host copy that fill_normal returns is bit for bit the device
// buffer, and the device values are cuRAND's host-generator values (host_fill_normal, which the CPU tests
// use) to within 1e-5 relative (1e-5 absolute near 0), plus one rounding step of the dtype. Not bit for bit:
// the Philox bits are the same, but cuRAND's device normal transform uses faster math than its host one
// (seen on an H100: 76% of fp32 values differ, most by 1 ulp, a few by ~3e-6 relative, and a bf16/fp16
// rounding can then land one step apart).
#include "../common.h"

int main(void) {
    static const program_t prog = {"inputs", "test_gpu_inputs"};
    open_device(&prog, 0);
    int failed = 0;
    const size_t sizes[] = {1, 2, 1031, 1 << 20};
    for (int d = 0; d < DT_COUNT; d++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            void *dev = dev_alloc(n * dtype_size((dtype_t)d));
            double *from_dev = host_alloc_doubles(n), *from_host = host_alloc_doubles(n), *readback = host_alloc_doubles(n);
            fill_normal(dev, from_dev, n, (dtype_t)d, 1234, 3, 0.5, 2.0);
            host_fill_normal(from_host, n, (dtype_t)d, 1234, 3, 0.5, 2.0);
            void *h = malloc(n * dtype_size((dtype_t)d));
            CUDA_CHECK(cudaMemcpy(h, dev, n * dtype_size((dtype_t)d), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++) readback[i] = host_load(h, i, (dtype_t)d);
            const int mant = d == DT_FP32 ? 23 : d == DT_FP16 ? 10 : 7;
            size_t copy_diff = 0, far = 0, inexact = 0, first = 0;
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                copy_diff += readback[i] != from_dev[i];
                inexact += from_dev[i] != from_host[i];
                double diff = fabs(from_dev[i] - from_host[i]);
                double allowed = 1e-5 * fmax(fabs(from_host[i]), 1.0) + 2.0 * ldexp(fabs(from_host[i]), -mant);
                worst = fmax(worst, diff / fmax(fabs(from_host[i]), 1.0));
                if (diff > allowed) { if (!far) first = i; far++; }
            }
            int bad = copy_diff || far;
            printf("%s %s n=%zu: host copy %s the device buffer; device vs host generator: %zu of %zu differ "
                   "(largest %.1e relative), %zu beyond the allowance",
                   bad ? "FAIL" : "PASS", dtype_name((dtype_t)d), n, copy_diff ? "differs from" : "is exactly",
                   inexact, n, worst, far);
            if (far) printf(" (first at %zu: %.9g vs %.9g)", first, from_dev[first], from_host[first]);
            printf("\n");
            failed |= bad;
            free(h); free(from_dev); free(from_host); free(readback);
            CUDA_CHECK(cudaFree(dev));
        }
    }
    return failed;
}
