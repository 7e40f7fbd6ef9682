// harness/driver.h: the driver a program calls: parse, open the GPU, set up, measure the copy, run and rank
// the kernels.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// The driver: parse, open the device, set up, measure the copy, run the kernel(s), report.

typedef struct { const kernel_t *k; const problem_t *p; launch_t l; } kernel_work_t;
static void kernel_work(void *ctx) {
    kernel_work_t *w = (kernel_work_t *)ctx;
    w->k->launch(w->p, &w->l);
}

// A deterministic kernel's second launch (kernel_t.deterministic): its outputs copied, poisoned, the kernel launched
// again on the same inputs, and every output compared with the first launch's bit for bit. Returns the elements that
// differ (each output that differs says how many).
static long repeat_identical(const program_t *prog, problem_t *p, void (*work)(void *), void *ctx) {
    void *first[MAX_OUTPUTS];
    for (int i = 0; i < p->n_out; i++) {
        size_t bytes = (size_t)output_numel(&p->out[i]) * dtype_size(p->out[i].dtype);
        first[i] = malloc(bytes ? bytes : 1);
        CUDA_CHECK(cudaMemcpy(first[i], p->out[i].dev, bytes, cudaMemcpyDeviceToHost));
    }
    poison_outputs(p);
    if (prog->reset) prog->reset(p);
    work(ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    long differ = 0;
    for (int i = 0; i < p->n_out; i++) {
        const output_t *o = &p->out[i];
        size_t es = dtype_size(o->dtype), n = (size_t)output_numel(o);
        unsigned char *again = (unsigned char *)malloc(n > 0 ? n * es : 1);
        CUDA_CHECK(cudaMemcpy(again, o->dev, n * es, cudaMemcpyDeviceToHost));
        long d = 0;
        for (size_t j = 0; j < n; j++) d += memcmp(again + j * es, (unsigned char *)first[i] + j * es, es) != 0;
        if (d) printf("  %s: %ld of %zu elements differ between two launches (not deterministic)\n", o->name, d, n);
        differ += d;
        free(again), free(first[i]);
    }
    return differ;
}

typedef struct {
    int number;
    const char *name;
    int ran;              // at least one OK point
    int failed;
    int block;            // best block
    double ms, gbps, pct;
    char note[sizeof(((launch_t *)0)->path)];  // the best block's path (--check: the last one's), or why skipped
} kernel_summary_t;

static const int k_sweep[] = {32, 64, 128, 256, 512, 1024};

// A block size that validated and was timed, offered to its kernel's summary: the fastest so far becomes the
// kernel's best, and its path the ranking's note (the best block's path, not the last block size's).
static void summary_offer(kernel_summary_t *s, int block, double ms, double gbps, double pct, const char *path) {
    if (s->ran && gbps <= s->gbps) return;
    s->ran = 1; s->block = block; s->ms = ms; s->gbps = gbps; s->pct = pct;
    snprintf(s->note, sizeof s->note, "%s", path);
}

// --phases: the read-only and write-only probes (measure_phases), measured once after the copy.
typedef struct { sol_t rd, wr; } phases_t;

static kernel_summary_t run_kernel(const program_t *prog, const options_t *o, problem_t *p, const kernel_t *k,
                                   const sol_t *sol, const phases_t *ph, const char *shape) {
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
    pt.shape = shape;
    pt.bytes = p->bytes;
    pt.sol_gbps = sol ? sol->gbps : 0;

    const char *no_pdl = k->number == 0 ? "--pdl: cuDNN launches its own kernels (its --hot row says whether they "
                                          "chain by programmatic dependent launch)"
                                        : "--pdl: its kernels do not wait for the grid before them";
    const char *why = !(k->dtypes & DT_BIT(p->dtype))
                          ? reasonf("kernel %d has no %s version", k->number, dtype_name(p->dtype))
                          : o->pdl && !k->pdl ? no_pdl : NULL;
    if (why) {
        printf("skipped: %s\n", why);
        snprintf(s.note, sizeof s.note, "%s", why);
        pt.status = "SKIP"; pt.detail = why;
        emit_point(o, &pt);
        return s;
    }
    char skip_note[128] = "";  // the first block size's skip reason (the note only if no block size ran)
    char detail[sizeof(((launch_t *)0)->path) + 40];  // the path, and a hot time's note
    int blocks[8], nb = 0;
    if (o->block_size == BLOCK_PLAN && k->plan) blocks[nb++] = k->plan(p);  // the block the dispatcher gives it
    else if (o->block_size > 0) blocks[nb++] = o->block_size;
    else if (k->own_block) blocks[nb++] = 0;
    else for (int i = 0; i < 6; i++) blocks[nb++] = k_sweep[i];

    int validated = 0;  // a block size of this kernel was validated (--validate-first)
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
            pt.clock = pt.chained = NULL;
            emit_point(o, &pt);
            continue;
        }
        kernel_work_t w;
        w.k = k; w.p = p;
        memset(&w.l, 0, sizeof w.l);
        w.l.block_size = bs;
        // --validate-first: a block size after the kernel's first validated one runs (its first-call setup) but is
        // not validated: its errors read -1
        const int validate = !o->validate_first || !validated;
        if (validate) poison_outputs(p);
        if (prog->reset) prog->reset(p);
        k->launch(p, &w.l);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        if (g_hot && validate) {  // --hot times captured launches (a dispatcher reads its captured rows there):
                                  // validate one, after the plain launch above did any first-call setup, as
                                  // time_hot's warm-up does
            poison_outputs(p);
            if (prog->reset) prog->reset(p);
            if (run_captured_once(kernel_work, &w)) k->launch(p, &w.l);  // not capturable: as is (timing says so)
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        check_t c;
        memset(&c, 0, sizeof c);
        if (validate) c = validate_outputs(p, 1);
        else c.max_abs = c.max_rel = -1;
        if (validate && k->deterministic && !c.n_bad) c.n_bad = repeat_identical(prog, p, kernel_work, &w);
        validated = 1;
        int used = w.l.block_used ? w.l.block_used : bs;
        char bsbuf[32];
        if (bs) snprintf(bsbuf, sizeof bsbuf, "block_size %4d", used);
        else snprintf(bsbuf, sizeof bsbuf, "block_size %4d (own)", used);
        int ok = c.n_bad == 0;
        pt.block_size = used;
        pt.max_abs = c.max_abs; pt.max_rel = c.max_rel;
        pt.status = ok ? "OK" : "FAIL";
        pt.detail = w.l.path;
        pt.ms_median = pt.ms_min = pt.gbps = pt.sol_pct = pt.launch_median = pt.launch_min = 0;
        pt.clock = pt.chained = NULL;
        if (!ok) s.failed = 1;
        timing_t t;
        memset(&t, 0, sizeof t);
        const char *untimed = !o->check_only && ok ? time_mode(kernel_work, &w, o->repeats, &t) : NULL;
        if (untimed) {  // validated, but it cannot be timed in this mode
            printf("%s | max err abs %.1e rel %.1e | OK | skipped timing: %s\n", bsbuf, c.max_abs, c.max_rel, untimed);
            if (!skip_note[0]) snprintf(skip_note, sizeof skip_note, "%s", untimed);
            pt.status = "SKIP"; pt.detail = untimed;
        } else if (!o->check_only && ok) {
            pt.ms_median = t.median_ms;
            pt.ms_min = t.min_ms;
            pt.launch_median = t.launch_median_ms;
            pt.launch_min = t.launch_min_ms;
            pt.clock = t.clock;
            if (o->hot) pt.chained = t.chained ? "yes" : "no";
            pt.gbps = p->bytes / (t.median_ms * 1e-3) / 1e9;
            pt.sol_pct = sol && sol->gbps > 0 ? 100.0 * pt.gbps / sol->gbps : 0;
            char launch[48];
            if (strcmp(t.clock, "cupti") == 0) snprintf(launch, sizeof launch, "with launch %.2f us", 1e3 * t.launch_median_ms);
            else snprintf(launch, sizeof launch, "clock: events");
            printf("%s | %.2f us (min %.2f) | %s | %7.1f GB/s | %5.1f%% SOL | max err abs %.1e rel %.1e | OK%s%s\n",
                   bsbuf, 1e3 * t.median_ms, 1e3 * t.min_ms, launch, pt.gbps, pt.sol_pct, c.max_abs, c.max_rel,
                   w.l.path[0] ? " | path " : "", w.l.path);
            if (t.chained && !o->pdl) {  // the library chains its own launches: a PDL time, not a plain one
                printf("%s | its launches chain by programmatic dependent launch on their own (%d edges of the "
                       "captured graph): this hot time is a chained launch's, as with --pdl\n", bsbuf, t.chained);
                snprintf(detail, sizeof detail, "%s%schained by PDL on its own", w.l.path, w.l.path[0] ? "; " : "");
                pt.detail = detail;
            }
            summary_offer(&s, used, t.median_ms, pt.gbps, pt.sol_pct, w.l.path);
        } else {
            printf("%s | max err abs %.1e rel %.1e | %s%s%s\n", bsbuf, c.max_abs, c.max_rel, ok ? "OK" : "FAIL",
                   w.l.path[0] ? " | path " : "", w.l.path);
            if (ok) {  // --check: the note is the last validated block's path
                s.ran = 1;
                snprintf(s.note, sizeof s.note, "%s", w.l.path);
            }
        }
        emit_point(o, &pt);
    }
    if (!s.ran) snprintf(s.note, sizeof s.note, "%s", skip_note);  // the ranking's "skipped: why"
    if (!o->check_only && s.ran)
        printf("best: block_size %d | %.1f GB/s | %.1f%% SOL\n", s.block, s.gbps, s.pct);
    if (!o->check_only && s.ran && ph)
        printf("phases: best %.2f us against read then write %.2f us (%.2f + %.2f): %.1f%% of that bound\n",
               1e3 * s.ms, 1e3 * (ph->rd.ms + ph->wr.ms), 1e3 * ph->rd.ms, 1e3 * ph->wr.ms,
               100.0 * (ph->rd.ms + ph->wr.ms) / s.ms);
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
    g_hot = o.hot;
    g_pdl = o.pdl;
    if (o.help) { usage(prog, stdout); return EXIT_OK; }
    if (o.list) { print_list(prog); return EXIT_OK; }
    open_device(prog, o.device);

    problem_t *p = prog->setup(&o);
    prog->reference(p);
    sol_t sol;
    phases_t ph;
    int have_sol = !o.check_only;
    if (have_sol) {
        sol = measure_sol(p->bytes, o.repeats);
        printf("speed of light: device copy %.1f GB/s (measured now, %.1f MB moved, %s, %s)\n", sol.gbps,
               sol.bytes / 1e6, o.hot ? (o.pdl ? "hot, graph replay, PDL" : "hot, graph replay") : "cold L2", sol.method);
        if (o.phases) {
            measure_phases(p->bytes, o.repeats, &ph.rd, &ph.wr);
            printf("phases: read-only %.2f us (%.1f GB/s, %s), write-only %.2f us (%.1f GB/s, %s), %.1f MB each; "
                   "read then write %.2f us, %.1f%% of the copy's rate\n",
                   1e3 * ph.rd.ms, ph.rd.gbps, ph.rd.method, 1e3 * ph.wr.ms, ph.wr.gbps, ph.wr.method,
                   ph.rd.bytes / 1e6, 1e3 * (ph.rd.ms + ph.wr.ms), 100.0 * sol.ms / (ph.rd.ms + ph.wr.ms));
        }
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
    // the CSV's shape: the program's, with the timing mode when it is not the default
    char shape[96];
    snprintf(shape, sizeof shape, "%s%s%s", p->shape, o.hot ? ":hot" : "", o.pdl ? ":pdl" : "");
    kernel_summary_t *sum = (kernel_summary_t *)calloc(prog->n_kernels, sizeof(kernel_summary_t));
    int n_sum = 0, any_fail = 0;
    for (int i = 0; i < n_run; i++) {
        sum[n_sum] = run_kernel(prog, &o, p, run[i], have_sol ? &sol : NULL,
                                have_sol && o.phases ? &ph : NULL, shape);
        any_fail |= sum[n_sum].failed;
        n_sum++;
    }
    if (o.kernel == KERNEL_ALL || o.kernel == KERNEL_LIST) {
        qsort(sum, n_sum, sizeof sum[0], cmp_summary);
        printf("\nranking (%s, %s, %s):\n", prog->op, dtype_name(p->dtype), p->shape_desc);
        printf("rank | kernel | %-18s | block |  time us | GB/s    | %%SOL  | note\n", "name");
        int rank = 0;
        for (int i = 0; i < n_sum; i++) {
            kernel_summary_t *s = &sum[i];
            if (s->failed)
                printf("   - | %6d | %-18s |     - |        - |       - |     - | FAIL\n", s->number, s->name);
            else if (!s->ran)
                printf("   - | %6d | %-18s |     - |        - |       - |     - | skipped: %s\n", s->number, s->name, s->note);
            else if (o.check_only)
                printf("   - | %6d | %-18s |     - |        - |       - |     - | OK%s%s\n", s->number, s->name,
                       s->note[0] ? " " : "", s->note);
            else
                printf("%4d | %6d | %-18s | %5d | %8.2f | %7.1f | %5.1f | %s\n", ++rank, s->number, s->name, s->block,
                       1e3 * s->ms, s->gbps, s->pct, s->note);
        }
    }
    free(sum);
    free(run);
    prog->teardown(p);
    if (g_flush) CUDA_CHECK(cudaFree(g_flush));
    return any_fail ? EXIT_VALIDATION : EXIT_OK;
}
