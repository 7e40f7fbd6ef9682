// CPU tests (no GPU needed): the LayerNorm reference, the validator, input generation on the host,
// option parsing. Prints one line per test ("PASS name" / "FAIL name: why") and exits non-zero on failure;
// tests/run_tests.sh counts the lines.
#define NORM_NO_MAIN
#include "../layernorm_forward.cu"

#include "test_util.h"

// ---- the reference against hand-checked cases

static void test_reference_hand_cases(void) {
    const double eps = 1e-5;
    {  // a constant row: mean = the constant, variance 0, rstd = 1/sqrt(eps), y = bias
        double x[4] = {3, 3, 3, 3}, w[4] = {2, -1, 0.5, 7}, b[4] = {0.25, -4, 9, 0};
        double y[4], m, r;
        layernorm_forward_cpu(y, &m, &r, x, w, b, 1, 4, eps);
        int ok = m == 3.0 && close_to(r, 1 / sqrt(eps), 1e-15);
        for (int c = 0; c < 4; c++) ok &= y[c] == b[c];
        check("reference: constant row gives y = bias, rstd = 1/sqrt(eps)", ok, "mean %g rstd %g y0 %g", m, r, y[0]);
    }
    {  // two values a, b: mean (a+b)/2, var ((a-b)/2)^2, normalized values -/+ d/sqrt(d^2+eps)
        double x[2] = {1, 5}, w[2] = {1, 1}, b[2] = {0, 0};
        double y[2], m, r;
        layernorm_forward_cpu(y, &m, &r, x, w, b, 1, 2, eps);
        double d = 2.0, n = d / sqrt(d * d + eps);
        check("reference: two-value row", m == 3.0 && close_to(r, 1 / sqrt(4 + eps), 1e-15) && close_to(y[0], -n, 1e-15) &&
                                              close_to(y[1], n, 1e-15),
              "mean %g rstd %g y %g %g", m, r, y[0], y[1]);
    }
    {  // two values with weight and bias: y = +-n * w + b
        double x[2] = {-2, 0}, w[2] = {3, -0.5}, b[2] = {1, 2};
        double y[2], m, r;
        layernorm_forward_cpu(y, &m, &r, x, w, b, 1, 2, eps);
        double n = 1.0 / sqrt(1.0 + eps);
        check("reference: two-value row with weight and bias",
              m == -1.0 && close_to(y[0], -n * 3 + 1, 1e-15) && close_to(y[1], n * -0.5 + 2, 1e-15), "y %g %g", y[0], y[1]);
    }
    {  // C = 1: every row is constant
        double x[3] = {-7, 0, 1e3}, w[1] = {4}, b[1] = {-0.5};
        double y[3], m[3], r[3];
        layernorm_forward_cpu(y, m, r, x, w, b, 3, 1, eps);
        int ok = 1;
        for (int i = 0; i < 3; i++) ok &= y[i] == -0.5 && m[i] == x[i] && close_to(r[i], 1 / sqrt(eps), 1e-15);
        check("reference: C = 1 gives y = bias", ok, "y %g %g %g", y[0], y[1], y[2]);
    }
    {  // eps = 0 on a unit-variance row: y are exact standard scores
        double x[4] = {-3, -1, 1, 3}, w[4] = {1, 1, 1, 1}, b[4] = {0, 0, 0, 0};
        double y[4], m, r;
        layernorm_forward_cpu(y, &m, &r, x, w, b, 1, 4, 0.0);
        double s = 1 / sqrt(5.0);
        check("reference: eps 0, known standard scores",
              close_to(y[0], -3 * s, 1e-15) && close_to(y[3], 3 * s, 1e-15) && close_to(r, s, 1e-15), "y0 %g", y[0]);
    }
}

// ---- the reference against an independent float64 computation (Welford, long double sums)

static void test_row_atol(void) {
    double mean[3] = {0.0, 1000.0, -2.0}, rstd[3] = {1.0, 1.0, 0.5}, w[2] = {0.5, -2.0}, ra[3];
    layernorm_row_atol(ra, mean, rstd, w, 3, 2);
    double u = 16.0 * ldexp(1.0, -24);
    check("reference: the unavoidable fp32 error grows with |mean| * rstd * max|w|",
          ra[0] == 0.0 && close_to(ra[1], u * 1000 * 2, 1e-15) && close_to(ra[2], u * 2 * 0.5 * 2, 1e-15));
}

