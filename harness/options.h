// harness/options.h: the kernel registry a program fills in, its options, --help, --list, the parser and the checks of
// its --csv/--json files (opened here when they are streams).
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// The kernel registry.

typedef struct {
    int block_size;   // requested threads per block; 0 = the kernel chooses
    int block_used;   // the block size that ran (set by the launcher)
    char path[192];   // which path ran, for dispatchers (set by the launcher; "" otherwise)
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
    // 1: every kernel it launches waits for the grid before it (pdl_wait) and goes through the launch helpers
    // of gpu.h, so --pdl may start it while its predecessor finishes; 0: --pdl skips it.
    int pdl;
    // The rung's plan: the block size the dispatcher launches it at where no --block-size is given; NULL for a
    // kernel that picks its own (own_block: launched with 0).
    int (*plan)(const void *problem);
    // 1: its outputs are the same bits from launch to launch (a backward rung that sums its partials in a fixed
    // order); every validation then launches it twice and compares the bits (driver.h, repeat_identical).
    int deterministic;
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
// NULL when `fn` (a __global__ function) can launch with bs threads; else why not: its registers or its
// __launch_bounds__. A function's limit does not change in a process: each is asked of the runtime once
// (launchers and dispatchers ask at every launch, inside the timed region).
static const char *block_fits(const void *fn, int bs) {
    static struct { const void *fn; int max_threads, regs; } cache[256];
    static int n = 0;
    int i = 0;
    while (i < n && cache[i].fn != fn) i++;
    if (i == n) {
        cudaFuncAttributes a;
        CUDA_CHECK(cudaFuncGetAttributes(&a, fn));
        if (n == 256) i = 0;  // full: slot 0 is reused
        else n++;
        cache[i].fn = fn;
        cache[i].max_threads = a.maxThreadsPerBlock;
        cache[i].regs = a.numRegs;
    }
    if (bs > cache[i].max_threads) {
        // registers bind where one more warp would not fit in a block's 64 K of them (allocated 8 a thread at a time)
        const int m = cache[i].max_threads, r = (cache[i].regs + 7) / 8 * 8;
        if ((long)r * (m + 32) > 65536)
            return reasonf("%d registers a thread allow at most %d threads a block", cache[i].regs, m);
        return reasonf("built for at most %d threads a block (its __launch_bounds__)", m);
    }
    return NULL;
}

// Every argument is at most MAX_ARG_CHARS characters (parse_args refuses longer ones), so a reason that quotes
// one fits g_reason whole; one that does not anyway ends in "..." instead of being cut silently.
#define MAX_ARG_CHARS 4096
static char g_reason[2 * MAX_ARG_CHARS + 512];
// --check (validation only): kernels that choose among variants by timing them (kernel 0, cuDNN) take their
// first variant that runs instead, untimed.
static int g_check_only;
static const char *reasonf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g_reason, sizeof g_reason, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof g_reason) memcpy(g_reason + sizeof g_reason - 4, "...", 4);
    return g_reason;
}

// ------------------------------------------------------------------------------------------------
// Options.

// The CSV schema (--csv; scripts/summary.py CSV_FIELDS reads it). time_ms_median/min are on the row's clock
// (cupti: the GPU's kernel timestamps; events: CUDA events, where CUPTI could not record);
// time_ms_launch_median/min are the CUDA events around the launch; chained (--hot rows: yes / no) says whether the
// timed launches chain by programmatic dependent launch (--pdl, or a library that takes PDL on its own), empty on
// cold rows. The last four columns came later: readers treat rows without the first three as events rows, and
// a row without chained as not known to chain.
#define CSV_HEADER "op,kernel,kernel_name,dtype,shape,block_size,time_ms_median,time_ms_min,bytes,gbps,sol_gbps,sol_pct,max_abs_err,max_rel_err,status,gpu,sm,cuda,git_rev,time_ms_launch_median,time_ms_launch_min,clock,chained"

// --hot: launches captured in one CUDA graph; a replay's time / HOT_LAUNCHES is the time a launch.
#define HOT_LAUNCHES 32

