# Sourced by the lab scripts of results/lab (not run on its own): what every device call of theirs does.
# lab_start NAME: $OUT (default build/out), $REV (GIT_REV), $GPU (the device's name, printed), el (elapsed time).
lab_start() {
    LAB=$1
    OUT=${OUT:-build/out}; mkdir -p "$OUT" build/x
    REV=${GIT_REV:-unknown}
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    echo "GPU: $GPU"
    T0=$(date +%s)
}
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
# lab_need_h200 (after lab_start): returns on an H200; on another GPU exits 3, or with FALLBACK=fresh runs `make
# test` from a fresh tree (scripts/device_session.sh fresh, ~580 s: near a call's limit), with FALLBACK=fresh-build
# only its build (the next call, on the same warm machine: device_session.sh fresh-test), and exits with its status.
lab_need_h200() {
    case "$GPU" in *H200*) return 0 ;; esac
    case "${FALLBACK:-}" in
    fresh | fresh-build) GIT_REV=$REV OUT=$OUT bash scripts/device_session.sh "$FALLBACK"; exit $? ;;
    esac
    exit 3
}
# lab_variant PROG PATCH NAME [-D...]: build/x/NAME, the program PROG (e.g. rmsnorm_forward) with results/lab/PATCH
# applied, built as the Makefile builds PROG, with the extra flags.
lab_variant() {
    local prog=$1 patch=$2 name=$3; shift 3
    local src=build/x/$name.cu
    cp "$prog.cu" "$src" && patch -s "$src" < "results/lab/$patch" || { echo "$LAB: $patch does not apply" >&2; return 1; }
    local c
    c=$(make -s -n -B "$prog" GIT_REV="$REV" | grep nvcc)
    c=${c/ $prog.cu / $src -I. $* }
    c=${c/-o $prog/-o build\/x\/$name}
    eval "$c" >> "$OUT/build.log" 2>&1 || { echo "$LAB: the build of $name failed ($OUT/build.log)" >&2; return 1; }
}
# lab_tree_variant NAME PATCH [PATCH OPTIONS]: build/x/NAME/, a copy of the tree's sources with results/lab/PATCH
# applied from its root (patch -p0: a change to several files, the harness among them), and RMSNorm and LayerNorm
# built there as the Makefile builds them, both at once.
lab_tree_variant() {
    local name=$1 patch=$2 d=build/x/$1 prog c; shift 2
    rm -rf "$d" && mkdir -p "$d" && cp -r common.h harness tests rmsnorm_forward.cu layernorm_forward.cu "$d/"
    patch -s -d "$d" -p0 "$@" < "results/lab/$patch" || { echo "$LAB: $patch does not apply" >&2; return 1; }
    for prog in rmsnorm_forward layernorm_forward; do
        c=$(make -s -n -B $prog GIT_REV="$REV" | grep nvcc)
        ( cd "$d" && eval "$c" ) >> "$OUT/build.log" 2>&1 &
    done
    wait
    for prog in rmsnorm_forward layernorm_forward; do
        [ -x "$d/$prog" ] || { echo "$LAB: the $name build of $prog failed ($OUT/build.log)" >&2; return 1; }
    done
}
# lab_check LABEL COMMAND...: COMMAND --check, one line: "check LABEL: exit RC, N OK, M FAIL".
lab_check() {
    local label=$1 out rc; shift
    out=$("$@" --check 2>&1); rc=$?
    echo "check $label: exit $rc, $(echo "$out" | grep -c '| OK') OK, $(echo "$out" | grep -c FAIL) FAIL"
}
# lab_sanitize TOOL LABEL COMMAND...: COMMAND --check under compute-sanitizer's TOOL, one line: "TOOL LABEL: " and
# the tool's summary.
lab_sanitize() {
    local tool=$1 label=$2; shift 2
    echo "$tool $label: $(compute-sanitizer --tool $tool "$@" --check 2>&1 | grep SUMMARY)"
}
# lab_best_json FILE: "BLOCK US SOL" of the fastest OK row of a program's --json output in FILE (nothing if none).
lab_best_json() {
    python3 -c '
import json, sys
ok = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")) if r.get("status") == "OK"]
b = min(ok, key=lambda r: r["time_ms_median"]) if ok else None
print("%d %.2f %.1f" % (b["block_size"], b["time_ms_median"] * 1e3, b["sol_pct"]) if b else "")' "$1"
}
# lab_best ROW COLUMN COMMAND...: COMMAND --json - (a program's timing run); appends "ROW|COLUMN|best block's time"
# to $OUT/times.txt.
lab_best() {
    local row=$1 col=$2 b; shift 2
    "$@" --json - 2>/dev/null > "$OUT/best.json"
    b=$(lab_best_json "$OUT/best.json"); rm -f "$OUT/best.json"
    [ -n "$b" ] && set -- $b && b="$2 us @ $1 ($3%)"
    echo "$row|$col|${b:-none}" >> "$OUT/times.txt"
}
# lab_ncu_metrics: $M, the metrics of the lab's ncu profiles (read back by results/lab/ncu_rows.py): time, DRAM
# throughput and bytes, warps active, registers, grid, block, and the stall reasons per issue.
lab_ncu_metrics() {
    local r
    M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
    M=$M,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
    M=$M,launch__grid_size,launch__block_size
    for r in long_scoreboard barrier membar lg_throttle wait drain short_scoreboard mio_throttle no_instruction; do
        M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
    done
}
# lab_table: $OUT/times.txt as one markdown table, a row per ROW, a column per COLUMN, the rounds side by side.
lab_table() {
    python3 - "$OUT/times.txt" <<'PY'
import collections, sys
cells, rows, cols = collections.defaultdict(list), [], []
for line in open(sys.argv[1]):
    row, col, v = line.rstrip("\n").split("|")
    cells[(row, col)].append(v)
    rows += [row] if row not in rows else []
    cols += [col] if col not in cols else []
print("| point | " + " | ".join(cols) + " |")
print("|---|" + "---:|" * len(cols))
for row in rows:
    print("| " + row + " | " + " | ".join(" / ".join(cells[(row, c)]) for c in cols) + " |")
PY
}
