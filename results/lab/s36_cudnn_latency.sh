#!/usr/bin/env bash
# cuDNN (kernel 0) re-measured at the latency points; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s36_cudnn_latency.sh [fp32|bf16]     (GIT_REV=<commit>, LIMIT=<s a program, default 250>)

Builds both programs and runs `run_all --kernels 0 --set latency` for LayerNorm and RMSNorm (one dtype where
given), each stopped after LIMIT seconds (cuDNN builds its plans in every process: ~6 s a point on an H100), then
counts the hot cuDNN rows whose launches chained by PDL on their own (the CSV's chained column). $OUT/res.tgz
holds both programs' CSVs and logs. A run cut short has dropped the kernel-0 rows of the points it did not
reach: merge its rows into the stored CSV rather than keeping its file.
H
exit 0 ;;
"" | fp32 | bf16) ;;
*) echo "s36_cudnn_latency: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s36_cudnn_latency
make -j16 layernorm_forward rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
for op in layernorm rmsnorm; do
    timeout "${LIMIT:-250}" python3 scripts/run_all.py --kernels 0 --set latency ${1:+--dtype $1} $op 2> "$OUT/k0_$op.progress"
    el "$op: exit $?"
done
tar czf "$OUT/res.tgz" results/*/layernorm.csv results/*/layernorm.log results/*/rmsnorm.csv results/*/rmsnorm.log
for f in results/*/layernorm.csv results/*/rmsnorm.csv; do
    python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["kernel"] == "0" and ":hot" in r["shape"] and r["status"] == "OK" and r.get("chained")]
print(sys.argv[1], len(rows), "hot cuDNN rows with the column,", sum(r["chained"] == "yes" for r in rows), "chained")
PY
done
el done