static void test_reference_oracle(void) {
    const long N = 37, C = 1000;
    double *x = host_alloc_doubles(N * C), *w = host_alloc_doubles(C), *b = host_alloc_doubles(C);
    host_fill_normal(x, N * C, DT_FP32, 99, 0, 5.0, 3.0);
    host_fill_normal(w, C, DT_FP32, 99, 1, 1.0, 0.25);
    host_fill_normal(b, C, DT_FP32, 99, 2, 0.0, 0.25);
    double *y = host_alloc_doubles(N * C), *m = host_alloc_doubles(N), *r = host_alloc_doubles(N);
    layernorm_forward_cpu(y, m, r, x, w, b, N, C, 1e-5);
    double worst = 0;
    for (long i = 0; i < N; i++) {
        long double mean = 0, m2 = 0;  // Welford in long double
        for (long c = 0; c < C; c++) {
            long double d = x[i * C + c] - mean;
            mean += d / (c + 1);
            m2 += d * (x[i * C + c] - mean);
        }
        long double rstd = 1.0L / sqrtl(m2 / C + 1e-5L);
        worst = fmax(worst, fabs((double)(mean - m[i])) / fabs((double)mean));
        worst = fmax(worst, fabs((double)(rstd - r[i])) / (double)rstd);
        for (long c = 0; c < C; c++) {
            long double yy = (x[i * C + c] - mean) * rstd * w[c] + b[c];
            worst = fmax(worst, fabs((double)(yy - y[i * C + c])) / fmax(1.0, fabs((double)yy)));
        }
    }
    check("reference: matches an independent float64 Welford oracle (37x1000, mean 5, std 3)", worst < 1e-12,
          "worst relative difference %g", worst);
    free(x); free(w); free(b); free(y); free(m); free(r);
}

// ---- the validator on host arrays

static void test_validator(void) {
    tolerance_t tol = {1e-4, 1e-4};
    double ref[6] = {0.0, 1.0, -2.0, 10.0, 3.5, -0.25};
    double g[6];
    memcpy(g, ref, sizeof g);
    check_t c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: identical arrays pass with zero error", c.n_bad == 0 && c.max_abs == 0 && c.max_rel == 0);

    memcpy(g, ref, sizeof g);
    g[3] = nan("");
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: a NaN fails and is located", c.n_bad == 1 && c.n_first == 1 && c.first_bad[0] == 3, "n_bad %ld", c.n_bad);

    memcpy(g, ref, sizeof g);
    g[1] = INFINITY;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: an Inf fails", c.n_bad == 1);

    // an element never written: the poison pattern (0xFF bytes) read back as each dtype
    for (int d = 0; d < DT_COUNT; d++) {
        unsigned char poison[4] = {0xFF, 0xFF, 0xFF, 0xFF};
        double v = host_load(poison, 0, (dtype_t)d);
        memcpy(g, ref, sizeof g);
        g[5] = v;
        c = compare_arrays(g, ref, 6, 1, tolerance_for((dtype_t)d), NULL);
        char name[96];
        snprintf(name, sizeof name, "validator: an unwritten (poisoned) %s element fails", dtype_name((dtype_t)d));
        check(name, isnan(v) && c.n_bad == 1 && c.first_bad[0] == 5);
    }

    // just inside / just outside atol + rtol*|ref|
    double limit = tol.atol + tol.rtol * fabs(ref[3]);
    memcpy(g, ref, sizeof g);
    g[3] = ref[3] + 0.99 * limit;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: an error just inside the tolerance passes", c.n_bad == 0, "max_abs %g limit %g", c.max_abs, limit);
    g[3] = ref[3] + 1.01 * limit;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: an error just outside the tolerance fails", c.n_bad == 1 && c.first_bad[0] == 3);
    // at zero the absolute tolerance alone applies
    memcpy(g, ref, sizeof g);
    g[0] = 1.01 * tol.atol;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: near zero, atol decides (just outside fails)", c.n_bad == 1);
    g[0] = 0.99 * tol.atol;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: near zero, atol decides (just inside passes)", c.n_bad == 0);
    // errors are reported
    memcpy(g, ref, sizeof g);
    g[2] = -2.0 + 5e-5;
    c = compare_arrays(g, ref, 6, 1, tol, NULL);
    check("validator: max abs and max rel error reported", fabs(c.max_abs - 5e-5) < 1e-12 && fabs(c.max_rel - 2.5e-5) < 1e-12,
          "abs %g rel %g", c.max_abs, c.max_rel);
    // a per-row extra absolute tolerance widens that row alone
    double rr[4] = {1.0, 1.0, 1.0, 1.0}, gg[4] = {1.0 + 5e-4, 1.0, 1.0, 1.0 + 5e-4}, extra[2] = {1e-3, 0.0};
    c = compare_arrays(gg, rr, 4, 2, tol, extra);
    check("validator: row_atol widens its own row only", c.n_bad == 1 && c.first_bad[0] == 3, "n_bad %ld", c.n_bad);
    // a reference NaN must be matched by a NaN
    double rn[2] = {nan(""), 1.0}, gn[2] = {0.0, 1.0};
    c = compare_arrays(gn, rn, 2, 1, tol, NULL);
    check("validator: a finite value where the reference is NaN fails", c.n_bad == 1);
    // many failures: only the first five positions are kept, in order
    double big_ref[100], big_g[100];
    for (int i = 0; i < 100; i++) { big_ref[i] = i; big_g[i] = i % 10 == 3 ? i + 1 : i; }
    c = compare_arrays(big_g, big_ref, 100, 1, tol, NULL);
    check("validator: counts every failure, keeps the first five", c.n_bad == 10 && c.n_first == 5 && c.first_bad[0] == 3 &&
                                                                      c.first_bad[4] == 43);
    // the tolerance table: looser for narrower types
    tolerance_t t32 = tolerance_for(DT_FP32), t16 = tolerance_for(DT_FP16), tb = tolerance_for(DT_BF16);
    check("validator: tolerances widen fp32 < fp16 < bf16, and cover half an ulp of the dtype",
          t32.rtol < t16.rtol && t16.rtol < tb.rtol && t16.rtol >= 4.9e-4 && tb.rtol >= 3.9e-3);
}