#define BLOCK_PLAN (-1)  // --block-size plan
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
    int block_size;  // 0 = sweep; BLOCK_PLAN: each rung's plan's
    int repeats;     // 0 = automatic
    unsigned long long seed;
    double input_mean, input_std;
    int check_only, list, help;
    int validate_first;  // --validate-first: each kernel validated at its first block size that runs, the others timed
    int hot, pdl;    // --hot: inputs in L2, launches replayed from a CUDA graph; --pdl: programmatic dependent launch
    int phases;      // --phases: the read-only and write-only probes beside the copy, each kernel against them
    const char *csv_path, *json_path;
    int device;
} options_t;
// Whether an option that only some kernels take may be given: takes() says yes to the kernel asked for (a number,
// KERNEL_DEFAULT or KERNEL_ALL) or, for a list K1,K2,..., to every kernel of it.
static int kernels_take(const options_t *o, int (*takes)(int k)) {
    if (o->kernel != KERNEL_LIST) return takes(o->kernel);
    for (int i = 0; i < o->n_picked; i++)
        if (!takes(o->picked[i])) return 0;
    return 1;
}

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
    // Optional, per element: the same for an output that sums over rows (a backward pass's dweight: sum_atol of
    // harness/base.h). NULL = none.
    double *elem_atol;
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
            "  --block-size N    one block size instead of the sweep (a multiple of 32 in [32, 1024]); `plan`: each\n"
            "                    rung at its plan's, the one the dispatcher launches it at (a kernel with no plan: its sweep)\n"
            "  --repeats N       timed launches per point (default: enough for a stable median; a launch over 100 ms:\n"
            "                    about 1 s of them, at least 3)\n"
            "  --seed S          input seed (cuRAND Philox; default 1234)\n"
            "  --input-mean M    mean of the inputs x (default 0)\n"
            "  --input-std S     standard deviation of the inputs x (default 1)\n"
            "  --hot             time hot: inputs resident in L2, %d launches replayed from a CUDA graph, the time a\n"
            "                    launch (default: cold L2 before every launch)\n"
            "  --pdl             with --hot: programmatic dependent launch, each launch overlapping the end of the one\n"
            "                    before it (kernels that support it; the copy too)\n"
            "  --phases          beside the copy, a read-only and a write-only kernel over half its bytes each, and\n"
            "                    each kernel's best time against read then write (the bound of an op that must\n"
            "                    read all of x before it writes: BatchNorm training)\n"
            "  --check           validate only, no timing\n"
            "  --validate-first  validate each kernel at the first block size that runs and time the others without\n"
            "                    validating them (max err -1 in --csv/--json): sweeps over many large shapes, where\n"
            "                    validation is most of the time (default: every block size validated)\n"
            "  --list            print the kernel registry and exit (needs no GPU)\n"
            "  --csv FILE        append one row per measured point (CSV); FILE may be a pipe or FIFO (written as a\n"
            "                    stream, the header first), or - for stdout: then the human-readable output goes to\n"
            "                    stderr, so that stdout carries the rows alone\n"
            "  --json FILE       append one JSON object per measured point (JSON Lines); FILE as for --csv (- is\n"
            "                    stdout; --csv and --json cannot both name it, nor one file)\n"
            "  --device D        GPU index (default 0)\n",
            prog->binary, prog->what, prog->default_kernel,
            prog->rows_help ? prog->rows_help : "rows; -B N -T N set rows = B*T as in llm.c", prog->default_rows,
            prog->cols_help ? prog->cols_help : "normalized size", prog->default_cols, HOT_LAUNCHES);
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

// A bad argument: one line that names it, a usage hint, exit 2. The line stays one line whatever the arguments
// it quotes hold: control characters (a newline in a file name) are written as \xNN.
static void die_usage(const program_t *prog, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = (char *)malloc(n > 0 ? (size_t)n + 1 : 1);
    if (msg) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
    fprintf(stderr, "%s: ", prog->binary);
    for (const char *c = msg ? msg : fmt; *c; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f) fprintf(stderr, "\\x%02x", (unsigned char)*c);
        else fputc(*c, stderr);
    }
    fprintf(stderr, "\nTry './%s --help'.\n", prog->binary);
    exit(EXIT_USAGE);
}

// Strict integer parsing: the whole string (no leading or trailing space), in range.
static int parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}
// Strict number parsing: the whole string (no leading or trailing space), finite, and within what a float holds
// (|v| <= FLT_MAX): every such option (eps, the input mean and std, a weight offset) ends up in fp32 arithmetic.
static int parse_double(const char *s, double *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || fabs(v) > FLT_MAX) return -1;
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

