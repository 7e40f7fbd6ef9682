// harness/report.h: what a measured point becomes: CSV rows and JSON Lines.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// Reporting: human lines, CSV rows, JSON Lines.


typedef struct {
    const char *op;
    int kernel;
    const char *kernel_name;
    dtype_t dtype;
    const char *shape;
    int block_size;
    double ms_median, ms_min, bytes, gbps, sol_gbps, sol_pct, max_abs, max_rel;
    double launch_median, launch_min;  // CUDA events around the launch
    const char *clock;                 // "cupti" / "events"; NULL where nothing was timed
    const char *chained;  // --hot: "yes" where the timed launches chain by PDL (--pdl, or a library on its own), else
                          // "no"; NULL where not timed hot
    const char *status;  // OK / FAIL / SKIP
    const char *detail;  // skip reason or dispatcher path (JSON only)
} point_t;

// The file a row goes to (--csv/--json; see options.h): a stream (stdout, a pipe) stays open, a regular file is
// opened for each row. NULL: it cannot be opened (exit 3).
static FILE *open_row_file(const char *option, out_file_t *out, const char *mode) {
    if (out->stream) return out->stream;
    FILE *f = fopen(out->path, mode);
    if (!f) { fprintf(stderr, "cannot open %s file '%s': %s\n", option, out->path, strerror(errno)); exit(EXIT_CUDA); }
    return f;
}
static void close_row_file(out_file_t *out, FILE *f) {
    if (f == out->stream) fflush(f);  // a reader of the stream sees each row as it is measured
    else fclose(f);
}

static void write_csv_row(out_file_t *out, const point_t *p) {
    FILE *f = open_row_file("--csv", out, "a+");
    if (!out->stream) {
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0) fprintf(f, "%s\n", CSV_HEADER);
    } else if (!out->header_done) {
        fprintf(f, "%s\n", CSV_HEADER);
        out->header_done = 1;
    }
    fprintf(f, "%s,%d,%s,%s,%s,%d,%.6f,%.6f,%.0f,%.2f,%.2f,%.2f,%.3e,%.3e,%s,%s,%s,%s,%s,%.6f,%.6f,%s,%s\n", p->op,
            p->kernel, p->kernel_name, dtype_name(p->dtype), p->shape, p->block_size, p->ms_median, p->ms_min, p->bytes,
            p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel, p->status, g_dev.name, g_dev.sm, g_dev.cuda,
            GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "", p->chained ? p->chained : "");
    close_row_file(out, f);
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_json_row(out_file_t *out, const point_t *p) {
    FILE *f = open_row_file("--json", out, "a");
    fprintf(f, "{\"op\":");
    json_string(f, p->op);
    fprintf(f, ",\"kernel\":%d,\"kernel_name\":", p->kernel);
    json_string(f, p->kernel_name);
    fprintf(f, ",\"dtype\":\"%s\",\"shape\":", dtype_name(p->dtype));
    json_string(f, p->shape);
    fprintf(f, ",\"block_size\":%d,\"time_ms_median\":%.6f,\"time_ms_min\":%.6f,\"bytes\":%.0f,\"gbps\":%.2f,"
               "\"sol_gbps\":%.2f,\"sol_pct\":%.2f,\"max_abs_err\":%.3e,\"max_rel_err\":%.3e,\"status\":\"%s\",\"gpu\":",
            p->block_size, p->ms_median, p->ms_min, p->bytes, p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel,
            p->status);
    json_string(f, g_dev.name);
    fprintf(f, ",\"sm\":\"%s\",\"cuda\":\"%s\",\"git_rev\":\"%s\",\"time_ms_launch_median\":%.6f,"
               "\"time_ms_launch_min\":%.6f,\"clock\":\"%s\",\"chained\":\"%s\",\"detail\":",
            g_dev.sm, g_dev.cuda, GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "",
            p->chained ? p->chained : "");
    json_string(f, p->detail ? p->detail : "");
    fprintf(f, "}\n");
    close_row_file(out, f);
}

static void emit_point(const options_t *o, const point_t *p) {
    if (o->csv_path) write_csv_row(&g_csv_out, p);
    if (o->json_path) write_json_row(&g_json_out, p);
}