// ---- inputs: cuRAND's host generator, seeded, rounded to the dtype

static void test_inputs(void) {
    const size_t n = 100001;  // odd: the generator is asked for an even count
    double *a = host_alloc_doubles(n), *b = host_alloc_doubles(n), *c = host_alloc_doubles(n);
    host_fill_normal(a, n, DT_FP32, 7, 0, 0.0, 1.0);
    host_fill_normal(b, n, DT_FP32, 7, 0, 0.0, 1.0);
    host_fill_normal(c, n, DT_FP32, 8, 0, 0.0, 1.0);
    check("inputs: same seed gives the same values", memcmp(a, b, n * sizeof(double)) == 0);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += a[i] == c[i];
    check("inputs: another seed gives other values", same < n / 100, "%zu equal", same);
    host_fill_normal(c, n, DT_FP32, 7, 1, 0.0, 1.0);
    same = 0;
    for (size_t i = 0; i < n; i++) same += a[i] == c[i];
    check("inputs: each tensor has its own stream", same < n / 100, "%zu equal", same);
    host_fill_normal(a, n, DT_FP32, 7, 0, 1000.0, 2.0);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) { s += a[i]; s2 += a[i] * a[i]; }
    double mean = s / n, sd = sqrt(s2 / n - mean * mean);
    check("inputs: --input-mean/--input-std shape the distribution", fabs(mean - 1000) < 0.05 && fabs(sd - 2) < 0.05,
          "mean %g std %g", mean, sd);
    int nonconst = 0;
    for (size_t i = 1; i < n; i++) nonconst |= a[i] != a[0];
    check("inputs: not constant", nonconst);
    // rounding to the dtype: fp16/bf16 values are the fp32 values rounded to nearest even
    host_fill_normal(a, n, DT_FP32, 7, 0, 0.0, 1.0);
    host_fill_normal(b, n, DT_BF16, 7, 0, 0.0, 1.0);
    host_fill_normal(c, n, DT_FP16, 7, 0, 0.0, 1.0);
    int ok_b = 1, ok_h = 1;
    for (size_t i = 0; i < n; i++) {
        ok_b &= b[i] == (double)__bfloat162float(__float2bfloat16_rn((float)a[i]));
        ok_h &= c[i] == (double)__half2float(__float2half_rn((float)a[i]));
        ok_b &= fabs(b[i] - a[i]) <= fabs(a[i]) * 0.00390625 + 1e-30;  // half a bf16 ulp
    }
    check("inputs: bf16 values are the fp32 values rounded (within half an ulp)", ok_b);
    check("inputs: fp16 values are the fp32 values rounded", ok_h);
    free(a); free(b); free(c);
}