// ------------------------------------------------------------------------------------------------
// --csv FILE and --json FILE: checked before any work (exit 2 with the reason, never waiting on anything).
//   a regular file (new or existing): rows are appended, the file opened for each row; a new file is created by the
//     first row (the check removes the file it creates); an existing one must be of its kind: a CSV with this
//     program's header (a file of an older schema would get rows whose columns do not match it), JSON Lines
//     whose first line is an object;
//   a stream (a pipe as from `| cat` or `>(cat)`, a FIFO, a terminal, /dev/null): opened once for writing and
//     never read; the CSV header goes first. A FIFO no process reads is refused instead of waited on;
//   - (or a name of stdout itself, /dev/stdout): stdout carries the rows alone, and the human-readable output
//     goes to stderr.
// One file cannot take both formats; a name that starts with '-' is an option that took the file's place
// (--csv --check), refused.
typedef struct {
    const char *path;  // as given; NULL = not asked for
    FILE *stream;      // a stream (stdout, a pipe, ...), open from the check on; NULL: a regular file
    int header_done;   // a CSV stream's header is written
} out_file_t;
static out_file_t g_csv_out, g_json_out;

// The (device, inode) of a path, or of stdout for "-"; 0 when it has none (a new file).
static int file_id(const char *path, struct stat *st) {
    return strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, st) == 0 : stat(path, st) == 0;
}
static int is_stdout(const char *path) {
    struct stat a, b;
    if (strcmp(path, "-") == 0) return 1;
    return stat(path, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
           !S_ISCHR(a.st_mode);  // a terminal or /dev/null on stdout: no human output to keep apart from
}

// The name itself, as parsed (with --help too: an option taken for the file name is a parse error).
static const char *output_name(const program_t *prog, const char *option, const char *path) {
    if (!path[0]) die_usage(prog, "%s needs a file name (got an empty one)", option);
    if (path[0] == '-' && path[1])
        die_usage(prog, "%s needs a file name, not the option '%s' (a file named so: write ./%s)", option, path, path);
    return path;
}

static void check_output_file(const program_t *prog, const char *option, const char *path, const char *header,
                              out_file_t *out) {
    out->path = path;
    out->stream = NULL;
    out->header_done = 0;
    if (is_stdout(path)) return;  // opened by open_outputs, after every check
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) die_usage(prog, "%s %s: is a folder, not a file", option, path);
        if (!S_ISREG(st.st_mode)) {  // a stream: opened now, never read; O_NONBLOCK: a FIFO with no reader fails
            int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 && errno == ENXIO)
                die_usage(prog, "%s %s: a FIFO that no process reads (start its reader first)", option, path);
            if (fd < 0) die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // then written as any file: waiting for room
            out->stream = fdopen(fd, "a");
            if (!out->stream) die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
            return;
        }
    } else if (errno != ENOENT) {
        die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
    }
    // a regular file, or none yet
    FILE *f = fopen(path, "r");
    int existed = f != NULL;
    char line[1024] = "";
    int empty = !f || !fgets(line, sizeof line, f);
    if (f) fclose(f);
    f = fopen(path, "a");
    if (!f) die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
    fclose(f);
    if (!existed) remove(path);
    if (empty) return;
    line[strcspn(line, "\r\n")] = 0;
    if (header && line[0] == '{')
        die_usage(prog, "%s %s: the file holds JSON Lines, not CSV; name a new file", option, path);
    if (header && strcmp(line, header) != 0)
        die_usage(prog, "%s %s: the file's header is not this program's CSV schema (an older file?); name a new file",
                  option, path);
    if (!header && line[0] != '{')
        die_usage(prog, "%s %s: the file is not JSON Lines (%s); name a new file", option, path,
                  strncmp(line, "op,", 3) == 0 ? "a CSV of results" : "its first line is not an object");
}

