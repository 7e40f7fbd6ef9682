// GPU check (part of tests/gpu_suite.sh): the inputs generated on the device (cuRAND Philox, rounded on the
// device) are bit for bit the values cuRAND's host generator gives (host_fill_normal, which the CPU tests
// use), and the host copy fill_normal returns is exactly the device buffer. Exit 0 when all match.
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
            size_t diff = 0, first = 0;
            for (size_t i = 0; i < n; i++)
                if (from_dev[i] != from_host[i] || readback[i] != from_dev[i]) { if (!diff) first = i; diff++; }
            printf("%s %s n=%zu: %s", diff ? "FAIL" : "PASS", dtype_name((dtype_t)d), n,
                   diff ? "device and host generators differ" : "device values == host generator values");
            if (diff) printf(" (%zu differ, first at %zu: %.9g vs %.9g)", diff, first, from_dev[first], from_host[first]);
            printf("\n");
            failed |= diff != 0;
            free(h); free(from_dev); free(from_host); free(readback);
            CUDA_CHECK(cudaFree(dev));
        }
    }
    return failed;
}