// ---- option parsing (the accepting paths; the exits are tested from the shell)

static options_t parse(const char *line) { return parse_line(&k_program, line); }

static void test_parsing(void) {
    options_t o = parse("");
    check("parse: defaults are llm.c's B=8 T=1024 C=768, the best kernel, fp32, sweep",
          o.rows == 8192 && o.cols == 768 && o.kernel == KERNEL_DEFAULT && o.dtype == DT_FP32 && o.block_size == 0 &&
              o.repeats == 0 && !o.check_only);
    o = parse("7 -N 100 -C 33 --dtype bf16 --block-size 96 --repeats 5 --seed 3 --check");
    check("parse: kernel, shape, dtype, block size, repeats, seed, check",
          o.kernel == 7 && o.rows == 100 && o.cols == 33 && o.dtype == DT_BF16 && o.block_size == 96 && o.repeats == 5 &&
              o.seed == 3 && o.check_only);
    o = parse("12 --block-size plan");
    check("parse: --block-size plan: each rung at its plan's block size", o.block_size == BLOCK_PLAN && o.kernel == 12);
    o = parse("all -B 4 -T 16 --cols 64");
    check("parse: all, -B/-T give rows = B*T", o.kernel == KERNEL_ALL && o.rows == 64 && o.cols == 64);
    o = parse("-T 2");
    check("parse: -T alone keeps B = 8", o.rows == 16);
    o = parse("--input-mean 1000 --input-std 0.5 --csv a.csv --json a.jsonl --device 0 --rows 5");
    check("parse: input distribution, outputs, device, --rows", o.input_mean == 1000 && o.input_std == 0.5 &&
                                                                   strcmp(o.csv_path, "a.csv") == 0 &&
                                                                   strcmp(o.json_path, "a.jsonl") == 0 && o.rows == 5);
    g_eps = 1e-5;
    o = parse("--eps 1e-3");
    check("parse: --eps (the program's own option)", g_eps == 1e-3);
    g_eps = 1e-5;
    o = parse("11,12,13 --cluster 4");
    int list_ok = g_cluster == 4 && o.kernel == KERNEL_LIST;
    o = parse("12 --cluster 16");
    check("parse: --cluster with kernels 11, 12, 13 (alone or as a list)", list_ok && g_cluster == 16 && o.kernel == 12);
    g_cluster = 0;
    o = parse("12 --packs 2");
    int packs_ok = g_packs == 2 && o.kernel == 12;
    o = parse("14 --packs 1");
    packs_ok &= g_packs == 1 && o.kernel == 14;
    o = parse("--packs 4");
    check("parse: --packs with kernel 12, the dispatcher (14) and the default", packs_ok && g_packs == 4 &&
          o.kernel == KERNEL_DEFAULT);
    g_packs = 0;
    o = parse("--list");
    check("parse: --list", o.list);
    long v;
    check("parse: strict integers", parse_long("12", 1, 100, &v) == 0 && v == 12 && parse_long("12x", 1, 100, &v) &&
                                        parse_long("", 1, 100, &v) && parse_long("0", 1, 100, &v) &&
                                        parse_long("101", 1, 100, &v) && parse_long("-3", 1, 100, &v));
}

// ---- registry sanity