// After every check: --csv/--json to stdout take it over (the human-readable output goes to stderr from here on).
static void open_outputs(const program_t *prog, const options_t *o) {
    if (o->csv_path && o->json_path) {
        struct stat a, b;
        int same = strcmp(o->csv_path, o->json_path) == 0 || (is_stdout(o->csv_path) && is_stdout(o->json_path)) ||
                   (file_id(o->csv_path, &a) && file_id(o->json_path, &b) && a.st_dev == b.st_dev &&
                    a.st_ino == b.st_ino && !S_ISCHR(a.st_mode));
        if (same)
            die_usage(prog, "--csv %s and --json %s: one file cannot take both formats; name two", o->csv_path,
                      o->json_path);
    }
    if (o->csv_path) check_output_file(prog, "--csv", o->csv_path, CSV_HEADER, &g_csv_out);
    if (o->json_path) check_output_file(prog, "--json", o->json_path, NULL, &g_json_out);
    out_file_t *to_stdout = o->csv_path && is_stdout(o->csv_path)     ? &g_csv_out
                            : o->json_path && is_stdout(o->json_path) ? &g_json_out
                                                                       : NULL;
    if (to_stdout) {
        fflush(stdout);
        int fd = dup(STDOUT_FILENO);
        if (fd < 0 || !(to_stdout->stream = fdopen(fd, "w")) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            die_usage(prog, "%s: cannot take stdout over for the rows (%s)", to_stdout->path, strerror(errno));
        setvbuf(stdout, NULL, _IOLBF, 0);  // the human-readable lines, now on stderr's file
    }
}

static void parse_args(int argc, char **argv, const program_t *prog, options_t *o) {
    memset(o, 0, sizeof *o);
    o->kernel = KERNEL_DEFAULT;
    o->rows = prog->default_rows;
    o->cols = prog->default_cols;
    o->dtype = DT_FP32;
    o->seed = 1234;
    o->input_std = 1.0;

    enum { O_DTYPE = 1000, O_BLOCK, O_REPEATS, O_SEED, O_IMEAN, O_ISTD, O_CHECK, O_LIST, O_CSV, O_JSON,
           O_DEVICE, O_HOT, O_PDL, O_PHASES, O_VFIRST, O_EXTRA };
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
        {"hot", no_argument, 0, O_HOT},             {"pdl", no_argument, 0, O_PDL},
        {"phases", no_argument, 0, O_PHASES},       {"validate-first", no_argument, 0, O_VFIRST},
    };
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) longopts[n++] = base[i];
    for (int i = 0; i < prog->n_extra && n < 62; i++)
        longopts[n++] = (struct option){prog->extra[i].name, prog->extra[i].has_arg, 0, O_EXTRA + i};
    longopts[n] = (struct option){0, 0, 0, 0};

    // No argument is cut short anywhere (a kernel list, a file name, a reason that quotes it): a longer one is refused.
    for (int i = 1; i < argc; i++)
        if (strlen(argv[i]) > MAX_ARG_CHARS)
            die_usage(prog, "argument %d is %zu characters long (at most %d)", i, strlen(argv[i]), MAX_ARG_CHARS);
    opterr = 0;  // we print our own one-line messages
    optind = 1;
    int c, longindex = 0;
    long v;
    while ((c = getopt_long(argc, argv, ":N:C:B:T:h", longopts, &longindex)) != -1) {
        switch (c) {
        case 'N':
            if (parse_long(optarg, 1, INT_MAX, &v)) die_usage(prog, "invalid rows '%s' (-N/--rows: an integer in [1, 2147483647])", optarg);
            o->rows = v; o->rows_set = 1; break;
        case 'C':
            if (parse_long(optarg, 1, INT_MAX, &v)) die_usage(prog, "invalid cols '%s' (-C/--cols: an integer in [1, 2147483647])", optarg);
            o->cols = v; o->cols_set = 1; break;
        case 'B':
            if (parse_long(optarg, 1, INT_MAX, &v)) die_usage(prog, "invalid B '%s' (-B: an integer in [1, 2147483647])", optarg);
            o->B = v; o->bt_set = 1; break;
        case 'T':
            if (parse_long(optarg, 1, INT_MAX, &v)) die_usage(prog, "invalid T '%s' (-T: an integer in [1, 2147483647])", optarg);
            o->T = v; o->bt_set = 1; break;
        case O_DTYPE:
            if (parse_dtype(optarg, &o->dtype)) die_usage(prog, "invalid dtype '%s' (--dtype: fp32, fp16 or bf16)", optarg);
            break;
        case O_BLOCK:
            if (!strcmp(optarg, "plan")) {
                o->block_size = BLOCK_PLAN;
                break;
            }
            if (parse_long(optarg, 32, 1024, &v) || v % 32)
                die_usage(prog, "invalid block size '%s' (--block-size: a multiple of 32 in [32, 1024], or plan)", optarg);
            o->block_size = (int)v; break;
        case O_REPEATS:
            if (parse_long(optarg, 1, 100000, &v)) die_usage(prog, "invalid repeats '%s' (--repeats: an integer in [1, 100000])", optarg);
            o->repeats = (int)v; break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg || optarg[0] == '-' || isspace((unsigned char)optarg[0])) die_usage(prog, "invalid seed '%s' (--seed: a non-negative integer)", optarg);
            o->seed = s; break;
        }
        case O_IMEAN:
            if (parse_double(optarg, &o->input_mean)) die_usage(prog, "invalid input mean '%s' (--input-mean: a finite number within fp32's range)", optarg);
            break;
        case O_ISTD:
            if (parse_double(optarg, &o->input_std) || o->input_std < 0)
                die_usage(prog, "invalid input std '%s' (--input-std: a finite number >= 0 within fp32's range)", optarg);
            break;
        case O_CHECK: o->check_only = 1; break;
        case O_HOT: o->hot = 1; break;
        case O_PDL: o->pdl = 1; break;
        case O_PHASES: o->phases = 1; break;
        case O_VFIRST: o->validate_first = 1; break;
        case O_LIST: o->list = 1; break;
        case O_CSV: o->csv_path = output_name(prog, "--csv", optarg); break;
        case O_JSON: o->json_path = output_name(prog, "--json", optarg); break;
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
        } else if (strchr(k, ',')) {  // K1,K2,...: read in place (no copy to cut it short), every item a kernel
            o->kernel = KERNEL_LIST;
            for (const char *t = k;; t++) {
                size_t len = strcspn(t, ",");
                if (len == 0)
                    die_usage(prog, "empty item in the kernel list '%s' (numbers from --list, separated by commas)", k);
                char *num = strndup(t, len);
                int bad = !num || parse_long(num, 0, 1000000, &v) != 0 || !find_kernel(prog, (int)v);
                free(num);
                if (bad)
                    die_usage(prog, "unknown kernel '%.*s' in '%s' (numbers from --list, separated by commas)", (int)len,
                              t, k);
                for (int i = 0; i < o->n_picked; i++)
                    if (o->picked[i] == (int)v) die_usage(prog, "kernel %ld named twice in '%s'", v, k);
                if (o->n_picked == MAX_PICKED) die_usage(prog, "too many kernels in '%s'", k);
                o->picked[o->n_picked++] = (int)v;
                t += len;
                if (!*t) break;
            }
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
    if (o->bt_set && (double)o->rows > INT_MAX)
        die_usage(prog, "-B x -T = %ld rows, more than 2147483647", o->rows);
    if (o->pdl && !o->hot)
        die_usage(prog, "--pdl needs --hot (it overlaps a launch with the one before it, as in a replayed graph)");
    if (o->hot && o->check_only)
        die_usage(prog, "--hot is a timing mode and --check does not time: give one of them");
    if (o->validate_first && o->check_only)
        die_usage(prog, "--validate-first validates one block size and times the others, --check validates every "
                        "block size and times none: give one of them");
    if (o->phases && o->check_only)
        die_usage(prog, "--phases compares times and --check does not time: give one of them");
    // The inputs are drawn from N(mean, std): mean +- 6 std must be a value of the dtype (beyond, x holds infinities).
    double dt_max = o->dtype == DT_FP16 ? 65504.0 : o->dtype == DT_BF16 ? 3.3895313892515355e38 : (double)FLT_MAX;
    if (fabs(o->input_mean) + 6.0 * o->input_std > dt_max)
        die_usage(prog, "--input-mean %g --input-std %g: inputs up to %g (mean + 6 std) do not fit %s (largest %g)",
                  o->input_mean, o->input_std, fabs(o->input_mean) + 6.0 * o->input_std, dtype_name(o->dtype), dt_max);
    if (o->kernel >= 0) {
        const kernel_t *k = find_kernel(prog, o->kernel);
        if (!(k->dtypes & DT_BIT(o->dtype)))
            die_usage(prog, "kernel %d does not support --dtype %s (see --list)", o->kernel, dtype_name(o->dtype));
    }
    // A program with its own checks owns the shape check too (its tensor need not be rows x cols).
    const char *err = prog->check_options ? prog->check_options(o) : check_rows_cols(o);
    if (err) die_usage(prog, "%s", err);
    open_outputs(prog, o);
}