static void test_registry(void) {
    check_registry_shape(&k_program, 15);
    int teaching = 1;
    for (int i = 1; i <= 5; i++) teaching &= k_program.kernels[i].dtypes == DT_BIT(DT_FP32);
    for (int i = 6; i <= 14; i++) teaching &= k_program.kernels[i].dtypes == DT_ALL;
    check("registry: 1-5 are fp32 only, 6-14 run fp32, fp16 and bf16", teaching);
    {  // rung 10's instances: 16-byte packs, at most 4 a lane (fp32 C <= 512, 16-bit C <= 1024)
        ln_problem_t p;
        memset(&p, 0, sizeof p);
        int ok = 1;
        const struct { dtype_t d; long C; int has; } cases[] = {{DT_FP32, 512, 1}, {DT_FP32, 1024, 0}, {DT_FP32, 130, 0},
                                                               {DT_BF16, 1024, 1}, {DT_FP16, 8, 1}, {DT_BF16, 2048, 0},
                                                               {DT_BF16, 1000, 1}, {DT_FP16, 1004, 0}};
        for (const auto &c : cases) {
            p.h.dtype = c.d;
            p.N = 100;
            p.C = c.C;
            ok &= (persist_fn(&p) != NULL) == (c.has == 1);
        }
        check("registry: rung 10 takes rows of at most 4 16-byte packs a lane, in every dtype", ok);
    }
    check("registry: the default kernel is the dispatcher, the last", k_program.default_kernel == 14 &&
                                                                          k_program.n_kernels == 15 &&
                                                                          strcmp(k_program.kernels[14].name, "dispatch") == 0);
    int pdl = 1;
    for (int i = 0; i < k_program.n_kernels; i++) pdl &= k_program.kernels[i].pdl == (i >= 6 && i <= 14);
    check("registry: the templated kernels 6-14 take --pdl, the others do not", pdl);
    // the rungs the dispatcher may choose (6-13): a plan exactly where the kernel does not pick its own block size
    int plans = 1;
    for (int i = 0; i < k_program.n_kernels; i++) {
        const kernel_t *k = &k_program.kernels[i];
        plans &= (k->plan != NULL) == (i >= 6 && i <= 13 && !k->own_block);
    }
    check("registry: rungs 6, 7, 9, 10 and 12 have a plan; own_block rungs (8, 11, 13) and the rest none",
          plans && k_program.kernels[8].own_block && k_program.kernels[11].own_block &&
              k_program.kernels[13].own_block);
}

// ---- kernel 0 (cuDNN) without a GPU: the slot, and the norm-forward operation cuDNN is given finalizes for
// every dtype (the graph, its heuristics and plans need a GPU; the operation does not): a wrong attribute,
// type or shape shows here, before a GPU run.

static void test_cudnn_kernel0(void) {
    check_cudnn_slot(&k_program.kernels[0]);
#ifdef HAVE_CUDNN
    for (int dt = 0; dt < DT_COUNT; dt++) {
        static float dummy[4];
        ln_problem_t p;
        memset(&p, 0, sizeof p);
        p.h.dtype = (dtype_t)dt;
        p.N = 8192;
        p.C = 768;
        p.eps = 1e-5f;
        p.x = p.w = p.b = p.y = dummy;
        p.mean = p.rstd = dummy;
        cudnn_norm_t d;
        cudnn_describe(&p, &d);
        cudnn_descs_t keep;
        memset(&keep, 0, sizeof keep);
        cudnnBackendDescriptor_t op;
        int64_t uids[7];
        void *ptrs[7];
        int n = 0;
        const char *why = cudnn_norm_op(&d, &keep, &op, uids, ptrs, &n);
        char name[128];
        snprintf(name, sizeof name, "kernel 0: cuDNN finalizes the %s LayerNorm operation (x, scale, bias, eps, mean, "
                 "rstd, y)", dtype_name((dtype_t)dt));
        check(name, !why && n == 7 && d.mode == CUDNN_LAYER_NORM && ptrs[3] == (void *)&d.eps, "%s", why ? why : "");
        cudnn_destroy_all(&keep);
    }
#endif
}

// ---- the cluster paths below sm_90 (the capability as a parameter: no GPU of each kind needed)

static void test_needs_sm90(void) {
    const char *a100 = needs_sm90(8, "sm_80");
    check("clusters: an sm_80 GPU is told 'needs sm_90'", a100 && strstr(a100, "needs sm_90") && strstr(a100, "sm_80"),
          "%s", a100 ? a100 : "(none)");
    const char *l40 = needs_sm90(8, "sm_89");
    check("clusters: an sm_89 GPU is told 'needs sm_90'", l40 && strstr(l40, "needs sm_90"), "%s", l40 ? l40 : "(none)");
    check("clusters: sm_90, sm_100 and sm_120 have them",
          !needs_sm90(9, "sm_90") && !needs_sm90(10, "sm_100") && !needs_sm90(12, "sm_120"), "");
}

// ---- rung 12's packs a thread, plans and refusals (rows one block holds: no device asked)

static ln_problem_t plan_problem(dtype_t d, long N, long C) {
    ln_problem_t p;
    memset(&p, 0, sizeof p);
    p.h.dtype = d;
    p.N = N;
    p.C = C;
    return p;
}
static void test_latency_split(void) {
    // the packs plan: from SMs rows, 1 for a row of <= 64 packs, or of <= 512 while an SM's rows hold <= 1024 packs,
    // else 4; fewer rows, 1 to 1024 packs and 2 to 2048, under an eighth of a row an SM 1 to 2048 and 2 to 4096
    check("plan: rung 12's packs a thread: 1 at <= 64 packs or <= 512 and <= 1024 packs an SM; fewer rows than SMs "
          "1, 2 to 1024, 2048 packs, under SMs / 8 rows to 2048, 4096",
          split_packs_rule(64, 1000) == 1 && split_packs_rule(65, 1000) == 4 && split_packs_rule(256, 3.9) == 1 &&
              split_packs_rule(263, 3.9) == 4 && split_packs_rule(512, 2) == 1 && split_packs_rule(513, 1.5) == 4 &&
              split_packs_rule(1024, 0.99) == 1 && split_packs_rule(1025, 0.5) == 2 && split_packs_rule(2048, 0.5) == 2 &&
              split_packs_rule(2049, 0.5) == 4 && split_packs_rule(2048, 0.06) == 1 && split_packs_rule(2049, 0.06) == 2 &&
              split_packs_rule(4096, 0.01) == 2 && split_packs_rule(4097, 0.01) == 4 && split_packs_rule(8, 0.01) == 1);
    // the rule's P holds the row in 16 blocks of 512 threads, and its plan (split_row_blocks' blocks a row, the fewest
    // threads that hold a block's share) at most 512 threads
    int fits = 1;
    for (long nvec = 1; nvec <= 32768; nvec = nvec * 3 / 2 + 1)
        for (double r = 0.004; r < 20000; r *= 2) {
            const int P = split_packs_rule(nvec, r), cl = split_row_blocks((long)(r * 132), nvec, P, 512, 0, 132);
            fits &= 16L * 512 * P >= nvec && (long)cl * 512 * P >= nvec && ceil_div(nvec, (long)cl * P) <= 512;
        }
    check("plan: rung 12's packs a thread hold the row in <= 16 blocks of <= 512 threads", fits);
    // bf16 4 x 4096 (512 packs), few rows: 1 pack a thread, one block of 512 threads; forced to 2 packs 256, to 4 128
    g_dev.prop.multiProcessorCount = 132;
    ln_problem_t p = plan_problem(DT_BF16, 4, 4096);
    int cl1 = 0, cl2 = 0, cl4 = 0, P = split_packs(&p);
    int b1 = split_plan(&p, P, 0, &cl1), b2 = split_plan(&p, 2, 0, &cl2), b4 = split_plan(&p, 4, 0, &cl4);
    check("plan: rung 12 at bf16 4 x 4096: 1 pack a thread in one block of 512 threads (2 packs: 256, 4: 128)",
          P == 1 && b1 == 512 && cl1 == 1 && b2 == 256 && cl2 == 1 && b4 == 128 && cl4 == 1, "P %d: %d x %d, %d, %d", P,
          cl1, b1, b2, b4);
    g_packs = 2;
    const int forced = split_packs(&p);
    g_packs = 0;
    check("plan: --packs 2 forces 2 packs a thread", forced == 2);
    check("plan: rung 12's blocks a row at 1 pack a thread: 4 at 128 threads, 8 at 64; at 2 packs, 4 at 64",
          split_row_blocks(4, 512, 1, 512, 128, 132) == 4 && split_row_blocks(4, 512, 1, 512, 64, 132) == 8 &&
              split_row_blocks(4, 512, 2, 512, 64, 132) == 4);
    // (reasonf's text lives in one buffer: each reason is read before the next is asked)
    const char *why;
    int said = (p = plan_problem(DT_FP32, 4, 4097), why = supports_latency_split(&p, 0), why && strstr(why, "needs 16-byte packs"));
    cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.major = 9;  // an sm_90 GPU: a row over 16 blocks is the plan's question, not the architecture's
    g_packs = 2;
    said &= (p = plan_problem(DT_FP32, 1, 131072), why = supports_latency_split(&p, 0),
             why && strstr(why, "the row (32768 16-byte packs) fits no plan of <= 2 packs a thread"));
    g_packs = 1;
    said &= (p = plan_problem(DT_FP32, 1, 65536), why = supports_latency_split(&p, 0),
             why && strstr(why, "the row (16384 16-byte packs) fits no plan of <= 1 pack a thread"));
    g_packs = 0;
    g_dev.prop = saved;
    check("rung 12 skips rows without 16-byte packs, and rows over 16 blocks x 512 threads x the packs forced", said);
}

// ---- the plans (block sizes by rows an SM: the device's SMs given, no device asked)

static void test_plans(void) {
    g_dev.prop.multiProcessorCount = 132;
    // rung 6: about an element a thread below SMs rows, two up to 8 rows an SM, four beyond; supports_ (no device
    // asked) takes each of them
    const struct { dtype_t d; long N, C; int bs; } r6[] = {
        {DT_FP32, 1, 1024, 1024}, {DT_FP32, 64, 256, 256}, {DT_FP32, 512, 256, 128}, {DT_FP32, 4096, 4096, 1024},
        {DT_FP32, 32768, 8192, 512}, {DT_BF16, 4096, 1024, 256}, {DT_FP32, 1, 16384, 1024}, {DT_FP16, 8, 64, 64},
        {DT_BF16, 32768, 2048, 128}, {DT_BF16, 262144, 1025, 128}};  // from 64 rows an SM the fewest: C / 16
    int ok6 = 1;
    for (const auto &c : r6) {
        ln_problem_t p = plan_problem(c.d, c.N, c.C);
        const int bs = plan_block_row_regs(&p);
        ok6 &= bs == c.bs && !supports_block_row_regs(&p, bs);
    }
    check("plan: rung 6 by rows an SM, at least C / 16 threads, and its supports_ takes it", ok6);
    // rung 9 takes every problem: its plan is a power of two in [32, 1024] a row's packs a thread or more
    const struct { dtype_t d; long N, C; int bs; } r9[] = {
        {DT_FP32, 1, 65536, 1024}, {DT_FP32, 512, 32768, 1024}, {DT_BF16, 4096, 1024, 32}, {DT_FP32, 64, 2048, 512},
        {DT_BF16, 512, 4096, 256}, {DT_FP32, 7, 3, 32}, {DT_BF16, 64, 1025, 1024}, {DT_BF16, 512, 1025, 512},
        {DT_BF16, 32768, 1025, 64}};  // rows without 16-byte packs: a pack a thread, 4 from a row an SM, 32 from 8
    int ok9 = 1;
    for (const auto &c : r9) {
        ln_problem_t p = plan_problem(c.d, c.N, c.C);
        ok9 &= plan_block_reread(&p) == c.bs;
    }
    check("plan: rung 9, a pack a thread below SMs rows, two up to 8 rows an SM, four beyond (32..1024); rows "
          "without 16-byte packs 4 from a row an SM, 32 from 8", ok9);
    check("plan: rung 7 at 128 threads, 256 for rows of more than 128 packs or a warp's row without 16-byte packs at "
          ">= SMs rows; rung 10 at 64, 256 from 8 rows an SM",
          subwarp_regs_vec_bs(32, 1, 8) == 128 && subwarp_regs_vec_bs(128, 1, 8) == 128 &&
              subwarp_regs_vec_bs(256, 1, 0.5) == 256 && subwarp_regs_vec_bs(65, 0, 1) == 256 &&
              subwarp_regs_vec_bs(65, 0, 0.5) == 128 && subwarp_regs_vec_bs(64, 0, 8) == 128 &&
              subwarp_persistent_bs(0.5) == 64 && subwarp_persistent_bs(7.9) == 64 &&
              subwarp_persistent_bs(8) == 256);
    check("plan: rung 12 at 4 packs a thread: rows >= SMs a block a row up to 256 threads; fewer: 32, 128 or 256",
          latency_split_bs(4, 1024, 31) == 256 && latency_split_bs(4, 182, 248) == 64 &&
              latency_split_bs(4, 8192, 31) == 256 && latency_split_bs(4, 16, 0.5) == 32 &&
              latency_split_bs(4, 2048, 0.5) == 128 && latency_split_bs(4, 8192, 0.01) == 256 &&
              latency_split_bs(4, 32768, 0.01) == 512);
    check("plan: rung 12 at 4 packs, rows >= SMs: a row of 8193-16384 packs in 8 blocks of up to 512 threads (not 16)",
          latency_split_bs(4, 8457, 23.7) == 512 && split_row_threads(8457, 4, 512) == 288 &&
              latency_split_bs(4, 8457, 0.5) == 256 && split_row_threads(8457, 4, 256) == 160);
    check("plan: rung 12 at 2 packs a thread: 64-256 below SMs rows, <= 128 up to 8 rows an SM, a block a row beyond",
          latency_split_bs(2, 8, 0.5) == 64 && latency_split_bs(2, 1024, 0.01) == 256 &&
              latency_split_bs(2, 1024, 3.9) == 128 && latency_split_bs(2, 1024, 31) == 512 &&
              latency_split_bs(2, 16384, 0.01) == 512);
    check("plan: rung 12 at 1 pack a thread: a block a row from SMs rows or to 256 packs, else SMs / rows blocks (<= 8)",
          latency_split_bs(1, 256, 0.01) == 256 && latency_split_bs(1, 512, 0.01) == 128 &&
              latency_split_bs(1, 1024, 0.1) == 128 && latency_split_bs(1, 1024, 0.2) == 256 &&
              latency_split_bs(1, 822, 0.98) == 512 && latency_split_bs(1, 2048, 0.5) == 512 &&
              latency_split_bs(1, 512, 248) == 512 && latency_split_bs(1, 8192, 3.9) == 512);
    // rung 12's plans hold the row in at most 16 blocks of at most 512 threads at each packs a thread (what its
    // supports_ asks beside the device)
    int split_ok = 1;
    for (long nvec = 1; nvec <= 32768; nvec *= 2)
        for (double r = 0.004; r < 20000; r *= 4)
            for (int P = 1; P <= 4; P *= 2) {
                const long n = nvec < 8192L * P ? nvec : 8192L * P;
                const int bs = latency_split_bs(P, n, r);
                split_ok &= bs >= 32 && bs <= 512 && 16L * bs * P >= n;
            }
    check("plan: rung 12 holds the row in <= 16 blocks of <= 512 threads at 1, 2 and 4 packs", split_ok);
}

// ---- the rule of regimes: its last row takes every problem of every variant, and its rung every problem

static void test_regimes(void) {
    const int n = (int)(sizeof k_regimes / sizeof k_regimes[0]);
    const regime_t *last = &k_regimes[n - 1];
    const kernel_t *k = ladder_rung(last->rung);
    int holds = 1;
    for (int bytes = 2; bytes <= 4; bytes += 2)
        for (int packs16 = 0; packs16 <= 1; packs16++)
            for (int launch = TL_PLAIN; launch <= TL_CAPTURED; launch++)
                for (double packs = 0.125; packs < 1e6; packs *= 3)
                    for (double rows_sm = 1e-3; rows_sm < 1e6; rows_sm *= 5) {
                        const regime_key_t key = {bytes, packs16, TV_PLAIN, launch, packs, rows_sm, 1};
                        holds &= regime_holds(last, &key);
                    }
    check("regimes: the last row holds every problem, and its rung (9) runs any C in every dtype with no check",
          n >= 2 && holds && last->rung == 9 && k->supports == NULL && k->dtypes == DT_ALL && k->plan != NULL,
          "%d rows, last rung %d", n, last->rung);
    int rungs_ok = 1;
    for (int i = 0; i < n; i++) {
        const kernel_t *r = ladder_rung(k_regimes[i].rung);
        rungs_ok &= k_regimes[i].rung >= 6 && k_regimes[i].rung < LN_DISPATCHER && r->number == k_regimes[i].rung &&
                    (r->dtypes & DT_BIT(DT_BF16)) && (r->own_block || r->plan) && k_regimes[i].when;
    }
    check("regimes: every row runs a rung of 6-13 that takes 16-bit types, with a plan unless it picks its own",
          rungs_ok);
}

int main(void) {
    test_reference_hand_cases();
    test_reference_oracle();
    test_row_atol();
    test_validator();
    test_inputs();
    test_parsing();
    test_registry();
    test_cudnn_kernel0();
    test_needs_sm90();
    test_latency_split();
    test_plans();
    test_regimes();
    return test_summary();
}
